# Scoring and the paper's tables: BLEU/TER with significance, perplexity,
# pronoun F1, ContraPro accuracy; then the tables and the report's plots.
# The logic is in docnmt.scoring, .perplexity, .pronouns, .contrastive,
# .tables and .plots; every path comes from rules/common.smk.


rule bleu_ter:
    """SacreBLEU BLEU and TER of every strategy on one evaluation set, with paired bootstrap tests."""
    input:
        unpack(scored_text_inputs),
    output:
        score_file("{task}", "{evalset}", "bleu_ter"),
    params:
        systems=system_args,
        baselines=" ".join(f"--baseline {b}" for b in config["scoring"]["significance_baselines"]),
        samples=config["scoring"]["bootstrap_samples"],
    log:
        "logs/{task}/scores/{evalset}/bleu_ter.log",
    benchmark:
        "benchmarks/{task}/scores/{evalset}/bleu_ter.tsv"
    conda:
        "../envs/scoring.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    shell:
        "python -m docnmt.scoring --source {input.src} --reference {input.ref} {params.systems} {params.baselines}"
        " --bootstrap-samples {params.samples} --output {output} > {log} 2>&1"


rule pronoun_f1:
    """Pronoun gender and formality F1 (BlonDe's German extension) of every strategy on one evaluation set."""
    input:
        unpack(scored_text_inputs),
    output:
        score_file("{task}", "{evalset}", "pronouns"),
    wildcard_constraints:
        task=_alternatives(german_tasks()),
    params:
        systems=system_args,
        subsets=subsets_arg,
        tagger=config["scoring"]["tagger"],
        min_examples=lambda w: pronoun_min_examples(w.task),
    log:
        "logs/{task}/scores/{evalset}/pronouns.log",
    benchmark:
        "benchmarks/{task}/scores/{evalset}/pronouns.tsv"
    conda:
        "../envs/scoring.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=60,
    shell:
        "python -m docnmt.pronouns --source {input.src} --reference {input.ref} {params.systems} {params.subsets}"
        " --tagger {params.tagger} --min-examples {params.min_examples} --output {output} > {log} 2>&1"


rule perplexity:
    """Perplexity of the reference and of the level's strategies' hypotheses on the test set (Table 1)."""
    input:
        unpack(perplexity_inputs),
    output:
        score_file("{task}", "test", "perplexity.{level}"),
    params:
        systems=perplexity_args,
        k=config["k"],
    log:
        "logs/{task}/scores/test/perplexity.{level}.log",
    benchmark:
        "benchmarks/{task}/scores/test/perplexity.{level}.tsv"
    conda:
        "../envs/fairseq.yaml"
    threads: 2
    resources:
        gpu=1,
        mem_mb=8000,
        runtime=lambda w: 30 if SETTINGS[w.task]["model"] == "demo" else 120,
    shell:
        "python -m docnmt.perplexity --model {input.model} --data {input.data} --level {wildcards.level}"
        " --k {params.k} --src {input.src} --docids {input.docids} {params.systems} --output {output} > {log} 2>&1"


rule contrapro_accuracy:
    """ContraPro contrastive scoring accuracy of one model (the paper's sanity check)."""
    input:
        model=lambda w: model_file(w.task, w.level),
        data=lambda w: binarized(w.task, w.level),
        src=lambda w: processed_file(w.task, "bpe", "contrapro", src(w.task)),
        tgt=lambda w: processed_file(w.task, "bpe", "contrapro", tgt(w.task)),
        examples=lambda w: contrapro_examples(w.task),
        codes=lambda w: bpe_codes(w.task),
    output:
        score_file("{task}", "contrapro", "accuracy.{level}"),
    wildcard_constraints:
        task=_alternatives(contrapro_tasks()),
    params:
        tgt=lambda w: tgt(w.task),
        k=config["k"],
    log:
        "logs/{task}/scores/contrapro/accuracy.{level}.log",
    benchmark:
        "benchmarks/{task}/scores/contrapro/accuracy.{level}.tsv"
    conda:
        "../envs/fairseq.yaml"
    threads: 2
    resources:
        gpu=1,
        mem_mb=8000,
        runtime=lambda w: 30 if SETTINGS[w.task]["model"] == "demo" else 240,
    shell:
        "python -m docnmt.contrastive --model {input.model} --data {input.data} --level {wildcards.level}"
        " --k {params.k} --src {input.src} --tgt {input.tgt} --examples {input.examples} --codes {input.codes}"
        " --tgt-lang {params.tgt} --output {output} > {log} 2>&1"


rule tables:
    """The paper's tables for every selected task, in Markdown, CSV and LaTeX: `snakemake tables`."""
    input:
        manifest_files(),
    output:
        [
            report(f, category="Tables", labels={"table": name, "format": "csv"}) if f.endswith(".csv") else f
            for name in table_names()
            for f in table_files(name)
        ],
    params:
        manifest=manifest_arg(),
        outdir=lambda w, output: os.path.dirname(output[0]),
    log:
        "logs/tables.log",
    benchmark:
        "benchmarks/tables.tsv"
    conda:
        "../envs/scoring.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    shell:
        "python -m docnmt.tables --manifest-json {params.manifest} --outdir {params.outdir} > {log} 2>&1"


for _plot, _category in PLOTS.items():

    rule:
        name:
            f"plot_{_plot}"
        input:
            manifest_files(),
        output:
            report(plot_file(_plot), caption=f"../report/{_plot}.rst", category=_category),
        params:
            manifest=manifest_arg(),
            plot=_plot,
        log:
            f"logs/plots/{_plot}.log",
        benchmark:
            f"benchmarks/plots/{_plot}.tsv"
        conda:
            "../envs/scoring.yaml"
        threads: 1
        resources:
            mem_mb=1000,
            runtime=10,
        shell:
            "python -m docnmt.plots {params.plot} --manifest-json {params.manifest} --output {output} > {log} 2>&1"

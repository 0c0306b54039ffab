# Scoring and the paper's tables: BLEU/TER with significance, perplexity,
# pronoun F1, ContraPro accuracy; then the tables and the report's plots.
# The logic is in docnmt.score.scoring, .perplexity, .pronouns, .contrastive,
# .tables and .plots; every path comes from rules/common.smk.


rule bleu_ter:
    """SacreBLEU BLEU, chrF++, TER (and d-BLEU on the test set) of every system on one evaluation set, with paired
    bootstrap tests."""
    input:
        unpack(bleu_ter_inputs),
    output:
        score_file("{task}", "{evalset}", "bleu_ter"),
    params:
        systems=bleu_ter_args,
        baselines=significance_baselines,
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
        "python -m docnmt.score.scoring --source {input.src:q} --reference {input.ref:q} {params.systems:q} {params.baselines:q}"
        " --bootstrap-samples {params.samples:q} --output {output:q} > {log:q} 2>&1"


rule pronoun_f1:
    """Pronoun gender and formality F1 (the paper's German BlonDe fork) of every strategy on one evaluation set."""
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
        source_tagger=config["scoring"]["source_tagger"],
        rules=config["scoring"]["pronoun_rules"],
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
        "python -m docnmt.score.pronouns --source {input.src:q} --reference {input.ref:q} {params.systems:q} {params.subsets:q}"
        " --tagger {params.tagger:q} --source-tagger {params.source_tagger:q} --rules {params.rules:q}"
        " --min-examples {params.min_examples:q} --output {output:q} > {log:q} 2>&1"


rule perplexity:
    """Perplexity of the reference and of the level's strategies' hypotheses on the test set (Table 2)."""
    input:
        unpack(perplexity_inputs),
    output:
        score_file("{task}", "test", "perplexity.{level}"),
    params:
        model=model_args(),
        systems=perplexity_args,
        k=lambda w: task_k(w.task),
        separator=lambda w: task_separator(w.task),
        dtype=DTYPE,
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
        "python -m docnmt.score.perplexity {params.model:q} --level {wildcards.level:q}"
        " --k {params.k:q} --dtype {params.dtype:q} --separator {params.separator:q} --src {input.src:q}"
        " --docids {input.docids:q} {params.systems:q}"
        " --output {output:q} > {log:q} 2>&1"


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
        dtype=DTYPE,
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
        "python -m docnmt.score.contrastive --model {input.model:q} --data {input.data:q} --level {wildcards.level:q}"
        " --k {params.k:q} --dtype {params.dtype:q} --src {input.src:q} --tgt {input.tgt:q} --examples {input.examples:q}"
        " --codes {input.codes:q}"
        " --tgt-lang {params.tgt:q} --output {output:q} > {log:q} 2>&1"


rule cxmi:
    """CXMI and the P-CXMI of every sentence (Fernandes et al. 2021, 2023): how much the document-level model uses
    its context, on the reference and on every strategy's hypotheses."""
    input:
        unpack(cxmi_inputs),
    output:
        summary=score_file("{task}", "{evalset}", "cxmi"),
        sentences=cxmi_sentences("{task}", "{evalset}"),
    wildcard_constraints:
        task=_alternatives(cxmi_tasks()),
    params:
        model=model_args(),
        options=cxmi_args,
        k=lambda w: task_k(w.task),
        separator=lambda w: task_separator(w.task),
        dtype=DTYPE,
    log:
        "logs/{task}/scores/{evalset}/cxmi.log",
    benchmark:
        "benchmarks/{task}/scores/{evalset}/cxmi.tsv"
    conda:
        "../envs/fairseq.yaml"
    threads: 2
    resources:
        gpu=1,
        mem_mb=8000,
        runtime=lambda w: 30 if SETTINGS[w.task]["model"] == "demo" else 120,
    shell:
        "python -m docnmt.score.cxmi {params.model:q} --k {params.k:q}"
        " --dtype {params.dtype:q} --separator {params.separator:q} --src {input.src:q} --ref {input.ref:q}"
        " --docids {input.docids:q} {params.options:q}"
        " --output {output.summary:q} --sentences {output.sentences:q} > {log:q} 2>&1"


rule context_usage:
    """The highest-P-CXMI sentences with their context and translations, and every strategy's BLEU and pronoun F1
    on the highest-P-CXMI tenth against the rest."""
    input:
        unpack(context_usage_inputs),
    output:
        score_file("{task}", "{evalset}", "context_usage"),
    wildcard_constraints:
        task=_alternatives(cxmi_tasks()),
    params:
        options=context_usage_args,
        k=lambda w: task_k(w.task),
        top=config["scoring"]["context_usage"]["top"],
        share=config["scoring"]["context_usage"]["share"],
    log:
        "logs/{task}/scores/{evalset}/context_usage.log",
    benchmark:
        "benchmarks/{task}/scores/{evalset}/context_usage.tsv"
    conda:
        "../envs/scoring.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=60,
    shell:
        "python -m docnmt.score.context_usage --sentences {input.sentences:q} --source {input.src:q}"
        " --reference {input.ref:q} --docids {input.docids:q} {params.options:q} --k {params.k:q}"
        " --top {params.top:q} --share {params.share:q} --output {output:q} > {log:q} 2>&1"


rule tables:
    """The paper's tables for the configured tasks together, in Markdown, CSV and LaTeX, in results/tables/NAME/
    (config tables.name): `snakemake tables`."""
    input:
        manifest_files(),
    output:
        [
            report(f, category="Context usage" if name.startswith("context_") else "Tables",
                   labels={"table": name, "format": "csv"}) if f.endswith(".csv") else f
            for name in table_names()
            for f in table_files(name)
        ],
    params:
        manifest=manifest_arg(),
        outdir=lambda w, output: os.path.dirname(output[0]),
    log:
        f"logs/tables/{TABLES_NAME}.log",
    benchmark:
        f"benchmarks/tables/{TABLES_NAME}.tsv"
    conda:
        "../envs/scoring.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    shell:
        "python -m docnmt.score.tables --manifest-json {params.manifest:q} --outdir {params.outdir:q} > {log:q} 2>&1"


rule task_tables:
    """One task's tables alone, in results/{task}/tables/ (which tables depends on the task: a folder)."""
    input:
        lambda w: manifest_files([w.task]),
    output:
        directory(task_tables_dir("{task}")),
    wildcard_constraints:
        task=_alternatives(TASKS),
    params:
        manifest=lambda w: manifest_arg([w.task]),
    log:
        "logs/{task}/tables.log",
    benchmark:
        "benchmarks/{task}/tables.tsv"
    conda:
        "../envs/scoring.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    shell:
        "python -m docnmt.score.tables --manifest-json {params.manifest:q} --outdir {output:q} > {log:q} 2>&1"


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
            f"logs/plots/{TABLES_NAME}/{_plot}.log",
        benchmark:
            f"benchmarks/plots/{TABLES_NAME}/{_plot}.tsv"
        conda:
            "../envs/scoring.yaml"
        threads: 1
        resources:
            mem_mb=1000,
            runtime=10,
        shell:
            "python -m docnmt.score.plots {params.plot:q} --manifest-json {params.manifest:q} --output {output:q} > {log:q} 2>&1"

    rule:
        name:
            f"task_plot_{_plot}"
        input:
            lambda w: manifest_files([w.task]),
        output:
            task_plot("{task}", _plot),
        wildcard_constraints:
            task=_alternatives(plot_tasks(_plot)),
        params:
            manifest=lambda w: manifest_arg([w.task]),
            plot=_plot,
        log:
            f"logs/{{task}}/plots/{_plot}.log",
        benchmark:
            f"benchmarks/{{task}}/plots/{_plot}.tsv"
        conda:
            "../envs/scoring.yaml"
        threads: 1
        resources:
            mem_mb=1000,
            runtime=10,
        shell:
            "python -m docnmt.score.plots {params.plot:q} --manifest-json {params.manifest:q} --output {output:q} > {log:q} 2>&1"

# Where each task's documents come from. Every recipe ends in the common
# document format: data/{task}/corpus/{split}.{src,tgt,docids}.


rule demo_corpus:
    """The synthetic demo task: generated, seeded and deterministic."""
    output:
        **{f"{split}_{ext}": f"data/{{task}}/corpus/{split}.{ext}" for split in SPLITS for ext in ("en", "de", "docids")},
        contrapro="data/{task}/corpus/contrapro.json",
    wildcard_constraints:
        task=_alternatives(tasks_of_type("demo")),
    params:
        outdir=lambda w: f"data/{w.task}/corpus",
        corpus=lambda w: SETTINGS[w.task]["corpus"],
    log:
        "logs/{task}/demo_corpus.log",
    benchmark:
        "benchmarks/{task}/demo_corpus.tsv"
    conda:
        "../envs/data.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    shell:
        "python -m docnmt.demo --outdir {params.outdir} --seed {params.corpus[seed]}"
        " --train-docs {params.corpus[train_docs]} --valid-docs {params.corpus[valid_docs]}"
        " --test-docs {params.corpus[test_docs]} > {log} 2>&1"


rule prepared_corpus:
    """A user's own corpus, already in the common document format (corpus.dir)."""
    input:
        lambda w: f"{SETTINGS[w.task]['corpus']['dir']}/{w.split}.{w.ext}",
    output:
        "data/{task}/corpus/{split}.{ext}",
    wildcard_constraints:
        task=_alternatives(tasks_of_type("prepared")),
        ext="[a-z]{2,3}|docids",
    log:
        "logs/{task}/prepared_corpus/{split}.{ext}.log",
    benchmark:
        "benchmarks/{task}/prepared_corpus/{split}.{ext}.tsv"
    conda:
        "../envs/data.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=30,
    shell:
        "cp {input} {output} 2> {log}"

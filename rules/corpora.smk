# Where each task's documents come from. Every recipe ends in the common
# document format: data/{task}/corpus/{split}.{src,tgt,docids}, checked by
# check_corpus (its statistics feed the data-statistics table).


rule demo_corpus:
    """The synthetic demo task: generated, seeded and deterministic."""
    output:
        **{f"{split}_{ext}": f"data/{{task}}/corpus/{split}.{ext}" for split in SPLITS for ext in ("en", "de", "docids")},
        test_subsets="data/{task}/corpus/test.subsets",
        contrapro="data/{task}/corpus/contrapro.json",
    wildcard_constraints:
        task=_alternatives(tasks_of_type("demo")),
    params:
        outdir=lambda w: f"data/{w.task}/corpus",
        seed=lambda w: SETTINGS[w.task]["corpus"]["seed"],
        docs=lambda w: [
            arg for split in SPLITS for arg in (f"--{split}-docs", corpus_setting(w.task, f"{split}_docs"))
        ],
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
        "python -m docnmt.corpora.demo --outdir {params.outdir:q} --seed {params.seed:q} {params.docs:q} > {log:q} 2>&1"


rule prepared_corpus:
    """A user's own corpus, already in the common document format (corpus.dir), copied atomically."""
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
        # An atomic copy (no partial file on a full disk).
        "python -m docnmt.corpora.corpus copy --input {input:q} --output {output:q} > {log:q} 2>&1"


rule download:
    """One real source file: mirror-aware, retried, checksum-verified, atomic."""
    output:
        "downloads/{source}/{filename}",
    wildcard_constraints:
        filename=r"(?!extracted$)[^/]+",
    params:
        url=lambda w: source(w.source)["url"],
        checksum=lambda w: [
            arg for algo in ("sha256", "md5") if source(w.source).get(algo) for arg in (f"--{algo}", source(w.source)[algo])
        ],
        mirror=["--mirror", config["mirror"]] if config["mirror"] else [],
        lock=config["download_lock"],
        retries=config["download_retries"],
    log:
        "logs/downloads/{source}/{filename}.log",
    benchmark:
        "benchmarks/downloads/{source}/{filename}.tsv"
    conda:
        "../envs/data.yaml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=240,
    shell:
        "python -m docnmt.corpora.download fetch --url {params.url:q} --output {output:q} {params.checksum:q}"
        " --lock {params.lock:q} {params.mirror:q} --retries {params.retries:q} > {log:q} 2>&1"


rule extract:
    """The members of an archive that the parsers read, safely unpacked."""
    input:
        lambda w: download_path(w.source),
    output:
        directory("downloads/{source}/extracted"),
    params:
        members=lambda w: list(source(w.source).get("members", {}).values()),
    log:
        "logs/downloads/{source}/extract.log",
    benchmark:
        "benchmarks/downloads/{source}/extract.tsv"
    conda:
        "../envs/data.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=60,
    shell:
        "python -m docnmt.corpora.download extract --archive {input:q} --dest {output:q} --members {params.members:q} > {log:q} 2>&1"


# One parsing rule per real task, generated from the task's corpus recipe
# (corpus_recipe in common.smk): a new dataset adds a recipe, not a rule.
for _task in real_tasks():
    _inputs, _args = corpus_recipe(_task)

    rule:
        name:
            f"corpus_{_task}"
        input:
            _inputs,
        output:
            [corpus_file(_task, split, ext) for split in corpus_splits(_task) for ext in (*langs(_task), "docids")],
        params:
            args=_args,
            outdir=lambda w, output: os.path.dirname(output[0]),
            report=f"data/{_task}/corpus/prepare.report.json",
        log:
            f"logs/{_task}/corpus.log",
        benchmark:
            f"benchmarks/{_task}/corpus.tsv"
        conda:
            "../envs/data.yaml"
        threads: 1
        resources:
            mem_mb=16000,
            runtime=240,
        shell:
            "python -m docnmt.corpora.parsers {params.args:q} --outdir {params.outdir:q} --report {params.report:q} > {log:q} 2>&1"


rule contrapro_set:
    """ContraPro examples with k-1 sentences of left and right context, as a small document corpus."""
    input:
        unpack(lambda w: contrapro_sources(w.task)),
    output:
        **{ext: f"data/{{task}}/contrapro/contrapro.{ext}" for ext in ("en", "de", "docids")},
        examples="data/{task}/contrapro/contrapro.examples.jsonl",
        report="data/{task}/contrapro/contrapro.report.json",
    wildcard_constraints:
        task=_alternatives(contrapro_tasks()),
    params:
        context=config["k"] - 1,
        outdir=lambda w: f"data/{w.task}/contrapro",
    log:
        "logs/{task}/contrapro_set.log",
    benchmark:
        "benchmarks/{task}/contrapro_set.tsv"
    conda:
        "../envs/data.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
    shell:
        "python -m docnmt.corpora.contrapro --json {input.json:q} --src {input.src:q} --tgt {input.tgt:q} --docids {input.docids:q}"
        " --context {params.context:q} --out {params.outdir:q} --src-lang en --tgt-lang de > {log:q} 2>&1"


rule data_statistics:
    """The paper's Table 5: sentences and documents per split and task, ContraPro included."""
    input:
        **statistics_inputs(),
    output:
        **DATA_STATISTICS,
    params:
        specs=lambda w, input: [f"{name}:{path}" for name, path in input.items()],
    log:
        "logs/data_statistics.log",
    benchmark:
        "benchmarks/data_statistics.tsv"
    conda:
        "../envs/scoring.yaml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=10,
    shell:
        "python -m docnmt.corpora.stats --input {params.specs:q} --markdown {output.markdown:q} --csv {output.csv:q}"
        " --latex {output.latex:q} > {log:q} 2>&1"


rule check_corpus:
    """Validate one split of the common format; write its sentence/document counts."""
    input:
        unpack(lambda w: corpus_split(w.task, w.split)),
    output:
        "data/{task}/corpus/{split}.stats.json",
    log:
        "logs/{task}/check_corpus/{split}.log",
    benchmark:
        "benchmarks/{task}/check_corpus/{split}.tsv"
    conda:
        "../envs/data.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
    shell:
        "python -m docnmt.corpora.corpus check --src {input.src:q} --tgt {input.tgt:q}"
        " --docids {input.docids:q} --stats {output:q} > {log:q} 2>&1"

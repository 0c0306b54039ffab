# Where each task's documents come from. Every recipe ends in the common
# document format: data/{task}/corpus/{split}.{src,tgt,docids}, checked by
# check_corpus (its statistics feed the data-statistics table). The inputs and
# arguments are docnmt.workflow.corpora's, every path docnmt.layout's.


rule demo_corpus:
    """The synthetic demo task: generated, seeded and deterministic."""
    output:
        **wf.corpora.demo_outputs(),
    wildcard_constraints:
        task=wf.tasks.alternatives(wf.tasks.tasks_of_type(config, "demo")),
    params:
        outdir=lambda w: layout.corpus_dir(w.task),
        seed=lambda w: wf.corpora.demo_seed(config, w.task),
        docs=lambda w: wf.corpora.demo_docs_args(config, w.task),
    log:
        layout.log_file("{task}/demo_corpus"),
    benchmark:
        layout.benchmark_file("{task}/demo_corpus")
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
        lambda w: wf.corpora.prepared_file(config, w.task, w.split, w.ext),
    output:
        layout.corpus_file("{task}", "{split}", "{ext}"),
    wildcard_constraints:
        task=wf.tasks.alternatives(wf.tasks.tasks_of_type(config, "prepared")),
        ext="[a-z]{2,3}|docids",
    log:
        layout.log_file("{task}/prepared_corpus/{split}.{ext}"),
    benchmark:
        layout.benchmark_file("{task}/prepared_corpus/{split}.{ext}")
    conda:
        "../envs/data.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=30,
    shell:
        # An atomic copy (no partial file on a full disk).
        "python -m docnmt.corpora.corpus copy --input {input:q} --output {output:q} > {log:q} 2>&1"


rule testset_corpus:
    """A prepared task's test split from a WMT test set (corpus.test: WMT XML or WMT24++ JSONL), one file a job."""
    input:
        lambda w: wf.corpora.testset_file(config, w.task),
    output:
        layout.corpus_file("{task}", "test", "{ext}"),
    wildcard_constraints:
        task=wf.tasks.alternatives(wf.tasks.testset_tasks(config)),
        ext="[a-z]{2,3}|docids",
    params:
        args=lambda w: wf.corpora.testset_args(config, w.task),
        out=lambda w: wf.corpora.testset_output_option(config, w.task, w.ext),
    log:
        layout.log_file("{task}/testset_corpus/test.{ext}"),
    benchmark:
        layout.benchmark_file("{task}/testset_corpus/test.{ext}")
    conda:
        "../envs/data.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    shell:
        "python -m docnmt.corpora.testsets {params.args:q} --input {input:q} {params.out:q} {output:q} > {log:q} 2>&1"


# The test split of a task with corpus.test comes from its test set, not from corpus.dir.
ruleorder: testset_corpus > prepared_corpus


rule download:
    """One source's file: its local file, or the first of its locations serving it (mirror first), retried,
    checksum- or lock-verified, atomic; its origin says which location's archive layout it has."""
    output:
        file=layout.download_file("{source}", "{filename}"),
        origin=layout.download_origin("{source}", "{filename}"),
    wildcard_constraints:
        filename=r"(?!extracted$)(?!origin$)[^/]+",
    params:
        spec=lambda w: wf.corpora.download_spec(config, w.source),
        mirror=wf.corpora.mirror_args(config),
        **wf.corpora.download_settings(config),
    log:
        layout.log_file("downloads/{source}/{filename}"),
    benchmark:
        layout.benchmark_file("downloads/{source}/{filename}")
    conda:
        "../envs/data.yaml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=240,
    shell:
        "python -m docnmt.corpora.download fetch --spec {params.spec:q} --output {output.file:q}"
        " --origin {output.origin:q} --lock {params.lock:q} {params.mirror:q} --retries {params.retries:q}"
        " > {log:q} 2>&1"


rule extract:
    """The members of an archive that the parsers read (through archives inside it), safely unpacked: from the
    downloaded file as its location lays it out, or from a folder of the user's own."""
    input:
        unpack(lambda w: wf.corpora.extract_inputs(config, w.source)),
    output:
        directory(layout.extracted_dir("{source}")),
    params:
        members=lambda w: wf.corpora.extract_args(config, w.source),
    log:
        layout.log_file("downloads/{source}/extract"),
    benchmark:
        layout.benchmark_file("downloads/{source}/extract")
    conda:
        "../envs/data.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=60,
    shell:
        "python -m docnmt.corpora.download extract --archive {input.archive:q} --dest {output:q} {params.members:q}"
        " > {log:q} 2>&1"


# One parsing rule per real task, generated from the task's corpus recipe
# (docnmt.workflow.corpora.corpus_recipe): a new dataset adds a recipe, not a rule.
for _task in wf.tasks.real_tasks(config):
    _inputs, _args = wf.corpora.corpus_recipe(config, _task)

    rule:
        name:
            f"corpus_{_task}"
        input:
            _inputs,
        output:
            wf.corpora.corpus_outputs(config, _task),
        params:
            args=_args,
            outdir=lambda w, output: os.path.dirname(output[0]),
            report=layout.corpus_report(_task),
        log:
            layout.log_file(f"{_task}/corpus"),
        benchmark:
            layout.benchmark_file(f"{_task}/corpus")
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
        unpack(lambda w: wf.corpora.contrapro_sources(config, w.task)),
    output:
        **wf.corpora.contrapro_outputs(),
    wildcard_constraints:
        task=wf.tasks.alternatives(wf.tasks.contrapro_tasks(config)),
    params:
        context=lambda w: wf.tasks.context_sentences(config, w.task),
        outdir=lambda w: layout.contrapro_dir(w.task),
    log:
        layout.log_file("{task}/contrapro_set"),
    benchmark:
        layout.benchmark_file("{task}/contrapro_set")
    conda:
        "../envs/data.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
    shell:
        "python -m docnmt.corpora.contrapro --json {input.json:q} --src {input.src:q} --tgt {input.tgt:q} --docids {input.docids:q}"
        " --context {params.context:q} --out {params.outdir:q} --src-lang en --tgt-lang de > {log:q} 2>&1"


rule ctxpro_download:
    """One file of a ctxpro set from ctxpro's repository: its JSON (md5 from the package's registry) or inputs."""
    output:
        layout.ctxpro_download("{filename}"),
    wildcard_constraints:
        filename=wf.tasks.alternatives(wf.corpora.ctxpro_downloads(config)),
    params:
        source=lambda w: wf.corpora.ctxpro_download_args(config, w.filename),
        mirror=wf.corpora.mirror_args(config),
        **wf.corpora.download_settings(config),
    log:
        layout.log_file("downloads/ctxpro/{filename}"),
    benchmark:
        layout.benchmark_file("downloads/ctxpro/{filename}")
    conda:
        "../envs/data.yaml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=60,
    shell:
        "python -m docnmt.corpora.download fetch {params.source:q} --output {output:q}"
        " --lock {params.lock:q} {params.mirror:q} --retries {params.retries:q} > {log:q} 2>&1"


# One rule per task that names ctxpro sets: their documents carry the task's languages in their names.
for _task in wf.corpora.ctxpro_tasks(config):

    rule:
        name:
            f"ctxpro_set_{_task.replace('-', '_')}"
        input:
            unpack(lambda w, task=_task: wf.corpora.ctxpro_sources(config, task, w.evalset)),
        output:
            **wf.corpora.ctxpro_outputs(config, _task),
        wildcard_constraints:
            evalset=wf.tasks.alternatives(wf.tasks.ctxpro_evalsets(config, _task)),
        params:
            args=lambda w, task=_task: wf.corpora.ctxpro_set_args(config, task, w.evalset),
            outdir=lambda w, output: os.path.dirname(output.examples),
        log:
            layout.log_file(f"{_task}/ctxpro_set/{{evalset}}"),
        benchmark:
            layout.benchmark_file(f"{_task}/ctxpro_set/{{evalset}}")
        conda:
            "../envs/data.yaml"
        threads: 1
        resources:
            mem_mb=2000,
            runtime=30,
        shell:
            "python -m docnmt.corpora.ctxpro {params.args:q} --json {input.json:q} --inputs {input.inputs:q}"
            " --out {params.outdir:q} > {log:q} 2>&1"


rule data_statistics:
    """The paper's Table 5: sentences and documents per split and task, ContraPro included."""
    input:
        **wf.corpora.statistics_inputs(config),
    output:
        **wf.tables.data_statistics(config),
    params:
        specs=lambda w, input: [f"{name}:{path}" for name, path in input.items()],
    log:
        layout.log_file("data_statistics"),
    benchmark:
        layout.benchmark_file("data_statistics")
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
        unpack(lambda w: wf.corpora.corpus_split(config, w.task, w.split)),
    output:
        layout.corpus_stats("{task}", "{split}"),
    log:
        layout.log_file("{task}/check_corpus/{split}"),
    benchmark:
        layout.benchmark_file("{task}/check_corpus/{split}")
    conda:
        "../envs/data.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
    shell:
        "python -m docnmt.corpora.corpus check --src {input.src:q} --tgt {input.tgt:q}"
        " --docids {input.docids:q} --stats {output:q} > {log:q} 2>&1"

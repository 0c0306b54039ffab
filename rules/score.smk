# Scoring and the paper's tables: the metric seam's rules (BLEU/TER with significance, COMET in unbabel-comet's own
# environment, MetricX-24, one's own: docnmt.score.metric, docnmt.workflow.metrics), perplexity, pronoun F1,
# ContraPro and ctxpro accuracy, CXMI; then the tables and the report's plots. The logic is in docnmt.score's
# modules; the inputs and options are docnmt.workflow.score's and .metrics's, the tables' and plots'
# docnmt.workflow.tables's, every path docnmt.layout's.


# The metric seam: one rule per declared metric the config asks for (docnmt.score.metric), named as the metric:
# bleu_ter (SacreBLEU, every evaluation set), comet (unbabel-comet's environment), metricx, and those of
# metrics.modules. Each scores every system of a task on an evaluation set, with paired bootstrap tests.
for _metric in wf.metrics.rules(config):
    _functions = metric_functions(_metric.name)

    rule:
        name:
            _metric.name
        input:
            unpack(_functions["inputs"]),
        output:
            **wf.metrics.metric_outputs(_metric),
        wildcard_constraints:
            evalset=wf.metrics.evalset_pattern(_metric),
        params:
            path=wf.metrics.metric_path(config, _metric, workflow.basedir, _conda_deployment()),
            command=[_metric.module, *_metric.command],
            options=_functions["options"],
            outputs=_functions["outputs"],
        log:
            layout.log_file(f"{{task}}/scores/{{evalset}}/{_metric.name}"),
        benchmark:
            layout.benchmark_file(f"{{task}}/scores/{{evalset}}/{_metric.name}")
        conda:
            _metric.conda_file
        threads: _metric.threads
        resources:
            **({"gpu": 1} if _metric.gpu else {}),
            mem_mb=_metric.mem_mb,
            runtime=_functions["runtime"],
        shell:
            in_environment(
                "python -m {params.command:q} --source {input.src:q}"
                " --reference {input.ref:q} {params.options:q} --output {output.scores:q} {params.outputs:q} > {log:q} 2>&1"
            )


rule comet_env:
    """Where unbabel-comet's environment is (its Python): the decodes that select by a learned metric start their
    scorer there (docnmt.decode.metric_client)."""
    output:
        layout.comet_env(),
    params:
        path=COMET_PATH,
    log:
        layout.log_file("comet_env"),
    benchmark:
        layout.benchmark_file("comet_env")
    conda:
        wf.metrics.selection_metric(config).conda_file
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    shell:
        in_environment(
            "python -m docnmt.score.comet env --output {output:q} > {log:q} 2>&1"
        )


rule pronoun_f1:
    """Pronoun gender and formality F1 (the paper's German BlonDe fork) of every strategy on one evaluation set."""
    input:
        unpack(lambda w: wf.score.pronoun_inputs(config, w.task, w.evalset)),
    output:
        scores=layout.score_file("{task}", "{evalset}", "pronouns"),
        sentences=layout.pronoun_sentences("{task}", "{evalset}"),
    wildcard_constraints:
        task=wf.tasks.alternatives(wf.tasks.german_tasks(config)),
    params:
        systems=lambda w, input: wf.score.pronoun_args(config, w.task, w.evalset, input),
        subsets=lambda w, input: wf.score.subsets_arg(input),
        **wf.score.pronoun_settings(config),
        min_examples=lambda w: wf.tasks.pronoun_min_examples(config, w.task),
    log:
        layout.log_file("{task}/scores/{evalset}/pronouns"),
    benchmark:
        layout.benchmark_file("{task}/scores/{evalset}/pronouns")
    conda:
        "../envs/scoring.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=60,
    shell:
        "python -m docnmt.score.pronouns --source {input.src:q} --reference {input.ref:q} {params.systems:q} {params.subsets:q}"
        " --tagger {params.tagger:q} --source-tagger {params.source_tagger:q} --rules {params.rules:q}"
        " --min-examples {params.min_examples:q} --output {output.scores:q} --sentences {output.sentences:q} > {log:q} 2>&1"


rule compare_page:
    """The task's comparison page (one self-contained HTML file: every strategy's translation of every document side
    by side, its context, scores, error spans and test-set marks, with filters that recompute the paired test) and
    its data as a Marot file."""
    input:
        unpack(lambda w: wf.score.compare_inputs(config, w.task)),
    output:
        page=report(layout.compare_page("{task}"), caption="../report/compare.rst", category="Comparison",
                    labels={"task": "{task}"}),
        marot=layout.compare_marot("{task}"),
    params:
        options=lambda w, input: wf.score.compare_args(config, w.task, input),
    log:
        layout.log_file("{task}/compare"),
    benchmark:
        layout.benchmark_file("{task}/compare")
    conda:
        "../envs/scoring.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
    shell:
        "python -m docnmt.score.compare.cli --source {input.src:q} --reference {input.ref:q} --docids {input.docids:q}"
        " {params.options:q} --output {output.page:q} --marot {output.marot:q} > {log:q} 2>&1"


rule perplexity:
    """Perplexity of the reference and of the level's strategies' hypotheses on the test set (Table 2)."""
    input:
        unpack(lambda w: wf.score.perplexity_inputs(config, w.task, w.level)),
    output:
        layout.score_file("{task}", "test", "perplexity.{level}"),
    params:
        **MODEL_PARAMS,
        systems=lambda w, input: wf.score.perplexity_args(config, w.task, w.level, input),
    log:
        layout.log_file("{task}/scores/test/perplexity.{level}"),
    benchmark:
        layout.benchmark_file("{task}/scores/test/perplexity.{level}")
    conda:
        wf.model_rules.model_conda(config, "../envs/models.yaml")
    threads: 2
    resources:
        gpu=model_gpus,
        mem_mb=8000,
        runtime=lambda w: wf.tasks.runtime(config, w.task, demo=30, other=120),
    shell:
        in_environment(
            "python -m docnmt.score.perplexity {params.model:q} --level {wildcards.level:q}"
            " --k {params.k:q} --dtype {params.dtype:q} --separator {params.separator:q} --src {input.src:q}"
            " --docids {input.docids:q} {params.systems:q}"
            " --output {output:q} > {log:q} 2>&1"
        )


rule contrapro_accuracy:
    """ContraPro contrastive scoring accuracy of one model (the paper's sanity check)."""
    input:
        unpack(lambda w: wf.score.contrapro_accuracy_inputs(config, w.task, w.level)),
    output:
        layout.score_file("{task}", "contrapro", "accuracy.{level}"),
    wildcard_constraints:
        task=wf.tasks.alternatives(wf.tasks.contrapro_tasks(config)),
    params:
        tgt=lambda w: wf.tasks.tgt(config, w.task),
        k=lambda w: wf.tasks.task_k(config, w.task),
        dtype=wf.decode.search_dtype(config),
        cad=lambda w: wf.score.contrapro_cad_args(config, w.level),
    log:
        layout.log_file("{task}/scores/contrapro/accuracy.{level}"),
    benchmark:
        layout.benchmark_file("{task}/scores/contrapro/accuracy.{level}")
    conda:
        "../envs/models.yaml"
    threads: 2
    resources:
        gpu=1,
        mem_mb=8000,
        runtime=lambda w: wf.tasks.runtime(config, w.task, demo=30, other=240),
    shell:
        "python -m docnmt.score.contrastive --model {input.model:q} --data {input.data:q} --level {wildcards.level:q}"
        " --k {params.k:q} --dtype {params.dtype:q} --src {input.src:q} --tgt {input.tgt:q} --examples {input.examples:q}"
        " --codes {input.codes:q} {params.cad:q}"
        " --tgt-lang {params.tgt:q} --output {output:q} > {log:q} 2>&1"


rule ctxpro_accuracy:
    """ctxpro accuracy (as `ctxpro score` counts it) of every system on one of a task's ctxpro sets, per rule."""
    input:
        unpack(lambda w: wf.score.ctxpro_accuracy_inputs(config, w.task, w.evalset)),
    output:
        layout.score_file("{task}", "{evalset}", "ctxpro"),
    wildcard_constraints:
        evalset=f"{layout.CTXPRO_PREFIX}.+",
    params:
        systems=lambda w, input: wf.score.ctxpro_accuracy_args(config, w.task, w.evalset, input),
        tgt=lambda w: wf.tasks.tgt(config, w.task),
    log:
        layout.log_file("{task}/scores/{evalset}/ctxpro"),
    benchmark:
        layout.benchmark_file("{task}/scores/{evalset}/ctxpro")
    conda:
        "../envs/scoring.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    shell:
        "python -m docnmt.score.ctxpro workflow --examples {input.examples:q} --report {input.report:q}"
        " --source {input.src:q} --lang {params.tgt:q} {params.systems:q} --output {output:q} > {log:q} 2>&1"


rule cxmi:
    """CXMI and the P-CXMI of every sentence (Fernandes et al. 2021, 2023): how much the document-level model uses
    its context, on the reference and on every strategy's hypotheses."""
    input:
        unpack(lambda w: wf.score.cxmi_inputs(config, w.task, w.evalset)),
    output:
        summary=layout.score_file("{task}", "{evalset}", "cxmi"),
        sentences=layout.cxmi_sentences("{task}", "{evalset}"),
    wildcard_constraints:
        task=wf.tasks.alternatives(wf.tasks.cxmi_tasks(config)),
    params:
        **MODEL_PARAMS,
        options=lambda w, input: wf.score.cxmi_args(config, w.task, w.evalset, input),
    log:
        layout.log_file("{task}/scores/{evalset}/cxmi"),
    benchmark:
        layout.benchmark_file("{task}/scores/{evalset}/cxmi")
    conda:
        wf.model_rules.model_conda(config, "../envs/models.yaml")
    threads: 2
    priority: lambda w: wf.score.chain_priority(config, w.evalset)
    resources:
        gpu=model_gpus,
        mem_mb=8000,
        runtime=lambda w: wf.tasks.runtime(config, w.task, demo=30, other=120),
    shell:
        in_environment(
            "python -m docnmt.score.cxmi {params.model:q} --k {params.k:q}"
            " --dtype {params.dtype:q} --separator {params.separator:q} --src {input.src:q} --ref {input.ref:q}"
            " --docids {input.docids:q} {params.options:q}"
            " --output {output.summary:q} --sentences {output.sentences:q} > {log:q} 2>&1"
        )


rule context_usage:
    """The highest-P-CXMI sentences with their context and translations, and every strategy's BLEU and pronoun F1
    on the highest-P-CXMI tenth against the rest."""
    input:
        unpack(lambda w: wf.score.context_usage_inputs(config, w.task, w.evalset)),
    output:
        layout.score_file("{task}", "{evalset}", "context_usage"),
    wildcard_constraints:
        task=wf.tasks.alternatives(wf.tasks.cxmi_tasks(config)),
    params:
        options=lambda w, input: wf.score.context_usage_args(config, w.task, w.evalset, input),
        k=lambda w: wf.tasks.task_k(config, w.task),
        **wf.score.context_usage_settings(config),
    log:
        layout.log_file("{task}/scores/{evalset}/context_usage"),
    benchmark:
        layout.benchmark_file("{task}/scores/{evalset}/context_usage")
    conda:
        "../envs/scoring.yaml"
    threads: 1
    priority: lambda w: wf.score.chain_priority(config, w.evalset)
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
        wf.tables.manifest_files(config),
    output:
        [
            report(f, category="Context usage" if name.startswith("context_") else "Tables",
                   labels={"table": name, "format": "csv"}) if f.endswith(".csv") else f
            for name in wf.tables.table_names(config)
            for f in wf.tables.table_files(config, name)
        ],
    params:
        manifest=wf.tables.manifest_arg(config),
        outdir=lambda w, output: os.path.dirname(output[0]),
    log:
        layout.log_file(f"tables/{TABLES_NAME}"),
    benchmark:
        layout.benchmark_file(f"tables/{TABLES_NAME}")
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
        lambda w: wf.tables.manifest_files(config, [w.task]),
    output:
        directory(layout.task_tables_dir("{task}")),
    wildcard_constraints:
        task=wf.tasks.alternatives(wf.tasks.configured_tasks(config)),
    params:
        manifest=lambda w: wf.tables.manifest_arg(config, [w.task]),
    log:
        layout.log_file("{task}/tables"),
    benchmark:
        layout.benchmark_file("{task}/tables")
    conda:
        "../envs/scoring.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    shell:
        "python -m docnmt.score.tables --manifest-json {params.manifest:q} --outdir {output:q} > {log:q} 2>&1"


for _plot, _category in wf.tables.PLOTS.items():

    rule:
        name:
            f"plot_{_plot}"
        input:
            wf.tables.manifest_files(config),
        output:
            report(wf.tables.plot_file(config, _plot), caption=f"../report/{_plot}.rst", category=_category),
        params:
            manifest=wf.tables.manifest_arg(config),
            plot=_plot,
        log:
            layout.log_file(f"plots/{TABLES_NAME}/{_plot}"),
        benchmark:
            layout.benchmark_file(f"plots/{TABLES_NAME}/{_plot}")
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
            lambda w: wf.tables.manifest_files(config, [w.task]),
        output:
            layout.task_plot("{task}", _plot),
        wildcard_constraints:
            task=wf.tasks.alternatives(wf.tables.plot_tasks(config, _plot)),
        params:
            manifest=lambda w: wf.tables.manifest_arg(config, [w.task]),
            plot=_plot,
        log:
            layout.log_file(f"{{task}}/plots/{_plot}"),
        benchmark:
            layout.benchmark_file(f"{{task}}/plots/{_plot}")
        conda:
            "../envs/scoring.yaml"
        threads: 1
        resources:
            mem_mb=1000,
            runtime=10,
        shell:
            "python -m docnmt.score.plots {params.plot:q} --manifest-json {params.manifest:q} --output {output:q} > {log:q} 2>&1"

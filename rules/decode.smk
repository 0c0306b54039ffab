# Decoding: one rule per configured search strategy (config strategies).
# The inputs and options are docnmt.workflow.decode's, every path docnmt.layout's.


rule check_model:
    """A model trained elsewhere, checked before any decode (docnmt.decode.checks): one error line naming the file."""
    input:
        unpack(lambda w: wf.decode.model_inputs(config, w.task, w.level)),
        sample=lambda w: layout.corpus_file(w.task, "test", wf.tasks.src(config, w.task)),
    output:
        layout.model_check("{task}", "{level}"),
    wildcard_constraints:
        task=wf.tasks.alternatives(wf.tasks.external_tasks(config)),
    params:
        **MODEL_PARAMS,
        codes=lambda w: wf.decode.check_codes_args(config, w.task),
        sample=lambda w: wf.decode.check_sample_args(config, w.task),
    log:
        layout.log_file("{task}/check_model/{level}"),
    benchmark:
        layout.benchmark_file("{task}/check_model/{level}")
    conda:
        wf.model_rules.model_conda(config, "../envs/models.yaml")
    threads: 1
    resources:
        mem_mb=8000,
        runtime=30,
    shell:
        in_environment(
            "python -m docnmt.decode.checks {params.model:q} --level {wildcards.level:q}"
            " --k {params.k:q} --separator {params.separator:q} {params.codes:q} --sample {input.sample:q}"
            " {params.sample:q} --output {output:q} > {log:q} 2>&1"
        )

# Adding a strategy to the registry (docnmt.decode.strategies) and the config adds a
# rule here; nothing is copied. A strategy's rule also makes its MBR systems
# ({system}: doc-trans+mbr, doc-trans+mbr-4; config mbr, docnmt.decode.mbr).


for _strategy in wf.systems.configured_strategies(config):

    rule:
        name:
            strategy_rule_name(_strategy)
        input:
            unpack(lambda w, strategy=_strategy: wf.decode.decode_inputs(config, strategy, w.task, w.evalset, w.system)),
        output:
            **wf.decode.decode_outputs(),
        wildcard_constraints:
            evalset=wf.tasks.alternatives(wf.systems.strategy_evalsets(config, _strategy)),
            system=wf.systems.system_pattern(_strategy),
        params:
            **MODEL_PARAMS,
            strategy=_strategy,
            options=lambda w, input, strategy=_strategy: wf.decode.decode_options(config, strategy, w.task, w.system, input),
            tgt=lambda w: wf.decode.tgt_lang_args(config, w.task),
            search=lambda w: wf.decode.search_args(config, w.task),
            journal=layout.decode_journal("{task}", "{evalset}", "{system}"),
        log:
            layout.log_file("{task}/decode/{evalset}/{system}"),
        benchmark:
            layout.benchmark_file("{task}/decode/{evalset}/{system}")
        conda:
            wf.model_rules.model_conda(config, "../envs/models.yaml")
        threads: wf.model_rules.DECODE_THREADS
        priority: lambda w, strategy=_strategy: wf.decode.decode_priority(config, strategy, w.evalset)
        resources:
            gpu=model_gpus,
            mem_mb=8000,
            runtime=lambda w: wf.tasks.runtime(config, w.task, demo=60, other=720),
        shell:
            in_environment(
                "python -m docnmt.decode.cli --strategy {params.strategy:q} {params.options:q}"
                " {params.model:q} --src {input.src:q} --docids {input.docids:q}"
                " {params.search:q} {params.tgt:q}"
                " --output-bpe {output.bpe:q} --output {output.txt:q} --sidecar {output.sidecar:q}"
                " --journal {params.journal:q} > {log:q} 2>&1"
            )


# A pooled variant (docnmt.decode.variants: pooled+docmbr) selects among the strategies'
# translations of the test set: one rule each, running its module's CLI.


for _variant in wf.decode.pooled_variants(config):

    rule:
        name:
            _variant.rule
        input:
            unpack(lambda w, variant=_variant: wf.decode.pooled_inputs(config, variant, w.task)),
        output:
            **wf.decode.decode_outputs(),
        wildcard_constraints:
            evalset="test",
            system=wf.systems.pooled_pattern(_variant),
        params:
            module=_variant.module,
            options=lambda w, input, variant=_variant: wf.decode.pooled_args(config, variant, w.task, input),
        log:
            layout.log_file("{task}/decode/{evalset}/{system}"),
        benchmark:
            layout.benchmark_file("{task}/decode/{evalset}/{system}")
        conda:
            "../envs/models.yaml"
        threads: 1
        resources:
            mem_mb=4000,
            runtime=lambda w: wf.tasks.runtime(config, w.task, demo=30, other=240),
        shell:
            "python -m {params.module:q} {params.options:q} --docids {input.docids:q}"
            " --output-bpe {output.bpe:q} --output {output.txt:q} --sidecar {output.sidecar:q} > {log:q} 2>&1"

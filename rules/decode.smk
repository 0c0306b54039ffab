# Decoding: one rule per search strategy, generated from config["strategies"].


rule check_model:
    """A model trained elsewhere, checked before any decode (docnmt.decode.checks): one error line naming the file."""
    input:
        unpack(lambda w: model_inputs(w.task, w.level)),
        sample=lambda w: corpus_file(w.task, "test", src(w.task)),
    output:
        "results/{task}/models/{level}/check.json",
    wildcard_constraints:
        task=_alternatives(external_tasks()),
    params:
        model=model_args(),
        k=lambda w: task_k(w.task),
        separator=lambda w: task_separator(w.task),
        codes=lambda w: (
            [] if SETTINGS[w.task]["models"]["bpe_codes"] == "none" else ["--codes", bpe_codes(w.task)]
        ),
        sample=lambda w: (
            [] if model_backend(w.task) == "transformers"
            else ["--sample-tokenize", SETTINGS[w.task]["models"]["tokenize"], "--sample-lang", src(w.task)]
        ),
    log:
        "logs/{task}/check_model/{level}.log",
    benchmark:
        "benchmarks/{task}/check_model/{level}.tsv"
    conda:
        "../envs/fairseq.yaml"
    threads: 1
    resources:
        mem_mb=8000,
        runtime=30,
    shell:
        "python -m docnmt.decode.checks {params.model:q} --level {wildcards.level:q}"
        " --k {params.k:q} --separator {params.separator:q} {params.codes:q} --sample {input.sample:q}"
        " {params.sample:q} --output {output:q} > {log:q} 2>&1"

# Adding a strategy to the registry (docnmt.decode.strategies) and the config adds a
# rule here; nothing is copied. A strategy's rule also makes its MBR systems
# ({system}: doc-trans+mbr, doc-trans+mbr-4; config mbr, docnmt.decode.mbr).


for _strategy in config["strategies"]:

    rule:
        name:
            strategy_rule_name(_strategy)
        input:
            unpack(decode_inputs(_strategy)),
        output:
            bpe=decode_output("bpe"),
            txt=decode_output("txt"),
            sidecar=decode_output("json"),
        wildcard_constraints:
            evalset=_alternatives(strategy_evalsets(_strategy)),
            system=system_pattern(_strategy),
        params:
            strategy=_strategy,
            model=model_args(),
            options=decode_options(_strategy),
            tgt=lambda w: [] if language_codes(w.task) else ["--tgt-lang", tgt(w.task)],
            search=lambda w: ["--beam", config["beam"], "--k", task_k(w.task), "--h", config["h"], "--dtype", DTYPE,
                              "--separator", task_separator(w.task)],
        log:
            "logs/{task}/decode/{evalset}/{system}.log",
        benchmark:
            "benchmarks/{task}/decode/{evalset}/{system}.tsv"
        conda:
            "../envs/fairseq.yaml"
        threads: 2
        resources:
            gpu=1,
            mem_mb=8000,
            runtime=lambda w: 60 if SETTINGS[w.task]["model"] == "demo" else 720,
        shell:
            "python -m docnmt.decode.cli --strategy {params.strategy:q} {params.options:q}"
            " {params.model:q} --src {input.src:q} --docids {input.docids:q}"
            " {params.search:q} {params.tgt:q}"
            " --output-bpe {output.bpe:q} --output {output.txt:q} --sidecar {output.sidecar:q} > {log:q} 2>&1"

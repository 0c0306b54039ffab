# Decoding: one rule per search strategy, generated from config["strategies"].


rule check_model:
    """A model trained elsewhere, checked before any decode (docnmt.decode.checks): one error line naming the file."""
    input:
        model=lambda w: model_file(w.task, w.level),
        data=lambda w: binarized(w.task, w.level),
        sample=lambda w: corpus_file(w.task, "test", src(w.task)),
    output:
        "results/{task}/models/{level}/check.json",
    wildcard_constraints:
        task=_alternatives(external_tasks()),
    params:
        k=lambda w: task_k(w.task),
        separator=lambda w: task_separator(w.task),
        codes=lambda w: (
            [] if SETTINGS[w.task]["models"]["bpe_codes"] == "none" else ["--codes", bpe_codes(w.task)]
        ),
        tokenize=lambda w: SETTINGS[w.task]["models"]["tokenize"],
        lang=lambda w: src(w.task),
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
        "python -m docnmt.decode.checks --model {input.model:q} --data {input.data:q} --level {wildcards.level:q}"
        " --k {params.k:q} --separator {params.separator:q} {params.codes:q} --sample {input.sample:q}"
        " --sample-tokenize {params.tokenize:q} --sample-lang {params.lang:q}"
        " --output {output:q} > {log:q} 2>&1"

# Adding a strategy to the registry (docnmt.decode.strategies) and the config adds a
# rule here; nothing is copied.


for _strategy in config["strategies"]:

    rule:
        name:
            strategy_rule_name(_strategy)
        input:
            unpack(decode_inputs(_strategy)),
        output:
            bpe=decode_output(_strategy, "bpe"),
            txt=decode_output(_strategy, "txt"),
            sidecar=decode_output(_strategy, "json"),
        wildcard_constraints:
            evalset=_alternatives(strategy_evalsets(_strategy)),
        params:
            strategy=_strategy,
            options=decode_options(_strategy),
            tgt=lambda w: tgt(w.task),
            search=lambda w: ["--beam", config["beam"], "--k", task_k(w.task), "--h", config["h"], "--dtype", DTYPE,
                              "--separator", task_separator(w.task)],
        log:
            f"logs/{{task}}/decode/{{evalset}}/{_strategy}.log",
        benchmark:
            f"benchmarks/{{task}}/decode/{{evalset}}/{_strategy}.tsv"
        conda:
            "../envs/fairseq.yaml"
        threads: 2
        resources:
            gpu=1,
            mem_mb=8000,
            runtime=lambda w: 60 if SETTINGS[w.task]["model"] == "demo" else 720,
        shell:
            "python -m docnmt.decode.cli --strategy {params.strategy:q} {params.options:q}"
            " --model {input.model:q} --data {input.data:q} --src {input.src:q} --docids {input.docids:q}"
            " {params.search:q} --tgt-lang {params.tgt:q}"
            " --output-bpe {output.bpe:q} --output {output.txt:q} --sidecar {output.sidecar:q} > {log:q} 2>&1"

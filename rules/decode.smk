# Decoding: one rule per search strategy, generated from config["strategies"].
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
            search=["--beam", config["beam"], "--k", config["k"], "--h", config["h"], "--dtype", DTYPE],
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

# Training: one rule for both levels of every task (fairseq-train through docnmt.train.cli).


rule train:
    """A sentence- or document-level transformer, its best checkpoint chosen by validation perplexity;
    resumes from checkpoint_last.pt after a kill."""
    input:
        data=lambda w: binarized(w.task, w.level),
    output:
        model="results/{task}/models/{level}/checkpoint_best.pt",
        curve="results/{task}/models/{level}/learning_curve.csv",
        sidecar="results/{task}/models/{level}/checkpoint_best.json",
    params:
        save_dir=lambda w: checkpoint_dir(w.task, w.level),
        history=lambda w: f"{checkpoint_dir(w.task, w.level)}/fairseq.log",
        src=lambda w: src(w.task),
        tgt=lambda w: tgt(w.task),
        dropout=lambda w: SETTINGS[w.task]["dropout"],
        label_smoothing=lambda w: SETTINGS[w.task]["label_smoothing"],
        patience=config["training"]["patience"],
        gpus=config["training"]["gpus"],
        preset=lambda w: preset_args(w.task),
    log:
        "logs/{task}/train/{level}.log",
    benchmark:
        "benchmarks/{task}/train/{level}.tsv"
    conda:
        "../envs/fairseq.yaml"
    threads: 4
    resources:
        gpu=config["training"]["gpus"],
        mem_mb=16000,
        runtime=lambda w: training_runtime(w.task),
    shell:
        "python -m docnmt.train.cli --data {input.data:q} --save-dir {params.save_dir:q} --output {output.model:q}"
        " --curve {output.curve:q} --sidecar {output.sidecar:q} --history {params.history:q}"
        " --src {params.src:q} --tgt {params.tgt:q} --dropout {params.dropout:q} --label-smoothing {params.label_smoothing:q}"
        " --patience {params.patience:q} --gpus {params.gpus:q} --workers {threads} -- {params.preset:q} > {log:q} 2>&1"


rule learning_curves:
    """Training and validation perplexity of both models of a task, for the report."""
    input:
        sentence="results/{task}/models/sentence/learning_curve.csv",
        document="results/{task}/models/document/learning_curve.csv",
    output:
        report(
            "results/{task}/plots/learning_curves.png",
            caption="../report/learning_curves.rst",
            category="Training",
            labels={"task": "{task}"},
        ),
    params:
        title=lambda w: f"learning curves: {w.task}",
    log:
        "logs/{task}/learning_curves.log",
    benchmark:
        "benchmarks/{task}/learning_curves.tsv"
    conda:
        "../envs/scoring.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    shell:
        "python -m docnmt.train.curves plot --csv {input.sentence:q} {input.document:q} --label sentence document"
        " --title {params.title:q} --output {output:q} > {log:q} 2>&1"

# Training: one rule for both levels of every task (fairseq-train through docnmt.train.cli).
# The arguments are docnmt.workflow.train's, every path docnmt.layout's.


rule train:
    """A sentence- or document-level transformer, its best checkpoint chosen by validation perplexity;
    resumes from checkpoint_last.pt after a kill."""
    input:
        data=lambda w: wf.tasks.binarized(config, w.task, w.level),
    output:
        model=layout.model_file("{task}", "{level}"),
        curve=layout.learning_curve("{task}", "{level}"),
        sidecar=layout.model_sidecar("{task}", "{level}"),
    params:
        save_dir=lambda w: layout.checkpoint_dir(w.task, w.level),
        history=lambda w: layout.training_history(w.task, w.level),
        src=lambda w: wf.tasks.src(config, w.task),
        tgt=lambda w: wf.tasks.tgt(config, w.task),
        **wf.train.training_params(config),
        preset=lambda w: wf.train.preset_args(config, w.task),
    log:
        layout.log_file("{task}/train/{level}"),
    benchmark:
        layout.benchmark_file("{task}/train/{level}")
    conda:
        "../envs/models.yaml"
    threads: 4
    resources:
        gpu=wf.train.training_gpus(config),
        mem_mb=16000,
        runtime=lambda w: wf.train.training_runtime(config, w.task),
    shell:
        "python -m docnmt.train.cli --data {input.data:q} --save-dir {params.save_dir:q} --output {output.model:q}"
        " --curve {output.curve:q} --sidecar {output.sidecar:q} --history {params.history:q}"
        " --src {params.src:q} --tgt {params.tgt:q} --dropout {params.dropout:q} --label-smoothing {params.label_smoothing:q}"
        " --patience {params.patience:q} --gpus {params.gpus:q} --workers {threads} -- {params.preset:q} > {log:q} 2>&1"


rule learning_curves:
    """Training and validation perplexity of both models of a task, for the report."""
    input:
        sentence=layout.learning_curve("{task}", "sentence"),
        document=layout.learning_curve("{task}", "document"),
    output:
        report(
            layout.learning_curves_plot("{task}"),
            caption="../report/learning_curves.rst",
            category="Training",
            labels={"task": "{task}"},
        ),
    params:
        title=lambda w: f"learning curves: {w.task}",
    log:
        layout.log_file("{task}/learning_curves"),
    benchmark:
        layout.benchmark_file("{task}/learning_curves")
    conda:
        "../envs/scoring.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    shell:
        "python -m docnmt.train.curves plot --csv {input.sentence:q} {input.document:q} --label sentence document"
        " --title {params.title:q} --output {output:q} > {log:q} 2>&1"

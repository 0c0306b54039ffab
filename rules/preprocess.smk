# The preprocessing chain shared by all tasks, on the checked corpus of
# corpora.smk: Moses tokenization and joint BPE (the training data scattered over shards),
# k-windows, one joined dictionary, fairseq binarization of both levels. The inputs
# and arguments are docnmt.workflow.preprocess's, every path docnmt.layout's.


rule shard:
    """Scatter the validated training data of one language into contiguous shards (split_shards)."""
    input:
        text=lambda w: layout.corpus_file(w.task, w.split, w.lang),
        stats=lambda w: layout.corpus_stats(w.task, w.split),
    output:
        temp(scatter.shard(wf.preprocess.shard_pattern("raw"))),
    log:
        layout.log_file("{task}/shard/{split}.{lang}"),
    benchmark:
        layout.benchmark_file("{task}/shard/{split}.{lang}")
    conda:
        "../envs/data.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=30,
    shell:
        "python -m docnmt.preprocess.shards split --input {input.text:q} --outputs {output:q} > {log:q} 2>&1"


rule tokenize:
    """Moses punctuation normalization and tokenization of one shard (of an evaluation split: the whole split)."""
    input:
        text=lambda w: wf.preprocess.shard_text(config, w.task, w.split, w.lang, w.shard),
        stats=lambda w: layout.corpus_stats(w.task, w.split),
    output:
        temp(layout.shard_file("{task}", "{split}", "{lang}", "{shard}", "tok")),
    log:
        layout.log_file("{task}/tokenize/{split}.{lang}.{shard}"),
    benchmark:
        layout.benchmark_file("{task}/tokenize/{split}.{lang}.{shard}")
    conda:
        "../envs/data.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=240,
    shell:
        "python -m docnmt.preprocess.tokenize tok --lang {wildcards.lang:q} --input {input.text:q} --output {output:q} > {log:q} 2>&1"


rule gather_shards:
    """Gather the tokenized (tok) or BPE-encoded (bpe) shards of one split and language."""
    input:
        lambda w: wf.preprocess.split_shard_files(config, w.task, w.stage, w.split, w.lang),
    output:
        layout.processed_file("{task}", "{stage}", "{split}", "{lang}"),
    log:
        layout.log_file("{task}/gather_shards/{stage}.{split}.{lang}"),
    benchmark:
        layout.benchmark_file("{task}/gather_shards/{stage}.{split}.{lang}")
    conda:
        "../envs/data.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=30,
    shell:
        "python -m docnmt.preprocess.shards gather --inputs {input:q} --output {output:q} > {log:q} 2>&1"


rule learn_bpe:
    """Joint BPE merges learned on the tokenized training data of both languages."""
    input:
        lambda w: [layout.processed_file(w.task, "tok", "train", lang) for lang in wf.tasks.langs(config, w.task)],
    output:
        layout.bpe_codes("{task}"),
    params:
        merges=lambda w: wf.preprocess.bpe_merges(config, w.task),
        min_frequency=wf.preprocess.bpe_min_frequency(config),
        sample=lambda w: wf.preprocess.bpe_sample_lines(config, w.task),
    log:
        layout.log_file("{task}/learn_bpe"),
    benchmark:
        layout.benchmark_file("{task}/learn_bpe")
    conda:
        "../envs/data.yaml"
    threads: 1
    resources:
        mem_mb=16000,
        runtime=720,
    shell:
        "python -m docnmt.preprocess.bpe learn --merges {params.merges:q} --min-frequency {params.min_frequency:q}"
        " --sample-lines {params.sample:q} --input {input:q} --codes {output:q} > {log:q} 2>&1"


rule apply_bpe:
    """Encode one tokenized shard with the task's joint BPE codes."""
    input:
        text=layout.shard_file("{task}", "{split}", "{lang}", "{shard}", "tok"),
        codes=lambda w: wf.tasks.bpe_codes(config, w.task),
    output:
        temp(layout.shard_file("{task}", "{split}", "{lang}", "{shard}", "bpe")),
    log:
        layout.log_file("{task}/apply_bpe/{split}.{lang}.{shard}"),
    benchmark:
        layout.benchmark_file("{task}/apply_bpe/{split}.{lang}.{shard}")
    conda:
        "../envs/data.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=240,
    shell:
        "python -m docnmt.preprocess.bpe apply --codes {input.codes:q} --input {input.text:q} --output {output:q} > {log:q} 2>&1"


rule windows:
    """Document-level text: each sentence with its k-1 predecessors, joined by <sep>."""
    input:
        text=lambda w: layout.processed_file(w.task, "bpe", w.split, w.lang),
        docids=lambda w: layout.corpus_file(w.task, w.split, "docids"),
    output:
        layout.window_file("{task}", "{split}", "{lang}"),
    params:
        k=lambda w: wf.tasks.task_k(config, w.task),
    log:
        layout.log_file("{task}/windows/{split}.{lang}"),
    benchmark:
        layout.benchmark_file("{task}/windows/{split}.{lang}")
    conda:
        "../envs/data.yaml"
    threads: 1
    resources:
        mem_mb=8000,
        runtime=60,
    shell:
        "python -m docnmt.preprocess.windows --k {params.k:q} --docids {input.docids:q} --input {input.text:q}"
        " --output {output:q} > {log:q} 2>&1"


rule joined_dictionary:
    """One fairseq dictionary over both languages (plus <sep>), shared by both levels."""
    input:
        lambda w: [layout.processed_file(w.task, "bpe", "train", lang) for lang in wf.tasks.langs(config, w.task)],
    output:
        layout.joined_dictionary("{task}"),
    log:
        layout.log_file("{task}/joined_dictionary"),
    benchmark:
        layout.benchmark_file("{task}/joined_dictionary")
    conda:
        "../envs/data.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=60,
    shell:
        "python -m docnmt.preprocess.dictionary --input {input:q} --output {output:q} > {log:q} 2>&1"


rule binarize:
    """fairseq binarization of one level with the joined dictionary; line counts are verified."""
    input:
        text=lambda w: wf.preprocess.binarize_inputs(config, w.task, w.level),
        dictionary=lambda w: layout.joined_dictionary(w.task),
    output:
        directory(layout.binarized("{task}", "{level}")),
    params:
        src=lambda w: wf.tasks.src(config, w.task),
        tgt=lambda w: wf.tasks.tgt(config, w.task),
        prefixes=lambda w: wf.preprocess.binarize_prefixes(config, w.task, w.level),
    log:
        layout.log_file("{task}/binarize/{level}"),
    benchmark:
        layout.benchmark_file("{task}/binarize/{level}")
    conda:
        "../envs/models.yaml"
    threads: 2
    resources:
        mem_mb=8000,
        runtime=120,
    shell:
        "python -m docnmt.preprocess.binarize --src {params.src:q} --tgt {params.tgt:q} {params.prefixes:q}"
        " --dict {input.dictionary:q} --destdir {output:q} --workers {threads} > {log:q} 2>&1"


rule encode_external:
    """An external task's evaluation text in its models' units: their tokenizer and BPE codes (or none)."""
    input:
        text=lambda w: layout.corpus_file(w.task, w.split, w.lang),
        codes=lambda w: wf.tasks.external_codes(config, w.task),
    output:
        layout.processed_file("{task}", "bpe", "{split}", "{lang}"),
    wildcard_constraints:
        task=wf.tasks.alternatives(wf.tasks.external_tasks(config)),
    params:
        **wf.preprocess.external_encoding(config),
    log:
        layout.log_file("{task}/encode_external/{split}.{lang}"),
    benchmark:
        layout.benchmark_file("{task}/encode_external/{split}.{lang}")
    conda:
        "../envs/data.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=60,
    shell:
        "python -m docnmt.preprocess.encode --lang {wildcards.lang:q} --tokenize {params.tokenize:q}"
        " --codes {params.codes:q} --input {input.text:q} --output {output:q} > {log:q} 2>&1"


ruleorder: encode_external > gather_shards

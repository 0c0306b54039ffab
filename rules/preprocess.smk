# The preprocessing chain shared by all tasks, on the checked corpus of
# corpora.smk: Moses tokenization and joint BPE (the training data scattered over shards),
# k-windows, one joined dictionary, fairseq binarization of both levels.


rule shard:
    """Scatter the validated training data of one language into contiguous shards (split_shards)."""
    input:
        text=lambda w: corpus_file(w.task, w.split, w.lang),
        stats=lambda w: corpus_stats(w.task, w.split),
    output:
        temp(scatter.shard(shard_pattern("raw"))),
    log:
        "logs/{task}/shard/{split}.{lang}.log",
    benchmark:
        "benchmarks/{task}/shard/{split}.{lang}.tsv"
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
        text=shard_text,
        stats=lambda w: corpus_stats(w.task, w.split),
    output:
        temp("data/{task}/shards/{split}.{lang}.{shard}.tok"),
    log:
        "logs/{task}/tokenize/{split}.{lang}.{shard}.log",
    benchmark:
        "benchmarks/{task}/tokenize/{split}.{lang}.{shard}.tsv"
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
        split_shard_files,
    output:
        "data/{task}/{stage}/{split}.{lang}",
    log:
        "logs/{task}/gather_shards/{stage}.{split}.{lang}.log",
    benchmark:
        "benchmarks/{task}/gather_shards/{stage}.{split}.{lang}.tsv"
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
        lambda w: [processed_file(w.task, "tok", "train", lang) for lang in langs(w.task)],
    output:
        "data/{task}/bpe/codes",
    params:
        merges=lambda w: SETTINGS[w.task]["bpe_merges"],
        min_frequency=config["preprocess"]["bpe_min_frequency"],
        sample=lambda w: SETTINGS[w.task]["bpe_sample_lines"] or 0,
    log:
        "logs/{task}/learn_bpe.log",
    benchmark:
        "benchmarks/{task}/learn_bpe.tsv"
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
        text="data/{task}/shards/{split}.{lang}.{shard}.tok",
        codes=lambda w: bpe_codes(w.task),
    output:
        temp("data/{task}/shards/{split}.{lang}.{shard}.bpe"),
    log:
        "logs/{task}/apply_bpe/{split}.{lang}.{shard}.log",
    benchmark:
        "benchmarks/{task}/apply_bpe/{split}.{lang}.{shard}.tsv"
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
        text=lambda w: processed_file(w.task, "bpe", w.split, w.lang),
        docids=lambda w: corpus_file(w.task, w.split, "docids"),
    output:
        "data/{task}/doc/{split}.{lang}",
    params:
        k=config["k"],
    log:
        "logs/{task}/windows/{split}.{lang}.log",
    benchmark:
        "benchmarks/{task}/windows/{split}.{lang}.tsv"
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
        lambda w: [processed_file(w.task, "bpe", "train", lang) for lang in langs(w.task)],
    output:
        "data/{task}/bin/dict.txt",
    log:
        "logs/{task}/joined_dictionary.log",
    benchmark:
        "benchmarks/{task}/joined_dictionary.tsv"
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
        text=lambda w: [level_text(w.task, w.level, split, lang) for split in SPLITS for lang in langs(w.task)],
        dictionary=lambda w: joined_dictionary(w.task),
    output:
        directory("data/{task}/bin/{level}"),
    params:
        src=lambda w: src(w.task),
        tgt=lambda w: tgt(w.task),
        prefixes=lambda w: [
            arg
            for split in SPLITS
            for arg in (f"--{split}pref", level_text(w.task, w.level, split, src(w.task)).rsplit(".", 1)[0])
        ],
    log:
        "logs/{task}/binarize/{level}.log",
    benchmark:
        "benchmarks/{task}/binarize/{level}.tsv"
    conda:
        "../envs/fairseq.yaml"
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
        text=lambda w: corpus_file(w.task, w.split, w.lang),
        codes=lambda w: [] if SETTINGS[w.task]["models"]["bpe_codes"] == "none" else [bpe_codes(w.task)],
    output:
        "data/{task}/bpe/{split}.{lang}",
    wildcard_constraints:
        task=_alternatives(external_tasks()),
    params:
        tokenize=lambda w: SETTINGS[w.task]["models"]["tokenize"],
        codes=lambda w: SETTINGS[w.task]["models"]["bpe_codes"],
    log:
        "logs/{task}/encode_external/{split}.{lang}.log",
    benchmark:
        "benchmarks/{task}/encode_external/{split}.{lang}.tsv"
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

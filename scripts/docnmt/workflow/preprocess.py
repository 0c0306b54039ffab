"""The inputs and arguments of the preprocessing rules (``rules/preprocess.smk``): the shards of a split
(Snakemake's scatter items), what each shard is made from, the text each level's model is trained on, and the
arguments of BPE learning and binarization."""

from __future__ import annotations

from docnmt import layout

from .tasks import SPLITS, langs, src


def shard_pattern(stage: str) -> str:
    """The scatter pattern of one split and language (``scatter.shard``); stage raw, tok or bpe."""
    return layout.shard_file("{{task}}", "{{split}}", "{{lang}}", "{scatteritem}", stage)


def split_shards(config: dict, split: str) -> list[str]:
    """The shards of a split's tokenization and BPE: the training data is scattered into preprocess.shards (Snakemake's
    scatter items, "1-of-4" ...); an evaluation split (valid, test, ContraPro: thousands of lines, seconds of work)
    is one shard, "1-of-1"."""
    count = config["preprocess"]["shards"] if split == "train" else 1
    return [f"{i}-of-{count}" for i in range(1, count + 1)]


def shard_text(config: dict, task: str, split: str, lang: str, shard: str) -> str:
    """What one shard is tokenized from: its piece of the split (rule shard), or the whole split where it is one."""
    if split_shards(config, split) == ["1-of-1"]:
        return layout.corpus_file(task, split, lang)
    return layout.shard_file(task, split, lang, shard, "raw")


def split_shard_files(config: dict, task: str, stage: str, split: str, lang: str) -> list[str]:
    """The tokenized (stage tok) or BPE-encoded (bpe) shards of one split and language, in order."""
    return [layout.shard_file(task, split, lang, shard, stage) for shard in split_shards(config, split)]


def bpe_sample_lines(config: dict, task: str) -> int:
    """The lines BPE learning samples from the training data (0: all of them)."""
    return config["task_settings"][task]["bpe_sample_lines"] or 0


def level_text(task: str, level: str, split: str, lang: str) -> str:
    """Text a level's model is trained on: sentences (sentence) or windows (document)."""
    if level == "sentence":
        return layout.processed_file(task, "bpe", split, lang)
    return layout.window_file(task, split, lang)


def binarize_inputs(config: dict, task: str, level: str) -> list[str]:
    """Every split of a level's text, both languages."""
    return [level_text(task, level, split, lang) for split in SPLITS for lang in langs(config, task)]


def binarize_prefixes(config: dict, task: str, level: str) -> list[str]:
    """--trainpref/--validpref/--testpref of fairseq's binarization (a list; the rule quotes each)."""
    return [arg for split in SPLITS
            for arg in (f"--{split}pref", level_text(task, level, split, src(config, task)).rsplit(".", 1)[0])]


def bpe_merges(config: dict, task: str) -> int:
    """The task's BPE merge operations (the paper: 15k, 32k for OS)."""
    return config["task_settings"][task]["bpe_merges"]


def bpe_min_frequency(config: dict) -> int:
    return config["preprocess"]["bpe_min_frequency"]


def shards(config: dict) -> int:
    """How many shards a large split is tokenized and BPE-encoded in (Snakemake's scattergather)."""
    return config["preprocess"]["shards"]


def external_encoding(config: dict) -> dict:
    """The encode_external rule's params: a model trained elsewhere's tokenizer and BPE codes
    (task_settings.TASK.models), as functions of the job's wildcards."""
    settings = config["task_settings"]
    return {"tokenize": lambda w: settings[w.task]["models"]["tokenize"],
            "codes": lambda w: settings[w.task]["models"]["bpe_codes"]}

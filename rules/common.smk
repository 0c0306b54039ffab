# Config validation, wildcard constraints and every path of the workflow.
# Other rule files call these helpers and build no paths themselves.
import os
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError

SCRIPTS = str(Path(workflow.basedir) / "scripts")
sys.path.insert(0, SCRIPTS)
# Rule commands run `python -m docnmt.<module>`; make the package importable
# there too (locally, in conda envs, and in cluster jobs, which re-read this file).
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (SCRIPTS, os.environ.get("PYTHONPATH")) if p)

from docnmt.config import ConfigError, validate  # noqa: E402

try:
    _validated = validate(config, Path(workflow.basedir) / "schemas" / "config.schema.yaml")
except ConfigError as err:
    raise WorkflowError(f"invalid config: {err}") from None
config.clear()
config.update(_validated)

SPLITS = ["train", "valid", "test"]
LEVELS = ["sentence", "document"]
TASKS = list(config["tasks"])
SETTINGS = config["task_settings"]


def _alternatives(names):
    """A wildcard regex matching exactly these names (or nothing, if empty)."""
    return "|".join(sorted(map(str, names))) if names else "(?!x)x"


def tasks_of_type(kind):
    return [t for t in SETTINGS if SETTINGS[t]["corpus"]["type"] == kind]


for _task in tasks_of_type("demo"):
    if (SETTINGS[_task]["src"], SETTINGS[_task]["tgt"]) != ("en", "de"):
        raise WorkflowError(f"invalid config: config key 'task_settings.{_task}': the demo corpus is en->de")

wildcard_constraints:
    task=_alternatives(SETTINGS),
    split=_alternatives(SPLITS),
    level=_alternatives(LEVELS),
    lang="[a-z]{2,3}",
    stage="tok|bpe",
    shard=r"\d+-of-\d+",


scattergather:
    shard=config["preprocess"]["shards"],


def src(task):
    return SETTINGS[task]["src"]


def tgt(task):
    return SETTINGS[task]["tgt"]


def langs(task):
    return [src(task), tgt(task)]


# ---- paths: the common document format --------------------------------------
def corpus_file(task, split, ext):
    """data/{task}/corpus/{split}.{ext}; ext is a language code or 'docids'."""
    return f"data/{task}/corpus/{split}.{ext}"


def corpus_split(task, split):
    """The three line-aligned files of one split, by role."""
    return {
        "src": corpus_file(task, split, src(task)),
        "tgt": corpus_file(task, split, tgt(task)),
        "docids": corpus_file(task, split, "docids"),
    }


def corpus_stats(task, split):
    return f"data/{task}/corpus/{split}.stats.json"


# ---- paths: preprocessing -----------------------------------------------------
def shard_pattern(ext):
    """Scatter pattern of one split and language; ext: raw, tok or bpe."""
    return "data/{{task}}/shards/{{split}}.{{lang}}.{scatteritem}." + ext


def processed_file(task, stage, split, lang):
    """data/{task}/{stage}/{split}.{lang}: stage tok (Moses) or bpe (subword units)."""
    return f"data/{task}/{stage}/{split}.{lang}"


def bpe_codes(task):
    return f"data/{task}/bpe/codes"


def window_file(task, split, lang):
    """Document-level text: k-sentence windows joined by <sep>."""
    return f"data/{task}/doc/{split}.{lang}"


def level_text(task, level, split, lang):
    """Text a level's model is trained on: sentences (sentence) or windows (document)."""
    if level == "sentence":
        return processed_file(task, "bpe", split, lang)
    return window_file(task, split, lang)


def joined_dictionary(task):
    return f"data/{task}/bin/dict.txt"


def binarized(task, level):
    """fairseq-binarized data of one level (a directory with manifest.json)."""
    return f"data/{task}/bin/{level}"


# ---- logs and benchmarks ------------------------------------------------------
def log(rule_name, pattern):
    return f"logs/{{task}}/{rule_name}/{pattern}.log"


def bench(rule_name, pattern):
    return f"benchmarks/{{task}}/{rule_name}/{pattern}.tsv"


# ---- targets ------------------------------------------------------------------
def all_targets():
    targets = []
    for task in TASKS:
        targets += [binarized(task, level) for level in LEVELS]
    return targets

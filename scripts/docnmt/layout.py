"""Where the workflow keeps each file of a task, relative to its working directory: the one definition that
``rules/common.smk`` and the CLIs that find a task's files (``docnmt-translate --task``) share.

Data under ``data/{task}/``, models, decodes and scores under ``results/{task}/``. The paths of a task whose
models come from elsewhere (``task_settings.TASK.models``) are the config's own: ``rules/common.smk`` decides
which applies; these functions give the workflow's.
"""

from __future__ import annotations


# ---- data ------------------------------------------------------------------------
def corpus_file(task: str, split: str, ext: str) -> str:
    """``data/{task}/corpus/{split}.{ext}`` (ext: a language code or docids); ContraPro's evaluation set in
    ``data/{task}/contrapro/``."""
    if split == "contrapro":
        return f"data/{task}/contrapro/contrapro.{ext}"
    return f"data/{task}/corpus/{split}.{ext}"


def corpus_stats(task: str, split: str) -> str:
    return f"data/{task}/corpus/{split}.stats.json"


def contrapro_report(task: str) -> str:
    return f"data/{task}/contrapro/contrapro.report.json"


def contrapro_examples(task: str) -> str:
    return f"data/{task}/contrapro/contrapro.examples.jsonl"


def processed_file(task: str, stage: str, split: str, lang: str) -> str:
    """``data/{task}/{stage}/{split}.{lang}``: stage tok (Moses) or bpe (subword units)."""
    return f"data/{task}/{stage}/{split}.{lang}"


def bpe_codes(task: str) -> str:
    """The joint BPE codes the workflow learns for a task."""
    return f"data/{task}/bpe/codes"


def window_file(task: str, split: str, lang: str) -> str:
    """Document-level text: k-sentence windows joined by <sep>."""
    return f"data/{task}/doc/{split}.{lang}"


def joined_dictionary(task: str) -> str:
    return f"data/{task}/bin/dict.txt"


def binarized(task: str, level: str) -> str:
    """fairseq-binarized data of one level (a directory with manifest.json)."""
    return f"data/{task}/bin/{level}"


# ---- models ----------------------------------------------------------------------
def checkpoint_dir(task: str, level: str) -> str:
    """fairseq's --save-dir: not a Snakemake output, so reruns never delete it (resume)."""
    return f"results/{task}/models/{level}/checkpoints"


def model_file(task: str, level: str) -> str:
    """The published (best) checkpoint of a level's model."""
    return f"results/{task}/models/{level}/checkpoint_best.pt"


def model_check(task: str, level: str) -> str:
    """The report of docnmt.decode.checks on a task's model trained elsewhere."""
    return f"results/{task}/models/{level}/check.json"


# ---- decodes and scores ----------------------------------------------------------
def decode_file(task: str, evalset: str, strategy: str, ext: str) -> str:
    """A strategy's decode of an evaluation set: ext bpe, txt or json (its sidecar)."""
    return f"results/{task}/decode/{evalset}/{strategy}.{ext}"


def score_file(task: str, evalset: str, name: str) -> str:
    """``results/{task}/scores/{evalset}/{name}.json``."""
    return f"results/{task}/scores/{evalset}/{name}.json"


def cxmi_sentences(task: str, evalset: str) -> str:
    """The P-CXMI of every scored sentence, tab-separated."""
    return f"results/{task}/scores/{evalset}/cxmi.sentences.tsv"

"""Where the workflow keeps each file of a task, relative to its working directory: the one definition that
``rules/common.smk`` and the CLIs that find a task's files (``docnmt-translate --task``) share.

Data under ``data/{task}/``, models, decodes, scores and the task's own tables and plots under
``results/{task}/``; the tables and plots of the configured tasks together under ``results/tables/{name}/`` and
``results/plots/{name}/`` (the config's ``tables.name``). The paths of a task whose
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


# ---- tables and plots ------------------------------------------------------------
#: The formats of every table (docnmt.tablefmt): Markdown, CSV, LaTeX.
TABLE_FORMATS = ("md", "csv", "tex")


def task_tables_dir(task: str) -> str:
    """``results/{task}/tables``: the task's own tables, ``{table}.{md,csv,tex}``."""
    return f"results/{task}/tables"


def task_table(task: str, table: str, ext: str) -> str:
    return f"{task_tables_dir(task)}/{table}.{ext}"


def task_plot(task: str, plot: str) -> str:
    """``results/{task}/plots/{plot}.png``: a plot of the task alone (beside its learning curves)."""
    return f"results/{task}/plots/{plot}.png"


def combined_tables_dir(name: str) -> str:
    """``results/tables/{name}``: the tables of all the configured tasks together, under the config's
    ``tables.name`` (docnmt.config.tables_name), so that each configuration keeps its own."""
    return f"results/tables/{name}"


def combined_table(name: str, table: str, ext: str) -> str:
    return f"{combined_tables_dir(name)}/{table}.{ext}"


def combined_plot(name: str, plot: str) -> str:
    """``results/plots/{name}/{plot}.png``: a plot of all the configured tasks together."""
    return f"results/plots/{name}/{plot}.png"

"""Where the workflow keeps each file of a task, relative to its working directory: the one definition that
the rules (every path of ``rules/*.smk``, through ``docnmt.workflow``) and the CLIs that find a task's files
(``docnmt-translate --task``) share; ``tests/workflow/test_rule_paths.py`` checks every job's files against it.

Data under ``data/{task}/``, models, decodes, scores and the task's own tables and plots under
``results/{task}/``; the tables and plots of the configured tasks together under ``results/tables/{name}/`` and
``results/plots/{name}/`` (the config's ``tables.name``). The paths of a task whose
models come from elsewhere (``task_settings.TASK.models``) are the config's own: ``docnmt.workflow.tasks``
decides which applies; these functions give the workflow's.
"""

from __future__ import annotations


# ---- data ------------------------------------------------------------------------
def download_file(source: str, filename: str) -> str:
    """``downloads/{source}/{filename}``: a source's file as its URL names it (config ``sources``)."""
    return f"downloads/{source}/{filename}"


def download_origin(source: str, filename: str) -> str:
    """``downloads/{source}/origin/{filename}.json``: which location (or local file) a download came from, and the
    member specs of that location's archive (what the extract rule reads)."""
    return f"downloads/{source}/origin/{filename}.json"


def extracted_dir(source: str) -> str:
    """The members of a source's archive, unpacked."""
    return f"downloads/{source}/extracted"


def corpus_dir(task: str) -> str:
    """``data/{task}/corpus``: a task's documents in the common format, where a corpus recipe writes them."""
    return f"data/{task}/corpus"


def corpus_file(task: str, split: str, ext: str) -> str:
    """``data/{task}/corpus/{split}.{ext}`` (ext: a language code or docids); ContraPro's evaluation set in
    ``data/{task}/contrapro/``, the ctxpro sets (``ctxpro-formality-test``) in ``data/{task}/ctxpro/``."""
    if split == "contrapro":
        return contrapro_file(task, ext)
    if split.startswith(CTXPRO_PREFIX):
        return ctxpro_file(task, split, ext)
    return f"{corpus_dir(task)}/{split}.{ext}"


def corpus_report(task: str) -> str:
    """What a real corpus's recipe kept and dropped (docnmt.corpora.parsers --report)."""
    return f"{corpus_dir(task)}/prepare.report.json"


def demo_contrapro(task: str) -> str:
    """The demo's contrastive examples in ContraPro's JSON format, made with its corpus."""
    return f"{corpus_dir(task)}/contrapro.json"


def demo_ctxpro_json(task: str) -> str:
    """The demo's ctxpro set (docnmt.corpora.demo_ctxpro), made with its corpus: its JSON list of examples."""
    return f"{corpus_dir(task)}/ctxpro.demo.test.json"


def demo_ctxpro_inputs(task: str) -> str:
    """The demo's ctxpro set's inputs: a line per example, its document up to its sentence."""
    return f"{corpus_dir(task)}/ctxpro.demo.test"


def contrapro_dir(task: str) -> str:
    """``data/{task}/contrapro``: the ContraPro evaluation set (docnmt.corpora.contrapro --out)."""
    return f"data/{task}/contrapro"


def contrapro_file(task: str, ext: str) -> str:
    """The ContraPro evaluation set as a small document corpus: ext a language code or docids."""
    return f"{contrapro_dir(task)}/contrapro.{ext}"


def corpus_stats(task: str, split: str) -> str:
    return f"{corpus_dir(task)}/{split}.stats.json"


def contrapro_report(task: str) -> str:
    return f"{contrapro_dir(task)}/contrapro.report.json"


def contrapro_examples(task: str) -> str:
    return f"{contrapro_dir(task)}/contrapro.examples.jsonl"


#: The evaluation-set names of ctxpro's sets start with this (docnmt.corpora.ctxpro.evalset_name).
CTXPRO_PREFIX = "ctxpro-"


def ctxpro_dir(task: str) -> str:
    """``data/{task}/ctxpro``: the task's ctxpro sets as document corpora (docnmt.corpora.ctxpro --out)."""
    return f"data/{task}/ctxpro"


def ctxpro_file(task: str, evalset: str, ext: str) -> str:
    """A ctxpro set as a small document corpus: ext a language code or docids."""
    return f"{ctxpro_dir(task)}/{evalset}.{ext}"


def ctxpro_examples(task: str, evalset: str) -> str:
    """A ctxpro set's examples, a JSON object a line with the ``line`` each is scored on."""
    return f"{ctxpro_dir(task)}/{evalset}.examples.jsonl"


def ctxpro_report(task: str, evalset: str) -> str:
    """A ctxpro set's name, md5 and the context kept (docnmt.corpora.ctxpro)."""
    return f"{ctxpro_dir(task)}/{evalset}.report.json"


def ctxpro_download(filename: str) -> str:
    """``downloads/ctxpro/{filename}``: a ctxpro set's JSON or inputs file, as its URL names it."""
    return f"downloads/ctxpro/{filename}"


def shard_file(task: str, split: str, lang: str, shard: str, stage: str) -> str:
    """One shard of a split's preprocessing (shard ``1-of-4``; stage raw, tok or bpe): a temporary file."""
    return f"data/{task}/shards/{split}.{lang}.{shard}.{stage}"


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


def model_sidecar(task: str, level: str) -> str:
    """What the published checkpoint is (epoch, validation perplexity, ...): docnmt.train.cli --sidecar."""
    return f"results/{task}/models/{level}/checkpoint_best.json"


def learning_curve(task: str, level: str) -> str:
    """Training and validation perplexity per epoch, CSV."""
    return f"results/{task}/models/{level}/learning_curve.csv"


def training_history(task: str, level: str) -> str:
    """fairseq's own log of every training run, kept with the checkpoints (docnmt.train.cli --history)."""
    return f"{checkpoint_dir(task, level)}/fairseq.log"


def model_check(task: str, level: str) -> str:
    """The report of docnmt.decode.checks on a task's model trained elsewhere."""
    return f"results/{task}/models/{level}/check.json"


# ---- decodes and scores ----------------------------------------------------------
def decode_file(task: str, evalset: str, strategy: str, ext: str) -> str:
    """A strategy's decode of an evaluation set: ext bpe, txt or json (its sidecar)."""
    return f"results/{task}/decode/{evalset}/{strategy}.{ext}"


def decode_journal(task: str, evalset: str, strategy: str) -> str:
    """A decode's resume journal (:mod:`docnmt.decode.journal`): not an output, so Snakemake keeps it when the job
    fails or is killed, and the rerun continues from it; the decode removes it once its outputs are written."""
    return f"results/{task}/decode/{evalset}/{strategy}.journal"


def score_file(task: str, evalset: str, name: str) -> str:
    """``results/{task}/scores/{evalset}/{name}.json``."""
    return f"results/{task}/scores/{evalset}/{name}.json"


def comet_segments(task: str, evalset: str) -> str:
    """Every learned metric's segment scores of every system, one JSON line per metric and system."""
    return f"results/{task}/scores/{evalset}/comet.segments.jsonl"


def judge_answers(task: str, evalset: str) -> str:
    """The LLM judge's answers and score of every segment of every system, one JSON line each."""
    return f"results/{task}/scores/{evalset}/gemba.answers.jsonl"


def comet_error_spans(task: str, evalset: str) -> str:
    """The error spans XCOMET checkpoints tag in every segment of every system, one JSON line per metric and
    system (empty where no checkpoint tags them)."""
    return f"results/{task}/scores/{evalset}/comet.error_spans.jsonl"


def pronoun_sentences(task: str, evalset: str) -> str:
    """The pronoun scorer's counts of every sentence of every system, one JSON line per system (the comparison
    page's pronoun columns)."""
    return f"results/{task}/scores/{evalset}/pronouns.sentences.jsonl"


def compare_page(task: str) -> str:
    """The task's comparison page: every strategy's translation of every document, side by side (one HTML file)."""
    return f"results/{task}/compare.html"


def compare_marot(task: str) -> str:
    """The comparison page's data as a Google Marot file (ten tab-separated columns)."""
    return f"results/{task}/compare.marot.tsv"


def comet_env() -> str:
    """Where unbabel-comet's environment is (its Python), for the decodes that select by a learned metric."""
    return "results/comet-env.json"


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


def learning_curves_plot(task: str) -> str:
    """Both models' learning curves: a plot of the task's, beside its others."""
    return task_plot(task, "learning_curves")


# ---- logs and benchmarks ---------------------------------------------------------
def log_file(job: str) -> str:
    """``logs/{job}.log``: a job's log; ``job`` names it as its benchmark does, ``{task}/{rule}[/{wildcards}]``
    for a task's job."""
    return f"logs/{job}.log"


def benchmark_file(job: str) -> str:
    """``benchmarks/{job}.tsv``: a job's time and memory (Snakemake's benchmark), named as its log."""
    return f"benchmarks/{job}.tsv"

"""A task's settings as the rules read them, from the validated config (``docnmt.config.validate``): its
languages, the levels it has a model for, its window size and separator, its corpus settings, its evaluation
sets, and where its models, data and BPE codes are (the workflow's, ``docnmt.layout``, or a model trained
elsewhere: ``task_settings.TASK.models``)."""

from __future__ import annotations

import re

from docnmt import SEP, layout
from docnmt.corpora import ctxpro
from docnmt.textio import InputError
from docnmt.decode.backend import DEFAULT as DEFAULT_BACKEND, backend
from docnmt.decode.load_options import models_load_options

#: The splits of every corpus.
SPLITS = ["train", "valid", "test"]
#: Evaluation-only sets that go through tokenization and BPE but are not binarized.
EXTRA_SPLITS = ["contrapro"]
#: The models of a task: sentence-level and document-level.
LEVELS = ["sentence", "document"]
#: Evaluation sets: the test split of every task, ContraPro where configured.
EVALSETS = ["test", "contrapro"]
#: Corpus types that a download recipe makes (docnmt.workflow.corpora.corpus_recipe).
REAL_CORPUS_TYPES = ("news", "ted", "os")
#: Defaults of corpus settings that depend on the corpus type.
CORPUS_DEFAULTS = {
    "demo": {"train_docs": 1200, "valid_docs": 40, "test_docs": 100},
    "os": {"valid_docs": 5, "test_docs": 5},
}
#: Corpus recipes that write a per-line subsets file ({split}.subsets) for some splits:
#: the demo marks the test sentences whose pronoun has an ambiguous antecedent.
SUBSET_SPLITS = {"demo": ["test"]}


def alternatives(names) -> str:
    """A wildcard regex matching exactly these names (or nothing, if empty)."""
    return "|".join(sorted(re.escape(str(n)) for n in names)) if names else "(?!x)x"


def check(config: dict) -> None:
    """What the schema cannot say: the demo corpus and ContraPro are en->de; a task's ctxpro sets exist (the
    package's or ctxpro.sets) and translate its pair. ValueError naming the config key."""
    for task in tasks_of_type(config, "demo"):
        if langs(config, task) != ["en", "de"]:
            raise ValueError(f"config key 'task_settings.{task}': the demo corpus is en->de")
    for task in contrapro_tasks(config):
        if langs(config, task) != ["en", "de"]:
            raise ValueError(f"config key 'task_settings.{task}.contrapro': ContraPro is en->de only")
    registry = ctxpro_registry(config) if any(ctxpro_sets(config, t) for t in config["tasks"]) else {}
    languages = ctxpro.splitter_languages()
    for task in config["tasks"]:
        for number, name in enumerate(ctxpro_sets(config, task)):
            key = f"config key 'task_settings.{task}.ctxpro[{number}]'"
            try:
                ctxpro.lookup(name, registry)
            except InputError as err:
                raise ValueError(f"{key}: {err}") from None
            parts = ctxpro.parse_name(name)
            if [parts["src"], parts["tgt"]] != langs(config, task):
                raise ValueError(f"{key}: {name} translates {parts['src']}->{parts['tgt']}, the task "
                                 f"{src(config, task)}->{tgt(config, task)}")
        names = [ctxpro.evalset_name(n) for n in ctxpro_sets(config, task)]
        if len(set(names)) != len(names):
            raise ValueError(f"config key 'task_settings.{task}.ctxpro': two sets of one phenomenon and split")
        if names and languages is not None and tgt(config, task) not in languages:
            raise ValueError(f"config key 'task_settings.{task}.ctxpro': ctxpro's scorer splits the translations "
                             f"with sentence-splitter, which does not know the target language {tgt(config, task)!r}; "
                             f"it knows {', '.join(languages)}")


# ---- which tasks ---------------------------------------------------------------------
def is_external(config: dict, task: str) -> bool:
    """A task whose models come from elsewhere: no corpus preparation, BPE learning or training."""
    return "models" in config["task_settings"][task]


def external_tasks(config: dict) -> list[str]:
    return [t for t in config["task_settings"] if is_external(config, t)]


def tasks_of_type(config: dict, kind: str) -> list[str]:
    return [t for t, s in config["task_settings"].items() if s["corpus"]["type"] == kind]


def real_tasks(config: dict) -> list[str]:
    """Tasks whose corpus a download recipe makes."""
    return [t for t, s in config["task_settings"].items() if s["corpus"]["type"] in REAL_CORPUS_TYPES]


def testset_tasks(config: dict) -> list[str]:
    """Prepared tasks whose test split comes from a WMT test set (corpus.test: WMT XML or WMT24++ JSONL)."""
    return [t for t in tasks_of_type(config, "prepared") if "test" in config["task_settings"][t]["corpus"]]


def contrapro_tasks(config: dict) -> list[str]:
    return [t for t, s in config["task_settings"].items() if s["contrapro"]]


def german_tasks(config: dict) -> list[str]:
    """Tasks with German targets: the pronoun metric (BlonDe's German extension) applies."""
    return [t for t in config["task_settings"] if tgt(config, t) == "de"]


def cxmi_tasks(config: dict) -> list[str]:
    """The configured tasks with a document-level model whose backend scores forced targets: CXMI measures how much
    that model uses its context."""
    return [t for t in config["tasks"] if "document" in task_levels(config, t)
            and backend(model_backend(config, t)).can("forced_scoring", engine_args(config, t))]


# ---- one task's settings -------------------------------------------------------------
def src(config: dict, task: str) -> str:
    return config["task_settings"][task]["src"]


def tgt(config: dict, task: str) -> str:
    return config["task_settings"][task]["tgt"]


def langs(config: dict, task: str) -> list[str]:
    return [src(config, task), tgt(config, task)]


def task_levels(config: dict, task: str) -> list[str]:
    """The levels that have a model: both for the workflow's own tasks, those configured for external ones."""
    return [lvl for lvl in LEVELS if not is_external(config, task) or lvl in config["task_settings"][task]["models"]]


def task_k(config: dict, task: str) -> int:
    """The document-level model's window size: the task's models.k, else the workflow's k."""
    return config["task_settings"][task]["models"]["k"] if is_external(config, task) else config["k"]


def context_sentences(config: dict, task: str) -> int:
    """The sentences of context on each side of a sentence in the task's windows: k - 1."""
    return task_k(config, task) - 1


def configured_tasks(config: dict) -> list[str]:
    """The tasks the config runs (config tasks)."""
    return list(config["tasks"])


def task_names(config: dict) -> list[str]:
    """Every task the config describes (task_settings), configured or not (the task wildcard)."""
    return list(config["task_settings"])


def task_separator(config: dict, task: str) -> str:
    return config["task_settings"][task]["models"]["separator"] if is_external(config, task) else SEP


def model_backend(config: dict, task: str) -> str:
    """fairseq, or transformers for a task whose models: are Hugging Face model folders (docnmt.decode.backends)."""
    return config["task_settings"][task]["models"]["backend"] if is_external(config, task) else DEFAULT_BACKEND


def engine_args(config: dict, task: str) -> dict:
    """The task's load options (:func:`docnmt.decode.load_options.models_load_options`: vLLM's ``engine_args``, a served
    model's ``endpoint`` less its prices; empty for the workflow's own models)."""
    return models_load_options(config["task_settings"][task]["models"]) if is_external(config, task) else {}


def prices(config: dict, task: str) -> dict | None:
    """A task's prices per million tokens, where its backend's cost columns have a price (a served model's
    ``models.endpoint.prices``: input, cached_input, output), or None."""
    if not is_external(config, task):
        return None
    models = config["task_settings"][task]["models"]
    described = backend(models["backend"])
    if described.cost is None or described.cost.price is None:
        return None
    return (models.get(described.options_key) or {}).get("prices")


def language_codes(config: dict, task: str) -> list[str]:
    """--src-lang/--tgt-lang with a transformers task's language codes (models.language_codes), else []; for a
    backend whose prompt names the languages (a causal LM's), always (the codes, else the task's src and tgt),
    with its --template where models.template names one."""
    models = config["task_settings"][task]["models"] if is_external(config, task) else {}
    codes = models.get("language_codes")
    if models and backend(models["backend"]).prompt_template:
        codes = codes or {"src": src(config, task), "tgt": tgt(config, task)}
        return ["--src-lang", codes["src"], "--tgt-lang", codes["tgt"]] + \
            (["--template", models["template"]] if models.get("template") else [])
    return ["--src-lang", codes["src"], "--tgt-lang", codes["tgt"]] if codes else []


def corpus_setting(config: dict, task: str, key: str):
    """A setting of the task's corpus, else its corpus type's default (CORPUS_DEFAULTS), else None."""
    corpus = config["task_settings"][task]["corpus"]
    return corpus.get(key, CORPUS_DEFAULTS.get(corpus["type"], {}).get(key))


def evalsets(config: dict, task: str, ctxpro_sets_too: bool = True) -> list[str]:
    """The task's evaluation sets: test, ContraPro where configured, and (unless ``ctxpro_sets_too`` is false) its
    ctxpro sets by their evaluation-set names (``ctxpro-formality-test``)."""
    names = ["test"] + (["contrapro"] if config["task_settings"][task]["contrapro"] else [])
    return names + (ctxpro_evalsets(config, task) if ctxpro_sets_too else [])


# ---- ctxpro's sets -----------------------------------------------------------------------
def ctxpro_sets(config: dict, task: str) -> list[str]:
    """The ctxpro sets a task is evaluated on, by name (task_settings.TASK.ctxpro)."""
    return list(config["task_settings"][task].get("ctxpro", []))


def ctxpro_evalsets(config: dict, task: str) -> list[str]:
    """The evaluation-set names of a task's ctxpro sets (``ctxpro-formality-test``)."""
    return [ctxpro.evalset_name(n) for n in ctxpro_sets(config, task)]


def ctxpro_registry(config: dict) -> dict:
    """Every ctxpro set the config can name (docnmt.corpora.ctxpro.registry): the package's, read from
    ctxpro.local where set, and ctxpro.sets."""
    settings = config["ctxpro"]
    return ctxpro.registry(settings["sets"], settings["local"])


def ctxpro_set(config: dict, task: str, evalset: str) -> "ctxpro.SetSpec":
    """The ctxpro set behind one of the task's evaluation-set names."""
    for name in ctxpro_sets(config, task):
        if ctxpro.evalset_name(name) == evalset:
            return ctxpro.lookup(name, ctxpro_registry(config))
    raise ValueError(f"task {task} has no ctxpro set {evalset}")


def is_ctxpro(evalset: str) -> bool:
    return evalset.startswith(layout.CTXPRO_PREFIX)


def all_evalsets(config: dict) -> list[str]:
    """Every evaluation-set name of every task the config describes (the evalset wildcard)."""
    return sorted({e for task in config["task_settings"] for e in evalsets(config, task)} | set(EVALSETS))


def all_splits(config: dict) -> list[str]:
    """Every split a task's files are named by (the split wildcard): the corpus splits, ContraPro and the ctxpro
    sets."""
    return SPLITS + EXTRA_SPLITS + sorted({e for e in all_evalsets(config) if is_ctxpro(e)})


def has_subsets(config: dict, task: str, evalset: str) -> bool:
    """Does the task's corpus recipe write a subsets file for this evaluation set (SUBSET_SPLITS)?"""
    return evalset in SUBSET_SPLITS.get(config["task_settings"][task]["corpus"]["type"], [])


def pronoun_min_examples(config: dict, task: str) -> int:
    return config["task_settings"][task].get("pronoun_min_examples", config["scoring"]["pronoun_min_examples"])


def runtime(config: dict, task: str, demo: int, other: int) -> int:
    """A job's runtime in minutes: ``demo`` for a task with the demo's model preset, ``other`` otherwise."""
    return demo if config["task_settings"][task]["model"] == "demo" else other


# ---- a task's models, data and codes: the workflow's or the config's -------------------
def bpe_codes(config: dict, task: str) -> str:
    if is_external(config, task):
        return config["task_settings"][task]["models"]["bpe_codes"]
    return layout.bpe_codes(task)


def external_codes(config: dict, task: str) -> list[str]:
    """An external task's BPE codes as a list of input files: empty where its models use none."""
    codes = config["task_settings"][task]["models"]["bpe_codes"]
    return [] if codes == "none" else [codes]


def binarized(config: dict, task: str, level: str) -> str:
    """fairseq-binarized data of one level (a directory with manifest.json); an external model's data folder."""
    if is_external(config, task):
        return config["task_settings"][task]["models"][level]["data"]
    return layout.binarized(task, level)


def model_file(config: dict, task: str, level: str) -> str:
    if is_external(config, task):
        files = config["task_settings"][task]["models"][level]
        return files["checkpoint"] if "checkpoint" in files else files["model"]  # a served model's name
    return layout.model_file(task, level)

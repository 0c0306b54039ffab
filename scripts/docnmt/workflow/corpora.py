"""The inputs and arguments of the corpus rules (``rules/corpora.smk``), from the validated config: where a
source is downloaded and extracted, each real corpus type's recipe (its downloads and the arguments of
``docnmt.corpora.parsers``), the demo's and ContraPro's inputs, and the statistics table's inputs."""

from __future__ import annotations

import json
import os

from docnmt import layout
from docnmt.config import ConfigError
from docnmt.corpora.sources import Source, SourceError, source_from_config

from .tasks import (SPLITS, corpus_setting, ctxpro_registry, ctxpro_set, ctxpro_sets, is_external, langs, src,
                    tasks_of_type, tgt)


# ---- downloads -------------------------------------------------------------------------
#: The download sources each real corpus type's recipe reads (ContraPro's own: CONTRAPRO_SOURCE).
CORPUS_SOURCES = {
    "news": ("news-commentary-v14", "wmt15-test", "wmt18-test"),
    "ted": ("iwslt17-trnmted", "iwslt17-mted-test"),
    "os": ("opensubtitles2018-de-en", "contrapro"),
}
CONTRAPRO_SOURCE = "contrapro"


def source(config: dict, name: str) -> dict:
    """sources.NAME of the config; ConfigError where a recipe needs a source the config lacks."""
    if name not in config["sources"]:
        raise ConfigError(f"invalid config: config key 'sources.{name}' is missing (a corpus recipe needs it)")
    return config["sources"][name]


def declared_source(config: dict, name: str) -> Source:
    """sources.NAME as a declaration (docnmt.corpora.sources): its locations in order, members, local file."""
    try:
        return source_from_config(name, source(config, name))
    except SourceError as err:
        raise ConfigError(f"invalid config: {err}") from None


def task_sources(config: dict, task: str) -> list[str]:
    """The download sources a task reads: its corpus recipe's, and ContraPro's where it is scored on ContraPro."""
    settings = config["task_settings"][task]
    names = list(CORPUS_SOURCES.get(settings["corpus"]["type"], ()))
    if settings.get("contrapro") and settings["corpus"]["type"] != "demo" and CONTRAPRO_SOURCE not in names:
        names.append(CONTRAPRO_SOURCE)
    return names


def download_path(config: dict, name: str) -> str:
    """downloads/{source}/{its file name} (sources.NAME.filename, else its URL's)."""
    return layout.download_file(name, declared_source(config, name).filename)


def download_spec(config: dict, name: str) -> str:
    """The download CLI's --spec: the source's declaration as JSON."""
    return declared_source(config, name).to_json()


def extract_inputs(config: dict, name: str) -> dict[str, str]:
    """The extract rule's inputs: the downloaded archive and where it came from, or the user's own folder of the
    archive's layout (``local``; a file of one's own is linked by the download rule, which checks it)."""
    declared = declared_source(config, name)
    if declared.local is not None and os.path.isdir(declared.local):
        return {"archive": declared.local}
    return {"archive": layout.download_file(name, declared.filename),
            "origin": layout.download_origin(name, declared.filename)}


def extract_args(config: dict, name: str) -> list[str]:
    """How the extract rule finds the members (a list; the rule quotes each): the origin file a download wrote, or,
    for a folder of the user's own, the source's member specs."""
    inputs = extract_inputs(config, name)
    if "origin" in inputs:
        return ["--origin", inputs["origin"]]
    return ["--specs", json.dumps(declared_source(config, name).specs_for(None), sort_keys=True)]


def member_path(config: dict, name: str, role: str) -> str:
    """A member of an extracted archive, by its role in sources.{name}.members."""
    members = source(config, name).get("members", {})
    if role not in members:
        raise ConfigError(f"invalid config: config key 'sources.{name}.members.{role}' is missing")
    return f"{layout.extracted_dir(name)}/{declared_source(config, name).destinations()[role]}"


def mirror_args(config: dict) -> list[str]:
    return ["--mirror", config["mirror"]] if config["mirror"] else []


# ---- the common document format ----------------------------------------------------------
def corpus_splits(config: dict, task: str) -> list[str]:
    """The splits a task's corpus recipe writes (OS also writes the ContraPro documents)."""
    return SPLITS + (["contrapro_docs"] if config["task_settings"][task]["corpus"]["type"] == "os" else [])


def corpus_outputs(config: dict, task: str) -> list[str]:
    """Every file a real task's corpus recipe writes, split by split."""
    return [layout.corpus_file(task, split, ext) for split in corpus_splits(config, task)
            for ext in (*langs(config, task), "docids")]


def corpus_split(config: dict, task: str, split: str) -> dict[str, str]:
    """The three line-aligned files of one split, by role."""
    return {
        "src": layout.corpus_file(task, split, src(config, task)),
        "tgt": layout.corpus_file(task, split, tgt(config, task)),
        "docids": layout.corpus_file(task, split, "docids"),
    }


def corpus_recipe(config: dict, task: str) -> tuple[list[str], list]:
    """Inputs and parser arguments (a list, each quoted by the rule) of a real corpus (docnmt.corpora.parsers), by
    corpus type."""
    corpus = config["task_settings"][task]["corpus"]
    kind = corpus["type"]

    def download(name):
        return download_path(config, name)

    def member(name, role):
        return member_path(config, name, role)

    if kind == "news":
        inputs = [download("news-commentary-v14")] + [layout.extracted_dir(name) for name in CORPUS_SOURCES["news"][1:]]
        args = [
            "news", "--nc", download("news-commentary-v14"),
            "--valid-src", member("wmt15-test", "src"), "--valid-ref", member("wmt15-test", "ref"),
            "--test-src", member("wmt18-test", "src"), "--test-ref", member("wmt18-test", "ref"),
        ]
    elif kind == "ted":
        train, test = CORPUS_SOURCES["ted"]
        inputs = [layout.extracted_dir(train), layout.extracted_dir(test)]
        args = [
            "ted", "--train-src", member(train, "train_src"), "--train-tgt", member(train, "train_tgt"),
            "--valid-src", member(train, "dev2010_src"), member(train, "tst2010_src"),
            "--valid-ref", member(train, "dev2010_ref"), member(train, "tst2010_ref"),
            "--test-src", member(test, "src"), "--test-ref", member(test, "ref"),
        ]
    elif kind == "os":
        inputs = [download("opensubtitles2018-de-en"), download("contrapro")]
        args = [
            "os", "--zip", download("opensubtitles2018-de-en"), "--contrapro", download("contrapro"),
            "--valid-sentences", corpus["valid_sentences"], "--valid-docs", corpus_setting(config, task, "valid_docs"),
            "--test-sentences", corpus["test_sentences"], "--test-docs", corpus_setting(config, task, "test_docs"),
            "--contrapro-removal", corpus["contrapro_removal"], "--contrapro-context", config["k"] - 1,
        ]
    else:
        raise ValueError(f"no download recipe for corpus type {kind!r}")
    return inputs, args + ["--src", src(config, task), "--tgt", tgt(config, task)]


def demo_outputs() -> dict[str, str]:
    """The demo corpus's files, named {split}_{ext}, with wildcard {task}: every split, the test set's subsets,
    its ContraPro examples and its ctxpro set."""
    return {
        **{f"{split}_{ext}": layout.corpus_file("{task}", split, ext) for split in SPLITS for ext in ("en", "de", "docids")},
        "test_subsets": layout.corpus_file("{task}", "test", "subsets"),
        "contrapro": layout.demo_contrapro("{task}"),
        "ctxpro_json": layout.demo_ctxpro_json("{task}"),
        "ctxpro_inputs": layout.demo_ctxpro_inputs("{task}"),
    }


def demo_docs_args(config: dict, task: str) -> list:
    """--{split}-docs N for every split of the demo corpus (a list; the rule quotes each)."""
    return [arg for split in SPLITS for arg in (f"--{split}-docs", corpus_setting(config, task, f"{split}_docs"))]


def prepared_file(config: dict, task: str, split: str, ext: str) -> str:
    """A file of a user's own corpus in the common format (corpus.dir)."""
    return f"{config['task_settings'][task]['corpus']['dir']}/{split}.{ext}"


def testset_file(config: dict, task: str) -> str:
    """The WMT test set a prepared task's test split is read from (corpus.test.file)."""
    return config["task_settings"][task]["corpus"]["test"]["file"]


def testset_args(config: dict, task: str) -> list[str]:
    """docnmt.corpora.testsets convert's options for a task's test set (a list; the rule quotes each): its format,
    the task's languages (checked against the file's), the reference where one is chosen."""
    test = config["task_settings"][task]["corpus"]["test"]
    reference = ["--reference", test["reference"]] if test["reference"] is not None else []
    unit = ["--unit", test["unit"]] if test.get("unit") is not None else []
    return ["convert", "--format", test["format"], "--src", src(config, task), "--tgt", tgt(config, task), *reference,
            *unit]


def testset_output_option(config: dict, task: str, ext: str) -> str:
    """The convert option that writes one file of the test split: --src-out, --tgt-out or --docids-out."""
    roles = {src(config, task): "src", tgt(config, task): "tgt", "docids": "docids"}
    if ext not in roles:
        raise ValueError(f"task {task}: test.{ext} is none of the test split's files ({', '.join(roles)})")
    return f"--{roles[ext]}-out"


def contrapro_sources(config: dict, task: str) -> dict[str, str]:
    """contrapro.json and the documents it points into (common format), for one task."""
    if config["task_settings"][task]["corpus"]["type"] == "demo":
        return {"json": layout.demo_contrapro(task), **corpus_split(config, task, "test")}
    os_tasks = tasks_of_type(config, "os")
    if not os_tasks:
        raise ConfigError(
            f"invalid config: task_settings.{task}.contrapro needs an OpenSubtitles task (corpus type os) for its documents"
        )
    return {"json": download_path(config, CONTRAPRO_SOURCE), **corpus_split(config, os_tasks[0], "contrapro_docs")}


def contrapro_outputs() -> dict[str, str]:
    """The ContraPro evaluation set's files, with wildcard {task}: its documents, examples and report."""
    return {
        **{ext: layout.corpus_file("{task}", "contrapro", ext) for ext in ("en", "de", "docids")},
        "examples": layout.contrapro_examples("{task}"),
        "report": layout.contrapro_report("{task}"),
    }


def statistics_inputs(config: dict) -> dict[str, str]:
    """TASK:SPLIT -> its statistics file: the inputs of docnmt.corpora.stats, for the configured tasks."""
    items = {}
    for task in config["tasks"]:
        for split in (["test"] if is_external(config, task) else SPLITS):
            items[f"{task}:{split}"] = layout.corpus_stats(task, split)
        if config["task_settings"][task]["contrapro"]:
            items[f"{task}:ContraPro"] = layout.contrapro_report(task)
    return items


# ---- ctxpro's sets ---------------------------------------------------------------------
def ctxpro_downloaded(config: dict, spec) -> bool:
    """Whether a set's files are downloaded (ctxpro's own sets without ctxpro.local), not read where they are."""
    return spec.name not in config["ctxpro"]["sets"] and config["ctxpro"]["local"] is None


def ctxpro_downloads(config: dict) -> dict[str, tuple[str, str | None]]:
    """{file name: (URL, md5 or None)} of every downloaded file of the configured tasks' ctxpro sets: each set's
    JSON (its md5 checked) and inputs (checked line by line against the JSON, and recorded in the download lock)."""
    files = {}
    registry = ctxpro_registry(config)
    for task in config["tasks"]:
        for name in ctxpro_sets(config, task):
            spec = registry[name]
            if ctxpro_downloaded(config, spec):
                files[spec.file_name] = (spec.json, spec.md5)
                files[spec.inputs_name] = (spec.inputs, None)
    return files


def ctxpro_download_args(config: dict, filename: str) -> list[str]:
    """--url, --source (its name in the download lock) and --md5 (where the registry has one) of a downloaded ctxpro
    file (a list; the rule quotes each)."""
    url, md5 = ctxpro_downloads(config)[filename]
    return ["--url", url, "--source", f"ctxpro/{filename}"] + (["--md5", md5] if md5 else [])


def ctxpro_sources(config: dict, task: str, evalset: str) -> dict[str, str]:
    """A task's ctxpro set's JSON and inputs: downloaded (downloads/ctxpro/), or where ctxpro.local or ctxpro.sets
    puts them."""
    spec = ctxpro_set(config, task, evalset)
    if ctxpro_downloaded(config, spec):
        return {"json": layout.ctxpro_download(spec.file_name), "inputs": layout.ctxpro_download(spec.inputs_name)}
    return {"json": spec.json, "inputs": spec.inputs}


def ctxpro_outputs(config: dict, task: str) -> dict[str, str]:
    """A task's ctxpro set's files, with wildcard {evalset}: its documents (the task's languages), examples and
    report."""
    return {
        "src": layout.ctxpro_file(task, "{evalset}", src(config, task)),
        "tgt": layout.ctxpro_file(task, "{evalset}", tgt(config, task)),
        "docids": layout.ctxpro_file(task, "{evalset}", "docids"),
        "examples": layout.ctxpro_examples(task, "{evalset}"),
        "report": layout.ctxpro_report(task, "{evalset}"),
    }


def ctxpro_set_args(config: dict, task: str, evalset: str) -> list:
    """docnmt.corpora.ctxpro's options for one of a task's sets but its files (a list; the rule quotes each)."""
    spec = ctxpro_set(config, task, evalset)
    bounds = config["ctxpro"]
    return ["--name", spec.name, "--md5", spec.md5 or "none", "--src-lang", src(config, task),
            "--tgt-lang", tgt(config, task), "--max-sentences", bounds["max_sentences"],
            "--max-words", bounds["max_words"], "--prefix", evalset]


def ctxpro_tasks(config: dict) -> list[str]:
    """The tasks the config describes that name ctxpro sets (each gets its ctxpro_set rule)."""
    return [t for t in config["task_settings"] if ctxpro_sets(config, t)]


# ---- the rules' settings ------------------------------------------------------------------
def demo_seed(config: dict, task: str) -> int:
    """The demo corpus's seed (task_settings.TASK.corpus.seed)."""
    return config["task_settings"][task]["corpus"]["seed"]


def download_settings(config: dict) -> dict:
    """The params every download rule shares: the lock file that serializes downloads, and the retries of a
    transient failure."""
    return {"lock": config["download_lock"], "retries": config["download_retries"]}


def source_names(config: dict) -> list[str]:
    """The configured download sources (the source wildcard)."""
    return list(config["sources"])

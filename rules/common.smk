# Config validation, wildcard constraints and every path of the workflow.
# Other rule files call these helpers and build no paths themselves.
import os
import re
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError
from snakemake.logging import logger

# Snakemake's own process reads the config and derives paths with this checkout's package, also where
# Snakemake runs from an environment without it (--sdm conda). The rules run the package installed in
# their interpreter (.venv by `make setup`, or each conda env), checked below.
SCRIPTS = os.path.join(workflow.basedir, "scripts")
sys.path.insert(0, SCRIPTS)

from docnmt import layout  # noqa: E402
from docnmt.config import ConfigError, validate  # noqa: E402
from docnmt.layout import (  # noqa: E402  the workflow's paths of a task's files (one definition, docnmt.layout)
    checkpoint_dir, contrapro_examples, contrapro_report, corpus_file, corpus_stats, cxmi_sentences, decode_file,
    joined_dictionary, model_check, processed_file, score_file, window_file,
)
from docnmt.environment import install_problems, missing_modules, setup_hint, shell_prefix  # noqa: E402


def _conda_deployment():
    from snakemake_interface_executor_plugins.settings import DeploymentMethod

    return DeploymentMethod.CONDA in workflow.deployment_settings.deployment_method


# Rule commands run `python -m docnmt.<module>` after this prefix (quoted paths,
# strict mode). Without --sdm conda, `python` is the interpreter that runs
# Snakemake, which must have the project's packages and this package installed
# (editable, from this checkout); with --sdm conda, each rule's env provides
# them: its post-deploy script installs the package from DOCNMT_CHECKOUT.
if _conda_deployment():
    os.environ.update(DOCNMT_CHECKOUT=workflow.basedir)  # for the envs' post-deploy scripts
else:
    if missing_modules():
        raise WorkflowError(setup_hint(missing_modules()))
    _install_error, _install_warning = install_problems(workflow.basedir)
    if _install_error:
        raise WorkflowError(_install_error)
    if _install_warning:
        logger.warning(f"warning: {_install_warning}")
shell.prefix(shell_prefix(None if _conda_deployment() else sys.executable).replace("{", "{{").replace("}", "}}"))

try:
    _validated = validate(config, Path(workflow.basedir) / "schemas" / "config.schema.yaml")
except ConfigError as err:
    raise WorkflowError(f"invalid config: {err}") from None
config.clear()
config.update(_validated)

SPLITS = ["train", "valid", "test"]
#: Evaluation-only sets that go through tokenization and BPE but are not binarized.
EXTRA_SPLITS = ["contrapro"]
LEVELS = ["sentence", "document"]
TASKS = list(config["tasks"])
SETTINGS = config["task_settings"]


def _alternatives(names):
    """A wildcard regex matching exactly these names (or nothing, if empty)."""
    return "|".join(sorted(re.escape(str(n)) for n in names)) if names else "(?!x)x"


#: Defaults of corpus settings that depend on the corpus type.
CORPUS_DEFAULTS = {
    "demo": {"train_docs": 1200, "valid_docs": 40, "test_docs": 100},
    "os": {"valid_docs": 5, "test_docs": 5},
}


# ---- models trained elsewhere (task_settings.NAME.models) ---------------------
def is_external(task):
    """A task whose models come from elsewhere: no corpus preparation, BPE learning or training."""
    return "models" in SETTINGS[task]


def external_tasks():
    return [t for t in SETTINGS if is_external(t)]


def own_tasks():
    return [t for t in SETTINGS if not is_external(t)]


def task_levels(task):
    """The levels that have a model: both for the workflow's own tasks, those configured for external ones."""
    return [lvl for lvl in LEVELS if not is_external(task) or lvl in SETTINGS[task]["models"]]


def task_k(task):
    """The document-level model's window size: the task's models.k, else the workflow's k."""
    return SETTINGS[task]["models"]["k"] if is_external(task) else config["k"]


def task_separator(task):
    return SETTINGS[task]["models"]["separator"] if is_external(task) else "<sep>"


def strategy_levels(strategy, task=None):
    """The models a strategy needs (docnmt.decode.strategies.models_needed). Without a task, doc-trans needs
    only the document model: it falls back to sequential mode where the task has no sentence-level model
    (doc_trans_mode)."""
    return models_needed(strategy, "sequential" if task is None else doc_trans_mode(task))


def skipped_strategies(task):
    """{strategy: why} for the strategies whose model the task lacks (the tables say so)."""
    missing = {s: sorted(strategy_levels(s) - set(task_levels(task))) for s in config["strategies"]}
    return {s: f"no {'-level or '.join(levels)}-level model in task_settings.{task}.models"
            for s, levels in missing.items() if levels}


def task_strategies(task, evalset):
    """The strategies decoded on one evaluation set of a task."""
    skipped = skipped_strategies(task)
    return [s for s in evalset_strategies(evalset) if s not in skipped]


def task_systems(task, evalset):
    """What is decoded and scored on one evaluation set of a task: its strategies, then (on the test set) each
    one of mbr.strategies with MBR selection (docnmt.decode.mbr.system_name: doc-trans+mbr)."""
    strategies = task_strategies(task, evalset)
    if evalset != "test":
        return strategies
    return strategies + [mbr.system_name(s) for s in mbr_strategies() if s in strategies]


def curve_systems(task):
    """The MBR decodes of the report's candidate-count plot on the test set (mbr.curve): its strategy with each
    count of mbr.curve.counts (doc-trans+mbr-4), where the task decodes that strategy with MBR."""
    strategy = config["mbr"]["curve"]["strategy"]
    if strategy not in mbr_strategies() or strategy not in task_strategies(task, "test"):
        return []
    return [mbr.system_name(strategy, n) for n in curve_counts()]


def model_backend(task):
    """fairseq, or transformers for a task whose models: are Hugging Face model folders (docnmt.decode.backends)."""
    return SETTINGS[task]["models"]["backend"] if is_external(task) else "fairseq"


def language_codes(task):
    """--src-lang/--tgt-lang with a transformers task's language codes (models.language_codes), else []."""
    codes = SETTINGS[task]["models"].get("language_codes") if is_external(task) else None
    return ["--src-lang", codes["src"], "--tgt-lang", codes["tgt"]] if codes else []


def model_args(model_key="model", data_key="data"):
    """The model options of a docnmt CLI, as a function of the wildcards and inputs returning a list (the rule quotes
    each): --backend, --model and, for a fairseq model, --data; a transformers model's language codes."""

    def args(w, input):
        out = ["--backend", model_backend(w.task), "--model", input[model_key]]
        if data_key in input.keys():
            out += ["--data", input[data_key]]
        return out + language_codes(w.task)

    return args


def model_inputs(task, level, model_key="model", data_key="data"):
    """{model_key: the model, data_key: its data folder}; a transformers model has no data folder."""
    files = {model_key: model_file(task, level)}
    if model_backend(task) == "fairseq":
        files[data_key] = binarized(task, level)
    return files


def corpus_setting(task, key):
    corpus = SETTINGS[task]["corpus"]
    return corpus.get(key, CORPUS_DEFAULTS.get(corpus["type"], {}).get(key))


def tasks_of_type(kind):
    return [t for t in SETTINGS if SETTINGS[t]["corpus"]["type"] == kind]


for _task in tasks_of_type("demo"):
    if (SETTINGS[_task]["src"], SETTINGS[_task]["tgt"]) != ("en", "de"):
        raise WorkflowError(f"invalid config: config key 'task_settings.{_task}': the demo corpus is en->de")

wildcard_constraints:
    task=_alternatives(SETTINGS),
    split=_alternatives(SPLITS + EXTRA_SPLITS),
    source=_alternatives(config["sources"]),
    level=_alternatives(LEVELS),
    lang="[a-z]{2,3}",
    stage="tok|bpe",
    shard=r"\d+-of-\d+",
    evalset="test|contrapro",


scattergather:
    shard=config["preprocess"]["shards"],


def src(task):
    return SETTINGS[task]["src"]


def tgt(task):
    return SETTINGS[task]["tgt"]


def langs(task):
    return [src(task), tgt(task)]


def contrapro_tasks():
    return [t for t in SETTINGS if SETTINGS[t]["contrapro"]]


for _task in contrapro_tasks():
    if (SETTINGS[_task]["src"], SETTINGS[_task]["tgt"]) != ("en", "de"):
        raise WorkflowError(f"invalid config: config key 'task_settings.{_task}.contrapro': ContraPro is en->de only")


# ---- paths: downloads -----------------------------------------------------------
def source(name):
    if name not in config["sources"]:
        raise WorkflowError(f"invalid config: config key 'sources.{name}' is missing (a corpus recipe needs it)")
    return config["sources"][name]


def download_path(name):
    """downloads/{source}/{file name of its URL}."""
    return f"downloads/{name}/{os.path.basename(source(name)['url'].split('?')[0])}"


def extracted_dir(name):
    return f"downloads/{name}/extracted"


def member_path(name, role):
    """A member of an extracted archive, by its role in sources.{name}.members."""
    members = source(name).get("members", {})
    if role not in members:
        raise WorkflowError(f"invalid config: config key 'sources.{name}.members.{role}' is missing")
    return f"{extracted_dir(name)}/{members[role]}"


# ---- paths: the common document format --------------------------------------
def corpus_splits(task):
    """The splits a task's corpus recipe writes (OS also writes the ContraPro documents)."""
    return SPLITS + (["contrapro_docs"] if SETTINGS[task]["corpus"]["type"] == "os" else [])


def corpus_recipe(task):
    """Inputs and parser arguments (a list, each quoted by the rule) of a real corpus (docnmt.corpora.parsers), by corpus type."""
    kind = SETTINGS[task]["corpus"]["type"]
    langs_args = ["--src", src(task), "--tgt", tgt(task)]
    if kind == "news":
        inputs = [download_path("news-commentary-v14"), extracted_dir("wmt15-test"), extracted_dir("wmt18-test")]
        args = [
            "news", "--nc", download_path("news-commentary-v14"),
            "--valid-src", member_path("wmt15-test", "src"), "--valid-ref", member_path("wmt15-test", "ref"),
            "--test-src", member_path("wmt18-test", "src"), "--test-ref", member_path("wmt18-test", "ref"),
        ]
    elif kind == "ted":
        train, test_src, test_ref = "iwslt17-trnmted", "iwslt17-mted-test-en-it", "iwslt17-mted-test-it-en"
        inputs = [extracted_dir(train), extracted_dir(test_src), extracted_dir(test_ref)]
        args = [
            "ted", "--train-src", member_path(train, "train_src"), "--train-tgt", member_path(train, "train_tgt"),
            "--valid-src", member_path(train, "dev2010_src"), member_path(train, "tst2010_src"),
            "--valid-ref", member_path(train, "dev2010_ref"), member_path(train, "tst2010_ref"),
            "--test-src", member_path(test_src, "src"), "--test-ref", member_path(test_ref, "ref"),
        ]
    elif kind == "os":
        inputs = [download_path("opensubtitles2018-de-en"), download_path("contrapro")]
        corpus = SETTINGS[task]["corpus"]
        args = [
            "os", "--zip", download_path("opensubtitles2018-de-en"), "--contrapro", download_path("contrapro"),
            "--valid-sentences", corpus["valid_sentences"], "--valid-docs", corpus_setting(task, "valid_docs"),
            "--test-sentences", corpus["test_sentences"], "--test-docs", corpus_setting(task, "test_docs"),
            "--contrapro-removal", corpus["contrapro_removal"], "--contrapro-context", config["k"] - 1,
        ]
    else:
        raise WorkflowError(f"no download recipe for corpus type {kind!r}")
    return inputs, args + langs_args


REAL_CORPUS_TYPES = ("news", "ted", "os")


def real_tasks():
    return [t for t in SETTINGS if SETTINGS[t]["corpus"]["type"] in REAL_CORPUS_TYPES]


def contrapro_sources(task):
    """contrapro.json and the documents it points into (common format), for one task."""
    if SETTINGS[task]["corpus"]["type"] == "demo":
        return {"json": f"data/{task}/corpus/contrapro.json", **corpus_split(task, "test")}
    os_tasks = tasks_of_type("os")
    if not os_tasks:
        raise WorkflowError(
            f"invalid config: task_settings.{task}.contrapro needs an OpenSubtitles task (corpus type os) for its documents"
        )
    return {"json": download_path("contrapro"), **corpus_split(os_tasks[0], "contrapro_docs")}


def corpus_split(task, split):
    """The three line-aligned files of one split, by role."""
    return {
        "src": corpus_file(task, split, src(task)),
        "tgt": corpus_file(task, split, tgt(task)),
        "docids": corpus_file(task, split, "docids"),
    }


# ---- paths: preprocessing -----------------------------------------------------
def shard_pattern(ext):
    """Scatter pattern of one split and language; ext: raw, tok or bpe."""
    return f"data/{{{{task}}}}/shards/{{{{split}}}}.{{{{lang}}}}.{{scatteritem}}.{ext}"


def split_shards(split):
    """The shards of a split's tokenization and BPE: the training data is scattered into preprocess.shards (Snakemake's
    scatter items, "1-of-4" ...); an evaluation split (valid, test, ContraPro: thousands of lines, seconds of work)
    is one shard, "1-of-1"."""
    count = config["preprocess"]["shards"] if split == "train" else 1
    return [f"{i}-of-{count}" for i in range(1, count + 1)]


def shard_text(w):
    """What one shard is tokenized from: its piece of the split (rule shard), or the whole split where it is one."""
    if split_shards(w.split) == ["1-of-1"]:
        return corpus_file(w.task, w.split, w.lang)
    return f"data/{w.task}/shards/{w.split}.{w.lang}.{w.shard}.raw"


def split_shard_files(w):
    """The tokenized (stage tok) or BPE-encoded (bpe) shards of one split and language, in order."""
    return [f"data/{w.task}/shards/{w.split}.{w.lang}.{shard}.{w.stage}" for shard in split_shards(w.split)]


def bpe_codes(task):
    if is_external(task):
        return SETTINGS[task]["models"]["bpe_codes"]
    return layout.bpe_codes(task)


def level_text(task, level, split, lang):
    """Text a level's model is trained on: sentences (sentence) or windows (document)."""
    if level == "sentence":
        return processed_file(task, "bpe", split, lang)
    return window_file(task, split, lang)


def binarized(task, level):
    """fairseq-binarized data of one level (a directory with manifest.json); an external model's data folder."""
    if is_external(task):
        return SETTINGS[task]["models"][level]["data"]
    return layout.binarized(task, level)


# ---- training -----------------------------------------------------------------
from docnmt.train.cli import options_to_args  # noqa: E402
from docnmt.decode.strategies import STRATEGIES, models_needed  # noqa: E402
from docnmt.decode import mbr  # noqa: E402


def model_file(task, level):
    if is_external(task):
        return SETTINGS[task]["models"][level]["checkpoint"]
    return layout.model_file(task, level)


def preset_args(task):
    """The task's architecture/optimizer preset as fairseq-train arguments (a list; the rule quotes each)."""
    return [str(a) for a in options_to_args(config["training"]["presets"][SETTINGS[task]["model"]])]


def training_runtime(task):
    return config["training"]["runtime_minutes"].get(SETTINGS[task]["model"], 2880)


# ---- decoding -----------------------------------------------------------------
#: Evaluation sets: the test split of every task, ContraPro where configured.
EVALSETS = ["test", "contrapro"]


def strategy_rule_name(strategy):
    """Rule names are identifiers: decode_2_pass for 2-pass, decode_doc_trans_beam for doc-trans-beam."""
    return STRATEGIES[strategy].rule


def strategy_evalsets(strategy):
    """full-segment does not apply to ContraPro: its sentences are not adjacent (the paper's '-')."""
    return EVALSETS if STRATEGIES[strategy].contrapro else ["test"]


# MBR selection (docnmt.decode.mbr): a strategy's decode rule also makes its MBR systems, whose names extend the
# strategy's (doc-trans+mbr, doc-trans+mbr-4): one rule per strategy, a {system} wildcard in its outputs.
def mbr_strategies():
    """The strategies that also run with MBR selection: those of mbr.strategies that are configured strategies."""
    return [s for s in config["mbr"]["strategies"] if s in config["strategies"]]


def curve_counts():
    """The candidate counts of the report's MBR plot besides mbr.count, in order."""
    return sorted(set(config["mbr"]["curve"]["counts"]) - {config["mbr"]["count"]})


def system_pattern(strategy):
    """The {system} wildcard of a strategy's decode rule: the strategy, or one of its MBR systems."""
    import re

    return f"{re.escape(strategy)}({re.escape(mbr.SUFFIX)}(-[0-9]+)?)?"


def mbr_options(system):
    """docnmt.decode.cli's MBR options for a system (none for a strategy alone; a list, the rule quotes each)."""
    _, with_mbr, count = mbr.parse_system(system)
    if not with_mbr:
        return []
    settings = config["mbr"]
    args = ["--mbr", "--mbr-candidates", settings["candidates"], "--mbr-count", str(count or settings["count"]),
            "--mbr-utility", settings["utility"]]
    if settings["candidates"] == "sampling":
        args += ["--mbr-epsilon", str(settings["epsilon"]), "--mbr-seed", str(settings["seed"])]
    return args


def decode_output(ext):
    return f"results/{{task}}/decode/{{evalset}}/{{system}}.{ext}"


def decode_inputs(strategy):
    """Input function of a strategy's decode rule, for the strategy alone or with MBR selection ({system})."""

    def inputs(w):
        with_mbr = mbr.parse_system(w.system)[1]
        level = "sentence" if strategy == "sentence-level" else "document"
        files = {
            **model_inputs(w.task, level),
            "src": processed_file(w.task, "bpe", w.evalset, src(w.task)),
            "docids": corpus_file(w.task, w.evalset, "docids"),
        }
        if STRATEGIES[strategy].reference:
            files["ref"] = processed_file(w.task, "bpe", w.evalset, tgt(w.task))
        if is_external(w.task):
            files["checks"] = [model_check(w.task, lvl) for lvl in sorted(strategy_levels(strategy, w.task))]
        if strategy in first_pass_strategies(w.task):
            files["first_pass"] = decode_file(w.task, w.evalset, "sentence-level", "bpe")
            files["first_pass_sidecar"] = decode_file(w.task, w.evalset, "sentence-level", "json")
        if strategy == "doc-trans" and round_one_reused(w.task) and not with_mbr:
            files["round_one"] = decode_file(w.task, w.evalset, "2-pass", "bpe")
            files["round_one_sidecar"] = decode_file(w.task, w.evalset, "2-pass", "json")
        return files

    return inputs


#: The precision of every decode and forced scoring (decode.dtype; float32 unless the config asks otherwise).
DTYPE = config["decode"]["dtype"]


def doc_trans_setting(key):
    """doc_trans.mode or doc_trans.max_rounds (defaults filled in by the schema)."""
    return config["doc_trans"][key]


def doc_trans_mode(task):
    """doc_trans.mode, except sequential for a task without a sentence-level model (parallel needs its first pass)."""
    mode = doc_trans_setting("mode")
    return "sequential" if mode == "parallel" and "sentence" not in task_levels(task) else mode


def first_pass_strategies(task):
    """Strategies that start from the sentence-level hypotheses: 2-pass, and doc-trans in parallel mode."""
    return [name for name, info in STRATEGIES.items() if info.needs_first_pass(doc_trans_mode(task))]


def round_one_reused(task):
    """Parallel doc-trans takes 2-pass's output over as its round 1 where 2-pass is decoded anyway."""
    return doc_trans_mode(task) == "parallel" and "2-pass" in config["strategies"]


def decode_options(strategy):
    """Strategy-specific CLI options of docnmt.decode.cli (input paths, doc-trans's mode), as a function of the
    wildcards and inputs returning a list: the rule quotes each."""

    def options(w, input):
        args = mbr_options(w.system)
        if strategy == "doc-trans":
            args += ["--doc-trans-mode", doc_trans_mode(w.task)]
            if doc_trans_mode(w.task) == "parallel" and doc_trans_setting("max_rounds") is not None:
                args += ["--max-rounds", str(int(doc_trans_setting("max_rounds")))]
        if STRATEGIES[strategy].reference:
            args += ["--ref", input.ref]
        if strategy in first_pass_strategies(w.task):
            args += ["--first-pass", input.first_pass, "--first-pass-sidecar", input.first_pass_sidecar]
            if "round_one" in input.keys():
                args += ["--round-one", input.round_one, "--round-one-sidecar", input.round_one_sidecar]
        return args

    return options


def evalsets(task):
    return ["test"] + (["contrapro"] if SETTINGS[task]["contrapro"] else [])


def decode_targets(task):
    decodes = [(evalset, system) for evalset in evalsets(task) for system in task_systems(task, evalset)]
    return [decode_file(task, evalset, system, "txt") for evalset, system in decodes + [
        ("test", system) for system in curve_systems(task)]]


# ---- logs and benchmarks ------------------------------------------------------
def log(rule_name, pattern):
    return f"logs/{{task}}/{rule_name}/{pattern}.log"


def bench(rule_name, pattern):
    return f"benchmarks/{{task}}/{rule_name}/{pattern}.tsv"


# ---- targets ------------------------------------------------------------------
def statistics_inputs():
    """TASK:SPLIT:JSON arguments of docnmt.corpora.stats, for the selected tasks."""
    items = {}
    for task in TASKS:
        for split in (["test"] if is_external(task) else SPLITS):
            items[f"{task}:{split}"] = corpus_stats(task, split)
        if SETTINGS[task]["contrapro"]:
            items[f"{task}:ContraPro"] = contrapro_report(task)
    return items


def data_targets():
    """Everything up to the binarized data, ContraPro and the statistics table (`snakemake data`)."""
    targets = list(DATA_STATISTICS.values())
    for task in TASKS:
        if is_external(task):
            targets += [processed_file(task, "bpe", "test", lang) for lang in langs(task)]
            targets += [model_check(task, level) for level in task_levels(task)]
            continue
        targets += [binarized(task, level) for level in LEVELS]
        if SETTINGS[task]["contrapro"]:
            targets += [window_file(task, "contrapro", lang) for lang in langs(task)]
    return targets


def all_targets():
    targets = data_targets()
    for task in TASKS:
        if not is_external(task):
            targets += [model_file(task, level) for level in LEVELS]
            targets.append(f"results/{task}/plots/learning_curves.png")
        targets += decode_targets(task)
    return targets + tables_targets()


# ---- scoring and tables -------------------------------------------------------
def german_tasks():
    """Tasks with German targets: the pronoun metric (BlonDe's German extension) applies."""
    return [t for t in SETTINGS if tgt(t) == "de"]


def evalset_strategies(evalset):
    return [s for s in config["strategies"] if evalset in strategy_evalsets(s)]


#: Corpus recipes that write a per-line subsets file ({split}.subsets) for some splits:
#: the demo marks the test sentences whose pronoun has an ambiguous antecedent.
SUBSET_SPLITS = {"demo": ["test"]}


def has_subsets(task, evalset):
    return evalset in SUBSET_SPLITS.get(SETTINGS[task]["corpus"]["type"], [])


def scored_text_inputs(w):
    """Raw source and reference of an evaluation set, its detokenized hypotheses, (ContraPro) the example lines,
    and the set's subsets file where its corpus recipe writes one."""
    files = {
        "src": corpus_file(w.task, w.evalset, src(w.task)),
        "ref": corpus_file(w.task, w.evalset, tgt(w.task)),
        "systems": [decode_file(w.task, w.evalset, s, "txt") for s in task_systems(w.task, w.evalset)],
    }
    if w.evalset == "contrapro":
        files["select"] = contrapro_examples(w.task)
    if has_subsets(w.task, w.evalset):
        files["subsets"] = corpus_file(w.task, w.evalset, "subsets")
    return files


def system_args(w, input):
    """--system NAME=PATH for every hypothesis file, plus --select on ContraPro (a list; the rule quotes each)."""
    names = task_systems(w.task, w.evalset)
    args = [arg for n, p in zip(names, input.systems, strict=True) for arg in ("--system", f"{n}={p}")]
    return args + (["--select", input.select] if "select" in input.keys() else [])


def bleu_ter_inputs(w):
    """The scored texts (scored_text_inputs), the MBR plot's decodes and, on the test set, the document ids (d-BLEU)."""
    files = scored_text_inputs(w)
    if w.evalset == "test":
        files["curve"] = [decode_file(w.task, "test", s, "txt") for s in curve_systems(w.task)]
        files["docids"] = corpus_file(w.task, "test", "docids")
    return files


def bleu_ter_args(w, input):
    """system_args, the MBR plot's systems and --docids (a list; the rule quotes each)."""
    args = system_args(w, input)
    if "docids" in input.keys():
        names = curve_systems(w.task)
        args += [a for n, p in zip(names, input.curve, strict=True) for a in ("--system", f"{n}={p}")]
        args += ["--docids", input.docids]
    return args


def subsets_arg(w, input):
    """--subsets FILE where the evaluation set has one (pronoun F1 scores each subset on its own too); a list."""
    return ["--subsets", input.subsets] if "subsets" in input.keys() else []


def pronoun_min_examples(task):
    return SETTINGS[task].get("pronoun_min_examples", config["scoring"]["pronoun_min_examples"])


def level_strategies(task, level):
    """Strategies whose hypotheses the level's model scores for Table 2."""
    return [s for s in task_systems(task, "test")
            if (mbr.parse_system(s)[0] == "sentence-level") == (level == "sentence")]


def significance_baselines(w):
    """--baseline for each configured baseline that the task decodes (a list; the rule quotes each)."""
    decoded = task_strategies(w.task, w.evalset)
    return [arg for b in config["scoring"]["significance_baselines"] if b in decoded for arg in ("--baseline", b)]


def perplexity_inputs(w):
    return {
        **model_inputs(w.task, w.level),
        "src": processed_file(w.task, "bpe", "test", src(w.task)),
        "docids": corpus_file(w.task, "test", "docids"),
        "reference": processed_file(w.task, "bpe", "test", tgt(w.task)),
        "systems": [decode_file(w.task, "test", s, "bpe") for s in level_strategies(w.task, w.level)],
        **({"checks": model_check(w.task, w.level)} if is_external(w.task) else {}),
    }


def perplexity_args(w, input):
    args = ["--system", f"reference={input.reference}"]
    for n, p in zip(level_strategies(w.task, w.level), input.systems, strict=True):
        args += ["--system", f"{n}={p}"]
    return args


# ---- context usage (CXMI) ------------------------------------------------------
def cxmi_tasks():
    """Tasks with a document-level model: CXMI measures how much that model uses its context."""
    return [t for t in TASKS if "document" in task_levels(t)]


def cxmi_inputs(w):
    """The document-level model (and the sentence-level one, for the variant), the BPE evaluation set, every
    decoded strategy's BPE hypotheses, and what a context needs: 2-pass's first pass, last-sentence's sidecar."""
    strategies = task_systems(w.task, w.evalset)
    files = {
        **model_inputs(w.task, "document"),
        "src": processed_file(w.task, "bpe", w.evalset, src(w.task)),
        "ref": processed_file(w.task, "bpe", w.evalset, tgt(w.task)),
        "docids": corpus_file(w.task, w.evalset, "docids"),
        "systems": [decode_file(w.task, w.evalset, s, "bpe") for s in strategies],
    }
    if "sentence" in task_levels(w.task):
        files.update(model_inputs(w.task, "sentence", "sentence_model", "sentence_data"))
    if "2-pass" in strategies:
        files["first_pass"] = decode_file(w.task, w.evalset, "sentence-level", "bpe")
    if "last-sentence" in strategies:
        files["last_sentence_sidecar"] = decode_file(w.task, w.evalset, "last-sentence", "json")
    if w.evalset == "contrapro":
        files["select"] = contrapro_examples(w.task)
    if has_subsets(w.task, w.evalset):
        files["subsets"] = corpus_file(w.task, w.evalset, "subsets")
    if is_external(w.task):
        files["checks"] = [model_check(w.task, lvl) for lvl in task_levels(w.task)]
    return files


def cxmi_args(w, input):
    """The optional arguments of docnmt.score.cxmi (a list; the rule quotes each)."""
    args = []
    for n, p in zip(task_systems(w.task, w.evalset), input.systems, strict=True):
        args += ["--system", f"{n}={p}"]
    for key, option in (("sentence_model", "--sentence-model"), ("sentence_data", "--sentence-data"),
                        ("first_pass", "--first-pass"), ("last_sentence_sidecar", "--last-sentence-sidecar"),
                        ("select", "--select"), ("subsets", "--subsets")):
        if key in input.keys():
            args += [option, input[key]]
    return args


def context_usage_inputs(w):
    """The P-CXMI of every sentence, the raw evaluation set and every strategy's detokenized hypotheses."""
    files = scored_text_inputs(w)
    files["sentences"] = cxmi_sentences(w.task, w.evalset)
    files["docids"] = corpus_file(w.task, w.evalset, "docids")
    files.pop("subsets", None)
    return files


def context_usage_args(w, input):
    """--system for every strategy, --select on ContraPro, and pronoun F1 where the target is German."""
    args = system_args(w, input)
    if w.task in german_tasks():
        args += ["--pronouns", "--tagger", config["scoring"]["tagger"], "--source-tagger",
                 config["scoring"]["source_tagger"], "--rules", config["scoring"]["pronoun_rules"],
                 "--min-examples", str(pronoun_min_examples(w.task))]
    return args


def contrapro_levels(task):
    return LEVELS if SETTINGS[task]["contrapro"] else []


def task_scores(task):
    """Every score file of one task, by kind (the tables' manifest entry)."""
    entry = {
        "description": SETTINGS[task].get("description", task),
        "tgt": tgt(task),
        "bleu_ter": {e: score_file(task, e, "bleu_ter") for e in evalsets(task)},
        "perplexity": {lvl: score_file(task, "test", f"perplexity.{lvl}") for lvl in task_levels(task)},
        "sidecars": {s: decode_file(task, "test", s, "json") for s in task_systems(task, "test")},
    }
    if skipped_strategies(task):
        entry["skipped"] = skipped_strategies(task)
    if task in german_tasks():
        entry["pronouns"] = {e: score_file(task, e, "pronouns") for e in evalsets(task)}
    if SETTINGS[task]["contrapro"]:
        entry["accuracy"] = {lvl: score_file(task, "contrapro", f"accuracy.{lvl}") for lvl in LEVELS}
    if task in cxmi_tasks():
        entry["cxmi"] = {e: score_file(task, e, "cxmi") for e in evalsets(task)}
        entry["cxmi_sentences"] = {e: cxmi_sentences(task, e) for e in evalsets(task)}
        entry["context_usage"] = {e: score_file(task, e, "context_usage") for e in evalsets(task)}
    return entry


def score_manifest(tasks=None):
    """The tables' manifest: their rows (every strategy, then every MBR system) and each task's score files (default:
    the configured tasks)."""
    tasks = TASKS if tasks is None else tasks
    systems = list(config["strategies"]) + [mbr.system_name(s) for s in mbr_strategies()]
    curve = {t: curve_systems(t) for t in tasks if curve_systems(t)}
    return {"strategies": systems, "tasks": {t: task_scores(t) for t in tasks},
            **({"mbr_curve": {"counts": [config["mbr"]["count"]] + curve_counts(), "tasks": curve}} if curve else {}),
            **({"mbr": {k: config["mbr"][k] for k in ("candidates", "count", "utility", "epsilon", "seed")}}
               if mbr_strategies() else {})}


def manifest_files(tasks=None):
    """All files the manifest names (the inputs of the tables and plots)."""
    files = []
    for entry in score_manifest(tasks)["tasks"].values():
        for key, value in entry.items():
            if isinstance(value, dict) and key != "skipped":
                files += list(value.values())
    return files


def manifest_arg(tasks=None):
    """The manifest as one JSON argument (the rules quote it)."""
    import json

    return json.dumps(score_manifest(tasks), separators=(",", ":"))


# The tables and plots of each task alone (results/{task}/tables/, results/{task}/plots/) and of the configured
# tasks together under the config's tables.name (results/tables/NAME/, results/plots/NAME/): a run of another
# configuration writes its own (docnmt.layout).
from docnmt.config import tables_name  # noqa: E402
from docnmt.layout import TABLE_FORMATS, combined_plot, combined_table, task_plot, task_tables_dir  # noqa: E402

TABLES_NAME = tables_name(config)
#: The paper's Table 5 (rule data_statistics): the configured tasks' data, among their combined tables.
DATA_STATISTICS = {fmt: combined_table(TABLES_NAME, "data_statistics", ext)
                   for fmt, ext in (("markdown", "md"), ("csv", "csv"), ("latex", "tex"))}


def table_names(tasks=None):
    """The tables of these tasks together (default: the configured tasks)."""
    tasks = TASKS if tasks is None else tasks
    names = ["perplexity", "bleu_ter"]
    if any(t in german_tasks() for t in tasks):
        names += ["pronoun_f1", "pronoun_classes"]
    if any(SETTINGS[t]["contrapro"] for t in tasks):
        names.append("contrapro_accuracy")
    if any(t in cxmi_tasks() for t in tasks):
        names += ["context_usage", "context_split", "context_sentences"]
    return names + ["decoding_cost"]


def table_files(name):
    """A combined table in every format."""
    return [combined_table(TABLES_NAME, name, ext) for ext in TABLE_FORMATS]


#: Plots of the report, each with its caption in report/{name}.rst.
PLOTS = {"bleu": "Quality", "pronouns": "Pronouns", "cost": "Cost", "cxmi": "Context usage", "mbr": "MBR selection"}


def plot_names(tasks=None):
    """The plots of these tasks together (default: the configured tasks)."""
    tasks = TASKS if tasks is None else tasks
    return [p for p in PLOTS if (p != "pronouns" or any(t in german_tasks() for t in tasks))
            and (p != "cxmi" or any(t in cxmi_tasks() for t in tasks))
            and (p != "mbr" or any(curve_systems(t) for t in tasks))]


def plot_file(name):
    """A combined plot."""
    return combined_plot(TABLES_NAME, name)


def plot_tasks(name):
    """The configured tasks that have this plot of their own."""
    return [t for t in TASKS if name in plot_names([t])]


def tables_targets():
    """Every task's tables and plots, and the configured tasks' together."""
    targets = [task_tables_dir(t) for t in TASKS] + [task_plot(t, p) for t in TASKS for p in plot_names([t])]
    return targets + [f for name in table_names() for f in table_files(name)] + [plot_file(p) for p in plot_names()]

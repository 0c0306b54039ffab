"""The inputs and arguments of the scoring rules (``rules/score.smk``): each scorer's evaluation set, the
hypotheses of every system a task decodes on it (``docnmt.workflow.systems``), and the options that name them.

An ``input`` argument is the job's inputs as Snakemake gives them (a mapping with ``keys()``; a test passes a
dict): the options name the files the input function chose."""

from __future__ import annotations

import os
from collections.abc import Mapping

from docnmt import layout
from docnmt.decode.strategies import STRATEGIES
from docnmt.decode.variants import is_pooled, parse_system, variant

from .decode import evalset_priority, model_checks, model_inputs
from .metrics import metric, seam
from .systems import (cad_sweep_systems, curve_systems, draft_strategy, level_strategies, skipped_on_evalset,
                      skipped_strategies, system_pairs, task_strategies, task_systems)
from .tasks import (
    binarized, bpe_codes, evalsets, german_tasks, has_subsets, is_ctxpro, is_external, model_file, pronoun_min_examples, src,
    task_levels, tgt,
)


def chain_priority(config: dict, evalset: str) -> int:
    """The Snakemake priority of the scorers that feed another scorer (cxmi, then context_usage): their set's
    :func:`docnmt.workflow.decode.evalset_priority`, so that on the test set each starts, above any other set's
    decode, as soon as the test set's decodes are done; elsewhere the default, 0."""
    return evalset_priority(config, evalset)


def scored_text_inputs(config: dict, task: str, evalset: str) -> dict:
    """Raw source and reference of an evaluation set, its detokenized hypotheses, (ContraPro) the example lines,
    and the set's subsets file where its corpus recipe writes one."""
    files = {
        "src": layout.corpus_file(task, evalset, src(config, task)),
        "ref": layout.corpus_file(task, evalset, tgt(config, task)),
        "systems": [layout.decode_file(task, evalset, s, "txt") for s in task_systems(config, task, evalset)],
    }
    if evalset == "contrapro":
        files["select"] = layout.contrapro_examples(task)
    elif is_ctxpro(evalset):
        files["select"] = layout.ctxpro_examples(task, evalset)
    if has_subsets(config, task, evalset):
        files["subsets"] = layout.corpus_file(task, evalset, "subsets")
    return files


def system_args(config: dict, task: str, evalset: str, input: Mapping) -> list[str]:
    """--system NAME=PATH for every hypothesis file, plus --select on ContraPro (a list; the rule quotes each)."""
    args = system_pairs(task_systems(config, task, evalset), input["systems"])
    return args + (["--select", input["select"]] if "select" in input.keys() else [])


def pronoun_inputs(config: dict, task: str, evalset: str) -> dict:
    """The pronoun scorer's texts (:func:`scored_text_inputs`), and on the test set the CAD sweep's decodes (the
    report's alpha plot)."""
    files = scored_text_inputs(config, task, evalset)
    if evalset == "test" and cad_sweep_systems(config, task):
        files["curve"] = [layout.decode_file(task, "test", s, "txt") for s in cad_sweep_systems(config, task)]
    return files


def pronoun_args(config: dict, task: str, evalset: str, input: Mapping) -> list[str]:
    """--system for every system (and the CAD sweep's), --select on ContraPro (a list; the rule quotes each)."""
    args = system_args(config, task, evalset, input)
    return args + (system_pairs(cad_sweep_systems(config, task), input["curve"]) if "curve" in input.keys() else [])


def subsets_arg(input: Mapping) -> list[str]:
    """--subsets FILE where the evaluation set has one (pronoun F1 scores each subset on its own too); a list."""
    return ["--subsets", input["subsets"]] if "subsets" in input.keys() else []


# ---- the metric seam's rules (docnmt.score.metric, docnmt.workflow.metrics) ---------------------------------
def metric_inputs(config: dict, name: str, task: str, evalset: str) -> dict:
    """The scored texts of an evaluation set (raw source, reference, every system's hypotheses and, on ContraPro and
    ctxpro sets, the example lines), and on the test set the MBR curve's decodes where the metric scores them and
    the document ids where it needs them."""
    declared = metric(config, name)
    files = {k: v for k, v in scored_text_inputs(config, task, evalset).items() if k != "subsets"}
    if evalset == "test":
        if declared.curve:
            files["curve"] = [layout.decode_file(task, "test", s, "txt") for s in curve_systems(config, task)]
        if "docids" in declared.needs:
            files["docids"] = layout.corpus_file(task, "test", "docids")
    return files


def metric_args(config: dict, name: str, task: str, evalset: str, input: Mapping) -> list[str]:
    """Its CLI's options after --source and --reference: every system (and the curve's), the example lines, the
    document ids, the baselines, the bootstrap's samples and its declared options (a list; the rule quotes each)."""
    declared = metric(config, name)
    args = system_pairs(task_systems(config, task, evalset), input["systems"])
    if "select" in input.keys():
        args += ["--select", input["select"]]
    if "curve" in input.keys():
        args += system_pairs(curve_systems(config, task), input["curve"])
    if "docids" in input.keys():
        args += ["--docids", input["docids"]]
    if "languages" in declared.needs:
        args += ["--source-language", src(config, task), "--target-language", tgt(config, task)]
    decoded = task_strategies(config, task, evalset)
    args += [arg for b in config["scoring"]["significance_baselines"] if b in decoded for arg in ("--baseline", b)]
    args += ["--bootstrap-samples", str(config["scoring"]["bootstrap_samples"])]
    return args + declared.option_args(config)


# ---- perplexity and ContraPro ------------------------------------------------------------
def perplexity_inputs(config: dict, task: str, level: str) -> dict:
    """A level's model, the BPE test set and reference, and the hypotheses of the level's systems."""
    return {
        **model_inputs(config, task, level),
        "src": layout.processed_file(task, "bpe", "test", src(config, task)),
        "docids": layout.corpus_file(task, "test", "docids"),
        "reference": layout.processed_file(task, "bpe", "test", tgt(config, task)),
        "systems": [layout.decode_file(task, "test", s, "bpe") for s in level_strategies(config, task, level)],
        **({"checks": layout.model_check(task, level)} if is_external(config, task) else {}),
    }


def perplexity_args(config: dict, task: str, level: str, input: Mapping) -> list[str]:
    """--system for the reference and every hypothesis file of the level (a list; the rule quotes each)."""
    args = ["--system", f"reference={input['reference']}"]
    return args + system_pairs(level_strategies(config, task, level), input["systems"])


def contrapro_accuracy_inputs(config: dict, task: str, level: str) -> dict:
    """A level's model and data, ContraPro in BPE units, its examples and the BPE codes."""
    return {
        "model": model_file(config, task, level),
        "data": binarized(config, task, level),
        "src": layout.processed_file(task, "bpe", "contrapro", src(config, task)),
        "tgt": layout.processed_file(task, "bpe", "contrapro", tgt(config, task)),
        "examples": layout.contrapro_examples(task),
        "codes": bpe_codes(config, task),
    }


def contrapro_cad_args(config: dict, level: str) -> list[str]:
    """--cad ALPHA for the document model's ContraPro scoring where the config decodes with context-aware decoding
    (cad.strategies): its CAD row (a list; the rule quotes each)."""
    if level != "document" or not variant("cad").systems(config):
        return []
    alphas = [config["cad"]["alpha"]] + [a for a in config["cad"]["sweep"] if float(a) != float(config["cad"]["alpha"])]
    return ["--cad", *(str(a) for a in alphas)]


# ---- context usage (CXMI) ----------------------------------------------------------------
def cxmi_systems(config: dict, task: str, evalset: str) -> list[str]:
    """The systems CXMI scores: every one but a pooled variant's (pooled+docmbr), whose documents each come from
    another strategy, with that strategy's context (the tables show "-")."""
    return [s for s in task_systems(config, task, evalset) if not is_pooled(s)]


def cxmi_inputs(config: dict, task: str, evalset: str) -> dict:
    """The document-level model (and the sentence-level one, for the variant), the BPE evaluation set, the BPE
    hypotheses of every system with one strategy's context (:func:`cxmi_systems`), and what a context needs:
    2-pass's first pass, last-sentence's sidecar."""
    strategies = cxmi_systems(config, task, evalset)
    files = {
        **model_inputs(config, task, "document"),
        "src": layout.processed_file(task, "bpe", evalset, src(config, task)),
        "ref": layout.processed_file(task, "bpe", evalset, tgt(config, task)),
        "docids": layout.corpus_file(task, evalset, "docids"),
        "systems": [layout.decode_file(task, evalset, s, "bpe") for s in strategies],
    }
    if "sentence" in task_levels(config, task):
        files.update(model_inputs(config, task, "sentence", "sentence_model", "sentence_data"))
    if "2-pass" in strategies:
        files["first_pass"] = layout.decode_file(task, evalset, "sentence-level", "bpe")
    if "last-sentence" in strategies:
        files["last_sentence_sidecar"] = layout.decode_file(task, evalset, "last-sentence", "json")
    for drafted in (s for s in strategies if STRATEGIES[parse_system(s)[0]].drafted):  # refine: its draft
        files["draft"] = layout.decode_file(task, evalset, draft_strategy(config, drafted), "bpe")
        files["refine_sidecar"] = layout.decode_file(task, evalset, drafted, "json")
    if evalset == "contrapro":
        files["select"] = layout.contrapro_examples(task)
    if has_subsets(config, task, evalset):
        files["subsets"] = layout.corpus_file(task, evalset, "subsets")
    files.update(model_checks(config, task, task_levels(config, task)))
    return files


#: cxmi_inputs's optional keys and the options of docnmt.score.cxmi that name them.
CXMI_OPTIONS = (("sentence_model", "--sentence-model"), ("sentence_data", "--sentence-data"),
                ("first_pass", "--first-pass"), ("last_sentence_sidecar", "--last-sentence-sidecar"),
                ("draft", "--draft"), ("refine_sidecar", "--refine-sidecar"),
                ("select", "--select"), ("subsets", "--subsets"))


def cxmi_args(config: dict, task: str, evalset: str, input: Mapping) -> list[str]:
    """The optional arguments of docnmt.score.cxmi (a list; the rule quotes each)."""
    args = system_pairs(cxmi_systems(config, task, evalset), input["systems"])
    for key, option in CXMI_OPTIONS:
        if key in input.keys():
            args += [option, input[key]]
    return args


def context_usage_inputs(config: dict, task: str, evalset: str) -> dict:
    """The P-CXMI of every sentence, the raw evaluation set and every strategy's detokenized hypotheses."""
    files = scored_text_inputs(config, task, evalset)
    files["sentences"] = layout.cxmi_sentences(task, evalset)
    files["docids"] = layout.corpus_file(task, evalset, "docids")
    files.pop("subsets", None)
    return files


def context_usage_args(config: dict, task: str, evalset: str, input: Mapping) -> list[str]:
    """--system for every strategy, --select on ContraPro, and pronoun F1 where the target is German."""
    args = system_args(config, task, evalset, input)
    if task in german_tasks(config):
        scoring = config["scoring"]
        args += ["--pronouns", "--tagger", scoring["tagger"], "--source-tagger", scoring["source_tagger"],
                 "--rules", scoring["pronoun_rules"], "--min-examples", str(pronoun_min_examples(config, task))]
    return args


# ---- ctxpro ------------------------------------------------------------------------------
def ctxpro_accuracy_inputs(config: dict, task: str, evalset: str) -> dict:
    """A ctxpro set's examples, report and source (its line count), and every system's detokenized hypotheses and
    sidecar."""
    systems = task_systems(config, task, evalset)
    return {
        "examples": layout.ctxpro_examples(task, evalset),
        "report": layout.ctxpro_report(task, evalset),
        "src": layout.corpus_file(task, evalset, src(config, task)),
        "systems": [layout.decode_file(task, evalset, s, "txt") for s in systems],
        "sidecars": [layout.decode_file(task, evalset, s, "json") for s in systems],
    }


def ctxpro_accuracy_args(config: dict, task: str, evalset: str, input: Mapping) -> list[str]:
    """--system for every system and --skipped for every strategy not decoded on the set, with why (a list)."""
    skipped = {**skipped_strategies(config, task), **skipped_on_evalset(config, task, evalset)}
    systems = task_systems(config, task, evalset)
    return (system_pairs(systems, input["systems"])
            + [arg for name, path in zip(systems, input["sidecars"], strict=True) for arg in ("--sidecar", f"{name}={path}")]
            + [arg for name, why in skipped.items() for arg in ("--skipped", f"{name}={why}")])


# ---- the scorers' settings -----------------------------------------------------------------
def pronoun_settings(config: dict) -> dict:
    """The pronoun scorer's params beside its inputs: the target and source taggers and the rule set."""
    scoring = config["scoring"]
    return {"tagger": scoring["tagger"], "source_tagger": scoring["source_tagger"], "rules": scoring["pronoun_rules"]}


def context_usage_settings(config: dict) -> dict:
    """The context-usage table's params: how many top sentences it shows, and the share scored against the rest."""
    usage = config["scoring"]["context_usage"]
    return {"top": usage["top"], "share": usage["share"]}


# ---- the comparison page ---------------------------------------------------------------------------------------
def compare_inputs(config: dict, task: str) -> dict:
    """What the task's comparison page shows: the test set, every system's translation and decode sidecar, the
    score files it reads segment scores, spans and pronoun counts from, and each ContraPro and ctxpro set with its
    translations."""
    systems = task_systems(config, task, "test")
    files = {
        "src": layout.corpus_file(task, "test", src(config, task)),
        "ref": layout.corpus_file(task, "test", tgt(config, task)),
        "docids": layout.corpus_file(task, "test", "docids"),
        "systems": [layout.decode_file(task, "test", s, "txt") for s in systems],
        "sidecars": [layout.decode_file(task, "test", s, "json") for s in systems],
        "scores": [layout.score_file(task, "test", m.name) for m in seam(config)]
                  + [path(task, "test") for m in seam(config) for path in m.outputs.values()],
    }
    if task in german_tasks(config):
        files["pronouns"] = layout.pronoun_sentences(task, "test")
    for number, evalset in enumerate(evalsets(config, task)[1:]):
        files[f"set_{number}"] = (layout.contrapro_examples(task) if evalset == "contrapro" else
                                  layout.ctxpro_examples(task, evalset))
        files[f"set_source_{number}"] = layout.corpus_file(task, evalset, src(config, task))
        files[f"set_systems_{number}"] = [layout.decode_file(task, evalset, s, "txt")
                                          for s in task_systems(config, task, evalset)]
    return files


def compare_args(config: dict, task: str, input: Mapping) -> list[str]:
    """The comparison page's options: every system, the page's baseline (the first of
    scoring.significance_baselines the task decodes), the scores folder and each set of context with its
    translations (a list; the rule quotes each)."""
    systems = task_systems(config, task, "test")
    args = system_pairs(systems, input["systems"])
    baseline = next((b for b in config["scoring"]["significance_baselines"] if b in systems), systems[0])
    args += ["--baseline", baseline, "--title", task]
    if input["scores"]:
        args += ["--scores", os.path.dirname(input["scores"][0])]
    if "pronouns" in input.keys():
        args += ["--pronouns", input["pronouns"]]
    for number, evalset in enumerate(evalsets(config, task)[1:]):
        args += ["--context-set", f"{evalset}={input[f'set_{number}']}",
                 "--context-source", f"{evalset}={input[f'set_source_{number}']}"]
        for name, path in zip(task_systems(config, task, evalset), input[f"set_systems_{number}"], strict=True):
            args += ["--context-system", f"{evalset}:{name}={path}"]
    return args

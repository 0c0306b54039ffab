"""The inputs and arguments of the decoding rules (``rules/decode.smk``) and of every rule that loads a model:
a task's model and data as inputs and as CLI options, the checks of a model trained elsewhere, and each
strategy's decode: its inputs (first pass, round one, reference) and its options (doc-trans's mode, MBR)."""

from __future__ import annotations

from collections.abc import Mapping

from docnmt import layout
from docnmt.decode.variants import parse_system, strategy_of, variant, variants
from docnmt.decode.backend import backend
from docnmt.decode.strategies import STRATEGIES

from .metrics import selection_inputs, selection_options
from .systems import (doc_trans_mode, draft_strategy, first_pass_strategies, guided_strategies, pooled_candidates,
                      round_one_reused, strategy_levels)
from .tasks import (
    binarized, bpe_codes, external_codes, is_ctxpro, is_external, language_codes, model_backend, model_file, src,
    task_k, task_separator, tgt,
)


# ---- a task's models -------------------------------------------------------------------
def model_inputs(config: dict, task: str, level: str, model_key: str = "model", data_key: str = "data") -> dict:
    """{model_key: the model, data_key: its data folder}; a transformers model has no data folder, a served model
    (a name on a server) no file at all."""
    if backend(model_backend(config, task)).served:
        return {}
    files = {model_key: model_file(config, task, level)}
    if backend(model_backend(config, task)).needs_data:
        files[data_key] = binarized(config, task, level)
    return files


def search_dtype(config: dict) -> str:
    """The precision of every decode and forced scoring (decode.dtype; float32 unless the config asks otherwise)."""
    return config["decode"]["dtype"]


def model_level(wildcards) -> str:
    """The level of the model a job loads: its ``level`` wildcard (check_model, perplexity), else sentence for the
    sentence-level decode (its ``system``), else document (the other decodes, CXMI)."""
    if hasattr(wildcards, "level"):
        return wildcards.level
    system = getattr(wildcards, "system", None)
    if system is None:
        return "document"
    strategy = strategy_of(system)
    return STRATEGIES[strategy].models[0] if strategy in STRATEGIES else "document"  # the model it decodes with


def model_args(config: dict, task: str, input: Mapping, model_key: str = "model", data_key: str = "data",
               level: str = "document") -> list:
    """The model options of a docnmt CLI (a list; the rule quotes each): --backend, --model and, for a fairseq
    model, --data; a transformers model's language codes. ``input``: the job's inputs (model_inputs's keys); a served
    model, which is no input, is the name configured for ``level``."""
    from .environments import engine_options

    if model_key not in input.keys():  # a served model: its name on the server (``level``'s), no input file
        out = ["--backend", model_backend(config, task), "--model", model_file(config, task, level)]
        return out + language_codes(config, task) + engine_options(config, task)
    out = ["--backend", model_backend(config, task), "--model", input[model_key]]
    if data_key in input.keys():
        out += ["--data", input[data_key]]
    return out + language_codes(config, task) + engine_options(config, task)


def model_checks(config: dict, task: str, levels) -> dict:
    """{"checks": the check reports of these levels' models} for a task whose models come from elsewhere."""
    return {"checks": [layout.model_check(task, lvl) for lvl in levels]} if is_external(config, task) else {}


def check_codes_args(config: dict, task: str) -> list[str]:
    """--codes for a model trained elsewhere with BPE codes (docnmt.decode.checks)."""
    return ["--codes", bpe_codes(config, task)] if external_codes(config, task) else []


def check_sample_args(config: dict, task: str) -> list[str]:
    """How the check's sample sentence is tokenized: a fairseq model's tokenizer and source language."""
    if backend(model_backend(config, task)).plain_text:
        return []
    return ["--sample-tokenize", config["task_settings"][task]["models"]["tokenize"], "--sample-lang", src(config, task)]


# ---- a strategy's decode ---------------------------------------------------------------
def variant_options(config: dict, system: str) -> list[str]:
    """docnmt.decode.cli's options of a system's variant (none for a strategy alone; a list, the rule quotes
    each): its declaration's (docnmt.decode.variants.Variant.options)."""
    kind = parse_system(system)[1]
    return [] if kind is None else variant(kind).options(config, system)


def decode_outputs() -> dict[str, str]:
    """A decode's files with wildcards {task}, {evalset}, {system}: BPE and detokenized hypotheses, sidecar."""
    return {key: layout.decode_file("{task}", "{evalset}", "{system}", ext)
            for key, ext in (("bpe", "bpe"), ("txt", "txt"), ("sidecar", "json"))}


def decode_inputs(config: dict, strategy: str, task: str, evalset: str, system: str) -> dict:
    """The inputs of a strategy's decode, alone or with MBR selection (``system``: doc-trans+mbr)."""
    with_variant = parse_system(system)[1]
    level = "sentence" if strategy == "sentence-level" else "document"
    files = {
        **model_inputs(config, task, level),
        "src": layout.processed_file(task, "bpe", evalset, src(config, task)),
        "docids": layout.corpus_file(task, evalset, "docids"),
    }
    if STRATEGIES[strategy].reference:
        files["ref"] = layout.processed_file(task, "bpe", evalset, tgt(config, task))
    if decodes_only_examples(config, strategy, task, evalset):
        files["only_lines"] = layout.ctxpro_examples(task, evalset)
    files.update(model_checks(config, task, sorted(strategy_levels(config, strategy, task))))
    if strategy in first_pass_strategies(config, task):
        files["first_pass"] = layout.decode_file(task, evalset, "sentence-level", "bpe")
        files["first_pass_sidecar"] = layout.decode_file(task, evalset, "sentence-level", "json")
    elif strategy in guided_strategies(config, task):  # the first pass as a guide only: not in the cost
        files["first_pass"] = layout.decode_file(task, evalset, "sentence-level", "bpe")
    if STRATEGIES[strategy].drafted:  # refine: the draft it improves, and its cost
        files["draft"] = layout.decode_file(task, evalset, draft_strategy(config, strategy), "bpe")
        files["draft_sidecar"] = layout.decode_file(task, evalset, draft_strategy(config, strategy), "json")
    if strategy == "doc-trans" and round_one_reused(config, task) and not with_variant:
        files["round_one"] = layout.decode_file(task, evalset, "2-pass", "bpe")
        files["round_one_sidecar"] = layout.decode_file(task, evalset, "2-pass", "json")
    return {**files, **selection_inputs(config, system)}


def decode_options(config: dict, strategy: str, task: str, system: str, input: Mapping) -> list[str]:
    """Strategy-specific options of docnmt.decode.cli (input paths, doc-trans's mode, MBR; a list, the rule quotes
    each). ``input``: the job's inputs (decode_inputs's keys)."""
    args = variant_options(config, system) + selection_options(config, system, input)
    mode = doc_trans_mode(config, task)
    if strategy == "doc-trans":
        args += ["--doc-trans-mode", mode]
        if mode == "parallel" and config["doc_trans"]["max_rounds"] is not None:
            args += ["--max-rounds", str(int(config["doc_trans"]["max_rounds"]))]
    if STRATEGIES[strategy].reference:
        args += ["--ref", input["ref"]]
    if "only_lines" in input.keys():
        args += ["--only-lines", input["only_lines"]]
    if strategy in first_pass_strategies(config, task):
        args += ["--first-pass", input["first_pass"], "--first-pass-sidecar", input["first_pass_sidecar"]]
        if "round_one" in input.keys():
            args += ["--round-one", input["round_one"], "--round-one-sidecar", input["round_one_sidecar"]]
    elif strategy in guided_strategies(config, task):
        args += ["--first-pass", input["first_pass"]]
    if STRATEGIES[strategy].drafted:
        args += refine_args(config, task, input)
    return args


def refine_args(config: dict, task: str, input: Mapping) -> list[str]:
    """refine's options: its draft's files, unit, rounds and the task's template (models.templates.refine)."""
    settings = config["refine"]
    template = ((config["task_settings"][task].get("models") or {}).get("templates") or {}).get("refine")
    return ["--draft", input["draft"], "--draft-sidecar", input["draft_sidecar"], "--refine-unit", settings["unit"],
            "--refine-rounds", str(settings["rounds"])] + ([] if template is None else ["--refine-template", template])


# ---- a pooled variant's selection (pooled+docmbr) --------------------------------------------------------------
def pooled_variants(config: dict) -> list:
    """The pooled variants the config asks for (docnmt.decode.variants: pooled+docmbr): one rule each."""
    return [v for v in variants().values() if v.pooled and v.systems(config)]


def pooled_inputs(config: dict, declared, task: str) -> dict:
    """A pooled variant's inputs on a task's test set: its candidates' translations (detokenized and BPE) and
    sidecars, in its strategies' order, and the document ids."""
    chosen = pooled_candidates(config, task, declared)
    files = {"docids": layout.corpus_file(task, "test", "docids"),
             "candidates": [layout.decode_file(task, "test", s, "txt") for s in chosen],
             "candidates_bpe": [layout.decode_file(task, "test", s, "bpe") for s in chosen],
             "candidate_sidecars": [layout.decode_file(task, "test", s, "json") for s in chosen]}
    if declared.learned(config):  # COMET reads the source
        files["source"] = layout.corpus_file(task, "test", src(config, task))
    return {**files, **selection_inputs(config, declared.system())}


def pooled_args(config: dict, declared, task: str, input: Mapping) -> list[str]:
    """A pooled variant's CLI options: each candidate as NAME=PATH (text, BPE, sidecar) and its declared options (a
    list; the rule quotes each)."""
    args = []
    for option, key in (("--candidate", "candidates"), ("--candidate-bpe", "candidates_bpe"),
                        ("--candidate-sidecar", "candidate_sidecars")):
        args += [a for name, path in zip(pooled_candidates(config, task, declared), input[key], strict=True)
                 for a in (option, f"{name}={path}")]
    args += ["--source", input["source"]] if "source" in input.keys() else []
    return args + declared.options(config, declared.system()) + selection_options(config, declared.system(), input)


def decode_priority(config: dict, strategy: str, evalset: str) -> int:
    """The Snakemake priority of a strategy's decode job: its cost factor (``StrategyInfo.cost_factor``), so that
    of the decodes ready at once the costliest start first (doc-trans-beam as soon as the document model is trained)
    and the short ones fill the cores beside them, instead of the longest starting last and running alone; plus its
    set's :func:`evalset_priority`, so that every decode of the test set comes before any of another set."""
    return STRATEGIES[strategy].cost_factor(config["k"], config["h"]) + evalset_priority(config, evalset)


def evalset_priority(config: dict, evalset: str) -> int:
    """What a job on the test set has over any decode of another set: one more than the costliest configured
    strategy's cost factor; elsewhere 0. The test set's scorers are the longest chain after the decodes (CXMI of every
    strategy's hypotheses, then context usage, then the tables): with the test set decoded first, that chain runs
    while the ContraPro and ctxpro sets' decodes fill the other cores, instead of alone at the end (the demo's
    last 47 s on one of two cores)."""
    if evalset != "test":
        return 0
    return 1 + max(decode_priority(config, s, "other") for s in config["strategies"])


def decodes_only_examples(config: dict, strategy: str, task: str, evalset: str) -> bool:
    """On a ctxpro set, a strategy that translates each sentence alone decodes only the examples' sentences, not
    their context: no-context always, sentence-level unless the set's 2-pass, parallel doc-trans or full-segment
    start from (or align against) its hypotheses of the context."""
    from .systems import task_strategies

    if not is_ctxpro(evalset) or not STRATEGIES[strategy].sentence_alone:
        return False
    if strategy != "sentence-level":
        return True
    builders = set(first_pass_strategies(config, task)) | set(guided_strategies(config, task))
    return not builders & set(task_strategies(config, task, evalset))


def search_args(config: dict, task: str) -> list:
    """The search options every decode shares: beam, window size, doc-trans-beam's h, dtype, separator, context,
    decode.max_tokens and decode.cache_bytes (for a backend with a prefix cache) where they are set, and
    decode.speculative for a backend whose engine has it."""
    max_tokens, cache = config["decode"].get("max_tokens"), config["decode"].get("cache_bytes")
    described = backend(model_backend(config, task))
    with_cache = cache is not None and described.prefix_cache
    beam = config["beam"] if described.can("beam_search") else 1  # greedy where the backend has no beam search
    return ["--beam", beam, "--k", task_k(config, task), "--h", config["h"], "--dtype",
            search_dtype(config), "--separator", task_separator(config, task)] + context_args(config, task) \
        + ([] if max_tokens is None else ["--max-tokens", int(max_tokens)]) \
        + (["--cache-bytes", str(cache)] if with_cache else []) \
        + ([] if config["decode"]["verify_drafts"] else ["--no-verify-drafts"]) \
        + (["--speculative", config["decode"]["speculative"]]
           if config["decode"]["speculative"] != "none" and described.can("speculative") else [])


def context_args(config: dict, task: str) -> list[str]:
    """--context document for a task whose models: say so (the decodes; the scoring keeps the k-1 window)."""
    models = config["task_settings"][task].get("models") or {}
    return ["--context", models["context"]] if models.get("context", "window") != "window" else []


def tgt_lang_args(config: dict, task: str) -> list[str]:
    """--tgt-lang, unless the model's language codes (language_codes) name the target."""
    return [] if language_codes(config, task) else ["--tgt-lang", tgt(config, task)]


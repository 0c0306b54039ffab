"""What each task decodes and scores, from the validated config and the strategy registry
(``docnmt.decode.strategies``): its strategies per evaluation set, those skipped for a missing model, its MBR
systems (``docnmt.decode.mbr``: ``doc-trans+mbr``) and the MBR plot's candidate counts (``doc-trans+mbr-4``),
and doc-trans's mode."""

from __future__ import annotations

import re

from docnmt.decode import mbr
from docnmt.decode.strategies import STRATEGIES, models_needed, not_for_backend
from docnmt.decode.backend import backend

from .tasks import all_evalsets, engine_args, is_ctxpro, model_backend, task_levels


def configured_strategies(config: dict) -> list[str]:
    """The strategies the config decodes (config strategies): one decode rule each (rules/decode.smk)."""
    return list(config["strategies"])


def strategy_rule_name(strategy: str) -> str:
    """Rule names are identifiers: decode_2_pass for 2-pass, decode_doc_trans_beam for doc-trans-beam."""
    return STRATEGIES[strategy].rule


def not_for_evalset(strategy: str, evalset: str) -> str | None:
    """Why a strategy does not apply to an evaluation set, or None: full-segment not to ContraPro (its sentences
    are not adjacent: the paper's '-'), a strategy whose context is the reference (cheating) not to a ctxpro set
    (its context sentences have no reference)."""
    info = STRATEGIES[strategy]
    if evalset == "contrapro" and not info.contrapro:
        return "ContraPro's sentences are not adjacent"
    if is_ctxpro(evalset) and info.reference:
        return "a ctxpro set has no reference for its context sentences"
    return None


def strategy_evalsets(config: dict, strategy: str) -> list[str]:
    """The evaluation sets (of every task the config describes) that a strategy applies to (not_for_evalset)."""
    return [e for e in all_evalsets(config) if not_for_evalset(strategy, e) is None]


def evalset_strategies(config: dict, evalset: str) -> list[str]:
    """The configured strategies that apply to an evaluation set."""
    return [s for s in config["strategies"] if not_for_evalset(s, evalset) is None]


def skipped_on_evalset(config: dict, task: str, evalset: str) -> dict[str, str]:
    """{strategy: why} for the configured strategies the task decodes on its test set but not on this set."""
    return {s: why for s in task_strategies(config, task, "test") if (why := not_for_evalset(s, evalset))}


def system_pairs(names, paths) -> list[str]:
    """``--system NAME=PATH`` for each system and its file, the scorers' option (a list; the rule quotes each)."""
    return [arg for n, p in zip(names, paths, strict=True) for arg in ("--system", f"{n}={p}")]


def system_pattern(strategy: str) -> str:
    """The {system} wildcard of a strategy's decode rule: the strategy, one of its MBR systems or its QE reranking."""
    return f"{re.escape(strategy)}({re.escape(mbr.SUFFIX)}(-[0-9]+)?|{re.escape(mbr.QE_SUFFIX)})?"


# ---- doc-trans's mode ------------------------------------------------------------------
def doc_trans_mode(config: dict, task: str) -> str:
    """doc_trans.mode, except sequential for a task without a sentence-level model (parallel needs its first pass)."""
    mode = config["doc_trans"]["mode"]
    return "sequential" if mode == "parallel" and "sentence" not in task_levels(config, task) else mode


def first_pass_strategies(config: dict, task: str) -> list[str]:
    """Strategies that start from the sentence-level hypotheses: 2-pass, and doc-trans in parallel mode."""
    return [name for name, info in STRATEGIES.items() if info.needs_first_pass(doc_trans_mode(config, task))]


def guided_strategies(config: dict, task: str) -> list[str]:
    """Strategies that take the sentence-level hypotheses where given, without needing them (full-segment aligns a
    window's output back to its sentences against them, docnmt.decode.realign): given where the task decodes
    sentence-level."""
    if "sentence-level" not in task_strategies(config, task, "test"):
        return []
    return [name for name, info in STRATEGIES.items() if info.guided and name not in first_pass_strategies(config, task)]


def round_one_reused(config: dict, task: str) -> bool:
    """Parallel doc-trans takes 2-pass's output over as its round 1 where 2-pass is decoded anyway."""
    return doc_trans_mode(config, task) == "parallel" and "2-pass" in config["strategies"]


# ---- a task's strategies and systems ---------------------------------------------------
def strategy_levels(config: dict, strategy: str, task: str | None = None) -> set[str]:
    """The models a strategy needs (docnmt.decode.strategies.models_needed). Without a task, doc-trans needs
    only the document model: it falls back to sequential mode where the task has no sentence-level model
    (doc_trans_mode)."""
    return models_needed(strategy, "sequential" if task is None else doc_trans_mode(config, task))


def skipped_strategies(config: dict, task: str) -> dict[str, str]:
    """{strategy: why} for the strategies whose model the task lacks (the tables say so)."""
    levels = set(task_levels(config, task))
    missing = {s: sorted(strategy_levels(config, s) - levels) for s in config["strategies"]}
    backend_name = model_backend(config, task)
    why = {s: f"no {'-level or '.join(lacking)}-level model in task_settings.{task}.models" if lacking
           else not_for_backend(s, backend_name) for s, lacking in missing.items()}
    return {s: reason for s, reason in why.items() if reason}


def task_strategies(config: dict, task: str, evalset: str) -> list[str]:
    """The strategies decoded on one evaluation set of a task."""
    skipped = skipped_strategies(config, task)
    return [s for s in evalset_strategies(config, evalset) if s not in skipped]


def mbr_strategies(config: dict) -> list[str]:
    """The strategies that also run with MBR selection: those of mbr.strategies that are configured strategies."""
    return [s for s in config["mbr"]["strategies"] if s in config["strategies"]]


def qe_strategies(config: dict) -> list[str]:
    """The strategies that also run with QE reranking (qe_rerank; none without its checkpoint)."""
    if config["qe_rerank"]["checkpoint"] is None:
        return []
    return [s for s in config["qe_rerank"]["strategies"] if s in config["strategies"]]


def curve_counts(config: dict) -> list[int]:
    """The candidate counts of the report's MBR plot besides mbr.count, in order."""
    return sorted(set(config["mbr"]["curve"]["counts"]) - {config["mbr"]["count"]})


def selection_unavailable(config: dict, task: str, kind: str) -> str | None:
    """Why the task's backend cannot make the candidates of a selection (``kind`` mbr: mbr.candidates, a beam's
    n-best or epsilon samples; qe: a beam's n-best), in words; None where it can."""
    needs = ["sampling"] if kind == "mbr" and config["mbr"]["candidates"] == "sampling" else ["beam_search"]
    return backend(model_backend(config, task)).lacks(needs, engine_args(config, task))


def skipped_selections(config: dict, task: str) -> dict[str, str]:
    """{system: why} for the MBR and QE systems the task's backend cannot make the candidates of (the tables say
    so)."""
    skipped = {}
    for kind, chosen in (("mbr", mbr_strategies(config)), ("qe", qe_strategies(config))):
        why = selection_unavailable(config, task, kind)
        if why:
            skipped.update({mbr.system_name(s, kind=kind): why for s in chosen})
    return skipped


def task_systems(config: dict, task: str, evalset: str) -> list[str]:
    """What is decoded and scored on one evaluation set of a task: its strategies, then (on the test set) each
    one of mbr.strategies with MBR selection (docnmt.decode.mbr.system_name: doc-trans+mbr) and each of
    qe_rerank.strategies with QE reranking (doc-trans+qe), where the task's backend makes their candidates."""
    strategies = task_strategies(config, task, evalset)
    if evalset != "test":
        return strategies
    with_mbr = [] if selection_unavailable(config, task, "mbr") else mbr_strategies(config)
    with_qe = [] if selection_unavailable(config, task, "qe") else qe_strategies(config)
    return (strategies + [mbr.system_name(s) for s in with_mbr if s in strategies]
            + [mbr.system_name(s, kind="qe") for s in with_qe if s in strategies])


def curve_systems(config: dict, task: str) -> list[str]:
    """The MBR decodes of the report's candidate-count plot on the test set (mbr.curve): its strategy with each
    count of mbr.curve.counts (doc-trans+mbr-4), where the task decodes that strategy with MBR."""
    strategy = config["mbr"]["curve"]["strategy"]
    if strategy not in mbr_strategies(config) or strategy not in task_strategies(config, task, "test") \
            or selection_unavailable(config, task, "mbr"):
        return []
    return [mbr.system_name(strategy, n) for n in curve_counts(config)]


def level_strategies(config: dict, task: str, level: str) -> list[str]:
    """The systems whose hypotheses the level's model scores for Table 2 (perplexity)."""
    return [s for s in task_systems(config, task, "test")
            if (mbr.parse_system(s)[0] == "sentence-level") == (level == "sentence")]

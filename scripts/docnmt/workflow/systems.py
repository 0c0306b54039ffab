"""What each task decodes and scores, from the validated config, the strategy registry
(``docnmt.decode.strategies``) and the variant registry (``docnmt.decode.variants``): its strategies per evaluation
set, those skipped for a missing model, its variants' systems (``doc-trans+mbr``, ``doc-trans+qe``,
``pooled+docmbr``) and the MBR plot's candidate counts (``doc-trans+mbr-4``), and doc-trans's mode."""

from __future__ import annotations

from docnmt.decode import variants as variant_registry
from docnmt.decode.contrastive import alpha_text
from docnmt.decode.variants import Variant, variant, variants
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
    """The {system} wildcard of a strategy's decode rule: the strategy, or it with a variant its rule makes
    (``docnmt.decode.variants.pattern``: doc-trans+mbr, doc-trans+mbr-4, doc-trans+qe)."""
    return variant_registry.pattern(strategy)


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
    for s in config["strategies"]:  # refine without its draft
        if STRATEGIES[s].drafted and not why.get(s) and why.get(draft_strategy(config, s)):
            why[s] = f"its draft, {draft_strategy(config, s)}, is skipped: {why[draft_strategy(config, s)]}"
    return {s: reason for s, reason in why.items() if reason}


def task_strategies(config: dict, task: str, evalset: str) -> list[str]:
    """The strategies decoded on one evaluation set of a task (refine where its draft is decoded there too)."""
    skipped = skipped_strategies(config, task)
    found = [s for s in evalset_strategies(config, evalset) if s not in skipped]
    return [s for s in found if not STRATEGIES[s].drafted or draft_strategy(config, s) in found]


def draft_strategy(config: dict, strategy: str) -> str:
    """The strategy whose translation a drafted strategy improves (refine: config refine.draft)."""
    return config[strategy.replace("-", "_")]["draft"]


def mbr_strategies(config: dict) -> list[str]:
    """The strategies that also run with MBR selection: those of mbr.strategies that are configured strategies."""
    return variant("mbr").strategies(config)


def qe_strategies(config: dict) -> list[str]:
    """The strategies that also run with QE reranking (qe_rerank; none without its checkpoint)."""
    return variant("qe").strategies(config)


def curve_counts(config: dict) -> list[int]:
    """The candidate counts of the report's MBR plot besides mbr.count, in order."""
    return sorted(set(config["mbr"]["curve"]["counts"]) - {config["mbr"]["count"]})


def variant_unavailable(config: dict, task: str, declared: Variant) -> str | None:
    """Why the task's backend cannot run a variant (its :attr:`Variant.needs`: MBR's candidates, a beam's n-best or
    epsilon samples; QE's beam), in words; None where it can."""
    needs = declared.needs(config)
    return backend(model_backend(config, task)).lacks(needs, engine_args(config, task)) if needs else None


def selection_unavailable(config: dict, task: str, kind: str) -> str | None:
    """:func:`variant_unavailable` of the variant ``kind`` (mbr, qe, ...)."""
    return variant_unavailable(config, task, variant(kind))


def pooled_pattern(declared: Variant) -> str:
    """The {system} wildcard of a pooled variant's rule: its one system (pooled+docmbr), escaped."""
    import re

    return re.escape(declared.system())


def pooled_candidates(config: dict, task: str, declared: Variant) -> list[str]:
    """The strategies whose test-set translations a pooled variant selects among on a task: its strategies that the
    task decodes on the test set, in their order; none where fewer than two are."""
    decoded = task_strategies(config, task, "test")
    chosen = [s for s in declared.strategies(config) if s in decoded]
    return chosen if len(chosen) >= 2 else []


def variant_systems(config: dict, task: str, declared: Variant, evalset: str = "test") \
        -> tuple[list[str], dict[str, str]]:
    """A variant's systems on one of a task's sets (the test set; a ctxpro set for a variant decoded there too,
    :attr:`Variant.context_sets`), and {system: why} for those it asks for but cannot have (the tables say so)."""
    if evalset != "test" and not (declared.context_sets and is_ctxpro(evalset)):
        return [], {}
    asked = declared.systems(config)
    why = variant_unavailable(config, task, declared)
    if why:
        return [], dict.fromkeys(asked, why)
    if declared.pooled:
        if asked and not pooled_candidates(config, task, declared):
            return [], dict.fromkeys(asked, "fewer than two of its strategies are decoded on the test set")
        return asked, {}
    decoded = task_strategies(config, task, evalset)
    return [declared.system(s) for s in declared.strategies(config) if s in decoded], {}


def skipped_selections(config: dict, task: str) -> dict[str, str]:
    """{system: why} for the variants' systems the task cannot make (the tables say so)."""
    return {system: why for declared in variants().values() for system, why in
            variant_systems(config, task, declared)[1].items()}


def task_systems(config: dict, task: str, evalset: str) -> list[str]:
    """What is decoded and scored on one evaluation set of a task: its strategies, then (on the test set, and for
    CAD on ctxpro's sets too) each variant's systems in the registry's order (``docnmt.decode.variants``:
    doc-trans+mbr, doc-trans+qe, doc-trans+cad, pooled+docmbr), where the task's backend can make them."""
    return task_strategies(config, task, evalset) + [
        s for declared in variants().values() for s in variant_systems(config, task, declared, evalset)[0]]


def table_systems(config: dict) -> list[str]:
    """The tables' rows: every configured strategy, then every variant's systems, in the registry's order."""
    return list(config["strategies"]) + [s for declared in variants().values() for s in declared.systems(config)]


def curve_systems(config: dict, task: str) -> list[str]:
    """The decodes of the report's curves on the test set, not in the tables: the MBR candidate-count plot's
    (:func:`mbr_curve_systems`) and the CAD alpha sweep's (:func:`cad_sweep_systems`)."""
    return mbr_curve_systems(config, task) + cad_sweep_systems(config, task)


def mbr_curve_systems(config: dict, task: str) -> list[str]:
    """The MBR decodes of the report's candidate-count plot on the test set (mbr.curve): its strategy with each
    count of mbr.curve.counts (doc-trans+mbr-4), where the task decodes that strategy with MBR."""
    strategy = config["mbr"]["curve"]["strategy"]
    if strategy not in mbr_strategies(config) or strategy not in task_strategies(config, task, "test") \
            or selection_unavailable(config, task, "mbr"):
        return []
    return [variant("mbr").system(strategy, n) for n in curve_counts(config)]


def cad_sweep_strategy(config: dict, task: str) -> str | None:
    """The strategy of the CAD alpha sweep on a task: the first of cad.strategies that the task decodes with CAD;
    None without a sweep."""
    if not config["cad"]["sweep"]:
        return None
    decoded = variant_systems(config, task, variant("cad"))[0]
    return next((s for s in config["cad"]["strategies"] if variant("cad").system(s) in decoded), None)


def cad_sweep_systems(config: dict, task: str) -> list[str]:
    """The CAD alpha sweep's decodes on the test set (cad.sweep): its strategy at each alpha but cad.alpha, whose
    decode is the strategy's +cad system (doc-trans+cad-0.25)."""
    strategy = cad_sweep_strategy(config, task)
    if strategy is None:
        return []
    return [variant("cad").system(strategy, alpha_text(a)) for a in config["cad"]["sweep"]
            if float(a) != float(config["cad"]["alpha"])]


def level_strategies(config: dict, task: str, level: str) -> list[str]:
    """The systems whose hypotheses the level's model scores for Table 2 (perplexity)."""
    return [s for s in task_systems(config, task, "test")
            if (variant_registry.strategy_of(s) == "sentence-level") == (level == "sentence")]

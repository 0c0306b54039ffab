"""A system's variants: what a strategy's decode becomes with a selection or another search, declared once.

A system is a strategy, or a strategy with a variant's suffix (``doc-trans+mbr``, ``doc-trans+qe``), or a pooled
variant over the strategies' outputs (``pooled+docmbr``). Each variant is one :class:`Variant`, declared beside its
code by a module of this package that assigns ``VARIANT`` (one or a tuple) at its top level: MBR selection and QE
reranking in :mod:`docnmt.decode.mbr`, document-level MBR in :mod:`docnmt.decode.document_mbr`. The registry
(:func:`variants`) finds those modules by reading this package's sources, as the metric registry does, so a new
variant is one new module.

From the declarations come the systems' names (:func:`system_name`, :func:`parse_system`), the tables' row labels
(:func:`label`), the rules' wildcard constraint (``docnmt.workflow.systems.system_pattern``), the systems each config
decodes and the tables' row order (``docnmt.workflow.systems.task_systems``): this module imports no stage, so the
tables read it.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Callable

#: The name a pooled variant's system has before its suffix: ``pooled+docmbr``.
POOLED = "pooled"


def _none(config: dict) -> list[str]:
    return []


@dataclass(frozen=True)
class Variant:
    """A variant of a strategy's decode, as the workflow, the CLIs and the tables know it.

    ``kind``: its name (the sidecar's and the config's); ``suffix``: what a system's name adds (``+mbr``);
    ``label``: what a table's row adds (``doc-trans, MBR``); ``block``: its config block (``mbr``);
    ``point``: the regular expression of a point's parameter after ``-`` (``doc-trans+mbr-4``: a candidate count of
    the MBR plot), None without points; ``pooled``: a selection over the strategies' outputs, made by a rule of its
    own (``rule``, running the CLI of ``module``) instead of the strategy's decode rule with ``options``;
    ``strategies``: the configured strategies it applies to (a pooled variant: its candidates); ``needs``: the
    backend capabilities it needs (:meth:`docnmt.decode.backend.Backend.lacks`); ``options``: the decode CLI's
    options of a system (config, system name) -> list; ``describe``: one sentence for the docs' list.
    """

    kind: str
    suffix: str
    label: str
    block: str
    describe: str
    order: int = 100
    point: str | None = None
    pooled: bool = False
    rule: str | None = None
    module: str = ""
    strategies: Callable[[dict], list[str]] = _none
    needs: Callable[[dict], list[str]] = _none
    options: Callable[[dict, str], list[str]] | None = None
    #: the checkpoint name (a metrics.comet key) of a learned metric it selects by, else None: the decode then needs
    #: unbabel-comet's environment (docnmt.workflow.metrics)
    learned: Callable[[dict], str | None] = lambda config: None
    #: the point's parameter from its text: int for a candidate count
    point_type: Callable[[str], object] = field(default=int)
    #: what is wrong with a validated config's block that its schema cannot say ("KEY': why"), else None
    check: Callable[[dict], str | None] = lambda config: None
    #: also decoded on ctxpro's sets, whose accuracy reads the translations (ContraPro's scoring needs no decode):
    #: a variant whose search changes what the context does (CAD), not a selection among the test set's candidates
    context_sets: bool = False

    def system(self, strategy: str = POOLED, point=None) -> str:
        """The system's name: ``doc-trans+mbr``, ``doc-trans+mbr-4``, ``pooled+docmbr``."""
        return f"{strategy}{self.suffix}" + ("" if point is None else f"-{point}")

    def systems(self, config: dict) -> list[str]:
        """The systems a config asks for (the configured strategies it applies to; a pooled variant's one system)."""
        if self.pooled:
            return [self.system()] if self.strategies(config) else []
        return [self.system(s) for s in self.strategies(config)]


def _declared(module_name: str) -> tuple[Variant, ...]:
    module = importlib.import_module(module_name)
    declared = getattr(module, "VARIANT", ())
    declared = declared if isinstance(declared, tuple) else (declared,)
    if not declared or not all(isinstance(v, Variant) for v in declared):
        raise ValueError(f"module {module_name!r} assigns VARIANT but declares no docnmt.decode.variants.Variant")
    return tuple(declared)


@lru_cache(maxsize=1)
def builtin_modules() -> tuple[str, ...]:
    """The modules of this package that assign ``VARIANT`` at their top level, read from their sources (nothing is
    imported to find them), once per process."""
    from ..textio import declaring_modules

    return declaring_modules(__package__, Path(__file__).resolve().parent, "VARIANT")


@lru_cache(maxsize=1)
def variants() -> dict[str, Variant]:
    """Every declared variant by kind, in their order (then by kind)."""
    declared = sorted((v for name in builtin_modules() for v in _declared(name)), key=lambda v: (v.order, v.kind))
    found: dict[str, Variant] = {}
    for variant in declared:
        if variant.kind in found or any(variant.suffix == v.suffix for v in found.values()):
            raise ValueError(f"variant {variant.kind!r} ({variant.suffix}) is declared twice")
        found[variant.kind] = variant
    return found


def variant(kind: str) -> Variant:
    """The variant of that kind; a ValueError naming the known ones where none is."""
    try:
        return variants()[kind]
    except KeyError:
        raise ValueError(f"no variant {kind!r}; known: {', '.join(variants())}") from None


def config_problem(config: dict) -> str | None:
    """The first variant's complaint about a validated config (``"docmbr.strategies': why"``), else None: the
    config's check (docnmt.config, through its seam) raises it as a ConfigError."""
    return next((problem for v in variants().values() if (problem := v.check(config))), None)


def system_name(strategy: str, count=None, kind: str = "mbr") -> str:
    """``doc-trans`` -> ``doc-trans+mbr`` (``count``: a point, ``doc-trans+mbr-4``; ``kind="qe"``: ``doc-trans+qe``)."""
    return variant(kind).system(strategy, count)


def parse_system(name: str) -> tuple[str, str | None, object]:
    """A system's (strategy, variant kind or None, point parameter or None): ``("doc-trans", "mbr", 4)``,
    ``("pooled", "docmbr", None)``, ``("doc-trans", None, None)``."""
    for kind, declared in variants().items():
        match = re.fullmatch(rf"(.+?){re.escape(declared.suffix)}(?:-({declared.point}))?", name) \
            if declared.point else re.fullmatch(rf"(.+?){re.escape(declared.suffix)}", name)
        if match:
            point = match.group(2) if declared.point else None
            return match.group(1), kind, None if point is None else declared.point_type(point)
    return name, None, None


def strategy_of(name: str) -> str:
    """The strategy a system decodes with (``doc-trans+mbr``: doc-trans); a pooled system's is :data:`POOLED`."""
    return parse_system(name)[0]


def is_pooled(name: str) -> bool:
    """Whether a system is a pooled variant's (``pooled+docmbr``): no one strategy's decode."""
    kind = parse_system(name)[1]
    return kind is not None and variant(kind).pooled


def label(name: str) -> str:
    """A system as the tables' rows show it: ``doc-trans``; ``doc-trans, MBR``; ``doc-trans, MBR (4)``;
    ``doc-trans, QE reranked``; ``pooled, document MBR``."""
    strategy, kind, point = parse_system(name)
    if kind is None:
        return strategy
    return f"{strategy}, {variant(kind).label}" + ("" if point is None else f" ({point})")


def pattern(strategy: str) -> str:
    """The regular expression of a strategy's decode rule's {system} wildcard: the strategy alone, or with one of the
    variants its decode rule makes (not the pooled ones, whose rules are their own)."""
    alternatives = [re.escape(v.suffix) + (f"(-{v.point})?" if v.point else "")
                    for v in variants().values() if not v.pooled]
    return f"{re.escape(strategy)}({'|'.join(alternatives)})?"

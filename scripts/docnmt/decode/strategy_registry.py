"""The strategy registry: every search strategy's function with what the workflow, the CLIs and the tables know
of it (:class:`StrategyInfo`: the models it needs, its cost, its inputs, what its sidecar records).

:mod:`docnmt.decode.strategies` registers each strategy with :func:`strategy` when it is imported, and
re-exports these names: read the registry from there (``from docnmt.decode.strategies import STRATEGIES``).
The workflow makes one decode rule per configured strategy from it (``rules/decode.smk``, rule
:attr:`StrategyInfo.rule`); the CLI map (:mod:`docnmt.manual`) and the Slurm profile name those rules, and
``tests/test_docs.py`` checks both against it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

#: A strategy: (Decoder, documents) -> one list of hypotheses per document.
Strategy = Callable[..., list[list[str]]]


#: What target context a strategy decodes a sentence with, in words: the previous k-1 sentences of its own output
#: (doc-trans), of the first pass (2-pass), of the reference (cheating); those its decode records in its sidecar
#: (last-sentence's ``generated_context``); the earlier sentences of its own segment (full-segment); the window's
#: later sentences, which no sidecar records (first-sentence); the draft it improves (refine); none (sentence-level,
#: no-context).
TARGET_CONTEXTS = {
    "own": "its own translations of the previous sentences",
    "first-pass": "the first pass's translations of the previous sentences",
    "reference": "the reference's previous sentences",
    "recorded": "the window's generated context, as its decode recorded it",
    "segment": "its own translations of the earlier sentences of the same segment",
    "window": "the window's later sentences (not recorded)",
    "draft": "the draft it improves (another strategy's translation of the whole document)",
    "none": "no target context",
}


@dataclass(frozen=True)
class StrategyInfo:
    """A strategy as the workflow, the CLIs and the tables know it: its function and what it needs and costs.

    ``cost``: decoder forward passes as a factor of N*L (the paper's Table 1); ``models``: the models it decodes
    with; ``reference``: it needs the reference (cheating); ``first_pass``: it needs the sentence-level hypotheses
    (2-pass), or does so in doc-trans's parallel mode (``parallel_first_pass``); ``contrapro``: it applies to
    ContraPro, whose sentences are not adjacent (not full-segment, the paper's "-"); ``sidecar``: the keys its
    decode's sidecar records beyond every strategy's (:mod:`docnmt.decode.cli`); ``guided``: it takes the
    sentence-level hypotheses where given (not needing them); ``prompted``: only a prompting backend has it.
    """

    name: str
    run: Strategy
    cost: str
    models: tuple[str, ...] = ("document",)
    reference: bool = False
    first_pass: bool = False
    parallel_first_pass: bool = False
    contrapro: bool = True
    sidecar: tuple[str, ...] = ()
    #: it uses the sentence-level hypotheses where it is given them, without needing them (full-segment: the guide
    #: of :mod:`docnmt.decode.realign`); the workflow gives them where the task decodes sentence-level
    guided: bool = False
    #: each sentence's hypothesis depends on that sentence alone (sentence-level, no-context): a decode of only some
    #: lines (``--only-lines``, a ctxpro set's example sentences) gives them the hypotheses a whole decode would
    sentence_alone: bool = False
    #: the capabilities it needs of a backend (:data:`docnmt.decode.backend.CAPABILITIES`): ``conversation`` for a
    #: strategy that exists only where the prompt is a conversation (source-primed), ``beam_search`` for one that
    #: keeps an n-best list (doc-trans-beam)
    needs: tuple[str, ...] = ()
    #: the target context each sentence is decoded with, for the comparison page (:mod:`docnmt.score.compare`): one
    #: of :data:`TARGET_CONTEXTS`
    target_context: str = "own"
    #: it improves another strategy's translation (refine): the config's ``<name>.draft`` names that strategy, whose
    #: decode the workflow gives it (the decode CLI's ``--draft``)
    drafted: bool = False

    def __post_init__(self):
        if self.target_context not in TARGET_CONTEXTS:
            raise ValueError(f"strategy {self.name!r}: target_context {self.target_context!r} is not one of "
                             f"{', '.join(TARGET_CONTEXTS)}")

    @property
    def prompted(self) -> bool:
        """Whether it exists only for backends whose prompt is a conversation."""
        return "conversation" in self.needs

    @property
    def rule(self) -> str:
        """The workflow's decode rule: an identifier (decode_2_pass for 2-pass, decode_doc_trans_beam, ...)."""
        return f"decode_{self.name.replace('-', '_')}"

    def cost_factor(self, k: int, h: int) -> int:
        """Its :attr:`cost` as a number: decoder forward passes per sentence token (``O(NLh)`` at h=12: 12;
        ``O(2NL)``: 2), the order in which the workflow starts its decodes (the costliest first)."""
        notation = self.cost.removeprefix("O(").removesuffix(")")
        digits = "".join(c for c in notation if c.isdigit())
        factor = int(digits) if digits else 1
        for symbol in notation:
            factor *= {"k": k, "h": h}.get(symbol, 1)
        return factor

    def needs_first_pass(self, doc_trans_mode: str = "sequential", guessed: bool = False) -> bool:
        """Does it start from the sentence-level hypotheses (2-pass; doc-trans in its parallel mode, unless
        ``guessed``: its round 1's contexts guessed by the document model, as docnmt-translate does)?"""
        return self.first_pass or (self.guesses(doc_trans_mode) and not guessed)

    def guesses(self, doc_trans_mode: str = "sequential") -> bool:
        """Does it guess its contexts where it has no first pass (parallel doc-trans: ``Decoder.guess_searcher``)?"""
        return self.parallel_first_pass and doc_trans_mode == "parallel"

    def models_needed(self, doc_trans_mode: str = "sequential", guessed: bool = False) -> set[str]:
        """The models it decodes with, the sentence-level one included where it starts from its hypotheses."""
        return set(self.models) | ({"sentence"} if self.needs_first_pass(doc_trans_mode, guessed) else set())


#: Every strategy (in this module's order): the registry the workflow's rules, the CLIs and the tables read.
STRATEGIES: dict[str, StrategyInfo] = {}
#: Each strategy's function (``STRATEGIES[name].run``).
REGISTRY: dict[str, Strategy] = {}
#: The seed's cost table (decoder forward passes) per strategy, as a factor of N*L.
COST: dict[str, str] = {}


def models_needed(strategy: str, doc_trans_mode: str = "sequential", guessed: bool = False) -> set[str]:
    """The models a strategy decodes with: sentence-level the sentence-level model; 2-pass and parallel
    doc-trans both (they start from its hypotheses; parallel doc-trans only the document model where it
    ``guessed`` its round 1's contexts instead); every other strategy the document-level model."""
    return STRATEGIES[strategy].models_needed(doc_trans_mode, guessed)


def not_for_backend(strategy: str, backend_name: str) -> str | None:
    """Why a strategy does not apply to a backend's models, in words (None: it does): it needs a capability the
    backend's description lacks (:meth:`docnmt.decode.backend.Backend.lacks`), such as a prompt that is a conversation."""
    from .backend import backend, names

    info, described = STRATEGIES[strategy], backend(backend_name)
    if info.prompted and not described.conversation:
        return (f"{strategy} is for {names(lambda b: b.conversation, ' or ')} models, whose prompt is a "
                f"conversation; {backend_name} models have none")
    lacking = described.lacks(info.needs)
    return f"{strategy} needs what {backend_name} models lack: {lacking}" if lacking else None


def strategies_for(backend_name: str) -> list[str]:
    """The strategies, in the registry's order, that apply to a backend's models (:func:`not_for_backend`)."""
    return [name for name in STRATEGIES if not_for_backend(name, backend_name) is None]


def strategy(name: str, cost: str, **needs):
    """Registers a strategy's function with its :class:`StrategyInfo` (``needs``: its fields beyond the cost)."""

    def register(func):
        STRATEGIES[name] = StrategyInfo(name, func, cost, **needs)
        REGISTRY[name] = func
        COST[name] = cost
        func.strategy_name = name
        return func

    return register

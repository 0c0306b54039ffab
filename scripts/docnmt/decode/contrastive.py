"""Context-aware (contrastive) decoding, CAD: search beyond 2023 for the strategies that decode with a target context.

Shi et al. (NAACL 2024, "Trusting Your Evidence") score each next token by how much more likely the context makes
it::

    score(y_t) = (1 + alpha) * log p(y_t | x, c, y_<t) - alpha * log p(y_t | x, y_<t)

where ``c`` is the context and the second term the same model without it. Source-contrastive decoding (Sennrich,
Vamvas and Mohammadshahi, EACL 2024) applies the idea to MT. Here the context is a document model's: for a
concatenation model, the window's earlier source sentences and the forced target context; the term without it is
the current sentence alone, as no-context decodes it. ``alpha * (log p(y|x,c) - log p(y|x))`` is alpha times the
pointwise CXMI (:mod:`docnmt.score.cxmi`): CAD amplifies what the context adds.

Each request with a context carries its contrast (``Request.contrast``, made by ``Decoder(contrastive=True)``); a
searcher with the capability ``contrastive`` (:class:`docnmt.decode.backend.Backend`) runs both sides in lockstep,
each with its own cache, and its beam search, length normalization and the strategies (doc-trans-beam's h included)
work on the combined scores. A request without context (a document's first sentence) is searched as it is. With
``alpha = 0`` the combined scores are the context side's, exactly: the output equals the strategy's without CAD.
Cost: about twice the decoder positions of the strategy (the side without context has no prefix to prefill).

The strategies it applies to (:func:`applies`) are those that decode a sentence with a target context (doc-trans,
doc-trans-beam, 2-pass, cheating; source-primed on a prompting backend); the systems are ``STRATEGY+cad``
(:data:`VARIANT`, config ``cad``), and ``STRATEGY+cad-ALPHA`` the points of the report's alpha sweep.
"""

from __future__ import annotations

from ..option_ranges import NONNEGATIVE
from .variants import Variant

#: Shi et al.'s alpha by default (config cad.alpha).
DEFAULT_ALPHA = 0.5
#: The target contexts of the strategies CAD applies to (``StrategyInfo.target_context``): their own earlier
#: output, the first pass's, the reference's.
CONTEXTS = ("own", "first-pass", "reference")


def applies(strategy: str) -> bool:
    """Whether a strategy decodes a sentence with a target context (CAD then has a context to contrast)."""
    from .strategies import STRATEGIES

    return STRATEGIES[strategy].target_context in CONTEXTS


def contrastive_strategies() -> list[str]:
    """The registered strategies CAD applies to."""
    from .strategies import STRATEGIES

    return [name for name in STRATEGIES if applies(name)]


def refusal(strategy: str) -> str | None:
    """Why CAD does not apply to a strategy, in one line; None where it does."""
    if applies(strategy):
        return None
    return (f"{strategy} decodes without a target context: context-aware decoding applies to "
            f"{', '.join(contrastive_strategies())}")


def add_arguments(parser) -> None:
    """The decoding CLIs' ``--cad ALPHA``."""
    parser.add_argument("--cad", type=NONNEGATIVE, metavar="ALPHA",
                        help="context-aware (contrastive) decoding: each step's scores are (1 + ALPHA) log p(y|x,c) - "
                             "ALPHA log p(y|x), the second term the same model on the current sentence alone (0: the "
                             "strategy's own output); for the strategies with a target context")


def check_args(parser, strategy: str, backend_name: str, alpha: float | None) -> None:
    """A usage error where ``--cad`` cannot run: a strategy without target context, a backend without the
    capability (its name said)."""
    from .backend import backend, names

    if alpha is None:
        return
    why = refusal(strategy)
    if why:
        parser.error(f"--cad: {why}")
    lacking = backend(backend_name).lacks(["contrastive"])
    if lacking:
        parser.error(f"--cad: {lacking}: run it on {names(lambda other: other.can('contrastive'), ' or ')} models")


def set_alpha(searcher, alpha: float) -> None:
    """The searcher's alpha for the requests that carry a contrast."""
    searcher.cad_alpha = float(alpha)


def alpha_text(alpha: float) -> str:
    """An alpha as a sweep's system name shows it: ``doc-trans+cad-0.25``, ``doc-trans+cad-1``."""
    return f"{float(alpha):g}"


def sweep_system(strategy: str, alpha: float, configured: float) -> str:
    """The system of a sweep's point: the strategy's +cad system at the configured alpha, else its point."""
    return VARIANT.system(strategy, None if float(alpha) == float(configured) else alpha_text(alpha))


def record(alpha: float) -> dict:
    """The sidecar's entry."""
    return {"alpha": alpha}


# ---- the variant: STRATEGY+cad, and STRATEGY+cad-ALPHA for the sweep -----------------------------------------------
def _cad_strategies(config: dict) -> list[str]:
    return [s for s in config["cad"]["strategies"] if s in config["strategies"]]


def _cad_options(config: dict, system: str) -> list[str]:
    from .variants import parse_system

    point = parse_system(system)[2]
    return ["--cad", str(config["cad"]["alpha"] if point is None else point)]


def check_config(config: dict) -> str | None:
    """A strategy of cad.strategies without a target context (the config key and why), else None."""
    for name in config["cad"]["strategies"]:
        why = refusal(name)
        if why:
            return f"cad.strategies': {why}"
    return None


def _point(text: str) -> float:
    return float(text)


VARIANT = Variant(kind="cad", suffix="+cad", label="CAD", block="cad", order=30, point=r"[0-9]+(?:\.[0-9]+)?",
                  point_type=_point, describe="context-aware (contrastive) decoding with the strategy's target context "
                                              "(cad.strategies, cad.alpha)",
                  strategies=_cad_strategies, needs=lambda config: ["contrastive"], options=_cad_options,
                  check=check_config, context_sets=True)

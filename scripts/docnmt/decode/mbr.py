"""Minimum Bayes risk (MBR) selection over a strategy's candidates: search beyond the paper.

A strategy normally keeps the beam's best hypothesis of each search. With MBR selection it keeps the candidate
with the highest expected utility against the other candidates, which stand in for references (Kumar & Byrne
2004; Freitag et al. 2023). For candidates c_1..c_n::

    selected = argmax_i  sum_j  w_j * u(c_i, c_j)        (j over all n candidates, i itself included)

the first such i on a tie (the beam's order). The weights are the model's distribution over the candidates: for
samples, which the model drew by their probability, w_j = 1/n (duplicates included, each counts: the Monte Carlo
estimate); for a beam's n-best, which holds each candidate once however probable, w_j = p(c_j) / sum_k p(c_k)
(Kumar & Byrne's posterior over the n-best). Uniform weights on a beam's n-best let a cluster of improbable,
similar candidates outvote the probable one: on the tiny LLM of ``make demo-llm``, over its complete candidates,
MBR then lost 18 to 23 BLEU against the beam's best (docs/decoding.md, "MBR selection"). doc-trans-beam's final
document hypotheses weigh alike: their scores are sums of length-normalized scores, not probabilities. With one candidate it is that candidate: MBR over one candidate
is the strategy itself. Only complete candidates are compared (:attr:`docnmt.decode.requests.Hypothesis.complete`: a
causal LM's answer that ended with as many lines as asked; an answer that runs on with another line holds the
consensus and more, which chrF's recall weighting prefers), all of them where none is; the selector counts both.

Candidates (:class:`Settings`):

- ``beam``: the n-best list of the strategy's own search, beam size = candidate count (default 12);
- ``sampling``: epsilon sampling (Freitag et al., Findings of EMNLP 2023): ``count`` samples of each search
  request from the model's distribution with every token of probability below ``epsilon`` removed, under a
  seed (:mod:`docnmt.decode.sampling`).

What is compared is the words (subword joins removed) of what the strategy keeps: the kept segment of a window's
hypothesis (last-sentence keeps the last one), the continuation after the forced context, a full segment's whole
window. doc-trans chooses each sentence before the next one is searched, so the chosen sentence is the next one's
target context, as its beam-best is without MBR. doc-trans-beam chooses among its final document hypotheses
with a document-level utility: the same metric over each document's sentences joined with spaces.

Utilities (:data:`UTILITIES`):

- ``chrf``: sentence chrF (character 6-grams, beta 2) from ``fastchrf`` (Vamvas & Sennrich 2024), the fast
  pairwise implementation; equal to sacrebleu's ``CHRF().sentence_score`` (tested within 1e-6);
- ``chrf++``: sentence chrF++ (sacrebleu's ``CHRF(word_order=2)``: character 6-grams and word 2-grams), the
  metric of the tables; exact, and slower (pure Python, n^2 scores per selection).

- ``comet:NAME``: COMET (a reference-based checkpoint of the config's ``metrics.comet``, :mod:`docnmt.score.comet`)
  of candidate i against candidate j as its reference, with the source: n^2 forward passes of the metric per
  selection, scored in unbabel-comet's environment (:mod:`docnmt.decode.metric_client`).

QE reranking (``qe:NAME``, systems ``doc-trans+qe``): the candidate with the highest reference-free score of a QE
checkpoint (CometKiwi) given the source, n forward passes per selection; the candidates are the beam's n-best.
Learned metrics compare detokenized text, with the kept sentence's source (the window's, for a full segment; the
document's, for doc-trans-beam).

The selection itself (:class:`~docnmt.decode.selection.Selector`) is in :mod:`docnmt.decode.selection`, which
needs the utility's package; this module (settings, the systems' names) needs none, so the tables import it.

Cost: ``Selector.evaluations`` counts utility evaluations (n^2 per selection of n candidates), and
``Selector.selections`` the selections made; the decode's sidecar records both (the tables' cost table).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from ..option_ranges import EPSILON, POSITIVE, POSITIVE_INT, SEED
from .variants import Variant

#: The utilities MBR selection can use: name -> what it is (the tables' notes quote it).
UTILITIES = {
    "chrf": "sentence chrF (fastchrf: character 6-grams, beta 2; equal to sacrebleu's sentence chrF)",
    "chrf++": "sentence chrF++ (sacrebleu CHRF(word_order=2): character 6-grams, word 2-grams, beta 2)",
}
#: The prefixes of a learned utility (the rest is a checkpoint's name in the config's metrics.comet): COMET as
#: MBR's utility, and QE reranking.
LEARNED = {"comet": "COMET", "qe": "QE"}
#: Where the candidates come from.
CANDIDATES = ("beam", "sampling")
#: Freitag et al. (2023)'s epsilon for epsilon sampling.
DEFAULT_EPSILON = 0.02
#: The candidate count (and beam size) by default.
DEFAULT_COUNT = 12
#: The package each utility needs, and how to get it.
PACKAGES = {"chrf": ("fastchrf", "pip install fastchrf==0.2.1"), "chrf++": ("sacrebleu", "pip install sacrebleu==2.6.0")}


class SettingsError(ValueError):
    """A bad MBR setting: the message says which and what is expected."""


@dataclass(frozen=True)
class Settings:
    """How MBR selection gets its candidates and compares them."""

    candidates: str = "beam"
    count: int = DEFAULT_COUNT
    utility: str = "chrf"
    epsilon: float = DEFAULT_EPSILON
    seed: int | None = None

    def __post_init__(self):
        if self.candidates not in CANDIDATES:
            raise SettingsError(f"MBR candidates must be one of {', '.join(CANDIDATES)}, got {self.candidates!r}")
        if not isinstance(self.count, int) or isinstance(self.count, bool) or self.count < 1:
            raise SettingsError(f"the MBR candidate count must be an integer >= 1, got {self.count!r}")
        if self.utility not in UTILITIES and not self.learned:
            raise SettingsError(f"the MBR utility must be one of {', '.join(UTILITIES)} or comet:NAME, "
                                f"got {self.utility!r}")
        if self.qe and self.candidates != "beam":
            raise SettingsError("QE reranking chooses among the beam's n-best: candidates must be beam")
        if self.candidates == "sampling":
            if self.seed is None:
                raise SettingsError("MBR with sampled candidates needs a seed (--mbr-seed), so that its candidates "
                                    "can be drawn again")
            if not 0.0 <= self.epsilon < 1.0:
                raise SettingsError(f"epsilon must be in [0, 1), got {self.epsilon!r}")

    @property
    def learned(self) -> str | None:
        """The checkpoint name of a learned utility (``comet:NAME``, ``qe:NAME``), else None."""
        kind, sep, name = self.utility.partition(":")
        return name if sep and kind in LEARNED and name else None

    @property
    def qe(self) -> bool:
        """QE reranking (``qe:NAME``) rather than MBR."""
        return self.learned is not None and self.utility.startswith("qe:")

    def describe(self) -> str:
        """One line for logs, sidecars and the tables' notes."""
        source = (f"{self.count} beam candidates" if self.candidates == "beam" else
                  f"{self.count} epsilon samples (epsilon {self.epsilon}, seed {self.seed})")
        if self.qe:
            return f"QE reranking of {source} by the reference-free checkpoint {self.learned}"
        utility = f"COMET (checkpoint {self.learned})" if self.learned else UTILITIES[self.utility]
        return f"MBR over {source}, utility {utility}"

    def record(self) -> dict:
        """The settings as the sidecar records them."""
        return {"candidates": self.candidates, "count": self.count, "utility": self.utility,
                "epsilon": self.epsilon if self.candidates == "sampling" else None,
                "seed": self.seed if self.candidates == "sampling" else None}


def add_arguments(parser) -> None:
    """The CLIs' MBR options (``--mbr`` switches it on)."""
    group = parser.add_argument_group("MBR selection (docnmt.decode.mbr)")
    group.add_argument("--mbr", action="store_true",
                       help="choose each kept hypothesis among candidates by expected utility instead of the beam's best")
    group.add_argument("--mbr-candidates", choices=CANDIDATES, default="beam",
                       help="the beam's n-best (beam size = --mbr-count) or epsilon samples; default: %(default)s")
    group.add_argument("--mbr-count", type=POSITIVE_INT, default=DEFAULT_COUNT, help="candidates per search; default: %(default)s")
    group.add_argument("--mbr-utility", default="chrf",
                       help=f"{', '.join(UTILITIES)}, or comet:NAME (with --comet-checkpoint); default: %(default)s")
    group.add_argument("--qe-rerank", action="store_true",
                       help="instead of MBR: keep the candidate of the beam's --mbr-count best with the highest QE "
                            "score of --comet-checkpoint (reference-free)")
    add_comet_arguments(group)
    group.add_argument("--mbr-epsilon", type=EPSILON, default=DEFAULT_EPSILON,
                       help="epsilon sampling: tokens below this probability are never drawn; default: %(default)s")
    group.add_argument("--mbr-seed", type=SEED, help="epsilon sampling: the seed (required)")


def add_comet_arguments(group) -> None:
    """The options of a selection's COMET scorer (MBR's comet:NAME, QE reranking, document-level MBR's comet:NAME)."""
    group.add_argument("--comet-checkpoint", metavar="NAME=FOLDER",
                       help="the local COMET checkpoint of comet:NAME or of --qe-rerank (docnmt.score.comet)")
    group.add_argument("--comet-env", type=Path,
                       help="where unbabel-comet's Python is: the JSON file of python -m docnmt.score.comet env "
                            "(default: this Python)")
    from .metric_client import DEFAULT_BATCH_SIZE, DEFAULT_TIMEOUT

    group.add_argument("--comet-batch-size", type=POSITIVE_INT, default=DEFAULT_BATCH_SIZE, metavar="SEGMENTS",
                       help="segments per forward pass of the COMET scorer (config metrics.batch_size); default: "
                            "%(default)s")
    group.add_argument("--comet-timeout", type=POSITIVE, default=DEFAULT_TIMEOUT, metavar="SECONDS",
                       help="the longest wait for the COMET scorer's answer (its loading included) before the decode "
                            "stops with one line; default: %(default)s")


def from_args(parser, args) -> Settings | None:
    """The settings of ``--mbr`` (None without it); a bad setting is a usage error that names it."""
    if args.mbr and args.qe_rerank:
        parser.error("--mbr and --qe-rerank are two selections: give one")
    if not (args.mbr or args.qe_rerank):
        return None
    name, given, _ = (args.comet_checkpoint or "").partition("=")
    if args.qe_rerank and not (name and given):
        parser.error("--qe-rerank needs --comet-checkpoint NAME=FOLDER")
    utility = f"qe:{name}" if args.qe_rerank else args.mbr_utility
    try:
        settings = Settings(candidates=args.mbr_candidates, count=args.mbr_count, utility=utility,
                            epsilon=args.mbr_epsilon, seed=args.mbr_seed)
    except SettingsError as err:
        parser.error(str(err))
    if settings.learned and not (given and name == settings.learned):
        parser.error(f"--mbr-utility {utility} needs --comet-checkpoint {settings.learned}=FOLDER")
    return settings


# ---- the variants: a strategy's decode with a selection, as the workflow and the tables name it -----------
def _configured(block: str):
    """The strategies of a config block's ``strategies`` that are configured strategies (QE reranking: none
    without its checkpoint)."""
    def chosen(config: dict) -> list[str]:
        if block == "qe_rerank" and config[block]["checkpoint"] is None:
            return []
        return [s for s in config[block]["strategies"] if s in config["strategies"]]
    return chosen


def _mbr_needs(config: dict) -> list[str]:
    return ["sampling"] if config["mbr"]["candidates"] == "sampling" else ["beam_search"]


def _mbr_options(config: dict, system: str) -> list[str]:
    """docnmt.decode.cli's MBR options for a system (doc-trans+mbr; doc-trans+mbr-4 with its own count)."""
    from .variants import parse_system

    count = parse_system(system)[2]
    settings = config["mbr"]
    args = ["--mbr", "--mbr-candidates", settings["candidates"], "--mbr-count", str(count or settings["count"]),
            "--mbr-utility", settings["utility"]]
    if settings["candidates"] == "sampling":
        args += ["--mbr-epsilon", str(settings["epsilon"]), "--mbr-seed", str(settings["seed"])]
    return args


#: ``doc-trans+mbr`` (``doc-trans+mbr-4``: a candidate count of the MBR plot other than the configured one) and
#: ``doc-trans+qe``: made by the strategy's decode rule with these options.
VARIANT = (
    Variant(kind="mbr", suffix="+mbr", label="MBR", block="mbr", order=10, point="[0-9]+",
            describe="MBR selection among each search's candidates (mbr.strategies)",
            strategies=_configured("mbr"), needs=_mbr_needs, options=_mbr_options,
            learned=lambda config: Settings(utility=config["mbr"]["utility"]).learned),
    Variant(kind="qe", suffix="+qe", label="QE reranked", block="qe_rerank", order=20,
            describe="QE reranking of each search's n-best (qe_rerank.strategies)",
            strategies=_configured("qe_rerank"), needs=lambda config: ["beam_search"],
            options=lambda config, system: ["--qe-rerank", "--mbr-count", str(config["qe_rerank"]["count"])],
            learned=lambda config: config["qe_rerank"]["checkpoint"]),
)

"""Minimum Bayes risk (MBR) selection over a strategy's candidates: search beyond the paper.

A strategy normally keeps the beam's best hypothesis of each search. With MBR selection it keeps the candidate
with the highest expected utility against the other candidates, which stand in for references (Kumar & Byrne
2004; Freitag et al. 2023). For candidates c_1..c_n (duplicates included, each counts)::

    selected = argmax_i  (1/n) * sum_j  u(c_i, c_j)        (j over all n candidates, i itself included)

the first such i on a tie (the beam's order). With one candidate it is that candidate: MBR over one candidate
is the strategy itself.

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

The selection itself (:class:`~docnmt.decode.selection.Selector`) is in :mod:`docnmt.decode.selection`, which
needs the utility's package; this module (settings, the systems' names) needs none, so the tables import it.

Cost: ``Selector.evaluations`` counts utility evaluations (n^2 per selection of n candidates), and
``Selector.selections`` the selections made; the decode's sidecar records both (the tables' cost table).
"""

from __future__ import annotations

from dataclasses import dataclass

#: The utilities MBR selection can use: name -> what it is (the tables' notes quote it).
UTILITIES = {
    "chrf": "sentence chrF (fastchrf: character 6-grams, beta 2; equal to sacrebleu's sentence chrF)",
    "chrf++": "sentence chrF++ (sacrebleu CHRF(word_order=2): character 6-grams, word 2-grams, beta 2)",
}
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
        if self.utility not in UTILITIES:
            raise SettingsError(f"the MBR utility must be one of {', '.join(UTILITIES)}, got {self.utility!r}")
        if self.candidates == "sampling":
            if self.seed is None:
                raise SettingsError("MBR with sampled candidates needs a seed (--mbr-seed), so that its candidates "
                                    "can be drawn again")
            if not 0.0 <= self.epsilon < 1.0:
                raise SettingsError(f"epsilon must be in [0, 1), got {self.epsilon!r}")

    def describe(self) -> str:
        """One line for logs, sidecars and the tables' notes."""
        source = (f"{self.count} beam candidates" if self.candidates == "beam" else
                  f"{self.count} epsilon samples (epsilon {self.epsilon}, seed {self.seed})")
        return f"MBR over {source}, utility {UTILITIES[self.utility]}"

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
    group.add_argument("--mbr-count", type=int, default=DEFAULT_COUNT, help="candidates per search; default: %(default)s")
    group.add_argument("--mbr-utility", choices=list(UTILITIES), default="chrf", help="default: %(default)s")
    group.add_argument("--mbr-epsilon", type=float, default=DEFAULT_EPSILON,
                       help="epsilon sampling: tokens below this probability are never drawn; default: %(default)s")
    group.add_argument("--mbr-seed", type=int, help="epsilon sampling: the seed (required)")


def from_args(parser, args) -> Settings | None:
    """The settings of ``--mbr`` (None without it); a bad setting is a usage error that names it."""
    if not args.mbr:
        return None
    try:
        return Settings(candidates=args.mbr_candidates, count=args.mbr_count, utility=args.mbr_utility,
                        epsilon=args.mbr_epsilon, seed=args.mbr_seed)
    except SettingsError as err:
        parser.error(str(err))


# ---- systems: a strategy's decode with MBR selection, as the workflow and the tables name it ----------------
#: A system's name is its strategy's, plus this for MBR selection (``doc-trans+mbr``; with a candidate count
#: other than the configured one, ``doc-trans+mbr-4``): its rule, its output files and its tables' row.
SUFFIX = "+mbr"


def system_name(strategy: str, count: int | None = None) -> str:
    """``doc-trans`` -> ``doc-trans+mbr`` (``count``: ``doc-trans+mbr-4``, a point of the candidate-count curve)."""
    return f"{strategy}{SUFFIX}" + ("" if count is None else f"-{count}")


def parse_system(name: str) -> tuple[str, bool, int | None]:
    """A system's (strategy, with MBR, candidate count or None for the configured one)."""
    if SUFFIX not in name:
        return name, False, None
    strategy, rest = name.split(SUFFIX, 1)
    return strategy, True, int(rest[1:]) if rest.startswith("-") else None


def label(name: str) -> str:
    """A system as the tables' rows show it: ``doc-trans``; ``doc-trans, MBR``; ``doc-trans, MBR (4)``."""
    strategy, with_mbr, count = parse_system(name)
    if not with_mbr:
        return strategy
    return f"{strategy}, MBR" + ("" if count is None else f" ({count})")

"""MBR selection's utilities and selector, and QE reranking (:mod:`docnmt.decode.mbr` describes the rules and the
settings).

Needs the utility's package at run time: ``fastchrf`` for chrF, ``sacrebleu`` for chrF++; a learned utility
(``comet:NAME``, ``qe:NAME``) a scorer instead (:class:`docnmt.decode.metric_client.MetricClient`), which scores in
unbabel-comet's environment.
"""

from __future__ import annotations

import math
from typing import Callable, Sequence

from .mbr import PACKAGES, Settings, SettingsError


def _require(utility: str):
    package, install = PACKAGES[utility]
    try:
        return __import__(package)
    except ImportError as err:
        raise SettingsError(f"the MBR utility {utility} needs the package {package}, which is not installed "
                            f"({install}; make setup installs it)") from err


def pairwise_function(utility: str) -> Callable[[Sequence[str]], list[list[float]]]:
    """The n x n matrix of ``utility(hypothesis i, pseudo-reference j)`` over a list of texts."""
    _require(utility)
    if utility == "chrf":
        from fastchrf import pairwise_chrf

        def pairwise(texts):
            return pairwise_chrf([list(texts)], [list(texts)])[0]
    else:
        from sacrebleu.metrics import CHRF

        metric = CHRF(word_order=2)

        def pairwise(texts):
            return [[metric.sentence_score(h, [r]).score for r in texts] for h in texts]
    return pairwise


def comet_pairwise(scorer, texts: Sequence[str], source: str | Sequence[str]) -> list[list[float]]:
    """COMET of candidate i (``mt``) against candidate j (``ref``), with the source (one for all, or candidate i's
    own): one request of n^2 triples."""
    n = len(texts)
    sources = [source] * n if isinstance(source, str) else list(source)
    scores = scorer.score([sources[i] for i in range(n) for _ in range(n)], [texts[i] for i in range(n) for _ in range(n)],
                          [texts[j] for _ in range(n) for j in range(n)])
    return [scores[i * n:(i + 1) * n] for i in range(n)]


class Selector:
    """Chooses among candidates by expected utility, or by QE (module docstring); counts what it evaluates.

    ``scorer``: a learned utility's (``comet:NAME``, ``qe:NAME``); ``prepare``: what a learned metric reads of a
    candidate's or a source's text (the workflow's: subword joins removed and detokenized)."""

    def __init__(self, settings: Settings, scorer=None, prepare: Callable[[str, str], str] | None = None):
        self.settings = settings
        if settings.learned and scorer is None:
            raise SettingsError(f"the utility {settings.utility} needs a scorer of checkpoint {settings.learned}")
        self._scorer = scorer
        self._prepare = prepare or (lambda text, side: text)
        self._pairwise = None if settings.learned else pairwise_function(settings.utility)
        self.evaluations = 0
        self.selections = 0
        #: candidates left out of a selection as incomplete (a causal LM's run-on or cut answers), and the
        #: selections that had no complete candidate (then all of them were compared)
        self.incomplete = 0
        self.without_complete = 0

    def expected(self, texts: Sequence[str], source: str = "", logprobs: Sequence[float] | None = None) -> list[float]:
        """Each candidate's expected utility against all candidates (itself included) as pseudo-references: their
        mean for samples (or without ``logprobs``), each weighted by its probability under the model among the
        candidates (the softmax of ``logprobs``) for a beam's n-best (:func:`weights`)."""
        if self._scorer is not None:
            matrix = comet_pairwise(self._scorer, [self._prepare(t, "target") for t in texts],
                                    self._prepare(source, "source"))
        else:
            matrix = self._pairwise(texts)
        self.evaluations += len(texts) ** 2
        weight = self.weights(len(texts), logprobs)
        return [sum(w * u for w, u in zip(weight, row)) for row in matrix]

    def weights(self, n: int, logprobs: Sequence[float] | None = None) -> list[float]:
        """The pseudo-references' weights: uniform for samples, which the model drew by its probabilities (the mean
        is the Monte Carlo estimate of the expectation); for a beam's n-best, which holds each candidate once
        whatever its probability, the model's probabilities renormalized over the candidates."""
        if logprobs is None or self.settings.candidates != "beam":
            return [1.0 / n] * n
        top = max(logprobs)
        mass = [math.exp(lp - top) for lp in logprobs]
        return [m / sum(mass) for m in mass]

    def quality(self, texts: Sequence[str], source: str) -> list[float]:
        """Each candidate's QE score given the source (n forward passes of the metric)."""
        self.evaluations += len(texts)
        return self._scorer.score([self._prepare(source, "source")] * len(texts),
                                  [self._prepare(t, "target") for t in texts])

    def select(self, texts: Sequence[str], source: str = "", complete: Sequence[bool] | None = None,
               logprobs: Sequence[float] | None = None) -> int:
        """The index of the chosen candidate (the first on a tie; 0 for a single candidate). ``source``: the kept
        text's source, which a learned metric reads. ``complete``: which candidates are complete answers
        (:class:`docnmt.decode.requests.Hypothesis`); the others are left out of the selection (as pseudo-references too)
        where any is complete, and counted. ``logprobs``: the candidates' log-probabilities under the model, which
        weigh a beam's n-best as pseudo-references (:meth:`weights`)."""
        if not texts:
            raise ValueError("MBR selection needs at least one candidate")
        self.selections += 1
        kept = list(range(len(texts)))
        if complete is not None:
            usable = [i for i in kept if complete[i]]
            if usable:
                self.incomplete += len(kept) - len(usable)
                kept = usable
            else:
                self.without_complete += 1
        if len(kept) == 1:
            return kept[0]
        chosen = [texts[i] for i in kept]
        scores = self.quality(chosen, source) if self.settings.qe else \
            self.expected(chosen, source, None if logprobs is None else [logprobs[i] for i in kept])
        return kept[max(range(len(kept)), key=lambda i: (scores[i], -i))]

    def record(self) -> dict:
        record = {**self.settings.record(), "selections": self.selections, "utility_evaluations": self.evaluations,
                  "incomplete_left_out": self.incomplete, "selections_without_complete": self.without_complete}
        if self._scorer is not None:
            record["metric"] = self._scorer.record()
        return record

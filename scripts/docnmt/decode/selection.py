"""MBR selection's utilities and selector (:mod:`docnmt.decode.mbr` describes the rule and the settings).

Needs the utility's package at run time: ``fastchrf`` for chrF, ``sacrebleu`` for chrF++.
"""

from __future__ import annotations

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


class Selector:
    """Chooses among candidates by expected utility (module docstring); counts what it evaluates."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self._pairwise = pairwise_function(settings.utility)
        self.evaluations = 0
        self.selections = 0

    def expected(self, texts: Sequence[str]) -> list[float]:
        """Each candidate's mean utility against all candidates (itself included)."""
        matrix = self._pairwise(texts)
        self.evaluations += len(texts) ** 2
        return [sum(row) / len(texts) for row in matrix]

    def select(self, texts: Sequence[str]) -> int:
        """The index of the chosen candidate (the first on a tie; 0 for a single candidate)."""
        if not texts:
            raise ValueError("MBR selection needs at least one candidate")
        self.selections += 1
        if len(texts) == 1:
            return 0
        scores = self.expected(texts)
        return max(range(len(texts)), key=lambda i: (scores[i], -i))

    def record(self) -> dict:
        return {**self.settings.record(), "selections": self.selections, "utility_evaluations": self.evaluations}

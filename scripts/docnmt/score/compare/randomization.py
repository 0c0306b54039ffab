"""Paired approximate randomization, computed the same way here and in the page's script (``page.js``), so that a
filter in the browser gives the numbers Python gives for the same segments, to the last printed digit.

The test (Riezler and Maxwell 2005, as sacrebleu's ``--paired-ar`` and Marot do): for each of :data:`TRIALS` trials,
each segment's pair of outputs (baseline, system) is swapped with probability 1/2; the trial's difference of the
metric is computed from the swapped sums. The p-value is ``(count + 1) / (trials + 1)``, ``count`` the trials whose
absolute difference is at least the observed one.

What makes both sides agree:

- the swaps come from one generator both implement, Mulberry32 (32-bit state, seeded with :data:`SEED`): trial by
  trial, one 32-bit draw per 32 segments, segment ``i`` of the block swapped where bit ``i % 32`` is set;
- a trial's swapped sum is added up in the same order (eight segments at a time: :func:`paired_test`);
- a metric is computed from sums of per-segment statistics, summed in segment order: sacrebleu's sufficient
  statistics for BLEU, chrF++ and TER (:func:`bleu`, :func:`chrf`, :func:`ter` are sacrebleu's formulas), the
  segment scores themselves for a segment-level metric (:func:`mean`), and each sentence's pronoun counts per
  class for pronoun F1 (:func:`f1`, micro-averaged over the sentences as the tables' scorer does).
"""

from __future__ import annotations

import math
from typing import Callable, Sequence

import numpy as np

#: The trials of every test, and the generator's seed (the page shows both).
TRIALS = 1000
SEED = 12345
#: The significance level the page marks.
ALPHA = 0.05


def mulberry32(seed: int):
    """Mulberry32's stream of unsigned 32-bit integers (the page's ``mulberry32``)."""
    state = seed & 0xFFFFFFFF
    while True:
        state = (state + 0x6D2B79F5) & 0xFFFFFFFF
        t = state
        t = ((t ^ (t >> 15)) * (t | 1)) & 0xFFFFFFFF
        t ^= (t + (((t ^ (t >> 7)) * (t | 61)) & 0xFFFFFFFF)) & 0xFFFFFFFF
        yield (t ^ (t >> 14)) & 0xFFFFFFFF


def swap_words(segments: int, trials: int = TRIALS, seed: int = SEED) -> np.ndarray:
    """The generator's words of every trial: a (trials, blocks) array of uint32, one per 32 segments; bit ``j`` of
    block ``b`` swaps segment ``32 b + j``."""
    draws = mulberry32(seed)
    blocks = (segments + 31) // 32
    return np.array([next(draws) for _ in range(trials * blocks)], dtype=np.uint64).reshape(trials, blocks)


def swaps(segments: int, trials: int = TRIALS, seed: int = SEED) -> np.ndarray:
    """Which segments each trial swaps: a (trials, segments) boolean array (:func:`swap_words`'s bits)."""
    words = swap_words(segments, trials, seed)
    bits = (words[:, :, None] >> np.arange(32, dtype=np.uint64)) & 1
    return bits.reshape(trials, -1)[:, :segments].astype(bool)


# ---- a metric from summed statistics (sacrebleu 2.x's formulas) ---------------------------------------------
def _log(value: float) -> float:
    return math.log(value) if value > 0 else -9999999999.0


def bleu(stats: Sequence[float]) -> float:
    """BLEU from summed sacrebleu statistics ``[hyp_len, ref_len, correct 1-4, total 1-4]`` (smooth exp, no
    effective order: the tables' signature)."""
    sys_len, ref_len, correct, total = stats[0], stats[1], stats[2:6], stats[6:10]
    bp = 1.0
    if sys_len < ref_len:
        bp = math.exp(1 - ref_len / sys_len) if sys_len > 0 else 0.0
    if not any(correct):
        return 0.0
    precisions = [0.0] * 4
    smooth = 1.0
    for n in range(4):
        if total[n] == 0:
            break
        if correct[n] == 0:
            smooth *= 2
            precisions[n] = 100.0 / (smooth * total[n])
        else:
            precisions[n] = 100.0 * correct[n] / total[n]
    return bp * math.exp((_log(precisions[0]) + _log(precisions[1]) + _log(precisions[2]) + _log(precisions[3])) / 4)


def chrf(stats: Sequence[float], beta: int = 2) -> float:
    """chrF++ from summed sacrebleu statistics ``[hyp, ref, match]`` per order (effective order, the tables'
    signature ``eff:yes``)."""
    eps, factor = 1e-16, beta ** 2
    avg_prec = avg_rec = 0.0
    effective = 0
    for i in range(len(stats) // 3):
        n_hyp, n_ref, n_match = stats[3 * i], stats[3 * i + 1], stats[3 * i + 2]
        prec = n_match / n_hyp if n_hyp > 0 else eps
        rec = n_match / n_ref if n_ref > 0 else eps
        if n_hyp > 0 and n_ref > 0:
            avg_prec += prec
            avg_rec += rec
            effective += 1
    if effective == 0:
        avg_prec = avg_rec = 0.0
    else:
        avg_prec /= effective
        avg_rec /= effective
    if avg_prec + avg_rec:
        return 100 * ((1 + factor) * avg_prec * avg_rec) / ((factor * avg_prec) + avg_rec)
    return 0.0


def ter(stats: Sequence[float]) -> float:
    """TER from summed statistics ``[edits, reference words]``."""
    edits, ref_len = stats[0], stats[1]
    if ref_len > 0:
        return 100 * edits / ref_len
    return 100.0 if edits > 0 else 0.0


def f1(stats: Sequence[float], weights: Sequence[float]) -> float:
    """Pronoun F1 from summed per-class counts ``[hypothesis, reference, match]`` of each class, weighted per class
    as :func:`docnmt.score.pronouns.score_counts` weights them (the paper's fork: P and R NaN where their
    denominator is 0, F1 = 2RP/(R+P), R where either is NaN)."""
    hyp, ref, match = (sum(weight * stats[3 * k + i] for k, weight in enumerate(weights)) for i in range(3))
    recall = match / ref if ref else math.nan
    precision = match / hyp if hyp else math.nan
    if not math.isnan(recall) and not math.isnan(precision):
        return 2 * recall * precision / (recall + precision) if recall + precision else math.nan
    return recall


def mean(stats: Sequence[float], count: int) -> float:
    """A segment-level metric's mean: its sum over the count."""
    return stats[0] / count if count else float("nan")


#: How a metric's kind is computed from its summed statistics (the page's ``SCORERS``).
SCORERS: dict[str, Callable] = {"bleu": bleu, "chrf": chrf, "ter": ter}


def score(kind: str, summed: Sequence[float], count: int, weights: Sequence[float] = ()) -> float:
    if kind == "f1":
        return f1(summed, weights)
    return mean(summed, count) if kind == "mean" else SCORERS[kind](summed)


def summed(rows: np.ndarray) -> np.ndarray:
    """Statistics (segments, d) summed in segment order, as the page's loop does."""
    total = np.zeros(rows.shape[1], dtype="float64")
    for row in rows:
        total = total + row
    return total


def paired_test(kind: str, baseline: np.ndarray, system: np.ndarray, words: np.ndarray,
                weights: Sequence[float] = ()) -> dict:
    """The test of one system against the baseline on the same units: statistics (units, d) of each, and the words
    of :func:`swap_words` for that many units. ``{"delta", "p", "trials"}``.

    A trial's swapped sum is added up eight units at a time, as the page's script does it: for each group of eight
    units a table of the 256 sums of its subsets (``table[m | high] = table[m] + difference[high]``), then the
    groups' entries in group order. Both sides add the same numbers in the same order."""
    count, width = baseline.shape
    base_sum, sys_sum = summed(baseline), summed(system)
    observed = score(kind, sys_sum, count, weights) - score(kind, base_sum, count, weights)
    trials = len(words)
    groups = (count + 7) // 8
    difference = np.zeros((groups * 8, width), dtype="float64")
    difference[:count] = system - baseline
    moved = np.zeros((trials, width), dtype="float64")
    for group in range(groups):
        table = np.zeros((256, width), dtype="float64")
        for bit in range(8):
            table[1 << bit: 2 << bit] = table[:1 << bit] + difference[group * 8 + bit]
        byte = ((words[:, group // 4] >> np.uint64(8 * (group % 4))) & np.uint64(255)).astype(np.int64)
        moved = moved + table[byte]
    at_least = 0
    for trial in range(trials):
        delta = score(kind, sys_sum - moved[trial], count, weights) - score(kind, base_sum + moved[trial], count,
                                                                            weights)
        if abs(delta) >= abs(observed):
            at_least += 1
    return {"delta": observed, "p": (at_least + 1) / (trials + 1), "trials": trials}

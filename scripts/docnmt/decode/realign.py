"""A window's translation mapped back to its source sentences where its count of segments is another.

A window of n source sentences translated whole (full-segment; a whole document or a chunk of n sentences in one
turn) should come back as n segments: n ``<sep>``-separated parts from a concatenation model, n lines from a causal
LM. Where it comes back with another count (merged lines, a sentence split over two lines, a missing line), the
output is mapped back to the n sentences monotonically:

1. The segments are split further into sentences (after ``.``, ``!``, ``?``, ``…``, ``:`` or ``;`` and an optional
   closing quote or bracket, before a space): the *units*.
2. Dynamic programming gives each source sentence a contiguous run of units (possibly none), in order, every unit
   to exactly one sentence, at the least total cost. A sentence's cost for a run is

   - the length term ``|ln((len(run) + 10) / (len(expected) + 10))|`` in characters, where ``expected`` is the
     sentence's *guide* (its sentence-level translation, the first pass) or, without a guide, its source sentence
     scaled by the window's ratio of output to source characters;
   - plus, with a guide, ``1 - chrF(run, guide) / 100`` (:func:`chrf`: character 6-grams, beta 2, sacrebleu's
     sentence chrF).

   Runs are at most :data:`MAX_RUN` units, and unit boundaries stay within a band around the diagonal that is
   wider by the difference of the counts, so that a whole document's answer is aligned in a moment.
3. A sentence's hypothesis is its units joined by spaces; a sentence with no unit gets the empty hypothesis.

Text is measured with the subword joins (``@@ ``) removed. :func:`realign` returns the n hypotheses; the strategies
count the windows and documents so mapped (``realigned_documents`` in the decode's sidecar, the tables' notes).
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from typing import Sequence

from ..preprocess.bpe import remove_bpe

#: The most units one sentence's run may take.
MAX_RUN = 8
#: The character n-gram order and beta of :func:`chrf` (sacrebleu's chrF defaults).
CHAR_ORDER, BETA = 6, 2.0
#: Added to both lengths of the length term, so that short sentences are not judged by a character or two.
SMOOTHING = 10
#: Sentence ends inside a segment: end punctuation, an optional closing quote or bracket, then a space.
SENTENCE_END = re.compile(r"(?<=[.!?…:;])\s+|(?<=[.!?…:;][\"'»”’)\]])\s+")


def units(segments: Sequence[str]) -> list[str]:
    """The segments split into sentences (:data:`SENTENCE_END`), empty parts dropped."""
    found = []
    for segment in segments:
        found += [part.strip() for part in SENTENCE_END.split(segment) if part.strip()]
    return found


def _ngrams(text: str) -> list[Counter]:
    chars = "".join(text.split())
    return [Counter(chars[i:i + n] for i in range(len(chars) - n + 1)) for n in range(1, CHAR_ORDER + 1)]


def chrf(hypothesis: str, reference: str) -> float:
    """Sentence chrF (0-100) as sacrebleu computes it: character n-grams of orders 1-6 without whitespace, precision
    and recall averaged over the orders both texts have, then the F-score with beta 2."""
    return _chrf(_ngrams(hypothesis), _ngrams(reference))


def _chrf(hyp: list[Counter], ref: list[Counter]) -> float:
    precision = recall = 0.0
    orders = 0
    for h, r in zip(hyp, ref):
        total_h, total_r = sum(h.values()), sum(r.values())
        if not total_h or not total_r:
            continue
        matched = sum((h & r).values())
        precision += matched / total_h
        recall += matched / total_r
        orders += 1
    if not orders:
        return 0.0
    precision, recall = precision / orders, recall / orders
    if precision + recall == 0:
        return 0.0
    beta2 = BETA ** 2
    return 100 * (1 + beta2) * precision * recall / (beta2 * precision + recall)


def realign(sources: Sequence[str], segments: Sequence[str], guide: Sequence[str] | None = None) -> list[str]:
    """``segments`` (a window's output) as one hypothesis per source sentence (module docstring); ``guide``: a
    translation of each source sentence to align against (the first pass), or None (lengths only). Segments whose
    count is already ``len(sources)`` come back as they are."""
    n = len(sources)
    if guide is not None and len(guide) != n:
        raise ValueError(f"expected a guide of {n} sentences, got {len(guide)}")
    if len(segments) == n:
        return [s.strip() for s in segments]
    pieces = units(segments)
    m = len(pieces)
    if n == 0:
        return []
    if m == 0:
        return [""] * n
    plain = [remove_bpe(p) for p in pieces]
    if guide is not None:
        expected = [len(remove_bpe(g)) for g in guide]
    else:
        source_chars = sum(len(remove_bpe(s)) for s in sources) or 1
        ratio = sum(map(len, plain)) / source_chars
        expected = [len(remove_bpe(s)) * ratio for s in sources]
    guides = None if guide is None else [_ngrams(remove_bpe(g)) for g in guide]
    band = abs(m - n) + 2

    @functools.cache
    def run(a: int, b: int) -> tuple[int, list[Counter]]:
        """Units a to b joined: their length and character n-grams (each run is costed against several sentences)."""
        text = " ".join(plain[a:b])
        return len(text), _ngrams(text)

    def cost(j: int, a: int, b: int) -> float:
        length, grams = run(a, b)
        value = abs(math.log((length + SMOOTHING) / (expected[j] + SMOOTHING)))
        if guides is not None:
            value += 1 - _chrf(grams, guides[j]) / 100
        return value

    def near(j: int, i: int) -> bool:
        """Is a boundary after unit i (i units used) after sentence j (j + 1 sentences) near the diagonal?"""
        return abs(i - (j + 1) * m / n) <= band or i in (0, m)

    inf = float("inf")
    best = [[inf] * (m + 1) for _ in range(n + 1)]
    back = [[0] * (m + 1) for _ in range(n + 1)]
    best[0][0] = 0.0
    for j in range(n):
        for i in range(m + 1):
            if not near(j, i):
                continue
            for a in range(max(0, i - MAX_RUN), i + 1):
                if best[j][a] == inf:
                    continue
                value = best[j][a] + cost(j, a, i)
                if value < best[j + 1][i]:
                    best[j + 1][i], back[j + 1][i] = value, a
    if best[n][m] == inf:  # runs too short for the units: the surplus goes to the last sentence
        return realign_by_order(pieces, n)
    out, i = [""] * n, m
    for j in range(n, 0, -1):
        a = back[j][i]
        out[j - 1] = " ".join(pieces[a:i])
        i = a
    return out


def realign_by_order(pieces: Sequence[str], n: int) -> list[str]:
    """The fallback where no alignment within the runs' limit exists: the first n-1 units one each, the rest to the
    last sentence."""
    if len(pieces) <= n:
        return list(pieces) + [""] * (n - len(pieces))
    return list(pieces[:n - 1]) + [" ".join(pieces[n - 1:])]

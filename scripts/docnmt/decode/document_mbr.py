"""Document-level MBR by optimal transport over sentences (MBR-OT: Jinnai, ACL 2025, arXiv 2505.23078).

Two candidate translations of one document, ``h`` (the hypothesis) and ``r`` (the pseudo-reference), are compared
sentence by sentence through an optimal transport between their sentences::

    C_jk = 1 - u(h_j, r_k)                 (u: a sentence utility in [0, 1], here sentence chrF / 100)
    U(h, r) = 1 - OT(a, b, C)              (a, b: the sentences' weights, uniform or by length in characters)

so a candidate that splits or merges a sentence still meets its counterpart, where a line-by-line comparison would
not. The solvers (:data:`SOLVERS`): ``assign``, the assignment of sentences to sentences that minimizes the mean
cost of the assigned pairs (``scipy.optimize.linear_sum_assignment``; the weights do not enter), and ``sinkhorn``,
the entropic transport cost of POT's ``ot.sinkhorn2`` at regularization 0.1. This follows MBR-OT's reference code
(jinnaiyuu/mbr-optimal-transport, ``mbr/utility/ot_utility.py`` at 4e32c2d), its edge cases included: identical
documents score 1 (without a transport), and a document with more than twice the other's sentences is cut to the
first ``int(2 * other)`` of them. The sentences are the test set's lines, not a sentence splitter's.

A candidate's expected utility is its mean utility against every candidate of the document, itself included (as
MBR-OT's and mbrs' code compute it); the selected candidate is the first with the highest (:func:`select`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Sequence

#: The transport solvers: MBR-OT's ``assign`` and ``sinkhorn`` (its default).
SOLVERS = ("assign", "sinkhorn")
#: The sentences' weights: each sentence alike, or by its length in characters.
WEIGHTS = ("uniform", "length")
#: Sinkhorn's entropic regularization, MBR-OT's.
SINKHORN_REGULARIZATION = 0.1
#: A document with more than this times the other's sentences is cut to that many (MBR-OT's
#: ``n_sentences_threshold``).
THRESHOLD = 2.0

#: A sentence utility over two lists of sentences: the matrix of ``u(hyp_j, ref_k)``, each in [0, 1].
Similarity = Callable[[Sequence[str], Sequence[str]], "object"]


def cut_to_threshold(hyp: Sequence[str], ref: Sequence[str], threshold: float = THRESHOLD):
    """The longer document cut to ``int(threshold * shorter)`` sentences where it has more than that."""
    if len(hyp) > threshold * len(ref):
        return list(hyp[: int(threshold * len(ref))]), list(ref)
    if len(ref) > threshold * len(hyp):
        return list(hyp), list(ref[: int(threshold * len(hyp))])
    return list(hyp), list(ref)


def sentence_weights(sentences: Sequence[str], weights: str):
    """The sentences' masses, summing to 1: uniform, or by length in characters (uniform where every sentence is
    empty, whose lengths give no masses)."""
    import numpy as np

    if weights not in WEIGHTS:
        raise ValueError(f"weights must be one of {', '.join(WEIGHTS)}, got {weights!r}")
    lengths = np.array([len(s) for s in sentences], dtype=np.float64)
    if weights == "uniform" or lengths.sum() == 0:
        return np.ones(len(sentences)) / len(sentences)
    return lengths / lengths.sum()


def transport_cost(cost, hyp_weights, ref_weights, solver: str) -> float:
    """The optimal transport cost of the cost matrix between the two weight vectors by ``solver``."""
    import numpy as np

    if solver == "assign":
        from scipy.optimize import linear_sum_assignment

        rows, cols = linear_sum_assignment(cost)
        return float(np.asarray(cost)[rows, cols].mean())
    if solver == "sinkhorn":
        import ot

        return float(ot.sinkhorn2(hyp_weights, ref_weights, cost, SINKHORN_REGULARIZATION))
    raise ValueError(f"solver must be one of {', '.join(SOLVERS)}, got {solver!r}")


def document_utility(hyp: Sequence[str], ref: Sequence[str], similarity: Similarity, solver: str = "sinkhorn",
                     weights: str = "uniform") -> float:
    """MBR-OT's utility of the document ``hyp`` against the document ``ref`` (lists of sentences): 1 where they are
    the same, else 1 minus the optimal transport cost of ``1 - similarity`` between their sentences. A document
    without sentences against one with some has utility 0."""
    import numpy as np

    if list(hyp) == list(ref):
        return 1.0
    hyp, ref = cut_to_threshold(hyp, ref)
    if not hyp or not ref:
        return 0.0
    cost = 1.0 - np.asarray(similarity(hyp, ref), dtype=np.float64)
    return 1.0 - transport_cost(cost, sentence_weights(hyp, weights), sentence_weights(ref, weights), solver)


class PooledChrf:
    """Sentence chrF / 100 over the sentences of one document's candidates, every distinct pair at once: sacrebleu's
    ``CHRF()`` (character 6-grams without whitespace, beta 2, its effective-order averaging), from n-gram counts
    kept once per sentence. The matches of two sentences at order n, sum over n-grams of min(count in one, count in
    the other), are the number of thresholds t >= 1 both counts reach, so each order's matches of all pairs are sums
    of sparse products of 0/1 matrices (``count >= t``). Exact (integer counts; equal to sacrebleu within 1e-12,
    tested), and about ten times faster than fastchrf's pairwise chrF on a TED talk's pooled sentences (1.8 s
    against 19.5 s for 1,937 sentences)."""

    ORDER = 6
    BETA = 2.0

    def __init__(self, candidates: Sequence[Sequence[str]]):
        self.index: dict[str, int] = {}
        for candidate in candidates:
            for sentence in candidate:
                self.index.setdefault(sentence, len(self.index))
        self.matrix = pairwise_chrf(list(self.index), self.ORDER, self.BETA)

    def __call__(self, hyp: Sequence[str], ref: Sequence[str]):
        rows = [self.index[s] for s in hyp]
        cols = [self.index[s] for s in ref]
        return self.matrix[rows][:, cols]


def pairwise_chrf(sentences: Sequence[str], order: int = 6, beta: float = 2.0):
    """The matrix of sacrebleu's sentence chrF / 100 of sentence i (hypothesis) against sentence j (reference)."""
    from collections import Counter

    import numpy as np
    from scipy import sparse

    size = len(sentences)
    stripped = ["".join(s.split()) for s in sentences]
    precision, recall, effective = np.zeros((size, size)), np.zeros((size, size)), np.zeros((size, size))
    for n in range(1, order + 1):
        vocabulary: dict[str, int] = {}
        rows, cols, counts = [], [], []
        totals = np.array([max(len(t) - n + 1, 0) for t in stripped], dtype=np.float64)
        for i, text in enumerate(stripped):
            for gram, count in Counter(text[j:j + n] for j in range(len(text) - n + 1)).items():
                rows.append(i)
                cols.append(vocabulary.setdefault(gram, len(vocabulary)))
                counts.append(count)
        level = sparse.csr_matrix((np.array(counts, dtype=np.float32), (rows, cols)),
                                  shape=(size, max(len(vocabulary), 1)))
        matches = np.zeros((size, size), dtype=np.float64)
        while level.nnz:  # the n-grams whose count reaches t, for t = 1, 2, ...
            reached = level.copy()
            reached.data[:] = 1
            matches += (reached @ reached.T).toarray()
            level.data -= 1
            level.eliminate_zeros()
        # sacrebleu: a hypothesis's n-grams count only where the reference has some of that order
        hyp_total = totals[:, None] * (totals[None, :] > 0)
        ref_total = np.broadcast_to(totals[None, :], (size, size))
        counted = (hyp_total > 0) & (ref_total > 0)
        with np.errstate(divide="ignore", invalid="ignore"):
            precision += np.where(counted, matches / hyp_total, 0.0)
            recall += np.where(counted, matches / ref_total, 0.0)
        effective += counted
    factor = beta ** 2
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = np.where(effective > 0, precision / effective, 0.0)
        recall = np.where(effective > 0, recall / effective, 0.0)
        return np.where(precision + recall > 0,
                        (1 + factor) * precision * recall / (factor * precision + recall), 0.0)


@dataclass
class Selection:
    """One document's selection: the chosen candidate, and each candidate's expected utility (in input order)."""

    chosen: int
    expected: list[float] = field(default_factory=list)
    #: utility evaluations: document pairs compared by a transport (identical ones are 1 without it)
    transports: int = 0


def select(candidates: Sequence[Sequence[str]], similarity: Similarity | None = None, solver: str = "sinkhorn",
           weights: str = "uniform") -> Selection:
    """The candidate document with the highest mean utility against all candidates, itself included; the first such
    on a tie. ``similarity``: the sentence utility (default :class:`PooledChrf` over these candidates). Identical
    candidates share their utilities (each pair of distinct documents is solved once per direction)."""
    if not candidates:
        raise ValueError("document MBR needs at least one candidate")
    if solver not in SOLVERS:
        raise ValueError(f"solver must be one of {', '.join(SOLVERS)}, got {solver!r}")
    if weights not in WEIGHTS:
        raise ValueError(f"weights must be one of {', '.join(WEIGHTS)}, got {weights!r}")
    similarity = similarity or PooledChrf(candidates)
    distinct: dict[tuple, int] = {}
    keys = [distinct.setdefault(tuple(c), len(distinct)) for c in candidates]
    documents = [list(k) for k in distinct]
    solved: dict[tuple[int, int], float] = {}
    transports = 0
    for a in range(len(documents)):
        for b in range(len(documents)):
            solved[a, b] = 1.0 if a == b else document_utility(documents[a], documents[b], similarity, solver, weights)
            transports += a != b
    expected = [math.fsum(solved[keys[i], keys[j]] for j in range(len(candidates))) / len(candidates)
                for i in range(len(candidates))]
    best = max(expected)
    return Selection(expected.index(best), expected, transports)

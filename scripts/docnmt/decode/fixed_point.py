"""Parallel doc-trans: the fixed-point iteration over sentences (:mod:`.strategies`' docstring, "doc-trans").

Every round first finds the *stale* sentences: those whose request (source window and forced prefix) differs from
the one they were last decoded with. In the parallel phase it decodes all of them; once a round would decode more
than ``dec.switch_share`` of the previous round's sentences, it finishes sequentially: each round then decodes only
the first stale sentence of each document (whose context is final), skipping the sentences already decoded with
their final context.

Round 1's contexts are a guess, and the result does not depend on it (each round re-decodes every sentence whose
context changed, until none did): the first pass where the documents have one (the workflow reuses the
sentence-level decode, and 2-pass's output as round 1), else the document model's own translation of each
sentence without context at beam 1 (``Decoder.guess_searcher``: about a twelfth of a beam-12 decode's positions).
That guess is closer to doc-trans's output than sentence-level's beam-12 translation on the demo's long documents
(215 of 513 sentences re-decoded in round 2 instead of 267; docs/benchmarks.md, issue 84), so from scratch it costs
less than a first pass would.

The accounting (requests, truncations, ``<sep>`` mismatches) is that of the final decode of each sentence, except
``requests``, which counts every search; ``redecoded`` lists the sentences searched per round.
"""

from __future__ import annotations

from typing import Sequence

from ..preprocess.windows import split
from .documents import Document, previous, window


def first_segment(text: str) -> str:
    """A window's output's first segment (``<sep>``-split)."""
    return split(text)[0]


class FixedPoint:
    """The iteration of one decode (:meth:`run`) on ``docs`` with the decoder ``dec``: per document and sentence, the
    current output (the first pass, then the newest), the request it was last decoded with, whether that request's
    context was truncated or its output mismatched its ``<sep>``, and the sentences whose context changed since."""

    def __init__(self, dec, docs: list[Document]):
        self.dec, self.docs = dec, docs
        self.out = guess(dec, docs) if any(d.first_pass is None for d in docs) else [list(d.first_pass) for d in docs]
        self.decoded_with: list[list[tuple | None]] = [[None] * len(d) for d in docs]
        self.truncated = [[False] * len(d) for d in docs]
        self.mismatch = [[False] * len(d) for d in docs]
        self.dirty = [set(range(len(d))) for d in docs]
        self.rounds, self.last_round = 0, None

    def keyed(self, n: int, i: int, context: Sequence[str]) -> tuple:
        """Sentence i of document n with target ``context``: (request, its key token by token, truncated)."""
        d, dec = self.docs[n], self.dec
        request, cut = dec.build(window(d, i - dec.k + 1, i + 1), previous(context, i, dec.k), d.lines[i])
        return request, (tuple(request.source), tuple(request.prefix)), cut

    def record(self, n: int, i: int, key: tuple, cut: bool, text: str, mismatched: bool) -> None:
        """Sentence i of document n was decoded with request ``key`` into ``text``."""
        self.decoded_with[n][i], self.truncated[n][i], self.mismatch[n][i] = key, cut, mismatched
        if text != self.out[n][i]:  # the contexts of the next k-1 sentences change
            self.dirty[n].update(range(i + 1, min(i + self.dec.k, len(self.docs[n]))))
        self.out[n][i] = text

    def take_over_round_one(self) -> None:
        """Round 1 is 2-pass's output (:func:`take_over_round_one`): taken over, not searched."""
        for marked in self.dirty:
            marked.clear()
        for n, d in enumerate(self.docs):
            for i in range(len(d)):
                _, key, cut = self.keyed(n, i, d.first_pass)
                self.record(n, i, key, cut, d.round_one[i], d.round_one_mismatch[i])
        self.rounds, self.last_round = 1, sum(map(len, self.docs))
        self.dec.stats.redecoded.append(self.last_round)
        self.dec.stats.round_one_reused = True

    def stale(self, n: int, first_only: bool) -> list[tuple]:
        """Document n's stale sentences (or the first), as (n, i, request, key, truncated); forgets the others."""
        found = []
        for i in sorted(self.dirty[n]):
            request, key, cut = self.keyed(n, i, self.out[n])
            if key == self.decoded_with[n][i]:
                self.dirty[n].discard(i)  # decoded with this very context already
                continue
            found.append((n, i, request, key, cut))
            if first_only:
                break
        return found

    def run(self) -> list[list[str]]:
        """The rounds until no sentence is stale (or ``max_rounds``): each document's outputs."""
        dec, docs = self.dec, self.docs
        if docs and all(d.round_one is not None for d in docs):
            self.take_over_round_one()
        converged, parallel = False, True
        while True:
            pending = [p for n in range(len(docs)) for p in self.stale(n, first_only=not parallel)]
            if not pending:
                converged = True
                break
            if dec.max_rounds is not None and self.rounds >= dec.max_rounds:
                break
            self.rounds += 1
            if parallel and self.last_round is not None and len(pending) > dec.switch_share * self.last_round:
                parallel = False
                dec.stats.sequential_from_round = self.rounds
                pending = first_per_document(pending)
            self.search(pending)
        dec.stats.converged = converged
        if not converged:  # from the first stale context of a document on, nothing is guaranteed
            dec.stats.unconverged = sum(len(docs[n]) - i for n, i, *_ in first_per_document(pending))
        dec.stats.context_truncated += sum(map(sum, self.truncated))
        dec.stats.sep_mismatch += sum(map(sum, self.mismatch))
        return self.out

    def search(self, pending: list[tuple]) -> None:
        """One round: the ``pending`` sentences searched at once, their outputs recorded."""
        dec = self.dec
        self.last_round = len(pending)
        dec.stats.redecoded.append(len(pending))
        dec.stats.requests += len(pending)
        for n, i, *_ in pending:  # before the outputs below mark their successors
            self.dirty[n].discard(i)
        # each sentence's last output is its draft (a greedy search verifies it: docnmt.decode.verification)
        requests = [dec.with_draft(request, self.out[n][i]) for n, i, request, *_ in pending]
        for (n, i, _, key, cut), nbest in zip(pending, dec.search_round(requests)):
            segments = split(dec.text(dec.best(nbest, first_segment, source=self.docs[n].src[i])))
            self.record(n, i, key, cut, segments[0], len(segments) != 1)


def guess(dec, docs: list[Document]) -> list[list[str]]:
    """Round 1's contexts without a first pass: each sentence translated without context by ``dec.guess_searcher``
    (the document model at beam 1), in one search call; counted in ``requests`` and ``guessed``."""
    flat = [(n, i) for n, d in enumerate(docs) for i in range(len(d))]
    requests = [dec.request([docs[n].src[i]], (), docs[n].lines[i]) for n, i in flat]
    out = [[""] * len(d) for d in docs]
    for (n, i), nbest in zip(flat, dec.search(requests, dec.guess_searcher)):
        out[n][i] = first_segment(dec.text(nbest[0]))
    dec.stats.guessed += len(requests)
    return out


def take_over_round_one(docs: list[Document], hyps: Sequence[str], mismatch_lines) -> None:
    """Give the documents 2-pass's output as round 1 of parallel doc-trans: ``hyps`` by (0-based) line,
    ``mismatch_lines`` the lines whose hypothesis had a ``<sep>`` mismatch."""
    mismatched = set(mismatch_lines)
    for d in docs:
        d.round_one = [hyps[line] for line in d.lines]
        d.round_one_mismatch = [line in mismatched for line in d.lines]


def first_per_document(pending: list[tuple]) -> list[tuple]:
    """The first of each document's entries in ``pending`` (sorted by document, then sentence)."""
    return [p for j, p in enumerate(pending) if j == 0 or pending[j - 1][0] != p[0]]

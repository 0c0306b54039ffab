"""The search strategies of Herold & Ney (2023), section 3: one function each, one registry.

Notation (the paper's): a document F_1^M, a document-level model p trained on
windows of k sentences joined by ``<sep>``, a sentence-level model, token-level
beam search (beam size from config) with fairseq's length normalization.
Every strategy returns one BPE-level hypothesis per source sentence, in
order. Documents are decoded in parallel: the i-th sentence of many documents
goes into one batch (neulab/contextual-mt's ``docmt_translate.py``); the
sentences of one document go in sequence where a strategy needs its own
earlier output.

Target context is *forced*: it is the decoder prefix ``E_{i-k+1} <sep> ...
E_{i-1} <sep>``, computed once per sentence in one teacher-forced pass and
expanded to the beams (:mod:`docnmt.search`); it never appears in the output.

``<sep>`` mismatches. A window's hypothesis should have one segment per
source sentence. Where it has another number:

- full-segment: missing trailing segments become empty hypotheses; surplus
  segments are appended to the window's last sentence;
- last-sentence / first-sentence: the last / first segment is kept whatever
  the count;
- forced-prefix strategies (2-pass, doc-trans, doc-trans-beam, cheating): the
  continuation should be one sentence; if it contains ``<sep>``, the part
  before the first ``<sep>`` is kept.

Each case is counted (``sep_mismatch``) in the decode's sidecar.

Context that does not fit. If a window (source, or forced target prefix)
exceeds the model's max positions, its context sentences farthest from the
current one are dropped until it fits (the oldest; for first-sentence's
right-context windows the last), and the sentence is counted in
``context_truncated``; a full-segment window that does not fit is translated
sentence by sentence (counted too). A sentence that does not fit alone is an
error naming its line.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from . import SEP
from .windows import join, split


@dataclass
class Document:
    """One document of the test set at BPE level, with its global line numbers."""

    docid: str
    lines: list[int]
    src: list[str]
    ref: list[str] | None = None
    first_pass: list[str] | None = None

    def __len__(self) -> int:
        return len(self.src)


@dataclass
class Stats:
    sep_mismatch: int = 0
    context_truncated: int = 0
    requests: int = 0


class Decoder:
    """What a strategy needs: searchers for the document (and sentence) model, k, h, and accounting."""

    def __init__(self, searcher, k: int, h: int, sentence_searcher=None, source_name: str = "source"):
        self.searcher = searcher
        self.source_name = source_name
        self.sentence_searcher = sentence_searcher
        self.k = k
        self.h = h
        self.stats = Stats()

    # ---- requests ---------------------------------------------------------
    def _ids(self, text: str, source: bool) -> list[int]:
        return self.searcher.model.encode(text, source=source)

    def fits(self, source_sents: Sequence[str]) -> bool:
        """Does this source window fit the model's max positions?"""
        return len(self._ids(join(source_sents), source=True)) <= self.searcher.model.max_positions

    def request(self, source_sents: Sequence[str], prefix_sents: Sequence[str] = (), line: int | None = None,
                drop_newest: bool = False) -> object:
        """A search request for the window ``source_sents`` with forced target context ``prefix_sents``.

        Drops the oldest context sentences (source and target alike) while the
        window exceeds the model's max positions; with ``drop_newest`` (a
        window of right context, first-sentence) the last ones instead.
        """
        from .search import Request
        from .textio import InputError

        source_sents, prefix_sents = list(source_sents), list(prefix_sents)
        limit = self.searcher.model.max_positions
        truncated = False
        while True:
            src_ids = self._ids(join(source_sents), source=True)
            prefix_ids = self._ids(join(prefix_sents) + f" {SEP}", source=False)[:-1] if prefix_sents else []
            # the prefix needs room for at least one generated token and </s>
            if len(src_ids) <= limit and len(prefix_ids) + 2 <= limit:
                break
            if len(source_sents) <= 1 and not prefix_sents:
                raise InputError(
                    self.source_name,
                    f"expected at most {limit} tokens (the model's max positions), found {len(src_ids)} in the sentence alone",
                    None if line is None else line + 1,
                )
            truncated = True
            if len(source_sents) > 1:
                source_sents = source_sents[:-1] if drop_newest else source_sents[1:]
            prefix_sents = prefix_sents[1:] if prefix_sents else prefix_sents
            if len(prefix_sents) >= len(source_sents):
                prefix_sents = prefix_sents[len(prefix_sents) - len(source_sents) + 1:]
        if truncated:
            self.stats.context_truncated += 1
        self.stats.requests += 1
        return Request(src_ids, prefix_ids)

    def text(self, hyp) -> str:
        return self.searcher.model.decode(hyp.tokens)

    def first_segment(self, hyp, count: bool = True) -> str:
        segments = split(self.text(hyp))
        if len(segments) != 1 and count:
            self.stats.sep_mismatch += 1
        return segments[0]


Strategy = Callable[[Decoder, list[Document]], list[list[str]]]
REGISTRY: dict[str, Strategy] = {}
#: The seed's cost table (decoder forward passes) per strategy, as a factor of N*L.
COST = {}


def strategy(name: str, cost: str):
    def register(func):
        REGISTRY[name] = func
        COST[name] = cost
        func.strategy_name = name
        return func

    return register


def _window(doc: Document, start: int, stop: int) -> list[str]:
    return doc.src[max(0, start):min(len(doc), stop)]


def _by_position(docs: list[Document]):
    """Sentence positions 0..max; at each, the documents that have that sentence."""
    longest = max((len(d) for d in docs), default=0)
    for i in range(longest):
        yield i, [d for d in docs if i < len(d)]


def _context_search(dec: Decoder, docs: list[Document], context_of) -> list[list[str]]:
    """Sentence i of every document in one batch, target context from ``context_of(doc, i)``."""
    out = [[""] * len(d) for d in docs]
    index = {id(d): n for n, d in enumerate(docs)}
    for i, active in _by_position(docs):
        requests = [
            dec.request(_window(d, i - dec.k + 1, i + 1), context_of(d, i, out[index[id(d)]]), d.lines[i])
            for d in active
        ]
        for d, nbest in zip(active, dec.searcher.search(requests)):
            out[index[id(d)]][i] = dec.first_segment(nbest[0])
    return out


def _prev(sentences: Sequence[str], i: int, k: int) -> list[str]:
    return list(sentences[max(0, i - k + 1):i])


@strategy("sentence-level", "O(NL)")
def sentence_level(dec: Decoder, docs: list[Document]) -> list[list[str]]:
    """The baseline: the sentence-level model, each sentence alone.

    E_i = argmax_E p_sent(E | F_i).  Cost O(NL).
    """
    searcher = dec.sentence_searcher or dec.searcher
    flat = [(n, i) for n, d in enumerate(docs) for i in range(len(d))]
    from .search import Request

    requests = [Request(searcher.model.encode(docs[n].src[i], source=True), []) for n, i in flat]
    dec.stats.requests += len(requests)
    out = [[""] * len(d) for d in docs]
    for (n, i), nbest in zip(flat, searcher.search(requests)):
        out[n][i] = searcher.model.decode(nbest[0].tokens)
    return out


@strategy("no-context", "O(NL)")
def no_context(dec: Decoder, docs: list[Document]) -> list[list[str]]:
    """The document-level model without any context (analysis only).

    E_i = argmax_E p(E | F_i).  Cost O(NL).
    """
    flat = [(n, i) for n, d in enumerate(docs) for i in range(len(d))]
    requests = [dec.request([docs[n].src[i]], (), docs[n].lines[i]) for n, i in flat]
    out = [[""] * len(d) for d in docs]
    for (n, i), nbest in zip(flat, dec.searcher.search(requests)):
        out[n][i] = dec.first_segment(nbest[0])
    return out


@strategy("full-segment", "O(NL)")
def full_segment(dec: Decoder, docs: list[Document]) -> list[list[str]]:
    """Non-overlapping windows F_1^k, F_{k+1}^{2k}, ..., each translated whole and split on <sep>.

    E_{i-k+1}^i = argmax p(E_{i-k+1}^i | F_{i-k+1}^i) (Eq. 1); the last window
    of a document may be shorter than k.  Cost O(NL).
    """
    chunks = []
    for n, d in enumerate(docs):
        for start in range(0, len(d), dec.k):
            stop = min(start + dec.k, len(d))
            if dec.fits(d.src[start:stop]):
                chunks.append((n, start, stop))
            else:  # a window too long for the model: its sentences are translated one by one (counted)
                dec.stats.context_truncated += 1
                chunks += [(n, i, i + 1) for i in range(start, stop)]
    requests = [dec.request(docs[n].src[a:b], (), docs[n].lines[a]) for n, a, b in chunks]
    out = [[""] * len(d) for d in docs]
    for (n, a, b), nbest in zip(chunks, dec.searcher.search(requests)):
        segments = split(dec.text(nbest[0]))
        expected = b - a
        if len(segments) != expected:
            dec.stats.sep_mismatch += 1
            if len(segments) > expected:
                segments = segments[:expected - 1] + [" ".join(segments[expected - 1:])]
            else:
                segments = segments + [""] * (expected - len(segments))
        out[n][a:b] = segments
    return out


def _overlapping(dec: Decoder, docs: list[Document], keep_last: bool) -> list[list[str]]:
    flat = [(n, i) for n, d in enumerate(docs) for i in range(len(d))]
    windows = {}
    for n, i in flat:
        d = docs[n]
        windows[(n, i)] = _window(d, i - dec.k + 1, i + 1) if keep_last else _window(d, i, i + dec.k)
    requests = [dec.request(windows[key], (), docs[key[0]].lines[key[1]], drop_newest=not keep_last) for key in flat]
    out = [[""] * len(d) for d in docs]
    for (n, i), nbest in zip(flat, dec.searcher.search(requests)):
        segments = split(dec.text(nbest[0]))
        if len(segments) != len(windows[(n, i)]):
            dec.stats.sep_mismatch += 1
        out[n][i] = segments[-1] if keep_last else segments[0]
    return out


@strategy("last-sentence", "O(NLk)")
def last_sentence(dec: Decoder, docs: list[Document]) -> list[list[str]]:
    """Overlapping windows F_{i-k+1}^i (Eq. 1); keep the last segment as the translation of F_i.

    Cost O(NLk): every sentence is translated in k windows.
    """
    return _overlapping(dec, docs, keep_last=True)


@strategy("first-sentence", "O(NLk)")
def first_sentence(dec: Decoder, docs: list[Document]) -> list[list[str]]:
    """Overlapping windows F_i^{i+k-1} (Eq. 1); keep the first segment as the translation of F_i.

    Uses right context only.  Cost O(NLk).
    """
    return _overlapping(dec, docs, keep_last=False)


@strategy("2-pass", "O(2NL)")
def two_pass(dec: Decoder, docs: list[Document]) -> list[list[str]]:
    """Target context from a sentence-level first pass Ẽ_1^M:

    E_i = argmax_E p(E | F_{i-k+1}^i, Ẽ_{i-k+1}^{i-1}).  Cost O(2NL) (first pass included).
    """
    for d in docs:
        if d.first_pass is None:
            raise ValueError("2-pass needs the sentence-level hypotheses (first pass)")
    return _context_search(dec, docs, lambda d, i, own: _prev(d.first_pass, i, dec.k))


@strategy("doc-trans", "O(NL)")
def doc_trans(dec: Decoder, docs: list[Document]) -> list[list[str]]:
    """Sentence by sentence, the model's own earlier output as target context:

    E_1 = argmax p(E_1 | F_1), E_i = argmax_E p(E | F_{i-k+1}^i, Ê_{i-k+1}^{i-1}).  Cost O(NL).
    """
    return _context_search(dec, docs, lambda d, i, own: _prev(own, i, dec.k))


@strategy("cheating", "O(NL)")
def cheating(dec: Decoder, docs: list[Document]) -> list[list[str]]:
    """The reference as target context (analysis only):

    E_i = argmax_E p(E | F_{i-k+1}^i, E°_{i-k+1}^{i-1}).  Cost O(NL).
    """
    for d in docs:
        if d.ref is None:
            raise ValueError("cheating needs the reference")
    return _context_search(dec, docs, lambda d, i, own: _prev(d.ref, i, dec.k))


@dataclass
class _Candidate:
    sentences: list[str]
    score: float
    mismatches: int = 0


@strategy("doc-trans-beam", "O(NLh)")
def doc_trans_beam(dec: Decoder, docs: list[Document]) -> list[list[str]]:
    """doc-trans keeping the top-h document contexts after every sentence (beam search over sentences).

    At sentence i every kept candidate Ê_1^{i-1} (at most h) is extended by the
    top-h hypotheses of argmax_E p(E | F_{i-k+1}^i, Ê_{i-k+1}^{i-1}); a
    candidate's score is the sum of its sentences' length-normalized scores;
    the h best are kept. With h=1 it is exactly doc-trans. All candidates of
    all documents at position i are searched in one batch.  Cost O(NLh).
    """
    beams = [[_Candidate([], 0.0)] for _ in docs]
    position = {id(d): n for n, d in enumerate(docs)}
    for i, active in _by_position(docs):
        owners, requests = [], []
        for d in active:
            n = position[id(d)]
            for cand in beams[n]:
                owners.append((n, cand))
                requests.append(dec.request(_window(d, i - dec.k + 1, i + 1), _prev(cand.sentences, i, dec.k), d.lines[i]))
        expanded: dict[int, list[_Candidate]] = {}
        for (n, cand), nbest in zip(owners, dec.searcher.search(requests)):
            for hyp in nbest[:dec.h]:
                text = dec.first_segment(hyp, count=False)
                mismatch = int(len(split(dec.text(hyp))) != 1)
                expanded.setdefault(n, []).append(
                    _Candidate(cand.sentences + [text], cand.score + hyp.score, cand.mismatches + mismatch)
                )
        for n, cands in expanded.items():
            cands.sort(key=lambda c: c.score, reverse=True)
            beams[n] = cands[:dec.h]
    dec.stats.sep_mismatch += sum(beams[n][0].mismatches for n, d in enumerate(docs) if len(d))
    return [beams[n][0].sentences if len(d) else [] for n, d in enumerate(docs)]

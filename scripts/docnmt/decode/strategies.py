"""The search strategies of Herold & Ney (2023), section 3: one function each, one registry.

Notation (the paper's): a document F_1^M, a document-level model p trained on
windows of k sentences joined by ``<sep>``, a sentence-level model, token-level
beam search (beam size from config) with fairseq's length normalization.
Every strategy returns one BPE-level hypothesis per source sentence, in
order. Where every sentence's context is known before decoding (sentence-level,
no-context, the window strategies, 2-pass, cheating), all sentences of all
documents are searched in one call, batched by length (at beam 1 with draft
verification, last-sentence and first-sentence in two: :mod:`docnmt.decode.overlapping`). doc-trans-beam, and
doc-trans in its ``sequential`` mode, need their own earlier output: the i-th
sentence of every document goes into one batch (neulab/contextual-mt's
``docmt_translate.py``), one position after another.

Parallel doc-trans (the fixed point)
------------------------------------
doc-trans's ``parallel`` mode computes the sequential result by a Jacobi-style
fixed-point iteration over sentences. Every sentence starts from the context
of a first pass Ẽ (the sentence-level hypotheses, as 2-pass). Round 1 decodes
all sentences of all documents at once with those contexts (it is 2-pass);
each later round replaces every context by the newest outputs and re-decodes,
again all at once, only the sentences whose search request (source window and
forced prefix, compared token by token) differs from the one they were last
decoded with. When no request changes, every sentence has been decoded with
the context the sequential run gives it: sentence 1 is final after round 1,
sentence i after round i at the latest, so at most max(M) rounds are needed.
The result equals sequential doc-trans as far as one search gives the same
hypothesis for the same request in another batch (see :mod:`docnmt.decode.backends.fairseq.search`,
"Batches").

A weak model's outputs keep changing with their contexts (on real TED talks
with demo-sized models, 93% of the sentences of round 2 changed again), and
then every round re-decodes nearly every sentence to finalize one more per
document. So once a round would re-decode more than :data:`SWITCH_SHARE` of
the sentences the previous round decoded, the iteration *finishes
sequentially*: each later round decodes only the first stale sentence of each
document. Its context is final, so it is final too; the sentences after it
that were already decoded with their final context are skipped, not
re-decoded. The result is the same fixed point, reached in at most as many
rounds, and with at most as many decodes after the switch, as sequential
doc-trans needs for the same documents. ``Stats.sequential_from_round``
records the switch.

Round 1 is 2-pass, so where 2-pass has been decoded with the same model,
search settings and first pass, its hypotheses (with their ``<sep>``
mismatches) are taken over as round 1 (``Document.round_one``; the workflow
does this when ``2-pass`` is among its strategies) and the iteration starts at
round 2: the same state, so the same result, without searching round 1
again. ``Stats.round_one_reused`` records it.

``max_rounds`` (rounds of the iteration, round 1 included) stops it
earlier; the sentences from the first stale context of each document on are
then counted as ``unconverged`` (their output may differ from the sequential
one).

``Stats.rounds`` counts dependent search rounds (the critical path): 1 for the
one-call strategies, the longest document for the position-by-position ones,
the iterations for parallel doc-trans (less the reused round 1).

Target context is *forced*: it is the decoder prefix ``E_{i-k+1} <sep> ...
E_{i-1} <sep>``, computed once per sentence in one teacher-forced pass and
expanded to the beams (:mod:`docnmt.decode.backends.fairseq.search`); it never appears in the output.

``<sep>`` mismatches. A window's hypothesis should have one segment per
source sentence. Where it has another number:

- full-segment: the window's output is mapped back to its sentences
  (:mod:`docnmt.decode.realign`: split into sentences, aligned monotonically
  by length and, where the documents have a first pass, chrF against it);
  the documents so mapped are counted (``realigned_documents``);
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

from dataclasses import dataclass, field, replace
from typing import Sequence

from .. import SEP
from ..preprocess.bpe import remove_bpe
from ..preprocess.windows import join, split
from .requests import request_tokens
from .documents import Document, previous, window
from .fixed_point import FixedPoint, take_over_round_one  # noqa: F401 (the decode CLI's)
from .fixed_point import first_segment as _first_segment
from .overlapping import overlapping
from .realign import realign
from .strategy_registry import COST, REGISTRY, STRATEGIES, StrategyInfo, models_needed, not_for_backend, strategies_for, strategy  # noqa: F401 (the registry)


@dataclass
class Stats:
    sep_mismatch: int = 0
    #: the one-call strategies: the (0-based) lines counted in sep_mismatch
    sep_mismatch_lines: list[int] = field(default_factory=list)
    context_truncated: int = 0
    requests: int = 0
    #: dependent search rounds (one search call each; the batches of one call are independent)
    rounds: int = 0
    #: parallel doc-trans: sentences decoded in each round (the first round: all)
    redecoded: list[int] = field(default_factory=list)
    #: parallel doc-trans: whether the fixed point was reached (None for other strategies)
    converged: bool | None = None
    #: parallel doc-trans stopped by max_rounds: sentences not guaranteed to be the sequential result
    unconverged: int = 0
    #: parallel doc-trans: the round from which it finished sequentially (None: parallel throughout)
    sequential_from_round: int | None = None
    #: parallel doc-trans: round 1 was 2-pass's output, not searched here (it is still in ``redecoded``)
    round_one_reused: bool = False
    #: parallel doc-trans without a first pass: the sentences its greedy guess searched (round 0, before round 1:
    #: :attr:`Decoder.guess_searcher`)
    guessed: int = 0
    #: last-sentence: per (0-based) line, the segments its window generated before the kept one (the target
    #: context that the kept translation was conditioned on; no output file holds it otherwise)
    generated_context: dict[int, list[str]] = field(default_factory=dict)
    #: full-segment: the documents (their indices) with a window whose output had another count of segments than
    #: the window's sentences, mapped back to them (:mod:`docnmt.decode.realign`)
    realigned_documents: set[int] = field(default_factory=set)
    #: requests answered by the search of an identical request of the same search call (same source window, forced
    #: prefix and document): searched once (:meth:`Decoder.search`)
    repeated_requests: int = 0
    #: refine: sentences whose answer was empty or not complete, so that they kept their draft (each round's), and
    #: their (0-based) lines
    kept_draft: int = 0
    kept_draft_lines: list[int] = field(default_factory=list)


#: doc-trans's decoding modes: the fixed-point iteration, and the position-by-position reference.
DOC_TRANS_MODES = ("parallel", "sequential")
#: Parallel doc-trans finishes sequentially once a round would re-decode more than this share of the
#: sentences the previous round decoded: the outputs keep changing with their contexts, so re-decoding
#: far ahead of the final prefix is mostly wasted (module docstring).
SWITCH_SHARE = 0.75


class Decoder:
    """What a strategy needs: searchers for the document (and sentence) model, k, h, and accounting.

    ``doc_trans_mode``: ``sequential`` (sentence by sentence, the reference) or
    ``parallel`` (the fixed-point iteration; needs the documents' first pass);
    ``max_rounds``: the parallel iteration's round limit (None: until the fixed point);
    ``switch_share``: when the parallel iteration finishes sequentially (:data:`SWITCH_SHARE`);
    ``mbr``: a :class:`~docnmt.decode.selection.Selector` that chooses each kept hypothesis among the search's candidates
    (None: the beam's best);
    ``share_repeated``: identical requests of one search call are searched once (:meth:`search`); False searches each,
    as the paper's Table 1 counts a strategy's cost (every one of the N sentences searched): what ``bench/decode``
    compares strategies by;
    ``guess_searcher``: the document model's search at beam 1, with which parallel doc-trans guesses the contexts of its
    round 1 where the documents have no first pass (each sentence without context, greedy:
    :mod:`docnmt.decode.fixed_point`); None: parallel doc-trans needs the first pass;
    ``contrastive``: context-aware (contrastive) decoding (:mod:`docnmt.decode.contrastive`): every request with a
    context carries the same sentence without it (``Request.contrast``), which the searcher scores beside it (its
    ``cad_alpha``); the strategies that decode a sentence with a target context take it;
    ``refine_unit`` and ``refine_rounds``: refine's unit (sentence or document) and rounds
    (:mod:`docnmt.decode.refinement`).
    """

    def __init__(self, searcher, k: int, h: int, sentence_searcher=None, source_name: str = "source",
                 doc_trans_mode: str = "sequential", max_rounds: int | None = None,
                 switch_share: float = SWITCH_SHARE, mbr=None, share_repeated: bool = True, guess_searcher=None,
                 contrastive: bool = False, refine_unit: str = "sentence", refine_rounds: int = 1):
        if doc_trans_mode not in DOC_TRANS_MODES:
            raise ValueError(f"doc_trans_mode must be one of {', '.join(DOC_TRANS_MODES)}, got {doc_trans_mode!r}")
        if max_rounds is not None and max_rounds < 1:
            raise ValueError(f"max_rounds must be >= 1 or None, got {max_rounds}")
        if refine_rounds < 1:
            raise ValueError(f"refine_rounds must be >= 1, got {refine_rounds}")
        self.searcher = searcher
        self.source_name = source_name
        self.sentence_searcher = sentence_searcher
        self.k = k
        self.h = h
        self.doc_trans_mode = doc_trans_mode
        self.max_rounds = max_rounds
        self.switch_share = switch_share
        self.mbr = mbr
        self.share_repeated = share_repeated
        self.guess_searcher = guess_searcher
        self.contrastive = contrastive
        self.refine_unit, self.refine_rounds = refine_unit, refine_rounds
        self.stats = Stats()

    # ---- requests ---------------------------------------------------------
    def _ids(self, text: str, source: bool) -> list[int]:
        return self.searcher.model.encode(text, source=source)

    def fits(self, source_sents: Sequence[str]) -> bool:
        """Does this source window fit the model's max positions?"""
        return len(self._ids(join(source_sents), source=True)) <= self.searcher.model.max_positions

    def request(self, source_sents: Sequence[str], prefix_sents: Sequence[str] = (), line: int | None = None,
                drop_newest: bool = False, continuation: int = 1, document: Sequence[str] = ()) -> object:
        """A search request for the window ``source_sents`` with forced target context ``prefix_sents``.

        Drops the oldest context sentences (source and target alike) while the
        window exceeds the model's max positions; with ``drop_newest`` (a
        window of right context, first-sentence) the last ones instead.
        Counted in the stats (requests, truncations). ``continuation``: the target tokens (``</s>`` not
        counted) that must fit after the prefix: 1 for a search, the target's length for forced scoring.
        ``document``: the whole source document, which a prompting model gives before the conversation
        (source-primed); it is never truncated.
        """
        request, truncated = self.build(source_sents, prefix_sents, line, drop_newest, continuation, document)
        if truncated:
            self.stats.context_truncated += 1
        self.stats.requests += 1
        return request

    def build(self, source_sents: Sequence[str], prefix_sents: Sequence[str] = (), line: int | None = None,
              drop_newest: bool = False, continuation: int = 1, document: Sequence[str] = ()) -> tuple[object, bool]:
        """:meth:`request` without accounting: the request and whether its context was truncated."""
        from .requests import Request
        from ..textio import InputError

        source_sents, prefix_sents = list(source_sents), list(prefix_sents)
        limit = self.searcher.model.max_positions
        truncated = False
        document_ids = self._ids(join(document), source=True) if document else []
        while True:
            src_ids = self._ids(join(source_sents), source=True)
            prefix_ids = self._ids(join(prefix_sents) + f" {SEP}", source=False)[:-1] if prefix_sents else []
            # the model says what fits (ModelLike.fits): an encoder-decoder's source and decoder positions (its
            # prompt, the prefix, the continuation), a causal LM's whole conversation
            if self.searcher.model.fits(src_ids, prefix_ids, continuation, document=document_ids):
                break
            if len(source_sents) <= 1 and not prefix_sents:
                # the decoder's prompt: fairseq's </s>; transformers' start and language tokens
                prompt = len(getattr(self.searcher.model, "prompt", (None,)))
                found = (f"{len(document_ids)} in the whole source document before the sentence (source-primed)"
                         if document_ids else f"{len(src_ids)} in the sentence alone" if len(src_ids) > limit else
                         f"{prompt + continuation} decoder positions for the target alone")
                raise InputError(
                    self.source_name,
                    f"expected at most {limit} tokens (the model's max positions), found {found}",
                    None if line is None else line + 1,
                )
            truncated = True
            if len(source_sents) > 1:
                source_sents = source_sents[:-1] if drop_newest else source_sents[1:]
            prefix_sents = prefix_sents[1:] if prefix_sents else prefix_sents
            if len(prefix_sents) >= len(source_sents):
                prefix_sents = prefix_sents[len(prefix_sents) - len(source_sents) + 1:]
        contrast = None
        if self.contrastive and (prefix_ids or len(source_sents) > 1 or document_ids):
            # the sentence without its context: the current (last) sentence alone, as no-context decodes it
            contrast = Request(self._ids(source_sents[-1], source=True), [], line=line)
        return Request(src_ids, prefix_ids, document_ids, line=line, contrast=contrast), truncated

    def text(self, hyp) -> str:
        return self.searcher.model.decode(hyp.tokens)

    def with_draft(self, request, text: str | None):
        """``request`` with ``text`` (a guess at its hypothesis: the first pass's, the last round's) as its draft,
        where the search verifies drafts (:mod:`docnmt.decode.verification`: the output is the same)."""
        from .verification import verifies

        if text is None or not verifies(self.searcher):
            return request
        return replace(request, draft=self.searcher.model.encode(text, source=False)[:-1])

    def best(self, nbest: list, keep=None, text=None, source: str = ""):
        """The hypothesis a strategy keeps of one search's candidates: the beam's best, or the one its selection
        chooses (:mod:`docnmt.decode.mbr`) by the words (``@@ `` joins removed) of ``keep`` (the kept part) of
        ``text`` (default :meth:`text`), and ``source``, the kept text's source (for a learned metric)."""
        if self.mbr is None:
            return nbest[0]
        texts = [remove_bpe(keep(t) if keep else t) for t in map(text or self.text, nbest)]
        return nbest[self.mbr.select(texts, source, [h.complete for h in nbest], [h.logprob for h in nbest])]

    def first_segment(self, hyp, count: bool = True, line: int | None = None) -> str:
        segments = split(self.text(hyp))
        if len(segments) != 1 and count:
            self.stats.sep_mismatch += 1
            if line is not None:
                self.stats.sep_mismatch_lines.append(line)
        return segments[0]

    def search(self, requests: list, searcher=None) -> list:
        """Each request's n-best list from one search call of ``searcher`` (default the document model's), in which
        identical requests (the same source window, forced prefix and document: a repeated sentence, a ctxpro set's
        examples of one document, doc-trans-beam's candidates that differ only before the window) are searched once
        and share its hypotheses: a request gets the same translation wherever it recurs, and the search's cost is
        that of the distinct requests (counted in ``Stats.repeated_requests``)."""
        searcher = searcher or self.searcher
        if not self.share_repeated:
            return searcher.search(requests)
        first: dict[tuple, int] = {}
        distinct, where = [], []
        for request in requests:
            key = request_tokens(request)
            if key not in first:
                first[key] = len(distinct)
                distinct.append(request)
            where.append(first[key])
        self.stats.repeated_requests += len(requests) - len(distinct)
        if len(distinct) == len(requests):
            return searcher.search(requests)
        found = searcher.search(distinct)
        return [list(found[n]) for n in where]

    def search_round(self, requests: list) -> list:
        """One dependent round: all ``requests`` in one search call (batched by length; :meth:`search`)."""
        self.stats.rounds += 1
        return self.search(requests)




def _by_position(docs: list[Document]):
    """Sentence positions 0..max; at each, the documents that have that sentence."""
    longest = max((len(d) for d in docs), default=0)
    for i in range(longest):
        yield i, [d for d in docs if i < len(d)]


def _context_search(dec: Decoder, docs: list[Document], context_of, primed: bool = False) -> list[list[str]]:
    """Each document sentence by sentence, target context from ``context_of(doc, i, translated)``; ``primed``: each
    request gives the whole source document first (source-primed).

    Sentence i of a document is searched once its sentence i - 1 is translated, and the sentences of different
    documents do not wait on each other. Each search call takes the next sentence of every document that has one
    left (position by position), or, where the searcher cuts its requests into batches of ``batch_size``
    (``batches_requests``), of the ``batch_size`` documents with the most sentences left: its batches stay full, and
    the documents take about as many batches as their sentences fill (not one batch or more per position). A
    request's search does not depend on its batch, so the output is the same. ``Stats.rounds`` counts the
    dependent rounds, the longest document's sentences, either way."""
    out = [[""] * len(d) for d in docs]
    done = [0] * len(docs)  # sentences translated, per document
    size = dec.searcher.batch_size if getattr(dec.searcher, "batches_requests", False) else None
    while True:
        left = [n for n, d in enumerate(docs) if done[n] < len(d)]
        if not left:
            break
        if size is not None and len(left) > size:
            left = sorted(left, key=lambda n: (done[n] - len(docs[n]), n))[:size]
        pending = [(n, docs[n], done[n]) for n in left]
        requests = [dec.request(window(d, i - dec.k + 1, i + 1), context_of(d, i, out[n]), d.lines[i],
                                document=d.src if primed else ()) for n, d, i in pending]
        for (n, d, i), nbest in zip(pending, dec.search(requests)):
            out[n][i] = dec.first_segment(dec.best(nbest, _first_segment, source=d.src[i]))
            done[n] += 1
    dec.stats.rounds += max((len(d) for d in docs), default=0)
    return out


def _known_context_search(dec: Decoder, docs: list[Document], context_of, draft_of=None) -> list[list[str]]:
    """Every sentence of every document in one search call, target context ``context_of(doc, i)`` known in advance
    (``draft_of(doc, i)``: a guess at its translation, which a greedy search verifies)."""
    flat = [(n, i) for n, d in enumerate(docs) for i in range(len(d))]
    requests = [
        dec.with_draft(dec.request(window(docs[n], i - dec.k + 1, i + 1), context_of(docs[n], i), docs[n].lines[i]),
                       None if draft_of is None else draft_of(docs[n], i)) for n, i in flat
    ]
    out = [[""] * len(d) for d in docs]
    for (n, i), nbest in zip(flat, dec.search_round(requests)):
        out[n][i] = dec.first_segment(dec.best(nbest, _first_segment, source=docs[n].src[i]), line=docs[n].lines[i])
    return out


@strategy("sentence-level", "O(NL)", models=("sentence",), sentence_alone=True, target_context="none")
def sentence_level(dec: Decoder, docs: list[Document]) -> list[list[str]]:
    """The baseline: the sentence-level model, each sentence alone.

    E_i = argmax_E p_sent(E | F_i).  Cost O(NL).
    """
    searcher = dec.sentence_searcher or dec.searcher
    flat = [(n, i) for n, d in enumerate(docs) for i in range(len(d))]
    from .requests import Request

    requests = [Request(searcher.model.encode(docs[n].src[i], source=True), [], line=docs[n].lines[i]) for n, i in flat]
    dec.stats.requests += len(requests)
    out = [[""] * len(d) for d in docs]
    dec.stats.rounds += 1
    for (n, i), nbest in zip(flat, dec.search(requests, searcher)):
        out[n][i] = searcher.model.decode(dec.best(nbest, text=lambda h: searcher.model.decode(h.tokens),
                                                   source=docs[n].src[i]).tokens)
    return out


@strategy("no-context", "O(NL)", sentence_alone=True, target_context="none")
def no_context(dec: Decoder, docs: list[Document]) -> list[list[str]]:
    """The document-level model without any context (analysis only).

    E_i = argmax_E p(E | F_i).  Cost O(NL).
    """
    flat = [(n, i) for n, d in enumerate(docs) for i in range(len(d))]
    requests = [dec.request([docs[n].src[i]], (), docs[n].lines[i]) for n, i in flat]
    out = [[""] * len(d) for d in docs]
    for (n, i), nbest in zip(flat, dec.search_round(requests)):
        out[n][i] = dec.first_segment(dec.best(nbest, _first_segment, source=docs[n].src[i]))
    return out


@strategy("full-segment", "O(NL)", contrapro=False, guided=True, sidecar=("realigned_documents",),
          target_context="segment")
def full_segment(dec: Decoder, docs: list[Document]) -> list[list[str]]:
    """Non-overlapping windows F_1^k, F_{k+1}^{2k}, ..., each translated whole and split on <sep>.

    E_{i-k+1}^i = argmax p(E_{i-k+1}^i | F_{i-k+1}^i) (Eq. 1); the last window
    of a document may be shorter than k.  Cost O(NL). With a document context
    (k: the longest document) each document is one window: the whole document
    in one turn; chunks of n sentences are k = n. A window whose output has
    another count of segments is mapped back to its sentences
    (:mod:`docnmt.decode.realign`), against the first pass where the
    documents have one.
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
    for (n, a, b), nbest in zip(chunks, dec.search_round(requests)):
        segments = split(dec.text(dec.best(nbest, source=" ".join(docs[n].src[a:b]))))
        if len(segments) != b - a:  # mapped back to the window's sentences (docnmt.decode.realign)
            dec.stats.sep_mismatch += 1
            dec.stats.realigned_documents.add(n)
            guide = None if docs[n].first_pass is None else docs[n].first_pass[a:b]
            segments = realign(docs[n].src[a:b], segments, guide)
        out[n][a:b] = segments
    return out


@strategy("last-sentence", "O(NLk)", sidecar=("generated_context",), target_context="recorded")
def last_sentence(dec: Decoder, docs: list[Document]) -> list[list[str]]:
    """Overlapping windows F_{i-k+1}^i (Eq. 1); keep the last segment as the translation of F_i.

    Cost O(NLk): every sentence is translated in k windows (at beam 1 most of a window is its neighbours' draft:
    :mod:`docnmt.decode.overlapping`).
    """
    return overlapping(dec, docs, keep_last=True)


@strategy("first-sentence", "O(NLk)", target_context="window")
def first_sentence(dec: Decoder, docs: list[Document]) -> list[list[str]]:
    """Overlapping windows F_i^{i+k-1} (Eq. 1); keep the first segment as the translation of F_i.

    Uses right context only.  Cost O(NLk) (drafts at beam 1 as last-sentence's).
    """
    return overlapping(dec, docs, keep_last=False)


@strategy("2-pass", "O(2NL)", first_pass=True, sidecar=("sep_mismatch_lines",), target_context="first-pass")
def two_pass(dec: Decoder, docs: list[Document]) -> list[list[str]]:
    """Target context from a sentence-level first pass Ẽ_1^M:

    E_i = argmax_E p(E | F_{i-k+1}^i, Ẽ_{i-k+1}^{i-1}).  Cost O(2NL) (first pass included).
    """
    _need_first_pass(docs, "2-pass")
    return _known_context_search(dec, docs, lambda d, i: previous(d.first_pass, i, dec.k),
                                 lambda d, i: d.first_pass[i])


def _need_first_pass(docs: list[Document], who: str, instead: str = "") -> None:
    """A ValueError unless every document has its first pass (``instead``: what else would do, said after it)."""
    for d in docs:
        if d.first_pass is None:
            raise ValueError(f"{who} needs the sentence-level hypotheses (first pass){instead}")


@strategy("doc-trans", "O(NL)", parallel_first_pass=True, sidecar=("doc_trans_mode",))
def doc_trans(dec: Decoder, docs: list[Document]) -> list[list[str]]:
    """Sentence by sentence, the model's own earlier output as target context:

    E_1 = argmax p(E_1 | F_1), E_i = argmax_E p(E | F_{i-k+1}^i, Ê_{i-k+1}^{i-1}).  Cost O(NL).

    ``dec.doc_trans_mode`` sequential: each document sentence by sentence (:func:`_context_search`); parallel: the
    fixed-point iteration from the first pass (module docstring), the same
    result in fewer, larger batches (cost O(NL) per round, rounds re-decoding
    only the sentences whose context changed).
    """
    if dec.doc_trans_mode == "parallel":
        if dec.guess_searcher is None:
            _need_first_pass(docs, "parallel doc-trans", " or a guess searcher (Decoder(guess_searcher=...))")
        return FixedPoint(dec, docs).run()
    return _context_search(dec, docs, lambda d, i, own: previous(own, i, dec.k))


@strategy("cheating", "O(NL)", reference=True, sidecar=("sep_mismatch_lines",), target_context="reference")
def cheating(dec: Decoder, docs: list[Document]) -> list[list[str]]:
    """The reference as target context (analysis only):

    E_i = argmax_E p(E | F_{i-k+1}^i, E°_{i-k+1}^{i-1}).  Cost O(NL).
    """
    for d in docs:
        if d.ref is None:
            raise ValueError("cheating needs the reference")
    return _known_context_search(dec, docs, lambda d, i: previous(d.ref, i, dec.k))


@dataclass
class _Candidate:
    sentences: list[str]
    score: float
    mismatches: int = 0


@strategy("doc-trans-beam", "O(NLh)", needs=("beam_search",))
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
                requests.append(dec.request(window(d, i - dec.k + 1, i + 1), previous(cand.sentences, i, dec.k), d.lines[i]))
        expanded: dict[int, list[_Candidate]] = {}
        for (n, cand), nbest in zip(owners, dec.search_round(requests)):
            for hyp in nbest[:dec.h]:
                text = dec.first_segment(hyp, count=False)
                mismatch = int(len(split(dec.text(hyp))) != 1)
                expanded.setdefault(n, []).append(
                    _Candidate(cand.sentences + [text], cand.score + hyp.score, cand.mismatches + mismatch)
                )
        for n, cands in expanded.items():
            cands.sort(key=lambda c: c.score, reverse=True)
            beams[n] = cands[:dec.h]
    if dec.mbr is not None:  # the document hypotheses, by a document-level utility (their sentences joined)
        for n, cands in enumerate(beams):
            chosen = dec.mbr.select([remove_bpe(" ".join(c.sentences)) for c in cands], " ".join(docs[n].src))
            beams[n] = [cands[chosen]] + cands[:chosen] + cands[chosen + 1:]
    dec.stats.sep_mismatch += sum(beams[n][0].mismatches for n, d in enumerate(docs) if len(d))
    return [beams[n][0].sentences if len(d) else [] for n, d in enumerate(docs)]


@strategy("source-primed", "O(NL)", needs=("conversation",))
def source_primed(dec: Decoder, docs: list[Document]) -> list[list[str]]:
    """doc-trans after the whole source document (a prompting model's strategy; Hu, Vamvas & Sennrich 2025):

    E_i = argmax_E p(E | F_1^M, F_{i-k+1}^i, Ê_{i-k+1}^{i-1}): the prompt gives the source document first, then
    the conversation of doc-trans. Position by position.  Cost O(NL), each prompt longer by the document (which
    the reused cache computes once per document).
    """
    return _context_search(dec, docs, lambda d, i, own: previous(own, i, dec.k), primed=True)


from . import refinement  # noqa: E402,F401 (registers refine, after source-primed)


def decode_rules() -> list[str]:
    """The workflow's decode rules, one per strategy in the registry's order (:attr:`StrategyInfo.rule`): the
    manual's map reads them (:mod:`docnmt.seams`)."""
    return [info.rule for info in STRATEGIES.values()]

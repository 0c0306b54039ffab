"""What every backend's search takes, gives and counts: a request (:class:`Request`) and its hypotheses
(:class:`Hypothesis`), a forced target's score (:class:`Scored`), the error of one request (:class:`RequestError`),
a window's ids as its sentences' (:func:`split_at_sep`), the batches of a search (:func:`token_batches`) and the cost
counters every searcher keeps (:class:`Counted`, whose :meth:`~Counted._setup` checks and sets a searcher's settings),
and the dtypes a model runs in. The interface of a backend (:mod:`docnmt.decode.backend`) is written in these types."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

from ..textio import InputError


@dataclass
class Scored:
    """Log-probability (natural log) of a scored part of a target and its token count (``</s>`` included)."""

    logprob: float
    tokens: int


#: ``--dtype`` names and their torch dtypes.
DTYPES = {"float32": "float32", "fp32": "float32", "float16": "float16", "fp16": "float16",
          "bfloat16": "bfloat16", "bf16": "bfloat16"}
#: The search's and forced scoring's precision unless asked otherwise, on every device: fairseq's
#: default (fairseq-generate runs in float32 without --fp16), as the paper searched. Half precision
#: is an option (``--dtype``, config ``decode.dtype``); the tables' notes name it where it was used.
DEFAULT_DTYPE = "float32"
#: The dtype a served model's decodes record: its precision is the server's, which the endpoint does not report.
SERVED_DTYPE = "served"


def resolve_dtype(dtype: str | None, device: str | None = None) -> str:
    """The dtype name a model runs in: ``dtype`` (an alias of :data:`DTYPES`), float32 when None, on any device."""
    if dtype is None:
        return DEFAULT_DTYPE
    if dtype not in DTYPES:
        raise ValueError(f"unknown dtype {dtype!r}, expected one of {', '.join(DTYPES)}")
    return DTYPES[dtype]


@dataclass(frozen=True)
class Request:
    """One search: source ids (ending in ``</s>``) and a forced target prefix (no ``</s>``)."""

    source: Sequence[int]
    prefix: Sequence[int] = field(default_factory=tuple)
    #: a prompting backend's whole source document, given before the conversation (source-primed; its sentences
    #: apart by the model's ``sep``); empty for every other strategy and backend
    document: Sequence[int] = field(default_factory=tuple)
    #: the source line (0-based, in the decode's source file) whose translation the request searches, where the
    #: strategy knows it: a backend's error about one request names it (:class:`RequestError`); not compared
    line: int | None = field(default=None, compare=False)
    #: context-aware (contrastive) decoding: the same sentence without its context (the current sentence alone, as
    #: no-context decodes it), whose scores each step subtracts (:mod:`docnmt.decode.contrastive`); None: a plain
    #: search
    contrast: "Request | None" = None
    #: a guess at the hypothesis (token ids without the end token) that a greedy search verifies instead of
    #: decoding it again (:mod:`docnmt.decode.verification`); None: none. It never changes the output, so it is not
    #: part of the request's identity
    draft: Sequence[int] | None = field(default=None, compare=False)
    #: refine (:mod:`docnmt.decode.refinement`): the draft translation of ``source`` that the prompt asks the model to
    #: improve (its sentences apart by the model's ``sep``); empty for every other strategy
    refining: Sequence[int] = field(default_factory=tuple)
    #: refine's sentence unit: the whole draft document shown beside the source ``document`` (sentences apart by
    #: ``sep``)
    draft_document: Sequence[int] = field(default_factory=tuple)


def request_tokens(request) -> tuple[tuple[int, ...], ...]:
    """What a request's search depends on: its source, forced prefix and document token ids (not its line), refine's
    draft where it has one, and its contrast's where it has one. Two requests with the same are the same search:
    :meth:`docnmt.decode.strategies.Decoder.search` searches them once, and the resume journal's digest
    (:func:`docnmt.decode.journal.requests_digest`) reads them."""
    own: tuple = (tuple(request.source), tuple(request.prefix), tuple(getattr(request, "document", ()) or ()))
    refining = tuple(getattr(request, "refining", ()) or ())
    if refining:
        own += (refining, tuple(request.draft_document))
    contrast = getattr(request, "contrast", None)
    return own if contrast is None else own + request_tokens(contrast)


class RequestError(InputError):
    """A request that failed for a reason of its own (a served model's endpoint gave up on it): names the endpoint
    (``where``) and, where known, the source line of the request (:attr:`Request.line`, 0-based). The decode CLI names
    the document and sentence of that line (:meth:`located`)."""

    def __init__(self, where: str, message: str, request_line: int | None = None):
        self.request_line = request_line
        self.where, self.what = where, message
        super().__init__(where, message)

    def located(self, docs) -> "RequestError":
        """The error with the request's document and sentence named (``docs``: the decode's documents)."""
        if self.request_line is None:
            return self
        for doc in docs:
            if self.request_line in doc.lines:
                place = (f"the request of document {doc.docid}, sentence {doc.lines.index(self.request_line) + 1} "
                         f"(source line {self.request_line + 1})")
                return RequestError(self.where, f"{place}: {self.what}", None)
        return RequestError(self.where, f"the request of source line {self.request_line + 1}: {self.what}", None)


@dataclass
class Hypothesis:
    """A continuation after the prefix: ``tokens`` without ``</s>``; ``score`` is fairseq's
    length-normalized score, ``logprob`` the sum of the generated tokens' log-probs (``</s>`` included).

    ``complete``: whether it is the answer the request asked for, which MBR selection chooses among
    (:meth:`docnmt.decode.selection.Selector.select`). A causal LM's answer is complete where it ended with the end of
    its turn and has as many lines as the request's last message; an encoder-decoder's hypotheses end with ``</s>``
    and are always complete."""

    tokens: list[int]
    score: float
    logprob: float
    complete: bool = True


#: The most positions one batch of a search may hold (:func:`token_batches`): beam x (source + prefix + the
#: hypothesis' token limit) per request, times its requests. With the default limit of 200 tokens a hypothesis, the
#: paper's sentence windows fill the 64 requests of a batch; long windows (a whole document) give smaller batches.
#: An encoder-decoder's default; a causal LM, whose keys and values per position are far larger, has its own
#: (:attr:`Backend.max_tokens`).
MAX_TOKENS = 400_000


def token_batches(order: Sequence[int], size, max_tokens: int | None = MAX_TOKENS, max_requests: int = 64,
                  together=None):
    """Consecutive runs of ``order`` as batches: each at most ``max_requests`` requests and, padded to its largest,
    at most ``max_tokens`` positions (``size(i)``: request i's positions; a request larger than the limit alone is a
    batch of its own); ``together(i, j)``: whether request j may join a batch that begins with request i."""
    batch: list[int] = []
    largest = 0
    for i in order:
        grown = max(largest, size(i))
        if batch and (len(batch) == max_requests or (max_tokens is not None and grown * (len(batch) + 1) > max_tokens)
                      or (together is not None and not together(batch[0], i))):
            yield batch
            batch, grown = [], size(i)
        batch.append(i)
        largest = grown
    if batch:
        yield batch


def split_at_sep(ids: Sequence[int], sep: int | None, dropped) -> list[list[int]]:
    """A window's ids as its sentences' ids: split at ``sep`` (the model's separator id), the ids in ``dropped`` (end
    and padding tokens) left out."""
    segments: list[list[int]] = [[]]
    for i in ids:
        if i == sep:
            segments.append([])
        elif i not in dropped:
            segments[-1].append(int(i))
    return segments


#: The counters of a searcher that prompts a model with a cache (:meth:`Counted.prompt_counters`: a causal LM's) and
#: their columns' names in Table 1 (a backend's :class:`docnmt.decode.backend.CostColumns`).
PROMPT_COUNTERS = (("tokens_prefilled", "tokens prefilled"), ("tokens_cached", "tokens from cache"),
                   ("tokens_generated", "tokens generated"))


#: The counters of draft verification (:meth:`Counted.draft_counters`).
DRAFT_COUNTERS = ("verified_requests", "draft_tokens", "accepted_tokens", "decoded_tokens")


class Counted:
    """The cost counters every backend's searcher keeps (docnmt.decode.backends.fairseq.search's docstring, "Cost counters"), and
    its progress hook: ``on_batch``, where set, is called with the number of requests of each batch once that
    batch is searched (``docnmt-translate`` prints its progress lines from it)."""

    track_cache: bool = False  # measure cache_bytes_peak (bench/decode)
    on_batch: Callable[[int], None] | None = None
    forward_calls: int = 0
    decoder_positions: int = 0
    #: batches split in two because they ran out of the device's memory (:meth:`searched_in_halves`)
    oom_splits: int = 0
    max_tokens: int | None = None
    #: whether :meth:`search` cuts its requests into batches of at most ``batch_size`` requests, one after another
    #: (then a strategy whose searches wait on each other gives it ``batch_size`` ready requests at a time, so that
    #: its batches stay full: docnmt.decode.strategies' ``_context_search``); False: a searcher that gives the
    #: engine or the server all requests of a call at once
    batches_requests: bool = False
    #: greedy searches verify their requests' drafts (:mod:`docnmt.decode.verification`), where the searcher can
    verify_drafts: bool = False

    def _setup(self, model, beam: int, lenpen: float, batch_size: int, max_tokens: int | None,
               max_new_tokens: int | None = None) -> None:
        """What every searcher's constructor sets first: its ``model`` and search settings, each at least 1 (else a
        ValueError naming them all; ``max_new_tokens`` None: a searcher whose hypotheses have another limit,
        fairseq's ``max_len_a`` and ``max_len_b``), the model's ``eos``, ``pad``, ``vocab`` and ``max_positions``
        (the searcher's source and target positions, which an encoder-decoder may set apart afterwards), and its
        counters at zero."""
        limits = {"beam": beam, "batch_size": batch_size, "max_new_tokens": max_new_tokens}
        given = {name: value for name, value in limits.items() if value is not None}
        if min(given.values()) < 1:
            names = list(given)
            raise ValueError(f"{', '.join(names[:-1])} and {names[-1]} must be >= 1, got "
                             + ", ".join(f"{name}={value}" for name, value in given.items()))
        self.model = model
        self.beam, self.lenpen, self.batch_size, self.max_tokens = beam, lenpen, batch_size, max_tokens
        if max_new_tokens is not None:
            self.max_new_tokens = max_new_tokens
        self.eos, self.pad, self.vocab = model.eos, model.pad, model.vocab
        self.max_source_positions = self.max_target_positions = model.max_positions
        self.reset_counters()

    def batch_done(self, requests: int) -> None:
        """What a searcher calls after each batch it searched: the progress hook, if any."""
        if self.on_batch is not None:
            self.on_batch(requests)

    def searched_in_halves(self, batch: list[int], search: Callable[[list[int]], list],
                           positions: Callable[[int], int]) -> list:
        """``search(batch)``, a batch of request numbers; where it runs out of the device's memory
        (``torch.OutOfMemoryError``), the batch split in two and each half searched so, down to one request, whose
        running out of memory is an InputError naming the request's positions (``positions(i)``: beam x (source or
        prompt + prefix + answer limit)) and ``--max-tokens``. Each split is counted (:attr:`oom_splits`). The
        output is the same as far as a request's search does not depend on its batch (in float32 a causal LM's does
        not; fairseq's scores may move in their last bits, docnmt.decode.backends.fairseq.search, "Batches")."""
        import sys

        try:
            return search(batch)
        except Exception as err:  # torch.OutOfMemoryError, by name: this module imports no torch (the scorers')
            if type(err).__name__ != "OutOfMemoryError":
                raise
        # out of the handler: its traceback held the failed batch's tensors
        torch = sys.modules.get("torch")
        if torch is not None and torch.cuda.is_available():
            torch.cuda.empty_cache()
        if len(batch) == 1:
            limit = "the backend's default" if self.max_tokens is None else self.max_tokens
            raise InputError(f"request {batch[0] + 1}", f"one request of {positions(batch[0])} positions (beam x "
                                                        f"(source or prompt + prefix + answer limit)) runs out of the "
                                                        f"device's memory alone (--max-tokens {limit} bounds batches, "
                                                        "not a request): lower --beam or --max-len-b, shorten the "
                                                        "context, or use a device with more memory")
        self.oom_splits += 1
        half = len(batch) // 2
        return (self.searched_in_halves(batch[:half], search, positions)
                + self.searched_in_halves(batch[half:], search, positions))

    def prompt_counters(self) -> dict:
        """The counters of a searcher that prompts a model with a cache (a causal LM's): tokens prefilled, read from
        the cache and generated; none for the others (Table 1 shows them where a decode recorded them)."""
        return {}

    def draft_counters(self) -> dict:
        """What draft verification did (:mod:`docnmt.decode.verification`), where it verified a draft: the requests
        verified, their draft tokens, the tokens accepted and those decoded after them; none otherwise."""
        if not self.verified_requests:
            return {}
        return {name: getattr(self, name) for name in DRAFT_COUNTERS}

    def reset_counters(self) -> None:
        self.forward_calls = 0
        self.decoder_positions = 0
        self.oom_splits = 0
        self.encoder_positions = 0
        self.cache_bytes_peak = 0
        self.verified_requests = self.draft_tokens = self.accepted_tokens = self.decoded_tokens = 0

"""Token-level beam search with a forced target prefix: the core of every decoding strategy.

Every search strategy of Herold & Ney (2023, section 3) reduces to one
operation: given a source (token ids ending in ``</s>``) and a *forced* target
prefix (e.g. the target context ``ctx1 <sep> ctx2 <sep>``, possibly empty),
find the n-best continuations after the prefix by beam search. A
:class:`Searcher` does that for a batch of :class:`Request` objects with
fairseq's own :class:`~fairseq.sequence_generator.SequenceGenerator` (beam
search, length normalization ``score = logprob / len ** lenpen``, the
``</s>`` included in ``len``), so that with empty prefixes the output is
identical to ``fairseq-generate`` with the same beam, lenpen, max_len_a/b and
``--required-batch-size-multiple 1``.

The prefix, cached (:meth:`Searcher.search`)
--------------------------------------------
The real decoder input is ``[</s>, p1..pL, g1, g2, ...]``; the generator only
sees its generated part ``[</s>, g1, ...]``. Per batch:

1. *Prefill*: one teacher-forced decoder pass over ``[</s>, p1..p_{L-1}]`` for
   the requests with a prefix (batch = requests, not beams), run through the
   decoder layers with an empty fairseq ``incremental_state``: each layer's
   :class:`~fairseq.modules.MultiheadAttention` stores its self-attention keys
   and values there itself (``prev_key``/``prev_value`` of shape
   (bsz, heads, T, head_dim), fairseq's format and scaling), under a causal
   mask. Inputs are right-padded (a causal pass over left padding would put
   NaN into the padded rows, and 0 * NaN into the real ones).
2. The cache is moved to *left* padding (real entries last), its padding
   zeroed and marked in a padding mask. *Shared prefix* (the default,
   :class:`~docnmt.decode.backends.fairseq.prefix_cache.SharedPrefix`, cascade attention): the context's keys and values
   stay once per request, never repeated to the beams and never reordered
   with them. During the search each decoder layer's self-attention runs
   :func:`~docnmt.decode.backends.fairseq.prefix_cache.cascade_attention` (an instance attribute, removed afterwards): the
   ``beam`` queries of a request attend to its context in one batched product
   per layer, and to the row's own generated tokens as fairseq does (their
   keys and values in the generator's incremental state, reordered with the
   beams); one softmax over both parts' logits weights both parts' values.
   When the generator drops finished requests, the context follows by
   request index (``rows.request``). *Repeated cache*
   (``shared_prefix=False``, the earlier path, kept for comparison): at
   generator step 0 the cache is repeated to the beams (``repeat_interleave``)
   and written into the generator's own incremental state, with the padding
   in ``prev_key_padding_mask`` (fairseq appends each step's mask to it), and
   fairseq reorders it with the beams like any other state.
   *Shared source*: the encoder-attention keys and values are likewise kept once
   per request and never reordered with the beams (fairseq's beamable
   encoder-decoder attention, ``MultiheadAttention.set_beam_size``, which
   fairseq itself only switches on for BART; set for the search and reset
   afterwards). The naive path keeps fairseq-generate's per-beam copies.
3. At step 0 the decoder input is ``p_L`` (the last prefix token) instead of
   ``</s>``; at step s > 0 it is ``g_s``. The prefix is never scored and never
   part of the output.
4. *Positions*: fairseq's decoder computes one position for all rows in
   incremental mode (``padding_idx + step + 1``). During the search,
   ``decoder.embed_positions`` is wrapped by a module that adds each row's
   prefix length: the input at step s of a row with prefix length L sits at
   position ``padding_idx + 1 + L + s`` (sinusoidal and learned embeddings).
   The per-row offsets follow the generator's beam reordering and its removal
   of finished sentences through :meth:`EnsembleModel.reorder_incremental_state`.

fairseq internals relied on (fairseq 0.12): ``SequenceGenerator`` accepting an
``EnsembleModel`` subclass and calling its ``forward_encoder``,
``forward_decoder`` and ``reorder_incremental_state``; the incremental-state
buffer layout of ``MultiheadAttention`` (``_get_input_buffer``/
``_set_input_buffer``, ``prev_key``/``prev_value``/``prev_key_padding_mask``);
``TransformerDecoderBase``'s attributes (``embed_tokens``, ``embed_scale``,
``embed_positions``, ``layers``, ...), mirrored in :func:`~docnmt.decode.backends.fairseq.prefix_cache.decode_after_cache`
for the multi-token cached passes; the incremental position rule above.

The prefix, forced (:meth:`Searcher.search_naive_prefix`)
---------------------------------------------------------
The same search with the prefix forced token by token through all beams
(fairseq's ``prefix_tokens``). fairseq counts the prefix in a hypothesis'
length and score; here it is removed from the output and the score
renormalized over the continuation, and ``</s>`` is banned right after the
prefix (fairseq's ``min_len`` does not apply after ``prefix_tokens``), so both
paths define the same search: same hypotheses, same scores.

Lengths
-------
A row with source length S (``</s>`` included) and prefix length L generates
at most ``min(int(max_len_a * S + max_len_b), P - 1 - L)`` tokens before the
forced ``</s>``, P being the decoder's max positions: prefix, continuation
and ``</s>`` fit the model. (fairseq uses the padded batch width for S; per row
the output does not depend on the batch, and with ``max_len_a = 0`` both are
the same.) A source longer than the encoder's max positions, a prefix that
leaves no room for one token and ``</s>`` (``L > P - 2``), or a source or
prefix with out-of-vocabulary, ``<pad>`` or misplaced ``</s>`` ids is an
:class:`~docnmt.textio.InputError` that names the request and what was wrong.

Cost counters: ``forward_calls`` (decoder forward calls, prefill passes
included), ``decoder_positions`` (decoder token positions computed: each
request's prefix once in the prefill, then one per active beam hypothesis per
generator step; the naive path counts ``beam`` per forced prefix step) and
``encoder_positions`` (source tokens encoded), reset by
:meth:`Searcher.reset_counters`; with ``track_cache`` set, ``cache_bytes_peak``
(the most bytes the search's attention caches held at one generator step).

Precision: the search runs in the model's dtype (:class:`~docnmt.decode.backends.fairseq.model.Model`'s
``dtype``); attention softmaxes (over context and own tokens together) and
log-probabilities are computed in float32, as fairseq does.
"""

from __future__ import annotations

from typing import Sequence

from ...requests import MAX_TOKENS, Counted, Hypothesis, Request, Scored, token_batches  # noqa: F401 - shared types
from ..encoder_decoder import checked_ids, checked_positions
from .drafts import DraftVerifying
from .model import Model
from .kept_state import cache_batch
from .prefix_cache import SharedPrefix, cascade_attention, prefill, row_positions_module, score_forced
from ....textio import InputError


class _Rows:
    """Per-row search state (one entry per beam hypothesis), reordered with the beams."""

    def __init__(self, **tensors):
        self.tensors = {k: v for k, v in tensors.items() if v is not None}

    def __getattr__(self, name):
        try:
            return self.__dict__["tensors"][name]
        except KeyError:
            raise AttributeError(name) from None

    def reorder(self, new_order):
        self.tensors = {k: v.index_select(0, new_order) for k, v in self.tensors.items()}


def _limit_lengths(lprobs, rows: _Rows, step: int, eos: int) -> None:
    """The row's step counted from the end of its prefix: its own where the prefix was forced through the beams
    (naive, ``rows.start``), the generator's step after the cached prefix. min_len 1, also right after a forced
    prefix: no ``</s>`` at a row's step 0; ``</s>`` alone once a row has generated ``rows.limit`` tokens."""
    import math

    if "start" in rows.tensors:
        generated = step - rows.start
        if bool((ban_eos := generated == 0).any()):
            lprobs[ban_eos, eos] = -math.inf
    elif "done" in rows.tensors:  # a drafted request's continuation: its decided tokens are generated already
        generated = step + rows.done
    else:
        generated = step
        if step == 0:
            lprobs[:, eos] = -math.inf
    force_eos = generated >= rows.limit
    if bool(force_eos.any()):
        lprobs[force_eos, :eos] = -math.inf
        lprobs[force_eos, eos + 1:] = -math.inf


def _source_order(encoder_outs, new_order, beam: int, per_request: bool):
    """The order to select the encoder output in after the generator reordered its rows, or None: unchanged.

    The beams of a request share one encoder output and the generator never moves a row to another request:
    reordering only changes something when finished requests are dropped (or at the first expansion to the
    beams). fairseq copies it at every step. ``per_request``: kept one per request, so the first expansion to
    the beams (request ids) and a step that drops nothing change nothing, and a drop keeps the requests of
    the remaining rows (row // beam), as MultiheadAttention reorders the beamable keys and values."""
    out = encoder_outs[0]["encoder_out"] if encoder_outs else []
    if len(out) == 0:
        return None
    if per_request:
        return None if new_order.numel() == out[0].size(1) * beam else new_order.view(-1, beam)[:, 0] // beam
    return None if out[0].size(1) == new_order.numel() else new_order


class _Contrast:
    """Context-aware decoding's second side (:mod:`docnmt.decode.contrastive`): the same rows' generated tokens
    after each request's contrast (the sentence without its context: its own source, no prefix), with an encoder
    output and an incremental state of its own. Each step, :meth:`lprobs` runs the decoder once more on them, with
    the patches of the prefix side (row positions, cascade attention over the cached prefix) taken off for the
    call; the combined scores are ``(1 + alpha) * lp_context - alpha * lp_alone``."""

    def __init__(self, searcher: "Searcher", encoder_out, alpha: float):
        self.searcher, self.encoder_out, self.alpha = searcher, encoder_out, alpha
        self.state: dict = {}

    def lprobs(self, tokens, plain_positions, attentions):
        """The log-probabilities of the next token without context (its decoder input starts with ``</s>``: no
        prefix), in float32."""
        decoder = self.searcher.net.decoder
        saved = [mha.__dict__.pop("forward", None) for mha in attentions]
        positions, decoder.embed_positions = decoder.embed_positions, plain_positions
        try:
            out = decoder.forward(tokens, encoder_out=self.encoder_out, incremental_state=self.state)
            lprobs = self.searcher.net.get_normalized_probs((out[0][:, -1:, :], None), log_probs=True)[:, -1, :]
        finally:
            decoder.embed_positions = positions
            for mha, forward in zip(attentions, saved):
                if forward is not None:
                    mha.forward = forward
        self.searcher.forward_calls += 1
        self.searcher.decoder_positions += tokens.size(0)
        return lprobs

    def combine(self, lprobs, alone):
        """``(1 + alpha) * lprobs - alpha * alone``, where ``alone`` is kept finite (a token impossible without the
        context stays possible with it): with alpha 0, ``lprobs`` exactly."""
        import torch

        alone = alone.float().clamp_min(torch.finfo(torch.float32).min)
        return (1.0 + self.alpha) * lprobs.float() - self.alpha * alone

    def reorder(self, new_order, order):
        """Follow the generator's reordering: the incremental state by rows, the encoder output where requests
        were dropped (``order``: :func:`_source_order`'s)."""
        self.searcher.net.decoder.reorder_incremental_state_scripting(self.state, new_order)
        if order is not None:
            self.encoder_out = self.searcher.net.encoder.reorder_encoder_out(self.encoder_out, order)


def _ensemble(searcher: "Searcher", encoder_out, rows: _Rows, cache, beam: int, shared: "SharedPrefix | None" = None,
              per_request_source: bool = False, contrast: "_Contrast | None" = None, original_positions=None):
    """An EnsembleModel that injects the prefilled cache, the first input and the length limits, and (``contrast``)
    combines each step's scores with those without context.

    ``per_request_source`` (with the beamable encoder attention): the encoder output stays one per request.
    Its keys and values are computed from it at step 0 and kept in the incremental state; after that the
    decoder layers do not read it."""
    from fairseq.sequence_generator import EnsembleModel

    eos = searcher.eos
    attentions = [layer.self_attn for layer in searcher.net.decoder.layers]

    class PrefixEnsemble(EnsembleModel):
        def __init__(self):
            super().__init__([searcher.net])
            self.pending_cache = cache

        def forward_encoder(self, net_input):
            return [encoder_out]

        def forward_decoder(self, tokens, encoder_outs, incremental_states, temperature: float = 1.0):
            step = tokens.size(1) - 1
            if step == 0 and self.pending_cache is not None:  # the repeated cache (no shared prefix)
                state = incremental_states[0]
                for layer, (key, value, mask) in zip(searcher.net.decoder.layers, self.pending_cache):
                    layer.self_attn._set_input_buffer(state, {
                        "prev_key": key.repeat_interleave(beam, dim=0),
                        "prev_value": value.repeat_interleave(beam, dim=0),
                        "prev_key_padding_mask": mask.repeat_interleave(beam, dim=0),
                    })
                self.pending_cache = None
            generated = tokens  # the contrast's decoder input: </s>, then the generated tokens (no prefix)
            if step == 0 and "first" in rows.tensors:
                tokens = tokens.clone()
                tokens[:, 0] = rows.first
                del rows.tensors["first"]  # step 0's alone: not reordered at every step
            searcher.forward_calls += 1
            searcher.decoder_positions += tokens.size(0)
            lprobs, attn = super().forward_decoder(tokens, encoder_outs, incremental_states, temperature)
            if contrast is not None:
                lprobs = contrast.combine(lprobs, contrast.lprobs(generated, original_positions, attentions))
            if searcher.track_cache:
                held = sum(t.numel() * t.element_size() for layer in incremental_states[0].values()
                           for t in layer.values() if t is not None)
                held += shared.nbytes() if shared is not None else 0
                searcher.cache_bytes_peak = max(searcher.cache_bytes_peak, held)
            _limit_lengths(lprobs, rows, step, eos)
            # No attention weights for the generator: it would keep them per row over the source and every
            # step up to the longest limit (rows x source x (limit + 2)), copy them when it drops finished
            # requests and slice them into every finalized hypothesis, for alignments nothing here reads.
            # They do not enter the search.
            return lprobs, None

        def reorder_encoder_out(self, encoder_outs, new_order):
            order = _source_order(encoder_outs, new_order, beam, per_request_source)
            return encoder_outs if order is None else super().reorder_encoder_out(encoder_outs, order)

        def reorder_incremental_state(self, incremental_states, new_order):
            super().reorder_incremental_state(incremental_states, new_order)
            rows.reorder(new_order)
            if contrast is not None:  # the generator reorders the state before the encoder output
                contrast.reorder(new_order, _source_order([contrast.encoder_out], new_order, beam, per_request_source))
            if shared is not None:
                shared.follow()

    return PrefixEnsemble()


def finalized_hypotheses(finalized, prefixes, naive: bool, lenpen: float, eos: int) -> list[list[Hypothesis]]:
    """fairseq's finalized hypotheses of each request as ours, best first: the continuation after the forced prefix
    (fairseq's ``prefix_tokens`` kept it in the tokens where ``naive``), without ``</s>``, its score (the naive
    search's rescored over the continuation alone) and its log-prob."""
    out = []
    for hypos, prefix in zip(finalized, prefixes):
        found = []
        for hypo in hypos:
            tokens = hypo["tokens"].tolist()
            scores = hypo["positional_scores"].float()
            if naive:
                assert tokens[:len(prefix)] == prefix, "fairseq's prefix_tokens did not force the prefix"
                tokens, scores = tokens[len(prefix):], scores[len(prefix):]
                logprob = float(scores.sum())
                score = logprob / len(scores) ** lenpen
            else:
                logprob = float(scores.sum())
                score = float(hypo["score"])
            assert tokens[-1] == eos
            found.append(Hypothesis(tokens[:-1], score, logprob))
        found.sort(key=lambda h: -h.score)  # stable: fairseq's order among equal scores
        out.append(found)
    return out


def _contrasts(searcher: "Searcher", requests: Sequence[Request]) -> list[list[int] | None] | None:
    """Each request's contrast source ids (checked; its prefix must be empty), None for a request without one; None
    where no request has one."""
    found = [getattr(r, "contrast", None) for r in requests]
    if all(c is None for c in found):
        return None
    out: list[list[int] | None] = []
    for number, contrast in enumerate(found, start=1):
        if contrast is None:
            out.append(None)
            continue
        source, prefix = checked_ids(searcher, f"request {number}'s contrast", contrast)
        if prefix:
            raise InputError(f"request {number}'s contrast", "expected no prefix: the sentence without its context")
        out.append(source)
    return out


def _part(values, part: list[int]):
    """A batch's share of per-request ``values``: None where there are none, or none for the batch's first (a
    request without a contrast is batched with those without)."""
    return None if values is None or values[part[0]] is None else [values[i] for i in part]


class Searcher(DraftVerifying, Counted):
    """Beam search after forced target prefixes, batched, with fairseq's SequenceGenerator."""

    batches_requests = True

    vocabulary = "dictionary"  # what error messages call the table of token ids

    def __init__(self, model: Model, beam: int = 12, lenpen: float = 1.0, max_len_a: float = 0.0,
                 max_len_b: int = 200, batch_size: int = 64, shared_prefix: bool = True,
                 max_tokens: int | None = MAX_TOKENS):
        from fairseq.models.transformer import TransformerDecoderBase
        from fairseq.modules import LearnedPositionalEmbedding, SinusoidalPositionalEmbedding

        self._setup(model, beam, lenpen, batch_size, max_tokens)
        self.net = model.model
        decoder = self.net.decoder
        if not isinstance(decoder, TransformerDecoderBase) or decoder.cross_self_attention:
            raise NotImplementedError(f"prefix search supports fairseq transformer decoders, got {type(decoder).__name__}")
        positions = decoder.embed_positions
        if positions is not None and (
            not isinstance(positions, (SinusoidalPositionalEmbedding, LearnedPositionalEmbedding))
            or positions.padding_idx is None
        ):
            raise NotImplementedError(f"positional embedding {type(positions).__name__} is not supported")
        self.beam = min(beam, len(model.dict) - 1)  # fairseq's cap: pad is never selected
        self.max_len_a = max_len_a
        self.max_len_b = max_len_b
        self.shared_prefix = shared_prefix
        self.max_source_positions = self.net.encoder.max_positions()
        self.max_target_positions = decoder.max_positions()

    # ---- validation -------------------------------------------------------
    def _describe(self, token: int) -> str:
        return f"id {token} ({self.model.dict[token]})" if 0 <= token < self.vocab else f"id {token} (not in the dictionary)"

    def _check(self, requests: Sequence[Request]) -> list[tuple[list[int], list[int], int]]:
        """Source ids, prefix ids and the generation limit of each request; InputError when bad."""
        checked = []
        for number, request in enumerate(requests, start=1):
            where = f"request {number}"
            source, prefix = checked_ids(self, where, request)
            room = self.max_target_positions - 1 - len(prefix)
            if room < 1:
                raise InputError(where, f"prefix too long: {len(prefix)} tokens, at most "
                                 f"{self.max_target_positions - 2} fit the model's max target positions "
                                 f"{self.max_target_positions} with one generated token and </s>")
            limit = min(int(self.max_len_a * len(source) + self.max_len_b), room)
            if limit < 1:
                raise InputError(where, f"max_len_a * {len(source)} + max_len_b = {limit}: no token may be generated")
            checked.append((source, prefix, limit))
        return checked

    # ---- batching ---------------------------------------------------------
    def _batches(self, checked, together=None):
        """Longest sources first, at most ``batch_size`` requests and ``max_tokens`` positions a batch
        (:func:`docnmt.decode.requests.token_batches`: beam x (source + prefix + token limit) a request);
        ``together(i, j)``: whether request j may join a batch that begins with request i."""
        order = sorted(range(len(checked)), key=lambda i: (-len(checked[i][0]), -len(checked[i][1]), i))
        if together is not None:  # the requests with a contrast first, then the others: each group in that order
            order = sorted(order, key=lambda i: together(order[0], i) is False)
        yield from token_batches(order, lambda i: checked_positions(self.beam, checked[i]), self.max_tokens,
                                 self.batch_size, together)

    def _encode(self, sources: list[list[int]]):
        import torch

        src_tokens = self.model._collate(sources, left_pad=True)  # fairseq's left_pad_source
        src_lengths = torch.tensor([len(s) for s in sources], device=self.model.device)
        net_input = {"src_tokens": src_tokens, "src_lengths": src_lengths}
        self.encoder_positions += int(src_lengths.sum())
        return net_input, self.net.encoder.forward_torchscript(net_input)

    # ---- search -----------------------------------------------------------
    #: context-aware decoding's alpha for the requests that carry a contrast (:mod:`docnmt.decode.contrastive`)
    cad_alpha: float = 0.5

    def search(self, requests: Sequence[Request]) -> list[list[Hypothesis]]:
        """The ``beam`` best continuations after each request's prefix, best first (prefilled cache); with a contrast
        by CAD's scores (:attr:`cad_alpha`); at beam 1 a draft verified (:class:`.drafts.DraftVerifying`)."""
        return self.verifying_search(requests, lambda part: self._search(part, naive=False))

    #: fairseq's search strategy while :meth:`sample` runs (None: beam search)
    sampling = None

    def sample(self, request: Request, count: int, epsilon: float, seed: int) -> list[Hypothesis]:
        """``count`` epsilon samples after the request's prefix (:mod:`docnmt.decode.sampling`), seeded by ``seed``."""
        from ...sampling import fairseq_epsilon_sampling, seeded_generator

        generator = seeded_generator(self.model.device, seed)
        saved = self.beam, self.sampling
        self.beam, self.sampling = count, fairseq_epsilon_sampling(self.model.dict, epsilon, generator)
        try:
            return self.search([request])[0]
        finally:
            self.beam, self.sampling = saved

    def search_naive_prefix(self, requests: Sequence[Request]) -> list[list[Hypothesis]]:
        """Same search, the prefix forced token by token through all beams (fairseq's ``prefix_tokens``)."""
        return self._search(requests, naive=True)

    def _search(self, requests, naive: bool, checked=None, done=None, kept=None) -> list[list[Hypothesis]]:
        """``checked``: :meth:`_check`'s by default; ``done``: each hypothesis' tokens decided before (a draft's);
        ``kept``: each request's :class:`~.kept_state.KeptRequest` (a verified draft's continuation: no encoding)."""
        checked = self._check(requests) if checked is None else checked
        contrasts = _contrasts(self, requests)
        results: list[list[Hypothesis] | None] = [None] * len(checked)
        # with contrasts, the requests with one and those without are batched apart (each batch runs both sides or one)
        together = None if contrasts is None else (lambda i, j: (contrasts[i] is None) == (contrasts[j] is None))
        for batch in self._batches(checked, together):
            hyps = self.searched_in_halves(batch, lambda part: self._search_batch(
                [checked[i] for i in part], naive, _part(contrasts, part), _part(done, part), _part(kept, part)),
                                           lambda i: checked_positions(self.beam, checked[i]))
            for i, h in zip(batch, hyps):
                results[i] = h
            self.batch_done(len(batch))
        return results  # type: ignore[return-value]

    def _search_batch(self, batch, naive: bool, contrasts=None, done=None, kept=None) -> list[list[Hypothesis]]:
        import torch
        from fairseq.sequence_generator import SequenceGenerator

        device = self.model.device
        sources = [s for s, _, _ in batch]
        prefixes = [p for _, p, _ in batch]
        lengths = [len(p) for p in prefixes]
        beam = self.beam

        def per_row(values):
            return torch.tensor(values, device=device).repeat_interleave(beam)

        with torch.no_grad():
            net_input, encoder_out = self._encode(sources) if kept is None else self.kept_sources(sources, kept)
            decoder = self.net.decoder
            original_positions = decoder.embed_positions
            prefix_tokens = None
            cache = None
            shared = None
            if naive:
                rows = _Rows(start=per_row(lengths), limit=per_row([limit for _, _, limit in batch]))
                longest = max(L + limit for (_, _, limit), L in zip(batch, lengths))
                if any(lengths):
                    prefix_tokens = self.model._collate([p or [self.pad] for p in prefixes], left_pad=False)
            else:
                any_prefix = any(lengths)
                first = [p[-1] if p else self.eos for p in prefixes]
                rows = _Rows(
                    limit=per_row([limit for _, _, limit in batch]),
                    offsets=per_row(lengths) if any_prefix else None,
                    first=per_row(first) if any_prefix else None,
                    done=None if done is None else per_row(done),
                )
                longest = max(limit for _, _, limit in batch)
                cache = prefill(self, prefixes, encoder_out) if kept is None else cache_batch(kept, device)
                if cache is not None and self.shared_prefix:
                    rows.tensors["request"] = per_row(list(range(len(batch))))
                    shared = SharedPrefix(cache, rows, beam)
                    cache = None  # the shared copy (keys transposed) replaces it: not held twice
            contrast = None
            if contrasts is not None:
                if naive:
                    raise NotImplementedError("context-aware decoding runs on the cached prefix, not the naive path")
                contrast = _Contrast(self, self._encode(contrasts)[1], self.cad_alpha)
            ensemble = _ensemble(self, encoder_out, rows, cache, beam, shared, per_request_source=not naive,
                                 contrast=contrast, original_positions=original_positions)
            generator = SequenceGenerator(
                ensemble, self.model.dict, beam_size=beam, max_len_a=0, max_len_b=longest,
                min_len=1 if done is None else 0,  # a continuation may end at once (its decided tokens came first)
                normalize_scores=True, len_penalty=self.lenpen, search_strategy=self.sampling,
            )
            attentions = [layer.self_attn for layer in decoder.layers]
            # fairseq's beamable encoder attention: the source's keys and values once per request
            # (not per beam), never reordered with the beams (fairseq only enables it for BART)
            beamable = [] if naive else [layer.encoder_attn for layer in decoder.layers
                                         if getattr(layer, "encoder_attn", None) is not None]
            try:
                if "offsets" in rows.tensors and original_positions is not None:
                    decoder.embed_positions = row_positions_module(original_positions, rows)
                for mha in beamable:
                    mha.set_beam_size(beam)
                if shared is not None:  # instance attributes, removed below: the model is left as it was
                    for number, mha in enumerate(attentions):
                        mha.forward = cascade_attention(mha, number, shared)
                finalized = generator.forward({"net_input": net_input}, prefix_tokens=prefix_tokens)
            finally:
                decoder.embed_positions = original_positions
                for mha in attentions:
                    mha.__dict__.pop("forward", None)
                for mha in beamable:
                    mha.set_beam_size(1)
        return finalized_hypotheses(finalized, prefixes, naive, self.lenpen, self.eos)

    # ---- forced scoring with the cache -------------------------------------
    def score_forced(self, requests: Sequence[Request], targets: Sequence[Sequence[int]],
                     ends: Sequence[int] | None = None) -> list[Scored]:
        """Log-prob of each continuation (ids without ``</s>``; ``</s>``, or the token ``ends`` gives
        for it, is appended and scored) after its request's prefix: the prefilled cache plus one
        teacher-forced pass (:func:`docnmt.decode.backends.fairseq.prefix_cache.score_forced`)."""
        return score_forced(self, requests, targets, ends)

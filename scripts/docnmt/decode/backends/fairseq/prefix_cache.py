"""The forced prefix's attention cache, apart from the beam search (:mod:`docnmt.decode.backends.fairseq.search`).

The prefix (a document's target context) is run through the decoder once per
request, teacher-forced (:func:`prefill`); its self-attention keys and values
are then either attended once per request by the ``beam`` rows of the request
(:class:`SharedPrefix` and :func:`cascade_attention`, the default) or repeated
to the beams by the search. During the search each row's positions continue
after its prefix (:func:`row_positions_module`). :func:`score_forced` scores
given continuations after the cached prefix in one teacher-forced pass.

The functions take the :class:`~docnmt.decode.backends.fairseq.search.Searcher` whose model,
limits and counters they use (``searcher.net``, ``searcher.model``,
``forward_calls``, ``decoder_positions``); the module docstring of
:mod:`docnmt.decode.backends.fairseq.search` describes the whole method.
"""

from __future__ import annotations

from typing import Sequence

from ....textio import InputError
from ...requests import Scored
from ..encoder_decoder import checked_target


def embed_positions(module, positions):
    """``module``'s embeddings of explicit positions (any shape), as fairseq computes them."""
    import torch.nn.functional as F
    from fairseq.modules import LearnedPositionalEmbedding, SinusoidalPositionalEmbedding

    if isinstance(module, SinusoidalPositionalEmbedding):
        needed = int(positions.max()) + 1
        if needed > module.weights.size(0):  # fairseq grows the table the same way
            module.weights = SinusoidalPositionalEmbedding.get_embedding(
                needed, module.embedding_dim, module.padding_idx
            ).to(module.weights)
        flat = module.weights.index_select(0, positions.reshape(-1))
        return flat.view(*positions.shape, -1).detach()  # the model's dtype: weights is a buffer
    if isinstance(module, LearnedPositionalEmbedding):
        return F.embedding(positions, module.weight, module.padding_idx, module.max_norm, module.norm_type,
                           module.scale_grad_by_freq, module.sparse)
    raise NotImplementedError(f"positional embedding {type(module).__name__}")


def row_positions_module(inner, rows):
    """``decoder.embed_positions`` for the search: in incremental mode, each row's own position."""
    import torch.nn as nn

    class RowPositions(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = inner
            self.padding_idx = inner.padding_idx
            self.max_positions = inner.max_positions

        def forward(self, input, incremental_state=None, timestep=None, positions=None):
            if incremental_state is None:
                return self.inner(input)
            # fairseq: padding_idx + seq_len for every row; here + the row's prefix length
            pos = self.padding_idx + input.size(1) + rows.offsets
            return embed_positions(self.inner, pos.unsqueeze(1))

    return RowPositions()


class SharedPrefix:
    """The forced context's self-attention keys and values, kept once per request (cascade attention).

    ``cache`` is the prefill's output: per decoder layer (key, value, padding mask), keys and values
    (requests, heads, L, head_dim), the mask (requests, L), True at padding. It is never repeated to
    the beams and never reordered with them; when the generator drops finished requests, the
    selection follows the request index of the remaining rows (``rows.request``). Per layer the
    search reads (keys transposed (requests, heads, head_dim, L), values) and one additive float32
    bias (requests, 1, 1, L), -inf at padding, the same for every layer.
    """

    def __init__(self, cache, rows, beam: int):
        import torch

        mask = cache[0][2]
        bias = torch.zeros(mask.shape, dtype=torch.float32, device=mask.device).masked_fill(mask, float("-inf"))
        self.full = [(key.transpose(2, 3).contiguous(), value) for key, value, _ in cache]
        self.full_bias = bias[:, None, None, :]
        self.rows = rows
        self.beam = beam
        self.layers, self.bias = self.full, self.full_bias
        self.count = mask.size(0)

    def follow(self) -> None:
        """After the generator reordered the rows: keep the context of the requests still searched."""
        count = self.rows.request.numel() // self.beam
        if count != self.count:  # the generator only ever drops requests, in order
            requests = self.rows.request.view(count, self.beam)[:, 0]
            self.layers = [tuple(t.index_select(0, requests) for t in layer) for layer in self.full]
            self.bias = self.full_bias.index_select(0, requests)
            self.count = count

    def nbytes(self) -> int:
        return sum(t.numel() * t.element_size() for layer in self.layers for t in layer) + \
            self.bias.numel() * self.bias.element_size()


def cascade_attention(mha, layer: int, shared: SharedPrefix):
    """A forward for ``mha`` (a decoder layer's self-attention) during the search: one new token per row.

    The row's own generated tokens are attended as fairseq does (keys and values in the generator's
    incremental state, appended each step, reordered with the beams). The forced context is
    attended with one batched product per layer grouped by request: the ``beam`` queries of a
    request against its one copy of the context. Both parts' logits go through one softmax over
    [context; own tokens] (in float32, fairseq's softmax precision), as fairseq's attention over the
    repeated cache computes it, and the weights are split again to weight each part's values. A
    request without context has a context bias of -inf only: weight 0, never NaN (a row always
    attends to its own current token).
    """
    import torch
    from fairseq.modules.multihead_attention import MultiheadAttention

    original = type(mha).forward
    heads, dim = mha.num_heads, mha.head_dim

    def forward(query, key=None, value=None, key_padding_mask=None, incremental_state=None, need_weights=True,
                static_kv=False, attn_mask=None, before_softmax=False, need_head_weights=False):
        if incremental_state is None or query.size(0) != 1 or attn_mask is not None or before_softmax:
            return original(mha, query, key, value, key_padding_mask=key_padding_mask,
                            incremental_state=incremental_state, need_weights=need_weights, static_kv=static_kv,
                            attn_mask=attn_mask, before_softmax=before_softmax, need_head_weights=need_head_weights)
        _, bsz, embed_dim = query.size()
        q = (mha.q_proj(query) * mha.scaling).view(bsz * heads, 1, dim)
        k = mha.k_proj(query).view(bsz * heads, 1, dim)
        v = mha.v_proj(query).view(bsz * heads, 1, dim)
        saved = mha._get_input_buffer(incremental_state)
        if "prev_key" in saved:
            k = torch.cat([saved["prev_key"].view(bsz * heads, -1, dim), k], dim=1)
            v = torch.cat([saved["prev_value"].view(bsz * heads, -1, dim), v], dim=1)
        own_mask = MultiheadAttention._append_prev_key_padding_mask(
            key_padding_mask=key_padding_mask, prev_key_padding_mask=saved.get("prev_key_padding_mask"),
            batch_size=bsz, src_len=k.size(1), static_kv=False)
        saved["prev_key"] = k.view(bsz, heads, -1, dim)
        saved["prev_value"] = v.view(bsz, heads, -1, dim)
        saved["prev_key_padding_mask"] = own_mask
        mha._set_input_buffer(incremental_state, saved)

        # the context, one copy per request: (requests, heads, beam, L) -> (requests, beam, heads, L)
        ctx_key_t, ctx_value = shared.layers[layer]
        requests = ctx_key_t.size(0)
        beam = bsz // requests
        grouped = q.view(requests, beam, heads, dim).transpose(1, 2)
        ctx = (torch.matmul(grouped, ctx_key_t).float() + shared.bias).transpose(1, 2)
        # the row's own tokens: (bsz * heads, 1, generated)
        own = torch.bmm(q, k.transpose(1, 2)).float()
        if own_mask is not None:
            own = own.view(bsz, heads, 1, -1).masked_fill(own_mask.bool()[:, None, None, :], float("-inf"))
        width = ctx.size(-1)
        scores = torch.cat([ctx.reshape(bsz * heads, 1, width), own.view(bsz * heads, 1, -1)], dim=-1)
        weights = torch.softmax(scores, dim=-1).to(v.dtype)
        out = torch.bmm(weights[:, :, width:], v)  # (bsz * heads, 1, dim)
        w_ctx = weights[:, :, :width].view(requests, beam, heads, width).transpose(1, 2)
        out_ctx = torch.matmul(w_ctx, ctx_value)  # (requests, heads, beam, dim)
        out = out.view(requests, beam, heads, dim) + out_ctx.transpose(1, 2)
        return mha.out_proj(out.reshape(1, bsz, embed_dim)), None

    return forward


def decode_after_cache(searcher, tokens, positions, encoder_out, state, attn_mask, padding_mask,
                       keys_only: bool = False):
    """TransformerDecoderBase.extract_features over several new tokens after a cache in ``state``.

    ``positions`` are explicit (bsz, T); ``attn_mask`` (T, cached + T) is added to the
    attention logits; ``padding_mask`` (bsz, T) marks padded new tokens (or None). ``keys_only``
    (the prefill): only the caches are wanted, so the last layer computes its self-attention's keys
    and values (:func:`_cache_keys`) and nothing after them; returns None.
    """
    decoder = searcher.net.decoder
    searcher.forward_calls += 1
    x = decoder.embed_scale * decoder.embed_tokens(tokens)
    if decoder.quant_noise is not None:
        x = decoder.quant_noise(x)
    if decoder.project_in_dim is not None:
        x = decoder.project_in_dim(x)
    if decoder.embed_positions is not None:
        x = x + embed_positions(decoder.embed_positions, positions)
    if decoder.layernorm_embedding is not None:
        x = decoder.layernorm_embedding(x)
    x = decoder.dropout_module(x).transpose(0, 1)
    enc = encoder_out["encoder_out"][0] if len(encoder_out["encoder_out"]) > 0 else None
    enc_mask = encoder_out["encoder_padding_mask"][0] if len(encoder_out["encoder_padding_mask"]) > 0 else None
    last = len(decoder.layers) - 1
    for number, layer in enumerate(decoder.layers):
        if keys_only and number == last and layer.self_attn.bias_k is None and not layer.self_attn.add_zero_attn:
            _cache_keys(layer, x, state)
            return None
        x, _, _ = layer(x, enc, enc_mask, state, self_attn_mask=attn_mask, self_attn_padding_mask=padding_mask)
    if decoder.layer_norm is not None:
        x = decoder.layer_norm(x)
    x = x.transpose(0, 1)
    if decoder.project_out_dim is not None:
        x = decoder.project_out_dim(x)
    return x


def _cache_keys(layer, x, state) -> None:
    """What ``layer``'s self-attention stores in ``state`` for the new tokens ``x`` (T, bsz, C) with nothing
    cached before them, without the attention, the encoder attention or the feed-forward block: the keys and
    values as :class:`~fairseq.modules.MultiheadAttention` computes and keeps them, (bsz, heads, T, head_dim),
    from the same projections of the same input."""
    mha = layer.self_attn
    if layer.normalize_before:
        x = layer.self_attn_layer_norm(x)
    length, bsz, _ = x.size()
    saved = mha._get_input_buffer(state)
    for name, projection in (("prev_key", mha.k_proj), ("prev_value", mha.v_proj)):
        t = projection(x).contiguous().view(length, bsz * mha.num_heads, mha.head_dim).transpose(0, 1)
        saved[name] = t.reshape(bsz, mha.num_heads, length, mha.head_dim)
    mha._set_input_buffer(state, saved)


def causal_mask(new: int, cached: int, like):
    """The (new, cached + new) additive mask of ``new`` tokens after ``cached`` ones: causal among the new."""
    import torch

    mask = torch.zeros(new, cached + new, device=like.device, dtype=like.dtype)
    mask[:, cached:] = torch.triu(torch.full((new, new), float("-inf"), device=like.device), 1).to(like.dtype)
    return mask


def prefill(searcher, prefixes: list[list[int]], encoder_out):
    """One teacher-forced pass over ``[</s>, p1..p_{L-1}]`` of the rows with a prefix.

    Returns per decoder layer (prev_key, prev_value, prev_key_padding_mask) for all rows,
    left-padded to the longest prefix (padding zeroed and masked), or None without prefixes.
    """
    import torch

    rows = [i for i, p in enumerate(prefixes) if p]
    if not rows:
        return None
    device = searcher.model.device
    lengths = torch.tensor([len(prefixes[i]) for i in rows], device=device)
    width = int(lengths.max())
    inputs = searcher.model._collate([[searcher.eos] + prefixes[i][:-1] for i in rows], left_pad=False)
    offsets = torch.arange(width, device=device).unsqueeze(0)
    real = offsets < lengths.unsqueeze(1)
    positions = torch.where(real, searcher.pad + 1 + offsets, torch.full_like(offsets, searcher.pad))
    sub_encoder_out = searcher.net.encoder.reorder_encoder_out(encoder_out, torch.tensor(rows, device=device))
    state: dict = {}
    padding = ~real if not bool(real.all()) else None
    x = searcher.net.decoder.embed_tokens.weight  # dtype/device reference
    decode_after_cache(searcher, inputs, positions, sub_encoder_out, state, causal_mask(width, 0, x), padding,
                       keys_only=True)
    searcher.decoder_positions += int(lengths.sum())
    # right-padded -> left-padded: entry j of a row of length L comes from j - (width - L)
    source_index = offsets - (width - lengths).unsqueeze(1)
    valid = source_index >= 0
    source_index = source_index.clamp(min=0)
    bsz = len(prefixes)
    index = torch.tensor(rows, device=device)
    mask = torch.ones(bsz, width, dtype=torch.bool, device=device)
    mask[index] = ~valid
    cache = []
    for layer in searcher.net.decoder.layers:
        buffer = layer.self_attn._get_input_buffer(state)
        moved = []
        for name in ("prev_key", "prev_value"):
            t = buffer[name]  # (rows, heads, width, head_dim)
            gathered = t.gather(2, source_index[:, None, :, None].expand(-1, t.size(1), -1, t.size(3)))
            gathered = gathered.masked_fill(~valid[:, None, :, None], 0)
            full = t.new_zeros(bsz, t.size(1), width, t.size(3))
            full[index] = gathered
            moved.append(full)
        cache.append((moved[0], moved[1], mask))
    return cache


def score_forced(searcher, requests: Sequence, targets: Sequence[Sequence[int]],
                 ends: Sequence[int] | None = None) -> list[Scored]:
    """Log-prob of each continuation (ids without ``</s>``; ``</s>`` is appended and scored)
    after its request's prefix: the prefilled cache plus one teacher-forced pass.

    ``ends``: per target, the token appended and scored in place of ``</s>`` (``</s>`` or the
    separator: a sentence that a window's later sentences follow)."""
    if len(targets) != len(requests):
        raise ValueError(f"expected one target per request ({len(requests)}), got {len(targets)}")
    if ends is not None and len(ends) != len(requests):
        raise ValueError(f"expected one end token per request ({len(requests)}), got {len(ends)}")
    checked = searcher._check(requests)
    conts = []
    for number, ((_, prefix, _), target) in enumerate(zip(checked, targets), start=1):
        output = checked_target(searcher, number, target, ends)
        if len(prefix) + len(output) > searcher.max_target_positions:
            raise InputError(f"request {number}", f"prefix and target too long: {len(prefix) + len(output)} "
                             f"tokens with </s>, the model's max target positions are {searcher.max_target_positions}")
        conts.append(output)
    results: list[Scored | None] = [None] * len(checked)
    for batch, lprobs, outputs in forced_passes(searcher, checked, conts):
        target = searcher.model._collate(outputs, left_pad=False)
        token_lp = lprobs.float().gather(-1, target.unsqueeze(-1)).squeeze(-1)
        for row, i in enumerate(batch):
            results[i] = Scored(float(token_lp[row, :len(outputs[row])].sum()), len(outputs[row]))
    return results  # type: ignore[return-value]


def forced_passes(searcher, checked: Sequence[tuple], outputs: Sequence[list[int]]):
    """For each batch of the checked requests (source, prefix, limit): (the batch's request numbers, the
    log-probabilities of one teacher-forced pass over each request's ``outputs`` after its cached prefix, shape
    (requests, longest output, vocabulary): row t the distribution of output token t, the batch's outputs)."""
    import torch

    from ...requests import token_batches

    device = searcher.model.device
    def decoder_width(i):  # the decoder positions of request i's pass, its cached prefix included
        return len(checked[i][1]) + len(outputs[i])

    # batched by decoder width, the widest first, a batch's rows at least half as wide as its first: a long row (a
    # first pass that repeated itself to the token limit) pads only rows of its size, not a batch of short ones
    order = sorted(range(len(checked)), key=lambda i: (-decoder_width(i), -len(checked[i][0]), i))
    for batch in token_batches(order, lambda i: len(checked[i][0]) + decoder_width(i), searcher.max_tokens,
                               searcher.batch_size, together=lambda first, i: 2 * decoder_width(i) > decoder_width(first)):
        sources = [checked[i][0] for i in batch]
        prefixes = [checked[i][1] for i in batch]
        conts = [outputs[i] for i in batch]
        with torch.no_grad():
            _, encoder_out = searcher._encode(sources)
            cache = prefill(searcher, prefixes, encoder_out)
            state: dict = {}
            cached = 0
            if cache is not None:
                cached = cache[0][0].size(2)
                for layer, (key, value, mask) in zip(searcher.net.decoder.layers, cache):
                    layer.self_attn._set_input_buffer(state, {"prev_key": key, "prev_value": value,
                                                              "prev_key_padding_mask": mask})
            inputs = searcher.model._collate(
                [[p[-1] if p else searcher.eos] + o[:-1] for p, o in zip(prefixes, conts)], left_pad=False)
            width = inputs.size(1)
            lengths = torch.tensor([len(o) for o in conts], device=device)
            starts = torch.tensor([len(p) for p in prefixes], device=device)
            offsets = torch.arange(width, device=device).unsqueeze(0)
            real = offsets < lengths.unsqueeze(1)
            positions = torch.where(real, searcher.pad + 1 + starts.unsqueeze(1) + offsets,
                                    torch.full_like(offsets, searcher.pad))
            padding = ~real if not bool(real.all()) else None
            like = searcher.net.decoder.embed_tokens.weight
            features = decode_after_cache(searcher, inputs, positions, encoder_out, state,
                                          causal_mask(width, cached, like), padding)
            searcher.decoder_positions += int(lengths.sum())
            logits = searcher.net.decoder.output_layer(features)
            lprobs = searcher.net.decoder.get_normalized_probs((logits, None), log_probs=True)
        yield batch, lprobs, conts

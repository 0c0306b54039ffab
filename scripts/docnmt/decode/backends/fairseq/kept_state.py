"""What a fairseq draft verification keeps of each request between its passes and for its continuation
(:mod:`docnmt.decode.backends.fairseq.drafts`): the encoder output of its source and its decoder's self-attention
keys and values over the inputs verified so far, so that a pass computes only the inputs after them and the
continuation searches after them without encoding the source or prefilling the prefix again.

A request's decoder inputs are ``[</s>, p1..pL, d1..dm]`` (its prefix, then the tokens verification decided); the
last of them is the next pass's first input, and every input before it is *history*. :class:`KeptRequest` holds
the keys and values of a prefix of the inputs (``covered``) and those of the last pass's inputs (``pending``: its
first input and the draft after it, of which verification accepts a prefix). :meth:`KeptRequest.advance` keeps
what the new history begins with: the entries of an input are valid only where every input up to it is the true
history, so the rest (a rejected draft token and what follows) is dropped.

Batches are built in the layout the search's own prefill gives (:func:`~.prefix_cache.prefill`): keys and values
(requests, heads, length, head_dim) padded on the left with a padding mask (True at padding), and the encoder
output (source length, requests, channels) padded on the left as fairseq pads sources, with its padding mask.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence


@dataclass
class KeptRequest:
    """One request's kept state: the request, its source, prefix and token limit as the searcher checked them, its
    source's encoder output (source length, channels; None until a pass encodes it), and per decoder layer the
    self-attention (key, value) over the ``covered`` inputs, (heads, len(covered), head_dim); ``pending``: the same
    for the last pass's inputs (``pending_inputs``), after ``covered``."""

    request: object
    checked: tuple
    encoder_out: object = None
    layers: list = field(default_factory=list)
    covered: list[int] = field(default_factory=list)
    pending: list = field(default_factory=list)
    pending_inputs: list[int] = field(default_factory=list)

    def advance(self, history: Sequence[int]) -> int:
        """Keep the entries of the longest common prefix of the inputs held (covered, then pending) and
        ``history``; returns how many inputs that is."""
        import torch

        held = self.covered + self.pending_inputs
        common = 0
        while common < len(held) and common < len(history) and held[common] == history[common]:
            common += 1
        if common > len(self.covered) and self.pending:
            take = common - len(self.covered)
            self.layers = [(torch.cat([key, new_key[:, :take]], dim=1), torch.cat([value, new_value[:, :take]], dim=1))
                           if self.covered else (new_key[:, :take], new_value[:, :take])
                           for (key, value), (new_key, new_value) in zip(self.layers or self.pending, self.pending)]
        elif common < len(self.covered):
            self.layers = [(key[:, :common], value[:, :common]) for key, value in self.layers]
        self.covered = list(history[:common])
        self.pending, self.pending_inputs = [], []
        return common

    @property
    def source(self) -> list[int]:
        return self.checked[0]


def encoder_rows(encoder_out, count: int) -> list:
    """Each row's encoder output without its padding, (source length, channels), from a batch of ``count`` rows
    (fairseq's left-padded sources)."""
    out, mask = encoder_out["encoder_out"][0], encoder_out["encoder_padding_mask"]
    rows = []
    for row in range(count):
        real = int((~mask[0][row]).sum()) if len(mask) > 0 else out.size(0)
        rows.append(out[out.size(0) - real:, row])
    return rows


def encoder_batch(rows: Sequence) -> dict:
    """The encoder output of a batch from each row's (source length, channels), padded on the left, as fairseq's
    encoder gives it (only what the decoder reads: the output and its padding mask)."""
    import torch

    width = max(row.size(0) for row in rows)
    first = rows[0]
    out = first.new_zeros(width, len(rows), first.size(1))
    mask = torch.ones(len(rows), width, dtype=torch.bool, device=first.device)
    for number, row in enumerate(rows):
        out[width - row.size(0):, number] = row
        mask[number, width - row.size(0):] = False
    return {"encoder_out": [out], "encoder_padding_mask": [mask], "encoder_embedding": [], "encoder_states": [],
            "src_tokens": [], "src_lengths": []}


def cache_batch(kept: Sequence[KeptRequest], device) -> list | None:
    """The kept self-attention entries of a batch, per layer (key, value, padding mask), padded on the left to the
    longest (:func:`~.prefix_cache.prefill`'s layout); None where no row has any."""
    import torch

    width = max(len(k.covered) for k in kept)
    if width == 0:
        return None
    mask = torch.ones(len(kept), width, dtype=torch.bool, device=device)
    for number, k in enumerate(kept):
        mask[number, width - len(k.covered):] = False
    layers = []
    for layer in range(len(next(k for k in kept if k.covered).layers)):
        moved = []
        for part in (0, 1):
            like = next(k for k in kept if k.covered).layers[layer][part]
            full = like.new_zeros(len(kept), like.size(0), width, like.size(2))
            for number, k in enumerate(kept):
                if k.covered:
                    full[number, :, width - len(k.covered):] = k.layers[layer][part]
            moved.append(full)
        layers.append((moved[0], moved[1], mask))
    return layers

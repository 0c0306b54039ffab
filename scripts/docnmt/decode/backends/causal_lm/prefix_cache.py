"""The causal LM's prefix cache (:class:`PrefixCache`): the keys and values of recent prompts, which a new prompt
continues from, bounded in bytes (:func:`default_cache_bytes`), found through a trie of the prompts' tokens, and read
as views (:func:`cache_view`), never copies. Sliding-window layers (Mistral, Gemma 2 and 3, Cohere2) are held with
every position (:func:`recording`), as full attention's are, so that any prefix of a held prompt can be read. :class:`~docnmt.decode.backends.causal_lm.model.CausalLMSearcher`
holds one."""

from __future__ import annotations

import collections
import copy
from typing import Any, Sequence


#: The prefix cache's default limit in bytes: on a GPU a fifth of its memory, elsewhere 2 GiB
#: (:func:`default_cache_bytes`; CLI ``--cache-bytes``, config ``decode.cache_bytes``).
CPU_CACHE_BYTES = 2 << 30
GPU_CACHE_SHARE = 0.2


def default_cache_bytes(device) -> int:
    """The prefix cache's default limit on ``device``: a fifth of a GPU's memory, or 2 GiB."""
    import torch

    if str(device).startswith("cuda"):
        return int(GPU_CACHE_SHARE * torch.cuda.get_device_properties(torch.device(device)).total_memory)
    return CPU_CACHE_BYTES


def cache_bytes(cache) -> int:
    """The bytes a transformers cache's keys and values hold."""
    total = 0
    for layer in cache.layers:
        for name in ("keys", "values"):
            tensor = getattr(layer, name, None)
            if tensor is not None:
                total += tensor.numel() * tensor.element_size()
    return total


#: The cache layers a view can share (transformers' names): full attention's, and a sliding window's that recorded
#: its past (:func:`recording`). Another kind (a linear-attention or indexed layer) turns the prefix cache off
#: (:func:`unshareable`).
SHAREABLE = ("DynamicLayer", "DynamicSlidingWindowLayer")


def unshareable(config) -> str | None:
    """Why the prefix cache cannot hold a model's keys and values (None: it can): a cache layer of another kind than
    :data:`SHAREABLE`, named."""
    from transformers.cache_utils import DynamicCache

    kinds = sorted({type(layer).__name__ for layer in DynamicCache(config=config).layers} - set(SHAREABLE))
    return f"its cache layers of kind {', '.join(kinds)} cannot be shared between prompts" if kinds else None


def sliding(layer) -> bool:
    return bool(getattr(layer, "is_sliding", False))


def recording(cache):
    """``cache`` with each sliding-window layer recording its past: it keeps the keys and values of every position,
    not only the window's last (transformers' ``activate_past_recording``), so that a view of any shorter prefix
    of it can be taken (:func:`cache_view`). The attention is the same either way: a recording layer gives the
    forward pass the window's positions only."""
    for layer in cache.layers:
        if sliding(layer):
            layer.activate_past_recording()
    return cache


def cache_view(cache, length: int, generating: bool = False):
    """A cache of the first ``length`` positions of ``cache`` (whose sliding-window layers recorded their past,
    :func:`recording`) that shares its tensors: a new cache object with new layer objects holding views; transformers
    grows, repeats and reorders a dynamic cache by replacing its tensors, never in place, so neither changes the
    other. A sliding-window layer's view records its past too, so that a prompt run after it can be held in turn;
    ``generating``: it holds the window's last positions only and records nothing, as the layer of a ``generate``
    without a prefix cache does (fewer bytes while the answer grows)."""
    view = copy.copy(cache)
    layers = []
    for layer in cache.layers:
        mine = copy.copy(layer)
        if getattr(layer, "is_initialized", False) and layer.keys is not None and layer.keys.dim() == 4:
            start = 0
            if sliding(layer):
                held = layer.keys.size(-2)
                if held != layer.cumulative_length:
                    raise ValueError(f"a sliding-window layer that holds {held} of its {layer.cumulative_length} "
                                     "positions (it did not record its past) cannot give a view of a prefix")
                mine.cumulative_length = length
                mine.record_past = not generating
                if generating:
                    start = max(0, length - layer.sliding_window + 1)
            mine.keys, mine.values = layer.keys[..., start:length, :], layer.values[..., start:length, :]
        layers.append(mine)
    view.layers = layers
    return view


class _Node:
    """A node of the prefix cache's trie: the next tokens, and the entries whose prompts pass through it."""

    __slots__ = ("children", "entries")

    def __init__(self):
        self.children: dict[int, _Node] = {}
        self.entries: set[int] = set()


class PrefixCache:
    """The keys and values of recent prompts, by their token ids: a new prompt continues from the longest prefix
    any of them shares with it (a view of it, :func:`cache_view`: nothing is copied). The held caches take at most
    ``limit`` bytes; the least recently used are dropped first, and a cache larger than the limit is not kept.

    The prompts are held in a trie of their tokens, so a lookup walks the new prompt once, whatever the number of
    held prompts. ``bytes`` is what the held caches take now, ``peak`` the most they took."""

    def __init__(self, limit: int = CPU_CACHE_BYTES):
        if limit < 0:
            raise ValueError(f"the prefix cache's limit must be >= 0 bytes, got {limit}")
        self.limit = limit
        self.bytes = self.peak = 0
        self.root = _Node()
        self.held: collections.OrderedDict[int, tuple[tuple[int, ...], Any, int]] = collections.OrderedDict()
        self.by_ids: dict[tuple[int, ...], int] = {}
        self.evicted = 0
        self._next = 0

    def __len__(self) -> int:
        return len(self.held)

    def longest(self, ids: Sequence[int]) -> tuple[int, Any]:
        """The length of the longest prefix of ``ids`` a held prompt shares, and a view of that prompt's cache cropped
        to it ((0, None): none shares any)."""
        node, depth = self.root, 0
        for token in ids:
            child = node.children.get(token)
            if child is None:
                break
            node, depth = child, depth + 1
        if depth == 0:
            return 0, None
        entry = max(node.entries)  # the newest of the prompts that share the prefix
        self.held.move_to_end(entry)
        return depth, cache_view(self.held[entry][1], depth)

    def keep(self, ids: Sequence[int], cache) -> None:
        """Hold ``cache``, the keys and values of ``ids`` (a view of it; the caller may go on growing its own)."""
        key = tuple(ids)
        if key in self.by_ids:
            self._drop(self.by_ids[key])
        size = cache_bytes(cache)
        if size > self.limit:
            return
        while self.held and self.bytes + size > self.limit:
            self._drop(next(iter(self.held)))
            self.evicted += 1
        entry, self._next = self._next, self._next + 1
        node = self.root
        for token in key:
            node = node.children.setdefault(token, _Node())
            node.entries.add(entry)
        self.held[entry] = (key, cache_view(cache, len(key)), size)
        self.by_ids[key] = entry
        self.bytes += size
        self.peak = max(self.peak, self.bytes)

    def _drop(self, entry: int) -> None:
        key, _, size = self.held.pop(entry)
        del self.by_ids[key]
        self.bytes -= size
        node = self.root
        for token in key:
            child = node.children[token]
            child.entries.discard(entry)
            if not child.entries:  # no held prompt passes here: the whole branch goes
                del node.children[token]
                return
            node = child


def left_padded(caches: Sequence, config):
    """Caches of one row each, as one cache of their rows, each padded on the left with zeros to the longest (the
    padding is masked by the attention mask of the batch's left-padded ids)."""
    import torch
    from transformers.cache_utils import DynamicCache

    width = max(c.get_seq_length() for c in caches)
    batched = DynamicCache(config=config)
    for layer in range(len(caches[0].layers)):
        rows = [(c.layers[layer].keys, c.layers[layer].values) for c in caches]
        keys = torch.cat([torch.nn.functional.pad(k, (0, 0, width - k.size(-2), 0)) for k, _ in rows])
        values = torch.cat([torch.nn.functional.pad(v, (0, 0, width - v.size(-2), 0)) for _, v in rows])
        batched.update(keys, values, layer)
    return batched

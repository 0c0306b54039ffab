"""Context-aware decoding on a causal LM (:mod:`docnmt.decode.contrastive`): the side without context is the
current turn without the earlier ones (the request's contrast, prompted alone), run beside ``generate`` by a logits
processor that combines each step's scores.

``generate`` keeps a fixed number of rows (requests x beams) and reorders them between steps without telling its
processors; the processor finds each row's parent in the previous step by its answer so far (a row's answer less its
last token is its parent's answer), reorders the side's cache by that, and runs the model once on every row's last
token. The side's prompts are padded on the left, their positions counted from each prompt's first token."""

from __future__ import annotations

from typing import Sequence


def contrast_processor(searcher, prompts: Sequence[Sequence[int]], copies: int, width: int, alpha: float,
                       normalized: bool):
    """The logits processor of context-aware decoding for a batch: ``prompts``, each row's contrast prompt (one per
    request, each repeated ``copies`` times: its beams); ``width``: where the answer starts in ``generate``'s ids;
    ``normalized``: the scores it is given are log-probs (beam search) rather than logits (greedy)."""
    import torch
    from transformers import LogitsProcessor
    from transformers.cache_utils import DynamicCache

    net, device = searcher.net, searcher.model.device
    keyword = searcher.model.cache_keyword

    class ContrastProcessor(LogitsProcessor):
        def __init__(self):
            self.cache = None
            self.previous: list[tuple[int, ...]] = []

        def _first(self):
            longest = max(len(p) for p in prompts)
            ids = torch.tensor([[searcher.pad] * (longest - len(p)) + list(p) for p in prompts], device=device)
            mask = torch.tensor([[0] * (longest - len(p)) + [1] * len(p) for p in prompts], device=device)
            self.cache = DynamicCache(config=net.config)
            logits = self._forward(ids, mask)
            self.cache.batch_repeat_interleave(copies)
            self.mask = mask.repeat_interleave(copies, dim=0)
            self.positions = self.positions.repeat_interleave(copies, dim=0)
            return logits.repeat_interleave(copies, dim=0)

        def _forward(self, ids, mask):
            positions = (mask.cumsum(-1) - 1).clamp_min(0)[:, -ids.size(1):]
            self.positions = positions[:, -1:]
            out = net(input_ids=ids, attention_mask=mask, position_ids=positions, use_cache=True,
                      **{keyword: self.cache})
            return out.logits[:, -1, :].float()

        def _step(self, generated):
            parents = []
            for row, answer in enumerate(generated):
                block = row - row % copies  # the rows of one request: its beams
                parents.append(next(p for p in range(block, block + copies) if self.previous[p] == answer[:-1]))
            order = torch.tensor(parents, device=device)
            self.cache.reorder_cache(order)
            self.mask = torch.cat([self.mask.index_select(0, order),
                                   torch.ones((len(generated), 1), dtype=self.mask.dtype, device=device)], dim=1)
            self.positions = self.positions.index_select(0, order) + 1
            ids = torch.tensor([[answer[-1]] for answer in generated], device=device)
            out = net(input_ids=ids, attention_mask=self.mask, position_ids=self.positions, use_cache=True,
                      **{keyword: self.cache})
            return out.logits[:, -1, :].float()

        def __call__(self, input_ids, scores):
            generated = [tuple(row) for row in input_ids[:, width:].tolist()]
            with torch.no_grad():
                logits = self._first() if self.cache is None else self._step(generated)
            self.previous = generated
            alone = torch.log_softmax(logits, dim=-1).clamp_min(torch.finfo(torch.float32).min)
            with_context = scores.float() if normalized else torch.log_softmax(scores.float(), dim=-1)
            return ((1.0 + alpha) * with_context - alpha * alone).to(scores.dtype)

    return ContrastProcessor()

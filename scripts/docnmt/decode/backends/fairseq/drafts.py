"""Draft verification on fairseq (:mod:`docnmt.decode.verification`): the searcher's side of it
(:class:`DraftVerifying`, a base of :class:`~docnmt.decode.backends.fairseq.search.Searcher`).

A pass is one teacher-forced pass over a request's decided tokens and its proposal after its prefix, which the cache
of :func:`~docnmt.decode.backends.fairseq.prefix_cache.prefill` holds (:func:`~.prefix_cache.forced_passes`); the
greedy choice at each position is the argmax under the search's rules: no ``<pad>``, no ``</s>`` as the
hypothesis' first token, ``</s>`` alone at the token limit (as :func:`~.search._limit_lengths` and fairseq's
SequenceGenerator set them). At beam 1 fairseq's beam search ends a hypothesis where ``</s>`` is the best candidate,
so it is greedy search, and the verified output is its own (tests/decode/test_draft_verification.py). The
continuation is the search after the prefix and the decided tokens, which count in its length limit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from ...requests import Hypothesis, Request


class DraftVerifying:
    """The fairseq searcher's part of :func:`docnmt.decode.verification.verified_search`."""

    if TYPE_CHECKING:  # the searcher's own attributes (:class:`~.search.Searcher`)
        def __getattr__(self, name: str) -> Any: ...

    def verifying_search(self, requests: Sequence[Request], search) -> list[list[Hypothesis]]:
        """``search(requests)``, or, at beam 1 with drafts, :func:`~docnmt.decode.verification.verified_search`."""
        from ...verification import drafted, verified_search

        if drafted(self, requests):
            return verified_search(self, requests, search)
        return search(requests)

    def draft_limit(self, request: Request) -> int:
        """The draft tokens a verification reads: up to the request's token limit and the first id that is not a
        token the search could generate (``<pad>``, ``</s>``, not in the dictionary)."""
        limit = self._check([request])[0][2]
        draft = list(request.draft or ())[:limit]
        bad = [j for j, t in enumerate(draft) if not 0 <= t < self.vocab or t in (self.pad, self.eos)]
        return bad[0] if bad else len(draft)

    def _extended(self, requests: Sequence[Request], decided: Sequence[list[int]]) -> list[tuple]:
        """Each request checked, its prefix followed by its ``decided`` tokens (its limit unchanged: it counts them)."""
        return [(source, prefix + list(tokens), limit)
                for (source, prefix, limit), tokens in zip(self._check(requests), decided)]

    def greedy_pass(self, requests: Sequence[Request], decided: Sequence[list[int]],
                    proposals: Sequence[list[int]]) -> list[tuple[list, list]]:
        """Per request, one teacher-forced pass over its proposal after its cached prefix and its ``decided`` tokens:
        the greedy choice at each proposal position and after it, under the search's rules (no ``<pad>``, no
        ``</s>`` as the hypothesis' first token, ``</s>`` alone at the token limit), and their log-probabilities."""
        import math

        import torch

        from .prefix_cache import forced_passes

        checked = self._extended(requests, decided)
        found: list = [None] * len(checked)
        outputs = [list(p) + [self.eos] for p in proposals]
        for batch, lprobs, conts in forced_passes(self, checked, outputs):
            lprobs = lprobs.float()
            lprobs[lprobs != lprobs] = -math.inf
            lprobs[:, :, self.pad] = -math.inf
            device = lprobs.device
            # each position's count of generated tokens: the row's decided ones, then one per proposal token
            generated = (torch.tensor([len(decided[i]) for i in batch], device=device).unsqueeze(1)
                         + torch.arange(lprobs.size(1), device=device).unsqueeze(0))
            limits = torch.tensor([checked[i][2] for i in batch], device=device).unsqueeze(1)
            end = lprobs[:, :, self.eos].clone()
            end[generated == 0] = -math.inf  # no </s> as the hypothesis' first token
            forced = generated >= limits  # </s> alone at the token limit
            lprobs[forced] = -math.inf
            lprobs[:, :, self.eos] = end
            best, choice = lprobs.max(dim=-1)
            choice, best = choice.tolist(), best.tolist()
            for row, i in enumerate(batch):
                width = len(conts[row])
                found[i] = (choice[row][:width], best[row][:width])
        return found

    def ended(self, request: Request, decided: list[int]) -> int | None:
        """The decided tokens' length (``</s>`` included) where they end with ``</s>`` (None: it goes on)."""
        return len(decided) if decided and decided[-1] == self.eos else None

    def continue_search(self, requests: Sequence[Request], decided: Sequence[list[int]]) -> list[tuple]:
        """The greedy continuation of each request after its prefix and its ``decided`` tokens (generated already:
        its length limit counts them, and ``</s>`` may end it at once): (tokens, log-probability, ended)."""
        found = self._search(requests, naive=False, checked=self._extended(requests, decided),
                             done=[len(tokens) for tokens in decided])
        return [(nbest[0].tokens, nbest[0].logprob, True) for nbest in found]

    def verified(self, request: Request, tokens: list[int], logprob: float, ended: bool) -> Hypothesis:
        """A verified hypothesis (without its ``</s>``) with fairseq's length-normalized score (``</s>`` counted)."""
        tokens = list(tokens[:-1] if tokens and tokens[-1] == self.eos else tokens)
        return Hypothesis(tokens, logprob / (len(tokens) + 1) ** self.lenpen, logprob)

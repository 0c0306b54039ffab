"""Draft verification on a causal LM (:mod:`docnmt.decode.verification`): the searcher's side of it
(:class:`DraftVerifying`, a base of :class:`~docnmt.decode.backends.causal_lm.model.CausalLMSearcher`).

A request's draft is a guess at its answer's tokens (``Request.draft``: the tokenizer's ids of a sentence; refine's
draft sentence, 2-pass's first pass). A pass runs the model once over the prompt's last token, the tokens decided so
far and the draft, after the prompt's keys and values from the prefix cache, for a batch of requests at once (the
caches padded on the left as ``generate``'s batches are); the continuation's ``generate`` after the decided tokens
starts from the same cached prompt. The greedy choice is the argmax of the logits, as ``generate``'s greedy search takes it where no logits
processor changes them: a model whose generation config asks for one (a repetition penalty, banned or forced tokens,
a minimum length) and a plain template (its stop text, which ``generate`` looks for across the prompt's end) are
not verified (:func:`verifiable`), and their searches run as before.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from ...requests import Hypothesis, Request

#: Generation-config settings that add a logits processor to greedy search, and their neutral values.
NEUTRAL = {"repetition_penalty": 1.0, "encoder_repetition_penalty": 1.0, "no_repeat_ngram_size": 0, "min_length": 0,
           "min_new_tokens": None, "bad_words_ids": None, "suppress_tokens": None, "begin_suppress_tokens": None,
           "forced_bos_token_id": None, "forced_eos_token_id": None, "sequence_bias": None,
           "exponential_decay_length_penalty": None}


def verifiable(searcher) -> bool:
    """Whether a searcher's greedy search is the argmax of its model's logits alone: a chat template (no stop text)
    and no generation-config setting of :data:`NEUTRAL` off its neutral value."""
    if searcher.model.prompter.answer_end is not None:
        return False
    config = getattr(searcher.net, "generation_config", None)
    return all(getattr(config, name, None) in (None, neutral) for name, neutral in NEUTRAL.items())


class DraftVerifying:
    """The causal-LM searcher's part of :func:`docnmt.decode.verification.verified_search`."""

    if TYPE_CHECKING:  # the searcher's own attributes (:class:`~.model.CausalLMSearcher`)
        forward_calls: int
        decoder_positions: int
        tokens_prefilled: int

        def __getattr__(self, name: str) -> Any: ...

    def search(self, requests: Sequence[Request]) -> list[list[Hypothesis]]:
        """The searcher's search (``_search``), or, at beam 1 with drafts where :func:`verifiable`,
        :func:`~docnmt.decode.verification.verified_search`."""
        from ...verification import drafted, verified_search

        if drafted(self, requests, verifiable(self)):
            self._prompts: dict[int, tuple[list[int], int]] = {}
            try:
                return verified_search(self, requests, self._search)
            finally:
                del self._prompts
        return self._search(requests)

    def _prompted(self, number: int, request: Request) -> tuple[list[int], int]:
        """The request's prompt ids and answer limit (``_prompt``), rendered once a verified search: every round's
        pass, its end and its continuation read them."""
        if id(request) not in self._prompts:
            self._prompts[id(request)] = self._prompt(number, request)
        return self._prompts[id(request)]

    def draft_limit(self, request: Request) -> int:
        """The draft tokens a verification reads: up to the answer's token limit and the first id that is not the
        vocabulary's."""
        limit = self._prompted(1, request)[1]
        draft = list(request.draft or ())[:limit]
        bad = [j for j, t in enumerate(draft) if not 0 <= t < self.model.vocab]
        return bad[0] if bad else len(draft)

    def greedy_pass(self, requests: Sequence[Request], decided: Sequence[list[int]],
                    proposals: Sequence[list[int]]) -> list[tuple[list, list]]:
        """Per request, the greedy choice at each proposal position and after it, and their log-probabilities: one
        forward pass over the prompt's last token, the ``decided`` tokens and the proposal after the cached prompt
        (:meth:`_prefilled`), in batches of requests (their caches padded on the left, the new tokens on the right,
        as ``generate``'s batches)."""
        from ...requests import token_batches

        fulls = [self._prompted(number, request)[0] for number, request in enumerate(requests, start=1)]
        news = [list(done) + list(proposal) for done, proposal in zip(decided, proposals)]
        order = sorted(range(len(requests)), key=lambda i: (len(fulls[i]) + len(news[i]), i))
        found: list = [None] * len(requests)
        for batch in token_batches(order, lambda i: len(fulls[i]) + len(news[i]) + 1, self.max_tokens, self.batch_size):
            for i, result in zip(batch, self._pass([fulls[i] for i in batch], [news[i] for i in batch],
                                                   [len(decided[i]) for i in batch])):
                found[i] = result
        return found

    def _pass(self, prompts: list[list[int]], news: list[list[int]], skip: list[int]) -> list[tuple[list, list]]:
        """One batched forward pass over each prompt's last token and its ``news`` after its cached prompt: for each
        row the argmax and its log-probability at the positions after its first ``skip`` new tokens."""
        import torch

        from .prefix_cache import left_padded

        device = self.model.device
        caches = [self._prefilled(prompt) for prompt in prompts]
        past = max(len(prompt) - 1 for prompt in prompts)
        width = max(len(new) + 1 for new in news)
        ids = torch.tensor([[prompt[-1]] + new + [self.pad] * (width - 1 - len(new)) for prompt, new in zip(prompts, news)],
                           device=device)
        mask = torch.tensor([[0] * (past - len(prompt) + 1) + [1] * (len(prompt) - 1) + [1] * (len(new) + 1)
                             + [0] * (width - 1 - len(new)) for prompt, new in zip(prompts, news)], device=device)
        positions = torch.tensor([[len(prompt) - 1 + j for j in range(width)] for prompt in prompts], device=device)
        cache = caches[0] if len(caches) == 1 else left_padded(caches, self.net.config)
        with torch.no_grad():
            logits = self.net(input_ids=ids, attention_mask=mask, position_ids=positions, use_cache=True,
                              **{self.model.cache_keyword: cache}).logits.float()
        self.forward_calls += 1
        self.decoder_positions += sum(len(new) + 1 for new in news)
        self.tokens_prefilled += sum(len(new) + 1 for new in news)
        lprobs = torch.log_softmax(logits, dim=-1)
        choices = logits.argmax(dim=-1)
        best = lprobs.gather(-1, choices.unsqueeze(-1)).squeeze(-1)
        choices, best = choices.tolist(), best.tolist()
        return [(choices[row][skip[row]:len(new) + 1], best[row][skip[row]:len(new) + 1])
                for row, new in enumerate(news)]

    def ended(self, request: Request, decided: list[int]) -> int | None:
        """The answer's length where its decided tokens hold an end token (it included) or reach its token limit."""
        end = next((n + 1 for n, t in enumerate(decided) if t in self.model.ends), None)
        limit = self._prompted(1, request)[1]
        if end is not None:
            return min(end, limit)
        return limit if len(decided) >= limit else None

    def continue_search(self, requests: Sequence[Request], decided: Sequence[list[int]]) -> list[tuple]:
        """The greedy continuation of each request's answer after its ``decided`` tokens (``generate`` on the prompt
        and them, within the answer's token limit less them), those of one remaining limit in one batch:
        (tokens, log-probability, ended)."""
        found: list = [None] * len(requests)
        groups: dict[int, list[int]] = {}
        prompts = []
        for number, (request, done) in enumerate(zip(requests, decided), start=1):
            prompt, limit = self._prompted(number, request)
            prompts.append(prompt + list(done))
            groups.setdefault(limit - len(done), []).append(number - 1)
        for limit, members in groups.items():
            for i, answers in zip(members, self.generate([prompts[i] for i in members], limit, raw=True,
                                                         lines=[self.model.answer_lines(requests[i]) for i in members])):
                found[i] = answers[0]
        return found

    def verified(self, request: Request, tokens: list[int], logprob: float, ended: bool) -> Hypothesis:
        """A verified answer as ``generate``'s greedy search gives it (its score the log-prob over the length)."""
        return self.model.hypothesis(list(tokens), logprob / max(1, len(tokens)) ** self.lenpen, logprob,
                                     self.model.answer_lines(request))

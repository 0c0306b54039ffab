"""Draft verification on a Hugging Face seq2seq model (:mod:`docnmt.decode.verification`): the searcher's side of it
(:class:`DraftVerifying`, a base of :class:`~docnmt.decode.backends.transformers.model.HFSearcher`).

At beam 1 the searcher's search is ``generate(num_beams=1)``'s greedy search (:func:`~.search.greedy_loop`): at each
step the argmax of the logits processors' scores, as the model's generation config builds them. A pass encodes a
batch of requests' sources and runs the decoder once over each request's prompt (the start token, the language
token, the context), its decided tokens and its proposal, teacher-forced (the decoder is causal: the rows are padded
on the right, where no earlier position sees the padding). The greedy choice at each proposal position and after it
is the argmax of the processors' scores there, given the tokens before it, so a processor's rule (a forced ``</s>``
at the length limit, banned words, a repetition penalty, a minimum length) is the search's. Only stopping criteria
other than ``</s>`` and the length limit (``max_time``, ``stop_strings`` in the generation config) would stop the
search where no token says so: such a model is not verified (:func:`verifiable`), and its searches run as before.
The continuation is the greedy search after the prompt and the decided tokens, which its length limit and its
processors count as generated.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from ...requests import Hypothesis, Request, token_batches


def verifiable(searcher) -> bool:
    """Whether a searcher's greedy search stops only at ``</s>`` or its length limit: no ``max_time`` and no
    ``stop_strings`` in its model's generation config."""
    config = searcher.net.generation_config
    return getattr(config, "max_time", None) is None and not getattr(config, "stop_strings", None)


class DraftVerifying:
    """The transformers searcher's part of :func:`docnmt.decode.verification.verified_search`."""

    if TYPE_CHECKING:  # the searcher's own attributes (:class:`~.model.HFSearcher`)
        forward_calls: int
        encoder_positions: int
        decoder_positions: int

        def __getattr__(self, name: str) -> Any: ...

    def search(self, requests: Sequence[Request]) -> list[list[Hypothesis]]:
        """The searcher's search (``_search``), or, at beam 1 with drafts where :func:`verifiable`,
        :func:`~docnmt.decode.verification.verified_search`."""
        from ...verification import drafted, verified_search

        if drafted(self, requests, verifiable(self)):
            return verified_search(self, requests, self._search)
        return self._search(requests)

    def draft_limit(self, request: Request) -> int:
        """The draft tokens a verification reads: up to the request's token limit and the first id that is ``</s>``,
        ``<pad>`` or not in the vocabulary."""
        limit = self._check([request])[0][2]
        draft = list(request.draft or ())[:limit]
        bad = [j for j, t in enumerate(draft) if not 0 <= t < self.vocab or t in (self.pad, self.eos)]
        return bad[0] if bad else len(draft)

    def greedy_pass(self, requests: Sequence[Request], decided: Sequence[list[int]],
                    proposals: Sequence[list[int]]) -> list[tuple[list, list]]:
        """Per request, the greedy choice at each proposal position and after it, and their log-probabilities (from
        the unprocessed logits, as the search counts them): one teacher-forced pass over the prompt, the
        ``decided`` tokens and the proposal, in batches of requests."""
        checked = self._check(requests)
        rows = [prompt + list(done) + list(proposal)
                for (_, prompt, _), done, proposal in zip(checked, decided, proposals)]
        order = sorted(range(len(rows)), key=lambda i: (len(rows[i]) + len(checked[i][0]), i))
        found: list = [None] * len(rows)
        for batch in token_batches(order, lambda i: len(rows[i]) + len(checked[i][0]), self.max_tokens,
                                   self.batch_size):
            passed = self._pass([checked[i] for i in batch], [rows[i] for i in batch],
                                [len(checked[i][1]) + len(decided[i]) - 1 for i in batch])
            for i, result in zip(batch, passed):
                found[i] = result
        return found

    def _pass(self, checked: list[tuple], rows: list[list[int]], firsts: list[int]) -> list[tuple[list, list]]:
        """One forward pass over a batch: each row's choices and their log-probabilities at its positions from
        ``firsts`` on, the logits processors (of the row's own source, prompt length and limit) given the tokens
        before each position."""
        import torch

        from .search import generation_setup

        width = max(map(len, rows))
        with torch.no_grad():
            src, mask = self.model._pad([source for source, _, _ in checked])
            decoder = torch.tensor([row + [self.pad] * (width - len(row)) for row in rows], device=src.device)
            self.forward_calls += 1
            self.encoder_positions += int(mask.sum())
            self.decoder_positions += sum(map(len, rows))
            logits = self.net(input_ids=src, attention_mask=mask, decoder_input_ids=decoder).logits.float()
            found = []
            for r, ((_, prompt, limit), row, first) in enumerate(zip(checked, rows, firsts)):
                own = torch.tensor([checked[r][0]], device=src.device)  # the source unpadded, as generate sees it alone
                _, processors, _ = generation_setup(self, own, len(prompt), limit)
                here = logits[r, first:len(row)]
                if len(processors):
                    ids = decoder[r:r + 1]
                    here = torch.cat([processors(ids[:, :p + 1], logits[r:r + 1, p])
                                      for p in range(first, len(row))])
                choices = here.argmax(dim=-1)
                lprobs = torch.log_softmax(logits[r, first:len(row)], dim=-1)
                best = lprobs.gather(-1, choices.unsqueeze(-1)).squeeze(-1)
                found.append((choices.tolist(), best.tolist()))
        return found

    def ended(self, request: Request, decided: list[int]) -> int | None:
        """The decided tokens' length where they hold ``</s>`` (it included) or reach the request's token limit."""
        limit = self._check([request])[0][2]
        end = next((n + 1 for n, t in enumerate(decided) if t == self.eos), None)
        if end is not None:
            return min(end, limit)
        return limit if len(decided) >= limit else None

    def continue_search(self, requests: Sequence[Request], decided: Sequence[list[int]]) -> list[tuple]:
        """The greedy continuation of each request after its prompt and its ``decided`` tokens (generated already:
        the length limit and the processors count them), batched by equal lengths: (tokens, log-probability,
        ended)."""
        checked = self._check(requests)
        extended = [(source, prompt + list(done), limit) for (source, prompt, limit), done in zip(checked, decided)]

        def kind(i):
            return len(extended[i][1]), len(decided[i]), extended[i][2]

        order = sorted(range(len(extended)), key=lambda i: (*kind(i), -len(extended[i][0]), i))
        found: list = [None] * len(extended)
        for batch in token_batches(order, lambda i: len(extended[i][0]) + len(extended[i][1]) + extended[i][2],
                                   self.max_tokens, self.batch_size, together=lambda first, i: kind(first) == kind(i)):
            for i, (tokens, logprob) in zip(batch, self._search_batch([extended[i] for i in batch],
                                                                      done=len(decided[batch[0]]), raw=True)):
                found[i] = (tokens, logprob, True)
        return found

    def verified(self, request: Request, tokens: list[int], logprob: float, ended: bool) -> Hypothesis:
        """A verified hypothesis as the greedy search gives it (:func:`~.search.greedy_hypothesis`)."""
        from .search import greedy_hypothesis

        return greedy_hypothesis(self, list(tokens), logprob)

"""Draft verification on fairseq (:mod:`docnmt.decode.verification`): the searcher's side of it
(:class:`DraftVerifying`, a base of :class:`~docnmt.decode.backends.fairseq.search.Searcher`).

A pass is one teacher-forced pass over a request's proposal after its prefix and its decided tokens. The first pass
of a request encodes its source and runs the decoder over its whole input, ``[</s>, prefix, proposal]``; each request
keeps its encoder output and its self-attention keys and values (:mod:`~.kept_state`), so a later pass runs only the
inputs after what it kept (the model's token at the disagreement and the rest of the draft), and the continuation
searches after them without encoding or prefilling again. The greedy choice at each position is the argmax under the
search's rules: no ``<pad>``, no ``</s>`` as the hypothesis' first token, ``</s>`` alone at the token limit (as
:func:`~.search._limit_lengths` and fairseq's SequenceGenerator set them). At beam 1 fairseq's beam search ends a
hypothesis where ``</s>`` is the best candidate, so it is greedy search, and the verified output is its own
(tests/decode/test_draft_verification.py). The continuation is the search after the prefix and the decided tokens,
which count in its length limit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from ...requests import Hypothesis, Request, token_batches

#: the most drafted requests one verification keeps state for (memory: a transformer-base request with 100 decoder
#: inputs keeps about 2.5 MB); a search with more verifies them in parts of this many
VERIFIED_AT_ONCE = 1024


class DraftVerifying:
    """The fairseq searcher's part of :func:`docnmt.decode.verification.verified_search`."""

    if TYPE_CHECKING:  # the searcher's own attributes (:class:`~.search.Searcher`)
        decoder_positions: int

        def __getattr__(self, name: str) -> Any: ...

    def verifying_search(self, requests: Sequence[Request], search) -> list[list[Hypothesis]]:
        """``search(requests)``, or, at beam 1 with drafts, :func:`~docnmt.decode.verification.verified_search`, each
        request's state kept from pass to pass (:mod:`~.kept_state`), in parts of :data:`VERIFIED_AT_ONCE`."""
        from ...verification import drafted, verified_search

        if not drafted(self, requests):
            return search(requests)
        found: list[list[Hypothesis]] = []
        for start in range(0, len(requests), VERIFIED_AT_ONCE):
            self.kept_states = {}
            try:
                found += verified_search(self, requests[start:start + VERIFIED_AT_ONCE], search)
            finally:
                self.kept_states = None
        return found

    #: during a verification, each request's :class:`~.kept_state.KeptRequest` by ``id(request)``
    kept_states: dict | None = None

    def _kept(self, requests: Sequence[Request]) -> list:
        """Each request's kept state: the verification's (:attr:`kept_states`), or a new one, checked
        (:meth:`_check`)."""
        from .kept_state import KeptRequest

        store = self.kept_states if self.kept_states is not None else {}
        states = [store.get(id(request)) for request in requests]
        new = [n for n, (state, request) in enumerate(zip(states, requests))
               if state is None or state.request is not request]
        for n, checked in zip(new, self._check([requests[n] for n in new]) if new else ()):
            states[n] = store[id(requests[n])] = KeptRequest(requests[n], checked)
        return states

    def kept_sources(self, sources: list[list[int]], kept: list) -> tuple[dict, dict]:
        """The generator's input and the encoder output of a search batch whose requests kept theirs (a continuation
        after :meth:`greedy_pass`: nothing encoded again)."""
        import torch

        from .kept_state import encoder_batch

        net_input = {"src_tokens": self.model._collate(sources, left_pad=True),
                     "src_lengths": torch.tensor([len(s) for s in sources], device=self.model.device)}
        return net_input, encoder_batch([state.encoder_out for state in kept])

    def draft_limit(self, request: Request) -> int:
        """The draft tokens a verification reads: up to the request's token limit and the first id that is not a
        token the search could generate (``<pad>``, ``</s>``, not in the dictionary)."""
        limit = self._kept([request])[0].checked[2]
        draft = list(request.draft or ())[:limit]
        bad = [j for j, t in enumerate(draft) if not 0 <= t < self.vocab or t in (self.pad, self.eos)]
        return bad[0] if bad else len(draft)

    def greedy_pass(self, requests: Sequence[Request], decided: Sequence[list[int]],
                    proposals: Sequence[list[int]]) -> list[tuple[list, list]]:
        """Per request, one teacher-forced pass over its proposal after its prefix and its ``decided`` tokens (the
        inputs its kept state does not hold, then the proposal): the greedy choice at each proposal position and
        after it, under the search's rules (no ``<pad>``, no ``</s>`` as the hypothesis' first token, ``</s>`` alone
        at the token limit), and their log-probabilities. Batched by decoder width, the widest first."""
        kept = self._kept(requests)
        checked = [state.checked for state in kept]
        histories = [[self.eos] + prefix + list(done) for (_, prefix, _), done in zip(checked, decided)]
        held = [state.advance(history[:-1]) for state, history in zip(kept, histories)]
        news = [history[n:] + list(p) for history, n, p in zip(histories, held, proposals)]

        def width(i):
            return held[i] + len(news[i])

        self._encoded([state for state in kept if state.encoder_out is None])
        order = sorted(range(len(requests)), key=lambda i: (-width(i), -len(checked[i][0]), i))
        found: list = [None] * len(requests)
        for batch in token_batches(order, lambda i: len(checked[i][0]) + width(i), self.max_tokens, self.batch_size,
                                   together=lambda first, i: 2 * width(i) > width(first)):
            lprobs = self._kept_pass([kept[i] for i in batch], [news[i] for i in batch],
                                     [len(proposals[i]) + 1 for i in batch])
            rows = self._greedy_choices(lprobs, [len(decided[i]) for i in batch], [checked[i][2] for i in batch])
            for i, (choice, best) in zip(batch, rows):
                found[i] = (choice[:len(proposals[i]) + 1], best[:len(proposals[i]) + 1])
        return found

    def _kept_pass(self, kept: list, news: list[list[int]], outputs: list[int]):
        """One decoder pass over each row's ``news`` (the inputs after its kept entries) with its kept entries as
        the cache; the rows' pass entries become pending in their states. Returns the log-probabilities at each
        row's last ``outputs`` inputs, (rows, most outputs, vocabulary)."""
        import torch

        from .kept_state import cache_batch, encoder_batch
        from .prefix_cache import causal_mask, decode_after_cache

        device = self.model.device
        with torch.no_grad():
            cache = cache_batch(kept, device)
            cached = 0 if cache is None else cache[0][0].size(2)
            state_dict: dict = {}
            layers = self.net.decoder.layers
            for layer, (key, value, mask) in zip(layers, cache or ()):
                layer.self_attn._set_input_buffer(state_dict, {"prev_key": key, "prev_value": value,
                                                                "prev_key_padding_mask": mask})
            inputs = self.model._collate(news, left_pad=False)
            width = inputs.size(1)
            lengths = torch.tensor([len(n) for n in news], device=device)
            starts = torch.tensor([len(state.covered) for state in kept], device=device)
            offsets = torch.arange(width, device=device).unsqueeze(0)
            real = offsets < lengths.unsqueeze(1)
            positions = torch.where(real, self.pad + 1 + starts.unsqueeze(1) + offsets,
                                    torch.full_like(offsets, self.pad))
            like = self.net.decoder.embed_tokens.weight
            padding = None if bool(real.all()) else ~real
            features = decode_after_cache(self, inputs, positions, encoder_batch([s.encoder_out for s in kept]),
                                          state_dict, causal_mask(width, cached, like), padding)
            self.decoder_positions += int(lengths.sum())
            buffers = [layer.self_attn._get_input_buffer(state_dict) for layer in layers]
            for row, (state, new) in enumerate(zip(kept, news)):
                state.pending = [(b["prev_key"][row, :, cached:cached + len(new)].clone(),
                                  b["prev_value"][row, :, cached:cached + len(new)].clone()) for b in buffers]
                state.pending_inputs = list(new)
            most = max(outputs)
            index = (lengths - torch.tensor(outputs, device=device)).unsqueeze(1) + torch.arange(most, device=device)
            index = torch.minimum(index, (lengths - 1).unsqueeze(1))
            wanted = features.gather(1, index.unsqueeze(-1).expand(-1, -1, features.size(-1)))
            logits = self.net.decoder.output_layer(wanted)
            return self.net.decoder.get_normalized_probs((logits, None), log_probs=True)

    def _encoded(self, kept: list) -> None:
        """Each state's source encoded and kept, in batches of like source length (the longest first, as the search
        batches them), apart from the passes' batches, which go by decoder width."""
        import torch

        from .kept_state import encoder_rows

        order = sorted(range(len(kept)), key=lambda i: -len(kept[i].source))
        for batch in token_batches(order, lambda i: len(kept[i].source), self.max_tokens, self.batch_size):
            with torch.no_grad():
                _, encoded = self._encode([kept[i].source for i in batch])
            for i, row in zip(batch, encoder_rows(encoded, len(batch))):
                kept[i].encoder_out = row

    def _greedy_choices(self, lprobs, done: list[int], limits: list[int]) -> list[tuple[list, list]]:
        """Each row's greedy choice and its log-probability at each output position, under the search's rules: the
        row's generated tokens at position t are its ``done`` ones plus t."""
        import math

        import torch

        lprobs = lprobs.float()
        lprobs[lprobs != lprobs] = -math.inf
        lprobs[:, :, self.pad] = -math.inf
        device = lprobs.device
        generated = (torch.tensor(done, device=device).unsqueeze(1)
                     + torch.arange(lprobs.size(1), device=device).unsqueeze(0))
        end = lprobs[:, :, self.eos].clone()
        end[generated == 0] = -math.inf  # no </s> as the hypothesis' first token
        forced = generated >= torch.tensor(limits, device=device).unsqueeze(1)  # </s> alone at the token limit
        lprobs[forced] = -math.inf
        lprobs[:, :, self.eos] = end
        best, choice = lprobs.max(dim=-1)
        return list(zip(choice.tolist(), best.tolist()))

    def ended(self, request: Request, decided: list[int]) -> int | None:
        """The decided tokens' length (``</s>`` included) where they end with ``</s>`` (None: it goes on)."""
        return len(decided) if decided and decided[-1] == self.eos else None

    def continue_search(self, requests: Sequence[Request], decided: Sequence[list[int]]) -> list[tuple]:
        """The greedy continuation of each request after its prefix and its ``decided`` tokens (generated already:
        its length limit counts them, and ``</s>`` may end it at once): (tokens, log-probability, ended). Where a
        request's kept state holds every input before the last decided token, the search starts from it."""
        kept = self._kept(requests)
        checked = [state.checked for state in kept]
        extended = [(source, prefix + list(done), limit) for (source, prefix, limit), done in zip(checked, decided)]
        whole = [state.encoder_out is not None and state.advance(history[:-1]) == len(history) - 1
                 for state, history in ((s, [self.eos] + prefix + list(done))
                                        for s, (_, prefix, _), done in zip(kept, checked, decided))]
        found: list = [None] * len(requests)
        for ready in (True, False):
            part = [i for i in range(len(requests)) if whole[i] is ready]
            if part:
                nbests = self._search([requests[i] for i in part], naive=False, checked=[extended[i] for i in part],
                                      done=[len(decided[i]) for i in part],
                                      kept=[kept[i] for i in part] if ready else None)
                for i, nbest in zip(part, nbests):
                    found[i] = (nbest[0].tokens, nbest[0].logprob, True)
        return found

    def verified(self, request: Request, tokens: list[int], logprob: float, ended: bool) -> Hypothesis:
        """A verified hypothesis (without its ``</s>``) with fairseq's length-normalized score (``</s>`` counted)."""
        tokens = list(tokens[:-1] if tokens and tokens[-1] == self.eos else tokens)
        return Hypothesis(tokens, logprob / (len(tokens) + 1) ** self.lenpen, logprob)

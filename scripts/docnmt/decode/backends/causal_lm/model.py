"""The causal-LM backend: a decoder-only LLM (Llama, Qwen2, Gemma, Tower, ...) for the strategies, behind the same
interface as the other backends.

:class:`CausalLMModel` loads ``AutoModelForCausalLM`` and its tokenizer from a local folder (the ``save_pretrained``
layout; nothing is fetched), as a :class:`~docnmt.decode.prompting.model.PromptedModel`. Text in and out is plain
text, a window's sentences joined by ``<sep>`` as everywhere in the package; the model's ids keep the sentences apart
with an id no token has (``sep``, one past the vocabulary), so that the searcher can rebuild the sentences of a
request.

The strategies' requests become conversations (:mod:`docnmt.decode.prompting.conversation`): the forced target
context's sentences are earlier turns (each source sentence with that translation), the rest of the window is the
last user message, one sentence a line, and the answer is searched. So sentence-level and no-context ask for one
sentence alone; last-sentence, first-sentence and full-segment ask for the window's lines and keep the last, the
first or all of them; 2-pass, doc-trans, doc-trans-beam and cheating give the first pass's, the model's own or the
reference translations as earlier turns; source-primed is doc-trans after the whole source document, which opens
the first user message. The answer's lines are its sentences (:meth:`~docnmt.decode.prompting.model.PromptedModel.
hypothesis`).

:class:`CausalLMSearcher` searches with ``generate`` (greedy or beam, transformers' semantics) on the prompt, after
the longest prefix of it whose keys and values it already holds (:class:`PrefixCache`): a conversation's earlier
turns, or the instruction every request shares, are computed once and read from the cache (``cache=`` of
``generate``: a view of the held keys and values cropped to the shared prefix, repeated for the beams; the cache is
bounded in bytes, ``cache_bytes``). With ``reuse_cache=False`` it runs
``generate`` on the whole prompt, as the papers' scripts do; the outputs are the same (tests/decode/test_causal_lm.py).
The requests of a search are searched in batches, each prompt's cache padded on the left (:func:`.prefix_cache.left_padded`).
"""

from __future__ import annotations

import inspect
import os
from typing import Any, Sequence

from .... import SEP
from ...backend import backend
from ...requests import Hypothesis, Request, Scored
from ...prompting.model import PromptCounted, PromptedModel
from .drafts import DraftVerifying
from .prefix_cache import PrefixCache, cache_view, default_cache_bytes, left_padded, recording, unshareable

BACKEND = "causal-lm"


class CausalLMModel(PromptedModel):
    """A causal LM and its tokenizer from a local folder (:class:`PromptedModel`), its weights loaded with
    transformers on ``device`` in ``dtype``; forced scoring with its forward pass."""

    backend = BACKEND

    def __init__(self, folder: os.PathLike | str, device: str | None = None, dtype: str | None = None,
                 separator: str = SEP, src_lang: str | None = None, tgt_lang: str | None = None,
                 template: str | None = None):
        from .. import pretrained

        super().__init__(folder, separator, src_lang, tgt_lang, template)
        net, self.device, self.dtype = pretrained("AutoModelForCausalLM", self.folder, device, dtype)
        self.net = self.model = net
        self.vocab = self.sep = int(net.get_output_embeddings().weight.size(0))
        #: the forward's (and generate's) keyword for a cache: ``cache`` (transformers 5.24, which the project pins),
        #: ``past_key_values`` before it
        self.cache_keyword = "cache" if "cache" in inspect.signature(net.forward).parameters else "past_key_values"

    def score(self, sources: Sequence[str], targets: Sequence[str], after_last_sep: bool = True,
              batch_size: int = 64) -> list[Scored]:
        """Log-prob of each target's answer given its source (:meth:`PromptedModel.forced_pairs`), one forward pass
        each."""
        return [self.scored(prompt + output[:-1], output) for prompt, output in self.forced_pairs(sources, targets,
                                                                                                   after_last_sep)]

    def scored(self, ids: Sequence[int], output: Sequence[int], cache=None) -> Scored:
        """The log-prob of ``output``, which the last ``len(output)`` positions of ``ids`` predict (``ids`` ends with
        the output's tokens but its last), in one forward pass after ``cache`` (the keys and values of the tokens
        before ``ids``; None: ``ids`` is the whole sequence)."""
        import torch

        with torch.no_grad():
            logits = self.net(input_ids=torch.tensor([list(ids)], device=self.device), use_cache=cache is not None,
                              **{self.cache_keyword: cache}).logits[0, -len(output):].float()
        lprobs = torch.log_softmax(logits, dim=-1)
        picked = lprobs[torch.arange(len(output), device=lprobs.device), torch.tensor(list(output), device=lprobs.device)]
        return Scored(float(picked.sum()), len(output))


def answer_length(answer: Sequence[int], ends, pad: int | None, stop: str | None = None, pieces=None) -> int:
    """The tokens of a generated answer that are its own, whose log-probs are the answer's: up to its first end token
    or, with a stop string ``stop`` (a plain template's end), up to the token that completes it (``pieces(ids)``:
    each token's text), whichever comes first, both included. After either, ``generate`` fills a finished row of a
    batch with ``pad`` (which may be an end token), and those positions are not the answer's. An answer with
    neither (cut at the token limit) is whole, less any pad tokens at its end."""
    length = next((n + 1 for n, t in enumerate(answer) if t in ends), None)
    if stop is not None and pieces is not None:
        text = ""
        for n, piece in enumerate(pieces(answer[:length])):
            text += piece
            if stop in text:
                return n + 1
    if length is not None:
        return length
    length = len(answer)
    while length > 0 and pad is not None and answer[length - 1] == pad:
        length -= 1
    return length


def _contrasts_of(contrasts: Sequence[list[int] | None], part: Sequence[int]) -> list[list[int]] | None:
    """A batch's contrast prompts (all or none of its requests have one: they are batched apart)."""
    found = [contrasts[i] for i in part]
    return None if found[0] is None else [c for c in found if c is not None]


class CausalLMSearcher(DraftVerifying, PromptCounted):
    """``generate``'s greedy or beam search (``beam``) on each request's prompt, after the longest prefix the
    :class:`PrefixCache` holds (``reuse_cache``); ``max_new_tokens`` limits an answer (its end token included).

    Requests are searched in batches of at most ``batch_size`` requests and ``max_tokens`` positions (beam x
    (prompt + answer limit) a request; :func:`docnmt.decode.requests.token_batches`), prompts of similar length together.
    Each prompt's cached prefix is completed on its own (:meth:`_prefilled`); the batch's caches are then padded on
    the left to one length, their padding masked, and ``generate`` continues all of them at once. A batch of one
    request is the search of that request alone.

    Cost counters beyond the shared ones: ``tokens_prefilled`` (prompt tokens run through the model),
    ``tokens_cached`` (prompt tokens read from the cache), ``tokens_generated`` (positions generated, every beam's;
    in a batch, those of the answers that ended before its longest too), and ``cache_bytes_peak`` (the most bytes
    the prefix cache held). ``cache_bytes``: the prefix cache's limit (None: :func:`default_cache_bytes` of the
    model's device).
    """

    vocabulary = "vocabulary"
    batches_requests = True

    def __init__(self, model: CausalLMModel, beam: int = 12, lenpen: float = 1.0, batch_size: int = 64,
                 max_new_tokens: int = 200, reuse_cache: bool = True, cache_bytes: int | None = None,
                 max_tokens: int | None = backend(BACKEND).max_tokens):
        self._setup(model, beam, lenpen, batch_size, max_tokens, max_new_tokens)
        self.net = model.net
        #: why the prefix cache is off for this model although asked for (None: it is on, or was not asked for)
        self.cache_off = unshareable(model.net.config) if reuse_cache else None
        self.reuse_cache = reuse_cache and self.cache_off is None
        self.cache = PrefixCache(default_cache_bytes(model.device) if cache_bytes is None else cache_bytes)

    def _count(self, module, args, kwargs):
        """A forward pre-hook on the model while ``generate`` runs: each forward call and its positions."""
        ids = kwargs.get("input_ids", args[0] if args else None)
        if ids is not None:
            self.forward_calls += 1
            self.decoder_positions += int(ids.numel())

    def _prompt(self, number: int, request: Request) -> tuple[list[int], int]:
        return self.model.prompt(number, request, self.max_new_tokens)

    def _pieces(self, ids: Sequence[int]) -> list[str]:
        """Each token's text (where a stop string may end an answer)."""
        return self.model.tokenizer.batch_decode([[t] for t in ids], clean_up_tokenization_spaces=False)

    #: context-aware decoding's alpha for the requests that carry a contrast (:mod:`docnmt.decode.contrastive`)
    cad_alpha: float = 0.5

    def _search(self, requests: Sequence[Request]) -> list[list[Hypothesis]]:
        """The ``beam`` best answers to each request's prompt, best first, as hypotheses of sentence ids; a request
        with a contrast (``Request.contrast``: the current turn alone) by context-aware decoding's combined scores
        (:attr:`cad_alpha`, :mod:`.contrast`). (:meth:`search`, :class:`.drafts.DraftVerifying`'s, verifies drafts
        first.)"""
        from ...requests import token_batches

        prompts = [self._prompt(number, request) for number, request in enumerate(requests, start=1)]
        contrasts: list[list[int] | None] = [None if request.contrast is None else self._prompt(number, request.contrast)[0]
                                             for number, request in enumerate(requests, start=1)]
        lines = [self.model.answer_lines(request) for request in requests]
        order = sorted(range(len(prompts)), key=lambda i: (prompts[i][1], contrasts[i] is None, -len(prompts[i][0]), i))
        results: list[list[Hypothesis] | None] = [None] * len(prompts)
        positions = lambda i: self.beam * (len(prompts[i][0]) + prompts[i][1])  # noqa: E731
        for batch in token_batches(order, positions, self.max_tokens, self.batch_size,
                                   together=lambda first, i: (prompts[first][1], contrasts[first] is None)
                                   == (prompts[i][1], contrasts[i] is None)):
            found = self.searched_in_halves(
                batch, lambda part: self.generate([prompts[i][0] for i in part], prompts[part[0]][1],
                                                  lines=[lines[i] for i in part],
                                                  contrasts=_contrasts_of(contrasts, part)), positions)
            for i, hyps in zip(batch, found):
                results[i] = hyps
            self.batch_done(len(batch))
        return results  # type: ignore[return-value]

    def _prefilled(self, prompt: list[int]):
        """A cache holding ``prompt[:-1]``: the longest cached prefix, the rest run through the model (and kept)."""
        import torch
        from transformers.cache_utils import DynamicCache

        reused, cache = self.cache.longest(prompt[:-1])
        if cache is None:
            cache = recording(DynamicCache(config=self.net.config))
        if reused < len(prompt) - 1:
            ids = torch.tensor([prompt[reused:-1]], device=self.model.device)
            self.forward_calls += 1
            self.decoder_positions += ids.numel()
            with torch.no_grad():
                self.net(input_ids=ids, use_cache=True, **{self.model.cache_keyword: cache})
            self.cache.keep(prompt[:-1], cache)
            self.cache_bytes_peak = max(self.cache_bytes_peak, self.cache.bytes)
        self.tokens_cached += reused
        self.tokens_prefilled += len(prompt) - reused
        return cache_view(cache, len(prompt) - 1, generating=True)

    def generate(self, prompts: list[list[int]], limit: int, copies: int = 1, lines: Sequence[int] | None = None,
                 contrasts: Sequence[Sequence[int]] | None = None, raw: bool = False, **options) -> list[list]:
        """``generate`` on a batch of ``prompts`` (after each one's cached prefix, with ``reuse_cache``; padded on
        the left to the longest): for each, ``beam`` answers of its ``lines`` lines (:meth:`CausalLMModel.hypothesis`);
        ``copies``: one prompt that many times (samples), ``options`` passed on to ``generate``; ``raw``: each answer
        as (its tokens, its log-probability, whether it ended) instead."""
        import torch

        kwargs: dict[str, Any] = dict(max_new_tokens=limit, do_sample=False, num_beams=self.beam, num_return_sequences=self.beam,
                      length_penalty=self.lenpen, return_dict_in_generate=True, output_logits=True,
                      output_scores=True, eos_token_id=self.model.ends, pad_token_id=self.pad)
        if self.model.prompter.answer_end is not None:
            kwargs.update(stop_strings=[self.model.prompter.answer_end], tokenizer=self.model.tokenizer)
        kwargs.update(options)
        if copies > 1 and len(prompts) > 1:
            raise ValueError("copies are of one prompt")
        lines = list(lines or [1] * len(prompts))
        width = max(len(prompt) for prompt in prompts)
        rows = [prompt for prompt in prompts for _ in range(copies)]
        ids = torch.tensor([[self.pad] * (width - len(p)) + p for p in rows], device=self.model.device)
        mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in rows], device=self.model.device)
        if self.reuse_cache and min(len(prompt) for prompt in prompts) > 1:
            caches = [self._prefilled(prompt) for prompt in prompts]  # one row each, padded on the left to one
            cache = caches[0] if len(caches) == 1 else left_padded(caches, self.net.config)
            if kwargs["num_beams"] * copies > 1:
                cache.batch_repeat_interleave(kwargs["num_beams"] * copies)
            kwargs[self.model.cache_keyword] = cache
        else:
            self.tokens_prefilled += sum(len(prompt) for prompt in prompts)
        if contrasts is not None:  # context-aware decoding: the turn alone beside it, step by step
            from transformers import LogitsProcessorList

            from .contrast import contrast_processor

            kwargs["logits_processor"] = LogitsProcessorList([contrast_processor(
                self, contrasts, kwargs["num_beams"] * copies, width, self.cad_alpha, kwargs["num_beams"] > 1)])
        calls = self.forward_calls
        counting = self.net.register_forward_pre_hook(self._count, with_kwargs=True)
        try:
            with torch.no_grad():
                out = self.net.generate(input_ids=ids, attention_mask=mask, **kwargs)
        finally:
            counting.remove()
        answers = out.sequences[:, width:].tolist()
        if kwargs["num_beams"] > 1:
            scores = [float(s) for s in out.sequences_scores]
            steps = self.net.compute_transition_scores(out.sequences, out.scores, out.beam_indices,
                                                       normalize_logits=False)
        else:
            steps = self.net.compute_transition_scores(out.sequences, out.logits, normalize_logits=True)
            scores = None
        # each of generate's forward calls gives every beam of every row one token
        self.tokens_generated += (self.forward_calls - calls) * kwargs["num_beams"] * len(rows)
        hyps = []
        for row, (answer, step) in enumerate(zip(answers, steps.float())):
            length = answer_length(answer, self.model.ends, self.pad, self.model.prompter.answer_end, self._pieces)
            logprob = float(step[:length].sum())
            if raw:
                hyps.append((answer[:length], logprob, any(t in self.model.ends for t in answer[:length])))
                continue
            score = scores[row] if scores is not None else logprob / length ** self.lenpen
            hyps.append(self.model.hypothesis(answer[:length], score, logprob, lines[row // (copies * kwargs[
                "num_return_sequences"])]))
        per_prompt = len(hyps) // len(prompts)
        return [hyps[n * per_prompt:(n + 1) * per_prompt] for n in range(len(prompts))]

    def sample(self, request: Request, count: int, epsilon: float, seed: int) -> list[Hypothesis]:
        """``count`` epsilon samples of the answer to the request's prompt (:mod:`docnmt.decode.sampling`): greedy
        ``generate`` on ``count`` copies, whose last logits processor draws each token with a torch generator seeded
        with ``seed``; each sample's log-prob from the model's unprocessed logits."""
        from transformers import LogitsProcessorList

        from ...sampling import EpsilonDraw, seeded_generator

        generator = seeded_generator(self.model.device, seed)

        prompt, limit = self._prompt(1, request)
        return self.generate([prompt], limit, copies=count, lines=[self.model.answer_lines(request)], num_beams=1,
                             num_return_sequences=1,
                             logits_processor=LogitsProcessorList([EpsilonDraw(epsilon, generator)]))[0]

    def score_forced(self, requests: Sequence[Request], targets: Sequence[Sequence[int]],
                     ends: Sequence[int] | None = None) -> list[Scored]:
        """Log-prob of each target (a sentence's ids) as the answer to its request's prompt: the sentence, then the
        end of the turn, or a line break where ``ends`` gives :attr:`CausalLMModel.sep` (more lines follow). The
        prompt continues from the cache as a search's does; only the answer's tokens count."""
        if len(targets) != len(requests) or (ends is not None and len(ends) != len(requests)):
            raise ValueError(f"expected one target (and end) per request ({len(requests)}), got {len(targets)}")
        results = []
        for number, (request, target) in enumerate(zip(requests, targets), start=1):
            prompt, output = self.model.forced(number, request, target, None if ends is None else ends[number - 1])
            if self.reuse_cache and len(prompt) > 1:
                cache, ids = self._prefilled(prompt), prompt[-1:] + output[:-1]
            else:
                cache, ids = None, prompt + output[:-1]
                self.tokens_prefilled += len(prompt)
            self.forward_calls += 1
            self.decoder_positions += len(ids)
            results.append(self.model.scored(ids, output, cache))
        return results

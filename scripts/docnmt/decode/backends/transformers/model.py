"""The transformers backend: a Hugging Face seq2seq model (Marian/OPUS-MT, NLLB, M2M100, mBART-50) for the
strategies, behind the same interface as the fairseq :class:`~docnmt.decode.backends.fairseq.model.Model` and
:class:`~docnmt.decode.backends.fairseq.search.Searcher`.

:class:`HFModel` loads ``AutoModelForSeq2SeqLM`` and its tokenizer from a local folder (the ``save_pretrained``
layout; nothing is fetched from a hub). The tokenizer does the segmentation: text in and out is plain text, the
sentences of a window joined by ``<sep>`` as everywhere in the package. :meth:`HFModel.encode` joins them with
the model's own separator token (``--separator``, e.g. ``<brk>``), which must be a single token of the tokenizer,
and tokenizes the whole text, as the model was trained on it. :meth:`HFModel.decode` splits the ids at that
token and detokenizes each sentence.

The decoder's prompt. Every target starts with the model's ``decoder_start_token_id``; models with language codes
(NLLB, M2M100, mBART-50) then get the target language's token, and the target context after it. The prompt and
the context are teacher-forced, never searched: the language token is not a generated token here (with
``generate``, ``forced_bos_token_id`` makes it the first generated one). The source language tag goes where the
tokenizer puts it (``tokenizer.src_lang``).

:class:`HFSearcher` searches with transformers' own beam semantics (``GenerationMixin._beam_search``, whose
helper methods it calls: top-k continuations, finished beams, the early-stopping heuristic), so that with an
empty context its n-best equal ``generate(num_beams=beam, length_penalty=lenpen, early_stopping=...,
max_new_tokens=...)``, and with a context those of ``generate(decoder_input_ids=prompt + context)`` with the
prompt and the context cut off. The logits processors and stopping criteria are the model's own, as ``generate``
builds them from its generation config (``bad_words_ids``, ``forced_eos_token_id``, ``min_length``, ...).

The difference from ``generate``: the prompt and the context are run through the decoder once per request (one
teacher-forced pass, batch = requests), and their self- and cross-attention cache is then copied to the beams,
instead of once per beam. Requests are batched by equal prompt length, so that every row's positions are those
``generate`` gives it (no padding inside the decoder).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

from .... import SEP
from ....textio import InputError
from ...requests import MAX_TOKENS, Counted, Hypothesis, Request, Scored, split_at_sep, token_batches
from ..encoder_decoder import check_length, checked_ids, checked_positions, checked_target, window_fits
from .. import load_tokenizer
from .drafts import DraftVerifying

#: What a user types for ``--backend``.
BACKEND = "transformers"


def _language_token(tokenizer, code: str) -> int | None:
    """The id of the language token for ``code`` (NLLB ``deu_Latn``, mBART-50 ``de_DE``, M2M100 ``de``), or
    None when the tokenizer knows no such language."""
    mapping = getattr(tokenizer, "lang_code_to_id", None)  # M2M100 (de), mBART-50 (de_DE)
    if isinstance(mapping, dict):
        return int(mapping[code]) if code in mapping else None
    if code not in set(getattr(tokenizer, "additional_special_tokens", None) or []):  # NLLB (deu_Latn)
        return None
    ids = tokenizer.convert_tokens_to_ids([code])
    return int(ids[0]) if ids and ids[0] is not None and ids[0] != tokenizer.unk_token_id else None


def uses_language_codes(tokenizer) -> bool:
    """Does the tokenizer mark languages with tokens (NLLB, M2M100, mBART-50)?"""
    return hasattr(tokenizer, "src_lang") and hasattr(tokenizer, "tgt_lang")


def load_config(folder: Path):
    """The model's config from ``folder``; an InputError naming it unless it is an encoder-decoder's."""
    from .. import read_config

    config = read_config(folder, "a transformers model folder (save_pretrained: config.json, the weights and the "
                                 "tokenizer's files)")
    if not getattr(config, "is_encoder_decoder", False):
        raise InputError(folder, f"expected an encoder-decoder model, found {config.model_type!r} "
                                 "(is_encoder_decoder is false): the strategies need a source encoder")
    return config


def separator_id(tokenizer, separator: str | None) -> int | None:
    """The id of ``separator`` where it is one token of the tokenizer, else None."""
    ids = tokenizer.convert_tokens_to_ids([separator]) if separator else [None]
    return int(ids[0]) if ids and ids[0] is not None and ids[0] != tokenizer.unk_token_id else None


def check_separator(folder: Path, tokenizer, separator: str, what: str = "the document-level model") -> int:
    """The separator's id; an InputError, saying how to add it, unless it is a single token of the tokenizer."""
    sep = separator_id(tokenizer, separator)
    if sep is None or tokenizer.convert_ids_to_tokens([sep])[0] != separator:
        raise InputError(folder, f"{what}: expected the separator {separator!r} to be a single token of "
                                 "the tokenizer, found none. Add it before fine-tuning: "
                                 f"tokenizer.add_special_tokens({{'additional_special_tokens': "
                                 f"[{separator!r}]}}), model.resize_token_embeddings(len(tokenizer)), "
                                 "then save both with save_pretrained")
    return sep


def language_codes(tokenizer, separator: str | None = None) -> list[str]:
    """The language codes the tokenizer has tokens for (empty for a tokenizer without)."""
    mapping = getattr(tokenizer, "lang_code_to_id", None)
    codes = list(mapping) if isinstance(mapping, dict) else (getattr(tokenizer, "additional_special_tokens", None) or [])
    return [c for c in codes if c != separator]


def language_prompt(folder: Path, tokenizer, src_lang: str | None, tgt_lang: str | None,
                    separator: str | None = None) -> list[int]:
    """The target language's token, for the decoder prompt of a model with language tokens (the tokenizer's source
    language set to ``src_lang``); [] for one without. InputErrors naming ``folder`` for missing or unknown codes."""
    if not uses_language_codes(tokenizer):
        return []
    for role, code in (("source", src_lang), ("target", tgt_lang)):
        if not code:
            raise InputError(folder, f"expected the {role} language code: {type(tokenizer).__name__} marks "
                                     "languages with tokens (e.g. deu_Latn for NLLB, de for M2M100, de_DE "
                                     "for mBART-50)")
        if _language_token(tokenizer, code) is None:
            raise InputError(folder, f"unknown {role} language code {code!r}: the tokenizer has no token "
                                     f"for it (known, e.g.: {', '.join(language_codes(tokenizer, separator)[:6])})")
    tokenizer.src_lang = src_lang
    tokenizer.tgt_lang = tgt_lang
    token = _language_token(tokenizer, str(tgt_lang))
    assert token is not None  # checked above
    return [token]


def max_positions(config) -> int:
    """The most positions the model's config allows (1024 where it names none)."""
    return int(getattr(config, "max_position_embeddings", 0) or 1024)


class HFModel:
    """A transformers seq2seq model and its tokenizer from a local folder, on ``device`` in ``dtype``.

    ``separator``: the token between a window's sentences, a single token of the tokenizer (None or absent: a
    sentence-level model, which never sees one). ``src_lang``/``tgt_lang``: the language codes of models with
    language tokens (required there; ignored by models without).
    """

    template = None  # no prompt template (a causal LM's)

    backend = BACKEND

    def __init__(self, folder: os.PathLike | str, device: str | None = None, dtype: str | None = None,
                 separator: str = SEP, src_lang: str | None = None, tgt_lang: str | None = None):
        from .. import pretrained

        folder = Path(folder)
        config = load_config(folder)
        tokenizer = load_tokenizer(folder)
        net, self.device, self.dtype = pretrained("AutoModelForSeq2SeqLM", folder, device, dtype)
        self.folder = folder
        self.checkpoint = str(folder)
        self.net = self.model = net
        self.tokenizer = tokenizer
        self.config = config
        self.eos = int(tokenizer.eos_token_id if tokenizer.eos_token_id is not None else config.eos_token_id)
        self.pad = int(tokenizer.pad_token_id if tokenizer.pad_token_id is not None else config.pad_token_id)
        start = net.generation_config.decoder_start_token_id
        start = config.decoder_start_token_id if start is None else start
        if start is None:
            raise InputError(folder, "expected a decoder_start_token_id in the model's config or generation config")
        self.vocab = int(net.get_output_embeddings().weight.size(0))

        # the separator: one token of the tokenizer, or none (a sentence-level model)
        self.sep_token = separator
        self.sep = separator_id(tokenizer, separator)
        self.src_lang, self.tgt_lang = src_lang, tgt_lang
        prompt = [int(start)] + language_prompt(folder, tokenizer, src_lang, tgt_lang, separator)
        #: the decoder's input before any target context: the start token, then the language token if any
        self.prompt = prompt
        self.max_positions = max_positions(config)

    def language_codes(self) -> list[str]:
        return language_codes(self.tokenizer, self.sep_token)

    def check_separator(self, what: str = "the document-level model") -> None:
        """InputError unless the separator is a single token of the tokenizer."""
        check_separator(self.folder, self.tokenizer, self.sep_token, what)

    # ---- tokens -----------------------------------------------------------
    def _joined(self, text: str) -> str:
        parts = [part.strip() for part in text.split(SEP)]
        if len(parts) > 1 and self.sep is None:
            raise InputError(self.folder, f"a window of {len(parts)} sentences for a model without the separator "
                                          f"token {self.sep_token!r}")
        # a forced prefix ends with the separator: no space after it, which a tokenizer would make a token of its
        # own, one that the joined training text never has there
        return f" {self.sep_token} ".join(parts).strip()

    def encode(self, text: str, source: bool = False) -> list[int]:
        """Token ids of text (sentences joined by ``<sep>``): a source as the tokenizer encodes it (its language
        tag and ``</s>`` where it puts them); a target without the language token, ``</s>`` appended."""
        joined = self._joined(text)
        if source:
            return list(self.tokenizer(joined)["input_ids"])
        return list(self.tokenizer(text_target=joined, add_special_tokens=False)["input_ids"]) + [self.eos]

    def decode(self, ids: Sequence[int]) -> str:
        """Plain text of token ids, the separator written ``<sep>`` (special tokens dropped)."""
        texts = [self.tokenizer.decode(s, skip_special_tokens=True, clean_up_tokenization_spaces=False).strip()
                 for s in split_at_sep(ids, self.sep, (self.eos, self.pad))]
        return f" {SEP} ".join(texts)

    check_length = check_length  # InputError naming ``what`` when ``ids`` exceed max_positions

    def fits(self, source: Sequence[int], prefix: Sequence[int], continuation: int = 1,
             document: Sequence[int] = ()) -> bool:
        """The request's source fits the encoder; the decoder's prompt, the prefix and ``continuation`` tokens
        the decoder."""
        return window_fits(self, source, prefix, continuation, prompt=len(self.prompt), document=document)

    # ---- forced scoring -----------------------------------------------------
    def score(self, sources: Sequence[str], targets: Sequence[str], after_last_sep: bool = True,
              batch_size: int = 64) -> list[Scored]:
        """Forced scoring of ``targets`` given ``sources`` (text), one teacher-forced pass per batch; with
        ``after_last_sep`` only the tokens after the target's last separator (and ``</s>``) count."""
        import torch

        results: list[Scored] = []
        prompt = self.prompt
        for start in range(0, len(sources), batch_size):
            src = [self.encode(s, source=True) for s in sources[start:start + batch_size]]
            tgt = [self.encode(t) for t in targets[start:start + batch_size]]
            for i, (s, t) in enumerate(zip(src, tgt)):
                self.check_length(s, f"source {start + i + 1}")
                self.check_length(prompt[1:] + t, f"target {start + i + 1}")
            input_ids, mask = self._pad(src)
            decoder = self._pad([prompt + t[:-1] for t in tgt])[0]
            with torch.no_grad():
                logits = self.net(input_ids=input_ids, attention_mask=mask, decoder_input_ids=decoder).logits
                lprobs = torch.log_softmax(logits.float(), dim=-1)
            for i, t in enumerate(tgt):
                first = 0
                if after_last_sep and self.sep is not None and self.sep in t:
                    first = len(t) - t[::-1].index(self.sep)
                offset = len(prompt) - 1
                rows = torch.arange(offset + first, offset + len(t), device=lprobs.device)
                picked = lprobs[i, rows, torch.tensor(t[first:], device=lprobs.device)]
                results.append(Scored(float(picked.sum()), len(t) - first))
        return results

    def _pad(self, seqs: list[list[int]]):
        """Right-padded ids (the tokenizer's padding side for seq2seq models) and their attention mask."""
        import torch

        width = max(len(s) for s in seqs)
        ids = torch.full((len(seqs), width), self.pad, dtype=torch.long)
        mask = torch.zeros((len(seqs), width), dtype=torch.long)
        for i, s in enumerate(seqs):
            ids[i, :len(s)] = torch.tensor(s)
            mask[i, :len(s)] = 1
        return ids.to(self.device), mask.to(self.device)


class HFSearcher(DraftVerifying, Counted):
    """Beam search after forced target contexts on a :class:`HFModel`, with transformers' beam semantics.

    ``early_stopping``: as ``generate``'s (True, False or "never"); None takes the model's generation config.
    ``max_new_tokens``: the most tokens generated after the context (``</s>`` included), also limited by the
    model's max positions.
    """

    vocabulary = "vocabulary"  # what error messages call the table of token ids

    def __init__(self, model: HFModel, beam: int = 12, lenpen: float = 1.0, batch_size: int = 64,
                 early_stopping: bool | str | None = None, max_new_tokens: int = 200,
                 max_tokens: int | None = MAX_TOKENS):
        self._setup(model, beam, lenpen, batch_size, max_tokens, max_new_tokens)
        self.net = model.net
        config_stopping = model.net.generation_config.early_stopping
        self.early_stopping = config_stopping if early_stopping is None else early_stopping

    # ---- validation -------------------------------------------------------
    def _describe(self, token: int) -> str:
        if 0 <= token < self.vocab:
            return f"id {token} ({self.model.tokenizer.convert_ids_to_tokens([token])[0]})"
        return f"id {token} (not in the vocabulary)"

    def _check(self, requests: Sequence[Request]) -> list[tuple[list[int], list[int], int]]:
        """Source ids, decoder prompt (start, language token, context) and generation limit of each request."""
        checked = []
        for number, request in enumerate(requests, start=1):
            where = f"request {number}"
            source, prefix = checked_ids(self, where, request)
            prompt = self.model.prompt + prefix
            room = self.max_target_positions - len(prompt)
            if room < 1:
                raise InputError(where, f"prefix too long: {len(prefix)} tokens, at most "
                                 f"{self.max_target_positions - len(self.model.prompt) - 1} fit the model's max "
                                 f"positions {self.max_target_positions} with </s>")
            checked.append((source, prompt, min(self.max_new_tokens, room)))
        return checked

    def _batches(self, checked, contrasts=None):
        """Requests of equal prompt length and limit together (and, with ``contrasts``, those with a contrast apart
        from those without), longest sources first, at most ``batch_size`` requests and ``max_tokens`` positions a
        batch (:func:`docnmt.decode.requests.token_batches`: beam x (source + prompt + token limit) a request)."""
        contrasts = contrasts or [None] * len(checked)

        def kind(i):
            return len(checked[i][1]), checked[i][2], contrasts[i] is None

        order = sorted(range(len(checked)), key=lambda i: (*kind(i), -len(checked[i][0]), i))
        yield from token_batches(order, lambda i: checked_positions(self.beam, checked[i]), self.max_tokens,
                                 self.batch_size, together=lambda first, i: kind(first) == kind(i))

    # ---- search -----------------------------------------------------------
    #: context-aware decoding's alpha for the requests that carry a contrast (:mod:`docnmt.decode.contrastive`)
    cad_alpha: float = 0.5

    def _search(self, requests: Sequence[Request]) -> list[list[Hypothesis]]:
        """The ``beam`` best continuations after each request's context, best first; a request with a contrast
        (``Request.contrast``) by context-aware decoding's combined scores (:attr:`cad_alpha`)."""
        checked = self._check(requests)
        contrasts = [None if r.contrast is None else checked_ids(self, f"request {n}'s contrast", r.contrast)[0]
                     for n, r in enumerate(requests, start=1)]
        results: list[list[Hypothesis] | None] = [None] * len(checked)
        for batch in self._batches(checked, contrasts):
            found = self.searched_in_halves(batch, lambda part: self._search_batch(
                [checked[i] for i in part], None if contrasts[part[0]] is None else [contrasts[i] for i in part]),
                lambda i: checked_positions(self.beam, checked[i]))
            for i, hyps in zip(batch, found):
                results[i] = hyps
            self.batch_done(len(batch))
        return results  # type: ignore[return-value]

    def _forward(self, decoder_ids, encoder_outputs, mask, cache):
        import torch

        self.forward_calls += 1
        self.decoder_positions += decoder_ids.numel()
        out = self.net(encoder_outputs=encoder_outputs, attention_mask=mask, decoder_input_ids=decoder_ids,
                       cache=cache, use_cache=True)
        if self.track_cache:
            held = sum(t.numel() * t.element_size() for layer in _cache_tensors(cache) for t in layer)
            self.cache_bytes_peak = max(self.cache_bytes_peak, held)
        return out.logits[:, -1, :].to(dtype=torch.float32, copy=True)

    def _search_batch(self, batch, contrasts=None, done: int = 0, raw: bool = False) -> list:
        """One batch's n-best (its requests' prompts of one length, their limits equal): encoded, the prompts
        prefilled once per request and copied to the beams, then :func:`~.search.beam_loop`, or at beam 1
        :func:`~.search.greedy_loop` (``generate(num_beams=1)`` is greedy search). ``done``: how many tokens at the
        end of each prompt were generated already (a verified draft's, :mod:`.drafts`): the length limit and the
        logits processors count them as generated; the hypotheses are then the greedy continuations after them,
        and with ``raw`` the greedy loop's own (tokens, log-prob) per request."""
        import torch
        from transformers.cache_utils import DynamicCache, EncoderDecoderCache

        from .search import beam_loop, generation_setup, greedy_hypothesis, greedy_loop

        net, beam = self.net, self.beam
        sources = [s for s, _, _ in batch]
        prompts = [p for _, p, _ in batch]
        limit = batch[0][2]
        size, n = len(batch), len(prompts[0])
        with torch.no_grad():
            src, mask = self.model._pad(sources)
            config, processors, stopping = generation_setup(self, src, n - done, limit)
            self.encoder_positions += int(mask.sum())
            encoder_outputs = net.get_encoder()(input_ids=src, attention_mask=mask, return_dict=True)
            # the prompt and the context, teacher-forced once per request; the logits after its last token
            # are the first step's
            cache = EncoderDecoderCache(DynamicCache(config=net.config), DynamicCache(config=net.config))
            prompt = torch.tensor(prompts, device=src.device)
            first_logits = self._forward(prompt, encoder_outputs, mask, cache)
            contrast = None if contrasts is None else contrast_side(self, contrasts)
            if beam == 1:
                found = greedy_loop(self, prompt, first_logits, encoder_outputs, mask, cache, processors, stopping,
                                    contrast)
                return found if raw else [[greedy_hypothesis(self, tokens, logprob)] for tokens, logprob in found]
            # ... copied to the beams
            cache.batch_repeat_interleave(beam)
            encoder_outputs["last_hidden_state"] = encoder_outputs.last_hidden_state.repeat_interleave(beam, dim=0)
            mask = mask.repeat_interleave(beam, dim=0)
            logits = first_logits.repeat_interleave(beam, dim=0)
            return beam_loop(self, prompt.repeat_interleave(beam, dim=0), logits, encoder_outputs, mask, cache,
                             config, processors, stopping, size, contrast)

    def sample(self, request: Request, count: int, epsilon: float, seed: int) -> list[Hypothesis]:
        """``count`` epsilon samples after the request's context (:mod:`docnmt.decode.sampling`): greedy ``generate``
        on ``count`` copies of the request, whose last logits processor draws each token with a torch generator on
        the model's device seeded with ``seed``; each sample's log-prob from the model's unprocessed logits, its
        score normalized as the search's."""
        import torch
        from transformers import LogitsProcessorList

        from ...sampling import EpsilonDraw, seeded_generator

        generator = seeded_generator(self.model.device, seed)

        ((source, prompt, limit),) = self._check([request])
        src, mask = self.model._pad([source] * count)
        with torch.no_grad():
            out = self.net.generate(
                input_ids=src, attention_mask=mask, decoder_input_ids=torch.tensor([prompt] * count, device=src.device),
                do_sample=False, num_beams=1, max_new_tokens=limit, return_dict_in_generate=True, output_logits=True,
                logits_processor=LogitsProcessorList([EpsilonDraw(epsilon, generator)]))
            logprobs = self.net.compute_transition_scores(out.sequences, out.logits, normalize_logits=True)
        self.forward_calls += len(out.logits)
        self.encoder_positions += len(source)
        found = []
        for row, steps in zip(out.sequences[:, len(prompt):].tolist(), logprobs.float()):
            length = row.index(self.eos) + 1 if self.eos in row else len(row)
            self.decoder_positions += length
            logprob = float(steps[:length].sum())
            found.append(Hypothesis(row[:length - 1] if self.eos in row else row, logprob / length ** self.lenpen,
                                    logprob))
        return found

    # ---- forced scoring with the cache -------------------------------------
    def score_forced(self, requests: Sequence[Request], targets: Sequence[Sequence[int]],
                     ends: Sequence[int] | None = None) -> list[Scored]:
        """Log-prob of each continuation (ids without ``</s>``; ``</s>``, or the token ``ends`` gives for it, is
        appended and scored) after its request's context: one teacher-forced pass per request over the prompt, the
        context and the continuation, of which only the continuation counts."""
        import torch

        if len(targets) != len(requests):
            raise ValueError(f"expected one target per request ({len(requests)}), got {len(targets)}")
        if ends is not None and len(ends) != len(requests):
            raise ValueError(f"expected one end token per request ({len(requests)}), got {len(ends)}")
        checked = self._check(requests)
        results: list[Scored] = []
        for number, ((source, prompt, _), target) in enumerate(zip(checked, targets), start=1):
            output = checked_target(self, number, target, ends)
            if len(prompt) + len(output) - 1 > self.max_target_positions:
                raise InputError(f"request {number}", f"prefix and target too long: {len(prompt) + len(output) - 1} "
                                 f"decoder positions, the model's max positions are {self.max_target_positions}")
            src, mask = self.model._pad([source])
            decoder = torch.tensor([prompt + output[:-1]], device=src.device)
            with torch.no_grad():
                self.forward_calls += 1
                self.encoder_positions += len(source)
                self.decoder_positions += decoder.numel()
                logits = self.net(input_ids=src, attention_mask=mask, decoder_input_ids=decoder).logits[0]
                lprobs = torch.log_softmax(logits.float(), dim=-1)
            rows = torch.arange(len(prompt) - 1, len(prompt) - 1 + len(output), device=lprobs.device)
            picked = lprobs[rows, torch.tensor(output, device=lprobs.device)]
            results.append(Scored(float(picked.sum()), len(output)))
        return results


def contrast_side(self: HFSearcher, sources) -> "_Contrast":
    """Context-aware decoding's side without context for a batch (its rows' ``sources``, the decoder prompt
    alone): encoded, prefilled and copied to the beams (:class:`_Contrast`)."""
    import torch
    from transformers.cache_utils import DynamicCache, EncoderDecoderCache

    src, mask = self.model._pad(sources)
    self.encoder_positions += int(mask.sum())
    encoder_outputs = self.net.get_encoder()(input_ids=src, attention_mask=mask, return_dict=True)
    cache = EncoderDecoderCache(DynamicCache(config=self.net.config), DynamicCache(config=self.net.config))
    prompt = torch.tensor([self.model.prompt] * len(sources), device=src.device)
    first = self._forward(prompt, encoder_outputs, mask, cache)
    cache.batch_repeat_interleave(self.beam)
    encoder_outputs["last_hidden_state"] = encoder_outputs.last_hidden_state.repeat_interleave(self.beam, dim=0)
    return _Contrast(encoder_outputs, mask.repeat_interleave(self.beam, dim=0), cache,
                     first.repeat_interleave(self.beam, dim=0), self.cad_alpha)



class _Contrast:
    """Context-aware decoding's side without context (:mod:`docnmt.decode.contrastive`): its encoder output, mask
    and cache, one row per beam, and its first step's logits after the decoder prompt alone."""

    def __init__(self, encoder_outputs, mask, cache, first_logits, alpha: float):
        self.encoder_outputs, self.mask, self.cache, self.first, self.alpha = (encoder_outputs, mask, cache,
                                                                                first_logits, alpha)

    def log_probs(self, searcher: HFSearcher, log_probs, last_tokens):
        """``(1 + alpha) * log_probs - alpha * log p(next | sentence alone)`` (the latter kept finite; with alpha 0,
        ``log_probs`` exactly), after this side's step on ``last_tokens`` (None: the first step's logits)."""
        import torch
        from torch import nn

        if last_tokens is None:
            logits = self.first
        else:
            logits = searcher._forward(last_tokens, self.encoder_outputs, self.mask, self.cache)
        alone = nn.functional.log_softmax(logits, dim=-1).clamp_min(torch.finfo(torch.float32).min)
        return (1.0 + self.alpha) * log_probs - self.alpha * alone


def _cache_tensors(cache):
    """The key and value tensors of an EncoderDecoderCache's layers (self- and cross-attention)."""
    for part in (cache.self_attention_cache, cache.cross_attention_cache):
        for layer in getattr(part, "layers", []):
            yield [t for t in (getattr(layer, "keys", None), getattr(layer, "values", None)) if t is not None]

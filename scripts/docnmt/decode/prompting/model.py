"""A causal LM's folder, prompted (:class:`PromptedModel`): what the backends that prompt a local causal LM (causal-lm
with transformers, vllm on its engine) share: all but the weights and the search. Its config must be a causal LM's
(:func:`load_config`, :func:`check_causal`), its tokenizer must render the template's conversation
(:func:`prompter_for`), and its generation config says which tokens end an answer (:func:`end_ids`). The model's ids
keep a window's sentences apart with an id no token has (``sep``, one past the vocabulary), so that the searcher can
rebuild the sentences of a request; the answer's lines are its sentences (:meth:`PromptedModel.hypothesis`).
:class:`PromptCounted` holds the counters of their searchers.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

from ... import SEP
from ..requests import PROMPT_COUNTERS, Counted, Hypothesis, Request, split_at_sep
from ...textio import InputError
from ..backends import load_tokenizer
from .answers import answer_lines, answer_sentences, checked_request
from .conversation import Prompter, forced_turns, turns
from .template import load_template


def load_config(folder: Path):
    """The model's config from ``folder``; an InputError naming it where it is an encoder-decoder's."""
    from ..backends import read_config

    config = read_config(folder, "a causal LM's save_pretrained folder (config.json, the weights, the tokenizer)")
    if getattr(config, "is_encoder_decoder", False):
        raise InputError(folder, f"not a causal LM: a {config.model_type} encoder-decoder model (use --backend "
                                 "transformers)")
    return config


def check_causal(folder: Path, config) -> None:
    """An InputError unless transformers maps the config to a causal LM class."""
    from transformers import AutoModelForCausalLM

    mapping = AutoModelForCausalLM._model_mapping
    if type(config) not in mapping:
        raise InputError(folder, f"not a causal LM: transformers has no causal LM for model type "
                                 f"{config.model_type!r}")


def prompter_for(folder: Path, tokenizer, template: str | None, src_lang: str | None, tgt_lang: str | None):
    """The :class:`.conversation.Prompter` of a model folder's tokenizer; an InputError naming the folder where the
    tokenizer has no chat template and no template is given, or the languages are missing."""
    if not getattr(tokenizer, "chat_template", None) and template is None:
        raise InputError(folder, "the tokenizer has no chat template and no template was given: give one "
                                 "(--template translate, or a file of your own; docs/own-models.md, 'LLMs')")
    try:
        return Prompter(tokenizer, load_template(template), src_lang, tgt_lang)
    except ValueError as err:
        raise InputError(folder, str(err)) from None


def end_ids(tokenizer, generation_config, folder) -> list[int]:
    """The tokens that end an answer: the generation config's ``eos_token_id`` (a chat model's end of turn), and the
    tokenizer's end token; an InputError naming the model ``folder`` where there is none."""
    found = getattr(generation_config, "eos_token_id", None)
    ids = [found] if isinstance(found, int) else list(found or [])
    if tokenizer.eos_token_id is not None and tokenizer.eos_token_id not in ids:
        ids.append(tokenizer.eos_token_id)
    if not ids:
        raise InputError(folder, "expected an end token (eos_token_id) in the tokenizer or the generation config")
    return [int(i) for i in ids]


def generation_config(folder: Path, config):
    """The folder's generation config (generation_config.json), or the one its model config implies."""
    from transformers import GenerationConfig

    if (folder / "generation_config.json").is_file():
        try:
            return GenerationConfig.from_pretrained(folder, local_files_only=True)
        except Exception as err:  # noqa: BLE001
            raise InputError(folder / "generation_config.json", f"could not read it ({type(err).__name__}: {err})"
                             ) from None
    return GenerationConfig.from_model_config(config)


class PromptedModel:
    """What every backend that prompts a causal LM's folder shares (causal-lm's and vllm's models): the folder's
    config, tokenizer, prompt (``template``, a name of :data:`.template.TEMPLATES` or a file; None: the repository's
    ``translate``, which needs the tokenizer's chat template or its own plain form, between ``src_lang`` and
    ``tgt_lang``), its ids (the sentences of a window apart by :attr:`sep`), its conversations and the hypotheses of
    its answers. The weights, the backend's name and the search are the subclass's."""

    def __init__(self, folder: os.PathLike | str, separator: str = SEP, src_lang: str | None = None,
                 tgt_lang: str | None = None, template: str | None = None):
        folder = Path(folder)
        config = load_config(folder)
        check_causal(folder, config)
        tokenizer = load_tokenizer(folder)
        self.folder = folder
        self.checkpoint = str(folder)
        self.config = config
        self.tokenizer = tokenizer
        self.prompter = prompter_for(folder, tokenizer, template, src_lang, tgt_lang)
        self.template = self.prompter.template
        self.ends = end_ids(tokenizer, generation_config(folder, config), folder)
        self.eos = self.ends[0]
        self.pad = int(tokenizer.pad_token_id if tokenizer.pad_token_id is not None else self.eos)
        self.vocab = int(config.vocab_size)
        #: the id that keeps a window's sentences apart in this model's ids (no token has it)
        self.sep = self.vocab
        self.sep_token = separator
        self.src_lang, self.tgt_lang = src_lang, tgt_lang
        #: the context window: prompt and answer together
        self.max_positions = int(getattr(config, "max_position_embeddings", 0) or 2048)

    # ---- tokens -------------------------------------------------------------
    def encode(self, text: str, source: bool = False) -> list[int]:
        """Each sentence's token ids (``<sep>`` between sentences becomes :attr:`sep`); a target ends in ``eos``."""
        ids: list[int] = []
        for i, part in enumerate(text.split(SEP)):
            if i:
                ids.append(self.sep)
            ids += self.tokenizer(part.strip(), add_special_tokens=False)["input_ids"]
        return ids if source else ids + [self.eos]

    def sentences(self, ids: Sequence[int]) -> list[str]:
        """The sentences of ids split at :attr:`sep` (end tokens dropped)."""
        return [self.tokenizer.decode(s, skip_special_tokens=True, clean_up_tokenization_spaces=False).strip()
                for s in split_at_sep(ids, self.sep, self.ends)]

    def decode(self, ids: Sequence[int]) -> str:
        return f" {SEP} ".join(self.sentences(ids))

    def answer(self, text: str) -> list[int]:
        """An answer's ids as the prompt continues with it: its lines, then the end of the turn."""
        return self.prompter.answer(text, self.eos)

    @property
    def refiner(self):
        """refine's prompt (:class:`.refinement.Refiner`) from the template :attr:`refine_template` names (None: the
        repository's), loaded once."""
        if getattr(self, "_refiner", None) is None:
            from .refinement import Refiner, load_refine_template

            self._refiner = Refiner(self.tokenizer, load_refine_template(self.refine_template), self.src_lang,
                                    self.tgt_lang, chat=self.prompter.chat)
        return self._refiner

    #: refine's template: a name of :data:`.refinement.TEMPLATES` or a file (None: the repository's ``improve``)
    refine_template: str | None = None

    def conversation(self, source: Sequence[int], prefix: Sequence[int], document: Sequence[int] = (),
                     refining: Sequence[int] = (), draft_document: Sequence[int] = ()) -> list[int]:
        """The prompt ids of a request: source sentence ids and forced context ids (each sentence followed by
        :attr:`sep`), as a conversation (:func:`.conversation.turns`), after the source ``document`` where one is given
        (source-primed); or, with a draft to improve (``refining``: refine's request), refine's message
        (:attr:`refiner`)."""
        if refining:
            return self.refiner.ids(self.sentences(source), self.sentences(refining),
                                    self.sentences(document) if document else (),
                                    self.sentences(draft_document) if draft_document else ())
        sources = self.sentences(source)
        context = self.sentences(prefix[:-1]) if prefix else []
        done, current = turns(sources, context)
        return self.prompter.ids(done, current, self.sentences(document) if document else ())

    def fits(self, source: Sequence[int], prefix: Sequence[int], continuation: int = 1,
             document: Sequence[int] = (), **drafts) -> bool:
        """Whether a request's conversation (refine's: ``drafts``, the request's ``refining`` and ``draft_document``)
        and ``continuation`` answer tokens (and the end of the turn) fit the context window (the strategies drop the
        oldest context sentences until it does)."""
        return len(self.conversation(source, prefix, document, **drafts)) + continuation + 1 <= self.max_positions

    def answer_lines(self, request: Request) -> int:
        """The lines the request's answer should have: its last message's sentences."""
        return answer_lines(request, self.sep)

    def hypothesis(self, answer: list[int], score: float, logprob: float, lines: int = 1) -> Hypothesis:
        """An answer as a hypothesis: the answer to one sentence is that sentence's translation (its lines joined
        by spaces); an answer to several is a window's, its lines (non-empty, stripped) its sentences, joined by
        :attr:`sep` (another count of lines is a separator mismatch, which the strategies count). A
        plain template's answer ends where its end text begins. It is complete (:class:`~docnmt.decode.requests.Hypothesis`)
        where it ended (an end token, or a plain template's end text) with ``lines`` lines: an answer that runs on
        with more lines than the message, or is cut at the token limit, is not."""
        ended = any(t in self.ends for t in answer)
        text = self.tokenizer.decode([t for t in answer if t not in self.ends], skip_special_tokens=True,
                                     clean_up_tokenization_spaces=False)
        end = self.prompter.answer_end
        if end is not None and end in text:
            text, ended = text[:text.index(end)], True
        found, complete = answer_sentences(text, ended, lines)
        return Hypothesis(self.encode(f" {SEP} ".join(found), source=True), score, logprob, complete)

    # ---- forced scoring -------------------------------------------------------
    def forced_pairs(self, sources: Sequence[str], targets: Sequence[str],
                     after_last_sep: bool = True) -> list[tuple[list[int], list[int]]]:
        """Each text pair's prompt ids and the answer ids whose log-prob forced scoring sums: with ``after_last_sep``
        the target's earlier sentences are earlier turns and only the last sentence's answer (and the end of the
        turn) counts; otherwise the window's sentences are one user message and the whole answer counts. An
        InputError naming the target where they exceed the context window."""
        pairs = []
        for number, (source, target) in enumerate(zip(sources, targets), start=1):
            done, current, answer = forced_turns(source, target, after_last_sep)
            prompt = self.prompter.ids(done, current)
            output = self.answer(answer)
            if len(prompt) + len(output) > self.max_positions:
                raise InputError(f"target {number}", f"expected at most {self.max_positions} tokens (the model's "
                                 f"context window), found {len(prompt) + len(output)} with the prompt")
            pairs.append((prompt, output))
        return pairs

    # ---- a searcher's requests -------------------------------------------------
    def prompt(self, number: int, request: Request, max_new_tokens: int) -> tuple[list[int], int]:
        """Request ``number``'s prompt ids and its answer's token limit (``max_new_tokens``, or the room left in the
        context window); an InputError naming the request where its ids are not the model's or the prompt leaves no
        room."""
        source, prefix, document = checked_request(number, request, self.sep, "ids of the vocabulary")
        prompt = self.conversation(source, prefix, document, request.refining, request.draft_document)
        room = self.max_positions - len(prompt)
        if room < 1:
            raise InputError(f"request {number}", f"the prompt has {len(prompt)} tokens, no room for an answer in "
                                                  f"the model's context window of {self.max_positions}")
        return prompt, min(max_new_tokens, room)

    def forced(self, number: int, request: Request, target: Sequence[int], end: int | None) -> tuple[list[int],
                                                                                                      list[int]]:
        """Request ``number``'s prompt ids and the answer ids of its forced target (a searcher's ``score_forced``):
        the target sentence, then the end of the turn, or a line break where ``end`` is :attr:`sep` (more lines
        follow); an InputError where they exceed the context window."""
        prompt, _ = self.prompt(number, request, 1)
        text = " ".join(self.sentences(list(target)))
        if end is not None and int(end) == self.sep:
            output = list(self.tokenizer(text + "\n", add_special_tokens=False)["input_ids"])
        else:
            output = self.answer(text)
        if len(prompt) + len(output) > self.max_positions:
            raise InputError(f"request {number}", f"prompt and target too long: {len(prompt) + len(output)} "
                             f"tokens, the model's context window is {self.max_positions}")
        return prompt, output


class PromptCounted(Counted):
    """The counters of a searcher that prompts a causal LM with a cache (causal-lm's and vllm's): tokens
    prefilled, read from the cache and generated, beside the shared ones (:meth:`Counted.prompt_counters`)."""

    def reset_counters(self) -> None:
        super().reset_counters()
        self.tokens_prefilled = self.tokens_cached = self.tokens_generated = 0

    def prompt_counters(self) -> dict:
        """The counters Table 1 shows for them (:data:`docnmt.decode.requests.PROMPT_COUNTERS`)."""
        return {name: getattr(self, name) for name, _ in PROMPT_COUNTERS}

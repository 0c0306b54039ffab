"""A request as a conversation, rendered for a model (:class:`Prompter`).

A *turn* is a user message with source sentences (one per line) and the assistant's answer with their translations
(one per line). The strategies' requests (:mod:`docnmt.decode.strategies`) become conversations: the forced target
context's sentences are earlier turns, each its source sentence with that translation, and the window's remaining
source sentences are the last user message, whose answer is searched (:func:`turns`).

The messages say what the template (:mod:`.template`) writes. Where the tokenizer has a chat template, they are
rendered with it (``add_generation_prompt``); otherwise with the template's ``plain`` part. Either way the text is
tokenized as a whole (no special tokens added: the chat template writes its own).
"""

from __future__ import annotations

from typing import Any, Sequence

from ... import SEP
from ...textio import InputError
from .template import Template, language_name


def turns(sources: Sequence[str], context: Sequence[str]) -> tuple[list[tuple[str, str]], str]:
    """A request's conversation: the first ``len(context)`` source sentences, each with its context translation, as
    earlier turns; the rest of ``sources`` (one per line) as the last user message.

    A context of more sentences than there are earlier source sentences (a window's answer that had more lines than
    the window, kept as the context of its last line) has its surplus first sentences joined into the first turn's
    answer; with no earlier source sentence there is no turn to hold it, and it is left out."""
    if not sources:
        raise ValueError("a request needs a source sentence, got none")
    context = list(context)
    earlier = len(sources) - 1
    if len(context) > earlier:
        context = [] if earlier == 0 else [" ".join(context[:len(context) - earlier + 1])] + context[len(context)
                                                                                                        - earlier + 1:]
    done = [(source, target) for source, target in zip(sources, context)]
    return done, "\n".join(sources[len(context):])


def forced_turns(source: str, target: str, after_last_sep: bool = True) -> tuple[list[tuple[str, str]], str, str]:
    """A forced-scoring pair (a window's source and target, sentences apart by ``<sep>``) as a conversation and the
    answer whose log-prob counts: with ``after_last_sep`` the target's earlier sentences are earlier turns and only
    the last sentence is the answer; otherwise the window's sentences are one user message, the whole target the
    answer (its lines)."""
    src = [s.strip() for s in source.split(SEP)]
    tgt = [t.strip() for t in target.split(SEP)]
    if after_last_sep and len(tgt) > 1:
        done, current = turns(src, tgt[:-1])
        return done, current, tgt[-1]
    return [], "\n".join(src), "\n".join(tgt)


def rendering(renderer, tokenizer, template, src_lang: str | None, tgt_lang: str | None, chat: bool | None) -> bool:
    """Sets what a renderer of a template's messages holds (its tokenizer, template, the languages' names, whether
    the tokenizer's chat template renders them: ``chat``, None where it has one); False where it has none and the
    template no ``plain`` part."""
    renderer.tokenizer, renderer.template = tokenizer, template
    renderer.names = {"source_language": language_name(src_lang), "target_language": language_name(tgt_lang)}
    renderer.chat = bool(getattr(tokenizer, "chat_template", None)) if chat is None else chat
    return renderer.chat or template.plain is not None


class Prompter:
    """Renders conversations to token ids for one tokenizer and template, between two languages; ``chat``: whether
    the conversation is a chat template's (None: where the tokenizer has one; a served model's messages, which the
    server renders, have no tokenizer here and are always chat)."""

    tokenizer: Any
    template: Template
    names: dict[str, str]
    chat: bool

    def __init__(self, tokenizer, template: Template, src_lang: str | None, tgt_lang: str | None,
                 chat: bool | None = None):
        if not rendering(self, tokenizer, template, src_lang, tgt_lang, chat):
            raise InputError(template.path, "the tokenizer has no chat template (a base model), so the template "
                                            "needs a plain: part (start, user, assistant, end) that writes the "
                                            "conversation out as text")

    def _fill(self, text: str | None, source: str = "") -> str:
        return self.template.fill(text, self.names["source_language"], self.names["target_language"], source)

    def _primer(self, document: Sequence[str]) -> str:
        """What opens the first user message: the template's ``document`` with the source document (source-primed),
        or nothing."""
        if not document:
            return ""
        return self.template.fill(self.template.document, self.names["source_language"],
                                  self.names["target_language"], document="\n".join(document))

    def messages(self, done: Sequence[tuple[str, str]], current: str | None,
                 document: Sequence[str] = ()) -> list[dict]:
        """The chat messages: the system message, then each earlier turn's user message and answer, then (unless
        None) the current user message; ``document``: the source document, opening the first user message."""
        template = self.template
        messages = []
        system = self._fill(template.system)
        if system:
            messages.append({"role": "system", "content": system})
        sources = [source for source, _ in done] + ([current] if current is not None else [])
        for i, source in enumerate(sources):
            user = template.first_user if i == 0 and template.first_user else template.user
            messages.append({"role": "user", "content": (self._primer(document) if i == 0 else "")
                             + self._fill(user, source)})
            if i < len(done):
                messages.append({"role": "assistant", "content": done[i][1]})
        return messages

    def text(self, done: Sequence[tuple[str, str]], current: str, document: Sequence[str] = ()) -> str:
        """The prompt's text: the conversation up to the current user message, ready for the answer (``document``:
        the source document, opening the first user message)."""
        if self.chat:
            return self.tokenizer.apply_chat_template(self.messages(done, current, document), tokenize=False,
                                                      add_generation_prompt=True)
        plain = self.plain
        parts = [self._fill(plain["start"]).replace("{system}", self._fill(self.template.system)),
                 self._primer(document)]
        for source, target in done:
            parts += [self._fill(plain["user"], source), self._fill(plain["assistant"]), target, plain["end"]]
        parts += [self._fill(plain["user"], current), self._fill(plain["assistant"])]
        return "".join(parts)

    def ids(self, done: Sequence[tuple[str, str]], current: str, document: Sequence[str] = ()) -> list[int]:
        return list(self.tokenizer(self.text(done, current, document), add_special_tokens=False)["input_ids"])

    def answer(self, text: str, end: int) -> list[int]:
        """An answer's ids as the prompt continues with it: its lines, then the end of the turn (the token ``end``
        after a chat template's answer; a plain template's ``end`` text)."""
        if not self.chat:
            return list(self.tokenizer(text + self.plain["end"], add_special_tokens=False)["input_ids"])
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"]) + [end]

    @property
    def answer_end(self) -> str | None:
        """Where a plain template's answer ends in the text (None with a chat template: its end-of-turn token)."""
        return None if self.chat else self.plain["end"]

    @property
    def plain(self) -> dict:
        """The template's plain part (a base model's, which the Prompter checked it has)."""
        if self.template.plain is None:
            raise ValueError(f"{self.template.path}: expected the key 'plain' for a tokenizer without a chat template")
        return self.template.plain

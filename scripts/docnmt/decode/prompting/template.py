"""The prompt of a causal LM: a conversation of turns, from a template file, through the tokenizer's chat template.

A *turn* is a user message with source sentences (one per line) and the assistant's answer with their translations
(one per line). The strategies' requests (:mod:`docnmt.decode.strategies`) become conversations: the forced target
context's sentences are earlier turns, each its source sentence with that translation, and the window's remaining
source sentences are the last user message, whose answer is searched (:func:`turns`).

The template (a YAML file, :data:`TEMPLATES` holds the repository's) says what the messages say, with the languages'
names as placeholders (``{source_language}``, ``{target_language}``) and the turn's text (``{source}``):

- ``system``: the instruction, as the system message (null: none);
- ``document`` (optional): what opens the first user message of source-primed, ``{document}`` the whole source
  document, one sentence a line (default :data:`DEFAULT_DOCUMENT`);
- ``user``: each user message; ``first_user`` (optional): the first one (an instruction where the chat template
  has no system role);
- ``plain`` (needed only for a tokenizer without a chat template, a base model's): the conversation written out:
  ``start`` once (``{system}``: the instruction), then for each turn ``user``, ``assistant``, the answer and ``end``.
  A template without it serves chat models only; given to a base model it is an error naming the file.

Where the tokenizer has a chat template, the messages are rendered with it (``add_generation_prompt``); otherwise
with the template's ``plain`` part. Either way the text is tokenized as a whole (no special tokens added: the chat
template writes its own).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from .... import SEP
from ....textio import InputError

#: The templates in the repository, by name (``--template NAME`` or a path to a file of one's own).
TEMPLATES = Path(__file__).with_name("templates")
DEFAULT_TEMPLATE = "translate"
#: Every template's placeholders; ``{source}`` must be in ``user`` (and ``first_user``), ``{document}`` in
#: ``document``.
PLACEHOLDERS = ("source_language", "target_language", "source", "document")
#: What opens the first user message of source-primed where a template has no ``document``.
DEFAULT_DOCUMENT = "The whole {source_language} document, for context:\n{document}\n\n"
#: The names of the languages the tasks use, by code (a name given instead of a code is taken as it is).
LANGUAGES = {"en": "English", "de": "German", "it": "Italian", "fr": "French", "es": "Spanish", "pt": "Portuguese",
             "nl": "Dutch", "ro": "Romanian", "ru": "Russian", "cs": "Czech", "pl": "Polish", "zh": "Chinese",
             "ja": "Japanese", "ko": "Korean", "ar": "Arabic", "tr": "Turkish", "uk": "Ukrainian", "sv": "Swedish"}


def language_name(code: str | None) -> str:
    """The name a template writes for a language: from :data:`LANGUAGES`, or ``code`` itself (a name)."""
    if not code:
        raise ValueError("a causal LM's prompt names the languages: give --src-lang and --tgt-lang (e.g. en, de)")
    return LANGUAGES.get(code, code)


@dataclass(frozen=True)
class Template:
    path: Path
    system: str | None
    user: str
    first_user: str | None
    plain: dict | None
    document: str = DEFAULT_DOCUMENT

    def fill(self, text: str | None, source_language: str, target_language: str, source: str = "",
             document: str = "") -> str:
        """``text`` with its placeholders filled ("" for a part the template leaves out)."""
        if text is None:
            return ""
        return text.replace("{source_language}", source_language).replace("{target_language}", target_language) \
            .replace("{document}", document).replace("{source}", source)


def template_path(name: os.PathLike | str | None) -> Path:
    """A template's file: one of :data:`TEMPLATES` by name, or a path."""
    name = DEFAULT_TEMPLATE if name is None else str(name)
    own = TEMPLATES / f"{name}.yaml"
    return own if own.is_file() and os.sep not in name else Path(name)


def load_template(name: os.PathLike | str | None = None) -> Template:
    """The template ``name`` (:func:`template_path`); an InputError naming the file where it cannot be read, a key
    is missing or unknown, or ``{source}`` is missing from a user message."""
    import yaml

    path = template_path(name)
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in TEMPLATES.glob("*.yaml")))
        raise InputError(path, f"no such template: expected a YAML file, or one of the repository's ({known})")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as err:
        raise InputError(path, f"not YAML: {err}") from None
    if not isinstance(data, dict):
        raise InputError(path, "expected a mapping with the keys system and user (and plain, for a base model)")
    unknown = set(data) - {"system", "user", "first_user", "document", "plain"}
    if unknown:
        raise InputError(path, f"unknown key {sorted(unknown)[0]!r}: expected system, user, first_user, document "
                               "and plain")
    if "user" not in data:
        raise InputError(path, "expected the key 'user'")
    plain = data.get("plain")
    if plain is not None and (not isinstance(plain, dict) or set(plain) != {"start", "user", "assistant", "end"}):
        raise InputError(path, "expected plain: to have exactly the keys start, user, assistant and end")
    for key, text in (("user", data["user"]), ("first_user", data.get("first_user")),
                      ("plain.user", None if plain is None else plain["user"])):
        if text is not None and "{source}" not in str(text):
            raise InputError(path, f"the template's {key} lacks the placeholder {{source}} (the turn's sentences)")
    if "document" in data and "{document}" not in str(data["document"]):
        raise InputError(path, "the template's document lacks the placeholder {document} (the source document)")
    if plain is not None and not str(plain["end"]):
        raise InputError(path, "expected plain.end to be a non-empty string (it ends each answer)")
    return Template(path, data.get("system"), str(data["user"]), data.get("first_user"),
                    None if plain is None else {key: str(value) for key, value in plain.items()},
                    str(data.get("document", DEFAULT_DOCUMENT)))


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


class Prompter:
    """Renders conversations to token ids for one tokenizer and template, between two languages; ``chat``: whether
    the conversation is a chat template's (None: where the tokenizer has one; a served model's messages, which the
    server renders, have no tokenizer here and are always chat)."""

    def __init__(self, tokenizer, template: Template, src_lang: str | None, tgt_lang: str | None,
                 chat: bool | None = None):
        self.tokenizer = tokenizer
        self.template = template
        self.names = {"source_language": language_name(src_lang), "target_language": language_name(tgt_lang)}
        self.chat = bool(getattr(tokenizer, "chat_template", None)) if chat is None else chat
        if not self.chat and template.plain is None:
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

"""refine's prompt (:mod:`docnmt.decode.refinement`): a draft translation to improve, with the source document and the
whole draft in view, as one user message whose answer is the improved translation.

A refine template (:data:`TEMPLATES`; ``--refine-template NAME`` or a file of one's own; config
``models.templates.refine``) is a YAML file with the keys:

- ``system``: the instruction, as the system message (null: none);
- ``sentence``: the user message of ``refine.unit: sentence``, with the placeholders ``{document}`` (the source
  document, one sentence a line), ``{draft_document}`` (its draft), ``{source}`` (the sentence) and ``{draft}`` (its
  draft translation);
- ``document``: the user message of ``refine.unit: document``, with ``{source}`` (the whole source document) and
  ``{draft}`` (the whole draft);
- ``plain`` (needed only for a tokenizer without a chat template): ``start`` (``{system}``: the instruction), written
  before the user message, and ``assistant`` after it. The answer ends where the model's translate template's
  ``plain.end`` says (one stop text for every prompt of a model).

Every part may name the languages (``{source_language}``, ``{target_language}``). A template without a slot its
message needs is an error naming the file and the slot (:func:`load_refine_template`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from ...textio import InputError
from .template import read_template

#: The repository's refine templates, by name.
TEMPLATES = Path(__file__).with_name("templates") / "refine"
DEFAULT_REFINE_TEMPLATE = "improve"
#: The slots each user message needs.
SLOTS = {"sentence": ("document", "draft_document", "source", "draft"), "document": ("source", "draft")}
#: refine's units: each sentence in its own turn, or the whole document in one.
UNITS = tuple(SLOTS)


@dataclass(frozen=True)
class RefineTemplate:
    path: Path
    system: str | None
    sentence: str
    document: str
    plain: dict | None


def refine_template_path(name: os.PathLike | str | None) -> Path:
    """A refine template's file: one of :data:`TEMPLATES` by name, or a path."""
    name = DEFAULT_REFINE_TEMPLATE if name is None else str(name)
    own = TEMPLATES / f"{name}.yaml"
    return own if own.is_file() and os.sep not in name else Path(name)


def load_refine_template(name: os.PathLike | str | None = None) -> RefineTemplate:
    """The refine template ``name`` (:func:`refine_template_path`); an InputError naming the file where it cannot be
    read, a key is missing or unknown, or a message lacks a slot of :data:`SLOTS`."""
    path = refine_template_path(name)
    data = read_template(path, TEMPLATES, "refine template")
    keys = ("system", "sentence", "document", "plain")
    if not isinstance(data, dict):
        raise InputError(path, "expected a refine template: a mapping with the keys sentence and document (and "
                               "system, plain)")
    unknown = sorted(set(data) - set(keys))
    if unknown:
        raise InputError(path, f"unknown key {unknown[0]!r} in a refine template: expected {', '.join(keys)}")
    for unit, slots in SLOTS.items():
        if unit not in data:
            raise InputError(path, f"expected the key {unit!r} (the user message of refine.unit: {unit})")
        for slot in slots:
            if f"{{{slot}}}" not in str(data[unit]):
                raise InputError(path, f"the refine template's {unit} lacks the slot {{{slot}}}")
    plain = data.get("plain")
    if plain is not None and (not isinstance(plain, dict) or set(plain) != {"start", "assistant"}):
        raise InputError(path, "expected plain: to have exactly the keys start and assistant")
    return RefineTemplate(path, data.get("system"), str(data["sentence"]), str(data["document"]),
                          None if plain is None else {key: str(value) for key, value in plain.items()})


class Refiner:
    """Renders refine's user message for one tokenizer (None: a served model's messages, always chat) and template,
    between two languages; ``chat``: whether the tokenizer's chat template renders it."""

    tokenizer: Any
    template: RefineTemplate
    names: dict[str, str]
    chat: bool

    def __init__(self, tokenizer, template: RefineTemplate, src_lang: str | None, tgt_lang: str | None,
                 chat: bool | None = None):
        from .conversation import rendering

        if not rendering(self, tokenizer, template, src_lang, tgt_lang, chat):
            raise InputError(template.path, "the tokenizer has no chat template (a base model), so the refine "
                                            "template needs a plain: part (start, assistant)")

    def _fill(self, text: str | None, **slots: str) -> str:
        if text is None:
            return ""
        for name, value in {**self.names, **slots}.items():
            text = text.replace(f"{{{name}}}", value)
        return text

    def user(self, source: Sequence[str], draft: Sequence[str], document: Sequence[str] = (),
             draft_document: Sequence[str] = ()) -> str:
        """The user message: the sentence unit's where a ``document`` is given, else the document unit's (``source``
        and ``draft``: the whole document and its draft)."""
        lines = {"source": "\n".join(source), "draft": "\n".join(draft)}
        if document:
            return self._fill(self.template.sentence, document="\n".join(document),
                              draft_document="\n".join(draft_document), **lines)
        return self._fill(self.template.document, **lines)

    def messages(self, *parts) -> list[dict]:
        """The chat messages: the system message (where the template has one) and the user message (:meth:`user`)."""
        system = self._fill(self.template.system)
        return ([{"role": "system", "content": system}] if system else []) + [
            {"role": "user", "content": self.user(*parts)}]

    def text(self, *parts) -> str:
        """The prompt's text, ready for the answer."""
        if self.chat:
            return self.tokenizer.apply_chat_template(self.messages(*parts), tokenize=False, add_generation_prompt=True)
        plain = self.template.plain
        assert plain is not None  # a base model's template has it (__init__)
        return (self._fill(plain["start"]).replace("{system}", self._fill(self.template.system)) + self.user(*parts)
                + self._fill(plain["assistant"]))

    def ids(self, *parts) -> list[int]:
        return list(self.tokenizer(self.text(*parts), add_special_tokens=False)["input_ids"])

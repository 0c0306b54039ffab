"""A prompt's template: what the messages of a conversation (:mod:`.conversation`) say, from a YAML file
(:data:`TEMPLATES` holds the repository's), with the languages' names as placeholders (``{source_language}``,
``{target_language}``) and the turn's text (``{source}``):

- ``system``: the instruction, as the system message (null: none);
- ``document`` (optional): what opens the first user message of source-primed, ``{document}`` the whole source
  document, one sentence a line (default :data:`DEFAULT_DOCUMENT`);
- ``user``: each user message; ``first_user`` (optional): the first one (an instruction where the chat template
  has no system role);
- ``plain`` (needed only for a tokenizer without a chat template, a base model's): the conversation written out:
  ``start`` once (``{system}``: the instruction), then for each turn ``user``, ``assistant``, the answer and ``end``.
  A template without it serves chat models only; given to a base model it is an error naming the file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ...textio import InputError

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


def read_template(path: Path, folder: Path, what: str):
    """A template file's YAML (``what``: the kind of template, for the messages); an InputError naming the file where
    it is missing (with the repository's of its kind, in ``folder``) or not YAML."""
    import yaml

    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in folder.glob("*.yaml")))
        raise InputError(path, f"no such {what}: expected a YAML file, or one of the repository's ({known})")
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as err:
        raise InputError(path, f"not YAML: {err}") from None


def load_template(name: os.PathLike | str | None = None) -> Template:
    """The template ``name`` (:func:`template_path`); an InputError naming the file where it cannot be read, a key
    is missing or unknown, or ``{source}`` is missing from a user message."""
    path = template_path(name)
    data = read_template(path, TEMPLATES, "template")
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

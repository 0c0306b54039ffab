"""Drafts of the demo's German references with the errors a translation without context makes: an anaphoric pronoun
of another gender (``Sie war sehr schön.`` for ``Er war sehr schön.``), a "you" sentence in the other register
(``Brauchen Sie Hilfe?`` for ``Brauchst du Hilfe?``). The demo's tiny LLM learns to refine from them
(:mod:`docnmt.decode.backends.causal_lm.tiny`): the draft, the source document and the reference sentence.

A sentence is recognized by the demo's own templates (:mod:`.demo_templates`): each template's German with its slots
as patterns. A pronoun sentence's ``{P}`` is replaced by the form of another gender in its case (nominative,
accusative, dative; the possessives are left as they are); a "you" sentence is written with the other register's
template and the same slot values. Other sentences have no such error and stay as they are.
"""

from __future__ import annotations

import random
import re
from typing import Sequence

from .demo_templates import PRONOUN_TEMPLATES, YOU_TEMPLATES

#: The German third-person pronoun per case and gender (the demo's forms).
FORMS = {"nom": {"m": "er", "f": "sie", "n": "es"}, "acc": {"m": "ihn", "f": "sie", "n": "es"},
         "dat": {"m": "ihm", "f": "ihr", "n": "ihm"}}
_SLOT = re.compile(r"\\\{(\w+)\\\}")


def template_pattern(template: str) -> re.Pattern:
    """A template's sentence as a pattern: each slot a named group (a repeated slot the same text)."""
    seen: set[str] = set()

    def group(match: re.Match) -> str:
        name = match.group(1)
        if name in seen:
            return f"(?P={name})"
        seen.add(name)
        return f"(?P<{name}>.+?)"

    return re.compile("^" + _SLOT.sub(group, re.escape(template)) + "$")


def _fill(template: str, values: dict) -> str:
    return re.sub(r"\{(\w+)\}", lambda m: values[m.group(1)], template)


#: (pattern, case) of each pronoun template with a case of :data:`FORMS`.
PRONOUNS = [(template_pattern(t.de), t.case) for t in PRONOUN_TEMPLATES if t.case in FORMS]
#: (pattern, the other register's template) of each "you" template, both ways.
REGISTERS = [(template_pattern(t.informal), t.formal) for t in YOU_TEMPLATES] + [
    (template_pattern(t.formal), t.informal) for t in YOU_TEMPLATES]


def wrong(sentence: str, rng: random.Random) -> str | None:
    """``sentence`` with the error a translation without context makes, or None where it has no pronoun or "you"
    that its context decides."""
    for pattern, case in PRONOUNS:
        match = pattern.match(sentence)
        if match:
            found = match.group("P")
            others = sorted({form for form in FORMS[case].values() if form != found.lower()})
            other = rng.choice(others)
            other = other.capitalize() if found[:1].isupper() else other
            return sentence[:match.start("P")] + other + sentence[match.end("P"):]
    for pattern, other in REGISTERS:
        match = pattern.match(sentence)
        if match:
            return _fill(other, match.groupdict())
    return None


def draft(sentences: Sequence[str], rng: random.Random, share: float = 0.5) -> list[str]:
    """A draft of a document's reference ``sentences``: each sentence that can have a context error has it with
    probability ``share``, the others are as they are."""
    out = []
    for sentence in sentences:
        error = wrong(sentence, rng)
        out.append(error if error is not None and rng.random() < share else sentence)
    return out

"""What the readers of the field's test sets (:mod:`docnmt.corpora.testsets`, :mod:`docnmt.corpora.wmt25`) share:
a segment's text on one line of the common format, the checks of a document read, the JSON rows of a JSONL test set
and the paragraphs of a WMT XML document."""

from __future__ import annotations

import json
import re
from pathlib import Path

from .. import SEP
from ..textio import InputError, iter_lines
from .corpus import Document

#: A translation-side document: ``(name, sentences, 1-based input line of each, file)``, as docnmt-translate reads.
Source = tuple[str, list[str], list[int], Path]

#: A run of white space that holds a line break: any character at which ``str.splitlines`` ends a line (``\n``,
#: ``\r``, ``\v``, ``\f``, ``\x1c``-``\x1e``, ``\x85``, ``\u2028``, ``\u2029``), with the white space around it.
LINE_BREAK_RUN = re.compile(r"\s*[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]\s*")


def flat(text: str | None) -> str:
    """A segment's text on one line of the common format: each run of white space that holds a line break becomes
    one space; everything else (inner runs of spaces, tabs, no-break spaces, white space at either end) is kept as
    the file has it. None (an empty ``<seg/>``, as sacrebleu's extraction gives it) is the empty string."""
    return LINE_BREAK_RUN.sub(" ", text or "")


def has_line_break(text: str | None) -> bool:
    """Whether :func:`flat` changes ``text`` (other than None to "")."""
    return LINE_BREAK_RUN.search(text or "") is not None


def blank(doc: Document) -> bool:
    """Whether every segment of ``doc`` is blank (white space only) on both sides: the common format holds no such
    document."""
    return not any(s.strip() or t.strip() for s, t in zip(doc.src, doc.tgt))


def primary(code: str | None) -> str:
    """A language code's first subtag, lower case: ``de`` for ``de``, ``de-DE`` and ``de_DE``."""
    return re.split(r"[-_]", code or "")[0].lower()


def check_document(path, doc: Document, lines: list[int | None]) -> Document:
    """The common format's rule for one document read from ``path``: no ``<sep>`` (``lines``: each segment's line;
    the readers leave an all-blank document out before, see :func:`blank`)."""
    for text, line in zip(doc.src + doc.tgt, lines + lines):
        if SEP in text:
            raise InputError(path, f"document {doc.docid!r}: raw text must not contain the separator token {SEP!r}",
                             line)
    return doc


def object_rows(path: Path):
    """(1-based line, object) of every non-blank line of a JSONL test set; an InputError naming the line where one is
    no JSON object."""
    for number, line in enumerate(iter_lines(path), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as err:
            raise InputError(path, f"expected a JSON object, found invalid JSON ({err})", number) from None
        if not isinstance(row, dict):
            raise InputError(path, f"expected a JSON object, found {type(row).__name__}", number)
        yield number, row


def by_paragraph(source, kept, pairs) -> list[tuple[str, str, int | None]]:
    """The kept pairs joined by the ``<p>`` their source segment is in: a pair per paragraph (its segments'
    texts, each flattened, joined by a space; the line of its first segment)."""
    paragraph = {(seg.get("id") or "").strip(): number for number, p in enumerate(source.iter("p"))
                 for seg in p.iter("seg")}
    joined: dict[int, list] = {}
    for (segid, _, _), pair in zip(kept, pairs):
        joined.setdefault(paragraph.get(segid, -1), []).append(pair)
    return [(" ".join(flat(s) for s, _, _ in group), " ".join(flat(t) for _, t, _ in group), group[0][2])
            for group in joined.values()]

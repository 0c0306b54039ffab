"""What the parsers of the real corpus formats share: reading lines, entities, repeated ids.

Entities: the SGML/XML segment text is unescaped (``&amp; &quot; &#39; &lt;``
...) but only for well-formed references ``&name;`` / ``&#N;`` / ``&#xN;``, so
a raw ``&`` as in ``R&D`` (real WMT files contain some) stays as it is; then
whitespace is normalized (stripped, runs collapsed to one space) as sacreBLEU
does. Plain-text formats (TSV, train.tags, Moses) are taken verbatim apart
from stripping line ends and surrounding whitespace.

Repeated document ids (a document id occurring in two separate blocks) get a
suffix ``#2``, ``#3``... in order of appearance, so a split's ids stay
contiguous as the common format requires; parsers count these in their
report.
"""

from __future__ import annotations

import gzip
import html
import os
import re
from pathlib import Path
from typing import IO, Iterator

from ..textio import InputError
from .corpus import Document

_ATTR = re.compile(r"([\w:.-]+)\s*=\s*(?:\"([^\"]*)\"|'([^']*)')")
_ENTITY = re.compile(r"&(?:#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]{1,31});")


def unescape_entities(text: str) -> str:
    """Unescape ``&name;``, ``&#N;`` and ``&#xN;`` references; leave a bare ``&`` alone."""
    if "&" not in text:
        return text
    return _ENTITY.sub(lambda m: html.unescape(m.group(0)), text)


def clean_segment(text: str) -> str:
    """Segment text of SGML/XML: entities unescaped, whitespace stripped and collapsed."""
    return " ".join(unescape_entities(text).split())


def iter_text_lines(stream: IO[bytes], name: str) -> Iterator[tuple[int, str]]:
    """Yield ``(line number, line without its line end)`` of a binary stream of UTF-8 text."""
    for number, raw in enumerate(stream, start=1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as err:
            raise InputError(name, f"expected UTF-8 text, found an invalid byte ({err.reason})", number) from None
        if number == 1 and line.startswith("\ufeff"):
            line = line[1:]
        yield number, line.rstrip("\n").rstrip("\r")


def iter_file_lines(path: os.PathLike | str) -> Iterator[tuple[int, str]]:
    """Lines of a plain or gzip-compressed (``.gz``) UTF-8 file, numbered from 1."""
    path = Path(path)
    if not path.exists():
        raise InputError(path, "file not found")
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rb") as handle:
            yield from iter_text_lines(handle, str(path))
    except (OSError, EOFError) as err:  # gzip.BadGzipFile is an OSError
        raise InputError(path, f"expected a readable {'gzip' if path.suffix == '.gz' else 'text'} file: {err}") from None


def dedupe_docids(documents: list[Document]) -> int:
    """Rename repeated document ids to ``id#2``, ``id#3``... in place; return how many were renamed."""
    seen: dict[str, int] = {}
    renamed = 0
    for doc in documents:
        count = seen.get(doc.docid, 0) + 1
        seen[doc.docid] = count
        if count > 1:
            new = f"{doc.docid}#{count}"
            while new in seen:  # an id that already ends in #k
                count += 1
                new = f"{doc.docid}#{count}"
            seen[new] = 1
            doc.docid = new
            renamed += 1
    return renamed


def fill_report(report: dict | None, **values) -> None:
    if report is not None:
        report.update(values)


def tag_attributes(text: str) -> dict:
    """The ``name="value"`` (or ``'value'``) attributes of a tag line, names lower-cased."""
    return {m.group(1).lower(): (m.group(2) if m.group(2) is not None else m.group(3)) for m in _ATTR.finditer(text)}

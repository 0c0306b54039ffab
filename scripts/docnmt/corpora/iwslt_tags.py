"""TED (En->It) training data: IWSLT17 ``train.tags``.

:func:`iwslt_train_tags` -- ``train.tags.en-it.{en,it}``: plain text, one
or more sentences per line, line-aligned between the two files; every talk
starts with a block of meta lines (``<url>``, ``<keywords>``,
``<speaker>``, ``<talkid>``, ``<title>``, ``<description>``, and
``<reviewer>``/``<translator>``, possibly wrapped in ``<doc ...>`` /
``</doc>``). A new talk starts at ``<doc ...>`` or at ``<url>`` (not at
the first meta line of a block, so that credits lines placed after a
talk's text still belong to it). Every line that is a tag is dropped;
the other lines are the sentences. Document id ``ted-{talkid}``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from ..textio import InputError
from .corpus import Document, split_stats
from .rawtext import dedupe_docids, fill_report, iter_file_lines, tag_attributes

_TAGS_META = re.compile(r"^</?\s*([A-Za-z][\w-]*)(?:\s[^>]*)?/?>")


@dataclass
class _Talk:
    line: int
    talkid: str | None = None
    docattr: str | None = None
    has_url: bool = False
    sentences: list | None = None

    @property
    def name(self) -> str:
        return self.talkid or self.docattr or f"(talk at line {self.line})"


def _parse_train_tags(path) -> list[_Talk]:
    talks: list[_Talk] = []
    current: _Talk | None = None
    for number, raw in iter_file_lines(path):
        line = raw.strip()
        meta = _TAGS_META.match(line)
        if meta is None:
            if current is None:
                if not line:
                    continue
                raise InputError(path, "expected a talk header (<url>, <talkid>, ...) before the first sentence, "
                                 f"found text {line[:60]!r}", number)
            current.sentences.append(raw.strip())
            continue
        name = meta.group(1).lower()
        closing = line.startswith("</")
        if name == "doc":
            if closing:
                current = None
            else:
                current = _Talk(number, sentences=[], docattr=tag_attributes(line).get("docid"))
                talks.append(current)
            continue
        if closing:
            continue
        if current is None or (name == "url" and (current.has_url or current.sentences)):
            current = _Talk(number, sentences=[])
            talks.append(current)
        if name == "url":
            current.has_url = True
        elif name == "talkid":
            value = re.sub(r"</\s*talkid\s*>.*$", "", line[meta.end():], flags=re.I).strip()
            if current.talkid is not None and value != current.talkid:
                raise InputError(path, f"expected one <talkid> per talk, found a second one ({value!r} after "
                                 f"{current.talkid!r}); does a talk header lack its <url>?", number)
            current.talkid = value or None
    for talk in talks:  # blank lines after a talk's text (before the next header) are not sentences
        while talk.sentences and not talk.sentences[-1]:
            talk.sentences.pop()
    return talks


def iwslt_train_tags(src_tags: os.PathLike | str, tgt_tags: os.PathLike | str,
                     report: dict | None = None) -> list[Document]:
    """Documents (talks) of IWSLT ``train.tags.{pair}.{src}`` / ``.{tgt}``.

    Both files must hold the same talks in the same order (same talkids) with
    the same number of sentence lines each; the first talk where they differ
    is an error naming it and both files. Talks without any sentence are
    dropped (counted as ``empty_talks``).
    """
    src_talks = _parse_train_tags(src_tags)
    tgt_talks = _parse_train_tags(tgt_tags)
    for index, (s, t) in enumerate(zip(src_talks, tgt_talks), start=1):
        if (s.talkid or s.docattr) != (t.talkid or t.docattr):
            raise InputError(tgt_tags, f"talk {index}: expected talkid {s.name!r} as in {src_tags} (line {s.line}), "
                             f"found {t.name!r}; the files are not aligned", t.line)
        if len(s.sentences) != len(t.sentences):
            raise InputError(
                tgt_tags,
                f"talk {s.name!r}: {len(s.sentences)} sentence lines in {src_tags} (talk at line {s.line}) but "
                f"{len(t.sentences)} in {tgt_tags} (talk at line {t.line}); expected the same number",
                t.line,
            )
    if len(src_talks) != len(tgt_talks):
        longer, path = (src_talks, src_tags) if len(src_talks) > len(tgt_talks) else (tgt_talks, tgt_tags)
        first = longer[min(len(src_talks), len(tgt_talks))]
        raise InputError(path, f"{len(src_talks)} talks in {src_tags} but {len(tgt_talks)} in {tgt_tags}; "
                         f"talk {first.name!r} has no counterpart", first.line)
    if not src_talks:
        raise InputError(src_tags, "expected talks (a <url>/<talkid> header followed by sentence lines), found none")
    documents = []
    empty = 0
    for s, t in zip(src_talks, tgt_talks):
        if not s.talkid and not s.docattr:
            raise InputError(src_tags, "expected a <talkid> (or <doc docid=...>) in the talk header", s.line)
        if not any(x or y for x, y in zip(s.sentences, t.sentences)):
            empty += 1
            continue
        documents.append(Document(f"ted-{s.talkid or s.docattr}", s.sentences, t.sentences))
    renamed = dedupe_docids(documents)
    fill_report(report, empty_talks=empty, renamed_docids=renamed,
          empty_sentences=sum(1 for d in documents for x in d.src if not x), **split_stats(documents))
    return documents

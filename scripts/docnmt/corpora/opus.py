"""Parsers of the real corpora into documents of the common format.

Every parser returns ``list[Document]`` (``src`` = the English side, ``tgt`` =
the other language) and reports bad input as :class:`~docnmt.textio.InputError`
naming the file, the line and what was expected. Source and target sentence
counts agree per document everywhere; a document where they do not is an
error naming the document.

The formats (checked against the real files or the public code that reads
them; see ``tests/realformat.py`` for byte-level fixtures):

NEWS (En->De)
    :func:`news_commentary_tsv` -- ``news-commentary-v14.de-en.tsv.gz``: one
    sentence pair per line, **German first** (``de TAB en``); documents are
    separated by blank lines (a fully empty line, or one holding only a tab /
    whitespace). Text is plain (no entities). Document ids ``nc-v14-00001``...

    :func:`wmt_sgml` -- WMT ``newstest2015``/``newstest2018``
    (``test/newstest2018-ende-src.en.sgm`` and ``-ref.de.sgm`` in the WMT
    ``test.tgz``): ``<srcset>``/``<refset>``, ``<doc sysid docid genre
    origlang>``, ``<p>``, ``<seg id="N">text</seg>``, one segment per line.
    Document id: the ``docid`` attribute.

TED (En->It)
    :func:`iwslt_xml` -- IWSLT17 ``dev2010``/``tst2010``/``tst2017.mltlng``
    XML: ``<mteval>``, a ``<srcset>`` (or ``<refset>``), ``<doc docid genre>``,
    meta lines (``<url> <description> <keywords> <talkid> <title> <reviewer>
    <translator>``, with stray spaces) and ``<seg id="N"> text </seg>``.
    Document id ``ted-{talkid}`` (the ``docid`` attribute when a talk has no
    ``<talkid>``).

    :func:`iwslt_train_tags` -- ``train.tags.en-it.{en,it}``: plain text, one
    or more sentences per line, line-aligned between the two files; every talk
    starts with a block of meta lines (``<url>``, ``<keywords>``,
    ``<speaker>``, ``<talkid>``, ``<title>``, ``<description>``, and
    ``<reviewer>``/``<translator>``, possibly wrapped in ``<doc ...>`` /
    ``</doc>``). A new talk starts at ``<doc ...>`` or at ``<url>`` (not at
    the first meta line of a block, so that credits lines placed after a
    talk's text still belong to it). Every line that is a tag is dropped;
    the other lines are the sentences. Document id ``ted-{talkid}``.

OS (En->De)
    :func:`opus_moses` / :func:`iter_opus_moses` -- OPUS ``de-en.txt.zip``
    (Moses format) with ``OpenSubtitles.de-en.{de,en,ids}`` (or the older
    naming ``OpenSubtitles2018.de-en.*``), plus README and LICENSE. The
    ``.ids`` line of each sentence pair is ``L1_FILE TAB L2_FILE TAB L1_IDS
    TAB L2_IDS`` where L1/L2 are the languages in the order of the pair name
    (``de-en``: German first), files look like ``de/1999/123/4567.xml.gz``
    and ids are space-separated sentence numbers of the original files. A
    document is a run of consecutive lines with the same file pair; its id
    is the German file path, because ContraPro's ``document id`` names the
    German file.

    :func:`os_split` -- the valid/test/train split (see there: Huo et al.
    2020 publish no document list, so this is a documented deterministic
    stand-in matching the sizes of the paper's Table 5).

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

CLI (writes ``{split}.{src}``, ``{split}.{tgt}``, ``{split}.docids`` in
``--outdir``; nothing is written unless every input parsed)::

    python -m docnmt.parsers news --nc NC.tsv.gz --valid-src SGM --valid-ref SGM
        --test-src SGM --test-ref SGM --outdir D [--report R.json]
    python -m docnmt.parsers ted --train-src TAGS --train-tgt TAGS
        --valid-src XML [XML ...] --valid-ref XML [XML ...]
        --test-src XML --test-ref XML --src en --tgt it --outdir D
    python -m docnmt.parsers os --zip ZIP [--contrapro contrapro.json]
        [--seed S] --outdir D

``os`` reads the zip twice (sizes first, then text) and streams the text to
the output files, so it never holds the 22.5M sentence pairs in memory; the
ContraPro documents go to the split ``contrapro_docs`` instead of ``train``.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import html
import io
import json
import os
import re
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Iterable, Iterator, Sequence

from .corpus import Document, split_stats, write_split
from .textio import InputError, atomic_outputs, atomic_write, cli_errors

# --------------------------------------------------------------------------
# Shared helpers
# --------------------------------------------------------------------------

_ENTITY = re.compile(r"&(?:#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]{1,31});")


def unescape_entities(text: str) -> str:
    """Unescape ``&name;``, ``&#N;`` and ``&#xN;`` references; leave a bare ``&`` alone."""
    if "&" not in text:
        return text
    return _ENTITY.sub(lambda m: html.unescape(m.group(0)), text)


def clean_segment(text: str) -> str:
    """Segment text of SGML/XML: entities unescaped, whitespace stripped and collapsed."""
    return " ".join(unescape_entities(text).split())


def _iter_text_lines(stream: IO[bytes], name: str) -> Iterator[tuple[int, str]]:
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
            yield from _iter_text_lines(handle, str(path))
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


def _fill(report: dict | None, **values) -> None:
    if report is not None:
        report.update(values)


# --------------------------------------------------------------------------
# NEWS: News Commentary v14 TSV
# --------------------------------------------------------------------------


def news_commentary_tsv(path: os.PathLike | str, report: dict | None = None) -> list[Document]:
    """Documents of ``news-commentary-v14.de-en.tsv(.gz)`` (columns ``de TAB en``).

    A line that is empty or holds only whitespace/tabs ends a document. A
    non-blank line must have exactly two tab-separated columns. Lines where
    one side is empty (but not both) are kept as they are and counted
    (``one_side_empty`` in ``report``).
    """
    documents: list[Document] = []
    current: Document | None = None
    one_side_empty = 0
    for number, line in iter_file_lines(path):
        if not line.strip():
            current = None
            continue
        columns = line.split("\t")
        if len(columns) != 2:
            raise InputError(path, f"expected 2 tab-separated columns (de, en), found {len(columns)}", number)
        de, en = columns[0].strip(), columns[1].strip()
        if not de or not en:
            one_side_empty += 1
        if current is None:
            current = Document(f"nc-v14-{len(documents) + 1:05d}")
            documents.append(current)
        current.src.append(en)
        current.tgt.append(de)
    if not documents:
        raise InputError(path, "expected sentence pairs (de TAB en), found none")
    _fill(report, one_side_empty=one_side_empty, **split_stats(documents))
    return documents


# --------------------------------------------------------------------------
# SGML / XML of WMT and IWSLT (mteval format)
# --------------------------------------------------------------------------

_TAG_LINE = re.compile(r"^<\s*(/?)\s*([A-Za-z?!][\w.:-]*)([^>]*)>(.*)$", re.S)
_ATTR = re.compile(r"([\w:.-]+)\s*=\s*(?:\"([^\"]*)\"|'([^']*)')")
_SEG = re.compile(r"<seg\b([^>]*)>(.*?)</seg\s*>", re.I | re.S)
#: Tags of the mteval files whose lines carry no segment text.
_META_TAGS = {"url", "description", "keywords", "talkid", "title", "reviewer", "translator", "speaker",
              "dtime", "videourl", "videopath", "transcription", "wordnum", "charnum"}
_SET_TAGS = {"mteval", "srcset", "refset", "tstset"}
_CONTAINER_TAGS = {"p", "h1", "hl", "head", "text", "body"}


@dataclass
class _MtevalDoc:
    docid: str
    line: int
    attrs: dict
    talkid: str | None
    seg_ids: list
    segs: list


def _attrs(text: str) -> dict:
    return {m.group(1).lower(): (m.group(2) if m.group(2) is not None else m.group(3)) for m in _ATTR.finditer(text)}


def _parse_mteval(path: os.PathLike | str) -> list[_MtevalDoc]:
    """Documents and segments of a WMT SGML or IWSLT XML file (line-based, as the files are).

    Lenient where the real files vary (tag case, spaces around meta lines,
    ``<p>``/``<h1>`` containers, unknown tags outside segments), strict where
    a mistake would misalign text: a segment outside a document, an unclosed
    segment or document, a segment without an ``id``, text outside a
    segment, no documents at all.
    """
    docs: list[_MtevalDoc] = []
    current: _MtevalDoc | None = None
    pending_seg: tuple[int, list[str]] | None = None  # (line, parts) of a segment spanning lines
    pending_meta: tuple[int, str, list[str]] | None = None  # a meta element spanning lines
    for number, raw in iter_file_lines(path):
        line = raw.strip()
        if pending_meta is not None:
            start, name, parts = pending_meta
            parts.append(line)
            if re.search(rf"</\s*{re.escape(name)}\s*>", line, re.I):
                _set_meta(current, name, " ".join(parts))
                pending_meta = None
            elif re.match(r"<\s*(seg|doc|/doc)\b", line, re.I):
                raise InputError(path, f"expected </{name}> to close <{name}> of line {start}, found {line[:40]!r}", number)
            continue
        if pending_seg is not None:
            start, parts = pending_seg
            if re.match(r"<\s*(seg|doc|/doc)\b", line, re.I):
                raise InputError(path, f"unclosed <seg>: expected </seg> for the segment opened at line {start}", number)
            end = re.search(r"</seg\s*>", line, re.I)
            if end is None:
                parts.append(line)
                continue
            parts.append(line[: end.start()])
            text = "\n".join(parts)
            current.segs[-1] = clean_segment(text)
            pending_seg = None
            continue
        if not line:
            continue
        if re.search(r"<\s*seg\b", line, re.I):  # also <hl><seg ...>...</seg></hl> of old WMT sets
            if current is None:
                raise InputError(path, "expected <seg> inside a <doc>, found it outside any document", number)
            end = 0
            for match in _SEG.finditer(line):
                _add_segment(path, number, current, match.group(1), clean_segment(match.group(2)))
                end = match.end()
            opener = re.search(r"<\s*seg\b([^>]*)>(.*)$", line[end:], re.I | re.S)
            if opener is not None:  # a segment continued on the next lines
                _add_segment(path, number, current, opener.group(1), "")
                pending_seg = (number, [opener.group(2)])
            elif end == 0:
                raise InputError(path, f"expected <seg id=...>text</seg>, found {line[:60]!r}", number)
            continue
        tag = _TAG_LINE.match(line)
        if tag is None:
            where = f"in document {current.docid!r}" if current is not None else "outside any document"
            raise InputError(path, f"expected a tag or <seg id=...>text</seg>, found text {where}: {line[:60]!r}", number)
        closing, name, attr_text, after = tag.group(1), tag.group(2).lower(), tag.group(3), tag.group(4)
        if name == "doc":
            if closing:
                if current is None:
                    raise InputError(path, "found </doc> without an open <doc>", number)
                docs.append(current)
                current = None
            else:
                if current is not None:
                    raise InputError(
                        path, f"expected </doc> to close document {current.docid!r} (opened at line {current.line}) "
                        "before a new <doc>", number)
                attrs = _attrs(attr_text)
                if not attrs.get("docid"):
                    raise InputError(path, "expected a docid attribute in <doc ...>", number)
                current = _MtevalDoc(attrs["docid"], number, attrs, None, [], [])
            continue
        if name in _META_TAGS and not closing:
            if current is None:
                continue  # metadata outside a document: irrelevant
            if re.search(rf"</\s*{re.escape(name)}\s*>", after, re.I) or attr_text.rstrip().endswith("/"):
                _set_meta(current, name, after)
            else:
                pending_meta = (number, name, [after])
            continue
        # <?xml?>, set tags, <p>, <h1>, closing tags and unknown tags carry no text.
    if pending_seg is not None:
        raise InputError(path, f"unclosed <seg>: expected </seg> for the segment opened at line {pending_seg[0]}, "
                         "found the end of the file")
    if current is not None:
        raise InputError(path, f"expected </doc> to close document {current.docid!r} (opened at line {current.line}), "
                         "found the end of the file")
    if not docs:
        raise InputError(path, "expected at least one <doc docid=...> with <seg> lines, found none")
    return docs


def _set_meta(doc: _MtevalDoc | None, name: str, content: str) -> None:
    if doc is not None and name == "talkid":
        value = re.sub(r"</\s*talkid\s*>.*$", "", content, flags=re.I | re.S).strip()
        if value:
            doc.talkid = value


def _add_segment(path, number: int, doc: _MtevalDoc, attr_text: str, text: str) -> None:
    seg_id = _attrs(attr_text).get("id")
    if seg_id is None or not seg_id.strip():
        raise InputError(path, f"expected <seg id=\"N\"> in document {doc.docid!r}, found a segment without an id", number)
    doc.seg_ids.append(seg_id.strip())
    doc.segs.append(text)


def _align_mteval(src_path, src_docs: list[_MtevalDoc], ref_path, ref_docs: list[_MtevalDoc], docid_of) -> list[Document]:
    """Pair source and reference documents by docid (k-th occurrence with k-th) and segments by id."""

    def keyed(docs):
        seen: dict[str, int] = {}
        out = {}
        for doc in docs:
            seen[doc.docid] = seen.get(doc.docid, 0) + 1
            out[(doc.docid, seen[doc.docid])] = doc
        return out

    src_keyed, ref_keyed = keyed(src_docs), keyed(ref_docs)
    missing = [key for key in src_keyed if key not in ref_keyed]
    if missing:
        docid = missing[0][0]
        raise InputError(ref_path, f"expected document {docid!r} of {src_path} (line {src_keyed[missing[0]].line}) "
                         f"in the reference, found no such <doc>; {len(missing)} source document(s) are missing")
    extra = [key for key in ref_keyed if key not in src_keyed]
    if extra:
        raise InputError(ref_path, f"document {extra[0][0]!r} is not in the source {src_path}; "
                         f"{len(extra)} reference document(s) have no source", ref_keyed[extra[0]].line)
    documents = []
    for key, src in src_keyed.items():
        ref = ref_keyed[key]
        if src.seg_ids != ref.seg_ids:
            position = next((i for i, (a, b) in enumerate(zip(src.seg_ids, ref.seg_ids)) if a != b),
                            min(len(src.seg_ids), len(ref.seg_ids)))
            a = src.seg_ids[position] if position < len(src.seg_ids) else "none"
            b = ref.seg_ids[position] if position < len(ref.seg_ids) else "none"
            raise InputError(
                ref_path,
                f"document {src.docid!r}: segment ids differ from the source {src_path} "
                f"({len(src.seg_ids)} source vs {len(ref.seg_ids)} reference segments; segment {position + 1} "
                f"has id {a!r} in the source, {b!r} in the reference)",
                ref.line,
            )
        if src.talkid and ref.talkid and src.talkid != ref.talkid:
            raise InputError(ref_path, f"document {src.docid!r}: talkid {ref.talkid!r} differs from the source's "
                             f"{src.talkid!r} ({src_path})", ref.line)
        if not src.segs:
            continue  # a document without segments has nothing to translate
        documents.append(Document(docid_of(src), list(src.segs), list(ref.segs)))
    return documents


def wmt_sgml(src_sgm: os.PathLike | str, ref_sgm: os.PathLike | str, report: dict | None = None) -> list[Document]:
    """Documents of a WMT newstest source/reference SGML pair, aligned by docid and seg id."""
    src_docs = _parse_mteval(src_sgm)
    ref_docs = _parse_mteval(ref_sgm)
    documents = _align_mteval(src_sgm, src_docs, ref_sgm, ref_docs, lambda d: d.docid)
    renamed = dedupe_docids(documents)
    _fill(report, renamed_docids=renamed, **split_stats(documents))
    return documents


def iwslt_xml(src_xml: os.PathLike | str, ref_xml: os.PathLike | str, report: dict | None = None) -> list[Document]:
    """Documents (talks) of an IWSLT XML source/reference pair, aligned by docid and seg id."""
    src_docs = _parse_mteval(src_xml)
    ref_docs = _parse_mteval(ref_xml)
    documents = _align_mteval(src_xml, src_docs, ref_xml, ref_docs, lambda d: f"ted-{d.talkid or d.docid}")
    renamed = dedupe_docids(documents)
    _fill(report, renamed_docids=renamed, **split_stats(documents))
    return documents


# --------------------------------------------------------------------------
# TED: IWSLT train.tags
# --------------------------------------------------------------------------

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
                current = _Talk(number, sentences=[], docattr=_attrs(line).get("docid"))
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
    _fill(report, empty_talks=empty, renamed_docids=renamed,
          empty_sentences=sum(1 for d in documents for x in d.src if not x), **split_stats(documents))
    return documents


# --------------------------------------------------------------------------
# OS: OPUS OpenSubtitles v2018, Moses format
# --------------------------------------------------------------------------

#: Accepted corpus names of the members (current and older OPUS releases).
OPUS_NAMINGS = ("OpenSubtitles", "OpenSubtitles2018")
_OPUS_IDS = re.compile(r"^(OpenSubtitles(?:2018)?)\.([A-Za-z_]+)-([A-Za-z_]+)\.ids$")
_SENT_IDS = re.compile(r"^[0-9]*(?: [0-9]+)*$")


@dataclass(frozen=True)
class OpusMembers:
    """The names of the three Moses members of an OPUS zip and the pair's language order."""

    ids: str
    l1: str
    l2: str
    files: dict  # language -> member name


def opus_members(zf: zipfile.ZipFile, zip_path, src: str = "en", tgt: str = "de") -> OpusMembers:
    """Find ``{OpenSubtitles|OpenSubtitles2018}.{l1}-{l2}.{ids,l1,l2}`` in an OPUS Moses zip."""
    names = zf.namelist()
    found = []
    for name in names:
        match = _OPUS_IDS.match(name.rsplit("/", 1)[-1])
        if match and {match.group(2), match.group(3)} == {src, tgt}:
            found.append((OPUS_NAMINGS.index(match.group(1)), name, match))
    if not found:
        raise InputError(zip_path, f"expected members OpenSubtitles.{{pair}}.ids (or OpenSubtitles2018.{{pair}}.ids) "
                         f"for the pair {src}/{tgt}, found: {', '.join(names[:10]) or 'an empty archive'}")
    _, ids_name, match = sorted(found)[0]
    prefix = ids_name[: -len("ids")]
    l1, l2 = match.group(2), match.group(3)
    files = {}
    for lang in (l1, l2):
        member = prefix + lang
        if member not in names:
            raise InputError(zip_path, f"expected member {member} next to {ids_name}, found none")
        files[lang] = member
    return OpusMembers(ids_name, l1, l2, files)


def _member_lines(zf: zipfile.ZipFile, member: str, zip_path) -> Iterator[tuple[int, str]]:
    with zf.open(member) as handle:
        yield from _iter_text_lines(io.BufferedReader(handle, 1 << 20), f"{zip_path}:{member}")


@dataclass
class _OpusBlock:
    docid: str
    line: int
    size: int
    src: list | None
    tgt: list | None


def _opus_blocks(zip_path, src: str, tgt: str, with_text: bool, stats: dict | None = None) -> Iterator[_OpusBlock]:
    """Runs of consecutive ``.ids`` lines with the same file pair, as documents.

    With ``with_text`` the text members are read in step and each block
    carries its sentences; without, only the ``.ids`` member is read (sizes).
    """
    zip_path = Path(zip_path)
    if not zip_path.exists():
        raise InputError(zip_path, "file not found")
    try:
        zf = zipfile.ZipFile(zip_path)
    except zipfile.BadZipFile as err:
        raise InputError(zip_path, f"expected a zip archive: {err}") from None
    with zf:
        members = opus_members(zf, zip_path, src, tgt)
        ids_where = f"{zip_path}:{members.ids}"
        tgt_col = 0 if members.l1 == tgt else 1
        langs = (members.l1, members.l2)
        ids_lines = _member_lines(zf, members.ids, zip_path)
        if with_text:
            src_lines = _member_lines(zf, members.files[src], zip_path)
            tgt_lines = _member_lines(zf, members.files[tgt], zip_path)
        seen: dict[str, int] = {}
        renamed = 0
        block: _OpusBlock | None = None
        pair = None
        total = 0
        for number, line in ids_lines:
            columns = line.split("\t")
            if len(columns) != 4:
                raise InputError(ids_where, f"expected 4 tab-separated columns ({langs[0]} file, {langs[1]} file, "
                                 f"{langs[0]} sentence ids, {langs[1]} sentence ids), found {len(columns)}", number)
            files = (columns[0].strip(), columns[1].strip())
            if not files[0] or not files[1]:
                raise InputError(ids_where, f"expected the {langs[0]} and {langs[1]} file names in columns 1-2, "
                                 f"found an empty column", number)
            for col, lang in enumerate(langs):
                other = langs[1 - col]
                if files[col].startswith(other + "/") and not files[col].startswith(lang + "/"):
                    raise InputError(ids_where, f"column {col + 1} should name the {lang} file (the pair is "
                                     f"{langs[0]}-{langs[1]}), found {files[col]!r}", number)
                if not _SENT_IDS.match(columns[2 + col].strip()):
                    raise InputError(ids_where, f"expected space-separated {lang} sentence ids in column {col + 3}, "
                                     f"found {columns[2 + col]!r}", number)
            if with_text:
                s = next(src_lines, None)
                t = next(tgt_lines, None)
                for got, lang in ((s, src), (t, tgt)):
                    if got is None:
                        raise InputError(f"{zip_path}:{members.files[lang]}", f"expected a line to match line {number} "
                                         f"of {members.ids}, found the end of the member", number)
            if files != pair:
                if block is not None:
                    yield block
                pair = files
                docid = files[tgt_col]
                count = seen.get(docid, 0) + 1
                seen[docid] = count
                if count > 1:
                    docid = f"{docid}#{count}"
                    renamed += 1
                block = _OpusBlock(docid, number, 0, [] if with_text else None, [] if with_text else None)
            block.size += 1
            total += 1
            if with_text:
                block.src.append(s[1].strip())
                block.tgt.append(t[1].strip())
        if block is None:
            raise InputError(ids_where, "expected sentence-pair lines, found an empty member")
        if with_text:
            for lines, lang in ((src_lines, src), (tgt_lines, tgt)):
                extra = next(lines, None)
                if extra is not None:
                    raise InputError(f"{zip_path}:{members.files[lang]}", f"expected {total} lines as in "
                                     f"{members.ids}, found more", extra[0])
        yield block
        if stats is not None:
            stats.update(renamed_docids=renamed, members=[members.ids, members.files[src], members.files[tgt]])


def iter_opus_moses(zip_path: os.PathLike | str, src: str = "en", tgt: str = "de",
                    report: dict | None = None) -> Iterator[Document]:
    """Stream the documents of an OPUS OpenSubtitles Moses zip (docid = the ``tgt`` file path)."""
    for block in _opus_blocks(zip_path, src, tgt, with_text=True, stats=report):
        yield Document(block.docid, block.src, block.tgt)


def opus_moses(zip_path: os.PathLike | str, src: str = "en", tgt: str = "de",
               report: dict | None = None) -> list[Document]:
    """All documents of an OPUS OpenSubtitles Moses zip (see :func:`iter_opus_moses`)."""
    documents = list(iter_opus_moses(zip_path, src, tgt, report))
    _fill(report, **split_stats(documents))
    return documents


def normalize_os_docid(docid: str, tgt_lang: str = "de") -> str:
    """The key under which ContraPro's and OPUS's names of one OpenSubtitles document agree.

    Rule (the same as :func:`docnmt.contrapro.normalize_document_id`, plus two
    cases): drop a ``#k`` repeat suffix, a leading ``./`` and ``{tgt_lang}/``,
    then ``.gz``, then ``.xml`` or ``.{tgt_lang}``, and join path parts with
    ``_``. So ``de/2004/123/456.xml.gz``, ``2004/123/456.xml``,
    ``2004/123/456.xml.gz`` and ContraPro's file name ``2004_123_456.de`` all
    give ``2004_123_456``; a year folder in front of such a file name
    (``2004/2004_123_456.de``) is dropped too.
    """
    key = docid.strip().replace("\\", "/")
    key = re.sub(r"#[0-9]+$", "", key)
    if key.startswith("./"):
        key = key[2:]
    if key.startswith(f"{tgt_lang}/"):
        key = key[len(tgt_lang) + 1:]
    if key.endswith(".gz"):
        key = key[:-3]
    if key.endswith(".xml"):
        key = key[:-4]
    elif key.endswith(f".{tgt_lang}"):
        key = key[: -len(tgt_lang) - 1]
    key = key.replace("/", "_")
    doubled = re.match(r"^([0-9]+)_(\1_.+)$", key)
    return doubled.group(2) if doubled else key


def read_contrapro_docids(path: os.PathLike | str) -> list[str]:
    """The distinct ``document id`` values of a ``contrapro.json`` (in first-seen order)."""
    path = Path(path)
    if not path.exists():
        raise InputError(path, "file not found")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise InputError(path, f"expected JSON: {err.msg}", err.lineno) from None
    except UnicodeDecodeError as err:
        raise InputError(path, f"expected UTF-8 text, found an invalid byte ({err.reason})") from None
    if not isinstance(data, list):
        raise InputError(path, f"expected a JSON list of ContraPro examples, found {type(data).__name__}")
    ids: dict[str, None] = {}
    for index, example in enumerate(data):
        if not isinstance(example, dict) or not isinstance(example.get("document id"), str):
            raise InputError(path, f"example {index}: expected an object with a string field 'document id'")
        ids.setdefault(example["document id"], None)
    return list(ids)


def _hash_key(seed, docid: str) -> str:
    return hashlib.sha256(f"{seed}\t{docid}".encode("utf-8")).hexdigest()


def _choose(order: list[tuple[str, str, int]], used: set, sentences: int, docs: int) -> list[str]:
    """Greedy choice of ``docs`` documents summing to about ``sentences`` (see :func:`os_split`)."""
    chosen: list[str] = []
    total = 0
    for slot in range(docs):
        ideal = (sentences - total) / (docs - slot)
        tolerance = max(1.0, 0.02 * ideal)
        pick = best = None
        for key, docid, size in order:
            if docid in used:
                continue
            distance = abs(size - ideal)
            if distance <= tolerance:
                pick = (docid, size)
                break
            if best is None or distance < best[0]:
                best = (distance, docid, size)
        if pick is None:
            if best is None:
                break
            pick = (best[1], best[2])
        used.add(pick[0])
        chosen.append(pick[0])
        total += pick[1]
    return chosen


def choose_os_split(sizes: Sequence[tuple[str, int]], exclude_docids: Iterable[str] = (),
                    valid_sentences: int = 3500, valid_docs: int = 5, test_sentences: int = 3800,
                    test_docs: int = 5, seed="docnmt-os-v1", tgt_lang: str = "de") -> tuple[dict, dict]:
    """The OS split from document sizes only: ``({docid: split}, report)``.

    ``split`` is one of ``train``, ``valid``, ``test`` or ``excluded``. See
    :func:`os_split` for the rule.
    """
    exclude_keys = {normalize_os_docid(d, tgt_lang) for d in exclude_docids}
    excluded = {docid for docid, _ in sizes if normalize_os_docid(docid, tgt_lang) in exclude_keys}
    candidates = [(docid, size) for docid, size in sizes if docid not in excluded]
    needed = valid_docs + test_docs + 1
    if len(candidates) < needed:
        raise ValueError(f"expected at least {needed} documents outside ContraPro for {valid_docs} valid, "
                         f"{test_docs} test and some train documents, found {len(candidates)}")
    order = sorted((_hash_key(seed, docid), docid, size) for docid, size in candidates)
    used: set = set()
    valid = _choose(order, used, valid_sentences, valid_docs)
    test = _choose(order, used, test_sentences, test_docs)
    assignment = {docid: "train" for docid, _ in sizes}
    for docid in excluded:
        assignment[docid] = "excluded"
    for docid in valid:
        assignment[docid] = "valid"
    for docid in test:
        assignment[docid] = "test"
    size_of = dict(sizes)
    found_keys = {normalize_os_docid(d, tgt_lang) for d in excluded}
    missing = sorted(exclude_keys - found_keys)

    def stats(split):
        ids = [d for d, s in assignment.items() if s == split]
        return {"sentences": sum(size_of[d] for d in ids), "documents": len(ids)}

    report = {
        "seed": str(seed),
        "rule": "sha256(seed, docid) order; per slot the first document within 2% of the remaining "
                "sentence target / remaining slots, else the closest; ContraPro documents excluded everywhere",
        "targets": {"valid": {"sentences": valid_sentences, "documents": valid_docs},
                    "test": {"sentences": test_sentences, "documents": test_docs}},
        "valid": stats("valid"),
        "test": stats("test"),
        "train": stats("train"),
        "excluded_contrapro": stats("excluded"),
        "contrapro_documents_requested": len(exclude_keys),
        "contrapro_documents_not_in_corpus": len(missing),
        "contrapro_missing_first": missing[:10],
        "valid_docids": valid,
        "test_docids": test,
    }
    return assignment, report


def os_split(documents: Sequence[Document], exclude_docids: Iterable[str] = (), valid_sentences: int = 3500,
             valid_docs: int = 5, test_sentences: int = 3800, test_docs: int = 5, seed="docnmt-os-v1",
             tgt_lang: str = "de") -> tuple[list[Document], list[Document], list[Document], dict]:
    """Split OpenSubtitles documents into ``(train, valid, test, report)``.

    Huo et al. (2020), whose split the paper uses, publish no list of their
    valid/test documents, so this is the closest faithful, deterministic
    stand-in, matching the sizes of the paper's Table 5 (valid 3.5k
    sentences in 5 documents, test 3.8k in 5):

    1. Every document matching ``exclude_docids`` (the ContraPro documents)
       is removed from all three splits (ContraPro is a test set). Matching
       uses :func:`normalize_os_docid` on both sides (a leading ``de/``
       stripped, with or without ``.xml``/``.gz``, ContraPro's
       ``YEAR_IMDB_ID.de`` file names).
    2. The remaining documents are ordered by ``sha256(f"{seed}\\t{docid}")``
       (never Python's ``hash()``, which is salted per process).
    3. Valid, then test, are filled slot by slot: for each of the ``n``
       slots the ideal size is (sentences still missing) / (slots left); the
       first document in hash order whose size is within 2% of it (at least
       1 sentence) is taken, else the document closest to it. With OS
       documents of ~750 sentences on average, both splits land within a
       few sentences of the target.
    4. Everything else is train, in corpus order.

    The same documents, ids and seed always give the same split; documents
    are compared by id only, so the order of ``documents`` does not matter.
    """
    sizes = [(doc.docid, len(doc)) for doc in documents]
    assignment, report = choose_os_split(sizes, exclude_docids, valid_sentences, valid_docs, test_sentences,
                                         test_docs, seed, tgt_lang)
    by_id = {doc.docid: doc for doc in documents}
    train = [doc for doc in documents if assignment[doc.docid] == "train"]
    valid = [by_id[d] for d in report["valid_docids"]]
    test = [by_id[d] for d in report["test_docids"]]
    return train, valid, test, report


# --------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------


def _split_paths(outdir: Path, split: str, src: str, tgt: str) -> list[Path]:
    return [outdir / f"{split}.{src}", outdir / f"{split}.{tgt}", outdir / f"{split}.docids"]


def _write_splits(outdir: Path, splits: dict, src: str, tgt: str) -> None:
    outdir.mkdir(parents=True, exist_ok=True)
    for split, documents in splits.items():
        write_split(documents, *_split_paths(outdir, split, src, tgt))


def _print_counts(stats: dict) -> None:
    for split, values in stats.items():
        print(f"{split}: {values['sentences']} sentences in {values['documents']} documents")


def _write_report(path: Path | None, report: dict) -> None:
    if path is not None:
        with atomic_write(path) as handle:
            json.dump(report, handle, indent=1, ensure_ascii=False)
            handle.write("\n")


def _concat_unique(parts: list[tuple[str, list[Document]]]) -> list[Document]:
    seen: dict[str, str] = {}
    out: list[Document] = []
    for where, documents in parts:
        for doc in documents:
            if doc.docid in seen:
                raise InputError(where, f"document {doc.docid!r} is also in {seen[doc.docid]}; the concatenated "
                                 "sets must not share documents")
            seen[doc.docid] = where
            out.append(doc)
    return out


def _run_news(args) -> int:
    report: dict = {"task": "news", "train": {}, "valid": {}, "test": {}}
    train = news_commentary_tsv(args.nc, report["train"])
    valid = wmt_sgml(args.valid_src, args.valid_ref, report["valid"])
    test = wmt_sgml(args.test_src, args.test_ref, report["test"])
    splits = {"train": train, "valid": valid, "test": test}
    _write_splits(args.outdir, splits, args.src, args.tgt)
    _write_report(args.report, report)
    if report["train"]["one_side_empty"]:
        print(f"train: kept {report['train']['one_side_empty']} lines with one side empty")
    _print_counts({name: split_stats(docs) for name, docs in splits.items()})
    return 0


def _run_ted(args) -> int:
    if len(args.valid_src) != len(args.valid_ref):
        raise InputError(args.valid_ref[0], f"expected one --valid-ref per --valid-src ({len(args.valid_src)}), "
                         f"found {len(args.valid_ref)}")
    report: dict = {"task": "ted", "train": {}, "valid": {"parts": []}, "test": {}}
    train = iwslt_train_tags(args.train_src, args.train_tgt, report["train"])
    parts = []
    for src, ref in zip(args.valid_src, args.valid_ref):
        part: dict = {"src": str(src), "ref": str(ref)}
        parts.append((str(src), iwslt_xml(src, ref, part)))
        report["valid"]["parts"].append(part)
    valid = _concat_unique(parts)
    test = iwslt_xml(args.test_src, args.test_ref, report["test"])
    held_out = {d.docid for d in valid} | {d.docid for d in test}
    overlap = sorted(d.docid for d in train if d.docid in held_out)
    report["train"]["talks_also_in_valid_or_test"] = overlap
    splits = {"train": train, "valid": valid, "test": test}
    _write_splits(args.outdir, splits, args.src, args.tgt)
    _write_report(args.report, report)
    if overlap:
        print(f"warning: {len(overlap)} training talks are also in valid/test: {', '.join(overlap[:5])}", file=sys.stderr)
    _print_counts({name: split_stats(docs) for name, docs in splits.items()})
    return 0


def _run_os(args) -> int:
    contrapro_ids = read_contrapro_docids(args.contrapro) if args.contrapro else []
    sizes = [(b.docid, b.size) for b in _opus_blocks(args.zip, args.src, args.tgt, with_text=False)]
    try:
        assignment, report = choose_os_split(sizes, contrapro_ids, seed=args.seed, tgt_lang=args.tgt,
                                             valid_sentences=args.valid_sentences, test_sentences=args.test_sentences,
                                             valid_docs=args.valid_docs, test_docs=args.test_docs)
    except ValueError as err:
        raise InputError(args.zip, str(err)) from None
    splits = ["train", "valid", "test"] + (["contrapro_docs"] if args.contrapro else [])
    target = {"train": "train", "valid": "valid", "test": "test", "excluded": "contrapro_docs"}
    paths = [p for split in splits for p in _split_paths(args.outdir, split, args.src, args.tgt)]
    args.outdir.mkdir(parents=True, exist_ok=True)
    stream_stats: dict = {}
    # valid/test are written in the order of choice, train and contrapro_docs in corpus order.
    held = {"valid": {}, "test": {}}
    with atomic_outputs(paths) as handles:
        files = {split: handles[3 * i: 3 * i + 3] for i, split in enumerate(splits)}

        def emit(split, doc):
            fs, ft, fd = files[split]
            for s, t in zip(doc.src, doc.tgt, strict=True):
                fs.write(s + "\n")
                ft.write(t + "\n")
                fd.write(doc.docid + "\n")

        for block in _opus_blocks(args.zip, args.src, args.tgt, with_text=True, stats=stream_stats):
            split = target[assignment[block.docid]]
            doc = Document(block.docid, block.src, block.tgt)
            if split in held:
                held[split][doc.docid] = doc
            elif split in files:
                emit(split, doc)
        for split in ("valid", "test"):
            for docid in report[f"{split}_docids"]:
                emit(split, held[split][docid])
    report["task"] = "os"
    report["renamed_docids"] = stream_stats.get("renamed_docids", 0)
    report["members"] = stream_stats.get("members")
    _write_report(args.report, report)
    counts = {split: report[split] for split in ("train", "valid", "test")}
    if args.contrapro:
        counts["contrapro_docs"] = report["excluded_contrapro"]
        print(f"contrapro: {report['contrapro_documents_requested']} documents named, "
              f"{report['contrapro_documents_not_in_corpus']} not found in the corpus")
    _print_counts(counts)
    return 0


@cli_errors
def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m docnmt.parsers", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="task", required=True)

    news = sub.add_parser("news", help="News Commentary v14 + WMT newstest SGML")
    news.add_argument("--nc", required=True, type=Path, help="news-commentary-v14.de-en.tsv(.gz)")
    news.add_argument("--valid-src", required=True, type=Path)
    news.add_argument("--valid-ref", required=True, type=Path)
    news.add_argument("--test-src", required=True, type=Path)
    news.add_argument("--test-ref", required=True, type=Path)
    news.add_argument("--src", default="en")
    news.add_argument("--tgt", default="de")

    ted = sub.add_parser("ted", help="IWSLT17 train.tags + XML dev/test sets")
    ted.add_argument("--train-src", required=True, type=Path)
    ted.add_argument("--train-tgt", required=True, type=Path)
    ted.add_argument("--valid-src", required=True, type=Path, nargs="+")
    ted.add_argument("--valid-ref", required=True, type=Path, nargs="+")
    ted.add_argument("--test-src", required=True, type=Path)
    ted.add_argument("--test-ref", required=True, type=Path)
    ted.add_argument("--src", default="en")
    ted.add_argument("--tgt", default="it")

    opensubs = sub.add_parser("os", help="OPUS OpenSubtitles v2018 Moses zip (+ ContraPro exclusion)")
    opensubs.add_argument("--zip", required=True, type=Path)
    opensubs.add_argument("--contrapro", type=Path, help="contrapro.json: its documents leave train, "
                          "and are written as split contrapro_docs")
    opensubs.add_argument("--seed", default="docnmt-os-v1", help="seed of the document hash order")
    opensubs.add_argument("--valid-sentences", type=int, default=3500)
    opensubs.add_argument("--valid-docs", type=int, default=5)
    opensubs.add_argument("--test-sentences", type=int, default=3800)
    opensubs.add_argument("--test-docs", type=int, default=5)
    opensubs.add_argument("--src", default="en")
    opensubs.add_argument("--tgt", default="de")

    for command in (news, ted, opensubs):
        command.add_argument("--outdir", required=True, type=Path)
        command.add_argument("--report", type=Path, help="write a JSON report of counts and choices here")

    args = parser.parse_args(argv)
    return {"news": _run_news, "ted": _run_ted, "os": _run_os}[args.task](args)


if __name__ == "__main__":
    main()

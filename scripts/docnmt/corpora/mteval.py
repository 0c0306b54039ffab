"""The mteval SGML/XML of WMT (NEWS valid/test) and IWSLT (TED valid/test).

:func:`wmt_sgml` -- WMT ``newstest2015``/``newstest2018``
(``test/newstest2018-ende-src.en.sgm`` and ``-ref.de.sgm`` in the WMT
``test.tgz``): ``<srcset>``/``<refset>``, ``<doc sysid docid genre
origlang>``, ``<p>``, ``<seg id="N">text</seg>``, one segment per line.
Document id: the ``docid`` attribute.

:func:`iwslt_xml` -- IWSLT17 ``dev2010``/``tst2010``/``tst2017.mltlng``
XML: ``<mteval>``, a ``<srcset>`` (or ``<refset>``), ``<doc docid genre>``,
meta lines (``<url> <description> <keywords> <talkid> <title> <reviewer>
<translator>``, with stray spaces) and ``<seg id="N"> text </seg>``.
Document id ``ted-{talkid}`` (the ``docid`` attribute when a talk has no
``<talkid>``).

The segment text is unescaped and its whitespace normalized (:mod:`docnmt.corpora.rawtext`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from ..textio import InputError
from .corpus import Document, split_stats
from .rawtext import clean_segment, dedupe_docids, fill_report, iter_file_lines, tag_attributes

_TAG_LINE = re.compile(r"^<\s*(/?)\s*([A-Za-z?!][\w.:-]*)([^>]*)>(.*)$", re.S)
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
            pending_seg = _segments(path, number, line, current)
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
                attrs = tag_attributes(attr_text)
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
    _check_end(path, pending_seg, current, docs)
    return docs


def _segments(path, number: int, line: str, current: _MtevalDoc | None) -> tuple[int, list[str]] | None:
    """The segments of a line that holds ``<seg``, added to ``current``; a segment the line opens and does not
    close: (its line, its text so far), continued on the next lines."""
    if current is None:
        raise InputError(path, "expected <seg> inside a <doc>, found it outside any document", number)
    end = 0
    for match in _SEG.finditer(line):
        _add_segment(path, number, current, match.group(1), clean_segment(match.group(2)))
        end = match.end()
    opener = re.search(r"<\s*seg\b([^>]*)>(.*)$", line[end:], re.I | re.S)
    if opener is not None:  # a segment continued on the next lines
        _add_segment(path, number, current, opener.group(1), "")
        return number, [opener.group(2)]
    if end == 0:
        raise InputError(path, f"expected <seg id=...>text</seg>, found {line[:60]!r}", number)
    return None


def _check_end(path, pending_seg, current: _MtevalDoc | None, docs: list) -> None:
    """An InputError where the file ends inside a segment or a document, or has no document."""
    if pending_seg is not None:
        raise InputError(path, f"unclosed <seg>: expected </seg> for the segment opened at line {pending_seg[0]}, "
                         "found the end of the file")
    if current is not None:
        raise InputError(path, f"expected </doc> to close document {current.docid!r} (opened at line {current.line}), "
                         "found the end of the file")
    if not docs:
        raise InputError(path, "expected at least one <doc docid=...> with <seg> lines, found none")


def _set_meta(doc: _MtevalDoc | None, name: str, content: str) -> None:
    if doc is not None and name == "talkid":
        value = re.sub(r"</\s*talkid\s*>.*$", "", content, flags=re.I | re.S).strip()
        if value:
            doc.talkid = value


def _add_segment(path, number: int, doc: _MtevalDoc, attr_text: str, text: str) -> None:
    seg_id = tag_attributes(attr_text).get("id")
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
    fill_report(report, renamed_docids=renamed, **split_stats(documents))
    return documents


def iwslt_xml(src_xml: os.PathLike | str, ref_xml: os.PathLike | str, report: dict | None = None) -> list[Document]:
    """Documents (talks) of an IWSLT XML source/reference pair, aligned by docid and seg id."""
    src_docs = _parse_mteval(src_xml)
    ref_docs = _parse_mteval(ref_xml)
    documents = _align_mteval(src_xml, src_docs, ref_xml, ref_docs, lambda d: f"ted-{d.talkid or d.docid}")
    renamed = dedupe_docids(documents)
    fill_report(report, renamed_docids=renamed, **split_stats(documents))
    return documents

"""The field's document-level test sets: WMT XML, WMT24++ JSONL and WMT25 JSONL, read into documents and written back
with translations.

**WMT XML** (WMT 2021 onward; what sacrebleu's ``WMTXMLDataset`` and wmt-format-tools read). Test and dev sets
have the same format; a submission adds one ``<hyp>`` per document::

    <dataset id="wmttest2023">
      <collection id="general">
        <doc id="doc-1" origlang="en">
          <src lang="en"><p><seg id="1">Hello.</seg><seg id="2">How are you?</seg></p></src>
          <ref lang="de" translator="A"><p><seg id="1">Hallo.</seg><seg id="2">Wie geht es dir?</seg></p></ref>
          <ref lang="de" translator="B"><p><seg id="1">Hallo.</seg><seg id="2">Wie geht's?</seg></p></ref>
          <hyp system="docnmt-doc-trans" lang="de"><p><seg id="1">Hallo.</seg>...</p></hyp>
        </doc>
      </collection>
    </dataset>

A document's id is its ``<doc id>``; where an id occurs in two collections, every id is prefixed with its
collection's (``general/doc-1``), so two documents never merge. The test split is what sacrebleu's ``WMTXMLDataset``
extracts (``_unwrap_wmt21_or_later``): a document's sentences are the segments of its ``<src>`` in order that some
``<ref>`` of the document has text for; the reference is one translator's ``<ref>`` (``reference``; default: the
translator of the file's first ``<ref>``), matched to the source by segment id. Left out, as sacrebleu leaves them
out, and counted in the "left out" lines: documents marked ``testsuite`` (they are translated), documents without
segments (a ``<src>`` of empty ``<p/>`` elements, as in the WMT 2023 general test set), documents that no ``<ref>``
has text for (no ``<ref>``, or empty ones), and segments that no ``<ref>`` has text for. A segment's text is
sacrebleu's (``seg.text``: inner runs of spaces, tabs, no-break spaces and white space at either end kept as the
file has it), with two differences, each counted in those lines: one line of the common format holds no line break,
so a run of white space that holds one (a line feed, a carriage return, U+2028, ...: :data:`LINE_BREAK_RUN`) becomes
one space; and a document whose segments are all blank (white space only), which sacrebleu keeps and the common
format cannot hold, is left out. A ``<seg>`` that holds more than text (an element, a comment), of which sacrebleu
reads only the text before it, is an error, as are segment ids that decrease (sacrebleu orders a document's segments
by id). The language codes (``<src lang>``, ``<ref lang>``; their first subtag) must be the task's.

**WMT24++ JSONL** (google/wmt24pp: one file per language pair, ``en-de_DE.jsonl``), one JSON object a line::

    {"lp": "en-de_DE", "domain": "news", "document_id": "news-1", "segment_id": 7, "is_bad_source": false,
     "source": "Hello.", "target": "Hallo.", "original_target": "Hallo!"}

A document is the rows of one ``document_id`` (in the file's order of first appearance; its rows need not be
contiguous), its sentences ordered by ``segment_id``. The reference is ``target`` (the post-edited translation;
``reference: original_target`` takes the original). Rows with ``is_bad_source: true`` leave the test split, and a
document left with blank rows only; translation reads and writes every row. The texts are the file's, but for line
breaks, as in the XML (sacrebleu has no reader of this format). The "left out" lines count each. The languages are
``lp``'s (``en-de_DE``: en, de).

**WMT25 JSONL** (wmt-conference/wmt25-general-mt, ``wmt25-genmt.jsonl``: every language pair in one file), one
document a line::

    {"doc_id": "en-de_DE_#_news_#_doc-1", "domain": "news", "src_lang": "en", "tgt_lang": "de_DE",
     "src_text": "First paragraph.\n\nSecond paragraph.", "refs": {"refA": {"ref": "Erster.\n\nZweiter."}}}

WMT25 scores paragraphs: ``src_text`` and each reference are split on blank lines (``"\n\n"``, as its
``humeval/01-prepare_waves.py`` splits them), and each paragraph is one line of the common format, so that every
strategy translates a paragraph with the previous paragraphs as its context and every metric scores paragraphs.
A reference with another paragraph count is an error (WMT25 asserts it); rows of other language pairs, or without
the reference (``refs`` empty), leave the test split, counted. The translation is WMT25's submission: one
``{"doc_id", "hypothesis"}`` a document, the paragraphs joined by a blank line, checked to hold as many paragraphs
as the source.

The readers return :class:`docnmt.corpora.corpus.Document` objects that satisfy the common format's rules
(unique, contiguous document ids, no all-blank document, no ``<sep>``), written with ``write_split``. Translations
go back into the input's format: the XML with a ``<hyp system=NAME lang=TGT>`` per document (the same ``p``/``seg``
structure as its ``<src>``; a document without segments has nothing to translate and gets its empty paragraphs),
the JSONL with a ``"hypothesis"`` field on every row. Every error names the file and, where there is one, the line.

CLI (the rule ``testset_corpus``)::

    python -m docnmt.corpora.testsets convert --format wmt-xml --input wmttest2023.en-de.xml --src en --tgt de \
        [--reference B] (--outdir DIR [--split test] | [--src-out F] [--tgt-out F] [--docids-out F])
"""

from __future__ import annotations

import json
from pathlib import Path

from ..manual import argument_parser
from ..textio import InputError, atomic_write, cli_errors, iter_lines
from .corpus import Document, write_files
# the readers' shared rules of text (re-exported: the tests and docnmt.decode.translate read them from here)
from .segments import (LINE_BREAK_RUN, Source, blank, by_paragraph, check_document, flat, has_line_break,  # noqa: F401
                       object_rows, primary)
from .wmt25 import Wmt25Jsonl

# ---- WMT XML -----------------------------------------------------------------------------------------------------
def _parse_xml(path: Path):
    """The element tree of ``path`` (ElementTree's elements, from the expat parser ElementTree uses; comments and
    processing instructions inside the root kept, as lxml, sacrebleu's parser, keeps them) and the line where each
    element starts; malformed XML is an InputError naming the line expat reports."""
    import xml.etree.ElementTree as ET
    from xml.parsers import expat

    if not path.is_file():
        raise InputError(path, "file not found")
    builder, lines = ET.TreeBuilder(insert_comments=True, insert_pis=True), {}
    parser = expat.ParserCreate()
    parser.buffer_text = True

    def start(tag, attrs):
        lines[builder.start(tag, attrs)] = parser.CurrentLineNumber

    parser.StartElementHandler = start
    parser.EndElementHandler = builder.end
    parser.CharacterDataHandler = builder.data
    parser.CommentHandler = builder.comment
    parser.ProcessingInstructionHandler = builder.pi
    try:
        with open(path, "rb") as handle:
            parser.ParseFile(handle)
    except expat.ExpatError as err:
        raise InputError(path, f"expected well-formed XML, found an error: {expat.errors.messages[err.code]} "
                               f"(column {err.offset + 1})", err.lineno) from None
    return builder.close(), lines


def _node(element) -> str:
    """What a child node of a ``<seg>`` is, in words."""
    import xml.etree.ElementTree as ET

    if element.tag is ET.Comment:
        return "a comment"
    if element.tag is ET.ProcessingInstruction:
        return "a processing instruction"
    return f"an element <{element.tag}>"


#: The lines of what :meth:`WmtXml.split` left out, by reason.
XML_LEFT_OUT = {
    "testsuite": "{} testsuite documents (no reference)",
    "no segments": "{} documents without segments (no <seg> in their <src>)",
    "no reference": "{} documents without reference text (no <ref> has text for any of their segments)",
    "segments": "{} segments without reference text (no <ref> of their document has text for them)",
    "blank": "{} documents whose segments are all blank (white space only), which the common format cannot hold",
    "line breaks": "the line breaks inside {} segments (each run of white space that holds one is one space)",
}


def check_order(path, segs, docid: str) -> None:
    """sacrebleu orders a document's segments by their ids, as integers: ids that are integers must increase
    in document order, so that both orders are one."""
    try:
        numbers = [int(segid) for segid, _, _ in segs]
    except ValueError:
        return  # sacrebleu cannot read such ids at all; document order
    for (segid, _, line), before, number in zip(segs[1:], numbers, numbers[1:]):
        if number <= before:
            raise InputError(path, f"document {docid!r}: in its <src>, segment id {segid} follows {before}; "
                                        "expected increasing segment ids (sacrebleu orders segments by id)", line)


class WmtXml:
    """A WMT XML file (2021 onward), parsed: its documents by unique id, each with its source, references and
    hypotheses."""

    format = "wmt-xml"

    def __init__(self, path, tgt_lang: str | None = None):
        """``tgt_lang``: the ``lang`` of the ``<hyp>`` elements :meth:`write` adds where the file has no ``<ref>``
        to take it from."""
        self.path = Path(path)
        self.root, self._lines = _parse_xml(self.path)
        if self.root.tag != "dataset":
            raise InputError(self.path, f"expected the root element <dataset> of WMT XML, found <{self.root.tag}>",
                             self.line(self.root))
        self.docs = self._documents()
        first_ref = next(self.root.iter("ref"), None)
        self.ref_lang = first_ref.get("lang") if first_ref is not None else None
        self.first_translator = first_ref.get("translator") if first_ref is not None else None
        self.hyp_lang = self.ref_lang or tgt_lang

    def line(self, element) -> int | None:
        return self._lines.get(element)

    def _documents(self) -> list[tuple[str, object]]:
        """``[(unique id, <doc>)]`` in file order."""
        found = []
        for collection in self.root.findall("collection"):
            for doc in collection.findall("doc"):
                docid = (doc.get("id") or "").strip()
                if not docid or "\n" in docid:
                    raise InputError(self.path, f"expected a document id (<doc id=...>) on one line, found "
                                                f"{doc.get('id')!r}", self.line(doc))
                found.append((collection.get("id") or "", docid, doc))
        placed = {doc for _, _, doc in found}
        stray = next((doc for doc in self.root.iter("doc") if doc not in placed), None)
        if stray is not None:  # sacrebleu reads every <doc>, wherever it is
            raise InputError(self.path, "expected each <doc> inside a <collection> of the <dataset>, found one "
                                        "elsewhere", self.line(stray))
        if not found:
            raise InputError(self.path, "expected <doc> elements inside <collection>s, found none", self.line(self.root))
        repeated = len({docid for _, docid, _ in found}) < len(found)
        docs, seen = [], {}
        for collection, docid, doc in found:
            name = f"{collection}/{docid}" if repeated else docid
            if name in seen:
                raise InputError(self.path, f"document id {docid!r} occurs twice in collection {collection!r} (first "
                                            f"at line {seen[name]})", self.line(doc))
            seen[name] = self.line(doc)
            docs.append((name, doc))
        return docs

    def _side(self, doc, docid: str, tag: str = "src"):
        sides = doc.findall(tag)
        if len(sides) != 1:
            raise InputError(self.path, f"document {docid!r}: expected one <{tag}>, found {len(sides)}", self.line(doc))
        return sides[0]

    def segments(self, side, docid: str) -> list[tuple[str, str, int | None]]:
        """``[(seg id, text as the file has it, line)]`` of a ``<src>``, ``<ref>`` or ``<hyp>``, in document order;
        none for one that holds only empty ``<p/>``s. A segment's text is sacrebleu's (``seg.text``; "" for an
        empty ``<seg/>``); a segment that holds more than text (an element, a comment), of which sacrebleu would
        read only the text before it, is an error."""
        segs, seen = [], set()
        for seg in side.iter("seg"):
            segid = (seg.get("id") or "").strip()
            if not segid or segid in seen:
                problem = f"segment id {segid} occurs twice" if segid else "a <seg> has no id"
                raise InputError(self.path, f"document {docid!r}: in its <{side.tag}>, {problem}", self.line(seg))
            if len(seg):
                raise InputError(self.path, f"document {docid!r}: in its <{side.tag}>, segment {segid} holds "
                                            f"{_node(seg[0])}; expected text only (sacrebleu reads a segment's text "
                                            "up to its first child)", self.line(seg))
            seen.add(segid)
            segs.append((segid, seg.text or "", self.line(seg)))
        return segs

    def _check_lang(self, side, docid: str, expected: str, role: str) -> None:
        if primary(side.get("lang")) != primary(expected):
            raise InputError(self.path, f"document {docid!r}: expected <{side.tag} lang> {expected} (the task's {role}), "
                                        f"found {side.get('lang')!r}", self.line(side))

    def sources(self) -> list[Source]:
        """Every document's source sentences (:func:`flat`), testsuite documents included: what a translation
        covers. A document without segments (only empty ``<p/>``s) has nothing to translate and is not among them.
        An error where the ``lang`` of the ``<hyp>`` elements to write is unknown (no ``<ref lang>``, no
        ``tgt_lang``)."""
        if self.hyp_lang is None:
            raise InputError(self.path, "expected a target language for the <hyp lang> of the translations: the "
                                        "file has no <ref lang> to take it from (give the target language)")
        out = []
        for docid, doc in self.docs:
            segs = self.segments(self._side(doc, docid), docid)
            if segs:
                out.append((docid, [flat(text) for _, text, _ in segs], [line or 0 for *_, line in segs], self.path))
        return out

    def split(self, src: str, tgt: str, reference: str | None = None,
              unit: str = "segment") -> tuple[list[Document], list[str]]:
        """The test split (source and one translator's reference) and what it left out, as sacrebleu's
        ``WMTXMLDataset`` extracts it: a segment is in it when some ``<ref>`` of its document has text for it; a
        document with none such (no segments, only empty ``<p/>``s, no ``<ref>``, empty references) and a
        testsuite document are left out. ``unit="paragraph"``: a line per ``<p>`` of the source instead, its kept
        segments joined by a space on both sides (WMT25 translates and scores paragraphs)."""
        if self.ref_lang is None:
            raise InputError(self.path, "expected <ref> elements (reference translations) for a test split, found none",
                             self.line(self.root))
        translator = reference if reference is not None else self.first_translator
        documents = []
        left = dict.fromkeys(XML_LEFT_OUT, 0)
        for docid, doc in self.docs:
            if doc.get("testsuite") is not None:
                left["testsuite"] += 1
                continue
            source = self._side(doc, docid)
            self._check_lang(source, docid, src, "src")
            src_segs = self.segments(source, docid)
            if not src_segs:
                left["no segments"] += 1
                continue
            refs = doc.findall("ref")
            with_text = {(seg.get("id") or "").strip() for ref in refs for seg in ref.iter("seg") if seg.text}
            kept = [seg for seg in src_segs if seg[0] in with_text]
            if not kept:
                left["no reference"] += 1
                continue
            left["segments"] += len(src_segs) - len(kept)
            chosen = [ref for ref in refs if ref.get("translator") == translator]
            if not chosen:
                have = ", ".join(repr(ref.get("translator")) for ref in refs)
                raise InputError(self.path, f"document {docid!r}: expected a <ref> by translator {translator!r}, found "
                                            f"translators {have}", self.line(doc))
            self._check_lang(chosen[0], docid, tgt, "tgt")
            check_order(self.path, src_segs, docid)
            pairs = self._paired(docid, src_segs, kept, chosen[0])
            if unit == "paragraph":
                pairs = by_paragraph(source, kept, pairs)
            result = Document(docid, [flat(s) for s, _, _ in pairs], [flat(t) for _, t, _ in pairs])
            if blank(result):
                left["blank"] += 1
                continue
            left["line breaks"] += sum(has_line_break(s) or has_line_break(t) for s, t, _ in pairs)
            documents.append(check_document(self.path, result, [line for *_, line in pairs]))
        return documents, [text.format(left[key]) for key, text in XML_LEFT_OUT.items() if left[key]]


    def _paired(self, docid: str, src_segs, kept, ref) -> list[tuple[str, str, int | None]]:
        """``[(source text, reference text, line)]`` of the kept segments, the reference matched by segment id."""
        ref_segs = {segid: (text, line) for segid, text, line in self.segments(ref, docid)}
        for segid, _, line in kept:
            if segid not in ref_segs:
                raise InputError(self.path, f"document {docid!r}: source segment {segid} has no segment in the "
                                            f"reference (translator {ref.get('translator')!r})", line)
        extra = sorted(set(ref_segs) - {segid for segid, _, _ in src_segs})
        if extra:
            raise InputError(self.path, f"document {docid!r}: reference segment {extra[0]} (translator "
                                        f"{ref.get('translator')!r}) has no source segment", ref_segs[extra[0]][1])
        return [(text, ref_segs[segid][0], line) for segid, text, line in kept]

    def write(self, output, translations: list[list[str]], system: str) -> None:
        """The file with a ``<hyp system lang>`` added to each document (replacing one of the same system),
        written atomically: a submission that sacrebleu and wmt-format-tools read. ``translations``: those of
        :meth:`sources`; a document without segments gets a ``<hyp>`` with its source's empty paragraphs."""
        import copy
        import xml.etree.ElementTree as ET

        sources = self.sources()  # the same checks
        if len(translations) != len(sources):
            raise ValueError(f"{len(translations)} translated documents for the {len(sources)} documents with "
                             f"segments of {self.path}")
        root = copy.deepcopy(self.root)
        docs = [doc for collection in root.findall("collection") for doc in collection.findall("doc")]
        translated = iter(translations)
        for (docid, _), doc in zip(self.docs, docs):
            source = self._side(doc, docid)
            for old in [h for h in doc.findall("hyp") if h.get("system") == system]:
                doc.remove(old)
            hyp = copy.deepcopy(source)
            hyp.tag, hyp.attrib = "hyp", {"system": system, "lang": self.hyp_lang}
            segs = list(hyp.iter("seg"))
            hyps = next(translated) if segs else []
            if len(segs) != len(hyps):
                raise ValueError(f"document {docid!r}: {len(hyps)} translations for {len(segs)} segments")
            for seg, text in zip(segs, hyps):
                seg.text = text
                for child in list(seg):
                    seg.remove(child)
            last = doc[-1]
            hyp.tail, last.tail = last.tail, source.tail
            doc.append(hyp)
        with atomic_write(output) as handle:
            handle.write('<?xml version="1.0" encoding="utf-8"?>\n')
            # ElementTree writes a carriage return of the text (from &#13;) as is, which a parser reads as a line
            # break: as a character reference it stays one (attributes have theirs escaped, comments hold none)
            handle.write(ET.tostring(root, encoding="unicode").replace("\r", "&#13;"))
            handle.write("\n")


# ---- WMT24++ JSONL -----------------------------------------------------------------------------------------------
class Wmt24ppJsonl:
    """A WMT24++ JSONL file, read: its rows (with their lines) and its documents."""

    format = "wmt24pp-jsonl"
    #: The fields of a WMT24++ row.
    FIELDS = ("lp", "domain", "document_id", "segment_id", "is_bad_source", "source", "target", "original_target")
    #: The fields a translation reads; a test split also needs lp, is_bad_source and its reference field.
    SOURCE_FIELDS = ("document_id", "segment_id", "source")
    TYPES = {"lp": str, "document_id": (str, int), "segment_id": int, "is_bad_source": bool, "source": str,
             "target": str, "original_target": str}

    def __init__(self, path, tgt_lang: str | None = None):
        """``tgt_lang``: unused (a hypothesis field names no language); the readers share one signature."""
        self.path = Path(path)
        self.rows: list[tuple[int, dict]] = []
        for number, row in object_rows(self.path):
            self.rows.append((number, self._checked(row, number, self.SOURCE_FIELDS)))
        if not self.rows:
            raise InputError(self.path, "expected rows of WMT24++ JSONL, found none")
        self.groups = self._grouped()

    def _checked(self, row: dict, number: int, fields) -> dict:
        for name in fields:
            if name not in row:
                raise InputError(self.path, f"expected the field {name!r} (a WMT24++ row has {', '.join(self.FIELDS)}), "
                                            "found none", number)
            kind = self.TYPES.get(name, object)
            if not isinstance(row[name], kind) or (kind is int and isinstance(row[name], bool)):
                raise InputError(self.path, f"expected field {name!r} of type {getattr(kind, '__name__', 'str')}, "
                                            f"found {row[name]!r}", number)
        docid = str(row["document_id"]).strip()
        if not docid or "\n" in docid:
            raise InputError(self.path, f"expected a document_id on one line, found {row['document_id']!r}", number)
        return row

    def _grouped(self) -> list[tuple[str, list[int]]]:
        """``[(document id, row indices ordered by segment_id)]``, documents in order of first appearance."""
        groups: dict[str, list[int]] = {}
        seen: dict[tuple[str, int], int] = {}
        for index, (number, row) in enumerate(self.rows):
            docid = str(row["document_id"]).strip()
            key = (docid, row["segment_id"])
            if key in seen:
                raise InputError(self.path, f"document {docid!r}: segment_id {row['segment_id']} occurs twice (first "
                                            f"at line {seen[key]})", number)
            seen[key] = number
            groups.setdefault(docid, []).append(index)
        return [(docid, sorted(indices, key=lambda i: self.rows[i][1]["segment_id"])) for docid, indices in groups.items()]

    def sources(self) -> list[Source]:
        """Every row's source, bad sources included, by document."""
        return [(docid, [flat(self.rows[i][1]["source"]) for i in indices], [self.rows[i][0] for i in indices],
                 self.path) for docid, indices in self.groups]

    def split(self, src: str, tgt: str, reference: str | None = None,
              unit: str = "segment") -> tuple[list[Document], list[str]]:
        """The test split (rows with ``is_bad_source: true`` left out, and documents left without text) and what it
        left out; the texts are the file's (:func:`flat`)."""
        field = reference or "target"
        if field not in ("target", "original_target"):
            raise InputError(self.path, f"expected reference target or original_target (the WMT24++ fields), "
                                        f"found {reference!r}")
        for number, row in self.rows:
            self._checked(row, number, ("lp", "is_bad_source", field))
            pair = row["lp"].split("-", 1)
            if len(pair) != 2 or primary(pair[0]) != primary(src) or primary(pair[1]) != primary(tgt):
                raise InputError(self.path, f"expected lp {src}-{tgt} (the task's languages, as en-de_DE), found "
                                            f"{row['lp']!r}", number)
        documents = []
        left = dict.fromkeys(self.LEFT_OUT, 0)
        for docid, indices in self.groups:
            kept = [self.rows[i] for i in indices if not self.rows[i][1]["is_bad_source"]]
            left["bad"] += len(indices) - len(kept)
            if not kept:
                continue
            doc = Document(docid, [flat(row["source"]) for _, row in kept], [flat(row[field]) for _, row in kept])
            if blank(doc):
                left["blank"] += 1
                continue
            left["line breaks"] += sum(has_line_break(row["source"]) or has_line_break(row[field]) for _, row in kept)
            documents.append(check_document(self.path, doc, [number for number, _ in kept]))
        return documents, [text.format(left[key]) for key, text in self.LEFT_OUT.items() if left[key]]

    #: The lines of what :meth:`split` left out, by reason.
    LEFT_OUT = {
        "bad": "{} rows marked is_bad_source",
        "blank": "{} documents whose segments are all blank (white space only), which the common format cannot hold",
        "line breaks": "the line breaks inside {} segments (each run of white space that holds one is one space)",
    }

    def write(self, output, translations: list[list[str]], system: str | None = None) -> None:
        """Every row in input order with its translation in ``"hypothesis"``, written atomically."""
        hypothesis: dict[int, str] = {}
        if len(translations) != len(self.groups):
            raise ValueError(f"{len(translations)} translated documents for the {len(self.groups)} of {self.path}")
        for (docid, indices), hyps in zip(self.groups, translations):
            if len(hyps) != len(indices):
                raise ValueError(f"document {docid!r}: {len(hyps)} translations for {len(indices)} segments")
            hypothesis.update(zip(indices, hyps))
        with atomic_write(output) as handle:
            for index, (_, row) in enumerate(self.rows):
                handle.write(json.dumps({**row, "hypothesis": hypothesis[index]}, ensure_ascii=False) + "\n")


# ---- the formats -------------------------------------------------------------------------------------------------
#: Format name (config ``corpus.test.format``, ``--format``) -> its reader.
FORMATS = {"wmt-xml": WmtXml, "wmt24pp-jsonl": Wmt24ppJsonl, "wmt25-jsonl": Wmt25Jsonl}
#: File suffix -> the format a file with it is read in.
SUFFIXES = {".xml": "wmt-xml", ".jsonl": "wmt24pp-jsonl"}


def infer_format(path) -> str | None:
    """The format of a file by its suffix (``.xml``, ``.jsonl``), else None; a ``.jsonl`` whose first row has
    ``src_text`` is WMT25's."""
    fmt = SUFFIXES.get(Path(path).suffix.lower())
    if fmt == "wmt24pp-jsonl" and Path(path).is_file():
        for line in iter_lines(Path(path)):
            if line.strip():
                try:
                    row = json.loads(line)
                except ValueError:
                    break
                if isinstance(row, dict) and "src_text" in row:
                    return "wmt25-jsonl"
                break
    return fmt


#: The units a format's test split may have a line per: WMT XML's segments or paragraphs; WMT24++'s segments;
#: WMT25's paragraphs.
UNITS = {"wmt-xml": ("segment", "paragraph"), "wmt24pp-jsonl": ("segment",), "wmt25-jsonl": ("paragraph",)}


def read_test_split(path, fmt: str, src: str, tgt: str, reference: str | None = None,
                    unit: str | None = None) -> tuple[list[Document], list[str]]:
    """The documents of a test set's evaluation split (source and reference) and what was left out, as lines;
    ``unit``: what a line is (default: the format's first of :data:`UNITS`)."""
    unit = unit or UNITS[fmt][0]
    if unit not in UNITS[fmt]:
        raise InputError(path, f"a {fmt} test set has a line per {' or '.join(UNITS[fmt])}, not per {unit}")
    return FORMATS[fmt](path).split(src, tgt, reference, unit)


def read_for_translation(path, fmt: str, tgt_lang: str | None = None):
    """A test set read for translation: its ``sources()`` (every document and row) and ``write(output,
    translations, system)``, which writes the translations back in its format."""
    return FORMATS[fmt](path, tgt_lang=tgt_lang)


@cli_errors
def main(argv=None) -> int:
    parser = argument_parser("docnmt.corpora.testsets", __doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    convert = sub.add_parser("convert", help="a test set's evaluation split in the common document format")
    convert.add_argument("--format", choices=list(FORMATS), help="default: from the suffix (.xml, .jsonl)")
    convert.add_argument("--input", required=True, type=Path)
    convert.add_argument("--src", required=True, help="the source language code (checked against the file)")
    convert.add_argument("--tgt", required=True, help="the target language code (checked against the file)")
    convert.add_argument("--reference", help="wmt-xml: the translator of the <ref> (default: the file's first); "
                                             "wmt24pp-jsonl: target (default) or original_target; wmt25-jsonl: the "
                                             "key in refs (default refA)")
    convert.add_argument("--unit", choices=["segment", "paragraph"],
                         help="a line per segment or per paragraph (wmt-xml: segment, the default, or paragraph, a "
                              "<p>; wmt24pp-jsonl: segment; wmt25-jsonl: paragraph)")
    convert.add_argument("--outdir", type=Path, help="write SPLIT.SRC, SPLIT.TGT and SPLIT.docids here")
    convert.add_argument("--split", default="test", help="with --outdir: the split's name (default test)")
    for role in ("src", "tgt", "docids"):
        convert.add_argument(f"--{role}-out", type=Path, help=f"write the {role} file here")
    args = parser.parse_args(argv)
    outputs = {role: getattr(args, f"{role}_out") for role in ("src", "tgt", "docids") if getattr(args, f"{role}_out")}
    if args.outdir is not None:
        if outputs:
            parser.error("give --outdir or the --*-out files, not both")
        outputs = {"src": args.outdir / f"{args.split}.{args.src}", "tgt": args.outdir / f"{args.split}.{args.tgt}",
                   "docids": args.outdir / f"{args.split}.docids"}
    if not outputs:
        parser.error("give --outdir or at least one of --src-out, --tgt-out, --docids-out")
    fmt = args.format or infer_format(args.input)
    if fmt is None:
        parser.error(f"--format is needed: {args.input} ends in neither {' nor '.join(SUFFIXES)}")
    documents, left_out = read_test_split(args.input, fmt, args.src, args.tgt, args.reference, args.unit)
    write_files(documents, outputs)
    sentences = sum(len(doc) for doc in documents)
    print(f"{args.input} ({fmt}): {len(documents)} documents, {sentences} {args.unit or UNITS[fmt][0]}s -> "
          f"{', '.join(map(str, outputs.values()))}")
    for what in left_out:
        print(f"left out: {what}")
    return 0


if __name__ == "__main__":
    main()

"""The field's document-level test sets: WMT XML and WMT24++ JSONL, read into documents and written back with
translations.

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
collection's (``general/doc-1``), so two documents never merge. Its sentences are the segments of ``<src>`` in
order; as sacrebleu extracts them, a line break inside a segment (any run of white space) becomes one space. The
reference is one translator's ``<ref>`` (``reference``; default: the translator of the file's first ``<ref>``),
matched to the source by segment id. Documents marked ``testsuite`` have no references and are left out of the
test split, as sacrebleu does (they are translated). The language codes (``<src lang>``, ``<ref lang>``; their
first subtag) must be the task's.

**WMT24++ JSONL** (google/wmt24pp: one file per language pair, ``en-de_DE.jsonl``), one JSON object a line::

    {"lp": "en-de_DE", "domain": "news", "document_id": "news-1", "segment_id": 7, "is_bad_source": false,
     "source": "Hello.", "target": "Hallo.", "original_target": "Hallo!"}

A document is the rows of one ``document_id`` (in the file's order of first appearance; its rows need not be
contiguous), its sentences ordered by ``segment_id``. The reference is ``target`` (the post-edited translation;
``reference: original_target`` takes the original). Rows with ``is_bad_source: true`` leave the test split (their
number is printed); translation reads and writes every row. The languages are ``lp``'s (``en-de_DE``: en, de).

Both readers return :class:`docnmt.corpora.corpus.Document` objects that satisfy the common format's rules
(unique, contiguous document ids, no all-blank document, no ``<sep>``), written with ``write_split``. Translations
go back into the input's format: the XML with a ``<hyp system=NAME lang=TGT>`` per document (the same ``p``/``seg``
structure as its ``<src>``), the JSONL with a ``"hypothesis"`` field on every row. Every error names the file and,
where there is one, the line.

CLI (the rule ``testset_corpus``)::

    python -m docnmt.corpora.testsets convert --format wmt-xml --input wmttest2023.en-de.xml --src en --tgt de \
        [--reference B] (--outdir DIR [--split test] | [--src-out F] [--tgt-out F] [--docids-out F])
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from .. import SEP
from ..manual import argument_parser
from ..textio import InputError, atomic_write, cli_errors, iter_lines
from .corpus import Document, write_files

#: A translation-side document: ``(name, sentences, 1-based input line of each, file)``, as docnmt-translate reads.
Source = tuple[str, list[str], list[int], Path]

def flat(text: str | None) -> str:
    """A segment's text on one line, as sacrebleu extracts it: each run of white space (line breaks included)
    becomes one space, and none is left at either end."""
    return re.sub(r"\s+", " ", (text or "").strip())


def primary(code: str | None) -> str:
    """A language code's first subtag, lower case: ``de`` for ``de``, ``de-DE`` and ``de_DE``."""
    return re.split(r"[-_]", code or "")[0].lower()


def check_document(path, doc: Document, line: int | None) -> Document:
    """The common format's rules for one document read from ``path`` (no ``<sep>``, not all blank)."""
    for text in doc.src + doc.tgt:
        if SEP in text:
            raise InputError(path, f"document {doc.docid!r}: raw text must not contain the separator token {SEP!r}",
                             line)
    if not any(s.strip() or t.strip() for s, t in zip(doc.src, doc.tgt)):
        raise InputError(path, f"document {doc.docid!r} is empty: all its segments are blank", line)
    return doc


# ---- WMT XML -----------------------------------------------------------------------------------------------------
def _parse_xml(path: Path):
    """The element tree of ``path`` (ElementTree's elements, from the expat parser ElementTree uses) and the line
    where each element starts; malformed XML is an InputError naming the line expat reports."""
    import xml.etree.ElementTree as ET
    from xml.parsers import expat

    if not path.is_file():
        raise InputError(path, "file not found")
    builder, lines = ET.TreeBuilder(), {}
    parser = expat.ParserCreate()
    parser.buffer_text = True

    def start(tag, attrs):
        lines[builder.start(tag, attrs)] = parser.CurrentLineNumber

    parser.StartElementHandler = start
    parser.EndElementHandler = builder.end
    parser.CharacterDataHandler = builder.data
    try:
        with open(path, "rb") as handle:
            parser.ParseFile(handle)
    except expat.ExpatError as err:
        raise InputError(path, f"expected well-formed XML, found an error: {expat.errors.messages[err.code]} "
                               f"(column {err.offset + 1})", err.lineno) from None
    return builder.close(), lines


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
        """``[(seg id, text on one line, line)]`` of a ``<src>``, ``<ref>`` or ``<hyp>``, in document order."""
        segs, seen = [], set()
        for seg in side.iter("seg"):
            segid = (seg.get("id") or "").strip()
            if not segid or segid in seen:
                problem = f"segment id {segid} occurs twice" if segid else "a <seg> has no id"
                raise InputError(self.path, f"document {docid!r}: in its <{side.tag}>, {problem}", self.line(seg))
            seen.add(segid)
            segs.append((segid, flat("".join(seg.itertext())), self.line(seg)))
        if not segs:
            raise InputError(self.path, f"document {docid!r}: expected <seg>s in its <{side.tag}>, found none",
                             self.line(side))
        return segs

    def _check_lang(self, side, docid: str, expected: str, role: str) -> None:
        if primary(side.get("lang")) != primary(expected):
            raise InputError(self.path, f"document {docid!r}: expected <{side.tag} lang> {expected} (the task's {role}), "
                                        f"found {side.get('lang')!r}", self.line(side))

    def sources(self) -> list[Source]:
        """Every document's source sentences, testsuite documents included: what a translation covers. An error
        where the ``lang`` of the ``<hyp>`` elements to write is unknown (no ``<ref lang>``, no ``tgt_lang``)."""
        if self.hyp_lang is None:
            raise InputError(self.path, "expected a target language for the <hyp lang> of the translations: the "
                                        "file has no <ref lang> to take it from (give the target language)")
        out = []
        for docid, doc in self.docs:
            segs = self.segments(self._side(doc, docid), docid)
            out.append((docid, [text for _, text, _ in segs], [line or 0 for *_, line in segs], self.path))
        return out

    def split(self, src: str, tgt: str, reference: str | None = None) -> tuple[list[Document], list[str]]:
        """The test split (source and one translator's reference) and what it left out."""
        if self.ref_lang is None:
            raise InputError(self.path, "expected <ref> elements (reference translations) for a test split, found none")
        translator = reference if reference is not None else self.first_translator
        documents, testsuite = [], 0
        for docid, doc in self.docs:
            if doc.get("testsuite") is not None:
                testsuite += 1
                continue
            source = self._side(doc, docid)
            self._check_lang(source, docid, src, "src")
            refs = doc.findall("ref")
            chosen = [ref for ref in refs if ref.get("translator") == translator]
            if not chosen:
                have = ", ".join(repr(ref.get("translator")) for ref in refs) or "none"
                raise InputError(self.path, f"document {docid!r}: expected a <ref> by translator {translator!r}, found "
                                            f"{'translators ' + have if refs else 'no <ref>'}", self.line(doc))
            self._check_lang(chosen[0], docid, tgt, "tgt")
            documents.append(self._paired(docid, doc, source, chosen[0]))
        left_out = [f"{testsuite} testsuite documents (no reference)"] if testsuite else []
        return documents, left_out

    def _paired(self, docid: str, doc, source, ref) -> Document:
        src_segs = self.segments(source, docid)
        ref_segs = {segid: (text, line) for segid, text, line in self.segments(ref, docid)}
        for segid, _, line in src_segs:
            if segid not in ref_segs:
                raise InputError(self.path, f"document {docid!r}: source segment {segid} has no segment in the "
                                            f"reference (translator {ref.get('translator')!r})", line)
        extra = sorted(set(ref_segs) - {segid for segid, _, _ in src_segs})
        if extra:
            raise InputError(self.path, f"document {docid!r}: reference segment {extra[0]} (translator "
                                        f"{ref.get('translator')!r}) has no source segment", ref_segs[extra[0]][1])
        result = Document(docid, [text for _, text, _ in src_segs], [ref_segs[segid][0] for segid, _, _ in src_segs])
        return check_document(self.path, result, self.line(doc))

    def write(self, output, translations: list[list[str]], system: str) -> None:
        """The file with a ``<hyp system lang>`` added to each document (replacing one of the same system),
        written atomically: a submission that sacrebleu and wmt-format-tools read."""
        import copy
        import xml.etree.ElementTree as ET

        self.sources()  # the same checks
        root = copy.deepcopy(self.root)
        docs = [doc for collection in root.findall("collection") for doc in collection.findall("doc")]
        if len(translations) != len(docs):
            raise ValueError(f"{len(translations)} translated documents for the {len(docs)} documents of {self.path}")
        for (docid, _), doc, hyps in zip(self.docs, docs, translations):
            source = self._side(doc, docid)
            for old in [h for h in doc.findall("hyp") if h.get("system") == system]:
                doc.remove(old)
            hyp = copy.deepcopy(source)
            hyp.tag, hyp.attrib = "hyp", {"system": system, "lang": self.hyp_lang}
            segs = list(hyp.iter("seg"))
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
            ET.ElementTree(root).write(handle, encoding="unicode")
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
        for number, line in enumerate(iter_lines(self.path), start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError as err:
                raise InputError(self.path, f"expected a JSON object, found invalid JSON ({err})", number) from None
            if not isinstance(row, dict):
                raise InputError(self.path, f"expected a JSON object, found {type(row).__name__}", number)
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

    def split(self, src: str, tgt: str, reference: str | None = None) -> tuple[list[Document], list[str]]:
        """The test split (rows with ``is_bad_source: true`` left out) and what it left out."""
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
        documents, bad = [], 0
        for docid, indices in self.groups:
            kept = [self.rows[i] for i in indices if not self.rows[i][1]["is_bad_source"]]
            bad += len(indices) - len(kept)
            if kept:
                doc = Document(docid, [flat(row["source"]) for _, row in kept], [flat(row[field]) for _, row in kept])
                documents.append(check_document(self.path, doc, kept[0][0]))
        return documents, [f"{bad} rows marked is_bad_source"] if bad else []

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
FORMATS = {"wmt-xml": WmtXml, "wmt24pp-jsonl": Wmt24ppJsonl}
#: File suffix -> the format a file with it is read in.
SUFFIXES = {".xml": "wmt-xml", ".jsonl": "wmt24pp-jsonl"}


def infer_format(path) -> str | None:
    """The format of a file by its suffix (``.xml``, ``.jsonl``), else None."""
    return SUFFIXES.get(Path(path).suffix.lower())


def read_test_split(path, fmt: str, src: str, tgt: str, reference: str | None = None) -> tuple[list[Document], list[str]]:
    """The documents of a test set's evaluation split (source and reference) and what was left out, as lines."""
    return FORMATS[fmt](path).split(src, tgt, reference)


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
                                             "wmt24pp-jsonl: target (default) or original_target")
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
    documents, left_out = read_test_split(args.input, fmt, args.src, args.tgt, args.reference)
    write_files(documents, outputs)
    sentences = sum(len(doc) for doc in documents)
    print(f"{args.input} ({fmt}): {len(documents)} documents, {sentences} segments -> "
          f"{', '.join(map(str, outputs.values()))}")
    for what in left_out:
        print(f"left out: {what}")
    return 0


if __name__ == "__main__":
    main()

"""ContraPro with left AND right context, as a small corpus in the common format.

ContraPro (Müller et al., 2018) lists contrastive pronoun examples by
document and line (``document id``, ``segment id``); its own tool
(``json2text_and_context.pl``) gives only *left* context. The paper needs
right context too (for strategies such as *first sentence*), so it extracts
the context itself from the OpenSubtitles documents (Appendix A). This module
does that: each example becomes its own mini-document ``cp-{index:05d}``
made of up to ``context`` (= k-1) sentences before the example sentence, the
example sentence, and up to ``context`` sentences after it, all from the
example's document (shorter at a document's start or end). The mini-documents
are written in the common document format, so decoding can run every search
strategy on them unchanged, and a JSON-lines file keeps, per example, where
its sentence is and its contrastive targets (for scoring).

Document lookup: ContraPro's ``document id`` names the German file of an
OpenSubtitles document (``2004/123/456.xml``, with or without ``.gz``, or the
file name ``2004_123_456.de`` that ContraPro's ``opusXML2docs.pl`` writes);
OPUS document ids are German file paths (``de/2004/123/456.xml.gz``). An
exact id match is used first (the demo), then a match after normalization
(:func:`normalize_document_id`). As ``json2text_and_context.pl`` does, the
document's source line at ``segment id`` (1-based) must equal ``src segment``
up to whitespace. Examples whose document is missing, whose ``segment id``
is outside the document, or whose source does not match are never silently
dropped: they are counted and reported per reason, with the first indices;
with ``strict`` any of them is an error. An example without a required field
is always an error naming the JSON file, the example index and its line.

Outputs in ``OUT`` (written atomically, all together or none)::

    contrapro.{src}, contrapro.{tgt}, contrapro.docids   the mini-documents
    contrapro.examples.jsonl   one kept example per line (see Example.to_json)
    contrapro.report.json      totals, drops per reason, counts per bucket

CLI::

    python -m docnmt.corpora.contrapro --json contrapro.json --src F --tgt F --docids F
        --context 2 --out DIR --src-lang en --tgt-lang de [--strict]
"""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from .. import SEP
from .corpus import Document, read_split, write_example_corpus
from .opus import NOT_FOUND_REASONS, _no_ws, normalize_os_docid
from ..textio import InputError, cli_errors, json_lines
from ..manual import argument_parser
from ..option_ranges import NONNEGATIVE_INT

#: Fields an example of contrapro.json must have (ContraPro's schema).
REQUIRED_FIELDS = (
    "document id",
    "segment id",
    "src segment",
    "ref segment",
    "src pronoun",
    "ref pronoun",
    "ante distance",
    "errors",
)
#: Why an example could not be kept, in report order.
DROP_REASONS = NOT_FOUND_REASONS
#: Antecedent-distance buckets of ContraPro's evaluate.py.
ANTE_BUCKETS = ("0", "1", "2", "3", ">3")
#: How many example indices (and messages) per drop reason the report keeps.
FIRST_N = 10
#: Prefix of the mini-document ids.
DOCID_PREFIX = "cp-"


# --------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Example:
    """One kept ContraPro example and where its sentence is in the mini-corpus.

    ``line`` is the 0-based line of the example sentence in
    ``contrapro.{src,tgt}``; ``left``/``right`` are the numbers of context
    sentences actually available before/after it in its mini-document
    ``docid``, so the mini-document spans lines ``line-left .. line+right``.
    """

    index: int
    docid: str
    line: int
    left: int
    right: int
    document_id: str
    segment_id: int
    ante_distance: int | None
    src_pronoun: str
    ref_pronoun: str
    src_segment: str
    ref_segment: str
    contrastive: tuple[str, ...]
    intrasegmental: bool | None = None

    def to_json(self) -> dict:
        """The JSON-lines record (ContraPro's names for ContraPro's fields)."""
        return {
            "index": self.index,
            "docid": self.docid,
            "line": self.line,
            "left": self.left,
            "right": self.right,
            "document id": self.document_id,
            "segment id": self.segment_id,
            "ante distance": self.ante_distance,
            "intrasegmental": self.intrasegmental,
            "src pronoun": self.src_pronoun,
            "ref pronoun": self.ref_pronoun,
            "src segment": self.src_segment,
            "ref segment": self.ref_segment,
            "contrastive": list(self.contrastive),
        }

    @classmethod
    def from_json(cls, record: dict) -> "Example":
        """Inverse of :meth:`to_json`; raises ``KeyError``/``TypeError`` on a malformed record."""
        if not isinstance(record, dict):
            raise TypeError(f"expected a JSON object, found {type(record).__name__}")
        ints = {"index": record["index"], "line": record["line"], "left": record["left"],
                "right": record["right"], "segment id": record["segment id"]}
        for name, value in ints.items():
            if not _is_int(value) or value < 0:
                raise TypeError(f"field {name!r}: expected a non-negative integer, found {value!r}")
        ante = record["ante distance"]
        if ante is not None and not _is_int(ante):
            raise TypeError(f"field 'ante distance': expected an integer or null, found {ante!r}")
        strings = ("docid", "document id", "src pronoun", "ref pronoun", "ref segment")
        for name in strings:
            if not isinstance(record[name], str):
                raise TypeError(f"field {name!r}: expected a string, found {record[name]!r}")
        contrastive = record["contrastive"]
        if not isinstance(contrastive, list) or not all(isinstance(c, str) for c in contrastive):
            raise TypeError(f"field 'contrastive': expected a list of strings, found {contrastive!r}")
        return cls(
            index=record["index"],
            docid=record["docid"],
            line=record["line"],
            left=record["left"],
            right=record["right"],
            document_id=record["document id"],
            segment_id=record["segment id"],
            ante_distance=ante,
            src_pronoun=record["src pronoun"],
            ref_pronoun=record["ref pronoun"],
            src_segment=record.get("src segment", ""),
            ref_segment=record["ref segment"],
            contrastive=tuple(contrastive),
            intrasegmental=record.get("intrasegmental"),
        )


@dataclass
class ExampleSet:
    """The kept examples and their mini-documents (one per example, same order)."""

    documents: list[Document] = field(default_factory=list)
    examples: list[Example] = field(default_factory=list)

    def lines(self) -> int:
        return sum(len(d) for d in self.documents)


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# --------------------------------------------------------------------------
# Reading contrapro.json
# --------------------------------------------------------------------------


def load_contrapro(path: os.PathLike | str) -> tuple[list[dict], list[int]]:
    """Read ContraPro's JSON list of examples; return them and the line each starts on.

    Raises :class:`InputError` for a missing file, invalid JSON (with its
    line), or a top level that is not a list.
    """
    path = Path(path)
    if not path.exists():
        raise InputError(path, "file not found")
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as err:
        raise InputError(path, f"expected UTF-8 JSON, found an invalid byte ({err.reason})") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        message = f"expected JSON, found a syntax error: {err.msg} (column {err.colno})"
        raise InputError(path, message, err.lineno) from None
    if not isinstance(data, list):
        kind = type(data).__name__
        raise InputError(path, f"expected a JSON list of examples (ContraPro's schema), found a JSON {kind}")
    return data, _element_lines(text, len(data))


def _element_lines(text: str, count: int) -> list[int]:
    """The 1-based line on which each element of a (valid) top-level JSON list starts."""
    decoder = json.JSONDecoder()
    lines: list[int] = []
    pos = _skip_ws(text, 0) + 1  # past "["
    line, counted = 1, 0
    for _ in range(count):
        pos = _skip_ws(text, pos)
        line += text.count("\n", counted, pos)
        counted = pos
        lines.append(line)
        _, pos = decoder.raw_decode(text, pos)
        pos = _skip_ws(text, pos)
        if pos < len(text) and text[pos] == ",":
            pos += 1
    return lines


def _skip_ws(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos


def _check_example(example, where) -> None:
    """Required fields and their types; ``where(message)`` builds the InputError."""
    if not isinstance(example, dict):
        raise where(f"expected a JSON object, found a JSON {type(example).__name__}")
    missing = [name for name in REQUIRED_FIELDS if name not in example]
    if missing:
        raise where(f"missing required field{'s' if len(missing) > 1 else ''} {', '.join(map(repr, missing))}")
    for name in ("document id", "src segment", "ref segment", "src pronoun", "ref pronoun"):
        if not isinstance(example[name], str):
            raise where(f"field {name!r}: expected a string, found {example[name]!r}")
    if not example["document id"].strip():
        raise where("field 'document id': expected a document id, found an empty string")
    if not example["src segment"].strip():
        raise where("field 'src segment': expected a sentence, found an empty string")
    if not _is_int(example["segment id"]):
        found = example["segment id"]
        raise where(f"field 'segment id': expected an integer (1-based line in the document), found {found!r}")
    ante = example["ante distance"]
    if ante is not None and (not _is_int(ante) or ante < 0):
        raise where(f"field 'ante distance': expected a non-negative integer or null, found {ante!r}")
    errors = example["errors"]
    if not isinstance(errors, list):
        raise where(f"field 'errors': expected a list, found {errors!r}")
    for number, error in enumerate(errors):
        if not isinstance(error, dict) or not isinstance(error.get("contrastive"), str):
            raise where(f"errors[{number}]: expected an object with a string 'contrastive', found {error!r}")
    for name, text in [("ref segment", example["ref segment"])] + [
        (f"errors[{n}].contrastive", e["contrastive"]) for n, e in enumerate(errors)
    ]:
        if "\n" in text or "\r" in text or SEP in text:
            raise where(f"field {name}: a sentence must not contain a line break or {SEP!r}, found {text!r}")


# --------------------------------------------------------------------------
# Extraction
# --------------------------------------------------------------------------


#: ContraPro's and OPUS's names of one document agree under this key (one
#: rule for the whole package: the OS split uses it to exclude ContraPro documents).
normalize_document_id = normalize_os_docid


class _DocumentIndex:
    """Finds a document by exact id, else by normalized id."""

    def __init__(self, documents: Sequence[Document], tgt_lang: str):
        self.tgt_lang = tgt_lang
        self.exact = {doc.docid: doc for doc in documents}
        self.normalized: dict[str, list[Document]] = {}
        for doc in documents:
            self.normalized.setdefault(normalize_document_id(doc.docid, tgt_lang), []).append(doc)

    def find(self, document_id: str, where) -> Document | None:
        doc = self.exact.get(document_id)
        if doc is not None:
            return doc
        found = self.normalized.get(normalize_document_id(document_id, self.tgt_lang), [])
        if len(found) > 1:
            names = ", ".join(repr(d.docid) for d in found)
            raise where(f"document id {document_id!r} matches several documents after normalization: {names}")
        return found[0] if found else None


def ante_bucket(distance: int | None) -> str:
    """ContraPro's evaluate.py bucket of an antecedent distance: 0, 1, 2, 3 or >3."""
    if distance is None:
        return "unknown"
    return str(distance) if distance <= 3 else ">3"


def extract(
    examples: Sequence[dict],
    documents: Sequence[Document],
    context: int,
    *,
    strict: bool = False,
    json_path: os.PathLike | str = "contrapro.json",
    json_lines: Sequence[int] | None = None,
    tgt_lang: str = "de",
) -> tuple[ExampleSet, dict]:
    """Build the mini-documents of ContraPro's examples; return them and the report.

    ``context`` is the number of sentences (k-1) taken on each side of the
    example sentence from its document. The source side of every line comes
    from the document; the target side too, except for the example line,
    whose target is the example's ``ref segment`` (the sentence the
    contrastive targets were made from; ``reference_differs`` in the report
    counts kept examples where it is not the document's line up to
    whitespace). ``json_path`` and ``json_lines`` (the line each example
    starts on, from :func:`load_contrapro`) name the place of an error.
    """
    if not _is_int(context) or context < 0:
        raise ValueError(f"context must be a non-negative integer, got {context!r}")
    index = _DocumentIndex(documents, tgt_lang)
    result = ExampleSet()
    dropped: dict[str, list[tuple[int, str]]] = {reason: [] for reason in DROP_REASONS}
    by_ante: Counter = Counter({bucket: 0 for bucket in ANTE_BUCKETS})
    by_pronoun: Counter = Counter()
    reference_differs = 0
    short_left = short_right = 0
    line = 0
    for number, example in enumerate(examples):

        def where(message: str, number=number) -> InputError:
            at = json_lines[number] if json_lines is not None and number < len(json_lines) else None
            return InputError(json_path, f"example {number}: {message}", at)

        _check_example(example, where)
        document_id = example["document id"]
        segment = example["segment id"]
        doc = index.find(document_id, where)
        problem = _problem(example, doc)
        if problem is not None:
            if strict:
                raise where(problem[1])
            dropped[problem[0]].append((number, problem[1]))
            continue

        mini, kept = _mini_document(number, example, doc, context, line)
        reference_differs += _no_ws(doc.tgt[segment - 1]) != _no_ws(example["ref segment"])
        short_left += kept.left < context
        short_right += kept.right < context
        result.documents.append(mini)
        result.examples.append(kept)
        line += len(mini.src)
        by_ante[ante_bucket(example["ante distance"])] += 1
        by_pronoun[example["ref pronoun"].lower()] += 1

    report = {
        "json": str(json_path),
        "context": context,
        "examples": len(examples),
        "kept": len(result.examples),
        **_dropped(dropped),
        "reference_differs": reference_differs,
        "short_left_context": short_left,
        "short_right_context": short_right,
        "lines": result.lines(),
        "by_ante_distance": dict(by_ante),
        "by_ref_pronoun": dict(sorted(by_pronoun.items())),
    }
    return result, report


def _mini_document(number: int, example: dict, doc: Document, context: int, line: int) -> tuple[Document, Example]:
    """Example ``number``'s mini-document (its sentence with ``context`` sentences on each side, its target the
    example's ``ref segment``) and its :class:`Example`, whose sentence is line ``line`` + its left context."""
    position = example["segment id"] - 1
    start = max(0, position - context)
    end = min(len(doc), position + context + 1)
    tgt = list(doc.tgt[start:end])
    tgt[position - start] = example["ref segment"]
    docid = f"{DOCID_PREFIX}{number:05d}"
    left = position - start
    kept = Example(
        index=number, docid=docid, line=line + left, left=left, right=end - position - 1,
        document_id=example["document id"], segment_id=example["segment id"],
        ante_distance=example["ante distance"], src_pronoun=example["src pronoun"],
        ref_pronoun=example["ref pronoun"], src_segment=example["src segment"], ref_segment=example["ref segment"],
        contrastive=tuple(error["contrastive"] for error in example["errors"]),
        intrasegmental=example.get("intrasegmental"),
    )
    return Document(docid, list(doc.src[start:end]), tgt), kept


def _problem(example: dict, doc: Document | None) -> tuple[str, str] | None:
    """Why an example cannot be placed in its document (a reason of :data:`DROP_REASONS` and a message), or None."""
    segment = example["segment id"]
    if doc is None:
        return "missing_document", f"document id {example['document id']!r} is not among the documents"
    if not 1 <= segment <= len(doc):
        return "segment_out_of_range", f"segment id {segment} is outside document {doc.docid!r} (lines 1..{len(doc)})"
    if _no_ws(doc.src[segment - 1]) != _no_ws(example["src segment"]):
        return ("source_mismatch", f"line {segment} of document {doc.docid!r} is {doc.src[segment - 1]!r}, "
                                   f"expected the example's src segment {example['src segment']!r}")
    return None


def _dropped(dropped: dict[str, list[tuple[int, str]]]) -> dict:
    """The report's counts of dropped examples by reason, and the first few of each."""
    return {
        **{reason: len(dropped[reason]) for reason in DROP_REASONS},
        "dropped": {
            reason: {
                "count": len(items),
                "first_indices": [i for i, _ in items[:FIRST_N]],
                "first_messages": [message for _, message in items[:FIRST_N]],
            }
            for reason, items in dropped.items()
        },
    }


# --------------------------------------------------------------------------
# Output
# --------------------------------------------------------------------------


def output_paths(outdir: os.PathLike | str, src_lang: str, tgt_lang: str) -> dict[str, Path]:
    """The five output files, by role: src, tgt, docids, examples, report."""
    outdir = Path(outdir)
    return {
        "src": outdir / f"contrapro.{src_lang}",
        "tgt": outdir / f"contrapro.{tgt_lang}",
        "docids": outdir / "contrapro.docids",
        "examples": outdir / "contrapro.examples.jsonl",
        "report": outdir / "contrapro.report.json",
    }


def write_outputs(example_set: ExampleSet, report: dict, outdir: os.PathLike | str,
                  src_lang: str, tgt_lang: str) -> dict[str, Path]:
    """Write the mini-corpus, the examples and the report, atomically together."""
    paths = output_paths(outdir, src_lang, tgt_lang)
    write_example_corpus(example_set.documents, [e.to_json() for e in example_set.examples], report, paths)
    return paths


def load_examples(jsonl_path: os.PathLike | str) -> list[Example]:
    """Read ``contrapro.examples.jsonl`` (for scoring); errors name the file and line."""
    path = Path(jsonl_path)
    examples = []
    for number, record in json_lines(path):
        try:
            examples.append(Example.from_json(record))
        except KeyError as err:
            raise InputError(path, f"expected an example record, found no field {err.args[0]!r}", number) from None
        except TypeError as err:
            raise InputError(path, f"expected an example record: {err}", number) from None
    return examples


def summary(report: dict) -> str:
    """A few lines for the log: totals, drops with their first indices, buckets."""
    lines = [
        f"{report['json']}: {report['examples']} examples, {report['kept']} kept "
        f"(context {report['context']} sentences each side; {report['lines']} lines)",
    ]
    for reason in DROP_REASONS:
        info = report["dropped"][reason]
        text = f"  {reason.replace('_', ' ')}: {info['count']}"
        if info["count"]:
            more = ", ..." if info["count"] > len(info["first_indices"]) else ""
            text += f" (examples {', '.join(map(str, info['first_indices']))}{more})"
            text += f"; first: {info['first_messages'][0]}"
        lines.append(text)
    lines.append(f"  shorter context: {report['short_left_context']} left, {report['short_right_context']} right")
    if report["reference_differs"]:
        lines.append(f"  ref segment differs from the document's target line: {report['reference_differs']}")
    lines.append("  ante distance: " + ", ".join(f"{k}: {v}" for k, v in report["by_ante_distance"].items()))
    lines.append("  ref pronoun: " + ", ".join(f"{k}: {v}" for k, v in report["by_ref_pronoun"].items()))
    return "\n".join(lines)


# --------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------


@cli_errors
def main(argv=None) -> int:
    parser = argument_parser("docnmt.corpora.contrapro", __doc__.split("\n\n")[0])
    parser.add_argument("--json", required=True, type=Path, help="ContraPro's contrapro.json")
    parser.add_argument("--src", required=True, type=Path, help="source side of the documents (common format)")
    parser.add_argument("--tgt", required=True, type=Path, help="target side of the documents")
    parser.add_argument("--docids", required=True, type=Path, help="document ids of the documents")
    parser.add_argument("--context", required=True, type=NONNEGATIVE_INT, help="sentences of context on each side (k-1)")
    parser.add_argument("--out", required=True, type=Path, help="output folder")
    parser.add_argument("--src-lang", required=True, help="source language code (file extension), e.g. en")
    parser.add_argument("--tgt-lang", required=True, help="target language code (file extension), e.g. de")
    parser.add_argument("--strict", action="store_true",
                        help="an example that cannot be kept (missing document, segment id outside its "
                             "document, source mismatch) is an error instead of being counted")
    args = parser.parse_args(argv)
    if args.context < 0:
        parser.error(f"--context must be at least 0, got {args.context}")
    for name in ("src_lang", "tgt_lang"):
        value = getattr(args, name)
        if not value or not value.isalnum():
            parser.error(f"--{name.replace('_', '-')} must be a language code like 'en', got {value!r}")
    if args.src_lang == args.tgt_lang:
        parser.error("--src-lang and --tgt-lang must differ")
    examples, json_lines = load_contrapro(args.json)
    documents = read_split(args.src, args.tgt, args.docids)
    example_set, report = extract(
        examples, documents, args.context, strict=args.strict,
        json_path=args.json, json_lines=json_lines, tgt_lang=args.tgt_lang,
    )
    if examples and not example_set.examples:
        counts = ", ".join(f"{report[r]} {r.replace('_', ' ')}" for r in DROP_REASONS)
        first = next(report["dropped"][r] for r in DROP_REASONS if report[r])
        raise InputError(
            args.json,
            f"expected examples whose documents are in {args.docids}, found none of {len(examples)} usable "
            f"({counts}); first: example {first['first_indices'][0]}: {first['first_messages'][0]}",
        )
    paths = write_outputs(example_set, report, args.out, args.src_lang, args.tgt_lang)
    print(summary(report))
    print("wrote " + ", ".join(str(p) for p in paths.values()))
    return 0


if __name__ == "__main__":
    main()

"""The common on-disk document format, and its validation.

After preparation every corpus, whatever its origin (the demo generator, a
WMT SGML file, IWSLT XML, OPUS Moses files, or a user's own data), is stored as
three line-aligned UTF-8 files per split::

    {split}.{src}     one source sentence per line
    {split}.{tgt}     its translation on the same line
    {split}.docids    the id of the document the line belongs to

The sentences of a document are consecutive and in document order; a document
id appears in one contiguous block only. Raw text never contains the
document-level separator token ``<sep>``; it is added only when windows are
built from the BPE-encoded text.

``python -m docnmt.corpora.corpus check --src F --tgt F --docids F --stats OUT.json``
validates one split and writes its statistics (sentences, documents), which
later steps (the data-statistics table) read.

``python -m docnmt.corpora.corpus copy --input F --output F`` copies one file
of a user's own corpus (already in this format) atomically: no partial file on
a full disk.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from .. import SEP
from ..textio import InputError, atomic_concat, atomic_write, cli_errors, count_lines, iter_lines, read_lines
from ..manual import argument_parser


@dataclass
class Document:
    """One document: its id and its aligned source and target sentences."""

    docid: str
    src: list[str] = field(default_factory=list)
    tgt: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.src)


def read_split(src_path, tgt_path, docids_path) -> list[Document]:
    """Read and validate one split of the common format; return its documents in order.

    Raises :class:`InputError` naming the file and line for: different line
    counts, an empty document id, a document whose lines are not contiguous,
    a document whose sentences are all empty on both sides, or raw text that
    contains ``<sep>``.
    """
    return list(iter_split(src_path, tgt_path, docids_path))


def iter_split(src_path, tgt_path, docids_path) -> Iterator[Document]:
    """:func:`read_split` one document at a time: memory holds one document (and the ids seen).

    The line counts are compared first (a pass over the bytes); then the files
    are streamed together and each document is validated as it ends.
    """
    counts = [count_lines(p) for p in (src_path, tgt_path, docids_path)]
    _check_counts(src_path, counts[0], tgt_path, counts[1])
    _check_counts(src_path, counts[0], docids_path, counts[2])
    seen: dict[str, int] = {}
    doc: Document | None = None
    lines = zip(iter_lines(docids_path), iter_lines(src_path), iter_lines(tgt_path))
    for number, (docid, s, t) in enumerate(lines, start=1):
        for path, line in ((src_path, s), (tgt_path, t)):
            if SEP in line:
                raise InputError(
                    path, f"raw text must not contain the separator token {SEP!r} (it is added when windows are built)", number
                )
        docid = docid.strip()
        if not docid:
            raise InputError(docids_path, "expected a document id, found an empty line", number)
        if doc is None or doc.docid != docid:
            if docid in seen:
                raise InputError(
                    docids_path,
                    f"document {docid!r} continues here but its block ended before "
                    f"(started at line {seen[docid]}); the lines of a document must be contiguous",
                    number,
                )
            if doc is not None:
                yield _checked(doc, docids_path, seen)
            seen[docid] = number
            doc = Document(docid)
        doc.src.append(s)
        doc.tgt.append(t)
    if doc is not None:
        yield _checked(doc, docids_path, seen)


def _checked(doc: Document, docids_path, seen: dict) -> Document:
    if not any(s.strip() or t.strip() for s, t in zip(doc.src, doc.tgt)):
        raise InputError(docids_path, f"document {doc.docid!r} is empty: all its sentences are blank", seen[doc.docid])
    return doc


def _check_counts(path_a, count_a: int, path_b, count_b: int) -> None:
    if count_a != count_b:
        line = min(count_a, count_b) + 1
        raise InputError(
            path_b,
            f"expected {count_a} lines to match {path_a}, found {count_b}; the files diverge at line {line}",
            line,
        )


def read_docids(path) -> list[str]:
    """Read a ``.docids`` file (one id per line)."""
    ids = read_lines(path)
    for number, docid in enumerate(ids, start=1):
        if not docid.strip():
            raise InputError(path, "expected a document id, found an empty line", number)
    return [d.strip() for d in ids]


def write_split(documents: list[Document], src_path, tgt_path, docids_path) -> None:
    """Write documents in the common format (all three files, atomically)."""
    write_files(documents, {"src": src_path, "tgt": tgt_path, "docids": docids_path})


def write_example_corpus(documents, records, report: dict, paths: dict) -> None:
    """An evaluation set of small documents (ContraPro's, ctxpro's): ``paths`` by role src, tgt, docids (the
    documents), examples (``records``, JSON objects, a line each) and report (JSON), written atomically together."""
    import json

    from ..textio import atomic_outputs

    with atomic_outputs([paths[r] for r in ("src", "tgt", "docids", "examples", "report")]) as (fs, ft, fd, fe, fr):
        for doc in documents:
            for s, t in zip(doc.src, doc.tgt, strict=True):
                fs.write(s + "\n")
                ft.write(t + "\n")
                fd.write(doc.docid + "\n")
        for record in records:
            fe.write(json.dumps(record, ensure_ascii=False) + "\n")
        json.dump(report, fr, ensure_ascii=False, indent=1)
        fr.write("\n")


def write_files(documents: list[Document], outputs: dict) -> None:
    """Some or all of a split's common-format files (``outputs``: role src, tgt or docids -> path), atomically."""
    from ..textio import atomic_outputs

    roles = list(outputs)
    with atomic_outputs([outputs[role] for role in roles]) as handles:
        for doc in documents:
            for s, t in zip(doc.src, doc.tgt, strict=True):
                line = {"src": s, "tgt": t, "docids": doc.docid}
                for role, handle in zip(roles, handles):
                    handle.write(line[role] + "\n")


def split_stats(documents: list[Document]) -> dict:
    """Sentences and documents of a split."""
    return {"sentences": sum(len(d) for d in documents), "documents": len(documents)}


@cli_errors
def main(argv=None) -> int:
    parser = argument_parser("docnmt.corpora.corpus", __doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    check = sub.add_parser("check", help="validate one split and write its statistics as JSON")
    check.add_argument("--src", required=True, type=Path)
    check.add_argument("--tgt", required=True, type=Path)
    check.add_argument("--docids", required=True, type=Path)
    check.add_argument("--stats", required=True, type=Path, help="output JSON: sentences, documents")
    copy = sub.add_parser("copy", help="copy one file of a prepared corpus atomically")
    copy.add_argument("--input", required=True, type=Path)
    copy.add_argument("--output", required=True, type=Path)
    args = parser.parse_args(argv)
    if args.command == "copy":
        atomic_concat([args.input], args.output)
        print(f"copied {args.input} -> {args.output}")
        return 0
    stats = {"sentences": 0, "documents": 0}
    for doc in iter_split(args.src, args.tgt, args.docids):  # streamed: memory holds one document
        stats["sentences"] += len(doc)
        stats["documents"] += 1
    with atomic_write(args.stats) as handle:
        json.dump(stats, handle, indent=1)
        handle.write("\n")
    print(f"{args.src}: {stats['sentences']} sentences in {stats['documents']} documents: valid")
    return 0


if __name__ == "__main__":
    main()

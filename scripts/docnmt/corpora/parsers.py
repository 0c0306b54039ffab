"""Parsers of the real corpora into documents of the common format.

Every parser returns ``list[Document]`` (``src`` = the English side, ``tgt`` =
the other language) and reports bad input as :class:`~docnmt.textio.InputError`
naming the file, the line and what was expected. Source and target sentence
counts agree per document everywhere; a document where they do not is an
error naming the document.

The formats, one module each (checked against the real files or the public code that reads
them; see ``tests/realformat.py`` for byte-level fixtures):

- :mod:`docnmt.corpora.news` -- NEWS training data, News Commentary v14 TSV;
- :mod:`docnmt.corpora.mteval` -- the SGML/XML of WMT (NEWS valid/test) and IWSLT (TED valid/test);
- :mod:`docnmt.corpora.iwslt_tags` -- TED training data, IWSLT17 ``train.tags``;
- :mod:`docnmt.corpora.opus` -- OS, OPUS OpenSubtitles v2018 in Moses format, and the OS split;
- :mod:`docnmt.corpora.rawtext` -- what they share: lines, entities, repeated document ids.

CLI (writes ``{split}.{src}``, ``{split}.{tgt}``, ``{split}.docids`` in
``--outdir``; nothing is written unless every input parsed)::

    python -m docnmt.corpora.parsers news --nc NC.tsv.gz --valid-src SGM --valid-ref SGM
        --test-src SGM --test-ref SGM --outdir D [--report R.json]
    python -m docnmt.corpora.parsers ted --train-src TAGS --train-tgt TAGS
        --valid-src XML [XML ...] --valid-ref XML [XML ...]
        --test-src XML --test-ref XML --src en --tgt it --outdir D
    python -m docnmt.corpora.parsers os --zip ZIP [--contrapro contrapro.json
        [--contrapro-removal segments|films] [--contrapro-context 2]] [--seed S] --outdir D

``os`` reads the zip twice (sizes first, then text) and streams the text to
the output files, so it never holds the 22.5M sentence pairs in memory. The
films that ContraPro examples come from are written whole to the split
``contrapro_docs`` (ContraPro's context is extracted from them), are never
valid or test, and leave ``train`` as the paper says: ``segments`` (the
default) removes from train exactly the lines the ContraPro test suite uses
(each example's sentence and ``--contrapro-context`` sentences on either
side), ``films`` the whole films (see :mod:`docnmt.corpora.opus`). The
report counts the removed lines, the films touched and the examples not
found.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..manual import argument_parser
from ..textio import InputError, atomic_outputs, atomic_write, cli_errors
from .corpus import Document, split_stats, write_split
from .iwslt_tags import iwslt_train_tags
from .mteval import iwslt_xml, wmt_sgml
from .news import news_commentary_tsv
from .opus import CONTRAPRO_REMOVALS, ContraProLines, choose_os_split, normalize_os_docid, opus_blocks, \
    read_contrapro_segments, split_at_removed
from ..option_ranges import POSITIVE_INT


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
    segments = read_contrapro_segments(args.contrapro) if args.contrapro else []
    contrapro = ContraProLines(segments, args.contrapro_context, args.tgt)
    contrapro_ids = list(dict.fromkeys(s.document_id for s in segments))
    sizes = [(b.docid, b.size) for b in opus_blocks(args.zip, args.src, args.tgt, with_text=False)]
    try:
        assignment, report = choose_os_split(sizes, contrapro_ids, seed=args.seed, tgt_lang=args.tgt,
                                             valid_sentences=args.valid_sentences, test_sentences=args.test_sentences,
                                             valid_docs=args.valid_docs, test_docs=args.test_docs,
                                             removal=args.contrapro_removal)
    except ValueError as err:
        raise InputError(args.zip, str(err)) from None
    films = {docid for docid, _ in sizes if normalize_os_docid(docid, args.tgt) in contrapro.keys()}
    splits = ["train", "valid", "test"] + (["contrapro_docs"] if args.contrapro else [])
    target = {"train": "train", "valid": "valid", "test": "test", "excluded": "contrapro_docs"}
    paths = [p for split in splits for p in _split_paths(args.outdir, split, args.src, args.tgt)]
    args.outdir.mkdir(parents=True, exist_ok=True)
    stream_stats: dict = {}
    # valid/test are written in the order of choice, train and contrapro_docs in corpus order.
    held = {"valid": {}, "test": {}}
    train = {"sentences": 0, "documents": 0}
    removed = {"lines": 0, "films_touched": 0, "films_split_into": 0}
    with atomic_outputs(paths) as handles:
        files = {split: handles[3 * i: 3 * i + 3] for i, split in enumerate(splits)}

        def emit(split, doc):
            fs, ft, fd = files[split]
            for s, t in zip(doc.src, doc.tgt, strict=True):
                fs.write(s + "\n")
                ft.write(t + "\n")
                fd.write(doc.docid + "\n")

        for block in opus_blocks(args.zip, args.src, args.tgt, with_text=True, stats=stream_stats):
            split = target[assignment[block.docid]]
            doc = Document(block.docid, block.src, block.tgt)
            if block.docid in films:
                emit("contrapro_docs", doc)  # whole: ContraPro's context comes from it
                used = contrapro.lines(doc.docid, doc.src)
                if args.contrapro_removal == "films":
                    removed["lines"] += len(doc)
                    removed["films_touched"] += 1
                    continue
                if used:
                    removed["lines"] += len(used)
                    removed["films_touched"] += 1
                pieces = split_at_removed(doc, used)
                removed["films_split_into"] += len(pieces) if used else 0
                for piece in pieces:
                    emit("train", piece)
                    train["sentences"] += len(piece)
                    train["documents"] += 1
            elif split in held:
                held[split][doc.docid] = doc
            elif split in files:
                emit(split, doc)
                if split == "train":
                    train["sentences"] += len(doc)
                    train["documents"] += 1
        for split in ("valid", "test"):
            for docid in report[f"{split}_docids"]:
                emit(split, held[split][docid])
    report["task"] = "os"
    report["renamed_docids"] = stream_stats.get("renamed_docids", 0)
    report["members"] = stream_stats.get("members")
    report["train"] = train
    if args.contrapro:
        report["contrapro_removed_from_train"] = {"removal": args.contrapro_removal, "context": args.contrapro_context,
                                                 **removed, **contrapro.report()}
    _write_report(args.report, report)
    _print_os(args, report)
    return 0


def _print_os(args, report: dict) -> None:
    """What the OpenSubtitles split holds, on stdout: the splits' counts and what ContraPro took from train."""
    counts = {split: report[split] for split in ("train", "valid", "test")}
    if args.contrapro:
        counts["contrapro_docs"] = report["contrapro_films"]
        cut = report["contrapro_removed_from_train"]
        not_found = sum(cut["examples_not_found"].values())
        print(f"contrapro: {report['contrapro_documents_requested']} documents named, "
              f"{report['contrapro_documents_not_in_corpus']} not found in the corpus; "
              f"{cut['examples_found']}/{cut['examples']} examples found ({not_found} not found: "
              + ", ".join(f"{r} {n}" for r, n in cut["examples_not_found"].items()) + ")")
        what = "whole films" if args.contrapro_removal == "films" else \
            f"the examples' sentences with {args.contrapro_context} of context on either side"
        print(f"removed from train ({args.contrapro_removal}: {what}): {cut['lines']} lines of "
              f"{cut['films_touched']} films")
    _print_counts(counts)


def _non_negative(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, found {value}")
    return value


@cli_errors
def main(argv=None) -> int:
    parser = argument_parser("docnmt.corpora.parsers", __doc__.split("\n\n")[0])
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
    opensubs.add_argument("--contrapro", type=Path, help="contrapro.json: the films of its examples are written "
                          "whole as split contrapro_docs, are never valid or test, and leave train as "
                          "--contrapro-removal says")
    opensubs.add_argument("--contrapro-removal", choices=CONTRAPRO_REMOVALS, default="segments",
                          help="segments (default, the paper): remove from train the lines the ContraPro test suite "
                               "uses, each example's sentence and --contrapro-context sentences on either side; "
                               "films: remove every film that holds an example")
    opensubs.add_argument("--contrapro-context", type=_non_negative, default=2,
                          help="context sentences on either side of an example that leave train with it (k-1)")
    opensubs.add_argument("--seed", default="docnmt-os-v1", help="seed of the document hash order")
    opensubs.add_argument("--valid-sentences", type=POSITIVE_INT, default=3500)
    opensubs.add_argument("--valid-docs", type=POSITIVE_INT, default=5)
    opensubs.add_argument("--test-sentences", type=POSITIVE_INT, default=3800)
    opensubs.add_argument("--test-docs", type=POSITIVE_INT, default=5)
    opensubs.add_argument("--src", default="en")
    opensubs.add_argument("--tgt", default="de")

    for command in (news, ted, opensubs):
        command.add_argument("--outdir", required=True, type=Path)
        command.add_argument("--report", type=Path, help="write a JSON report of counts and choices here")

    args = parser.parse_args(argv)
    return {"news": _run_news, "ted": _run_ted, "os": _run_os}[args.task](args)


if __name__ == "__main__":
    main()

"""Windows of k adjacent sentences within a document, joined by ``<sep>``.

The document-level model of the paper is trained on
``p(E_{n-k+1}^n | F_{n-k+1}^n)``: the n-th training example is sentence n
together with the k-1 sentences before it, concatenated with ``<sep>``.
Windows never cross a document boundary, so the first sentences of a
document get shorter windows (the first sentence stands alone). There is one
window per sentence, so the window file is line-aligned with the sentence file.

CLI::

    python -m docnmt.preprocess.windows --k 3 --docids train.docids --input train.bpe.en --output train.doc.en
"""

from __future__ import annotations

import collections
from pathlib import Path
from typing import Iterable, Sequence

from .. import SEP
from ..textio import InputError, atomic_write, cli_errors, count_lines, iter_lines
from ..manual import argument_parser
from ..option_ranges import POSITIVE_INT

JOIN = f" {SEP} "


def join(sentences: Iterable[str]) -> str:
    """Concatenate sentences with `` <sep> ``."""
    return JOIN.join(s.strip() for s in sentences)


def split(segment: str) -> list[str]:
    """Split a segment on ``<sep>`` (the inverse of :func:`join`)."""
    return [part.strip() for part in segment.split(SEP)]


def window_bounds(docids: Sequence[str], k: int) -> list[tuple[int, int]]:
    """For each line i, the half-open range [start, i+1) of its k-window.

    ``start`` is never before the first line of line i's document.
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    bounds = []
    doc_start = 0
    for i, docid in enumerate(docids):
        if i > 0 and docid != docids[i - 1]:
            doc_start = i
        bounds.append((max(doc_start, i - k + 1), i + 1))
    return bounds


def make_windows(sentences: Sequence[str], docids: Sequence[str], k: int) -> list[str]:
    """One window per sentence: the sentence and up to k-1 predecessors of its document."""
    if len(sentences) != len(docids):
        raise ValueError(f"{len(sentences)} sentences but {len(docids)} document ids")
    return [join(sentences[a:b]) for a, b in window_bounds(docids, k)]


@cli_errors
def main(argv=None) -> int:
    parser = argument_parser("docnmt.preprocess.windows", __doc__.split("\n\n")[0])
    parser.add_argument("--k", type=POSITIVE_INT, required=True, help="window size in sentences (the paper: 3)")
    parser.add_argument("--docids", required=True, type=Path)
    parser.add_argument("--input", required=True, type=Path, help="one (BPE-encoded) sentence per line")
    parser.add_argument("--output", required=True, type=Path)
    args = parser.parse_args(argv)
    if args.k < 1:
        parser.error("--k must be at least 1")
    # Streamed: memory holds the last k sentences, not the file.
    total, ids = count_lines(args.input), count_lines(args.docids)
    if total != ids:
        raise InputError(args.docids, f"expected {total} document ids to match {args.input}, found {ids}")
    documents = 0
    with atomic_write(args.output) as handle:
        recent: collections.deque = collections.deque(maxlen=args.k)
        previous = None
        for number, (line, docid) in enumerate(zip(iter_lines(args.input), iter_lines(args.docids)), start=1):
            if SEP in line:
                raise InputError(args.input, f"expected single sentences, found the separator {SEP!r}", number)
            docid = docid.strip()
            if not docid:
                raise InputError(args.docids, "expected a document id, found an empty line", number)
            if docid != previous:
                recent.clear()
                documents += 1
                previous = docid
            recent.append(line)
            handle.write(join(recent) + "\n")
    print(f"windows k={args.k}: {total} lines in {documents} documents -> {args.output}")
    return 0


if __name__ == "__main__":
    main()

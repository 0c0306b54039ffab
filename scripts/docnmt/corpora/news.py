"""NEWS (En->De) training data: News Commentary v14 as TSV.

:func:`news_commentary_tsv` -- ``news-commentary-v14.de-en.tsv.gz``: one
sentence pair per line, **German first** (``de TAB en``); documents are
separated by blank lines (a fully empty line, or one holding only a tab /
whitespace). Text is plain (no entities). Document ids ``nc-v14-00001``...
"""

from __future__ import annotations

import os

from ..textio import InputError
from .corpus import Document, split_stats
from .rawtext import fill_report, iter_file_lines


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
    fill_report(report, one_side_empty=one_side_empty, **split_stats(documents))
    return documents

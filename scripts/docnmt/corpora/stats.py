"""The data-statistics table (Table 5 of the paper): sentences and documents per split.

Each input is ``TASK:SPLIT:STATS_JSON``, where STATS_JSON is what
``python -m docnmt.corpora.corpus check`` writes (``{"sentences": N, "documents": M}``)
or, for ContraPro, the report of ``python -m docnmt.corpora.contrapro``
(``contrapro.report.json``), whose ``kept`` examples count as sentences and
as documents (each example is its own document, as the paper counts 12k/12k).

Rows are in the paper's order: tasks as given, and within a task the splits
train, valid, test, ContraPro (other split names follow in the order given).
The Markdown shows each count in the paper's human-readable style with the
exact count beside it (``330k (330,000)``); the CSV holds exact integers.

CLI::

    python -m docnmt.corpora.stats --input NEWS:train:data/news/corpus/train.stats.json ...
        --markdown results/stats.md --csv results/stats.csv
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Sequence

from ..textio import InputError, atomic_outputs, cli_errors
from ..manual import argument_parser

#: Split names in table order, with the label the table shows.
SPLIT_ORDER = ("train", "valid", "test", "contrapro")
SPLIT_LABELS = {"train": "train", "valid": "valid", "test": "test", "contrapro": "ContraPro"}
#: Units of the human-readable style.
UNITS = ((10**3, "k"), (10**6, "M"), (10**9, "B"))


@dataclass(frozen=True)
class Row:
    """One table row: task, split label, exact counts."""

    task: str
    dataset: str
    sentences: int
    documents: int


def human(n: int) -> str:
    """A count in the paper's style: 81, 2.2k, 330k, 22.5M.

    Below 1000 the number itself; otherwise in k, M or B with one decimal
    below 100 units (trailing ``.0`` dropped: 3k, 12k) and none from 100 on,
    rounded half up (1138 -> 1.1k, 29 900 -> 29.9k).
    """
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise ValueError(f"expected a non-negative integer, got {n!r}")
    if n < 1000:
        return str(n)
    for number, (scale, unit) in enumerate(UNITS):
        value = Decimal(n) / Decimal(scale)
        if value >= 100:
            text = str(value.quantize(Decimal("1"), rounding=ROUND_HALF_UP))
        else:
            text = str(value.quantize(Decimal("0.1"), rounding=ROUND_HALF_UP))
            if text.endswith(".0"):
                text = text[:-2]
        if Decimal(text) < 1000 or number == len(UNITS) - 1:
            return text + unit
    raise AssertionError("unreachable")  # pragma: no cover


def read_stats(path: os.PathLike | str) -> tuple[int, int]:
    """(sentences, documents) from a corpus stats JSON or a ContraPro report JSON."""
    path = Path(path)
    if not path.exists():
        raise InputError(path, "file not found")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as err:
        raise InputError(path, f"expected UTF-8 JSON, found an invalid byte ({err.reason})") from None
    except json.JSONDecodeError as err:
        raise InputError(path, f"expected a stats JSON object, found a syntax error: {err.msg}", err.lineno) from None
    if not isinstance(data, dict):
        kind = type(data).__name__
        raise InputError(path, f"expected a JSON object with 'sentences' and 'documents', found a JSON {kind}")
    if "kept" in data:  # a ContraPro report: one document per kept example
        kept = data["kept"]
        _check_count(path, "kept", kept)
        return kept, kept
    for key in ("sentences", "documents"):
        if key not in data:
            raise InputError(path, f"expected a field {key!r} (the output of 'python -m docnmt.corpora.corpus check'), found "
                                   f"fields {sorted(data)}")
        _check_count(path, key, data[key])
    return data["sentences"], data["documents"]


def _check_count(path, key, value) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise InputError(path, f"field {key!r}: expected a non-negative integer, found {value!r}")


def parse_input(spec: str) -> tuple[str, str, Path]:
    """``TASK:SPLIT:PATH`` -> (task, split, path); the path may contain ':'."""
    parts = spec.split(":", 2)
    if len(parts) != 3 or not all(parts):
        raise ValueError(f"expected TASK:SPLIT:STATS_JSON, found {spec!r}")
    task, split, path = parts
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", split):
        raise ValueError(f"expected a split name such as train, valid, test or contrapro, found {split!r} in {spec!r}")
    return task, split, Path(path)


def _split_key(split: str) -> str:
    return split.lower()


def build_rows(inputs: Sequence[tuple[str, str, os.PathLike | str]]) -> list[Row]:
    """Read every stats file; rows ordered by task (as given), then train/valid/test/ContraPro."""
    seen = set()
    tasks: list[str] = []
    by_task: dict[str, list[tuple[str, Path]]] = {}
    for task, split, path in inputs:
        key = (task, _split_key(split))
        if key in seen:
            raise ValueError(f"{task}:{split} is given twice")
        seen.add(key)
        if task not in by_task:
            tasks.append(task)
            by_task[task] = []
        by_task[task].append((split, Path(path)))
    rows = []
    for task in tasks:
        entries = by_task[task]
        known = [e for s in SPLIT_ORDER for e in entries if _split_key(e[0]) == s]
        others = [e for e in entries if _split_key(e[0]) not in SPLIT_ORDER]
        for split, path in known + others:
            sentences, documents = read_stats(path)
            rows.append(Row(task, SPLIT_LABELS.get(_split_key(split), split), sentences, documents))
    return rows


#: The paper's number and caption.
TITLE = "Table 5: data statistics for the different document-level translation tasks"


def to_markdown(rows: Sequence[Row]) -> str:
    """The table as Markdown: human-readable counts with the exact ones beside them."""
    lines = [
        f"**{TITLE}**",
        "",
        "Counts as the paper rounds them (Herold & Ney, 2023), the exact ones in parentheses.",
        "",
        "| task | dataset | # sent. | # doc. |",
        "|:-----|:--------|--------:|-------:|",
    ]
    previous = None
    for row in rows:
        task = row.task if row.task != previous else ""
        previous = row.task
        lines.append(
            f"| {task} | {row.dataset} | {human(row.sentences)} ({row.sentences:,}) "
            f"| {human(row.documents)} ({row.documents:,}) |"
        )
    return "\n".join(lines) + "\n"


def to_csv(rows: Sequence[Row]) -> str:
    """The table as CSV with exact integers: task,dataset,sentences,documents."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["task", "dataset", "sentences", "documents"])
    for row in rows:
        writer.writerow([row.task, row.dataset, row.sentences, row.documents])
    return buffer.getvalue()


def to_latex(rows: Sequence[Row]) -> str:
    """The table as LaTeX (booktabs), in the paper's style of counts."""
    from ..tablefmt import Table

    body, previous = [], None
    for row in rows:
        body.append([row.task if row.task != previous else "", row.dataset, human(row.sentences), human(row.documents)])
        previous = row.task
    return Table("data_statistics", TITLE,
                 ["task", "dataset", "# sent.", "# doc."], body).latex()


@cli_errors
def main(argv=None) -> int:
    parser = argument_parser("docnmt.corpora.stats", __doc__.split("\n\n")[0])
    parser.add_argument("--input", required=True, nargs="+", metavar="TASK:SPLIT:STATS_JSON",
                        help="a split's stats JSON (corpus check) or a ContraPro report JSON")
    parser.add_argument("--markdown", required=True, type=Path, help="output Markdown table")
    parser.add_argument("--csv", required=True, type=Path, help="output CSV table (exact integers)")
    parser.add_argument("--latex", type=Path, help="output LaTeX table")
    args = parser.parse_args(argv)
    try:
        inputs = [parse_input(spec) for spec in args.input]
        rows = build_rows(inputs)
    except ValueError as err:
        parser.error(str(err))
    outputs = [args.markdown, args.csv] + ([args.latex] if args.latex else [])
    with atomic_outputs(outputs) as handles:
        handles[0].write(to_markdown(rows))
        handles[1].write(to_csv(rows))
        if args.latex:
            handles[2].write(to_latex(rows))
    print(to_markdown(rows), end="")
    print(f"wrote {args.markdown}, {args.csv}")
    return 0


if __name__ == "__main__":
    main()

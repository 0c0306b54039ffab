"""Learning curves: fairseq's training log as a CSV, and the CSV as a plot.

fairseq (``--log-format simple``) logs three kinds of lines that matter here::

    ... | INFO | train_inner | epoch 003:     50 / 18 loss=7.1, nll_loss=6.8, ppl=111.2, ..., num_updates=50, lr=0.0005, ...
    ... | INFO | train | epoch 003 | loss 8.031 | nll_loss 7.771 | ppl 218.36 | ... | num_updates 54 | lr 0.00054 | ... | wall 40
    ... | INFO | valid | epoch 003 | valid on 'valid' subset | loss 7.76 | nll_loss 7.452 | ppl 175.12 | ... | num_updates 54

One CSV row per such line: ``kind`` (train_inner, train, valid), ``epoch``,
``num_updates``, ``loss``, ``nll_loss``, ``ppl``, ``lr``, ``wall``, and
``best_checkpoint``: ``1`` on the validation whose checkpoint was published
(chosen by validation perplexity, see :mod:`docnmt.train.cli`), else empty. A log
that spans resumed runs repeats update counts; the last line logged for a
(kind, num_updates) wins, so the curve follows the run that produced the
checkpoints.

CLI::

    python -m docnmt.train.curves csv  --log fairseq.log --output curve.csv
    python -m docnmt.train.curves plot --csv sentence.csv document.csv --label sentence document --output curve.png
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

from ..textio import InputError, atomic_write, cli_errors
from ..manual import argument_parser
from ..option_ranges import NONNEGATIVE_INT

FIELDS = ["kind", "epoch", "num_updates", "loss", "nll_loss", "ppl", "lr", "wall", "best_checkpoint"]
#: The columns read from fairseq's log lines (``best_checkpoint`` comes from the checkpoint).
LOG_FIELDS = FIELDS[:-1]
_EPOCH_LINE = re.compile(r"\| (train|valid) \| epoch (\d+) \| (.*)$")
_INNER_LINE = re.compile(r"\| train_inner \| epoch (\d+):\s+\d+ / \d+ (.*)$")


def _number(text: str):
    try:
        return float(text)
    except ValueError:
        return None


def parse_line(line: str) -> dict | None:
    """One CSV row from one fairseq log line, or None for other lines."""
    match = _EPOCH_LINE.search(line)
    if match:
        kind, epoch, rest = match.groups()
        values = {}
        for part in rest.split(" | "):
            key, _, value = part.strip().partition(" ")
            values[key] = value
    else:
        match = _INNER_LINE.search(line)
        if not match:
            return None
        kind, epoch, rest = "train_inner", match.group(1), match.group(2)
        values = dict(part.strip().split("=", 1) for part in rest.split(",") if "=" in part)
    row = {"kind": kind, "epoch": int(epoch)}
    for key in LOG_FIELDS[2:]:
        value = _number(values.get(key, ""))
        row[key] = int(value) if key == "num_updates" and value is not None else value
    if row["num_updates"] is None or row["loss"] is None:
        return None
    return row


def parse_log(path: Path) -> list[dict]:
    if not Path(path).exists():
        raise InputError(path, "training log not found")
    rows: dict[tuple[str, int], dict] = {}
    with open(path, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            row = parse_line(line.rstrip("\n"))
            if row:
                rows[(row["kind"], row["num_updates"])] = row
    if not rows:
        raise InputError(path, "expected fairseq training log lines (train/valid with loss and num_updates), found none")
    order = {"train_inner": 0, "train": 1, "valid": 2}
    return sorted(rows.values(), key=lambda r: (r["num_updates"], order[r["kind"]]))


def write_csv(rows: list[dict], output: Path, best_updates: int | None = None) -> None:
    """The curve as CSV; ``best_updates``: the update of the published checkpoint, marked on its validation row."""
    if best_updates is not None and not any(r["kind"] == "valid" and r["num_updates"] == best_updates for r in rows):
        raise InputError(output, f"expected a validation at update {best_updates} (the best checkpoint's) in the "
                                 "training log, found none")
    with atomic_write(output) as handle:
        writer = csv.DictWriter(handle, fieldnames=FIELDS, lineterminator="\n")
        writer.writeheader()
        for row in rows:
            best = 1 if row["kind"] == "valid" and row["num_updates"] == best_updates else None
            values = {**row, "best_checkpoint": best}
            writer.writerow({k: ("" if values.get(k) is None else values[k]) for k in FIELDS})


def read_csv(path: Path) -> list[dict]:
    if not Path(path).exists():
        raise InputError(path, "learning-curve CSV not found")
    with open(path, encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        if reader.fieldnames != FIELDS:
            raise InputError(path, f"expected the columns {','.join(FIELDS)}, found {reader.fieldnames}", 1)
        return [
            {k: (v if k == "kind" else (float(v) if v else None)) for k, v in row.items()} for row in reader
        ]


def new_figure(width: float = 6.4, height: float = 4.0, ncols: int = 1):
    """pyplot (headless backend) and a new figure with one axes: ``plt, fig, ax`` (``ncols`` > 1: a row of axes)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt, *plt.subplots(figsize=(width, height), ncols=ncols)


def save_figure(plt, fig, output: Path) -> None:
    """Lay out, write atomically in the format of ``output``'s suffix (PNG by default), close."""
    fig.tight_layout()
    with atomic_write(output, mode="wb", encoding=None) as handle:
        fig.savefig(handle, format=output.suffix.lstrip(".") or "png", dpi=120)
    plt.close(fig)


def plot(curves: list[tuple[str, list[dict]]], output: Path, title: str) -> None:
    """Training and validation perplexity against updates, one colour per curve."""
    plt, fig, ax = new_figure()
    for index, (label, rows) in enumerate(curves):
        colour = f"C{index}"
        for kind, style in (("train", "--"), ("valid", "-")):
            points = [(r["num_updates"], r["ppl"]) for r in rows if r["kind"] == kind and r["ppl"]]
            if points:
                xs, ys = zip(*points)
                ax.plot(xs, ys, style, color=colour, marker="o" if kind == "valid" else None, markersize=3,
                        label=f"{label} {kind}")
        best = [(r["num_updates"], r["ppl"]) for r in rows if r["kind"] == "valid" and r.get("best_checkpoint")]
        if best:
            ax.plot(*best[0], marker="*", markersize=12, color=colour, linestyle="none",
                    label=f"{label} best checkpoint (lowest validation perplexity)")
    ax.set_yscale("log")
    ax.set_xlabel("updates")
    ax.set_ylabel("perplexity (log scale)")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    save_figure(plt, fig, output)


@cli_errors
def main(argv=None) -> int:
    parser = argument_parser("docnmt.train.curves", __doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p_csv = sub.add_parser("csv", help="fairseq log -> CSV")
    p_csv.add_argument("--log", required=True, type=Path)
    p_csv.add_argument("--output", required=True, type=Path)
    p_csv.add_argument("--best-updates", type=NONNEGATIVE_INT, help="mark the validation at this update as the best checkpoint's")
    p_plot = sub.add_parser("plot", help="CSV(s) -> PNG/SVG")
    p_plot.add_argument("--csv", nargs="+", required=True, type=Path)
    p_plot.add_argument("--label", nargs="+", required=True)
    p_plot.add_argument("--title", default="learning curves")
    p_plot.add_argument("--output", required=True, type=Path)
    args = parser.parse_args(argv)
    if args.command == "csv":
        rows = parse_log(args.log)
        write_csv(rows, args.output, best_updates=args.best_updates)
        print(f"{len(rows)} rows -> {args.output}")
    else:
        if len(args.csv) != len(args.label):
            parser.error("give one --label per --csv")
        plot([(label, read_csv(path)) for label, path in zip(args.label, args.csv)], args.output, args.title)
        print(f"plot -> {args.output}")
    return 0


if __name__ == "__main__":
    main()

"""Split a line file into contiguous shards, and gather shards back.

Used by the Snakemake scatter/gather of the tokenization and BPE steps, so
that a corpus like OpenSubtitles (22.5M lines) spreads over cores or nodes.
Shards are contiguous and balanced (sizes differ by at most one line), and
gathering them in order restores the input byte for byte.

CLI::

    python -m docnmt.preprocess.shards split  --input F --outputs F.1 F.2 ...
    python -m docnmt.preprocess.shards gather --inputs F.1 F.2 ... --output F
"""

from __future__ import annotations

from pathlib import Path

from ..textio import InputError, atomic_concat, atomic_outputs, cli_errors
from ..manual import argument_parser


def shard_sizes(total: int, n: int) -> list[int]:
    """Balanced contiguous shard sizes."""
    base, extra = divmod(total, n)
    return [base + (1 if i < extra else 0) for i in range(n)]


def split(inp: Path, outputs: list[Path]) -> list[int]:
    if not inp.exists():
        raise InputError(inp, "file not found")
    with open(inp, "rb") as handle:
        total = sum(1 for _ in handle)
    sizes = shard_sizes(total, len(outputs))
    with open(inp, "rb") as src, atomic_outputs(outputs, mode="wb") as handles:
        for size, dst in zip(sizes, handles):
            for _ in range(size):
                line = src.readline()
                dst.write(line if line.endswith(b"\n") else line + b"\n")
    return sizes


def gather(inputs: list[Path], out: Path) -> None:
    atomic_concat(inputs, out, missing="shard not found")


@cli_errors
def main(argv=None) -> int:
    parser = argument_parser("docnmt.preprocess.shards", __doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p_split = sub.add_parser("split")
    p_split.add_argument("--input", required=True, type=Path)
    p_split.add_argument("--outputs", nargs="+", required=True, type=Path)
    p_gather = sub.add_parser("gather")
    p_gather.add_argument("--inputs", nargs="+", required=True, type=Path)
    p_gather.add_argument("--output", required=True, type=Path)
    args = parser.parse_args(argv)
    if args.command == "split":
        sizes = split(args.input, args.outputs)
        print(f"split {args.input}: {sum(sizes)} lines into {len(sizes)} shards {sizes}")
    else:
        gather(args.inputs, args.output)
        print(f"gathered {len(args.inputs)} shards -> {args.output}")
    return 0


if __name__ == "__main__":
    main()

"""Joint BPE with subword-nmt, learned on the training data only.

``<sep>`` (and any other glossary token) is never split: it is passed to
subword-nmt as a glossary, so windowed text can be encoded too.

CLI::

    python -m docnmt.bpe learn --merges 15000 --input train.tok.en train.tok.de --codes codes
    python -m docnmt.bpe apply --codes codes --input x.tok --output x.bpe
"""

from __future__ import annotations

import argparse
import codecs
import io
from pathlib import Path

from . import SEP
from .textio import InputError, atomic_write, cli_errors

#: Tokens that BPE must leave whole.
GLOSSARIES = [SEP]


def learn(inputs: list[Path], codes: Path, merges: int, min_frequency: int = 2) -> None:
    """Learn ``merges`` joint merge operations on the concatenation of ``inputs``."""
    from subword_nmt.learn_bpe import learn_bpe

    for path in inputs:
        if not Path(path).exists():
            raise InputError(path, "file not found")
        if Path(path).stat().st_size == 0:
            raise InputError(path, "expected tokenized training text to learn BPE on, found an empty file")
    joined = io.StringIO()
    for path in inputs:
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                joined.write(line)
    joined.seek(0)
    with atomic_write(codes) as out:
        learn_bpe(joined, out, merges, min_frequency=min_frequency, is_dict=False, total_symbols=False)


def load(codes: Path):
    """Load a subword-nmt BPE object that keeps the glossary tokens whole."""
    from subword_nmt.apply_bpe import BPE

    if not Path(codes).exists():
        raise InputError(codes, "BPE codes file not found")
    with codecs.open(str(codes), encoding="utf-8") as handle:
        try:
            return BPE(handle, glossaries=GLOSSARIES)
        except (ValueError, IndexError) as err:
            raise InputError(codes, f"expected subword-nmt BPE codes, could not parse them ({err})") from None


def apply(bpe, line: str) -> str:
    """Encode one tokenized line."""
    return bpe.process_line(line).rstrip("\n") if line.strip() else ""


def apply_file(codes: Path, inp: Path, out: Path) -> int:
    bpe = load(codes)
    if not Path(inp).exists():
        raise InputError(inp, "file not found")
    count = 0
    with open(inp, encoding="utf-8", newline="\n") as src, atomic_write(out) as dst:
        for line in src:
            dst.write(apply(bpe, line.rstrip("\n")) + "\n")
            count += 1
    return count


def remove_bpe(line: str) -> str:
    """Undo BPE (subword-nmt's ``@@ `` continuation marks)."""
    return (line + " ").replace("@@ ", "").rstrip()


@cli_errors
def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m docnmt.bpe", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p_learn = sub.add_parser("learn", help="learn joint BPE codes")
    p_learn.add_argument("--merges", type=int, required=True, help="number of merge operations")
    p_learn.add_argument("--min-frequency", type=int, default=2)
    p_learn.add_argument("--input", nargs="+", required=True, type=Path, help="tokenized training files (all languages)")
    p_learn.add_argument("--codes", required=True, type=Path)
    p_apply = sub.add_parser("apply", help="apply BPE codes to a tokenized file")
    p_apply.add_argument("--codes", required=True, type=Path)
    p_apply.add_argument("--input", required=True, type=Path)
    p_apply.add_argument("--output", required=True, type=Path)
    args = parser.parse_args(argv)
    if args.command == "learn":
        if args.merges < 1:
            parser.error("--merges must be positive")
        learn(args.input, args.codes, args.merges, args.min_frequency)
        print(f"learned {args.merges} merges on {len(args.input)} files -> {args.codes}")
    else:
        count = apply_file(args.codes, args.input, args.output)
        print(f"bpe: {count} lines {args.input} -> {args.output}")
    return 0


if __name__ == "__main__":
    main()

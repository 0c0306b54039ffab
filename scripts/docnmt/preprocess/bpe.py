"""Joint BPE with subword-nmt, learned on the training data only.

``<sep>`` (and any other glossary token) is never split: it is passed to
subword-nmt as a glossary, so windowed text can be encoded too.

CLI::

    python -m docnmt.preprocess.bpe learn --merges 15000 --input train.tok.en train.tok.de --codes codes
    python -m docnmt.preprocess.bpe apply --codes codes --input x.tok --output x.bpe
"""

from __future__ import annotations

import codecs
import itertools
from contextlib import ExitStack
from pathlib import Path

from .. import SEP
from ..textio import InputError, atomic_write, cli_errors, count_lines
from ..manual import argument_parser
from ..option_ranges import NONNEGATIVE_INT, POSITIVE_INT

#: Tokens that BPE must leave whole.
GLOSSARIES = [SEP]


def sample_mask(total: int, sample: int | None):
    """For each of ``total`` lines, whether it is in an evenly spread sample of ``sample`` lines."""
    if sample is None or sample >= total:
        return itertools.repeat(True, total)
    return ((i * sample) // total != ((i + 1) * sample) // total for i in range(total))


def learn(inputs: list[Path], codes: Path, merges: int, min_frequency: int = 2,
          sample_lines: int | None = None) -> int:
    """Learn ``merges`` joint merge operations on the concatenation of ``inputs``; return the lines used.

    The files are streamed line by line into subword-nmt's vocabulary count,
    so memory grows with the vocabulary, not with the corpus. With
    ``sample_lines``, only that many lines, evenly spread over the
    concatenation (every n-th line), are used.
    """
    from subword_nmt.learn_bpe import learn_bpe

    for path in inputs:
        if not Path(path).exists():
            raise InputError(path, "file not found")
        if Path(path).stat().st_size == 0:
            raise InputError(path, "expected tokenized training text to learn BPE on, found an empty file")
    total = sum(count_lines(path) for path in inputs)
    with ExitStack() as stack:
        handles = [stack.enter_context(open(path, encoding="utf-8")) for path in inputs]
        lines = itertools.compress(itertools.chain.from_iterable(handles), sample_mask(total, sample_lines))
        with atomic_write(codes) as out:
            learn_bpe(lines, out, merges, min_frequency=min_frequency, is_dict=False, total_symbols=False)
    return min(total, sample_lines or total)


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


def _encode_word(bpe, word: str) -> str:
    """One word's encoding with ``@@`` marks, equal to ``" ".join(bpe.segment_tokens([word]))``.

    subword-nmt's merge loop (codes version 0.2, no vocabulary filter, no
    dropout) without its per-step list of (rank, position, pair) tuples:
    find the adjacent pair of lowest rank, merge all its non-overlapping
    occurrences from the left, repeat.
    """
    if bpe.version != (0, 2) or bpe.vocab or any(g in word for g in bpe.glossaries) or len(word) == 1:
        return " ".join(bpe.segment_tokens([word]))
    ranks = bpe.bpe_codes
    symbols = list(word[:-1])
    symbols.append(word[-1] + "</w>")
    while len(symbols) > 1:
        best, best_rank = None, None
        for pair in zip(symbols, symbols[1:]):
            rank = ranks.get(pair)
            if rank is not None and (best_rank is None or rank < best_rank):
                best, best_rank = pair, rank
        if best is None:
            break
        first, second = best
        merged, out, i, n = first + second, [], 0, len(symbols)
        while i < n:
            if i + 1 < n and symbols[i] == first and symbols[i + 1] == second:
                out.append(merged)
                i += 2
            else:
                out.append(symbols[i])
                i += 1
        symbols = out
    if symbols[-1] == "</w>":
        symbols.pop()
    elif symbols[-1].endswith("</w>"):
        symbols[-1] = symbols[-1][:-4]
    return (bpe.separator + " ").join(symbols)


def apply(bpe, line: str) -> str:
    """Encode one tokenized line (exactly subword-nmt's ``BPE.process_line``).

    Words are encoded independently, so each distinct word's encoding is
    cached on the model (``bpe.word_cache``) and a line costs a dictionary
    lookup per word. Lines with leading, trailing or repeated spaces take
    subword-nmt's own path.
    """
    if not line.strip():
        return ""
    words = line.split(" ")
    if not all(words) or line[0] in "\r\n" or line[-1] in "\r\n":
        return bpe.process_line(line).rstrip("\n")
    cache = bpe.__dict__.setdefault("word_cache", {})
    out = []
    for word in words:
        encoded = cache.get(word)
        if encoded is None:
            encoded = cache[word] = _encode_word(bpe, word)
        out.append(encoded)
    return " ".join(out)


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
    parser = argument_parser("docnmt.preprocess.bpe", __doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p_learn = sub.add_parser("learn", help="learn joint BPE codes")
    p_learn.add_argument("--merges", type=POSITIVE_INT, required=True, help="number of merge operations")
    p_learn.add_argument("--min-frequency", type=POSITIVE_INT, default=2)
    p_learn.add_argument("--sample-lines", type=NONNEGATIVE_INT, default=0,
                         help="learn on this many lines, evenly spread over the inputs (0, the default: all lines)")
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
        if args.sample_lines < 0:
            parser.error("--sample-lines must be 0 (all lines) or positive")
        used = learn(args.input, args.codes, args.merges, args.min_frequency, args.sample_lines or None)
        learned = sum(1 for line in open(args.codes, encoding="utf-8") if not line.startswith("#version"))
        print(f"learned {learned} merges (of {args.merges} asked; fewer when no pair occurs {args.min_frequency} "
              f"times any more) on {len(args.input)} files -> {args.codes}")
    else:
        count = apply_file(args.codes, args.input, args.output)
        print(f"bpe: {count} lines {args.input} -> {args.output}")
    return 0


if __name__ == "__main__":
    main()

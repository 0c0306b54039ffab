"""The joined fairseq dictionary shared by the sentence- and document-level systems.

Both models must score the same text (perplexity, contrastive scoring, 2-pass
decoding feeds one model's output to the other), so both are binarized with
one dictionary over source and target BPE tokens of the training data, plus
``<sep>``. The file is in fairseq's ``token count`` format, most frequent
first (ties alphabetical, so the file is deterministic); fairseq adds its
special symbols (``<s> <pad> </s> <unk>``) itself when loading.

CLI::

    python -m docnmt.preprocess.dictionary --input train.bpe.en train.bpe.de --output dict.txt
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from .. import SEP
from ..textio import InputError, atomic_write, cli_errors
from ..manual import argument_parser

#: Symbols fairseq's Dictionary defines itself; they must not appear as data tokens.
FAIRSEQ_SPECIALS = ("<s>", "<pad>", "</s>", "<unk>")


def count_tokens(paths: list[Path]) -> tuple[Counter, int]:
    counts: Counter = Counter()
    lines = 0
    for path in paths:
        if not Path(path).exists():
            raise InputError(path, "file not found")
        with open(path, encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                tokens = line.split()
                for special in FAIRSEQ_SPECIALS:
                    if special in tokens:
                        raise InputError(path, f"expected BPE text, found fairseq's reserved symbol {special!r}", number)
                counts.update(tokens)
                lines += 1
    return counts, lines


def build(paths: list[Path]) -> list[tuple[str, int]]:
    """Entries (token, count) sorted by count then token; ``<sep>`` always included."""
    counts, lines = count_tokens(paths)
    if not counts:
        raise InputError(paths[0], "expected training text to build the dictionary from, found no tokens")
    counts[SEP] = max(counts.get(SEP, 0), lines)
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))


@cli_errors
def main(argv=None) -> int:
    parser = argument_parser("docnmt.preprocess.dictionary", __doc__.split("\n\n")[0])
    parser.add_argument("--input", nargs="+", required=True, type=Path, help="BPE training text, all languages")
    parser.add_argument("--output", required=True, type=Path)
    args = parser.parse_args(argv)
    entries = build(args.input)
    with atomic_write(args.output) as handle:
        for token, count in entries:
            handle.write(f"{token} {count}\n")
    print(f"joined dictionary: {len(entries)} types -> {args.output}")
    return 0


if __name__ == "__main__":
    main()

"""Moses punctuation normalization, tokenization and detokenization (sacremoses).

The settings follow the fairseq/WMT recipes: ``normalize-punctuation.perl``
then ``tokenizer.perl -a`` (aggressive hyphen splitting, ``@-@``) with XML
escaping off, so that the text the models see contains no ``&amp;`` entities
and detokenization restores the normalized raw text.

CLI::

    python -m docnmt.tokenize tok   --lang en --input raw.txt --output tok.txt
    python -m docnmt.tokenize detok --lang de --input hyp.tok --output hyp.txt

Both work line by line; the line count is preserved (checked).
"""

from __future__ import annotations

import argparse
from functools import lru_cache
from pathlib import Path

from .textio import InputError, atomic_write, cli_errors


@lru_cache(maxsize=None)
def _tools(lang: str):
    from sacremoses import MosesDetokenizer, MosesPunctNormalizer, MosesTokenizer

    return MosesPunctNormalizer(lang=lang), MosesTokenizer(lang=lang), MosesDetokenizer(lang=lang)


def tokenize(line: str, lang: str) -> str:
    """Normalize punctuation and tokenize one line."""
    normalizer, tokenizer, _ = _tools(lang)
    line = normalizer.normalize(line)
    return tokenizer.tokenize(line, aggressive_dash_splits=True, escape=False, return_str=True)


def detokenize(line: str, lang: str) -> str:
    """Undo :func:`tokenize` (up to punctuation normalization)."""
    _, _, detokenizer = _tools(lang)
    return detokenizer.detokenize(line.split(), unescape=False)


def _process(func, lang: str, inp: Path, out: Path) -> int:
    if not inp.exists():
        raise InputError(inp, "file not found")
    count = 0
    with open(inp, encoding="utf-8", newline="\n") as src, atomic_write(out) as dst:
        for number, line in enumerate(src, start=1):
            line = line.rstrip("\n").rstrip("\r")
            if "\n" in line or "\r" in line:
                raise InputError(inp, "expected one sentence per line, found a carriage return inside a line", number)
            result = func(line, lang) if line.strip() else ""
            dst.write(result + "\n")
            count += 1
    return count


@cli_errors
def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m docnmt.tokenize", description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=["tok", "detok"], help="tokenize (with normalization) or detokenize")
    parser.add_argument("--lang", required=True, help="language code for the Moses rules, e.g. en, de, it")
    parser.add_argument("--input", required=True, type=Path)
    parser.add_argument("--output", required=True, type=Path)
    args = parser.parse_args(argv)
    func = tokenize if args.mode == "tok" else detokenize
    count = _process(func, args.lang, args.input, args.output)
    print(f"{args.mode} {args.lang}: {count} lines {args.input} -> {args.output}")
    return 0


if __name__ == "__main__":
    main()

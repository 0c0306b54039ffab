"""Raw sentences to a model's BPE input in one step, and back: the text pipeline of models trained elsewhere.

The workflow's own tasks tokenize and segment in sharded steps (``tokenize``,
``apply_bpe``); a task whose models come from elsewhere, and
:mod:`docnmt.decode.translate`, take the same two steps through
:class:`TextPipeline`, with the model's own settings: Moses normalization and
tokenization (``moses``) or none (text already tokenized), and subword-nmt BPE
with the model's codes or none (text already segmented). For the workflow's
settings the result equals the sharded steps' (tested on the demo).

CLI::

    python -m docnmt.preprocess.encode --lang en --tokenize moses|none --codes CODES|none --input raw --output bpe
"""

from __future__ import annotations

from pathlib import Path

from ..textio import InputError, atomic_write, cli_errors, read_lines
from ..manual import argument_parser

TOKENIZERS = ("moses", "none")


class TextPipeline:
    """Raw sentence -> BPE (tokenize, then segment), and BPE hypothesis -> raw (undo both)."""

    def __init__(self, src_lang: str, tgt_lang: str, tokenizer: str = "moses", codes: str | None = None):
        from . import bpe

        if tokenizer not in TOKENIZERS:
            raise ValueError(f"tokenizer must be one of {', '.join(TOKENIZERS)}, got {tokenizer!r}")
        self.src_lang, self.tgt_lang, self.tokenizer = src_lang, tgt_lang, tokenizer
        self.bpe = None if codes in (None, "none") else bpe.load(Path(codes))

    def encode(self, line: str) -> str:
        from . import bpe, tokenize

        if not line.strip():
            return ""
        text = tokenize.tokenize(line, self.src_lang) if self.tokenizer == "moses" else " ".join(line.split())
        return bpe.apply(self.bpe, text) if self.bpe is not None else text

    def decode(self, hyp: str) -> str:
        from . import bpe, tokenize

        if not hyp.strip():
            return ""
        text = bpe.remove_bpe(hyp) if self.bpe is not None else hyp
        return tokenize.detokenize(text, self.tgt_lang) if self.tokenizer == "moses" else text


@cli_errors
def main(argv=None) -> int:
    parser = argument_parser("docnmt.preprocess.encode", __doc__.split("\n\n")[0])
    parser.add_argument("--lang", required=True, help="the text's language (Moses rules)")
    parser.add_argument("--tokenize", default="moses", choices=TOKENIZERS)
    parser.add_argument("--codes", default="none", help="subword-nmt BPE codes, or none")
    parser.add_argument("--input", required=True, type=Path)
    parser.add_argument("--output", required=True, type=Path)
    args = parser.parse_args(argv)
    if not args.input.exists():
        raise InputError(args.input, "file not found")
    pipeline = TextPipeline(args.lang, args.lang, args.tokenize, args.codes)
    lines = read_lines(args.input)
    with atomic_write(args.output) as handle:
        for line in lines:
            handle.write(pipeline.encode(line) + "\n")
    print(f"{len(lines)} lines {args.input} -> {args.output} (tokenize {args.tokenize}, BPE {args.codes})")
    return 0


if __name__ == "__main__":
    main()

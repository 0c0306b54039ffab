"""The transformers backend's checks of a Hugging Face seq2seq model folder (``--backend transformers``, a
``save_pretrained`` folder), before any decode and without loading its weights: each failure is one line naming the
folder (or the sample's file and line):

- the folder has a config of an encoder-decoder model and a tokenizer;
- the tokenizer has no more tokens than the model has embeddings (a token
  added to the tokenizer without ``resize_token_embeddings``);
- a document-level model's separator is a single token of the tokenizer, and
  ``k`` is at least 2;
- a model whose tokenizer marks languages with tokens (NLLB, M2M100,
  mBART-50) knows the source and target language codes;
- no sentence of the sample (``--sample``, raw text) has more tokens than the
  model's positions.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

from .... import SEP
from ....textio import InputError, read_lines
from ...checks import check_k, no_fairseq_files, reported


def check_transformers_model(folder: os.PathLike | str, level: str, separator: str = SEP, k: int | None = None,
                             src_lang: str | None = None, tgt_lang: str | None = None,
                             sample: Sequence[os.PathLike | str] = (), max_lines: int = 2000) -> dict:
    """The checks of a transformers model folder (module docstring), in order, without loading its weights; the
    report of what was found (an :class:`InputError` at the first failure)."""
    from .. import load_tokenizer
    from .model import check_separator, language_prompt, load_config, max_positions

    folder = Path(folder)
    if level not in ("sentence", "document"):
        raise ValueError(f"level must be sentence or document, got {level!r}")
    config = load_config(folder)
    tokenizer = load_tokenizer(folder)
    rows = getattr(config, "decoder_vocab_size", None) or config.vocab_size
    if len(tokenizer) > rows:
        raise InputError(folder, f"the tokenizer has {len(tokenizer)} tokens, the model's embeddings {rows} rows: "
                                 "a token was added to the tokenizer without model.resize_token_embeddings("
                                 "len(tokenizer)) (save both again with save_pretrained)")
    sep = check_separator(folder, tokenizer, separator) if level == "document" else None
    check_k(folder, folder, level, k, None)
    prompt = language_prompt(folder, tokenizer, src_lang, tgt_lang, separator)
    limit = max_positions(config)
    lines = longest = 0
    for path in map(Path, sample):
        for number, line in enumerate(read_lines(path)[:max_lines], start=1):
            if not line.strip():
                continue
            tokens = len(tokenizer(line)["input_ids"])
            if tokens > limit:
                raise InputError(path, f"this sentence has {tokens} tokens with the tokenizer of {folder}, more than "
                                       f"the model's {limit} positions: split it (it is never truncated)", number)
            lines, longest = lines + 1, max(longest, tokens)
    return {
        "checkpoint": str(folder), "backend": "transformers", "level": level, "model_type": config.model_type,
        "tokenizer": type(tokenizer).__name__, "vocabulary": len(tokenizer), "embeddings": rows,
        "src": src_lang, "tgt": tgt_lang, "language_token": tokenizer.convert_ids_to_tokens(prompt)[0] if prompt else None,
        "separator": separator if level == "document" else None, "separator_id": sep,
        "k": k if level == "document" else 1, "max_positions": limit,
        "sample": {"lines": lines, "longest": longest} if sample else None,
    }


def transformers_cli(parser, args) -> int:
    """docnmt-check-model on a transformers model folder (the transformers backend's ``check_cli``)."""
    no_fairseq_files(parser, args, "a transformers model folder holds its tokenizer, which segments raw text")
    report = check_transformers_model(args.model, args.level, args.separator, args.k, args.src_lang,
                                      args.tgt_lang, args.sample)
    return reported(args.output, report, f"{args.model}: {report['model_type']} (transformers)"
                    + (f", {report['src']}->{report['tgt']}" if report["language_token"] else "")
                    + f", {args.level}-level"
                    + (f", separator {report['separator']!r}, k={report['k']}" if args.level == "document" else "")
                    + (f"; sample: {report['sample']['lines']} sentences, the longest {report['sample']['longest']} "
                       f"of {report['max_positions']} positions" if report["sample"] else ""))

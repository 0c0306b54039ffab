"""The causal-LM backend's checks of a model folder, before any decode and without loading its weights: those of a
causal LM's folder that every backend prompting one shares (:func:`docnmt.decode.prompting.checks.
check_prompted_folder`: its config and tokenizer, the template and languages, the sample's prompts within the
context window), each failure one line naming the folder, the template or the sample's file and line."""

from __future__ import annotations

import os
from typing import Sequence

from ...checks import no_fairseq_files, reported
from ...prompting.checks import HOLDS_ITS_TOKENIZER, check_prompted_folder, prompt_summary


def check_causal_lm_model(folder: os.PathLike | str, level: str, k: int | None = None, src_lang: str | None = None,
                          tgt_lang: str | None = None, sample: Sequence[os.PathLike | str] = (),
                          template: str | None = None) -> dict:
    """The checks of a causal LM's folder for this backend; the report (an :class:`InputError` at the first
    failure)."""
    return check_prompted_folder(folder, level, k, src_lang, tgt_lang, sample, template, backend="causal-lm")


def causal_lm_cli(parser, args) -> int:
    """docnmt-check-model on a causal LM's folder (the causal-LM backend's ``check_cli``)."""
    no_fairseq_files(parser, args, HOLDS_ITS_TOKENIZER)
    report = check_causal_lm_model(args.model, args.level, args.k, args.src_lang, args.tgt_lang, args.sample,
                                   getattr(args, "template", None))
    return reported(args.output, report, f"{args.model}: {report['model_type']} (causal LM), "
                    + prompt_summary(report, args.level)
                    + (f" of {report['max_positions']} positions" if report["sample"] else ""))

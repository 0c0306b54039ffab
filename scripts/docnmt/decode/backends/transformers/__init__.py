"""The transformers backend's entry points (registered in :mod:`docnmt.decode.backend`): a Hugging Face seq2seq
model folder (:class:`docnmt.decode.backends.transformers.model.HFModel`), its checks (:func:`docnmt.decode.backends.transformers.checks.check_transformers_model`)
and its beam search (:class:`docnmt.decode.backends.transformers.model.HFSearcher`, ``generate``'s semantics; at beam 1
greedy search, whose drafts :mod:`~docnmt.decode.backends.transformers.drafts` verifies)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Sequence

from ...backend import Backend, BackendModule, register


BACKEND = register(Backend(
    name="transformers",
    order=1,
    summary="a Hugging Face seq2seq save_pretrained folder (plain text in and out; its tokenizer segments it)",
    text="plain", needs_data=False, language_codes=True, contrapro_in_workflow=False, module=__name__, contrastive=True,
    verify_drafts=True,
    note="Hugging Face", note_detail="their tokenizer's tokens and transformers' beam semantics (docs/decoding.md, "
                                     "'Hugging Face models (the transformers backend)')",
    bench="decode_transformers:transformers_benchmark",
))


from .checks import check_transformers_model  # noqa: E402
from .model import HFModel, HFSearcher  # noqa: E402

# docnmt-check-model's run for this backend (its parsed arguments; a parser error on options it does not take)
from .checks import transformers_cli as check_cli  # noqa: E402


if TYPE_CHECKING:  # mypy checks this package against a backend's entry points (tests/test_types.py)
    import docnmt.decode.backends.transformers as _this
    _conforms: BackendModule = _this


def load(model: os.PathLike | str, data: os.PathLike | str | None, *, device=None, dtype=None, separator: str,
         src_lang=None, tgt_lang=None) -> HFModel:
    return HFModel(model, device=device, dtype=dtype, separator=separator, src_lang=src_lang, tgt_lang=tgt_lang)


def check(model: os.PathLike | str, data: os.PathLike | str | None, level: str, separator: str, k: int | None,
          src_lang=None, tgt_lang=None, sample: Sequence[os.PathLike | str] = ()) -> dict:
    return check_transformers_model(model, level, separator, k, src_lang, tgt_lang, sample)


def searcher(model: HFModel, beam: int, lenpen: float, batch_size: int, max_len: int,
             max_tokens: int | None, cache_bytes: int | None = None) -> HFSearcher:
    return HFSearcher(model, beam=beam, lenpen=lenpen, batch_size=batch_size, max_new_tokens=max_len,
                    max_tokens=max_tokens)

"""The fairseq backend's entry points (registered in :mod:`docnmt.decode.backend`): a checkpoint with its data
folder (:class:`docnmt.decode.backends.fairseq.model.Model`), its checks (:func:`docnmt.decode.backends.fairseq.checks.check_model`) and its beam
search (:class:`docnmt.decode.backends.fairseq.search.Searcher`, fairseq's semantics)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Sequence

from ....textio import InputError
from ...backend import Backend, BackendModule, register

BACKEND = register(Backend(
    name="fairseq",
    order=0,
    summary="a fairseq checkpoint and its data folder (BPE-level text in and out; the default)",
    text="bpe", needs_data=True, language_codes=False, contrapro_in_workflow=True, module=__name__, contrastive=True,
    verify_drafts=True,
))


from .checks import check_model  # noqa: E402
from .model import Model  # noqa: E402
from .search import Searcher  # noqa: E402

# docnmt-check-model's run for this backend (its parsed arguments; a parser error on options it does not take)
from .checks import fairseq_cli as check_cli  # noqa: E402


if TYPE_CHECKING:  # mypy checks this package against a backend's entry points (tests/test_types.py)
    import docnmt.decode.backends.fairseq as _this
    _conforms: BackendModule = _this


def _data_folder(model, data):
    """``data``; an InputError naming ``model`` where a fairseq checkpoint comes without its data folder."""
    if data is None:
        raise InputError(model, "a fairseq checkpoint needs its data folder (dict.SRC.txt, dict.TGT.txt)")
    return data


def load(model: os.PathLike | str, data: os.PathLike | str | None, *, device=None, dtype=None, separator: str,
         src_lang=None, tgt_lang=None) -> Model:
    return Model(model, _data_folder(model, data), device=device, dtype=dtype, separator=separator)


def check(model: os.PathLike | str, data: os.PathLike | str | None, level: str, separator: str, k: int | None,
          src_lang=None, tgt_lang=None, sample: Sequence[os.PathLike | str] = ()) -> dict:
    return check_model(model, _data_folder(model, data), level, separator, k)


def searcher(model: Model, beam: int, lenpen: float, batch_size: int, max_len: int,
             max_tokens: int | None, cache_bytes: int | None = None) -> Searcher:
    return Searcher(model, beam=beam, lenpen=lenpen, batch_size=batch_size, max_len_b=max_len,
                    max_tokens=max_tokens)

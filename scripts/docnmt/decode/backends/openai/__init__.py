"""The openai backend's entry points (registered in :mod:`docnmt.interface`; :class:`docnmt.interface.BackendModule`):
a model served behind an OpenAI-compatible endpoint (:class:`.model.ServedModel`, its name on the server), its checks
(:func:`.checks.check_served_model`) and its search (:class:`.model.ServedSearcher`). The endpoint's settings are load
options (:class:`.endpoint.Settings`)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Sequence

from ....textio import InputError

if TYPE_CHECKING:
    from .model import ServedModel, ServedSearcher


def _no_data(model, data) -> None:
    if data is not None:
        raise InputError(data, f"a served model ({model}) has no data folder: its server holds the model")


def load(model: os.PathLike | str, data: os.PathLike | str | None, *, device: str | None = None,
         dtype: str | None = None, separator: str, src_lang: str | None = None, tgt_lang: str | None = None,
         template: str | None = None, base_url: str | None = None, **endpoint: Any) -> ServedModel:
    """The served model ``model`` (its name on the server at ``base_url``), connected: the server lists it."""
    from .endpoint import Settings
    from .model import ServedModel

    _no_data(model, data)
    served = ServedModel(str(model), Settings.of(base_url, **endpoint), separator=separator, src_lang=src_lang,
                         tgt_lang=tgt_lang, template=template)
    served.connect()
    return served


def check(model: os.PathLike | str, data: os.PathLike | str | None, level: str, separator: str, k: int | None,
          src_lang: str | None = None, tgt_lang: str | None = None, sample: Sequence[os.PathLike | str] = (),
          template: str | None = None, base_url: str | None = None, **endpoint: Any) -> dict:
    from .checks import check_served_model
    from .endpoint import Settings

    _no_data(model, data)
    return check_served_model(str(model), Settings.of(base_url, **endpoint), level, k, src_lang, tgt_lang, sample,
                              template, separator)


def searcher(model: ServedModel, beam: int, lenpen: float, batch_size: int, max_len: int,
             max_tokens: int | None, cache_bytes: int | None = None) -> ServedSearcher:
    from .model import ServedSearcher

    return ServedSearcher(model, beam=beam, lenpen=lenpen, batch_size=batch_size, max_new_tokens=max_len,
                          max_tokens=max_tokens)


def check_cli(parser, args) -> int:
    """docnmt-check-model for a served model (its parsed arguments)."""
    from .checks import served_cli

    return served_cli(parser, args)

"""The vllm backend's entry points (registered in :mod:`docnmt.interface`; :class:`docnmt.interface.BackendModule`):
a decoder-only LLM's folder on vLLM's engine (:class:`.model.VLLMModel`), its checks (:func:`.checks.check_vllm_model`)
and its search (:class:`.model.VLLMSearcher`). vLLM lives in its own environment (``make vllm``: ``.venv-vllm``);
nothing here imports it before a model is loaded."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Sequence

if TYPE_CHECKING:
    from .model import VLLMModel
    from .model import VLLMSearcher



def load(model: os.PathLike | str, data: os.PathLike | str | None, *, device: str | None = None,
         dtype: str | None = None, separator: str, src_lang: str | None = None, tgt_lang: str | None = None,
         template: str | None = None, tensor_parallel_size: int | None = None,
         gpu_memory_utilization: float | None = None, max_model_len: int | None = None,
         seed: int | None = None) -> VLLMModel:
    from .model import VLLMModel

    return VLLMModel(model, device=device, dtype=dtype, separator=separator, src_lang=src_lang, tgt_lang=tgt_lang,
                     template=template, tensor_parallel_size=tensor_parallel_size,
                     gpu_memory_utilization=gpu_memory_utilization, max_model_len=max_model_len, seed=seed)


def memory_share(engines: int, given: float | None) -> float:
    """Each engine's ``gpu_memory_utilization`` where one process starts ``engines`` of them: the share given (or
    the default here: vLLM's 0.9 on a GPU, 0.15 of the RAM on the CPU), divided among them. Each engine reserves its
    share at its start: two at 0.9 would not fit."""
    from .model import CPU_MEMORY_UTILIZATION, on_cpu

    total = given if given is not None else (CPU_MEMORY_UTILIZATION if on_cpu() else 0.9)
    return total / engines


def check(model: os.PathLike | str, data: os.PathLike | str | None, level: str, separator: str, k: int | None,
          src_lang: str | None = None, tgt_lang: str | None = None, sample: Sequence[os.PathLike | str] = (),
          template: str | None = None, max_model_len: int | None = None, **engine: Any) -> dict:
    from .checks import check_vllm_model

    return check_vllm_model(model, level, k, src_lang, tgt_lang, sample, template, max_model_len)


def searcher(model: VLLMModel, beam: int, lenpen: float, batch_size: int, max_len: int,
             max_tokens: int | None, cache_bytes: int | None = None) -> VLLMSearcher:
    from .model import VLLMSearcher

    return VLLMSearcher(model, beam=beam, lenpen=lenpen, batch_size=batch_size, max_new_tokens=max_len,
                        max_tokens=max_tokens)


def check_cli(parser, args) -> int:
    """docnmt-check-model's run for this backend (its parsed arguments)."""
    from .checks import vllm_cli

    return vllm_cli(parser, args)

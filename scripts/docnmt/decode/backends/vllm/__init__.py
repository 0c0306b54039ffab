"""The vllm backend's entry points (registered in :mod:`docnmt.decode.backend`; :class:`docnmt.decode.backend.BackendModule`):
a decoder-only LLM's folder on vLLM's engine (:class:`.model.VLLMModel`), its checks (:func:`.checks.check_vllm_model`)
and its search (:class:`.model.VLLMSearcher`). vLLM lives in its own environment (``make vllm``: ``.venv-vllm``);
nothing here imports it before a model is loaded."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Sequence
from dataclasses import dataclass

from ...backend import Backend, CostColumns, Environment, BackendModule, register
from ...prompting import PROMPTED
from ...load_options import option
from ...requests import PROMPT_COUNTERS


@dataclass(frozen=True)
class Options:
    """The load options of a model on vLLM's engine (config ``models.engine_args``, CLI ``--engine-args``)."""

    tensor_parallel_size: int | None = option(
        "The GPUs the model is split over (vLLM's tensor parallelism); the decode rules ask for as many (their gpu "
        "resource).", schema={"minimum": 1})
    gpu_memory_utilization: float | None = option(
        "The share of the GPU's memory the engine reserves for the weights and its key-value cache (on the CPU: of "
        "the RAM; default 0.15 there, 0.9 on a GPU).", schema={"exclusiveMinimum": 0, "maximum": 1})
    max_model_len: int | None = option(
        "The context window the engine serves, at most the model's (default its max_position_embeddings).",
        schema={"minimum": 1})
    seed: int | None = option(
        "The engine's random seed (MBR's samples are seeded per request by mbr.seed all the same).")


BACKEND = register(Backend(
    name="vllm",
    order=3,
    summary="a decoder-only LLM's save_pretrained folder on vLLM's engine (causal-lm's prompts and strategies; "
            "continuous batching, automatic prefix caching, tensor parallelism over GPUs)",
    **PROMPTED,
    module=__name__, note="vLLM", speculative=True,
    note_detail="causal-lm's prompts and beam search on vLLM's engine (docs/own-models.md, "
                "'LLMs on vLLM')",
    bench="decode_vllm:vllm_benchmark",
    environment=Environment(venv=".venv-vllm", make="make vllm", requirements="requirements-vllm.txt",
                            conda="../envs/vllm.yaml", modules=("vllm",)),
    options=Options, gpus_option="tensor_parallel_size", memory_option="gpu_memory_utilization",
    cost=CostColumns(PROMPT_COUNTERS, note=(
        "Causal LMs on vLLM's engine (backend vllm): tokens prefilled, from cache and generated are the engine's "
        "counts; its prefix cache holds whole blocks (128 tokens on the CPU), tokens generated are the answers' own, "
        "forced scoring's prompts are all prefilled, and forward calls are its steps, each of which serves many "
        "requests.")),
    tools=(("docnmt.decode.backends.vllm.serve", "no rule: vllm serve on a model folder, for the backend openai (in "
                                                 ".venv-vllm)"),),
))


from .checks import check_vllm_model  # noqa: E402
from .model import CPU_MEMORY_UTILIZATION, VLLMModel, VLLMSearcher, on_cpu  # noqa: E402

# docnmt-check-model's run for this backend (its parsed arguments; a parser error on options it does not take)
from .checks import vllm_cli as check_cli  # noqa: E402


if TYPE_CHECKING:  # mypy checks this package against a backend's entry points (tests/test_types.py)
    import docnmt.decode.backends.vllm as _this
    _conforms: BackendModule = _this


def load(model: os.PathLike | str, data: os.PathLike | str | None, *, device: str | None = None,
         dtype: str | None = None, separator: str, src_lang: str | None = None, tgt_lang: str | None = None,
         template: str | None = None, tensor_parallel_size: int | None = None,
         gpu_memory_utilization: float | None = None, max_model_len: int | None = None,
         seed: int | None = None, speculative: str | None = None) -> VLLMModel:
    return VLLMModel(model, device=device, dtype=dtype, separator=separator, src_lang=src_lang, tgt_lang=tgt_lang,
                     template=template, tensor_parallel_size=tensor_parallel_size,
                     gpu_memory_utilization=gpu_memory_utilization, max_model_len=max_model_len, seed=seed,
                     speculative=speculative)


def memory_share(engines: int, given: float | None) -> float:
    """Each engine's ``gpu_memory_utilization`` where one process starts ``engines`` of them: the share given (or
    the default here: vLLM's 0.9 on a GPU, 0.15 of the RAM on the CPU), divided among them. Each engine reserves its
    share at its start: two at 0.9 would not fit."""
    total = given if given is not None else (CPU_MEMORY_UTILIZATION if on_cpu() else 0.9)
    return total / engines


def check(model: os.PathLike | str, data: os.PathLike | str | None, level: str, separator: str, k: int | None,
          src_lang: str | None = None, tgt_lang: str | None = None, sample: Sequence[os.PathLike | str] = (),
          template: str | None = None, max_model_len: int | None = None, **engine: Any) -> dict:
    return check_vllm_model(model, level, k, src_lang, tgt_lang, sample, template, max_model_len)


def searcher(model: VLLMModel, beam: int, lenpen: float, batch_size: int, max_len: int,
             max_tokens: int | None, cache_bytes: int | None = None) -> VLLMSearcher:
    return VLLMSearcher(model, beam=beam, lenpen=lenpen, batch_size=batch_size, max_new_tokens=max_len,
                        max_tokens=max_tokens)

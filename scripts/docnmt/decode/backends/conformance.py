"""What the type checker reads to check the backends against the interface (``tests/test_types.py``, mypy): every
registered backend package satisfies :class:`docnmt.interface.BackendModule`, and its model and searcher classes
:class:`~docnmt.interface.ModelLike` and :class:`~docnmt.interface.SearcherLike`. Nothing imports it at run time:
its checks are annotations, under ``TYPE_CHECKING``."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ...interface import BackendModule, ModelLike, SearcherLike
    from . import causal_lm, fairseq, openai, transformers, vllm
    from .causal_lm.model import CausalLMModel, CausalLMSearcher
    from .fairseq.model import Model
    from .fairseq.search import Searcher
    from .openai.model import ServedModel, ServedSearcher
    from .transformers.model import HFModel, HFSearcher
    from .vllm.model import VLLMModel, VLLMSearcher

    def packages() -> list[BackendModule]:
        return [fairseq, transformers, causal_lm, vllm, openai]

    def models(a: Model, b: HFModel, c: CausalLMModel, d: VLLMModel, e: ServedModel) -> list[ModelLike]:
        return [a, b, c, d, e]

    def searchers(a: Searcher, b: HFSearcher, c: CausalLMSearcher, d: VLLMSearcher,
                  e: ServedSearcher) -> list[SearcherLike]:
        return [a, b, c, d, e]

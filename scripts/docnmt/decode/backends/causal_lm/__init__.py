"""The causal-LM backend's entry points (registered in :mod:`docnmt.decode.backend`): a decoder-only LLM's folder
(:class:`.model.CausalLMModel`), its checks (:func:`.checks.check_causal_lm_model`) and its search
(:class:`.model.CausalLMSearcher`: ``generate`` after the longest cached prefix of each prompt)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Sequence

from ...backend import Backend, CostColumns, BackendModule, register
from ...prompting import PROMPTED
from ...requests import PROMPT_COUNTERS


BACKEND = register(Backend(
    name="causal-lm",
    order=2,
    summary="a decoder-only LLM's save_pretrained folder (plain text in and out; each sentence a turn of a "
            "conversation, its context earlier turns)",
    **PROMPTED,
    module=__name__, contrastive=True, verify_drafts=True, note="causal LM",
    note_detail="a prompt of turns from a template, each context sentence an earlier turn, and generate's search "
                "(docs/own-models.md, 'LLMs')",
    bench="decode_causal_lm:causal_lm_benchmark", prefix_cache=True,
    cost=CostColumns(PROMPT_COUNTERS, note=(
        "Causal LMs: tokens prefilled are the prompt tokens run through the model; tokens from cache those read from "
        "the keys and values of an earlier prompt that shares them (the instruction, a conversation's earlier "
        "turns); tokens generated count every beam's positions, in a batch those of the answers that ended before "
        "its longest too. Forward calls include the prefill's.")),
    tools=(("docnmt.decode.backends.causal_lm.tiny", "no rule: make demo-llm trains the demo's tiny causal LM with "
                                                     "it"),),
))


from .checks import check_causal_lm_model  # noqa: E402
from .model import CausalLMModel, CausalLMSearcher  # noqa: E402

# docnmt-check-model's run for this backend (its parsed arguments; a parser error on options it does not take)
from .checks import causal_lm_cli as check_cli  # noqa: E402


if TYPE_CHECKING:  # mypy checks this package against a backend's entry points (tests/test_types.py)
    import docnmt.decode.backends.causal_lm as _this
    _conforms: BackendModule = _this


def load(model: os.PathLike | str, data: os.PathLike | str | None, *, device=None, dtype=None, separator: str,
         src_lang=None, tgt_lang=None, template=None) -> CausalLMModel:
    return CausalLMModel(model, device=device, dtype=dtype, separator=separator, src_lang=src_lang,
                         tgt_lang=tgt_lang, template=template)


def check(model: os.PathLike | str, data: os.PathLike | str | None, level: str, separator: str, k: int | None,
          src_lang=None, tgt_lang=None, sample: Sequence[os.PathLike | str] = (), template=None) -> dict:
    return check_causal_lm_model(model, level, k, src_lang, tgt_lang, sample, template)


def searcher(model: CausalLMModel, beam: int, lenpen: float, batch_size: int, max_len: int,
             max_tokens: int | None, cache_bytes: int | None = None) -> CausalLMSearcher:
    return CausalLMSearcher(model, beam=beam, lenpen=lenpen, batch_size=batch_size, max_new_tokens=max_len,
                            max_tokens=max_tokens, cache_bytes=cache_bytes)

"""The openai backend's entry points (registered in :mod:`docnmt.decode.backend`; :class:`docnmt.decode.backend.BackendModule`):
a model served behind an OpenAI-compatible endpoint (:class:`.model.ServedModel`, its name on the server), its checks
(:func:`.checks.check_served_model`) and its search (:class:`.model.ServedSearcher`). The endpoint's settings are load
options (:class:`.endpoint.Settings`)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

from ....textio import InputError
from ...backend import Backend, CostColumns, BackendModule, register
from ...prompting import PROMPTED
from ...load_options import option

#: The environment variable of the endpoint's key unless ``api_key_env`` names another.
DEFAULT_KEY_ENV = "OPENAI_API_KEY"


@dataclass(frozen=True)
class Options:
    """The load options of a served model: its endpoint's (config ``models.endpoint``; CLI ``--base-url``,
    ``--api-key-env``, ``--engine-args``). :class:`.endpoint.Settings` checks their values."""

    base_url: str | None = option(
        "The endpoint's URL, e.g. http://127.0.0.1:8000/v1 (vllm serve) or https://api.openai.com/v1.",
        schema={"pattern": "^https?://"}, transport=True, flag=True, required=True)
    api_key_env: str = option(
        "The environment variable that holds the endpoint's key. The key is read from there only: it is never written "
        "to a config, sidecar, log or table. Unset, no key is sent (a local server without --api-key).",
        DEFAULT_KEY_ENV, schema={"pattern": "^[A-Za-z_][A-Za-z0-9_]*$"}, transport=True, flag=True)
    max_concurrency: int = option(
        "The most requests in flight at once: a search round's requests (doc-trans: sentence i of every document) "
        "are sent together up to this, for the server's continuous batching.", 8, schema={"minimum": 1},
        transport=True)
    timeout: float = option("Seconds to wait for one answer before it counts as failed (and is retried).", 600.0,
                            schema={"exclusiveMinimum": 0}, transport=True)
    max_retries: int = option(
        "Retries of a request after a rate limit (429), a server error (5xx), a timeout or a dropped connection, with "
        "exponential backoff; then the decode stops with one line naming the endpoint, the request and the last "
        "error.", 6, schema={"minimum": 0}, transport=True)
    retry_backoff: float = option("Seconds before the first retry, doubled for each next one (a Retry-After header "
                                  "wins).", 1.0, schema={"minimum": 0}, transport=True)
    temperature: float = option("The sampling temperature (0, the default, is greedy; the API has no beam search).",
                                0.0, schema={"minimum": 0})
    seed: int = option("The seed sent with each request (servers that sample reproducibly honour it).", 0)
    prompt_logprobs: bool = option(
        "The server gives prompt log-probs (vLLM's OpenAI-compatible server: prompt_logprobs and /tokenize): forced "
        "scoring runs, so perplexity and CXMI are computed. Off, they are left out with a note (most hosted APIs "
        "give none).", False)


#: A served model's prices per million tokens (``models.endpoint.prices``), in the cost note's order.
PRICES = ("input", "cached_input", "output")


def price_of(counts: dict[str, int], prices: dict) -> float:
    """What a served decode's tokens cost at ``prices`` per million (input, cached_input (default input), output)."""
    cached = counts.get("cached_tokens", 0)
    return ((counts.get("prompt_tokens", 0) - cached) * prices["input"]
            + cached * prices.get("cached_input", prices["input"])
            + counts.get("completion_tokens", 0) * prices["output"]) / 1e6


BACKEND = register(Backend(
    name="openai",
    order=4,
    summary="a model served behind an OpenAI-compatible endpoint (vllm serve, SGLang, llama.cpp's server, a hosted "
            "API): its name on the server, causal-lm's conversations as chat messages",
    **PROMPTED,
    module=__name__, note="served",
    note_detail="causal-lm's conversations sent as chat messages to an OpenAI-compatible endpoint, greedy (no beam "
                "search in the API), its cost the tokens the server reports; a hosted model may change behind its "
                "name (docs/own-models.md, 'Served models')",
    bench="decode_openai:openai_benchmark", forced_scoring="prompt_logprobs", beam_search=False,
    sampling=False, options=Options, options_key="endpoint", served=True,
    cost=CostColumns(
        (("prompt_tokens", "prompt tokens"), ("cached_tokens", "cached prompt tokens"),
         ("completion_tokens", "completion tokens"), ("api_requests", "API requests")),
        note=("Served models (backend openai): prompt, cached prompt and completion tokens are those the server "
              "reported in each answer's usage (cached: read from its prefix cache, where it reports them: vLLM with "
              "--enable-prompt-tokens-details, hosted APIs); API requests are those answered (the sidecars count "
              "retries apart). Decoder positions are the prompt tokens not cached and the completion tokens, forward "
              "calls the requests. The search is greedy: the API has no beam search. The counts of 2-pass and of "
              "doc-trans in its parallel mode include their sentence-level first pass. A hosted model may change "
              "behind its name: each sidecar records the model and the fingerprints the server reported, and the "
              "time."),
        with_first_pass=True, price=price_of, price_names=PRICES, prices_key="models.endpoint.prices"),
))



from .checks import check_served_model  # noqa: E402
from .endpoint import Settings  # noqa: E402
from .model import ServedModel, ServedSearcher  # noqa: E402

# docnmt-check-model's run for this backend (its parsed arguments; a parser error on options it does not take)
from .checks import served_cli as check_cli  # noqa: E402


if TYPE_CHECKING:  # mypy checks this package against a backend's entry points (tests/test_types.py)
    import docnmt.decode.backends.openai as _this
    _conforms: BackendModule = _this


def _no_data(model, data) -> None:
    if data is not None:
        raise InputError(data, f"a served model ({model}) has no data folder: its server holds the model")


def load(model: os.PathLike | str, data: os.PathLike | str | None, *, device: str | None = None,
         dtype: str | None = None, separator: str, src_lang: str | None = None, tgt_lang: str | None = None,
         template: str | None = None, base_url: str | None = None, **endpoint: Any) -> ServedModel:
    """The served model ``model`` (its name on the server at ``base_url``), connected: the server lists it."""
    _no_data(model, data)
    served = ServedModel(str(model), Settings.of(base_url, **endpoint), separator=separator, src_lang=src_lang,
                         tgt_lang=tgt_lang, template=template)
    served.connect()
    return served


def check(model: os.PathLike | str, data: os.PathLike | str | None, level: str, separator: str, k: int | None,
          src_lang: str | None = None, tgt_lang: str | None = None, sample: Sequence[os.PathLike | str] = (),
          template: str | None = None, base_url: str | None = None, **endpoint: Any) -> dict:
    _no_data(model, data)
    return check_served_model(str(model), Settings.of(base_url, **endpoint), level, k, src_lang, tgt_lang, sample,
                              template, separator)


def searcher(model: ServedModel, beam: int, lenpen: float, batch_size: int, max_len: int,
             max_tokens: int | None, cache_bytes: int | None = None) -> ServedSearcher:
    return ServedSearcher(model, beam=beam, lenpen=lenpen, batch_size=batch_size, max_new_tokens=max_len,
                          max_tokens=max_tokens)

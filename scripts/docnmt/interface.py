"""What the strategies, the CLIs, the config and the workflow know of a model backend: the interface of its model
and searcher (:class:`ModelLike`, :class:`SearcherLike`), and its description (:class:`Backend`), registered under
its name in :data:`REGISTRY`.

Nothing outside this module compares a backend's name: code that must act differently by backend asks the
description (does the model read the workflow's BPE text, does it need a data folder, does it take language
codes, ...), and :mod:`docnmt.decode.backends` loads, checks and searches through the callables it names. A new
backend is a module with ``load``, ``check``, ``searcher`` and ``check_cli`` functions and one :class:`Backend` entry here
(``docs/development.md``, "Adding a backend").
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from typing import Any, Callable, Protocol, Sequence, cast, runtime_checkable

from .search import MAX_TOKENS, Hypothesis, Request, Scored


# ---- the interface of a backend's model and searcher --------------------------------------------------------------
@runtime_checkable
class ModelLike(Protocol):
    """A loaded model, as the strategies, the CLIs and the scorers use it (every backend's model satisfies it; mypy
    checks that in the suite, ``tests/test_types.py``). Its data members are read-only here: a backend may narrow
    them (``sep`` an int where its vocabulary always has one)."""

    @property
    def backend(self) -> str:
        """The name it is registered under."""

    @property
    def checkpoint(self) -> str:
        """The checkpoint file or model folder it was loaded from (sidecars record it)."""

    @property
    def device(self) -> str:
        """Where it runs: cpu, cuda or cuda:N (sidecars record it; 2-pass checks its first pass's)."""

    @property
    def dtype(self) -> str:
        """The precision it runs in: a value of :data:`DTYPES`."""

    @property
    def sep(self) -> int | None:
        """The separator's token id (None where the vocabulary has none)."""

    @property
    def eos(self) -> int:
        """The id that ends a target (an LLM's end of turn)."""

    @property
    def pad(self) -> int: ...

    @property
    def max_positions(self) -> int:
        """The positions a request may take: an encoder-decoder's per side (source; decoder prompt, prefix and
        continuation), a causal LM's context window (prompt and answer together)."""

    @property
    def template(self) -> object:
        """The prompt's template (a causal LM's :class:`~docnmt.decode.backends.causal_lm.prompt.Template`), or
        None."""

    def encode(self, text: str, source: bool = False) -> list[int]:
        """A text's ids (a window's sentences apart by :attr:`sep`); a target (``source`` False) ends in
        :attr:`eos`."""
        ...

    def decode(self, ids: Sequence[int]) -> str:
        """The text of ids, end tokens dropped, :attr:`sep` written ``<sep>``."""
        ...

    def fits(self, source: Sequence[int], prefix: Sequence[int], continuation: int = 1,
             document: Sequence[int] = ()) -> bool:
        """Whether a request (source ids, forced prefix ids, a prompting model's source ``document``) and
        ``continuation`` target tokens fit the model's positions (the strategies drop the oldest context sentences
        until it does)."""
        ...

    def score(self, sources: Sequence[str], targets: Sequence[str], after_last_sep: bool = True,
              batch_size: int = 64) -> list[Scored]:
        """Forced scoring of text pairs (ContraPro, the checks): each target's log-prob given its source, only the
        last sentence's (after the last ``<sep>``) with ``after_last_sep``."""
        ...


@runtime_checkable
class SearcherLike(Protocol):
    """A model's search over requests (:class:`Request`), with its cost counters and progress hook
    (:class:`Counted`, which every backend's searcher extends; mypy checks each satisfies this)."""

    @property
    def model(self) -> ModelLike: ...

    @property
    def beam(self) -> int: ...

    @property
    def eos(self) -> int: ...

    @property
    def pad(self) -> int: ...

    @property
    def vocab(self) -> int:
        """The vocabulary's size (ids at or above it are not tokens)."""

    @property
    def max_source_positions(self) -> int: ...

    @property
    def max_target_positions(self) -> int: ...

    decoder_positions: int
    forward_calls: int
    track_cache: bool
    on_batch: Callable[[int], None] | None  #: called after each searched batch with its request count

    def search(self, requests: Sequence[Request]) -> list[list[Hypothesis]]:
        """The ``beam`` best hypotheses of each request, best first."""
        ...

    def score_forced(self, requests: Sequence[Request], targets: Sequence[Sequence[int]],
                     ends: Sequence[int] | None = None) -> list[Scored]:
        """Each target's log-prob after its request (perplexity, CXMI; :attr:`Backend.forced_scoring`): the target's
        ids, then ``</s>``, or ``ends[i]`` (``</s>`` or the separator)."""
        ...

    def sample(self, request: Request, count: int, epsilon: float, seed: int) -> list[Hypothesis]:
        """``count`` epsilon samples of the request's continuation, drawn reproducibly from ``seed``
        (:mod:`docnmt.decode.sampling`; :attr:`Backend.sampling`)."""
        ...

    def prompt_counters(self) -> dict:
        """Tokens prefilled, read from a cache and generated, for a backend that prompts (else empty)."""
        ...

    def reset_counters(self) -> None: ...


class BackendModule(Protocol):
    """A backend package's entry points (:attr:`Backend.module`), which :mod:`docnmt.decode.backends` calls; mypy
    checks each registered package against it (``docnmt.decode.backends.conformance``).

    - ``load(model, data, *, device, dtype, separator, src_lang, tgt_lang, **options)``: the model of a checkpoint or
      folder (``data``: a fairseq model's data folder; ``options``: the description's ``template`` and
      :attr:`Backend.load_options`);
    - ``check(model, data, level, separator, k, src_lang, tgt_lang, sample, **options)``: the checks before any
      decode (docnmt-check-model), a report or an InputError in one line;
    - ``searcher(model, beam, lenpen, batch_size, max_len, max_tokens, cache_bytes)``: the search of a loaded model
      (``cache_bytes``: the limit of a prefix cache held across requests, :attr:`Backend.prefix_cache`; None: its
      default);
    - ``check_cli(parser, args)``: docnmt-check-model's run for this backend."""

    @property
    def load(self) -> Callable[..., ModelLike]: ...

    @property
    def check(self) -> Callable[..., dict]: ...

    @property
    def searcher(self) -> Callable[[Any, int, float, int, int, int | None, int | None], SearcherLike]: ...

    @property
    def check_cli(self) -> Callable[[Any, Any], int]: ...


#: What a backend may be able to do (:attr:`Backend.forced_scoring`, ...), each in words for a skipped strategy's or
#: table's note.
CAPABILITIES = {
    "forced_scoring": "forced scoring (perplexity, CXMI)",
    "beam_search": "beam search (an n-best list)",
    "sampling": "sampling (MBR's epsilon samples)",
    "conversation": "a prompt that is a conversation",
}


@dataclass(frozen=True)
class Environment:
    """Where a backend's decodes run when its pins conflict with the project's ``.venv`` (vLLM's, as unbabel-comet's
    do): a virtual environment that ``make`` creates in the checkout, and its conda file for ``--sdm conda``."""

    #: the venv folder, relative to the checkout
    venv: str
    #: the make target that creates it
    make: str
    #: its pinned requirements file
    requirements: str
    #: the conda environment file of its rules, relative to rules/ (``--sdm conda``)
    conda: str
    #: the packages (import names) it has that the project's ``.venv`` lacks: a command that misses one is told to
    #: run in this environment (:func:`docnmt.environment.setup_hint`)
    modules: tuple[str, ...] = ()

    @property
    def python(self) -> str:
        return f"{self.venv}/bin/python"


@dataclass(frozen=True)
class Backend:
    """A backend's description: what text its models read and how the workflow and the CLIs treat them."""

    name: str
    #: one line for ``--backend``'s help and the docs
    summary: str
    #: "bpe": the workflow's Moses-tokenized, BPE-split text (and a ``--codes`` file for raw input); "plain": plain
    #: text, which the model's own tokenizer segments
    text: str
    #: whether a model comes with a data folder (dictionaries; the binarized training data)
    needs_data: bool
    #: whether the model may need ``--src-lang``/``--tgt-lang`` language codes (models with language tokens)
    language_codes: bool
    #: whether the workflow's ContraPro evaluation (forced scoring of BPE-level contrastive targets) runs with it
    contrapro_in_workflow: bool
    #: the module with ``load(model, data, **options)``, ``check(model, data, level, ...)``,
    #: ``searcher(model, beam, lenpen, batch_size, max_len, max_tokens, cache_bytes)`` and ``check_cli(parser, args)``
    #: (docnmt-check-model)
    module: str
    #: how the tables' notes name the backend's models (None: the default backend, no note), and what they say of
    #: what differs from the paper's search
    note: str | None = None
    note_detail: str = ""
    #: whether its prompt comes from a template (``--template``, config ``models.template``: a causal LM's)
    prompt_template: bool = False
    #: bench/decode's runner for this backend, ``module:function`` of a module in bench/ (None: bench/decode's own,
    #: which times fairseq checkpoints of a workflow directory)
    bench: str | None = None
    #: the default of ``--max-tokens``: the most positions one search batch holds (:func:`token_batches`)
    max_tokens: int = MAX_TOKENS
    #: what its searcher can do beyond greedy search (:data:`CAPABILITIES`); the workflow, the CLIs and the tables
    #: skip a strategy or table that needs what it cannot, with the reason in the notes. A capability given as a
    #: load option's name (a str) depends on that option: a served model scores forced targets where its endpoint
    #: gives prompt log-probs (``prompt_logprobs``)
    forced_scoring: bool | str = True
    beam_search: bool = True
    sampling: bool = True
    #: whether its searcher holds a prefix cache across requests, bounded by ``--cache-bytes`` (config
    #: ``decode.cache_bytes``)
    prefix_cache: bool = False
    #: its own environment (None: the project's ``.venv``, ``envs/fairseq.yaml``)
    environment: Environment | None = None
    #: the load options its models take beyond the shared ones (``load(..., **options)``), each a config key of
    #: ``models.engine`` and a CLI option (``--tensor-parallel-size`` for ``tensor_parallel_size``)
    load_options: tuple[str, ...] = ()
    #: the load option that says how many GPUs a decode takes (None: one)
    gpus_option: str | None = None
    #: the load option that is the share of the device's memory a model's engine reserves (None: none): a process
    #: that starts engines for n model folders (docnmt-translate's two levels) gives each a share its package's
    #: ``memory_share(n, given)`` says, so that the second does not find the memory taken
    memory_option: str | None = None
    #: whether its model is a name on a server (an OpenAI-compatible endpoint), not a file or folder: no model file
    #: is an input of a rule, and the sidecar records the endpoint's answer of who served it
    served: bool = False

    @property
    def conversation(self) -> bool:
        """Whether its prompt is a conversation (the strategies that need one: source-primed)."""
        return self.prompt_template

    def can(self, capability: str, options: dict | None = None) -> bool:
        """Whether it has a capability of :data:`CAPABILITIES` (``options``: the load options of the models in
        question, for a capability that depends on one)."""
        if capability not in CAPABILITIES:
            raise ValueError(f"unknown capability {capability!r}, expected one of {', '.join(CAPABILITIES)}")
        value = getattr(self, capability)
        return bool((options or {}).get(value)) if isinstance(value, str) else bool(value)

    def lacks(self, needs, options: dict | None = None) -> str | None:
        """Why it cannot serve something that ``needs`` these capabilities, in words (None: it can; ``options``: as
        :meth:`can`'s)."""
        missing = [CAPABILITIES[need] + (f" without {getattr(self, need)}: true" if isinstance(getattr(self, need), str)
                                         else "") for need in needs if not self.can(need, options)]
        return f"{self.name} models have no {' and no '.join(missing)}" if missing else None

    def gpus(self, options: dict | None = None) -> int:
        """The GPUs a decode with these load ``options`` asks for."""
        if self.gpus_option is None:
            return 1
        return int((options or {}).get(self.gpus_option) or 1)

    @property
    def plain_text(self) -> bool:
        return self.text == "plain"

    @property
    def default_tokenize(self) -> str:
        """The tokenizer applied before the model's own segmentation: Moses for BPE text, none for plain text."""
        return "none" if self.plain_text else "moses"

    def functions(self) -> BackendModule:
        """The backend's module (``load``, ``check``, ``searcher``, ``check_cli``), imported on first use."""
        return cast(BackendModule, importlib.import_module(self.module))


REGISTRY: dict[str, Backend] = {
    "fairseq": Backend(
        name="fairseq",
        summary="a fairseq checkpoint and its data folder (BPE-level text in and out; the default)",
        text="bpe", needs_data=True, language_codes=False, contrapro_in_workflow=True,
        module="docnmt.decode.backends.fairseq",
    ),
    "transformers": Backend(
        name="transformers",
        summary="a Hugging Face seq2seq save_pretrained folder (plain text in and out; its tokenizer segments it)",
        text="plain", needs_data=False, language_codes=True, contrapro_in_workflow=False,
        module="docnmt.decode.backends.transformers", note="Hugging Face",
        note_detail="their tokenizer's tokens and transformers' beam semantics (docs/decoding.md, 'Hugging Face "
                    "models (the transformers backend)')", bench="decode_transformers:transformers_benchmark",
    ),
    "causal-lm": Backend(
        name="causal-lm",
        summary="a decoder-only LLM's save_pretrained folder (plain text in and out; each sentence a turn of a "
                "conversation, its context earlier turns)",
        text="plain", needs_data=False, language_codes=True, contrapro_in_workflow=False, prompt_template=True,
        module="docnmt.decode.backends.causal_lm", note="causal LM",
        note_detail="a prompt of turns from a template, each context sentence an earlier turn, and generate's search "
                    "(docs/own-models.md, 'LLMs')",
        bench="decode_causal_lm:causal_lm_benchmark", max_tokens=32_768, prefix_cache=True,
    ),
    "vllm": Backend(
        name="vllm",
        summary="a decoder-only LLM's save_pretrained folder on vLLM's engine (causal-lm's prompts and strategies; "
                "continuous batching, automatic prefix caching, tensor parallelism over GPUs)",
        text="plain", needs_data=False, language_codes=True, contrapro_in_workflow=False, prompt_template=True,
        module="docnmt.decode.backends.vllm", note="vLLM",
        note_detail="causal-lm's prompts on vLLM's engine, whose beam search is its own (docs/own-models.md, "
                    "'LLMs on vLLM')",
        bench="decode_vllm:vllm_benchmark", max_tokens=32_768,
        environment=Environment(venv=".venv-vllm", make="make vllm", requirements="requirements-vllm.txt",
                                conda="../envs/vllm.yaml", modules=("vllm",)),
        load_options=("tensor_parallel_size", "gpu_memory_utilization", "max_model_len", "seed"),
        gpus_option="tensor_parallel_size", memory_option="gpu_memory_utilization",
    ),
    "openai": Backend(
        name="openai",
        summary="a model served behind an OpenAI-compatible endpoint (vllm serve, SGLang, llama.cpp's server, a "
                "hosted API): its name on the server, causal-lm's conversations as chat messages",
        text="plain", needs_data=False, language_codes=True, contrapro_in_workflow=False, prompt_template=True,
        module="docnmt.decode.backends.openai", note="served",
        note_detail="causal-lm's conversations sent as chat messages to an OpenAI-compatible endpoint, greedy (no "
                    "beam search in the API), its cost the tokens the server reports; a hosted model may change "
                    "behind its name (docs/own-models.md, 'Served models')",
        bench="decode_openai:openai_benchmark", max_tokens=32_768, forced_scoring="prompt_logprobs", beam_search=False, sampling=False,
        load_options=("base_url", "api_key_env", "max_concurrency", "timeout", "max_retries", "retry_backoff",
                      "temperature", "seed", "prompt_logprobs"),
        served=True,
    ),
}

#: The backend of a model that says none, and of the workflow's own models.
DEFAULT = "fairseq"


def backend(name: str) -> Backend:
    """The description registered under ``name``; a ValueError listing the names where none is."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown backend {name!r}, expected one of {', '.join(REGISTRY)}") from None


def backend_of(model) -> Backend:
    """The description of a loaded model's backend."""
    return backend(getattr(model, "backend", DEFAULT))


def names(where, joiner: str = " and ") -> str:
    """The registered backends whose description ``where`` accepts, named for a message ("fairseq, transformers and
    causal-lm": ``joiner`` before the last)."""
    found = [name for name, described in REGISTRY.items() if where(described)]
    return joiner.join([", ".join(found[:-1]), found[-1]] if len(found) > 2 else found)

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
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol, Sequence, cast, runtime_checkable

from .textio import InputError


# ---- the types every backend shares ----------------------------------------------------------------------------
@dataclass
class Scored:
    """Log-probability (natural log) of a scored part of a target and its token count (``</s>`` included)."""

    logprob: float
    tokens: int


#: ``--dtype`` names and their torch dtypes.
DTYPES = {"float32": "float32", "fp32": "float32", "float16": "float16", "fp16": "float16",
          "bfloat16": "bfloat16", "bf16": "bfloat16"}
#: The search's and forced scoring's precision unless asked otherwise, on every device: fairseq's
#: default (fairseq-generate runs in float32 without --fp16), as the paper searched. Half precision
#: is an option (``--dtype``, config ``decode.dtype``); the tables' notes name it where it was used.
DEFAULT_DTYPE = "float32"
#: The dtype a served model's decodes record: its precision is the server's, which the endpoint does not report.
SERVED_DTYPE = "served"


def resolve_dtype(dtype: str | None, device: str | None = None) -> str:
    """The dtype name a model runs in: ``dtype`` (an alias of :data:`DTYPES`), float32 when None, on any device."""
    if dtype is None:
        return DEFAULT_DTYPE
    if dtype not in DTYPES:
        raise ValueError(f"unknown dtype {dtype!r}, expected one of {', '.join(DTYPES)}")
    return DTYPES[dtype]


@dataclass(frozen=True)
class Request:
    """One search: source ids (ending in ``</s>``) and a forced target prefix (no ``</s>``)."""

    source: Sequence[int]
    prefix: Sequence[int] = field(default_factory=tuple)
    #: a prompting backend's whole source document, given before the conversation (source-primed; its sentences
    #: apart by the model's ``sep``); empty for every other strategy and backend
    document: Sequence[int] = field(default_factory=tuple)
    #: the source line (0-based, in the decode's source file) whose translation the request searches, where the
    #: strategy knows it: a backend's error about one request names it (:class:`RequestError`); not compared
    line: int | None = field(default=None, compare=False)


class RequestError(InputError):
    """A request that failed for a reason of its own (a served model's endpoint gave up on it): names the endpoint
    (``where``) and, where known, the source line of the request (:attr:`Request.line`, 0-based). The decode CLI names
    the document and sentence of that line (:meth:`located`)."""

    def __init__(self, where: str, message: str, request_line: int | None = None):
        self.request_line = request_line
        self.where, self.what = where, message
        super().__init__(where, message)

    def located(self, docs) -> "RequestError":
        """The error with the request's document and sentence named (``docs``: the decode's documents)."""
        if self.request_line is None:
            return self
        for doc in docs:
            if self.request_line in doc.lines:
                place = (f"the request of document {doc.docid}, sentence {doc.lines.index(self.request_line) + 1} "
                         f"(source line {self.request_line + 1})")
                return RequestError(self.where, f"{place}: {self.what}", None)
        return RequestError(self.where, f"the request of source line {self.request_line + 1}: {self.what}", None)


@dataclass
class Hypothesis:
    """A continuation after the prefix: ``tokens`` without ``</s>``; ``score`` is fairseq's
    length-normalized score, ``logprob`` the sum of the generated tokens' log-probs (``</s>`` included).

    ``complete``: whether it is the answer the request asked for, which MBR selection chooses among
    (:meth:`docnmt.decode.selection.Selector.select`). A causal LM's answer is complete where it ended with the end of
    its turn and has as many lines as the request's last message; an encoder-decoder's hypotheses end with ``</s>``
    and are always complete."""

    tokens: list[int]
    score: float
    logprob: float
    complete: bool = True


#: The most positions one batch of a search may hold (:func:`token_batches`): beam x (source + prefix + the
#: hypothesis' token limit) per request, times its requests. With the default limit of 200 tokens a hypothesis, the
#: paper's sentence windows fill the 64 requests of a batch; long windows (a whole document) give smaller batches.
#: An encoder-decoder's default; a causal LM, whose keys and values per position are far larger, has its own
#: (:attr:`Backend.max_tokens`).
MAX_TOKENS = 400_000


def token_batches(order: Sequence[int], size, max_tokens: int | None = MAX_TOKENS, max_requests: int = 64,
                  together=None):
    """Consecutive runs of ``order`` as batches: each at most ``max_requests`` requests and, padded to its largest,
    at most ``max_tokens`` positions (``size(i)``: request i's positions; a request larger than the limit alone is a
    batch of its own); ``together(i, j)``: whether request j may join a batch that begins with request i."""
    batch: list[int] = []
    largest = 0
    for i in order:
        grown = max(largest, size(i))
        if batch and (len(batch) == max_requests or (max_tokens is not None and grown * (len(batch) + 1) > max_tokens)
                      or (together is not None and not together(batch[0], i))):
            yield batch
            batch, grown = [], size(i)
        batch.append(i)
        largest = grown
    if batch:
        yield batch


class Counted:
    """The cost counters every backend's searcher keeps (docnmt.decode.backends.fairseq.search's docstring, "Cost counters"), and
    its progress hook: ``on_batch``, where set, is called with the number of requests of each batch once that
    batch is searched (``docnmt-translate`` prints its progress lines from it)."""

    track_cache: bool = False  # measure cache_bytes_peak (bench/decode)
    on_batch: Callable[[int], None] | None = None
    forward_calls: int = 0
    decoder_positions: int = 0
    #: batches split in two because they ran out of the device's memory (:meth:`searched_in_halves`)
    oom_splits: int = 0
    max_tokens: int | None = None

    def batch_done(self, requests: int) -> None:
        """What a searcher calls after each batch it searched: the progress hook, if any."""
        if self.on_batch is not None:
            self.on_batch(requests)

    def searched_in_halves(self, batch: list[int], search: Callable[[list[int]], list],
                           positions: Callable[[int], int]) -> list:
        """``search(batch)``, a batch of request numbers; where it runs out of the device's memory
        (``torch.OutOfMemoryError``), the batch split in two and each half searched so, down to one request, whose
        running out of memory is an InputError naming the request's positions (``positions(i)``: beam x (source or
        prompt + prefix + answer limit)) and ``--max-tokens``. Each split is counted (:attr:`oom_splits`). The
        output is the same as far as a request's search does not depend on its batch (in float32 a causal LM's does
        not; fairseq's scores may move in their last bits, docnmt.decode.backends.fairseq.search, "Batches")."""
        import sys

        try:
            return search(batch)
        except Exception as err:  # torch.OutOfMemoryError, by name: this module imports no torch (the scorers')
            if type(err).__name__ != "OutOfMemoryError":
                raise
        # out of the handler: its traceback held the failed batch's tensors
        torch = sys.modules.get("torch")
        if torch is not None and torch.cuda.is_available():
            torch.cuda.empty_cache()
        if len(batch) == 1:
            limit = "the backend's default" if self.max_tokens is None else self.max_tokens
            raise InputError(f"request {batch[0] + 1}", f"one request of {positions(batch[0])} positions (beam x "
                                                        f"(source or prompt + prefix + answer limit)) runs out of the "
                                                        f"device's memory alone (--max-tokens {limit} bounds batches, "
                                                        "not a request): lower --beam or --max-len-b, shorten the "
                                                        "context, or use a device with more memory")
        self.oom_splits += 1
        half = len(batch) // 2
        return (self.searched_in_halves(batch[:half], search, positions)
                + self.searched_in_halves(batch[half:], search, positions))

    def prompt_counters(self) -> dict:
        """The counters of a searcher that prompts a model with a cache (a causal LM's): tokens prefilled, read from
        the cache and generated; none for the others (Table 1 shows them where a decode recorded them)."""
        return {}

    def reset_counters(self) -> None:
        self.forward_calls = 0
        self.decoder_positions = 0
        self.oom_splits = 0
        self.encoder_positions = 0
        self.cache_bytes_peak = 0


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

"""What the strategies, the CLIs, the config and the workflow know of a model backend: the interface of its model
and searcher (:class:`ModelLike`, :class:`SearcherLike`) and of its package's entry points (:class:`BackendModule`), its
description (:class:`Backend`), and the registry (:data:`REGISTRY`, :func:`register`).

Each backend declares itself next to its code: its package's ``__init__`` registers one :class:`Backend` (its text,
capabilities, typed load options, cost columns, environment, notes) with ``BACKEND = register(Backend(...))`` and
defines ``load``, ``check``, ``searcher`` and ``check_cli``. The registry imports the built-in packages
(every package of :data:`BUILTIN_PACKAGE`, :func:`builtin`) and those :data:`PLUGINS_ENV` names on first use. Nothing outside a backend's package compares its
name: code that must act differently by backend asks the description (does the model read the workflow's BPE text,
does it need a data folder, ...), and :mod:`docnmt.decode.backends` loads, checks and searches through the package's
entry points (``docs/development.md``, "Adding a backend").
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass, fields
from typing import Any, Callable, Iterator, MutableMapping, Protocol, Sequence, cast, runtime_checkable

from docnmt.installation import Environment

from .requests import MAX_TOKENS, Hypothesis, Request, Scored


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
        """The prompt's template (a causal LM's :class:`~docnmt.decode.prompting.template.Template`), or
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
    #: its greedy search verifies the requests' drafts where it can (:mod:`docnmt.decode.verification`)
    verify_drafts: bool

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

    def draft_counters(self) -> dict:
        """What draft verification did, where it verified a draft (else empty)."""
        ...

    def reset_counters(self) -> None: ...


class BackendModule(Protocol):
    """A backend package's entry points (:attr:`Backend.module`), which :mod:`docnmt.decode.backends` calls; each
    package asks mypy to check it against this (``_conforms: BackendModule = <the package>`` under TYPE_CHECKING).

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
    "contrastive": "context-aware decoding (each step's scores under two prompts)",
    "verify_drafts": "draft verification (a greedy search checks a draft in one pass: docnmt.decode.verification)",
    "speculative": "n-gram speculative decoding in its engine (decode.speculative: ngram)",
}


#: ``decode.speculative`` (``--speculative``): none, or speculative decoding with drafts looked up in the prompt by
#: a backend's engine (capability ``speculative``; vLLM's ngram method: :data:`docnmt.decode.backends.vllm.model.NGRAM`)
SPECULATIVE = ("none", "ngram")


@dataclass(frozen=True)
class CostColumns:
    """Table 1's columns of a backend's own cost counters (:meth:`Counted.prompt_counters`'s, or a served model's),
    each with its ratio to sentence-level: the sidecar keys and their columns' names, the table's note on them and,
    where the backend's decodes have a price, how it is computed from the counts."""

    #: (sidecar key, column name) pairs, in the table's order; a task gets the columns where one of its sidecars has
    #: the first key
    counters: tuple[tuple[str, str], ...]
    #: the table's note on the columns
    note: str
    #: whether a decode's first pass (2-pass's sentence-level) is counted in (its sidecar's ``first_pass``)
    with_first_pass: bool = False
    #: the price of counts at the task's prices per million tokens (``models.<options_key>.prices``), or None
    price: Callable[[dict, dict], float] | None = None
    #: the names of those prices, in the cost note's order, and the config key under a task that holds them
    price_names: tuple[str, ...] = ()
    prices_key: str = ""

    def counts(self, entry: dict) -> dict[str, int]:
        """A sidecar's counts of these counters (with its first pass's, :attr:`with_first_pass`)."""
        first = (entry.get("first_pass") or {}) if self.with_first_pass else {}
        return {key: int(entry[key]) + int(first.get(key) or 0) for key, _ in self.counters if key in entry}


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
    #: whether its searcher scores each step of a request and of its contrast side by side (``Request.contrast``:
    #: context-aware decoding, :mod:`docnmt.decode.contrastive`)
    contrastive: bool = False
    #: whether its greedy search verifies its requests' drafts in one teacher-forced pass (``Request.draft``,
    #: :mod:`docnmt.decode.verification`)
    verify_drafts: bool = False
    #: whether its engine decodes speculatively with drafts looked up in the prompt (``decode.speculative: ngram``;
    #: the load option ``speculative``)
    speculative: bool = False
    #: whether its searcher holds a prefix cache across requests, bounded by ``--cache-bytes`` (config
    #: ``decode.cache_bytes``)
    prefix_cache: bool = False
    #: its own environment (None: the project's ``.venv``, ``envs/models.yaml``)
    environment: Environment | None = None
    #: the typed dataclass of the load options its models take beyond the shared ones (``load(..., **options)``;
    #: None: none), each field made with :func:`docnmt.decode.load_options.option`: its type and help feed ``--engine-args``,
    #: the config's schema (``models.<options_key>``) and the docs (:mod:`docnmt.decode.load_options`)
    options: type | None = None
    #: the key of a task's ``models:`` block that holds those options: ``engine_args`` (an engine's), or ``endpoint``
    #: (a served model's)
    options_key: str = "engine_args"
    #: Table 1's columns of its own cost counters (None: the shared counters only)
    cost: CostColumns | None = None
    #: the command-line tools its package brings beyond the backend seam (module: what it is for), which the manual
    #: lists (:mod:`docnmt.manual`, stage "own models", no rule)
    tools: tuple[tuple[str, str], ...] = ()
    #: the load option that says how many GPUs a decode takes (None: one)
    gpus_option: str | None = None
    #: the load option that is the share of the device's memory a model's engine reserves (None: none): a process
    #: that starts engines for n model folders (docnmt-translate's two levels) gives each a share its package's
    #: ``memory_share(n, given)`` says, so that the second does not find the memory taken
    memory_option: str | None = None
    #: whether its model is a name on a server (an OpenAI-compatible endpoint), not a file or folder: no model file
    #: is an input of a rule, and the sidecar records the endpoint's answer of who served it
    served: bool = False
    #: where messages, help texts and the docs name it among the backends (lower first; equal: by name)
    order: int = 100

    @property
    def load_options(self) -> tuple[str, ...]:
        """The names of its load options (:attr:`options`' fields)."""
        return tuple(f.name for f in fields(self.options)) if self.options is not None else ()

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


#: The package whose subpackages are the backends that come with the project: each registers its description in its
#: ``__init__`` (:func:`register`), and is found by walking this package (:func:`builtin`), so that a new built-in
#: backend is its package and nothing else.
BUILTIN_PACKAGE = "docnmt.decode.backends"


def builtin() -> tuple[str, ...]:
    """The built-in backends' packages: every subpackage of :data:`BUILTIN_PACKAGE` (a module there, such as
    ``encoder_decoder``, is a helper the packages share)."""
    import pkgutil

    package = importlib.import_module(BUILTIN_PACKAGE)
    return tuple(sorted(info.name for info in pkgutil.iter_modules(package.__path__) if info.ispkg))


#: The environment variable that names more backend packages (importable modules, comma-separated; e.g. one of
#: one's own on PYTHONPATH), each registering its description as the built-in ones do.
PLUGINS_ENV = "DOCNMT_BACKENDS"


class Registry(MutableMapping[str, Backend]):
    """The registered backends by name, in the order they registered. It fills itself on first use: it imports the
    built-in packages (:func:`builtin`), then those :data:`PLUGINS_ENV` names; each calls :func:`register`. A
    package imports its own modules, none of which imports a framework (torch, transformers, vLLM, the openai
    client) before a model is loaded."""

    def __init__(self) -> None:
        self._entries: dict[str, Backend] = {}
        self._filled = False

    def add(self, described: Backend) -> Backend:
        if described.name in self._entries and self._entries[described.name].module != described.module:
            raise ValueError(f"backend {described.name!r} is registered twice: by {self._entries[described.name].module} "
                             f"and by {described.module}")
        self._entries[described.name] = described
        return described

    def _fill(self) -> None:
        if self._filled:
            return
        self._filled = True
        for package in builtin():
            importlib.import_module(f"{BUILTIN_PACKAGE}.{package}")
        for module in filter(None, (part.strip() for part in os.environ.get(PLUGINS_ENV, "").split(","))):
            try:
                importlib.import_module(module)
            except Exception as err:  # noqa: BLE001 - any failure of a plugin's import, in one line
                from ..textio import InputError

                raise InputError(PLUGINS_ENV, f"the backend package {module!r} does not import "
                                              f"({type(err).__name__}: {err})") from err

    def __getitem__(self, name: str) -> Backend:
        self._fill()
        return self._entries[name]

    def __iter__(self) -> Iterator[str]:
        """The names in their descriptions' :attr:`Backend.order` (the built-in backends declare theirs), then as
        they registered."""
        self._fill()
        position = {name: (described.order, n) for n, (name, described) in enumerate(self._entries.items())}
        return iter(sorted(self._entries, key=position.__getitem__))

    def __len__(self) -> int:
        self._fill()
        return len(self._entries)

    def __setitem__(self, name: str, described: Backend) -> None:  # a test's stand-in (monkeypatch.setitem)
        self._fill()
        self._entries[name] = described

    def __delitem__(self, name: str) -> None:
        self._fill()
        del self._entries[name]


#: Every registered backend by name (:class:`Registry`).
REGISTRY = Registry()


def register(described: Backend) -> Backend:
    """Register a backend's description under its name (a backend package's ``__init__`` calls it once, next to its
    code: ``BACKEND = register(Backend(...))``); a ValueError where another package took the name."""
    return REGISTRY.add(described)


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

"""The model backends of the search behind one interface (:mod:`docnmt.decode.backend`): fairseq checkpoints
(:mod:`docnmt.decode.backends.fairseq`), Hugging Face seq2seq models (:mod:`docnmt.decode.backends.transformers`),
decoder-only LLMs in-process (:mod:`docnmt.decode.backends.causal_lm`) and on vLLM's engine
(:mod:`docnmt.decode.backends.vllm`), and served models (:mod:`docnmt.decode.backends.openai`): each a subpackage that
registers itself in :data:`docnmt.decode.backend.REGISTRY`.

A backend's model encodes text to token ids and back (``encode``, ``decode``), knows its separator's id
(``sep``) and its ``max_positions``, and scores forced targets (``score``). Its searcher searches requests
(source ids and a forced target context, :class:`docnmt.decode.requests.Request`) and counts decoder positions
and forward calls (:mod:`docnmt.decode.backend`). :func:`load_model`, :func:`make_searcher` and :func:`check`
dispatch through the backends' registry; the strategies and ``translate`` work with what they return.

What differs between the backends is the text they read. A fairseq model reads BPE-level text (the workflow's
Moses tokenization and subword-nmt BPE, or ``--codes``); a transformers model and a causal LM read plain text,
which their own tokenizer segments (a causal LM's as the turns of a conversation, :mod:`docnmt.decode.prompting`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

from ... import SEP
from ..backend import SPECULATIVE, backend, backend_of, names


def load_model(name: str, model: os.PathLike | str, data: os.PathLike | str | None = None, *,
               device: str | None = None, dtype: str | None = None, separator: str = SEP,
               src_lang: str | None = None, tgt_lang: str | None = None, template: str | None = None,
               engine: dict | None = None, speculative: str = "none"):
    """A model of the backend registered as ``name``: a fairseq checkpoint with its ``data`` folder (dictionaries),
    a transformers model folder (``src_lang``/``tgt_lang``: the language codes of a model with language tokens), or
    a causal LM's folder (``src_lang``/``tgt_lang``: the languages its prompt names; ``template``: the prompt's);
    ``engine``: the backend's own load options (:attr:`~docnmt.decode.backend.Backend.load_options`, e.g. vLLM's
    ``tensor_parallel_size``); ``speculative``: ngram for an engine's n-gram speculative decoding
    (:data:`SPECULATIVE`; a ValueError for a backend without it), none (the default) for none."""
    options = {**_template(name, template), **engine_options(name, engine), **speculative_option(name, speculative)}
    return backend(name).functions().load(model, data, device=device, dtype=dtype, separator=separator,
                                          src_lang=src_lang, tgt_lang=tgt_lang, **options)


def engine_options(name: str, engine: dict | None) -> dict:
    """The load options of ``engine`` that are set (not None); a ValueError naming any the backend does not take."""
    given = {key: value for key, value in (engine or {}).items() if value is not None}
    unknown = sorted(set(given) - set(backend(name).load_options))
    if unknown:
        takes = names(lambda b: bool(set(unknown) & set(b.load_options)), " or ")
        raise ValueError(f"{', '.join(unknown)}: for {takes or 'no'} models, not {name}")
    return given


def speculative_option(name: str, speculative: str) -> dict:
    """``speculative`` as a load keyword for a backend whose engine has it; a ValueError in one line otherwise."""
    if speculative not in SPECULATIVE:
        raise ValueError(f"speculative decoding {speculative!r}: expected one of {', '.join(SPECULATIVE)}")
    if speculative == "none":
        return {}
    described = backend(name)
    if not described.can("speculative"):
        raise ValueError(f"speculative decoding {speculative!r} is for {names(lambda b: b.can('speculative'), ' or ')} "
                         f"models, not {name} (at beam 1, decode.verify_drafts verifies the strategies' drafts "
                         f"where a backend decodes in-process)")
    return {"speculative": speculative}


def _template(name: str, template: str | None) -> dict:
    """``template`` as a keyword for a backend whose prompt comes from one; a ValueError for another backend."""
    if backend(name).prompt_template:
        return {"template": template}
    if template is not None:
        raise ValueError(f"a prompt template is for {names(lambda b: b.prompt_template, ' or ')} models, not "
                         f"{name}")
    return {}


def make_searcher(model, beam: int = 12, lenpen: float = 1.0, batch_size: int = 64, max_len: int = 200,
                  max_tokens: int | None = None, cache_bytes: int | None = None, verify_drafts: bool = True):
    """The searcher of ``model``'s backend: fairseq's beam semantics, or transformers' (``generate``'s); ``max_len``:
    the most tokens a hypothesis may have (fairseq's ``max_len_b`` with ``max_len_a`` 0, transformers'
    ``max_new_tokens``); a batch holds at most ``batch_size`` requests and ``max_tokens`` positions
    (:func:`docnmt.decode.requests.token_batches`; None: the backend's default, :attr:`~docnmt.decode.backend.Backend.max_tokens`);
    ``cache_bytes``: the limit of a backend's prefix cache (:attr:`~docnmt.decode.backend.Backend.prefix_cache`; None: its
    default), a ValueError for a backend without one; ``verify_drafts``: its greedy search verifies the requests'
    drafts where the backend can (:mod:`docnmt.decode.verification`; the output is the same)."""
    described = backend_of(model)
    if cache_bytes is not None and not described.prefix_cache:
        raise ValueError(f"{described.name} models hold no prefix cache across requests: no cache limit to set")
    made = described.functions().searcher(model, beam, lenpen, batch_size, max_len, max_tokens or described.max_tokens,
                                          cache_bytes)
    made.verify_drafts = verify_drafts and described.can("verify_drafts")
    return made


def check(name: str, model: os.PathLike | str, data: os.PathLike | str | None, level: str, separator: str = SEP,
          k: int | None = None, src_lang: str | None = None, tgt_lang: str | None = None,
          sample: Sequence[os.PathLike | str] = (), template: str | None = None, engine: dict | None = None) -> dict:
    """The checks of a model before any decode (:mod:`docnmt.decode.checks`); its report, or an InputError."""
    return backend(name).functions().check(model, data, level, separator, k, src_lang, tgt_lang, sample,
                                           **_template(name, template), **engine_options(name, engine))


def model_from_args(parser, args, model: Path | None = None, data: Path | None = None, **languages):
    """The model a CLI's arguments name (``--backend``, ``--model``, ``--data``, ``--dtype``, ``--separator``;
    ``model``/``data``: another pair of them, e.g. the sentence-level model's). A parser error where a fairseq
    model lacks its data folder or a transformers model has one; ``languages``: ``src_lang``/``tgt_lang`` of a
    transformers model with language tokens."""
    model = args.model if model is None else model
    data = args.data if data is None and model is args.model else data
    described = backend(args.backend)
    if described.needs_data and data is None:
        parser.error(f"{model}: a {described.name} model needs its data folder (--data), or use --backend "
                     f"{names(lambda other: not other.needs_data, ' or ')}")
    if not described.needs_data and data is not None:
        parser.error(f"{data}: a data folder is for {names(lambda other: other.needs_data)} models; --backend "
                     f"{described.name} takes {described.summary}")
    template = getattr(args, "template", None)
    if template is not None and not described.prompt_template:
        parser.error(f"--template is for {names(lambda other: other.prompt_template, ' or ')} models")
    from ..arguments import engine_args_of

    engine = args.engine_args = engine_args_of(args, parser)  # read by its backend (the journal's key: typed)
    try:
        engine_options(args.backend, engine)
    except ValueError as err:
        parser.error(f"--engine-args {err}")
    return load_model(args.backend, model, data, device=getattr(args, "device", None), dtype=args.dtype,
                      separator=args.separator, template=template, engine=engine,
                      speculative=checked_speculative(parser, args), **languages)


def checked_speculative(parser, args) -> str:
    """A CLI's ``--speculative`` (none where it has none); a parser error in one line for a backend without it."""
    speculative = getattr(args, "speculative", "none")
    try:
        speculative_option(args.backend, speculative)
    except ValueError as err:
        parser.error(f"--speculative: {err}")
    return speculative


def read_config(folder: Path, expected: str):
    """The transformers config of a ``save_pretrained`` folder; an InputError naming the folder (``expected``: what
    it should hold) where it has no config.json, or naming the file where it cannot be read."""
    from transformers import AutoConfig

    from ...textio import InputError

    if not (folder / "config.json").is_file():
        raise InputError(folder, f"expected {expected}, found no config.json")
    try:
        return AutoConfig.from_pretrained(folder, local_files_only=True)
    except Exception as err:  # noqa: BLE001
        raise InputError(folder / "config.json", f"could not read the model's config ({type(err).__name__}: {err})"
                         ) from None


def load_tokenizer(folder: Path):
    """The tokenizer saved in ``folder``; an InputError naming it where it cannot be loaded."""
    from transformers import AutoTokenizer

    from ...textio import InputError

    try:
        return AutoTokenizer.from_pretrained(folder, local_files_only=True)
    except Exception as err:  # noqa: BLE001
        raise InputError(folder, f"could not load the tokenizer ({type(err).__name__}: {err})") from None


def pretrained(auto_class: str, folder: Path, device: str | None, dtype: str | None):
    """A Hugging Face model of ``folder`` (``transformers.<auto_class>``, local files only) on ``device`` (default:
    CUDA if available) in ``dtype`` (default float32), in eval mode: (model, device, dtype name); an InputError naming
    the folder where it does not load. The transformers and causal-LM backends load with it."""
    import torch
    import transformers

    from ..requests import DEFAULT_DTYPE, resolve_dtype
    from ...textio import InputError

    try:
        net = getattr(transformers, auto_class).from_pretrained(folder, local_files_only=True)
    except Exception as err:  # noqa: BLE001
        raise InputError(folder, f"could not load the model ({type(err).__name__}: {err})") from None
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    dtype = resolve_dtype(dtype or DEFAULT_DTYPE, device)
    return net.to(device=device, dtype=getattr(torch, dtype)).eval(), device, dtype

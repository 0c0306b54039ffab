"""The command-line arguments the decoding and scoring CLIs share: the backend (:data:`docnmt.decode.backend.REGISTRY`),
language codes, dtype, separator, the search's settings and a forced-scoring model."""

from __future__ import annotations

from pathlib import Path

from .. import SEP
from .backend import REGISTRY, SPECULATIVE, names
from .requests import DEFAULT_DTYPE, DTYPES
from ..option_ranges import FINITE, POSITIVE_INT


def add_backend_argument(parser) -> None:
    """``--backend``: which registered backend (:data:`docnmt.decode.backend.REGISTRY`) the CLI's ``--model`` (and
    ``--*-model``) is, fairseq unless given."""
    from .backend import DEFAULT, REGISTRY

    parser.add_argument("--backend", default=DEFAULT, choices=list(REGISTRY),
                        help="; ".join(f"{name}: {b.summary}" for name, b in REGISTRY.items()))


def add_language_code_arguments(parser) -> None:
    """``--src-lang``/``--tgt-lang`` where they only name a plain-text model's languages (a transformers model's
    language codes, a causal LM's prompt languages), and ``--template``, a causal LM's prompt."""
    parser.add_argument("--src-lang", help="transformers: the source language code of a model with language tokens "
                                           "(e.g. eng_Latn for NLLB, en for M2M100, en_XX for mBART-50); causal-lm: "
                                           "the source language its prompt names (a code such as en, or a name)")
    parser.add_argument("--tgt-lang", help="transformers: the target language code of such a model; causal-lm: the "
                                           "target language its prompt names")
    add_template_argument(parser)


def add_template_argument(parser) -> None:
    """``--template``: a causal LM's prompt (a name of the repository's templates or a YAML file of one's own); and
    ``--engine-args``, a backend's own load options (:attr:`docnmt.decode.backend.Backend.options`), with a flag of its
    own for each option that declares one (``--base-url``)."""
    from .load_options import flagged_options, specs

    parser.add_argument("--template", help=names(lambda b: b.prompt_template, ", ") + ": the prompt's template, a "
                                           "name of the repository's (translate, translate-no-system) or a YAML file "
                                           "(default: translate, through the tokenizer's chat template)")
    takes = [b for b in REGISTRY.values() if b.options is not None]
    parser.add_argument("--engine-args", default=None, metavar="KEY=VALUE,...",
                        help="the load options of a backend's models (the engine's or the endpoint's): " + "; ".join(
                            f"{b.name}: " + ", ".join(f"{name} ({spec.kind.__name__})"
                                                      for name, spec in specs(b.options).items()) for b in takes)
                        + " (docs/own-models.md)")
    for name, spec in flagged_options().items():
        owners = " or ".join(b.name for b in takes if name in b.load_options)
        parser.add_argument(spec.cli_flag, metavar=name.split("_")[-1].upper(), help=f"{owners}: {spec.help}")


def engine_args_of(args, parser=None) -> dict:
    """The load options a CLI's arguments give for its ``--backend``: ``--engine-args`` (text, read by the backend's
    declaration; or a dict, a task's config), with the options that have flags of their own (``--base-url``); a
    parser error (or, without ``parser``, a ValueError) naming an option the backend does not take or a value of the
    wrong type."""
    from .backend import backend
    from .load_options import flagged_options, parse_load_options

    given = getattr(args, "engine_args", None)
    try:
        if isinstance(given, dict):
            engine = dict(given)
        else:
            described = backend(args.backend)
            engine = parse_load_options(given, described.options, described.name)
    except ValueError as err:
        if parser is None:
            raise
        parser.error(str(err))
    for key in flagged_options():
        if getattr(args, key, None) is not None:
            engine[key] = getattr(args, key)
    return engine


def add_dtype_argument(parser) -> None:
    """``--dtype``: the precision of the search and of forced scoring (float32 by default, on every device)."""
    parser.add_argument("--dtype", default=DEFAULT_DTYPE, choices=list(DTYPES),
                        help="the model's dtype in the search and forced scoring (default float32 on every device, "
                             "as fairseq and the paper; float16/bfloat16 are faster on a GPU and may change outputs)")


def add_separator_argument(parser) -> None:
    """``--separator``: the token the document-level model was trained with between sentences."""
    parser.add_argument("--separator", default=SEP,
                        help="the separator token the model was trained with between a window's sentences "
                             "(default <sep>; e.g. <brk> for a model trained elsewhere)")


def add_search_arguments(parser) -> None:
    """The search settings every decoding CLI shares: beam, length penalty, k, h, batch size in requests and in
    positions, hypothesis length, device, dtype and separator."""
    parser.add_argument("--beam", type=POSITIVE_INT, default=12, help="token-level beam size (the paper: 12)")
    parser.add_argument("--lenpen", type=FINITE, default=1.0, help="length penalty (1: length normalization)")
    parser.add_argument("--k", type=POSITIVE_INT, default=3, help="sentences per window the document-level model knows")
    parser.add_argument("--h", type=POSITIVE_INT, default=12, help="document contexts kept by doc-trans-beam")
    parser.add_argument("--context", default="window", choices=["window", "document"],
                        help="window: the k-1 previous sentences (the paper's); document: every earlier sentence of "
                             "the document (full-segment: the whole document at once), for models with a long "
                             "context such as LLMs")
    parser.add_argument("--batch-size", type=POSITIVE_INT, default=64, help="at most this many requests a batch")
    parser.add_argument("--max-tokens", type=POSITIVE_INT,
                        help="at most this many positions a batch: beam x (source or prompt + forced prefix + "
                             "--max-len-b) a request, times its requests (default: the backend's: "
                             + ", ".join(f"{b.name} {b.max_tokens}" for b in REGISTRY.values()) + ")")
    parser.add_argument("--max-len-b", type=POSITIVE_INT, default=200,
                        help="at most this many tokens a hypothesis (fairseq-generate's --max-len-b, with "
                             "--max-len-a 0; transformers' max_new_tokens); default 200, as both")
    parser.add_argument("--cache-bytes", type=byte_size, metavar="BYTES",
                        help=names(lambda b: b.prefix_cache, ", ") + ": the most the prefix cache of earlier "
                             "prompts holds, in bytes (K, M, G: "
                             "binary multiples; 0: no cache); default: a fifth of a GPU's memory, 2G on the CPU")
    parser.add_argument("--device", help="cpu, cuda or cuda:N (default: cuda if available, else cpu)")
    parser.add_argument("--speculative", choices=SPECULATIVE, default="none",
                        help="ngram: the engine decodes speculatively, its drafts n-grams looked up in the prompt "
                             "(vllm; the same output under greedy search); default none")
    parser.add_argument("--no-verify-drafts", action="store_true",
                        help="at beam 1, decode every sentence again instead of verifying a draft of it in one pass "
                             "(2-pass's first pass, parallel doc-trans's last round): the same output, for "
                             "comparisons (docs/decoding.md, 'Draft verification')")
    add_dtype_argument(parser)
    add_separator_argument(parser)


#: The suffixes of :func:`byte_size`.
BYTE_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def byte_size(text: str) -> int:
    """A size in bytes: a number with an optional binary suffix K, M, G or T (``512M``, ``1.5G``)."""
    import argparse

    value = str(text).strip().upper().removesuffix("B").removesuffix("I")
    unit = value[-1:] if value[-1:] in BYTE_UNITS else ""
    try:
        number = float(value[:len(value) - len(unit)])
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a size in bytes such as 2G or 512M, found {text!r}") from None
    if number < 0:
        raise argparse.ArgumentTypeError(f"expected a size of 0 bytes or more, found {text!r}")
    return int(number * BYTE_UNITS[unit])


def check_cache_bytes(parser, args) -> None:
    """A parser error where ``--cache-bytes`` is given for a backend that holds no prefix cache."""
    if args.cache_bytes is not None and not REGISTRY[args.backend].prefix_cache:
        parser.error(f"--cache-bytes bounds a prefix cache held across requests; {args.backend} models hold none")


def add_scoring_model_arguments(parser) -> None:
    """CLI arguments of a forced-scoring tool: the backend, the model (and its dictionary), its level and k, the
    dtype (:func:`docnmt.decode.backends.model_from_args` loads it)."""
    add_backend_argument(parser)
    parser.add_argument("--model", required=True, type=Path, help="the checkpoint, or the transformers model folder")
    parser.add_argument("--data", type=Path, help="fairseq: the model's binarized data folder (dictionary)")
    parser.add_argument("--level", required=True, choices=["sentence", "document"])
    parser.add_argument("--k", type=POSITIVE_INT, default=3, help="sentences per document-level window")
    add_dtype_argument(parser)
    add_separator_argument(parser)

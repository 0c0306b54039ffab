"""Checks of a model trained elsewhere, before any decode: each failure is one line naming the file.

``docnmt-check-model`` runs the checks of the model's backend (the ``check`` of its entry in
:data:`docnmt.decode.backend.REGISTRY`): a fairseq checkpoint and its data folder
(:mod:`docnmt.decode.backends.fairseq.checks`: architecture, dictionaries, separator, k against the training data,
BPE codes), a Hugging Face seq2seq folder (:mod:`docnmt.decode.backends.transformers.checks`: config, tokenizer,
separator, language codes, the sample's lengths), or a causal LM's folder (:mod:`docnmt.decode.prompting.checks`:
a causal LM's config, tokenizer, the prompt's template and languages, the sample's prompts against the context
window). What every backend checks the same way lives here: k (:func:`check_k`), the fairseq options the others
refuse (:func:`no_fairseq_files`), and the report's JSON and OK line (:func:`reported`).

CLI (writes the report as JSON; exit status 1 with the error line otherwise)::

    python -m docnmt.decode.checks --model doc.pt --data data-bin --level document --separator '<brk>' --k 3 \
        [--codes bpe.codes --sample test.tok.en [test.tok.de]] [--output check.json]
    python -m docnmt.decode.checks --backend transformers --model my-doc-model --level document \
        --separator '<brk>' --k 3 [--src-lang eng_Latn --tgt-lang deu_Latn] [--sample test.en] [--output check.json]
    python -m docnmt.decode.checks --backend causal-lm --model my-llm --level document --k 3 --src-lang en \
        --tgt-lang de [--template my-template.yaml] [--sample test.en] [--output check.json]
"""

from __future__ import annotations

import json
from pathlib import Path

from .. import SEP
from ..textio import InputError, atomic_write, cli_errors
from ..manual import argument_parser
from .arguments import add_backend_argument, add_language_code_arguments
from ..option_ranges import FRACTION, POSITIVE_INT

#: Above this share of unknown BPE units in the sample, the codes do not fit the dictionary.
MAX_UNKNOWN = 0.05


def check_k(data: Path, dict_path: Path, level: str, k: int | None, per_example: float | None) -> None:
    if level != "document":
        return
    if k is None or k < 2:
        raise InputError(data, f"expected the window size k (>= 2) that the document-level model was trained with, "
                               f"found {k}")
    if per_example is not None and per_example > (k - 1) + 0.01:
        raise InputError(dict_path, f"the training data has {per_example:.2f} separators per example, more than a "
                                    f"{k}-sentence window holds (k-1 = {k - 1}): the model was trained with a larger k")


def write_report(output: Path | None, report: dict) -> None:
    if output:
        with atomic_write(output) as handle:
            json.dump(report, handle, indent=1)
            handle.write("\n")


def no_fairseq_files(parser, args, holder: str) -> None:
    """A parser error where ``--data`` or ``--codes`` (a fairseq model's) is given to a backend whose model has its
    own tokenizer (``holder``: what holds it)."""
    if args.data is not None or args.codes is not None:
        parser.error(f"--data and --codes are for fairseq models: {holder}")


def reported(output: Path | None, report: dict, line: str) -> int:
    """The end of every backend's ``check_cli``: its ``report`` written to ``output`` (where given, as JSON) and
    ``line`` printed with ": OK" after it; the exit status, 0."""
    write_report(output, report)
    print(f"{line}: OK")
    return 0


@cli_errors
def main(argv=None) -> int:
    parser = argument_parser("docnmt.decode.checks", __doc__.split("\n\n")[0])
    add_backend_argument(parser)
    parser.add_argument("--model", required=True, type=Path,
                        help="the fairseq checkpoint, or the transformers model folder")
    parser.add_argument("--data", type=Path, help="fairseq: its data folder (dict.SRC.txt, dict.TGT.txt)")
    add_language_code_arguments(parser)
    parser.add_argument("--level", required=True, choices=["sentence", "document"])
    parser.add_argument("--separator", default=SEP, help="the document-level model's separator token (default <sep>)")
    parser.add_argument("--k", type=POSITIVE_INT, help="sentences per window the document-level model was trained with")
    parser.add_argument("--codes", type=Path, help="BPE codes (subword-nmt) to check against the dictionary")
    parser.add_argument("--sample", type=Path, nargs="*", default=[],
                        help="fairseq: text to segment for the --codes check; transformers: raw text whose "
                             "sentences must fit the model's positions")
    parser.add_argument("--sample-tokenize", default="none", choices=["moses", "none"],
                        help="tokenize the sample first: moses (raw text) or none (already tokenized, the default)")
    parser.add_argument("--sample-lang", default="en", help="the sample's language (Moses rules)")
    parser.add_argument("--max-unknown", type=FRACTION, default=MAX_UNKNOWN,
                        help="the largest share of BPE units missing from the dictionary (default 0.05)")
    parser.add_argument("--output", type=Path, help="write the report (JSON) here")
    args = parser.parse_args(argv)
    from .backend import backend, names

    if args.template is not None and not backend(args.backend).prompt_template:
        parser.error(f"--template is for {names(lambda other: other.prompt_template, ' or ')} models")
    from .arguments import engine_args_of
    from .backends import engine_options

    args.engine_args = engine_args_of(args, parser)
    try:
        engine_options(args.backend, args.engine_args)
    except ValueError as err:
        parser.error(f"--engine-args {err}")
    return backend(args.backend).functions().check_cli(parser, args)




if __name__ == "__main__":
    main()

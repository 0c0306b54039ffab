"""ContraPro contrastive accuracy by forced scoring (Müller et al., 2018).

For every example, the correct target and each contrastive target (the same
sentence with another pronoun) are scored by the model, each with its context:

- sentence-level model: ``log p(E | F)`` of the sentence alone;
- document-level model: the source is the k-sentence window ending at the
  example sentence (up to k-1 left-context sentences of its document, joined
  by ``<sep>``), the target is the reference left context, ``<sep>``, then the
  candidate; only the candidate's tokens (after the last ``<sep>``, with
  ``</s>``) are scored. This is the model's training condition
  ``p(E_n | F_{n-k+1}^n, E_{n-k+1}^{n-1})``.

An example is correct only if its correct target scores strictly higher than
every contrastive target (a tie counts as wrong). Accuracy is reported
overall, by antecedent distance (0, 1, 2, 3, >3) and by reference pronoun.

With ``--cad ALPHA ...`` (document level) each candidate is also scored without context (the example sentence
alone, as no-context decodes it) and ranked by context-aware decoding's score, ``(1 + alpha) log p(y|x,c) -
alpha log p(y|x)`` (:mod:`docnmt.decode.contrastive`): the accuracy at each alpha is recorded (``cad``), the first
being the tables' CAD row. ``log p(y|x)`` differs between the candidates (their pronouns differ), so CAD can change
the decision; at alpha 0 it is the plain accuracy.

A Hugging Face model (``--backend transformers``, a model folder, no
``--data`` or ``--codes``) scores plain text: the contrastive targets as
ContraPro writes them, the mini-corpus as it is; its tokenizer segments both.

CLI::

    python -m docnmt.score.contrastive --model ckpt.pt --data bin/document --level document --k 3 \
        --src bpe/contrapro.en --tgt bpe/contrapro.de --examples contrapro.examples.jsonl \
        --codes bpe/codes --tgt-lang de --output accuracy.json
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from pathlib import Path
from typing import Sequence

from ..corpora.contrapro import ante_bucket, load_examples
from ..textio import InputError, atomic_write, cli_errors, read_lines
from ..preprocess.windows import join
from ..manual import argument_parser
from .metric import Metric


def decisions(correct: Sequence[float], contrastive: Sequence[Sequence[float]]) -> list[bool]:
    """Per example: is the correct score strictly higher than every contrastive score?"""
    return [all(c > other for other in others) for c, others in zip(correct, contrastive, strict=True)]


def accuracy_table(examples, correct: Sequence[bool]) -> dict:
    """Accuracy overall, by antecedent distance bucket and by reference pronoun."""
    def acc(flags):
        return {"correct": sum(flags), "total": len(flags), "accuracy": sum(flags) / len(flags) if flags else None}

    by_distance, by_pronoun = defaultdict(list), defaultdict(list)
    for example, flag in zip(examples, correct, strict=True):
        by_distance[ante_bucket(example.ante_distance)].append(flag)
        by_pronoun[example.ref_pronoun.lower()].append(flag)
    order = ["0", "1", "2", "3", ">3", "unknown"]
    return {
        "overall": acc(list(correct)),
        "by_ante_distance": {b: acc(by_distance[b]) for b in order if b in by_distance},
        "by_ref_pronoun": {p: acc(by_pronoun[p]) for p in sorted(by_pronoun)},
    }


def build_inputs(examples, src_lines: list[str], tgt_lines: list[str], candidates: list[list[str]], level: str, k: int):
    """Source and target strings to score: for each example, its correct target first, then the contrastive ones."""
    sources, targets, owners = [], [], []
    for n, (example, cands) in enumerate(zip(examples, candidates, strict=True)):
        line = example.line
        if level == "document":
            first = line - min(example.left, k - 1)
            source = join(src_lines[first:line + 1])
            prefix = tgt_lines[first:line]
        else:
            source, prefix = src_lines[line], []
        for cand in cands:
            sources.append(source)
            targets.append(join(prefix + [cand]))
            owners.append(n)
    return sources, targets, owners


@cli_errors
def main(argv=None) -> int:
    from ..decode.arguments import add_scoring_model_arguments
    from ..option_ranges import NONNEGATIVE, POSITIVE_INT

    parser = argument_parser("docnmt.score.contrastive", __doc__.split("\n\n")[0])
    add_scoring_model_arguments(parser)
    parser.add_argument("--src", required=True, type=Path, help="BPE source of the ContraPro mini-corpus")
    parser.add_argument("--tgt", required=True, type=Path, help="BPE target (reference) of the ContraPro mini-corpus")
    parser.add_argument("--examples", required=True, type=Path, help="contrapro.examples.jsonl")
    parser.add_argument("--codes", type=Path, help="fairseq: BPE codes (to encode the contrastive targets)")
    parser.add_argument("--tgt-lang", default="de", help="the target language (Moses rules; transformers: the "
                                                         "model's language code, where it has language tokens)")
    parser.add_argument("--src-lang", help="transformers: the model's source language code, where it has language "
                                           "tokens")
    parser.add_argument("--batch-size", type=POSITIVE_INT, default=64, help="at most this many scored targets a batch")
    parser.add_argument("--cad", type=NONNEGATIVE, nargs="+", metavar="ALPHA",
                        help="document level: also rank the candidates by (1 + ALPHA) log p(y|x,c) - ALPHA log p(y|x), "
                             "each ALPHA (the first: the tables' CAD row), the second term the sentence alone")
    parser.add_argument("--output", required=True, type=Path)
    args = parser.parse_args(argv)
    from ..decode.backend import backend

    hf = backend(args.backend).plain_text  # the targets as plain text, which the model's tokenizer segments
    if hf and args.codes is not None:
        parser.error("--codes is for fairseq models: a transformers model's tokenizer segments the plain targets")
    if not hf and args.codes is None:
        parser.error("--codes (the fairseq model's BPE codes, to encode the contrastive targets) is required")
    if args.cad and args.level != "document":
        parser.error("--cad: context-aware scoring contrasts the document model's context; give --level document")

    from ..preprocess import bpe, tokenize
    from ..decode.backends import model_from_args
    from ..startup import freeze_heap

    examples = load_examples(args.examples)
    src_lines, tgt_lines = read_lines(args.src), read_lines(args.tgt)
    if len(src_lines) != len(tgt_lines):
        raise InputError(args.tgt, f"expected {len(src_lines)} lines to match {args.src}, found {len(tgt_lines)}")
    for example in examples:
        if example.line >= len(src_lines):
            raise InputError(args.examples, f"example {example.index} points to line {example.line + 1}, past the end of {args.src}")
    if hf:  # plain text, as the mini-corpus is for such a model
        candidates = [[tgt_lines[e.line]] + list(e.contrastive) for e in examples]
    else:
        codes = bpe.load(args.codes)
        candidates = [[tgt_lines[e.line]] + [bpe.apply(codes, tokenize.tokenize(c, args.tgt_lang))
                                             for c in e.contrastive] for e in examples]
    sources, targets, owners = build_inputs(examples, src_lines, tgt_lines, candidates, args.level, args.k)
    model = model_from_args(parser, args, **({"src_lang": args.src_lang, "tgt_lang": args.tgt_lang} if hf else {}))
    freeze_heap(argv)
    start = time.perf_counter()
    scores = model.score(sources, targets, after_last_sep=args.level == "document", batch_size=args.batch_size)
    alone = _alone(model, args, examples, src_lines, tgt_lines, candidates)
    seconds = time.perf_counter() - start
    table = accuracy_table(examples, decisions(*_grouped(owners, [s.logprob for s in scores], len(examples))))
    result = {
        "metric": "contrapro-accuracy",
        "signature": f"contrapro-accuracy|level:{args.level}|k:{args.k if args.level == 'document' else 1}"
                     f"|context:reference-left|tie:wrong|score:sum-logprob|dtype:{model.dtype}|backend:{args.backend}",
        "model": str(args.model),
        "backend": args.backend,
        "device": model.device,
        "dtype": model.dtype,
        "level": args.level,
        "examples": len(examples),
        "seconds": round(seconds, 3),
        **table,
    }
    if alone is not None:
        result["cad"] = cad_accuracies(examples, owners, scores, alone, args.cad)
    with atomic_write(args.output) as handle:
        json.dump(result, handle, indent=1)
        handle.write("\n")
    overall = table["overall"]
    print(f"{args.level}: {overall['correct']}/{overall['total']} correct = {overall['accuracy']:.3f}")
    for entry in result.get("cad", []):
        print(f"{args.level}, CAD alpha {entry['alpha']}: {entry['overall']['correct']}/{entry['overall']['total']} "
              f"correct = {entry['overall']['accuracy']:.3f}")
    return 0


def _alone(model, args, examples, src_lines, tgt_lines, candidates):
    """With ``--cad``: each candidate's score without context (the example sentence alone); else None."""
    if not args.cad:
        return None
    plain, plain_targets, _ = build_inputs(examples, src_lines, tgt_lines, candidates, "sentence", args.k)
    return model.score(plain, plain_targets, after_last_sep=True, batch_size=args.batch_size)


def cad_accuracies(examples, owners, scores, alone, alphas) -> list[dict]:
    """The accuracy tables of ranking by ``(1 + alpha) log p(y|x,c) - alpha log p(y|x)``, one per alpha."""
    return [{"alpha": alpha, **accuracy_table(examples, decisions(*_grouped(
        owners, [(1 + alpha) * c.logprob - alpha * a.logprob for c, a in zip(scores, alone)], len(examples))))}
        for alpha in alphas]


def _grouped(owners: Sequence[int], values: Sequence[float], examples: int):
    """Per example, its correct target's score and its contrastive targets' scores."""
    grouped = defaultdict(list)
    for owner, value in zip(owners, values):
        grouped[owner].append(value)
    return [grouped[n][0] for n in range(examples)], [grouped[n][1:] for n in range(examples)]


#: Its declaration in the metric seam (docnmt.score.metric): a rule of its own.
METRIC = Metric(
    name="contrapro_accuracy", module=__name__, order=6, rule=False, table="contrapro_accuracy",
    summary="ContraPro contrastive accuracy of each model, by forced scoring, per antecedent distance",
    columns=lambda config: ["accuracy"], environment="model", unit="sentence", needs=("source", "model"),
    higher_is_better=True, signature="the model's level, window k and dtype")


if __name__ == "__main__":
    main()

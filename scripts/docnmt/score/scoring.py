"""BLEU and TER with SacreBLEU, each with its signature, and paired bootstrap resampling.

Hypotheses are the detokenized outputs of the decode rules; references are
the raw reference sentences of the common corpus format (never tokenized or
BPE-split). The scores are SacreBLEU's defaults (BLEU: 13a tokenization,
exp smoothing; TER: tercom tokenization, case-insensitive, no normalization), exactly what the
``sacrebleu`` CLI prints for the same files.

Significance: paired bootstrap resampling (``sacrebleu --paired-bs``, 1000
resamples, SacreBLEU's fixed seed 12345 unless ``SACREBLEU_SEED`` says
otherwise) of every system against each baseline given (the workflow uses
``sentence-level`` and ``last-sentence``). A difference is marked significant
in the tables when p < 0.05 and the scores differ: sacrebleu gives a system
identical to its baseline p = 1/(n+1), which would mark it "significant".

CLI::

    python -m docnmt.score.scoring --source test.en --reference test.de \
        --system sentence-level=sl.txt --system doc-trans=dt.txt ... \
        --baseline sentence-level --baseline last-sentence [--select contrapro.examples.jsonl] \
        --output bleu_ter.json
"""

from __future__ import annotations

import json
from pathlib import Path

from .evalset import add_arguments, load_args
from ..textio import atomic_write, cli_errors
from ..manual import argument_parser

#: p-value below which a paired difference is called significant.
ALPHA = 0.05


def _metrics():
    from sacrebleu.metrics import BLEU, TER

    return {"BLEU": BLEU(), "TER": TER()}


def corpus_scores(hyps: list[str], refs: list[str]) -> dict:
    """BLEU and TER of one system: score, SacreBLEU's full score line, and signature."""
    out = {}
    for name, metric in _metrics().items():
        score = metric.corpus_score(hyps, [refs])
        out[name] = {"score": round(score.score, 4), "line": str(score), "signature": str(metric.get_signature())}
    return out


def _float(value):
    """sacrebleu's bootstrap statistics are numpy scalars (float32 for some metrics): plain floats for JSON."""
    return None if value is None else float(value)


def paired_bootstrap(systems: dict[str, list[str]], refs: list[str], baseline: str, n_samples: int = 1000) -> dict:
    """sacrebleu's paired bootstrap test of every other system against ``baseline``."""
    from sacrebleu.significance import PairedTest

    named = [(baseline, systems[baseline])] + [(n, h) for n, h in systems.items() if n != baseline]
    test = PairedTest(named, _metrics(), references=[refs], test_type="bs", n_samples=n_samples)
    signatures, scores = test()
    names = scores["System"]
    identical = {name: hyps == systems[baseline] for name, hyps in systems.items()}
    result = {"baseline": baseline, "signatures": {m: str(s) for m, s in signatures.items()}, "systems": {}}
    for metric in signatures:
        for name, r in zip(names, scores[metric]):
            entry = {"score": round(float(r.score), 4), "mean": _float(r.mean), "ci": _float(r.ci)}
            if name != baseline:
                entry["p_value"] = _float(r.p_value)
                # sacrebleu's p-value for a zero difference is 1/(n+1) ("a zero difference should not be
                # attributed to chance"); a system with the baseline's score is never marked significant.
                entry["identical_to_baseline"] = identical[name]
                entry["significant"] = bool(r.p_value is not None and float(r.p_value) < ALPHA and not identical[name]
                                            and round(r.score, 4) != round(scores[metric][0].score, 4))
            result["systems"].setdefault(name, {})[metric] = entry
    return result


@cli_errors
def main(argv=None) -> int:
    parser = argument_parser("docnmt.score.scoring", __doc__.split("\n\n")[0])
    add_arguments(parser)
    parser.add_argument("--baseline", action="append", default=[],
                        help="paired bootstrap of every system against this one (repeatable; skipped if absent)")
    parser.add_argument("--bootstrap-samples", type=int, default=1000)
    parser.add_argument("--output", required=True, type=Path)
    args = parser.parse_args(argv)

    data = load_args(args)
    result = {
        "reference": str(args.reference),
        "sentences": len(data.reference),
        "selected_by": str(args.select) if args.select else None,
        "systems": {name: corpus_scores(hyps, data.reference) for name, hyps in data.systems.items()},
        "paired_bootstrap": {},
        "alpha": ALPHA,
    }
    for baseline in args.baseline:
        if baseline in data.systems and len(data.systems) > 1:
            result["paired_bootstrap"][baseline] = paired_bootstrap(
                data.systems, data.reference, baseline, args.bootstrap_samples)
    with atomic_write(args.output) as handle:
        json.dump(result, handle, indent=1)
        handle.write("\n")
    for name, scores in result["systems"].items():
        print(f"{name}: {scores['BLEU']['line']} | {scores['TER']['line']}")
    return 0


if __name__ == "__main__":
    main()

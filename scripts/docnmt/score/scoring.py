"""BLEU, chrF++, TER and document-level BLEU with SacreBLEU, each with its signature, and paired bootstrap
resampling.

Hypotheses are the detokenized outputs of the decode rules; references are
the raw reference sentences of the common corpus format (never tokenized or
BPE-split). The scores are SacreBLEU's defaults (BLEU: 13a tokenization,
exp smoothing; chrF++: character 6-grams and word 2-grams, beta 2; TER: tercom tokenization, case-insensitive,
no normalization), exactly what the ``sacrebleu`` CLI prints for the same files (``-m bleu chrf ter
--chrf-word-order 2``).

d-BLEU (with ``--docids``): corpus BLEU over documents, each document's sentences joined with spaces in their
order, hypotheses and references alike (Liu et al. 2020; Sun et al. 2024): one "segment" per document, so
that a translation is not judged sentence by sentence. Its signature is BLEU's, marked ``d-BLEU``.

Significance: paired bootstrap resampling (``sacrebleu --paired-bs``, 1000
resamples, SacreBLEU's fixed seed 12345 unless ``SACREBLEU_SEED`` says
otherwise) of every system against each baseline given (the workflow uses
``sentence-level`` and ``last-sentence``), for BLEU, chrF++ and TER over sentences and for d-BLEU over
documents. A difference is marked significant
in the tables when p < 0.05 and the scores differ: sacrebleu gives a system
identical to its baseline p = 1/(n+1), which would mark it "significant".

CLI::

    python -m docnmt.score.scoring --source test.en --reference test.de \
        --system sentence-level=sl.txt --system doc-trans=dt.txt ... \
        --baseline sentence-level --baseline last-sentence [--select contrapro.examples.jsonl] \
        [--docids test.docids] --output bleu_ter.json
"""

from __future__ import annotations

import json
from pathlib import Path

from .evalset import add_arguments, load_args, read_documents
from ..textio import atomic_write, cli_errors
from ..manual import argument_parser

#: p-value below which a paired difference is called significant.
ALPHA = 0.05


#: The sentence-level metrics, in the tables' order (d-BLEU, over documents, is :func:`document_bleu`).
METRICS = ("BLEU", "chrF++", "TER")
DOCUMENT_BLEU = "d-BLEU"


def _metrics():
    from sacrebleu.metrics import BLEU, CHRF, TER

    return {"BLEU": BLEU(), "chrF++": CHRF(word_order=2), "TER": TER()}


def _entry(metric, score) -> dict:
    return {"score": round(score.score, 4), "line": str(score), "signature": str(metric.get_signature())}


def corpus_scores(hyps: list[str], refs: list[str]) -> dict:
    """BLEU, chrF++ and TER of one system: score, SacreBLEU's full score line, and signature."""
    return {name: _entry(metric, metric.corpus_score(hyps, [refs])) for name, metric in _metrics().items()}


def join_documents(lines: list[str], docids: list[str]) -> list[str]:
    """Each document's sentences joined with spaces, in order (a document's lines need not be adjacent)."""
    joined: dict[str, list[str]] = {}
    for line, docid in zip(lines, docids, strict=True):
        joined.setdefault(docid, []).append(line)
    return [" ".join(sentences) for sentences in joined.values()]


def document_bleu(hyps: list[str], refs: list[str], docids: list[str]) -> dict:
    """d-BLEU of one system: corpus BLEU over its documents (:func:`join_documents`), signature marked d-BLEU."""
    from sacrebleu.metrics import BLEU

    metric = BLEU()
    entry = _entry(metric, metric.corpus_score(join_documents(hyps, docids), [join_documents(refs, docids)]))
    entry["signature"] = f"{DOCUMENT_BLEU}|{entry['signature']}"
    entry["documents"] = len(set(docids))
    return entry


def _float(value):
    """sacrebleu's bootstrap statistics are numpy scalars (float32 for some metrics): plain floats for JSON."""
    return None if value is None else float(value)


def paired_bootstrap(systems: dict[str, list[str]], refs: list[str], baseline: str, n_samples: int = 1000,
                     docids: list[str] | None = None) -> dict:
    """sacrebleu's paired bootstrap test of every other system against ``baseline`` (BLEU, chrF++ and TER over
    sentences; with ``docids``, d-BLEU over documents too)."""
    result = _paired(systems, refs, baseline, n_samples, _metrics())
    if docids is not None:
        from sacrebleu.metrics import BLEU

        joined = {name: join_documents(hyps, docids) for name, hyps in systems.items()}
        documents = _paired(joined, join_documents(refs, docids), baseline, n_samples, {"BLEU": BLEU()})
        result["signatures"][DOCUMENT_BLEU] = f"{DOCUMENT_BLEU}|{documents['signatures']['BLEU']}"
        for name, entries in documents["systems"].items():
            result["systems"][name][DOCUMENT_BLEU] = entries["BLEU"]
    return result


def _paired(systems: dict[str, list[str]], refs: list[str], baseline: str, n_samples: int, metrics: dict) -> dict:
    from sacrebleu.significance import PairedTest

    named = [(baseline, systems[baseline])] + [(n, h) for n, h in systems.items() if n != baseline]
    test = PairedTest(named, metrics, references=[refs], test_type="bs", n_samples=n_samples)
    signatures, scores = test()
    names = scores["System"]
    # sacrebleu keys its results by the metric's own name (chrF2++ for chrF++), in the order of ``metrics``
    ours = dict(zip(signatures, metrics, strict=True))
    identical = {name: hyps == systems[baseline] for name, hyps in systems.items()}
    result = {"baseline": baseline, "signatures": {ours[m]: str(s) for m, s in signatures.items()}, "systems": {}}
    for key, metric in ours.items():
        for name, r in zip(names, scores[key]):
            entry = {"score": round(float(r.score), 4), "mean": _float(r.mean), "ci": _float(r.ci)}
            if name != baseline:
                entry["p_value"] = _float(r.p_value)
                # sacrebleu's p-value for a zero difference is 1/(n+1) ("a zero difference should not be
                # attributed to chance"); a system with the baseline's score is never marked significant.
                entry["identical_to_baseline"] = identical[name]
                entry["significant"] = bool(r.p_value is not None and float(r.p_value) < ALPHA and not identical[name]
                                            and round(r.score, 4) != round(scores[key][0].score, 4))
            result["systems"].setdefault(name, {})[metric] = entry
    return result


@cli_errors
def main(argv=None) -> int:
    parser = argument_parser("docnmt.score.scoring", __doc__.split("\n\n")[0])
    add_arguments(parser)
    parser.add_argument("--baseline", action="append", default=[],
                        help="paired bootstrap of every system against this one (repeatable; skipped if absent)")
    parser.add_argument("--bootstrap-samples", type=int, default=1000)
    parser.add_argument("--docids", type=Path,
                        help="the document id of each source line: adds d-BLEU (documents joined)")
    parser.add_argument("--output", required=True, type=Path)
    args = parser.parse_args(argv)

    data = load_args(args)
    docids = None
    if args.docids is not None:
        _, every = read_documents(args.source, args.docids)
        docids = [every[line] for line in data.lines]
    result = {
        "reference": str(args.reference),
        "sentences": len(data.reference),
        "selected_by": str(args.select) if args.select else None,
        "systems": {name: corpus_scores(hyps, data.reference) for name, hyps in data.systems.items()},
        "documents": None if docids is None else len(set(docids)),
        "paired_bootstrap": {},
        "alpha": ALPHA,
    }
    for baseline in args.baseline:
        if baseline in data.systems and len(data.systems) > 1:
            result["paired_bootstrap"][baseline] = paired_bootstrap(
                data.systems, data.reference, baseline, args.bootstrap_samples, docids)
    if docids is not None:
        for name, hyps in data.systems.items():
            result["systems"][name][DOCUMENT_BLEU] = document_bleu(hyps, data.reference, docids)
    with atomic_write(args.output) as handle:
        json.dump(result, handle, indent=1)
        handle.write("\n")
    for name, scores in result["systems"].items():
        print(f"{name}: " + " | ".join(scores[m]["line"] for m in (*METRICS, DOCUMENT_BLEU) if m in scores))
    return 0


if __name__ == "__main__":
    main()

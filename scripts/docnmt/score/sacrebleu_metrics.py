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

    python -m docnmt.score.sacrebleu_metrics --source test.en --reference test.de \
        --system sentence-level=sl.txt --system doc-trans=dt.txt ... \
        --baseline sentence-level --baseline last-sentence [--select contrapro.examples.jsonl] \
        [--docids test.docids] --output bleu_ter.json
"""

from __future__ import annotations

from .evalset import add_seam_arguments, load_args, read_documents, write_score_file
from .metric import Metric
from .significance import ALPHA, PairedBootstrap, paired
from ..textio import cli_errors
from ..manual import argument_parser

#: The sentence-level metrics, in the tables' order (d-BLEU, over documents: :func:`join_documents`).
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


def _document_entry(metric, score, documents: int) -> dict:
    entry = _entry(metric, score)
    entry["signature"] = f"{DOCUMENT_BLEU}|{entry['signature']}"
    entry["documents"] = documents
    return entry


def bootstraps(systems: dict[str, list[str]], refs: list[str], n_samples: int, docids: list[str] | None = None):
    """The resamplers of :func:`paired_bootstrap_against`: over sentences (BLEU, chrF++, TER) and, with ``docids``,
    over documents (d-BLEU)."""
    sentences = PairedBootstrap(systems, refs, _metrics(), n_samples)
    documents = None
    if docids is not None:
        from sacrebleu.metrics import BLEU

        joined = {name: join_documents(hyps, docids) for name, hyps in systems.items()}
        documents = PairedBootstrap(joined, join_documents(refs, docids), {"BLEU": BLEU()}, n_samples)
    return sentences, documents


def paired_bootstrap_against(sentences: "PairedBootstrap", documents: "PairedBootstrap | None", baseline: str) -> dict:
    """Every other system against ``baseline``: signatures, and per system and metric score, bootstrap mean and 95%
    confidence half-width, and (not for the baseline) p-value and whether the difference is significant."""
    result = paired(sentences, baseline)
    if documents is not None:
        over_documents = paired(documents, baseline)
        result["signatures"][DOCUMENT_BLEU] = f"{DOCUMENT_BLEU}|{over_documents['signatures']['BLEU']}"
        for name, entries in over_documents["systems"].items():
            result["systems"][name][DOCUMENT_BLEU] = entries["BLEU"]
    return result


@cli_errors
def main(argv=None) -> int:
    parser = argument_parser("docnmt.score.sacrebleu_metrics", __doc__.split("\n\n")[0])
    add_seam_arguments(parser, docids="the document id of each source line: adds d-BLEU (documents joined)")
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
        "systems": {},
        "documents": None if docids is None else len(set(docids)),
        "paired_bootstrap": {},
        "alpha": ALPHA,
        "columns": list(METRICS) + ([] if docids is None else [DOCUMENT_BLEU]),
    }
    # one set of sentence statistics per system and metric, for its scores and every paired test alike
    sentences, documents = bootstraps(data.systems, data.reference, args.bootstrap_samples, docids)
    for name in data.systems:
        scores = result["systems"][name] = {m: _entry(sentences.metrics[m], sentences.score(m, name)) for m in METRICS}
        if documents is not None:
            scores[DOCUMENT_BLEU] = _document_entry(documents.metrics["BLEU"], documents.score("BLEU", name),
                                                    documents.sentences)
    for baseline in args.baseline:
        if baseline in data.systems and len(data.systems) > 1:
            result["paired_bootstrap"][baseline] = paired_bootstrap_against(sentences, documents, baseline)
    write_score_file(args.output, result)
    for name, scores in result["systems"].items():
        print(f"{name}: " + " | ".join(scores[m]["line"] for m in (*METRICS, DOCUMENT_BLEU) if m in scores))
    return 0


#: The seam's declaration (docnmt.score.metric): Table 3's first columns, on every evaluation set.
METRIC = Metric(
    name="bleu_ter", module=__name__, order=0,
    summary="SacreBLEU BLEU, chrF++ and TER; d-BLEU (documents joined) on the test set",
    columns=lambda config: [*METRICS, DOCUMENT_BLEU], environment="main", unit="sentence",
    needs=("reference", "docids"), higher_is_better={"BLEU": True, "chrF++": True, "TER": False, DOCUMENT_BLEU: True},
    signature="sacrebleu's signature of each metric (d-BLEU: BLEU's)", evalsets="all", curve=True,
    runtime=(30, 30))


if __name__ == "__main__":
    main()

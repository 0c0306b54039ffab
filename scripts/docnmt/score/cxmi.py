"""Context usage of the document-level model: CXMI and P-CXMI (Fernandes et al., 2021; 2023).

Stage: scoring. Workflow rule: ``cxmi`` (``rules/score.smk``), one job per task and evaluation set.

Definitions (natural log, so the values are in nats)
----------------------------------------------------
For sentence i with source x_i, target y_i (its BPE tokens and ``</s>``) and
context C_i, the point-wise conditional cross-mutual information (P-CXMI;
Fernandes et al., ACL 2023, "When Does Translation Require Context? A
Data-driven, Multilingual Exploration") is::

    P-CXMI(i) = log q(y_i | x_i, C_i) - log q(y_i | x_i)

and CXMI (Fernandes et al., ACL 2021, "Measuring and Increasing Context Usage
in Context-Aware Machine Translation", eq. 3) is its mean over the N
sentences of a set, ``-1/N sum_i log q(y_i | x_i) / q(y_i | x_i, C_i)``.
Positive: the context makes the target more probable.

The choices the papers leave open, and this tool's answers:

- **The context-free term.** Both papers take it from the *same*
  context-aware model with an empty context. That is the default here: the
  document-level model scores y_i after x_i alone (the no-context
  condition; the model saw such inputs in training at every document's
  first sentence). The variant ``sentence_model`` takes it from the
  sentence-level model instead, ``log p_sent(y_i | x_i)``: it measures what
  the document model with context gains over the separate baseline, which
  mixes context usage with the two models' other differences.
- **Normalization.** The papers' equations sum the log-probabilities over a
  sentence and average over sentences: ``cxmi``. ``cxmi_per_token`` divides
  the sum over all sentences by their tokens (``</s>`` included).
  neulab/contextual-mt's ``docmt_cxmi.py`` averages fairseq's
  length-normalized sentence scores (mean token log-probability per
  sentence); that is ``cxmi_length_normalized``, for comparison.
- **The context of the reference.** C_i is the k-1 previous source
  sentences and the k-1 previous reference sentences, forced as the target
  prefix ``E_{i-k+1} <sep> ... E_{i-1} <sep>``: exactly what the cheating
  strategy forces (and Table 2's reference perplexity scores). Context never
  crosses a document boundary; a window too long for the model drops its
  oldest sentences, as in decoding. A document's first sentence has no
  context, so its P-CXMI is exactly 0 (the two terms are one computation).

Per strategy
------------
The same quantity on each strategy's own hypotheses ŷ_i, with the context
that strategy conditioned ŷ_i on: ``log q(ŷ_i | its context) - log q(ŷ_i | x_i)``,
both terms from the document-level model. It shows how much each
hypothesis depends on the context it was given.

====================  ============================================================  =====
strategy              context of ŷ_i                                                 exact
====================  ============================================================  =====
sentence-level        none (0)                                                       yes
no-context            none (0)                                                       yes
full-segment          its segment's source, and the segment's earlier outputs         yes
                      (ŷ_i ends in ``<sep>`` unless last in the segment)
last-sentence         source window F_{i-k+1}^i and the segments its window           yes*
                      generated before ŷ_i (recorded in the decode's sidecar)
first-sentence        source window F_i^{i+k-1}, no target context (ŷ_i ends in       yes
                      ``<sep>`` when sentences follow)
2-pass                F_{i-k+1}^i and the first pass's previous sentences            yes
doc-trans             F_{i-k+1}^i and its own previous outputs                        yes
doc-trans-beam        F_{i-k+1}^i and its own previous outputs (the kept candidate)   yes
cheating              F_{i-k+1}^i and the reference's previous sentences              yes
source-primed         the whole source document F_1^M, then as doc-trans              yes
                      (prompting models only)
refine                refine's prompt: the source document, the draft document       yes**
                      and F_i with its draft (prompting models only)
====================  ============================================================  =====

\\* A last-sentence decode whose sidecar lacks ``generated_context`` (an older
version) is scored with its own previous outputs as target context instead;
the result says so (``exact: false``).
\** refine's hypothesis is scored after the prompt of its sentence unit and
first round, with the draft of ``--draft``: exact where its decode (its
sidecar, ``--refine-sidecar``) was that; a document unit or a later round
(whose context was the earlier round's output) is scored so too, as an
approximation (``exact: false``).

Output: a JSON summary (``--output``: CXMI over the set, per subset of a
``--subsets`` file against the rest, per strategy) and the P-CXMI of every
sentence (``--sentences``, tab-separated, one row per scored line).

CLI::

    python -m docnmt.score.cxmi --model doc.pt --data bin/document --k 3 \\
        --sentence-model sent.pt --sentence-data bin/sentence \\
        --src bpe/test.en --ref bpe/test.de --docids corpus/test.docids \\
        --system doc-trans=decode/test/doc-trans.bpe --first-pass decode/test/sentence-level.bpe \\
        --output cxmi.json --sentences cxmi.tsv
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from ..decode.documents import Document, previous
from ..decode.requests import request_tokens
from ..preprocess.windows import join
from ..decode.strategies import STRATEGIES
from ..decode.variants import parse_system
from ..textio import InputError, atomic_outputs, cli_errors, load_json
from .sentence_file import TSV_FIXED, write_sentences
from ..manual import argument_parser
from ..option_ranges import POSITIVE_INT
from .metric import Metric


@dataclass(frozen=True)
class Context:
    """What sentence i of a document was (or is) translated with: the source window, the forced target
    prefix, whether source sentences follow i in the window (the sentence then ends in ``<sep>``), and
    which end of the window a truncation drops."""

    source: tuple[str, ...]
    prefix: tuple[str, ...] = ()
    follows: bool = False
    drop_newest: bool = False
    #: the whole source document before the conversation (source-primed, a prompting model's)
    document: tuple[str, ...] = ()
    #: refine's prompt: the draft of the sentence and the whole draft document (:mod:`docnmt.decode.refinement`)
    refining: tuple[str, ...] = ()
    draft_document: tuple[str, ...] = ()


@dataclass
class Texts:
    """One document's texts a context may come from (BPE level, aligned with ``doc.src``)."""

    own: list[str] | None = None
    first_pass: list[str] | None = None
    generated: list[list[str]] | None = None
    draft: list[str] | None = None


def _left(doc: Document, i: int, k: int) -> tuple[str, ...]:
    return tuple(doc.src[max(0, i - k + 1):i + 1])


def _none(doc, i, k, texts, fits):
    return None


def _full_segment(doc, i, k, texts, fits):
    start = i - i % k
    stop = min(start + k, len(doc))
    if not fits(doc.src[start:stop]):  # decoded sentence by sentence (docnmt.decode.strategies.full_segment)
        return None
    return Context(tuple(doc.src[start:stop]), tuple(texts.own[start:i]), follows=i < stop - 1)


def _last_sentence(doc, i, k, texts, fits):
    prefix = texts.generated[i] if texts.generated is not None else previous(texts.own, i, k)
    return Context(_left(doc, i, k), tuple(prefix))


def _first_sentence(doc, i, k, texts, fits):
    window = tuple(doc.src[i:i + k])
    return Context(window, (), follows=len(window) > 1, drop_newest=True)


def _two_pass(doc, i, k, texts, fits):
    return Context(_left(doc, i, k), tuple(previous(texts.first_pass, i, k)))


def _own_output(doc, i, k, texts, fits):
    return Context(_left(doc, i, k), tuple(previous(texts.own, i, k)))


def _primed_own_output(doc, i, k, texts, fits):
    return Context(_left(doc, i, k), tuple(previous(texts.own, i, k)), document=tuple(doc.src))


def _refined(doc, i, k, texts, fits):
    return Context((doc.src[i],), document=tuple(doc.src), refining=(texts.draft[i],),
                   draft_document=tuple(texts.draft))


def _reference(doc, i, k, texts, fits):
    return Context(_left(doc, i, k), tuple(previous(doc.ref, i, k)))


#: Per strategy, the context its hypothesis of sentence i was conditioned on (module docstring's table).
CONTEXTS: dict[str, Callable] = {
    "sentence-level": _none,
    "no-context": _none,
    "full-segment": _full_segment,
    "last-sentence": _last_sentence,
    "first-sentence": _first_sentence,
    "2-pass": _two_pass,
    "doc-trans": _own_output,
    "doc-trans-beam": _own_output,
    "cheating": _reference,
    "source-primed": _primed_own_output,
    "refine": _refined,
}


class PairScorer:
    """Collects (context, target) pairs, scores each distinct one once with forced scoring, and gives
    back log-probabilities: the same request and target always get the very same number."""

    def __init__(self, decoder):
        self.decoder = decoder
        self.model = decoder.searcher.model
        self.index: dict[tuple, int] = {}
        self.pairs: list[tuple] = []
        self.scores: list | None = None
        self.truncated = 0

    def add(self, context: Context | None, sentence: str, target: str, line: int) -> int:
        """Register ``target`` (BPE text of sentence i) after ``context`` (None: the sentence ``sentence``
        alone); returns the handle that :meth:`logprob` takes."""
        if context is None:
            context = Context((sentence,))
        ids = tuple(self.model.encode(target, source=False)[:-1])
        if context.refining:  # refine's prompt, never truncated (its decode's was not)
            from ..decode.requests import Request

            encode = lambda sentences: self.model.encode(join(sentences), source=True)  # noqa: E731
            request, truncated = Request(encode(context.source), [], encode(context.document), line=line,
                                         refining=encode(context.refining),
                                         draft_document=encode(context.draft_document)), False
        else:
            request, truncated = self.decoder.build(context.source, context.prefix, line, context.drop_newest,
                                                    continuation=len(ids), document=context.document)
        self.truncated += int(truncated)
        follows = context.follows and (not context.drop_newest or self.model.sep in request.source[:-1])
        end = self.model.sep if follows else self.model.eos
        key = (request_tokens(request), ids, end)
        if key not in self.index:
            self.index[key] = len(self.pairs)
            self.pairs.append((request, list(ids), end))
            self.scores = None
        return self.index[key]

    def run(self) -> None:
        requests, targets, ends = zip(*self.pairs) if self.pairs else ((), (), ())
        self.scores = self.decoder.searcher.score_forced(requests, targets, ends)

    def logprob(self, handle: int):
        if self.scores is None:
            self.run()
        return self.scores[handle]


def summary(values: Sequence[float], tokens: Sequence[int]) -> dict:
    """CXMI of a set of sentences from their P-CXMI values and target token counts."""
    n, total = len(values), sum(tokens)
    return {
        "sentences": n,
        "tokens": total,
        "cxmi": sum(values) / n if n else None,
        "cxmi_per_token": sum(values) / total if total else None,
        "cxmi_length_normalized": sum(v / t for v, t in zip(values, tokens)) / n if n else None,
        "positive_share": sum(v > 0 for v in values) / n if n else None,
    }


def reference_pcxmi(scorer: PairScorer, docs: list[Document], k: int, lines: set[int],
                    sentence_scorer: PairScorer | None = None) -> dict[int, dict]:
    """Per scored line: P-CXMI of the reference (document model without context as the context-free term)
    and, with ``sentence_scorer``, the variant whose context-free term is the sentence-level model."""
    handles = {}
    for doc in docs:
        for i, line in enumerate(doc.lines):
            if line not in lines:
                continue
            with_context = scorer.add(_reference(doc, i, k, Texts(), None), doc.src[i], doc.ref[i], line)
            without = scorer.add(None, doc.src[i], doc.ref[i], line)
            alone = sentence_scorer.add(None, doc.src[i], doc.ref[i], line) if sentence_scorer else None
            handles[line] = (with_context, without, alone)
    out = {}
    for line, (with_context, without, alone) in handles.items():
        a, b = scorer.logprob(with_context), scorer.logprob(without)
        entry = {"tokens": a.tokens, "p_cxmi": a.logprob - b.logprob, "logprob_context": a.logprob,
                 "logprob_no_context": b.logprob}
        if alone is not None:
            entry["p_cxmi_sentence_model"] = a.logprob - sentence_scorer.logprob(alone).logprob
        out[line] = entry
    return out


def strategy_pcxmi(scorer: PairScorer, docs: list[Document], k: int, lines: set[int], strategy: str,
                   hyps: list[str], first_pass: list[str] | None = None,
                   generated: list[list[str]] | None = None, draft: list[str] | None = None) -> dict[int, dict]:
    """Per scored line: P-CXMI of the strategy's hypothesis with the context the strategy conditioned it on (a system
    with MBR selection, ``doc-trans+mbr``: its strategy's context, from its own hypotheses)."""
    strategy = parse_system(strategy)[0]
    if strategy not in CONTEXTS:
        raise ValueError(f"no context definition for strategy {strategy!r}; known: {', '.join(CONTEXTS)}")
    fits = scorer.decoder.fits
    handles = {}
    for doc in docs:
        texts = Texts(own=[hyps[line] for line in doc.lines],
                      first_pass=None if first_pass is None else [first_pass[line] for line in doc.lines],
                      generated=None if generated is None else [generated[line] for line in doc.lines],
                      draft=None if draft is None else [draft[line] for line in doc.lines])
        for i, line in enumerate(doc.lines):
            if line not in lines:
                continue
            context = CONTEXTS[strategy](doc, i, k, texts, fits)
            handles[line] = (None if context is None else scorer.add(context, doc.src[i], hyps[line], line),
                             scorer.add(None, doc.src[i], hyps[line], line))
    out = {}
    for line, (with_context, without) in handles.items():
        b = scorer.logprob(without)
        a = b if with_context is None else scorer.logprob(with_context)
        out[line] = {"tokens": b.tokens, "p_cxmi": a.logprob - b.logprob}
    return out


def _refine_draft(parser, args, n_lines: int, systems: dict) -> tuple[list[str] | None, bool]:
    """refine's draft (``--draft``) and whether its context is exact (its sidecar: the sentence unit, one round, the
    same draft by its sha256); a usage error where refine is scored without its draft."""
    from ..textio import file_digest
    from .evalset import read_system

    if not any(STRATEGIES[parse_system(name)[0]].drafted for name in systems):
        return None, True
    if args.draft is None:
        parser.error("refine needs --draft (the draft it improved: its context)")
    draft = read_system(args.draft, n_lines, args.src)
    record = {}
    if args.refine_sidecar is not None:
        found = load_json(args.refine_sidecar, "refine's decode sidecar")
        record = found.get("refine", {}) if isinstance(found, dict) else {}
    exact = (record.get("unit") == "sentence" and record.get("rounds") == 1
             and record.get("draft_sha256") == file_digest(args.draft))
    return draft, exact


def _generated_context(path: Path | None, n_lines: int):
    """last-sentence's recorded target contexts from its decode sidecar (None where it has none)."""
    if path is None:
        return None
    sidecar = load_json(path, "last-sentence decode sidecar")
    generated = sidecar.get("generated_context")
    if generated is None:
        return None
    if not isinstance(generated, list) or len(generated) != n_lines or not all(
            isinstance(g, list) and all(isinstance(s, str) for s in g) for g in generated):
        raise InputError(path, f"expected 'generated_context' to list {n_lines} lists of BPE sentences, one per line")
    return generated


def _parser():
    from ..decode.arguments import (add_backend_argument, add_dtype_argument, add_language_code_arguments,
                                    add_separator_argument)

    parser = argument_parser("docnmt.score.cxmi", __doc__.split("\n\n")[0])
    add_backend_argument(parser)
    parser.add_argument("--model", required=True, type=Path,
                        help="the document-level checkpoint (transformers: model folder)")
    parser.add_argument("--data", type=Path, help="fairseq: its binarized data folder (dictionary)")
    parser.add_argument("--k", type=POSITIVE_INT, default=3, help="sentences per document-level window")
    parser.add_argument("--sentence-model", type=Path, help="the sentence-level checkpoint (the variant)")
    parser.add_argument("--sentence-data", type=Path, help="fairseq: its binarized data folder")
    add_language_code_arguments(parser)
    add_dtype_argument(parser)
    add_separator_argument(parser)
    parser.add_argument("--src", required=True, type=Path, help="BPE source, one sentence per line")
    parser.add_argument("--ref", required=True, type=Path, help="BPE reference, line-aligned")
    parser.add_argument("--docids", required=True, type=Path)
    parser.add_argument("--select", type=Path, help="JSON lines with a 'line' field: score only those lines (ContraPro)")
    parser.add_argument("--subsets", type=Path, help="per source line, its subsets: CXMI of each against the rest")
    parser.add_argument("--system", action="append", default=[], metavar="NAME=PATH",
                        help="a strategy's BPE-level hypotheses (repeatable; NAME is the strategy)")
    parser.add_argument("--first-pass", type=Path, help="the first pass of 2-pass (sentence-level hypotheses, BPE)")
    parser.add_argument("--last-sentence-sidecar", type=Path,
                        help="last-sentence's decode sidecar (its generated target contexts)")
    parser.add_argument("--draft", type=Path, help="refine: the draft it improved (BPE, line by line as --src)")
    parser.add_argument("--refine-sidecar", type=Path,
                        help="refine's decode sidecar (its unit and rounds: whether its context is scored exactly)")
    parser.add_argument("--batch-size", type=POSITIVE_INT, default=64,
                        help="at most this many scored (context, sentence) pairs a batch")
    parser.add_argument("--output", required=True, type=Path, help="JSON summary")
    parser.add_argument("--sentences", required=True, type=Path, help="per-sentence P-CXMI, tab-separated")
    return parser


def _inputs(parser, args):
    """The test set's source, reference and documents, the systems' hypotheses, 2-pass's first pass, last-sentence's
    generated contexts, the selected lines and the subsets, each checked against the source."""
    from .evalset import parse_systems, read_documents, read_subsets, read_system, selected_lines

    src, docids = read_documents(args.src, args.docids)
    ref = read_system(args.ref, len(src), args.src)
    systems = {name: read_system(path, len(src), args.src) for name, path in parse_systems(args.system).items()}
    unknown = [name for name in systems if parse_system(name)[0] not in CONTEXTS]
    if unknown:
        parser.error(f"no context definition for {', '.join(unknown)}; known strategies: {', '.join(CONTEXTS)}")
    first_pass = None if args.first_pass is None else read_system(args.first_pass, len(src), args.src)
    if any(parse_system(name)[0] == "2-pass" for name in systems) and first_pass is None:
        parser.error("2-pass needs --first-pass (the context it was decoded with)")
    generated = _generated_context(args.last_sentence_sidecar, len(src))
    selected = selected_lines(args.select, len(src))
    subsets = read_subsets(args.subsets, len(src), args.src) if args.subsets else {}
    return src, docids, ref, systems, first_pass, generated, selected, subsets


@cli_errors
def main(argv=None) -> int:
    from ..decode.documents import group
    from ..decode.backends import make_searcher, model_from_args
    from ..startup import freeze_heap
    from ..decode.strategies import Decoder

    parser = _parser()
    args = parser.parse_args(argv)
    from ..decode.backend import backend

    if backend(args.backend).needs_data and (args.sentence_model is None) != (args.sentence_data is None):
        parser.error("--sentence-model and --sentence-data go together")
    src, docids, ref, systems, first_pass, generated, selected, subsets = _inputs(parser, args)
    draft, args.refine_exact = _refine_draft(parser, args, len(src), systems)
    lines = set(selected)
    docs = group(src, docids, ref=ref)
    languages = {"src_lang": args.src_lang, "tgt_lang": args.tgt_lang}
    model = model_from_args(parser, args, **languages)
    decoder = Decoder(make_searcher(model, batch_size=args.batch_size), k=args.k, h=1, source_name=str(args.src))
    scorer = PairScorer(decoder)
    sentence_scorer = None
    if args.sentence_model is not None:
        sentence_model = model_from_args(parser, args, args.sentence_model, args.sentence_data, **languages)
        sentence_scorer = PairScorer(Decoder(make_searcher(sentence_model, batch_size=args.batch_size), k=1, h=1,
                                             source_name=str(args.src)))
    freeze_heap(argv)

    started = time.perf_counter()
    per_line = reference_pcxmi(scorer, docs, args.k, lines, sentence_scorer)
    reference_seconds = time.perf_counter() - started
    started = time.perf_counter()
    per_strategy = {}
    for name, hyps in systems.items():
        per_strategy[name] = strategy_pcxmi(scorer, docs, args.k, lines, name, hyps, first_pass,
                                            generated if name == "last-sentence" else None, draft)
    seconds = {"reference": round(reference_seconds, 3), "strategies": round(time.perf_counter() - started, 3)}
    result = _result(args, model, selected, per_line, per_strategy, scorer, sentence_scorer, subsets, generated,
                     seconds)
    columns = list(TSV_FIXED) + (["p_cxmi_sentence_model"] if sentence_scorer else []) + [
        f"p_cxmi[{name}]" for name in per_strategy]
    with atomic_outputs([args.output, args.sentences]) as (fj, ft):
        json.dump(result, fj, indent=1)
        fj.write("\n")
        write_sentences(ft, _rows(docs, selected, per_line, per_strategy), columns)
    ref_summary = result["reference"]
    print(f"CXMI {ref_summary['cxmi']:.4f} nats per sentence, {ref_summary['cxmi_per_token']:.4f} per token "
          f"over {ref_summary['sentences']} sentences ({result['forced_scores']} forced scores, "
          f"{sum(seconds.values()):.1f} s)")
    for name, entry in result["strategies"].items():
        print(f"{name}: CXMI {entry['cxmi']:.4f}" + ("" if entry["exact"] else " (approximate context)"))
    return 0


def _result(args, model, selected, per_line, per_strategy, scorer, sentence_scorer, subsets, generated,
            seconds: dict) -> dict:
    """The JSON summary: the reference's CXMI (and the sentence-level model's variant), each subset's against the
    rest, each strategy's, and how they were scored."""
    tokens = [per_line[line]["tokens"] for line in selected]
    result = {
        "definition": "P-CXMI(i) = log q(y_i | x_i, C_i) - log q(y_i | x_i), natural log (nats), summed over the "
                      "tokens of y_i and </s>; CXMI = mean over sentences (Fernandes et al. 2021, 2023)",
        "context": "the k-1 previous source and reference sentences (the cheating strategy's context)",
        "context_free_term": "the document-level model with no context",
        "model": str(args.model), "backend": args.backend,
        "sentence_model": None if args.sentence_model is None else str(args.sentence_model),
        "k": args.k, "device": model.device, "dtype": model.dtype, "separator": args.separator,
        "selected_by": str(args.select) if args.select else None,
        "reference": summary([per_line[line]["p_cxmi"] for line in selected], tokens),
        "context_truncated": scorer.truncated,
        "forced_scores": len(scorer.pairs) + (len(sentence_scorer.pairs) if sentence_scorer else 0),
        "seconds": seconds,
    }
    if sentence_scorer is not None:
        result["reference_sentence_model"] = {
            **summary([per_line[line]["p_cxmi_sentence_model"] for line in selected], tokens),
            "context_free_term": "the sentence-level model",
        }
    if subsets:
        result["subsets"] = {}
        for name, members in subsets.items():
            members = set(members)
            parts = (("in", [line for line in selected if line in members]),
                     ("rest", [line for line in selected if line not in members]))
            result["subsets"][name] = {
                part: summary([per_line[line]["p_cxmi"] for line in part_lines],
                              [per_line[line]["tokens"] for line in part_lines])
                for part, part_lines in parts}
    result["strategies"] = {}
    for name, entries in per_strategy.items():
        result["strategies"][name] = {
            **summary([entries[line]["p_cxmi"] for line in selected], [entries[line]["tokens"] for line in selected]),
            "exact": not (name == "last-sentence" and generated is None) and not (
                STRATEGIES[parse_system(name)[0]].drafted and not args.refine_exact),
        }
    return result


def _rows(docs, selected, per_line, per_strategy) -> list[dict]:
    """The per-sentence table's rows: each selected line's place, its reference P-CXMI and each strategy's."""
    position = {line: (doc.docid, i + 1) for doc in docs for i, line in enumerate(doc.lines)}
    rows = []
    for line in selected:
        row = {"line": line + 1, "docid": position[line][0], "position": position[line][1], **per_line[line]}
        for name, entries in per_strategy.items():
            row[f"p_cxmi[{name}]"] = entries[line]["p_cxmi"]
        rows.append(row)
    return rows


#: Its declaration in the metric seam (docnmt.score.metric): a rule of its own.
METRIC = Metric(
    name="cxmi", module=__name__, order=8, rule=False, table="context_usage",
    summary="CXMI and per-sentence P-CXMI of the document-level model, on the reference and on every strategy",
    columns=lambda config: ["CXMI"], environment="model", unit="sentence",
    needs=("source", "reference", "docids", "model"), higher_is_better=True,
    signature="the model, window k and dtype")


if __name__ == "__main__":
    main()

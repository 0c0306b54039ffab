"""Decode a test set with one search strategy; write hypotheses and a JSON sidecar.

Inputs are BPE-level files of the common format (one sentence per line, a
``.docids`` file for the documents). Outputs:

- ``--output-bpe``: BPE-level hypotheses, one per source line (for perplexity);
- ``--output``: detokenized hypotheses, one per source line (for sacrebleu);
- ``--sidecar``: JSON with the strategy, checkpoints, device and dtype, beam, k, h, sentence and
  hypothesis counts (which must agree: fairseq's dropped-last-batch bug
  would show here), decoder positions and forward calls, wall time, the
  ``<sep>``-mismatch and context-truncation counts, and ``rounds`` (dependent
  search rounds). doc-trans also records its ``doc_trans_mode``; in the
  parallel mode ``redecoded_per_round`` (sentences searched in each round),
  ``converged`` (the fixed point was reached: the output is sequential
  doc-trans's), ``sequential_from_round`` (the round from which the
  iteration finished sequentially, one stale sentence per document and
  round; null: parallel throughout), ``max_rounds`` and ``unconverged``
  (sentences not guaranteed to be the sequential result when ``max_rounds``
  stopped the iteration). With ``--round-one`` (2-pass's output taken over as
  round 1), ``round_one_reused`` and ``round_one`` (its path and cost), and
  the ``*_with_first_pass`` totals include that cost. Decodes from a first
  pass record its ``first_pass_sha256``; 2-pass and cheating record their
  ``sep_mismatch_lines`` (1-based). full-segment records ``realigned_documents``
  (documents with a window whose output was mapped back to its sentences,
  :mod:`docnmt.decode.realign`) and ``realigned_guide`` (``first pass`` where
  ``--first-pass`` was given, which it then aligns against, else ``lengths``).

With ``--backend transformers`` the model is a Hugging Face model folder
(:mod:`docnmt.decode.backends`), with no ``--data``; the inputs and the
``--output-bpe`` hypotheses are then plain text, which its tokenizer segments,
and ``--output`` is the same text. ``--src-lang``/``--tgt-lang`` are the
model's language codes where it has language tokens.

CLI::

    python -m docnmt.decode.cli --strategy doc-trans --model doc.pt --data bin/document \
        --src test.bpe.en --docids test.docids [--ref test.bpe.de] [--first-pass sl.bpe.de] \
        [--doc-trans-mode parallel [--max-rounds R] [--round-one 2pass.bpe --round-one-sidecar 2pass.json]] \
        --beam 12 --k 3 --h 12 [--mbr [--mbr-count 12] [--mbr-utility chrf|chrf++] \
        [--mbr-candidates sampling --mbr-epsilon 0.02 --mbr-seed 1]] \
        --tgt-lang de --output-bpe hyp.bpe --output hyp.txt --sidecar hyp.json

Resuming: the decode writes its finished chunks of requests to a journal (``--journal``, default beside the sidecar:
``SIDECAR`` with the suffix ``.journal``) as it goes; rerun after a kill with the same model, inputs and settings, it
continues from there, to the same output (:mod:`docnmt.decode.journal`). The sidecar's ``resumed`` counts what came
from the journal (chunks, requests, seconds, cost counters); its totals include it. ``--no-journal`` writes none.

With ``--mbr`` every kept hypothesis is chosen among candidates by expected utility (:mod:`docnmt.decode.mbr`):
the n-best of a beam of ``--mbr-count`` (``--beam`` is then that count), or epsilon samples. The sidecar records
the settings, the selections and the utility evaluations under ``mbr``.
"""

from __future__ import annotations

import json
import platform
import time
from pathlib import Path

from .. import __version__
from ..preprocess.bpe import remove_bpe
from ..corpora.corpus import read_docids
from . import contrastive, mbr as mbr_selection, refinement
from . import metric_client
from .selection import Selector
from .arguments import add_backend_argument, add_search_arguments, add_template_argument, check_cache_bytes
from .documents import context_k, group
from .record import DecodeRecord, settings_of, signature
from .strategies import DOC_TRANS_MODES, REGISTRY, STRATEGIES, Decoder, not_for_backend, take_over_round_one
from ..textio import (InputError, atomic_outputs, cli_errors, file_digest, load_json, read_lines,
                      selected_lines)
from .requests import RequestError
from ..manual import argument_parser
from ..option_ranges import POSITIVE_INT


def _aligned(path: Path | None, n: int, against: Path) -> list[str] | None:
    if path is None:
        return None
    lines = read_lines(path)
    if len(lines) != n:
        raise InputError(path, f"expected {n} lines to match {against}, found {len(lines)}")
    return lines


def _detokenizer(args):
    """What a learned selection metric reads of a candidate or a source: the text with subword joins removed and
    Moses-detokenized in its language (``side``: "source" or "target"), as the scorers read the outputs."""
    from ..preprocess.tokenize import detokenize

    def prepare(text: str, side: str) -> str:
        return detokenize(remove_bpe(text), args.src_lang if side == "source" else args.tgt_lang)

    return prepare


#: The decode's input files, by checksum in the journal's key; the other arguments but the outputs are its settings.
JOURNAL_INPUTS = ("model", "src", "docids", "ref", "first_pass", "first_pass_sidecar", "round_one", "round_one_sidecar",
                  "only_lines", "draft", "draft_sidecar")
NOT_SETTINGS = JOURNAL_INPUTS + ("data", "output_bpe", "output", "sidecar", "journal", "no_journal", "comet_env")


def _record(args, model) -> DecodeRecord:
    """The decode's record (:mod:`.record`): journaled (but with --no-journal) under the key of its inputs'
    checksums and its settings."""
    inputs: dict = {name: getattr(args, name) for name in JOURNAL_INPUTS}
    inputs["data"] = None if args.data is None else (args.data, "dict.*.txt")
    inputs["template"] = None if model.template is None else model.template.path
    if STRATEGIES[args.strategy].drafted:  # refine: its template's file, by checksum
        inputs["refine_template"] = model.refiner.template.path
    settings = settings_of(vars(args), NOT_SETTINGS)
    settings.update(device=str(model.device).split(":")[0], dtype=model.dtype)
    path = None if args.no_journal else args.journal or args.sidecar.with_suffix(".journal")
    return DecodeRecord.open(args.strategy, inputs, settings, path)


def _round_one(args, model, n: int, first_pass_sha256: str) -> dict | None:
    """2-pass's hypotheses, checked to be round 1 of this very iteration: its sidecar must name the same model,
    search settings, device kind, dtype and first pass (by content). None (round 1 is then searched here, and the
    log says why) for a sidecar written before 2-pass recorded its first pass and ``<sep>``-mismatch lines."""
    where = args.round_one_sidecar
    two = load_json(where, "2-pass decode sidecar")
    missing = [key for key in ("first_pass_sha256", "sep_mismatch_lines") if key not in two]
    if missing:
        print(f"{where}: has no {' or '.join(missing)} (written by an older version): round 1 is searched here, "
              "not taken over; decode 2-pass again to reuse it")
        return None
    expected = {
        "strategy": "2-pass", "model": str(args.model), "beam": args.beam, "lenpen": args.lenpen, "k": args.k,
        "dtype": model.dtype, "sentences": n, "first_pass_sha256": first_pass_sha256,
    }
    for key, value in expected.items():
        if two.get(key) != value:
            raise InputError(where, f"expected {key} {value!r} (this decode's), found {two.get(key)!r}: "
                                    "--round-one must be 2-pass decoded with the same model, settings and first pass")
    if str(two.get("device", "")).split(":")[0] != str(model.device).split(":")[0]:
        raise InputError(where, f"expected a 2-pass decoded on {model.device} like this decode, "
                                f"found {two.get('device')!r}")
    lines = two["sep_mismatch_lines"]
    if not isinstance(lines, list) or len(lines) != two.get("sep_mismatch"):
        raise InputError(where, f"expected sep_mismatch_lines, one line number per <sep> mismatch "
                                f"({two.get('sep_mismatch')}), found {lines!r}")
    return {"hyps": _aligned(args.round_one, n, args.src), "mismatch": {line - 1 for line in lines}, "sidecar": two}


def _parser():
    parser = argument_parser("docnmt.decode.cli", __doc__.split("\n\n")[0])
    parser.add_argument("--strategy", required=True, choices=list(REGISTRY))
    add_backend_argument(parser)
    parser.add_argument("--model", required=True, type=Path, help="the document-level model (sentence-level for sentence-level)")
    parser.add_argument("--data", type=Path, help="fairseq: its binarized data folder (dictionary)")
    parser.add_argument("--src", required=True, type=Path, help="BPE source, one sentence per line")
    parser.add_argument("--docids", required=True, type=Path)
    parser.add_argument("--ref", type=Path, help="BPE reference (cheating)")
    parser.add_argument("--first-pass", type=Path,
                        help="BPE sentence-level hypotheses (2-pass; the starting contexts of parallel doc-trans)")
    parser.add_argument("--doc-trans-mode", choices=DOC_TRANS_MODES, default="sequential",
                        help="doc-trans: the fixed-point iteration (parallel, needs --first-pass) or position by "
                             "position (sequential, the reference); default: %(default)s (the workflow's default, "
                             "doc_trans.mode, is parallel)")
    parser.add_argument("--max-rounds", type=POSITIVE_INT,
                        help="parallel doc-trans: stop after this many rounds (default: until the fixed point)")
    parser.add_argument("--first-pass-sidecar", type=Path, help="the first pass's sidecar (2-pass cost accounting)")
    parser.add_argument("--round-one", type=Path,
                        help="parallel doc-trans: 2-pass's BPE hypotheses from the same model, search settings and "
                             "first pass, taken over as round 1 of the iteration (needs --round-one-sidecar)")
    parser.add_argument("--round-one-sidecar", type=Path,
                        help="the sidecar of --round-one (checked against this decode)")
    add_search_arguments(parser)
    parser.add_argument("--src-lang", help="transformers: the model's source language code, where it has language "
                                           "tokens; causal-lm: the source language its prompt names")
    parser.add_argument("--tgt-lang", required=True,
                        help="the target language (Moses detokenizer); transformers: the model's language code; "
                             "causal-lm: the target language its prompt names")
    add_template_argument(parser)
    parser.add_argument("--output-bpe", required=True, type=Path)
    parser.add_argument("--output", required=True, type=Path)
    parser.add_argument("--sidecar", required=True, type=Path)
    parser.add_argument("--journal", type=Path,
                        help="the resume journal (default: the sidecar's path with the suffix .journal)")
    parser.add_argument("--no-journal", action="store_true", help="write no resume journal (a rerun starts afresh)")
    parser.add_argument("--only-lines", type=Path, metavar="EXAMPLES.jsonl",
                        help="decode only the lines named by the 'line' field of these JSON lines (0-based; a ctxpro "
                             "set's example sentences), the others left empty: for strategies that translate each "
                             "sentence alone (sentence-level, no-context)")
    mbr_selection.add_arguments(parser)
    contrastive.add_arguments(parser)
    refinement.add_arguments(parser)
    return parser


def _refuse(parser, args, mbr, ref, first_pass) -> None:
    """A parser error for a combination of options the decode cannot run."""
    from .backend import backend

    info = STRATEGIES[args.strategy]
    refused = not_for_backend(args.strategy, args.backend)
    if refused:
        parser.error(refused)
    if args.beam > 1 and not backend(args.backend).can("beam_search"):
        parser.error(f"--beam {args.beam}{' (--mbr-count)' if mbr is not None else ''}: "
                     f"{backend(args.backend).lacks(['beam_search'])}: use --beam 1 (greedy)")
    if mbr is not None and mbr.candidates == "sampling" and not backend(args.backend).can("sampling"):
        parser.error(f"--mbr-candidates sampling: {backend(args.backend).lacks(['sampling'])}")
    if info.reference and ref is None:
        parser.error(f"{args.strategy} needs --ref")
    if info.first_pass and first_pass is None:
        parser.error(f"{args.strategy} needs --first-pass")
    if _parallel(args) and first_pass is None:
        parser.error("doc-trans in parallel mode needs --first-pass (its starting contexts), or --doc-trans-mode sequential")
    if (args.round_one is None) != (args.round_one_sidecar is None):
        parser.error("--round-one and --round-one-sidecar go together")
    if args.round_one is not None and not _parallel(args):
        parser.error("--round-one is round 1 of parallel doc-trans: "
                     "it needs --strategy doc-trans --doc-trans-mode parallel")


def _parallel(args) -> bool:
    return args.strategy == "doc-trans" and args.doc_trans_mode == "parallel"


def _documents(parser, args, mbr):
    """The decode's documents (source, reference, first pass), each file checked against the source, and the
    source's number of lines (more than the documents hold where ``--only-lines`` cut them)."""
    src = read_lines(args.src)
    docids = read_docids(args.docids)
    if len(docids) != len(src):
        raise InputError(args.docids, f"expected {len(src)} document ids to match {args.src}, found {len(docids)}")
    if not src:
        raise InputError(args.src, "expected source sentences, found an empty file")
    ref = _aligned(args.ref, len(src), args.src)
    first_pass = _aligned(args.first_pass, len(src), args.src)
    draft = _aligned(args.draft, len(src), args.src)
    _refuse(parser, args, mbr, ref, first_pass)
    refinement.check_args(parser, args, draft)
    docs = group(src, docids, ref, first_pass, draft)
    if args.only_lines is None:
        return docs, len(src)
    if not STRATEGIES[args.strategy].sentence_alone:
        alone = ", ".join(n for n, info in STRATEGIES.items() if info.sentence_alone)
        parser.error(f"--only-lines: {args.strategy} translates a sentence with its context; only {alone} "
                     "translate each sentence alone")
    return only_lines(docs, set(selected_lines(args.only_lines, len(src)))), len(src)


def only_lines(docs, keep: set[int]):
    """The documents cut to the lines of ``keep`` (documents without any left out): what a strategy that
    translates each sentence alone decodes of a set whose other lines are context."""
    out = []
    for doc in docs:
        at = [i for i, line in enumerate(doc.lines) if line in keep]
        if not at:
            continue

        def cut(values):
            return None if values is None else [values[i] for i in at]

        out.append(type(doc)(doc.docid, cut(doc.lines), cut(doc.src), cut(doc.ref), cut(doc.first_pass)))
    return out


def _hypotheses(args, docs, out, lines: int) -> list[str]:
    """The decode's hypotheses in source line order (an empty line for a line not decoded, ``--only-lines``); a
    RuntimeError where a document did not get one a sentence."""
    sentences = sum(len(doc) for doc in docs)
    hyps = [""] * lines
    written = 0
    for doc, found in zip(docs, out, strict=True):
        if len(found) != len(doc):
            raise RuntimeError(f"{args.strategy}: document {doc.docid} got {len(found)} hypotheses for {len(doc)} sentences")
        for line, hyp in zip(doc.lines, found):
            hyps[line] = hyp
            written += 1
    if written != sentences:
        raise RuntimeError(f"{args.strategy}: wrote {written} hypotheses for {sentences} source lines")
    return hyps


@cli_errors
def main(argv=None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    from .backend import backend

    plain = backend(args.backend).plain_text
    check_cache_bytes(parser, args)
    mbr = mbr_selection.from_args(parser, args)
    if mbr is not None and args.round_one is not None:
        parser.error("--round-one is 2-pass's beam-best output: it is not round 1 of a decode with --mbr")
    if mbr is not None and mbr.candidates == "sampling" and args.speculative != "none":
        parser.error("--speculative ngram: vLLM runs no logits processor under speculative decoding, and epsilon "
                     "sampling (--mbr-candidates sampling) is one")
    if mbr is not None and mbr.candidates == "beam":
        args.beam = mbr.count  # the n-best of a beam of --mbr-count are the candidates
    contrastive.check_args(parser, args.strategy, args.backend, args.cad)
    if args.cad is not None and args.round_one is not None:
        parser.error("--round-one is 2-pass's output, searched without context-aware decoding: not round 1 of a "
                     "decode with --cad")

    from ..startup import freeze_heap
    from ..preprocess.tokenize import detokenize
    from .backends import make_searcher, model_from_args

    docs, lines = _documents(parser, args, mbr)
    sentences = sum(len(doc) for doc in docs)
    model = model_from_args(parser, args, src_lang=args.src_lang, tgt_lang=args.tgt_lang)
    refinement.set_template(model, args)
    freeze_heap(argv)
    first_pass_sha256 = None if args.first_pass is None else file_digest(args.first_pass)
    round_one = None if args.round_one is None else _round_one(args, model, sentences, first_pass_sha256)
    if round_one is not None:
        take_over_round_one(docs, round_one["hyps"], round_one["mismatch"])
    searcher = make_searcher(model, beam=args.beam, lenpen=args.lenpen, batch_size=args.batch_size,
                             max_len=args.max_len_b, max_tokens=args.max_tokens, cache_bytes=args.cache_bytes,
                             verify_drafts=not args.no_verify_drafts)
    if args.cad is not None:
        contrastive.set_alpha(searcher, args.cad)
    scorer = metric_client.from_args(mbr, args)
    selector = None if mbr is None else Selector(mbr, scorer, prepare=None if plain else _detokenizer(args))
    if mbr is not None and mbr.candidates == "sampling":
        from .sampling import Sampler

        searcher = Sampler(searcher, count=mbr.count, epsilon=mbr.epsilon, seed=mbr.seed)
    record = _record(args, model)
    searcher = record.wrap(searcher)
    k = context_k(args.context, args.k, docs)
    decoder = Decoder(searcher, k=k, h=args.h, source_name=str(args.src), doc_trans_mode=args.doc_trans_mode,
                      max_rounds=args.max_rounds, mbr=selector, contrastive=args.cad is not None,
                      refine_unit=args.refine_unit, refine_rounds=args.refine_rounds)
    start = time.perf_counter()
    try:
        out = REGISTRY[args.strategy](decoder, docs)
    except RequestError as err:  # a request that failed for a reason of its own: name its document and sentence
        raise err.located(docs) from None
    finally:
        if scorer is not None:
            scorer.close()
    cost = record.cost(searcher, decoder.stats, time.perf_counter() - start)
    hyps = _hypotheses(args, docs, out, lines)
    sidecar = _sidecar(args, model, docs, k, cost, decoder, searcher, selector, mbr)
    _with_earlier_passes(args, sidecar, searcher, first_pass_sha256, round_one)
    detok = list(hyps) if plain else [detokenize(remove_bpe(h), args.tgt_lang) if h.strip() else "" for h in hyps]
    with atomic_outputs([args.output_bpe, args.output, args.sidecar]) as (fb, ft, fj):
        for h, d in zip(hyps, detok):
            fb.write(h + "\n")
            ft.write(d + "\n")
        json.dump(sidecar, fj, indent=1)
        fj.write("\n")
    record.finish()
    _report(args, decoder, sentences, len(docs), cost)
    return 0


def _sidecar(args, model, docs, k: int, cost: dict, decoder, searcher, selector, mbr) -> dict:
    """The decode's sidecar: its settings, signature and cost (:meth:`.record.DecodeRecord.cost`), and what its
    strategy and backend record of it."""
    from .backend import backend

    info = STRATEGIES[args.strategy]
    h = args.h if args.strategy == "doc-trans-beam" else None
    sidecar = {
        "strategy": args.strategy, "backend": args.backend, "model": str(args.model), "device": model.device,
        "dtype": model.dtype, "separator": args.separator,
        "template": None if model.template is None else model.template.path.name, "beam": args.beam,
        "lenpen": args.lenpen, "max_len_b": args.max_len_b, "k": args.k, "context": args.context, "context_k": k,
        "h": h, "speculative": args.speculative, "documents": len(docs), "sentences": sum(len(doc) for doc in docs),
        "hypotheses": sum(len(doc) for doc in docs), **cost, "cost": info.cost,
        "signature": signature(args.strategy, args.backend, args.beam, args.lenpen, args.k, args.context, h,
                               model.dtype, mbr, args.cad),
        "host": platform.node(),
    }
    if backend(args.backend).served:  # who served it: the endpoint, the model it reported, the settings, the time
        sidecar["served"] = model.served_record()
    if backend(args.backend).prefix_cache:  # the prefix cache's limit and the most it held (this run's)
        held = searcher.cache
        sidecar["prefix_cache"] = {"limit_bytes": held.limit, "bytes_peak": searcher.cache_bytes_peak,
                                   "evicted": held.evicted}
    if args.only_lines is not None:  # only these lines decoded (the others are context): their number
        sidecar["only_lines"] = {"path": str(args.only_lines), "lines": sidecar["sentences"]}
    if "doc_trans_mode" in info.sidecar:
        sidecar["doc_trans_mode"] = args.doc_trans_mode
    if selector is not None:
        sidecar["mbr"] = selector.record()
    if args.cad is not None:
        sidecar["cad"] = contrastive.record(args.cad)
    stats = decoder.stats
    if _parallel(args):
        sidecar.update(redecoded_per_round=stats.redecoded, round_one_reused=stats.round_one_reused,
                       converged=stats.converged, sequential_from_round=stats.sequential_from_round,
                       max_rounds=args.max_rounds, unconverged=stats.unconverged)
    if "generated_context" in info.sidecar:  # the target context of each kept translation (docnmt.score.cxmi)
        sidecar["generated_context"] = [stats.generated_context.get(line, []) for line in range(sidecar["sentences"])]
    if "realigned_documents" in info.sidecar:  # windows mapped back to their sentences (docnmt.decode.realign)
        sidecar["realigned_documents"] = len(stats.realigned_documents)
        sidecar["realigned_guide"] = ("draft" if args.draft is not None else
                                      "first pass" if args.first_pass is not None else "lengths")
    if "sep_mismatch_lines" in info.sidecar:
        sidecar["sep_mismatch_lines"] = sorted(line + 1 for line in stats.sep_mismatch_lines)
    if "refine" in info.sidecar:
        sidecar["refine"] = refinement.record(args, model, stats)
    return sidecar


def _with_earlier_passes(args, sidecar: dict, searcher, first_pass_sha256: str | None, round_one: dict | None) -> None:
    """The sidecar's cost from scratch: the first pass's (2-pass; by its sidecar) and a reused round 1's added."""
    seconds = sidecar["seconds"]
    if first_pass_sha256 is not None:
        sidecar["first_pass_sha256"] = first_pass_sha256
    if args.first_pass_sidecar:
        first = load_json(args.first_pass_sidecar, "first-pass decode sidecar")
        sidecar["first_pass"] = {k: first[k] for k in ("model", "decoder_positions", "forward_calls", "seconds",
                                                        "requests", "repeated_requests",
                                                        *searcher.prompt_counters()) if k in first}
        sidecar["decoder_positions_with_first_pass"] = sidecar["decoder_positions"] + first["decoder_positions"]
        sidecar["seconds_with_first_pass"] = round(seconds + first["seconds"], 3)
    if round_one is not None:  # the whole cost from scratch includes the reused round 1
        two = round_one["sidecar"]
        sidecar["round_one"] = {"path": str(args.round_one), **{k: two[k] for k in (
            "decoder_positions", "forward_calls", "seconds", "requests", "repeated_requests") if k in two}}
        sidecar["decoder_positions_with_first_pass"] = (
            sidecar.get("decoder_positions_with_first_pass", sidecar["decoder_positions"]) + two["decoder_positions"])
        sidecar["seconds_with_first_pass"] = round(sidecar.get("seconds_with_first_pass", seconds) + two["seconds"], 3)


def _report(args, decoder, sentences: int, documents: int, cost: dict) -> None:
    """The decode's summary on stdout (parallel doc-trans: its rounds and whether it reached the fixed point)."""
    stats = decoder.stats
    if _parallel(args):
        switched = stats.sequential_from_round
        print(f"doc-trans (parallel): {stats.rounds} rounds, sentences decoded per round {stats.redecoded}, "
              + (f"finished sequentially from round {switched}, " if switched else "")
              + ("fixed point reached (the sequential result)" if stats.converged
              else f"NOT converged after --max-rounds {args.max_rounds}: {stats.unconverged} sentences "
                   "may differ from sequential doc-trans"))
    print(f"{args.strategy}: {sentences} hypotheses for {sentences} sentences in {documents} documents, "
          f"{cost['seconds']:.1f} s, {cost['decoder_positions']} decoder positions, {stats.sep_mismatch} <sep> "
          "mismatches")


if __name__ == "__main__":
    main()

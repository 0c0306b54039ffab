"""``bench/decode --backend transformers``: the strategies and the forced-prefix search on a Hugging Face model.

On the demo's raw test text (``data/{task}/corpus/test.*``; the model's tokenizer segments it) with one model
folder (``--model``) as both the sentence- and the document-level model (a concatenation model trained on both,
as tests/hfmodel.py trains the tiny Marian):

1. every strategy against sentence-level, each run next to a sentence-level run (interleaved, ``--repeats``
   times): median wall ratio, decoder positions and their ratio;
2. the project's forced-prefix search (the context teacher-forced once per request, its cache copied to the
   beams) against transformers' own ``generate(decoder_input_ids=prompt + context)`` on the same requests (the
   cheating strategy's: every sentence's window with its reference context), batched alike: median wall ratio, and
   the share of requests whose whole n-best is the same (tokens; scores within 1e-4).

3. with ``--drafts`` (at ``--beam 1``): the strategies that give their searches drafts (2-pass, parallel doc-trans,
   the overlapping windows), each with its drafts verified (:mod:`docnmt.decode.verification`) next to itself
   without (interleaved): median wall ratio with/without, the draft tokens accepted, and whether the output is the
   same.

``--tiny FOLDER`` first builds and trains the tests' tiny Marian model there (tests/hfmodel.py; a few minutes
on 2 cores) where FOLDER has none, and benchmarks it.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

from docnmt.corpora.corpus import read_docids
from docnmt.decode.documents import group
from docnmt.decode.strategies import REGISTRY, Decoder
from docnmt.textio import read_lines

#: The rows: (row name, strategy, doc-trans mode); 2-pass and parallel doc-trans include their first pass.
ROWS = [("sentence-level", "sentence-level", "sequential"), ("no-context", "no-context", "sequential"),
        ("full-segment", "full-segment", "sequential"), ("last-sentence", "last-sentence", "sequential"),
        ("first-sentence", "first-sentence", "sequential"), ("2-pass", "2-pass", "sequential"),
        ("doc-trans", "doc-trans", "sequential"), ("doc-trans-parallel", "doc-trans", "parallel"),
        ("doc-trans-beam", "doc-trans-beam", "sequential"), ("cheating", "cheating", "sequential")]
FIRST_PASS = ("2-pass", "doc-trans-parallel")


def tiny_model(folder: Path, helper: str = "hfmodel") -> Path:
    """A tests' tiny model in ``folder``, built and trained there (300 updates) by ``helper``, a module of tests/
    (hfmodel: the Marian model; llmmodel: the Llama), unless it is already."""
    import importlib

    model = folder / "model"
    if not (model / "config.json").exists():
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
        importlib.import_module(helper).build(model, steps=300)
    return model


def generate_batches(searcher, requests):
    """transformers' generate() on the requests, batched as the searcher batches them: (n-best per request, seconds)."""
    import torch

    checked = searcher._check(requests)
    net, beam = searcher.net, searcher.beam
    results = [None] * len(requests)
    start = time.perf_counter()
    for batch in searcher._batches(checked):
        sources, mask = searcher.model._pad([checked[i][0] for i in batch])
        prompts = torch.tensor([checked[i][1] for i in batch], device=sources.device)
        with torch.no_grad():
            out = net.generate(input_ids=sources, attention_mask=mask, decoder_input_ids=prompts, num_beams=beam,
                               length_penalty=searcher.lenpen, early_stopping=searcher.early_stopping,
                               max_new_tokens=checked[batch[0]][2], num_return_sequences=beam,
                               output_scores=True, output_logits=True, return_dict_in_generate=True)
        width = prompts.size(1)
        # greedy generate gives no sequences_scores: its steps' log-probs, once for the batch
        steps = net.compute_transition_scores(out.sequences, out.logits, normalize_logits=True) if beam == 1 else None
        for row, i in enumerate(batch):
            nbest = []
            for b in range(beam):
                tokens = out.sequences[row * beam + b, width:].tolist()
                while tokens and tokens[-1] in (searcher.eos, searcher.pad):  # </s> and generate's fill after it
                    tokens.pop()
                nbest.append((tokens, greedy_score(searcher, steps[row], len(tokens)) if steps is not None
                              else float(out.sequences_scores[row * beam + b])))
            results[i] = nbest
    return results, time.perf_counter() - start


#: --drafts: the rows whose strategies give their searches drafts (row name, strategy, doc-trans mode)
DRAFT_ROWS = [("last-sentence", "last-sentence", "sequential"), ("first-sentence", "first-sentence", "sequential"),
              ("2-pass", "2-pass", "sequential"), ("doc-trans-parallel", "doc-trans", "parallel")]


def draft_table(args, run, first_pass) -> None:
    """--drafts: each of :data:`DRAFT_ROWS` with its drafts verified next to itself without, ``--repeats`` times
    interleaved (the first pass given, not timed): the median ratio with/without, the accepted draft tokens and
    whether the output is the same."""
    if args.beam != 1:
        raise SystemExit(f"--drafts times draft verification, which runs at beam 1 (greedy search), not "
                         f"--beam {args.beam}")
    pairs = {name: [] for name, _, _ in DRAFT_ROWS}
    for _ in range(args.repeats):
        for name, strategy, mode in DRAFT_ROWS:
            given = first_pass if name in FIRST_PASS else None
            pairs[name].append((run(strategy, mode, given), run(strategy, mode, given, verify=True)))
    print(f"\ndraft verification (beam 1, {args.repeats} interleaved repeats, medians; the first pass given):")
    print("| strategy | wall s without | wall s with drafts verified | with/without (median) | accepted draft tokens "
          "| same output |")
    print("|---|---:|---:|---:|---:|---|")
    for name, runs in pairs.items():
        drafts = runs[0][1]["drafts"]
        accepted = (f"{drafts['accepted_tokens']} of {drafts['draft_tokens']} "
                    f"({drafts['accepted_tokens'] / max(1, drafts['draft_tokens']):.1%})") if drafts else "-"
        print(f"| {name} | {statistics.median(p['seconds'] for p, _ in runs):.2f} | "
              f"{statistics.median(v['seconds'] for _, v in runs):.2f} | "
              f"{statistics.median(v['seconds'] / p['seconds'] for p, v in runs):.2f} | {accepted} | "
              f"{all(p['out'] == v['out'] for p, v in runs)} |")


def greedy_score(searcher, steps, length: int) -> float:
    """A greedy ``generate``'s score of a row from its steps' log-probs (``compute_transition_scores`` of the
    unprocessed logits): those of its ``length`` tokens and ``</s>``, over their count to the length penalty, as the
    searcher scores it."""
    steps = steps[:min(length + 1, steps.numel())]
    return float(steps.sum()) / steps.numel() ** searcher.lenpen


def same_nbest(ours, theirs, tolerance: float = 1e-4) -> bool:
    return len(ours) == len(theirs) and all(
        h.tokens == tokens and abs(h.score - score) <= tolerance for h, (tokens, score) in zip(ours, theirs))


def transformers_benchmark(args) -> None:
    import torch

    from docnmt.decode.backends.transformers.model import HFModel, HFSearcher

    folder = tiny_model(args.tiny) if args.tiny else args.model
    if folder is None:
        raise SystemExit("--backend transformers needs --model FOLDER (a save_pretrained folder) or --tiny FOLDER")
    model = HFModel(folder, device=args.device, dtype=args.dtype, separator=args.separator,
                    src_lang=args.src_lang, tgt_lang=args.tgt_lang)
    w, t = args.workdir, args.task
    src = read_lines(w / f"data/{t}/corpus/test.en")
    ref = read_lines(w / f"data/{t}/corpus/test.de")
    ids = read_docids(w / f"data/{t}/corpus/test.docids")

    def docs(first_pass=None):
        d = group(src, ids, ref, first_pass)
        return d[: args.docs] if args.docs else d

    def run(strategy, mode="sequential", first_pass=None, verify=False):
        searcher = HFSearcher(model, beam=args.beam)
        searcher.verify_drafts = verify
        start = time.perf_counter()
        out = REGISTRY[strategy](Decoder(searcher, k=args.k, h=args.h, doc_trans_mode=mode), docs(first_pass))
        return {"seconds": time.perf_counter() - start, "positions": searcher.decoder_positions, "out": out,
                "drafts": searcher.draft_counters()}

    n_sent = sum(len(d) for d in docs())
    REGISTRY["no-context"](Decoder(HFSearcher(model, beam=args.beam), k=args.k, h=args.h), docs()[:3])  # warm-up
    first = run("sentence-level")
    first_pass = [""] * len(src)
    for doc, hyps in zip(docs(), first["out"]):
        for line, hyp in zip(doc.lines, hyps):
            first_pass[line] = hyp
    runs = {name: [] for name, _, _ in ROWS}
    for _ in range(args.repeats):
        for name, strategy, mode in ROWS:
            base = run("sentence-level")
            r = base if name == "sentence-level" else run(strategy, mode, first_pass if name in FIRST_PASS else None)
            if name in FIRST_PASS:
                r = dict(r, seconds=r["seconds"] + base["seconds"], positions=r["positions"] + base["positions"])
            runs[name].append((r, base))
    print(f"decode benchmark, transformers backend: {folder} ({model.config.model_type}), {n_sent} sentences, beam "
          f"{args.beam}, k {args.k}, h {args.h}, device {model.device}, dtype {model.dtype}, torch threads "
          f"{torch.get_num_threads()}, {args.repeats} interleaved repeats, medians")
    print("| strategy | wall s | wall ratio (median) | ratios (each repeat) | decoder positions | positions ratio |")
    print("|---|---:|---:|---|---:|---:|")
    for name, pairs in runs.items():
        ratios = [r["seconds"] / b["seconds"] for r, b in pairs]
        r = pairs[0][0]
        print(f"| {name} | {statistics.median(x['seconds'] for x, _ in pairs):.2f} | {statistics.median(ratios):.2f} | "
              + " ".join(f"{x:.2f}" for x in ratios) + f" | {r['positions']} | {r['positions'] / first['positions']:.2f} |")

    if args.drafts:
        draft_table(args, run, first_pass)

    # the forced-prefix search against generate(decoder_input_ids=...) on the cheating strategy's requests
    decoder = Decoder(HFSearcher(model, beam=args.beam), k=args.k, h=args.h)
    requests = [decoder.request(d.src[max(0, i - args.k + 1):i + 1], d.ref[max(0, i - args.k + 1):i], d.lines[i])
                for d in docs() for i in range(len(d))]
    pairs, equal = [], 0
    for repeat in range(args.repeats):
        searcher = HFSearcher(model, beam=args.beam)
        start = time.perf_counter()
        ours = searcher.search(requests)
        seconds = time.perf_counter() - start
        theirs, generate_seconds = generate_batches(searcher, requests)
        pairs.append((seconds, generate_seconds))
        if repeat == 0:
            equal = sum(same_nbest(a, b) for a, b in zip(ours, theirs))
    mine, its = statistics.median(a for a, _ in pairs), statistics.median(b for _, b in pairs)
    print(f"\nforced-prefix search vs generate(decoder_input_ids=...) on {len(requests)} requests (the reference as "
          f"context, cheating's): ours {mine:.2f} s, generate {its:.2f} s, ratio {mine / its:.2f} (median of "
          f"{args.repeats}; each: " + " ".join(f"{a / b:.2f}" for a, b in pairs) + f"); the same n-best on {equal} of "
          f"{len(requests)} requests")

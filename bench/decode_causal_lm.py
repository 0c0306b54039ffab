"""``bench/decode --backend causal-lm``: the strategies on a causal LM, and the reused cache against ``generate``.

On the demo's raw test text (``data/{task}/corpus/test.*``; the model's tokenizer segments it), regrouped into
documents of at least ``--min-sentences`` sentences (consecutive documents joined), with one model folder
(``--model``) as both levels:

1. every strategy against sentence-level, each run next to a sentence-level run (interleaved, ``--repeats``
   times): median wall ratio; tokens prefilled, read from the cache and generated; forward calls; the most the
   prefix cache held (MiB, its limit: --cache-bytes of the decode CLI, 2 GiB on the CPU by default); and their
   ratios to sentence-level;
2. doc-trans (sequential, the context of ``--context``) with the reused cache against ``generate`` on the whole
   prompt of each sentence (the way the papers' scripts run it), interleaved: the median wall ratio, and whether
   the outputs are the same.

``--refine-drafts`` instead times refine (each sentence refined after the sentence-level translation, its draft) at
beam 1 with the draft verified as the answer's draft (prompt lookup: docnmt.decode.verification) against without,
interleaved, ``--repeats`` times: the median ratio (goal :data:`REFINE_GOAL`), the accepted share of the draft
tokens and whether the refinements are the same; and the share of the time without verification that the model's
one-token decode steps took (what verification replaces: one less that share is the least ratio it could reach).

``--tiny FOLDER`` first builds and trains the tests' tiny Llama there (tests/llmmodel.py; about 30 s on one core)
where FOLDER has none. ``--random-size hidden,layers`` benchmarks instead a randomly initialized Llama of that
size with the tiny model's tokenizer (no download; its answers run to ``--max-len-b``), for the cost on a model
whose forward passes dominate.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from docnmt.corpora.corpus import read_docids
from docnmt.decode.documents import context_k, group
from docnmt.decode.strategies import REGISTRY, Decoder
from docnmt.textio import read_lines
from decode_transformers import tiny_model

ROWS = ["sentence-level", "full-segment", "last-sentence", "first-sentence", "2-pass", "doc-trans",
        "doc-trans-beam", "cheating"]
COUNTERS = ("tokens_prefilled", "tokens_cached", "tokens_generated", "forward_calls", "cache_bytes_peak")
#: --refine-drafts: refine with its draft verified, at most this share of its own wall time without (issue 86)
REFINE_GOAL = 0.6


def random_model(tokenizer_folder: Path, size: str, out: Path) -> Path:
    """A randomly initialized Llama (``hidden,layers``) with the tokenizer of ``tokenizer_folder``, saved in ``out``."""
    import shutil

    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    hidden, layers = (int(x) for x in size.split(","))
    tokenizer = AutoTokenizer.from_pretrained(tokenizer_folder, local_files_only=True)
    end = tokenizer.convert_tokens_to_ids("<|im_end|>")
    torch.manual_seed(1)
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=hidden, intermediate_size=4 * hidden,
                         num_hidden_layers=layers, num_attention_heads=max(1, hidden // 64),
                         num_key_value_heads=max(1, hidden // 256), max_position_embeddings=8192, bos_token_id=None,
                         eos_token_id=[end, tokenizer.eos_token_id], pad_token_id=tokenizer.pad_token_id)
    model = LlamaForCausalLM(config)
    model.generation_config.eos_token_id = [end, tokenizer.eos_token_id]
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "chat_template.jinja"):
        if (tokenizer_folder / name).exists():
            shutil.copy(tokenizer_folder / name, out / name)
    return out


def regrouped(src, ref, ids, min_sentences: int):
    """Consecutive documents joined until each has at least ``min_sentences`` sentences."""
    docids, current, count, last = [], 0, 0, None
    for docid in ids:
        if docid != last:
            if count >= min_sentences:
                current, count = current + 1, 0
            last = docid
        docids.append(f"joined-{current}")
        count += 1
    return group(src, docids, ref)


def causal_lm_benchmark(args) -> None:
    import torch

    from docnmt.decode.backends.causal_lm.model import CausalLMModel, CausalLMSearcher

    folder = tiny_model(args.tiny, "llmmodel") if args.tiny else args.model
    if folder is None:
        raise SystemExit("--backend causal-lm needs --model FOLDER (a save_pretrained folder) or --tiny FOLDER")
    if args.random_size:
        folder = random_model(folder, args.random_size, Path(args.workdir) / "bench-random-llm")
    model = CausalLMModel(folder, device=args.device, dtype=args.dtype, src_lang=args.src_lang or "en",
                          tgt_lang=args.tgt_lang or "de", template=args.template)
    w, t = args.workdir, args.task
    src = read_lines(w / f"data/{t}/corpus/test.en")
    ref = read_lines(w / f"data/{t}/corpus/test.de")
    ids = read_docids(w / f"data/{t}/corpus/test.docids")
    docs = regrouped(src, ref, ids, args.min_sentences)[: args.docs or None]
    k = context_k(args.context, args.k, docs)
    max_len = args.max_len_b

    def run(strategy, reuse_cache=True, beam=args.beam, batch_size=args.batch_size):
        """A strategy's decode: with the reused cache in batches (the backend's search), or (``reuse_cache=False``,
        ``batch_size=1``) generate on each request's whole prompt, one request at a time, as the papers' scripts."""
        searcher = CausalLMSearcher(model, beam=beam, max_new_tokens=max_len, reuse_cache=reuse_cache,
                                    batch_size=batch_size, cache_bytes=args.cache_bytes)
        decoder = Decoder(searcher, k=k, h=args.h, sentence_searcher=searcher, doc_trans_mode="sequential")
        start = time.perf_counter()
        if strategy == "2-pass":  # with its first pass, in the time and the counters
            first = REGISTRY["sentence-level"](decoder, docs)
            for doc, hyps in zip(docs, first):
                doc.first_pass = hyps
        out = REGISTRY[strategy](decoder, docs)
        seconds = time.perf_counter() - start
        return {"seconds": seconds, "out": out, **{c: getattr(searcher, c) for c in COUNTERS}}

    n_sent = sum(len(d) for d in docs)
    run("sentence-level")  # warm-up
    if args.refine_drafts:
        return refine_drafts(args, model, docs, run, max_len)
    rows = args.rows.split(",") if args.rows else ROWS
    unknown = [name for name in rows if name not in ROWS]
    if unknown or rows[0] != "sentence-level":
        raise SystemExit(f"--rows: sentence-level first, then any of {', '.join(ROWS[1:])}")
    runs = {name: [] for name in rows}
    for _ in range(args.repeats):
        for name in rows:
            base = run("sentence-level")
            runs[name].append((base if name == "sentence-level" else run(name), base))
    print(f"decode benchmark, causal-lm backend: {folder} ({model.config.model_type}, "
          f"{sum(p.numel() for p in model.net.parameters()) / 1e6:.1f}M parameters), {len(docs)} documents of "
          f"{min(len(d) for d in docs)}-{max(len(d) for d in docs)} sentences ({n_sent} sentences), beam {args.beam}, "
          f"context {args.context} (k {k}), h {args.h}, device {model.device}, dtype {model.dtype}, torch threads "
          f"{torch.get_num_threads()}, prefix cache limit "
          f"{'the default' if args.cache_bytes is None else f'{args.cache_bytes / (1 << 20):.0f} MiB'}, {args.repeats} "
          "interleaved repeats, medians")
    print("| strategy | wall s | wall ratio | tokens prefilled | ratio | tokens from cache | tokens generated | ratio "
          "| forward calls | ratio | prefix cache peak MiB |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    first = runs["sentence-level"][0][0]
    for name, pairs in runs.items():
        r = pairs[0][0]
        ratio = statistics.median(x["seconds"] / b["seconds"] for x, b in pairs)
        print(f"| {name} | {statistics.median(x['seconds'] for x, _ in pairs):.2f} | {ratio:.2f} | "
              f"{r['tokens_prefilled']} | {r['tokens_prefilled'] / first['tokens_prefilled']:.2f} | "
              f"{r['tokens_cached']} | {r['tokens_generated']} | {r['tokens_generated'] / first['tokens_generated']:.2f} "
              f"| {r['forward_calls']} | {r['forward_calls'] / first['forward_calls']:.2f} | "
              f"{r['cache_bytes_peak'] / (1 << 20):.1f} |")

    # doc-trans with the reused cache (in batches, and one request at a time) against generate on each sentence's
    # whole prompt, one at a time; interleaved, medians of the ratios
    triples, same = [], True
    for _ in range(args.repeats):
        cached, alone, plain = run("doc-trans", True), run("doc-trans", True, batch_size=1), \
            run("doc-trans", False, batch_size=1)
        triples.append((cached["seconds"], alone["seconds"], plain["seconds"]))
        same = same and cached["out"] == plain["out"] == alone["out"]
    mine, single, its = (statistics.median(t[n] for t in triples) for n in range(3))
    batched_ratio = statistics.median(a / c for a, _, c in triples)
    alone_ratio = statistics.median(b / c for _, b, c in triples)
    print(f"\ndoc-trans (sequential, context {args.context}) against generate on each whole prompt, one at a time "
          f"({its:.2f} s): with the reused cache in batches of at most {args.batch_size} {mine:.2f} s, ratio "
          f"{batched_ratio:.2f}; with the reused cache one request at a time {single:.2f} s, ratio {alone_ratio:.2f} "
          f"(medians of {args.repeats}; batched each: " + " ".join(f"{a / c:.2f}" for a, _, c in triples)
          + f"); the same translations: {'yes' if same else 'NO'}; tokens prefilled {cached['tokens_prefilled']} "
          f"against {plain['tokens_prefilled']}")


class one_token_steps:
    """The wall seconds of ``net``'s forward calls whose ``input_ids`` hold one position per row (a decode step after
    a cached prompt), timed by forward hooks until :meth:`remove`."""

    def __init__(self, net):
        self.seconds, self._start = 0.0, None
        self.hooks = [net.register_forward_pre_hook(self._before, with_kwargs=True), net.register_forward_hook(self._after)]

    def _before(self, module, args, kwargs):
        ids = kwargs.get("input_ids", args[0] if args else None)
        self._start = time.perf_counter() if ids is not None and ids.size(-1) == 1 else None

    def _after(self, module, args, output):
        if self._start is not None:
            self.seconds += time.perf_counter() - self._start
            self._start = None

    def remove(self) -> None:
        for hook in self.hooks:
            hook.remove()


def refine_drafts(args, model, docs, run, max_len: int) -> None:
    """--refine-drafts: refine over the sentence-level draft at beam 1, with and without its draft verified
    (module docstring)."""
    from docnmt.decode.backends.causal_lm.model import CausalLMSearcher

    for doc, hyps in zip(docs, run("sentence-level", beam=1)["out"]):
        doc.draft = hyps

    def refined(verify: bool) -> dict:
        searcher = CausalLMSearcher(model, beam=1, max_new_tokens=max_len, batch_size=args.batch_size,
                                    cache_bytes=args.cache_bytes)
        searcher.verify_drafts = verify
        steps = one_token_steps(searcher.net)
        start = time.perf_counter()
        try:
            out = REGISTRY["refine"](Decoder(searcher, k=args.k, h=1), docs)
        finally:
            steps.remove()
        return {"seconds": time.perf_counter() - start, "out": out, "drafts": searcher.draft_counters(),
                "forward_calls": searcher.forward_calls, "step_seconds": steps.seconds}

    pairs = [(refined(True), refined(False)) for _ in range(args.repeats)]
    ratio = statistics.median(a["seconds"] / b["seconds"] for a, b in pairs)
    drafts = pairs[0][0]["drafts"]
    print(f"refine over the sentence-level draft, beam 1, {len(docs)} documents ({sum(map(len, docs))} sentences), "
          f"{args.repeats} interleaved repeats: with the draft verified "
          f"{statistics.median(a['seconds'] for a, _ in pairs):.2f} s, without "
          f"{statistics.median(b['seconds'] for _, b in pairs):.2f} s, ratio {ratio:.2f} (each: "
          + " ".join(f"{a['seconds'] / b['seconds']:.2f}" for a, b in pairs) + f"; goal {REFINE_GOAL}); forward calls "
          f"{pairs[0][0]['forward_calls']} against {pairs[0][1]['forward_calls']}; accepted draft tokens "
          f"{drafts['accepted_tokens']} of {drafts['draft_tokens']} ({drafts['accepted_tokens'] / drafts['draft_tokens']:.1%}); "
          f"the same refinements: {'yes' if all(a['out'] == b['out'] for a, b in pairs) else 'NO'}")
    steps = statistics.median(b["step_seconds"] / b["seconds"] for _, b in pairs)
    print(f"without verification, the model's forward calls of one new token per row (generate's decode steps, which "
          f"verification replaces) took a median {steps:.0%} of refine's wall time: the least ratio verification could "
          f"reach is {1 - steps:.2f}, the prompts' prefill and everything else being the same")

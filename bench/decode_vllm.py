"""``bench/decode --backend vllm``: the strategies on vLLM's engine next to causal-lm, on the same model and documents.

The documents are those of ``bench/decode --backend causal-lm`` (the demo's raw test text, consecutive documents
joined until each has at least ``--min-sentences`` sentences), one model folder as both levels (``--model``,
``--tiny FOLDER``, or ``--random-size HIDDEN,LAYERS``: a randomly initialized Llama with the tiny model's
tokenizer, its heads of size 64). For each strategy of ``--rows``, causal-lm (the reused cache, in batches) and
vllm run one after the other, ``--repeats`` times (interleaved): their median wall times and ratio, the prompt
tokens each prefilled and read from its cache, the tokens each generated, and whether the translations are the same.

``--refine-drafts`` instead times refine over the sentence-level draft at beam 1 on two engines of the same model:
with vLLM's n-gram speculative decoding (``decode.speculative: ngram``, prompt lookup) and without, interleaved,
``--repeats`` times: the median ratio (goal :data:`decode_causal_lm.REFINE_GOAL`), the engines' draft tokens and
accepted ones (its spec_decode metrics), and whether the refinements are the same. On the CPU the engine with
speculative decoding starts second with :data:`SPECULATIVE_SHARE` of the memory: vLLM's CPU worker sizes an engine's
cache as its share less what the process holds already, the first engine included.

vLLM lives in its own environment: where ``import vllm`` fails, the script runs itself again with
``.venv-vllm/bin/python`` (``make vllm``), where both backends load (causal-lm's with that environment's
transformers).
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
VLLM_PYTHON = REPO / ".venv-vllm" / "bin" / "python"


def in_vllm_environment() -> None:
    """Runs this benchmark again under vLLM's environment where vLLM is not importable here (never returns then)."""
    try:
        import vllm  # noqa: F401
    except ImportError:
        if not VLLM_PYTHON.exists():
            raise SystemExit(f"--backend vllm needs vLLM's environment: run `make vllm` (no {VLLM_PYTHON})") from None
        os.execv(str(VLLM_PYTHON), [str(VLLM_PYTHON), *sys.argv])


#: --refine-drafts: the memory share of the engine with speculative decoding (started second; module docstring)
SPECULATIVE_SHARE = 0.3


def refine_speculative(args, folder, languages: dict, docs) -> None:
    """--refine-drafts (module docstring)."""
    from decode_causal_lm import REFINE_GOAL
    from docnmt.decode.backends.vllm.model import VLLMModel, VLLMSearcher, _metric
    from docnmt.decode.strategies import REGISTRY, Decoder

    plain = VLLMModel(folder, dtype=args.dtype, gpu_memory_utilization=0.1, **languages)
    spec = VLLMModel(folder, dtype=args.dtype, gpu_memory_utilization=SPECULATIVE_SHARE, speculative="ngram",
                     **languages)
    drafts = REGISTRY["sentence-level"](Decoder(VLLMSearcher(plain, beam=1, max_new_tokens=args.max_len_b), k=args.k,
                                                h=1), docs)
    for doc, hyps in zip(docs, drafts):
        doc.draft = hyps

    def refined(model) -> dict:
        start = time.perf_counter()
        out = REGISTRY["refine"](Decoder(VLLMSearcher(model, beam=1, max_new_tokens=args.max_len_b), k=args.k, h=1),
                                 docs)
        return {"seconds": time.perf_counter() - start, "out": out}

    refined(plain), refined(spec)  # warm-up
    before = {name: _metric(spec.llm, name) for name in ("vllm:spec_decode_num_draft_tokens",
                                                         "vllm:spec_decode_num_accepted_tokens")}
    pairs = [(refined(spec), refined(plain)) for _ in range(args.repeats)]
    drafted, accepted = (_metric(spec.llm, name) - before[name] for name in before)
    ratio = statistics.median(a["seconds"] / b["seconds"] for a, b in pairs)
    print(f"refine over the sentence-level draft on vLLM, beam 1, {len(docs)} documents ({sum(map(len, docs))} "
          f"sentences), {args.repeats} interleaved repeats: with n-gram speculative decoding "
          f"{statistics.median(a['seconds'] for a, _ in pairs):.2f} s, without "
          f"{statistics.median(b['seconds'] for _, b in pairs):.2f} s, ratio {ratio:.2f} (each: "
          + " ".join(f"{a['seconds'] / b['seconds']:.2f}" for a, b in pairs) + f"; goal {REFINE_GOAL}); draft tokens "
          f"accepted {accepted:.0f} of {drafted:.0f}" + (f" ({accepted / drafted:.1%})" if drafted else "")
          + f"; the same refinements: {'yes' if all(a['out'] == b['out'] for a, b in pairs) else 'NO'}")


def vllm_benchmark(args) -> None:
    in_vllm_environment()
    import torch

    from decode_causal_lm import ROWS, random_model, regrouped
    from decode_transformers import tiny_model
    from docnmt.corpora.corpus import read_docids
    from docnmt.decode.backends.causal_lm.model import CausalLMModel, CausalLMSearcher
    from docnmt.decode.backends.vllm.model import VLLMModel, VLLMSearcher
    from docnmt.decode.documents import context_k
    from docnmt.decode.strategies import REGISTRY, Decoder
    from docnmt.textio import read_lines

    folder = tiny_model(args.tiny, "llmmodel") if args.tiny else args.model
    if folder is None:
        raise SystemExit("--backend vllm needs --model FOLDER (a save_pretrained folder) or --tiny FOLDER")
    if args.random_size:
        folder = random_model(folder, args.random_size, Path(args.workdir) / "bench-random-llm")
    languages = dict(src_lang=args.src_lang or "en", tgt_lang=args.tgt_lang or "de", template=args.template)
    w, t = args.workdir, args.task
    docs = regrouped(read_lines(w / f"data/{t}/corpus/test.en"), read_lines(w / f"data/{t}/corpus/test.de"),
                     read_docids(w / f"data/{t}/corpus/test.docids"), args.min_sentences)[: args.docs or None]
    if args.refine_drafts:
        return refine_speculative(args, folder, languages, docs)
    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")  # vLLM's build picks its own
    models = {"causal-lm": CausalLMModel(folder, device=device, dtype=args.dtype, **languages)}
    started = time.perf_counter()
    models["vllm"] = VLLMModel(folder, dtype=args.dtype, **languages)
    start_seconds = time.perf_counter() - started
    k = context_k(args.context, args.k, docs)

    searchers = {"causal-lm": lambda model: CausalLMSearcher(model, beam=args.beam, max_new_tokens=args.max_len_b,
                                                             batch_size=args.batch_size),
                 "vllm": lambda model: VLLMSearcher(model, beam=args.beam, max_new_tokens=args.max_len_b)}

    def run(name: str, strategy: str) -> dict:
        searcher = searchers[name](models[name])
        decoder = Decoder(searcher, k=k, h=args.h, sentence_searcher=searcher, doc_trans_mode="sequential")
        begin = time.perf_counter()
        if strategy == "2-pass":  # with its first pass, in the time and the counters
            for doc, hyps in zip(docs, REGISTRY["sentence-level"](decoder, docs)):
                doc.first_pass = hyps
        out = REGISTRY[strategy](decoder, docs)
        return {"seconds": time.perf_counter() - begin, "out": out, **searcher.prompt_counters()}

    rows = args.rows.split(",") if args.rows else ROWS
    unknown = [name for name in rows if name not in ROWS]
    if unknown:
        raise SystemExit(f"--rows: any of {', '.join(ROWS)}")
    run("causal-lm", "sentence-level"), run("vllm", "sentence-level")  # warm-up
    runs: dict[str, list[tuple[dict, dict]]] = {name: [] for name in rows}
    for _ in range(args.repeats):
        for name in rows:
            runs[name].append((run("causal-lm", name), run("vllm", name)))
    n_sent = sum(len(d) for d in docs)
    params = sum(p.numel() for p in models["causal-lm"].net.parameters()) / 1e6
    print(f"decode benchmark, vllm against causal-lm: {folder} ({models['vllm'].config.model_type}, {params:.1f}M "
          f"parameters, head size {models['vllm'].config.hidden_size // models['vllm'].config.num_attention_heads}), "
          f"{len(docs)} documents of {min(len(d) for d in docs)}-{max(len(d) for d in docs)} sentences ({n_sent} "
          f"sentences), beam {args.beam}, context {args.context} (k {k}), device {device}, dtype {args.dtype}, torch "
          f"threads {torch.get_num_threads()}, vLLM's engine started in {start_seconds:.0f} s, {args.repeats} "
          "interleaved repeats, medians")
    print("| strategy | causal-lm s | vllm s | vllm / causal-lm | prefilled (causal-lm / vllm) | from cache | "
          "generated | same translations |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for name, pairs in runs.items():
        hf, vl = pairs[0]
        ratio = statistics.median(v["seconds"] / h["seconds"] for h, v in pairs)
        same = all(h["out"] == v["out"] for h, v in pairs)
        print(f"| {name} | {statistics.median(h['seconds'] for h, _ in pairs):.2f} | "
              f"{statistics.median(v['seconds'] for _, v in pairs):.2f} | {ratio:.2f} | "
              f"{hf['tokens_prefilled']} / {vl['tokens_prefilled']} | {hf['tokens_cached']} / {vl['tokens_cached']} | "
              f"{hf['tokens_generated']} / {vl['tokens_generated']} | {'yes' if same else 'NO'} |")

"""The vllm side of tests/decode/test_vllm.py, run in vLLM's environment (.venv-vllm) as one process, so that the
session's tests share one engine start: a model folder loaded once with the backend vllm, then, on the given
documents, the strategies' translations at beam 1 (a window and the whole document as context), forced scoring,
a beam search's translations and epsilon samples, each with the searcher's cost counters, written as JSON.

    python tests/vllm_side.py --model FOLDER --documents docs.json --output vllm.json
"""

from __future__ import annotations

import argparse
import json
import time

#: (name in the output, strategy, context, beam) of every decode run here
RUNS = [("sentence-level", "sentence-level", "window", 1), ("doc-trans", "doc-trans", "window", 1),
        ("doc-trans-document", "doc-trans", "document", 1), ("cheating", "cheating", "window", 1),
        ("source-primed", "source-primed", "window", 1), ("sentence-level-beam-3", "sentence-level", "window", 3)]


def decode(model, docs, strategy: str, context: str, beam: int, make_searcher) -> tuple[list[str], dict]:
    from docnmt.decode.documents import context_k
    from docnmt.decode.strategies import REGISTRY, Decoder

    searcher = make_searcher(model, beam=beam, max_len=40)
    started = time.perf_counter()
    out = REGISTRY[strategy](Decoder(searcher, k=context_k(context, 3, docs), h=2, sentence_searcher=searcher,
                                     doc_trans_mode="sequential"), docs)
    counters = {**searcher.prompt_counters(), "forward_calls": searcher.forward_calls,
                "seconds": time.perf_counter() - started}
    return [h for doc in out for h in doc], counters


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", required=True)
    parser.add_argument("--documents", required=True)
    parser.add_argument("--output", required=True)
    args = parser.parse_args()

    from docnmt.decode.backends import load_model, make_searcher
    from docnmt.decode.documents import group
    from docnmt.interface import Request

    given = json.load(open(args.documents, encoding="utf-8"))
    docs = group(given["src"], given["docids"], ref=given["ref"])
    started = time.perf_counter()
    model = load_model("vllm", args.model, src_lang="en", tgt_lang="de",
                       engine={"gpu_memory_utilization": 0.1, "seed": 0})
    result = {"start_seconds": time.perf_counter() - started, "device": model.device, "dtype": model.dtype,
              "decodes": {}}
    for name, strategy, context, beam in RUNS:
        hyps, counters = decode(model, docs, strategy, context, beam, make_searcher)
        result["decodes"][name] = {"hypotheses": hyps, "counters": counters}
    searcher = make_searcher(model, beam=1, max_len=40)
    requests = [Request(model.encode(s, source=True)) for s in given["src"]]
    targets = [model.encode(t, source=True) for t in given["ref"]]
    result["forced"] = [s.logprob for s in searcher.score_forced(requests, targets)]
    result["pairs"] = [s.logprob for s in model.score(given["pairs"]["src"], given["pairs"]["tgt"])]
    samples = [searcher.sample(requests[0], 4, 0.02, 7), searcher.sample(requests[0], 4, 0.02, 7),
               searcher.sample(requests[0], 4, 0.999, 7)]
    result["samples"] = [[model.decode(h.tokens) for h in drawn] for drawn in samples]
    json.dump(result, open(args.output, "w", encoding="utf-8"), ensure_ascii=False, indent=1)


if __name__ == "__main__":
    main()

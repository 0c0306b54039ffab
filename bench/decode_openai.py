"""``bench/decode --backend openai``: a served model's strategies with one request in flight against
``--max-concurrency`` of them, on the same server and documents: what sending a search round's requests together
buys from the server's continuous batching.

The server is vLLM's (``python -m docnmt.decode.backends.vllm.serve`` from ``.venv-vllm``), started here on the model
folder (``--model``, or ``--tiny FOLDER``: the tests' tiny Llama built there) on a loopback port, with a key of this
run; or an endpoint already serving (``--base-url URL`` with ``--model NAME``, its key in ``--api-key-env``). The
documents are those of ``bench/decode --backend causal-lm`` (the demo's raw test text, consecutive documents joined
until each has at least ``--min-sentences`` sentences). For each strategy of ``--rows`` (default sentence-level and
doc-trans), the two settings run one after the other, ``--repeats`` times (interleaved): their median wall times and
ratio, the tokens the server reported, and whether the translations are the same.
"""

from __future__ import annotations

import os
import secrets
import socket
import statistics
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
VLLM_PYTHON = REPO / ".venv-vllm" / "bin" / "python"
ROWS = ["sentence-level", "doc-trans"]
KEY_ENV = "DOCNMT_BENCH_KEY"


def start_server(folder: Path, name: str, log: Path) -> tuple[subprocess.Popen, str]:
    """vLLM's server on ``folder`` as ``name`` on a free loopback port, its key in ``KEY_ENV``: (process, base URL).
    It stays in this process's session: in a session of its own, Linux's autogroup scheduling gives the server's
    processes one share of the CPU together, and on 2 cores the concurrency then bought nothing (docs/benchmarks.md)."""
    if not VLLM_PYTHON.exists():
        raise SystemExit(f"--backend openai starts vLLM's server from its environment: run `make vllm` "
                         f"(no {VLLM_PYTHON}), or give --base-url")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    os.environ[KEY_ENV] = f"sk-bench-{secrets.token_hex(8)}"
    process = subprocess.Popen(
        [str(VLLM_PYTHON), "-m", "docnmt.decode.backends.vllm.serve", str(folder), "--host", "127.0.0.1", "--port",
         str(port), "--served-model-name", name, "--api-key", os.environ[KEY_ENV], "--dtype", "float32",
         "--enable-prompt-tokens-details"], stdout=open(log, "w"), stderr=subprocess.STDOUT,
        env={**os.environ, "PYTHONPATH": str(REPO / "scripts")})
    url = f"http://127.0.0.1:{port}"
    for _ in range(600):
        if process.poll() is not None:
            raise SystemExit(f"the server exited ({process.returncode}): {log}")
        try:
            request = urllib.request.Request(f"{url}/v1/models",
                                             headers={"Authorization": f"Bearer {os.environ[KEY_ENV]}"})
            with urllib.request.urlopen(request, timeout=5):
                return process, f"{url}/v1"
        except OSError:
            time.sleep(1)
    raise SystemExit(f"the server did not answer within 600 s: {log}")


def openai_benchmark(args) -> None:
    from decode_causal_lm import regrouped
    from decode_transformers import tiny_model
    from docnmt.corpora.corpus import read_docids
    from docnmt.decode.backends import load_model, make_searcher
    from docnmt.decode.documents import context_k
    from docnmt.decode.strategies import REGISTRY, Decoder
    from docnmt.textio import read_lines

    process = None
    if args.base_url:
        if args.model is None:
            raise SystemExit("--base-url needs --model NAME, the model's name on the server")
        name, base_url, key_env = str(args.model), args.base_url, args.api_key_env or "OPENAI_API_KEY"
    else:
        folder = tiny_model(args.tiny, "llmmodel") if args.tiny else args.model
        if folder is None:
            raise SystemExit("--backend openai needs --model FOLDER or --tiny FOLDER (a server is started on it), "
                             "or --base-url URL --model NAME")
        name, key_env = "bench-model", KEY_ENV
        started = time.perf_counter()
        process, base_url = start_server(folder, name, Path(tempfile.gettempdir()) / "docnmt-bench-server.log")
        print(f"vLLM's server started on {folder} in {time.perf_counter() - started:.0f} s")
    try:
        languages = dict(src_lang=args.src_lang or "en", tgt_lang=args.tgt_lang or "de", template=args.template)
        models = {n: load_model("openai", name, engine={"base_url": base_url, "api_key_env": key_env,
                                                         "max_concurrency": n}, **languages)
                  for n in (1, args.max_concurrency)}
        w, t = args.workdir, args.task
        docs = regrouped(read_lines(w / f"data/{t}/corpus/test.en"), read_lines(w / f"data/{t}/corpus/test.de"),
                         read_docids(w / f"data/{t}/corpus/test.docids"), args.min_sentences)[: args.docs or None]
        k = context_k(args.context, args.k, docs)

        def run(concurrency: int, strategy: str) -> dict:
            searcher = make_searcher(models[concurrency], beam=1, max_len=args.max_len_b)
            decoder = Decoder(searcher, k=k, h=args.h, sentence_searcher=searcher, doc_trans_mode="sequential")
            begin = time.perf_counter()
            out = REGISTRY[strategy](decoder, docs)
            return {"seconds": time.perf_counter() - begin, "out": out, **searcher.prompt_counters()}

        rows = args.rows.split(",") if args.rows else ROWS
        run(args.max_concurrency, "sentence-level")  # warm-up
        runs: dict[str, list[tuple[dict, dict]]] = {row: [] for row in rows}
        for _ in range(args.repeats):
            for row in rows:
                runs[row].append((run(1, row), run(args.max_concurrency, row)))
        n_sent = sum(len(d) for d in docs)
        print(f"decode benchmark, a served model at {base_url} ({name}): one request in flight against "
              f"{args.max_concurrency}, {len(docs)} documents of {min(len(d) for d in docs)}-"
              f"{max(len(d) for d in docs)} sentences ({n_sent} sentences), greedy, context {args.context} (k {k}), "
              f"{args.repeats} interleaved repeats, medians")
        n = args.max_concurrency
        print(f"| strategy | 1 in flight s | {n} in flight s | speed-up | prompt tokens | cached | completion "
              "tokens | requests | same translations |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
        for row, pairs in runs.items():
            one, many = pairs[0]
            speedup = statistics.median(a["seconds"] / b["seconds"] for a, b in pairs)
            same = all(a["out"] == b["out"] for a, b in pairs)
            print(f"| {row} | {statistics.median(a['seconds'] for a, _ in pairs):.2f} | "
                  f"{statistics.median(b['seconds'] for _, b in pairs):.2f} | {speedup:.2f} | "
                  f"{many['prompt_tokens']} | {many['cached_tokens']} | {many['completion_tokens']} | "
                  f"{many['api_requests']} | {'yes' if same else 'NO'} |")
    finally:
        if process is not None:
            process.terminate()  # the server stops its engine's processes
            process.wait(timeout=60)

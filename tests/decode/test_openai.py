"""The backend openai (docnmt.decode.backends.openai) against a real server: vLLM's OpenAI-compatible server, started
from vLLM's environment (.venv-vllm; `python -m docnmt.decode.backends.vllm.serve`) on the tests' tiny trained Llama,
on a loopback port, with a key, once for this module. Greedy translations equal the in-process vllm backend's and
causal-lm's, forced scoring agrees within 1e-3, the checks report each problem in one line, a proxy in front of the
server (tests/faulty_endpoint.py) answers 429, 500 and too late, and a workflow task on the served model writes every
table. The key is set in this process's environment only, and no file, log or output holds it."""

import json
import os
import re
import secrets
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from faulty_endpoint import FaultyProxy
from helpers import REPO, VLLM_PYTHON, doc_blocks, run_snakemake, tool_env
from served import free_port, stop, wait_until_served
from vllm_side import decode_run

#: make test-full: the served model (vllm serve).
pytestmark = pytest.mark.full

#: The module's fixtures that train a model or start the server (conftest gives their tests the tier ``trains``).
TRAINING_FIXTURES = {"served", "served_model", "llama"}
#: The model's name on the server, and the variable that holds the server's key (docs/own-models.md's).
NAME = "my-llm"
KEY_ENV = "DOCNMT_SERVED_KEY"
PAGE = REPO / "docs/own-models.md"
#: The served models' section of the manual, and its parts whose blocks the tests run as written.
SECTION = "## Served models"
#: The greedy decodes of tests/vllm_side.py compared here (window context, max_len 40).
COMPARED = ["sentence-level", "doc-trans", "cheating"]


@pytest.fixture(scope="module")
def key() -> str:
    return f"sk-docnmt-{secrets.token_hex(16)}"


@pytest.fixture(scope="module")
def served(tiny_llama, tmp_path_factory, key):
    """docs/own-models.md's local server (vLLM's, on a model folder) started as written, with the tiny Llama for
    its folder, a free port for 8000 and this module's key for the page's: its root URL. The key is in this
    process's environment (``KEY_ENV``) while the module runs."""
    if not VLLM_PYTHON.exists():
        pytest.skip(f"no vLLM environment at {VLLM_PYTHON}: `make vllm` makes it (make test-full does)")
    (block,) = doc_blocks(PAGE, "bash", SECTION, "**A local server.**")
    folder = tmp_path_factory.mktemp("served")
    port = free_port()
    log = folder / "server.log"
    command = (block.replace("models/my-llm", shlex.quote(str(tiny_llama))).replace("8000", str(port))
               .replace("sk-my-own-key", key).replace(".venv-vllm/bin/python", shlex.quote(str(VLLM_PYTHON))))
    with open(log, "w") as out, pytest.MonkeyPatch.context() as patch:
        patch.setenv(KEY_ENV, key)
        process = subprocess.Popen(["bash", "-c", command], stdout=out, stderr=subprocess.STDOUT, cwd=REPO,
                                   process_group=0,  # its own group (killed with it), in this session
                                   env={**os.environ, "PYTHONPATH": str(REPO / "scripts"), "CUDA_VISIBLE_DEVICES": ""})
        try:
            wait_until_served(f"http://127.0.0.1:{port}", key, process, log)
            yield {"url": f"http://127.0.0.1:{port}", "base_url": f"http://127.0.0.1:{port}/v1", "log": log,
                   "port": port}
        finally:
            stop(process)


def engine(base_url: str, **more) -> dict:
    return {"base_url": base_url, "api_key_env": KEY_ENV, **more}


@pytest.fixture(scope="module")
def served_model(served):
    from docnmt.decode.backends import load_model

    return load_model("openai", NAME, src_lang="en", tgt_lang="de",
                      engine=engine(served["base_url"], prompt_logprobs=True))


@pytest.fixture(scope="module")
def llama(tiny_llama):
    from docnmt.decode.backends import load_model

    return load_model("causal-lm", tiny_llama, src_lang="en", tgt_lang="de", device="cpu")


def files_holding(root: Path, text: str) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and text.encode() in p.read_bytes()]


# ---- what the served model gives ---------------------------------------------------------------
@pytest.mark.parametrize("name", COMPARED)
def test_greedy_served_translations_equal_vllms_and_causal_lms_with_the_same_prompt_tokens(
        served_model, llama, vllm_outputs, vllm_documents, name):
    found, counters = decode_run(served_model, vllm_documents, name)
    assert found == vllm_outputs["decodes"][name]["hypotheses"]
    expected, local = decode_run(llama, vllm_documents, name)
    assert found == expected and all(found)
    # the server rendered the same conversations into as many tokens as causal-lm's prompts held
    assert counters["prompt_tokens"] == local["tokens_prefilled"] + local["tokens_cached"]
    assert counters["api_requests"] == counters["forward_calls"] == len(vllm_documents["src"])
    assert counters["completion_tokens"] > 0 and counters["retries"] == 0


def test_forced_scoring_agrees_with_vllm_and_causal_lm_within_1e_3(served_model, llama, vllm_outputs,
                                                                   vllm_documents):
    from docnmt.decode.backends import make_searcher
    from docnmt.decode.requests import Request

    src, ref = vllm_documents["src"], vllm_documents["ref"]
    searcher = make_searcher(served_model, beam=1, max_len=40)
    requests = [Request(served_model.encode(s, source=True)) for s in src]
    targets = [served_model.encode(t, source=True) for t in ref]
    forced = [s.logprob for s in searcher.score_forced(requests, targets)]
    assert forced == pytest.approx(vllm_outputs["forced"], abs=1e-3)
    pairs = [s.logprob for s in served_model.score(vllm_documents["pairs"]["src"], vllm_documents["pairs"]["tgt"])]
    assert pairs == pytest.approx(vllm_outputs["pairs"], abs=1e-3)
    local = [s.logprob for s in llama.score(vllm_documents["pairs"]["src"], vllm_documents["pairs"]["tgt"])]
    assert pairs == pytest.approx(local, abs=1e-3)
    assert min(forced) < -1  # real log-probs, not zeros
    # more lines following (a separator end): the reply's text and its line break, as causal-lm scores them
    # (/tokenize of the conversation and of the text, /v1/completions on the ids; tests/decode/test_served_forced.py)
    going_on = searcher.score_forced(requests, targets, ends=[served_model.sep] * len(requests))
    own = make_searcher(llama, beam=1, max_len=40).score_forced(
        [Request(llama.encode(s, source=True)) for s in src], [llama.encode(t, source=True) for t in ref],
        ends=[llama.sep] * len(src))
    assert [s.logprob for s in going_on] == pytest.approx([s.logprob for s in own], abs=1e-3)
    assert [s.tokens for s in going_on] == [s.tokens for s in own]


def test_beam_search_and_sampling_are_refused_in_one_line(served_model):
    from docnmt.decode.backends import make_searcher
    from docnmt.decode.requests import Request

    request = Request(served_model.encode("Hi.", source=True))
    with pytest.raises(ValueError, match=r"beam 12: openai models have no beam search .*use --beam 1"):
        make_searcher(served_model, beam=12).search([request])
    with pytest.raises(ValueError, match="openai models have no sampling"):
        make_searcher(served_model, beam=1).sample(request, 4, 0.02, 1)


# ---- the decode CLI: who served it, and the key never written ----------------------------------
def write_documents(folder: Path, documents: dict) -> dict[str, Path]:
    files = {}
    for name, ext in (("src", "en"), ("ref", "de"), ("docids", "docids")):
        files[name] = folder / f"test.{ext}"
        files[name].write_text("".join(line + "\n" for line in documents[name]), encoding="utf-8")
    return files


def decode_cli(folder: Path, files: dict, base_url: str, strategy: str = "doc-trans", *more: str,
               key_env: str = KEY_ENV) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "docnmt.decode.cli", "--backend", "openai", "--model", NAME, "--base-url", base_url,
         "--api-key-env", key_env, "--strategy", strategy, "--src", str(files["src"]), "--docids", str(files["docids"]),
         "--src-lang", "en", "--tgt-lang", "de", "--beam", "1", "--k", "3", "--max-len-b", "40",
         "--output-bpe", str(folder / "hyp.bpe"), "--output", str(folder / "hyp.txt"),
         "--sidecar", str(folder / "hyp.json"), *more], capture_output=True, text=True, env=tool_env(), timeout=600)


def test_the_decode_cli_records_who_served_it_and_writes_the_key_nowhere(served, vllm_outputs, vllm_documents,
                                                                         key, tmp_path):
    files = write_documents(tmp_path, vllm_documents)
    result = decode_cli(tmp_path, files, served["base_url"], "doc-trans", "--engine-args", "max_concurrency=4,seed=7")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "hyp.txt").read_text(encoding="utf-8").splitlines() == \
        vllm_outputs["decodes"]["doc-trans"]["hypotheses"]
    sidecar = json.loads((tmp_path / "hyp.json").read_text())
    record = sidecar["served"]
    assert (record["base_url"], record["model"], record["reported_model"]) == (served["base_url"], NAME, NAME)
    assert record["system_fingerprints"] and record["system_fingerprints"][0].startswith("vllm-")
    assert (record["temperature"], record["seed"], record["max_concurrency"], record["api_key_env"]) == \
        (0.0, 7, 4, KEY_ENV)
    assert record["context_window"] == 512 and record["time"].endswith("Z")
    assert (sidecar["backend"], sidecar["device"], sidecar["beam"]) == ("openai", "endpoint", 1)
    assert sidecar["api_requests"] == len(vllm_documents["src"]) and sidecar["prompt_tokens"] > 0
    assert not (tmp_path / "hyp.journal").exists()
    assert files_holding(tmp_path, key) == [] and key not in result.stdout + result.stderr


def test_beam_strategies_are_refused_by_the_cli_in_one_line(served, vllm_documents, tmp_path):
    files = write_documents(tmp_path, vllm_documents)
    for strategy, args, expected in (("doc-trans", ["--beam", "12"], "openai models have no beam search"),
                                     ("doc-trans-beam", [], "doc-trans-beam needs what openai models lack")):
        result = decode_cli(tmp_path, files, served["base_url"], strategy, *args)
        assert result.returncode == 2 and expected in result.stderr.splitlines()[-1]


# ---- the checks ------------------------------------------------------------------------------
def check(*args: str, key_env: str = KEY_ENV) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "docnmt.decode.checks", "--backend", "openai", "--api-key-env", key_env,
                           "--src-lang", "en", "--tgt-lang", "de", *args], capture_output=True, text=True,
                          env=tool_env(), timeout=300)


def test_check_model_reports_each_problem_in_one_line(served, tmp_path, monkeypatch, key):
    base = ["--model", NAME, "--base-url", served["base_url"], "--level", "document", "--k", "3"]
    long = tmp_path / "long.en"
    long.write_text("Hello.\n" + "word " * 600 + "\n", encoding="utf-8")
    monkeypatch.setenv("DOCNMT_TEST_WRONG_KEY", "sk-not-the-key")
    with FaultyProxy(served["url"]) as proxy:
        proxy.refuse("prompt_logprobs")  # as a hosted API answers a field it does not know
        cases = [
            (["--model", NAME, "--base-url", "http://127.0.0.1:9/v1", "--level", "sentence"], KEY_ENV,
             "http://127.0.0.1:9/v1 (model my-llm): unreachable (ConnectError"),
            (base, "DOCNMT_TEST_WRONG_KEY", "401 Unauthorized (the key in $DOCNMT_TEST_WRONG_KEY was refused)"),
            (base, "DOCNMT_TEST_UNSET_KEY", "401 Unauthorized ($DOCNMT_TEST_UNSET_KEY is not set"),
            (["--model", "no-such-model", *base[2:]], KEY_ENV,
             "the server serves no model 'no-such-model' (it serves: my-llm)"),
            (["--model", NAME, "--base-url", proxy.url + "/v1", "--level", "sentence", "--engine-args",
              "prompt_logprobs=true"], KEY_ENV, "prompt_logprobs is set, but the server gives no prompt log-probs"),
            ([*base, "--sample", str(long)], KEY_ENV,
             f"{long}:2: document 1: the prompt of this sentence, with its 1 previous sentences as turns, was "
             f"refused by {served['base_url']} (model my-llm): 400 This model's maximum context length is 512"),
        ]
        for args, key_env, expected in cases:
            result = check(*args, key_env=key_env)
            assert result.returncode == 1, (args, result.stdout, result.stderr)
            lines = result.stderr.strip().splitlines()
            assert len(lines) == 1 and lines[0].startswith("error: ") and expected in lines[0], (expected, lines)
    short = tmp_path / "short.en"
    short.write_text("Hello.\nHow are you?\n\nGood morning.\n", encoding="utf-8")
    ok = check(*base, "--engine-args", "prompt_logprobs=true", "--sample", str(short), "--output",
               str(tmp_path / "report.json"))
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.startswith(f"{NAME} at {served['base_url']}: served, en->de") and "context window 512" in ok.stdout
    report = json.loads((tmp_path / "report.json").read_text())
    assert (report["max_positions"], report["prompt_logprobs"], report["sample"]["documents"]) == (512, True, 2)
    assert files_holding(tmp_path, key) == []


# ---- faults: a proxy in front of the server --------------------------------------------------
def test_retries_ride_out_rate_limits_server_errors_and_a_timeout(served, vllm_outputs, vllm_documents):
    from docnmt.decode.backends import load_model

    with FaultyProxy(served["url"], slow_seconds=4) as proxy:
        proxy.plan("/v1/chat/completions", [429, 429, 500, "slow"])
        model = load_model("openai", NAME, src_lang="en", tgt_lang="de",
                           engine=engine(proxy.url + "/v1", timeout=1.5, retry_backoff=0.01, max_retries=4,
                                         max_concurrency=1))
        found, counters = decode_run(model, vllm_documents, "sentence-level")
        assert proxy.count("/v1/chat/completions") == len(vllm_documents["src"]) + 4
    assert found == vllm_outputs["decodes"]["sentence-level"]["hypotheses"]
    assert (counters["retries"], counters["api_requests"]) == (4, len(vllm_documents["src"]))


def test_the_retry_limit_stops_the_decode_in_one_line_writes_nothing_and_keeps_the_finished_round(
        served, vllm_outputs, vllm_documents, tmp_path):
    files = write_documents(tmp_path, vllm_documents)
    documents = len(set(vllm_documents["docids"]))
    with FaultyProxy(served["url"]) as proxy:
        # doc-trans's round 1 (the first sentence of each document) is answered; then every request fails
        proxy.plan("/v1/chat/completions", ["pass"] * documents)
        proxy.always("/v1/chat/completions", 500)
        failed = decode_cli(tmp_path, files, proxy.url + "/v1", "doc-trans", "--engine-args",
                            "max_retries=2,retry_backoff=0.01,max_concurrency=1")
    assert failed.returncode == 1
    (line,) = failed.stderr.strip().splitlines()
    named = re.fullmatch(rf"error: {re.escape(proxy.url)}/v1 \(model {NAME}\): the request of document (\S+), "
                         r"sentence 2 \(source line (\d+)\): gave up after 2 retries: 500 proxy: internal server error",
                         line)
    assert named, line  # round 2: the second sentence of a document, which the source line is
    docid, source_line = named.group(1), int(named.group(2))
    assert vllm_documents["docids"][source_line - 1] == docid == vllm_documents["docids"][source_line - 2]
    assert not any((tmp_path / f"hyp.{ext}").exists() for ext in ("bpe", "txt", "json"))
    assert (tmp_path / "hyp.journal").exists()
    # the rerun reads round 1 from the journal and asks the server for the rest only
    with FaultyProxy(served["url"]) as proxy:
        rerun = decode_cli(tmp_path, files, proxy.url + "/v1", "doc-trans", "--engine-args",
                           "max_retries=2,retry_backoff=0.01,max_concurrency=1")
        asked = proxy.count("/v1/chat/completions")
    assert rerun.returncode == 0, rerun.stderr
    assert f"1 chunks ({documents} requests) done before" in rerun.stdout
    assert asked == len(vllm_documents["src"]) - documents
    assert (tmp_path / "hyp.txt").read_text(encoding="utf-8").splitlines() == \
        vllm_outputs["decodes"]["doc-trans"]["hypotheses"]
    assert json.loads((tmp_path / "hyp.json").read_text())["resumed"]["requests"] == documents


# ---- the manual's commands and the workflow ----------------------------------------------------
def test_the_manuals_check_and_translate_commands_run_as_written(served, vllm_documents, key, tmp_path):
    (block,) = doc_blocks(PAGE, "bash", SECTION, "**Checking and translating.**")
    docs = {}
    for line, docid in zip(vllm_documents["src"], vllm_documents["docids"]):
        docs.setdefault(docid, []).append(line)
    (tmp_path / "talks.en").write_text("\n\n".join("\n".join(d) for d in docs.values()) + "\n", encoding="utf-8")
    result = subprocess.run(["bash", "-c", "set -e\n" + block.replace("8000", str(served["port"]))], cwd=tmp_path,
                            capture_output=True, text=True, env=tool_env(), timeout=600)
    assert result.returncode == 0, result.stderr
    assert f"{NAME} at {served['base_url']}: served, en->de" in result.stdout and "prompt log-probs" in result.stdout
    translated = [line for line in (tmp_path / "talks.de").read_text(encoding="utf-8").split("\n\n")]
    assert len(translated) == len(docs) and all(translated)
    assert files_holding(tmp_path, key) == [] and key not in result.stdout + result.stderr


def test_the_manuals_workflow_blocks_run_on_the_served_model_without_training(served, vllm_documents, key,
                                                                              tmp_path):
    """docs/own-models.md's two tasks, a local server's and a hosted provider's, as written with only the corpus
    folder, the server's address and the hosted model's name replaced by the tiny Llama's server, its key in
    $OPENAI_API_KEY too, and the hosted task at temperature 0.3: the strategies (doc-trans-beam and MBR skipped: no
    beam search), BLEU, pronouns, perplexity and CXMI (prompt log-probs on for the local task), and Table 1 with the
    tokens the server reported and the hosted task's cost; no rule trains, and no file of the run holds the key."""
    from docnmt import layout

    corpus = tmp_path / "my-talks"
    corpus.mkdir()
    first_two = list(dict.fromkeys(vllm_documents["docids"]))[:2]
    keep = [i for i, d in enumerate(vllm_documents["docids"]) if d in first_two]
    for name, ext in (("src", "en"), ("ref", "de"), ("docids", "docids")):
        (corpus / f"test.{ext}").write_text("".join(vllm_documents[name][i] + "\n" for i in keep), encoding="utf-8")
    local, hosted = doc_blocks(PAGE, "yaml", SECTION, "**In the workflow.**")[0], \
        doc_blocks(PAGE, "yaml", SECTION, "A hosted provider's block")[0]
    configs = []
    for name, block in (("local", local), ("hosted", hosted)):
        configs.append(tmp_path / f"{name}.yaml")
        configs[-1].write_text(block.replace("/data/my-talks", str(corpus))
                               .replace("http://127.0.0.1:8000/v1", served["base_url"])
                               .replace("https://api.openai.com/v1", served["base_url"])
                               .replace("gpt-4.1", NAME), encoding="utf-8")
    (tmp_path / "run.yaml").write_text(yaml.safe_dump({
        "tasks": ["mine-served", "mine-hosted"],
        "strategies": ["sentence-level", "doc-trans", "cheating", "doc-trans-beam"], "mbr": {"strategies": ["doc-trans"]},
        "task_settings": {"mine-hosted": {"pronoun_min_examples": 1, "models": {"endpoint": {"temperature": 0.3}}},
                          "mine-served": {"pronoun_min_examples": 1}}}), encoding="utf-8")
    work = tmp_path / "work"
    result = run_snakemake(work, "tables", "--profile", str(REPO / "profiles/cpu"), "--cores", "2", "--configfile",
                           *map(str, configs), str(tmp_path / "run.yaml"),
                           env={**tool_env(), "OPENAI_API_KEY": key})
    assert "rule train" not in result.stdout + result.stderr
    tables = work / layout.combined_tables_dir("mine-served+mine-hosted")
    cost = (tables / "decoding_cost.md").read_text(encoding="utf-8")
    for task in ("mine-served", "mine-hosted"):
        for column in ("prompt tokens", "cached prompt tokens", "completion tokens", "API requests"):
            assert f"| {task} {column} |" in cost
    assert "| mine-hosted cost |" in cost and "| mine-served cost |" not in cost
    assert "A hosted model may change behind its name" in cost
    assert "doc-trans-beam (doc-trans-beam needs what openai models lack: openai models have no beam search" in cost
    assert "doc-trans+mbr (openai models have no beam search" in cost
    assert "Cost: at input 2.0, cached_input 0.5, output 8.0 per million tokens " \
           "(task_settings.mine-hosted.models.endpoint.prices)." in cost
    assert "The search in the server's own precision" in cost
    perplexity = (tables / "perplexity.md").read_text(encoding="utf-8")
    assert "mine-hosted: not scored (\"-\"), and no CXMI or context-usage tables: openai models have no forced " \
           "scoring (perplexity, CXMI) without prompt_logprobs: true" in perplexity
    for name in ("quality.md", "context_usage.md", "pronoun_f1.md"):
        assert (tables / name).is_file(), name
    served_doc = json.loads((work / layout.decode_file("mine-served", "test", "doc-trans", "json")).read_text())
    hosted_doc = json.loads((work / layout.decode_file("mine-hosted", "test", "doc-trans", "json")).read_text())
    assert served_doc["served"]["reported_model"] == NAME and served_doc["beam"] == 1
    assert (hosted_doc["served"]["temperature"], hosted_doc["served"]["seed"], hosted_doc["context"]) == \
        (0.3, 1, "document")
    assert files_holding(work, key) == [] and key not in result.stdout + result.stderr

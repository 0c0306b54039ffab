"""The LLM judge (docnmt.score.gemba) against a real server: vLLM's OpenAI-compatible server on the tests' tiny Llama,
its context widened to 4096 positions (GEMBA's few-shot prompts are about 1500 of its tokens; the tiny model was
trained on 512 and babbles beyond), on a loopback port with a key, once for this module. Its answers do not parse:
alone, the judge is one error line; behind a proxy (tests/faulty_endpoint.py) that answers some prompts in GEMBA's
form, every unparsed segment is counted, nothing is scored 0, a rerun asks nothing again, a run cut short resumes,
and the key is written nowhere."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys

import pytest
import yaml

from helpers import REPO, VLLM_PYTHON, copy_workdir, doc_blocks, run_snakemake, tool_env
from served import free_port, stop, wait_until_served

#: make test-full: the judge on a served model.
pytestmark = pytest.mark.full

#: The module's fixtures that train a model or start the server (conftest gives their tests the tier ``trains``).
TRAINING_FIXTURES = {"judge_server"}
#: docs/scoring.md's names: the judge's name on the server and the variable that holds its key.
NAME, KEY_ENV = "my-judge", "DOCNMT_JUDGE_KEY"
SOURCES = ["The lamp is old.", "Hi Tom!", "Where do you live now?"]
SYSTEMS = {"sentence-level": ["Die Lampe ist alt.", "Hallo Tom!", "Wo wohnen Sie jetzt?"],
           "doc-trans": ["Die Lampe alt.", "Hallo!", "Wo wohnst du?"]}


@pytest.fixture(scope="module")
def judge_server(tiny_llama, tmp_path_factory):
    if not VLLM_PYTHON.exists():
        pytest.skip(f"no vLLM environment at {VLLM_PYTHON}: `make vllm` makes it (make test-full does)")
    folder = tmp_path_factory.mktemp("judge")
    model = folder / "judge-model"
    shutil.copytree(tiny_llama, model)
    for name, key in (("config.json", "max_position_embeddings"), ("tokenizer_config.json", "model_max_length")):
        settings = json.loads((model / name).read_text())
        settings[key] = 4096
        (model / name).write_text(json.dumps(settings, indent=2))
    key, port, log = f"sk-judge-{secrets.token_hex(16)}", free_port(), folder / "server.log"
    command = [str(VLLM_PYTHON), "-m", "docnmt.decode.backends.vllm.serve", str(model), "--served-model-name", NAME,
               "--host", "127.0.0.1", "--port", str(port), "--api-key", key, "--dtype", "float32",
               "--max-model-len", "4096"]
    with open(log, "w") as out, pytest.MonkeyPatch.context() as patch:
        patch.setenv(KEY_ENV, key)
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, cwd=folder, process_group=0,
                                   env={**os.environ, "PYTHONPATH": str(REPO / "scripts"), "CUDA_VISIBLE_DEVICES": ""})
        try:
            wait_until_served(f"http://127.0.0.1:{port}", key, process, log)
            yield {"base_url": f"http://127.0.0.1:{port}/v1", "key": key, "log": log}
        finally:
            stop(process)


def judge_cli(folder, base_url: str, *more: str) -> subprocess.CompletedProcess:
    (folder / "src.en").write_text("".join(s + "\n" for s in SOURCES))
    for name, lines in SYSTEMS.items():
        (folder / f"{name}.de").write_text("".join(s + "\n" for s in lines))
    command = [sys.executable, "-m", "docnmt.score.gemba", "--source", str(folder / "src.en"), "--reference",
               str(folder / "sentence-level.de"), *[a for n in SYSTEMS for a in ("--system", f"{n}={folder}/{n}.de")],
               "--source-language", "en", "--target-language", "de", "--base-url", base_url, "--model", NAME,
               "--api-key-env", KEY_ENV, "--cache", str(folder / "cache"), "--max-tokens", "16",
               "--max-tokens-limit", "32", "--max-concurrency", "4", "--seed", "0", *more]
    return subprocess.run(command, capture_output=True, text=True, env=tool_env(), timeout=900)


def some_answers_parse(request: dict, text: str) -> str | None:
    """A judge that answers some prompts in GEMBA's form (the proxy's rewrite): the ESA score of the lamp's
    sentence, 85; the MQM errors of Tom's sentence once asked again at temperature 0.2 or more; the tiny model's own
    answer everywhere else."""
    prompt = request["messages"][-1]["content"]
    source = prompt.split("source:\n```", 1)[-1].split("```", 1)[0]
    if prompt.startswith("Given the translation") and "lamp" in source:
        return "85"
    if request["messages"][0]["content"].startswith("You are an annotator") and "Tom" in source \
            and request["temperature"] >= 0.2:
        return 'Critical:\nno-error\nMajor:\naccuracy/omission - "Tom"\nMinor:\nno-error'
    return None


def every_answer_in_form(request: dict, text: str) -> str:
    """A judge that answers every prompt (the workflow test's proxy): ESA's spans, then 70; GEMBA-MQM a sentence at
    temperature 0 (unparsed), one major error from the second, warmer try on."""
    if request["messages"][-1]["content"].startswith("Given the translation"):
        return "70"
    if request["messages"][0]["content"].startswith("Your task is"):
        return "Major:\nno-error\nMinor:\nno-error"
    return 'Major:\naccuracy/omission - "x"' if request["temperature"] >= 0.1 else "Das kann ich nicht sagen."


def test_a_judge_that_answers_nothing_parsable_is_one_line_and_writes_nothing(judge_server, tmp_path):
    """The tiny judge alone answers with German sentences: every answer is asked again up to temperature 1.0, none
    parses, and the run is one line naming the endpoint, with no score or answers file (its answers are cached)."""
    failed = judge_cli(tmp_path, judge_server["base_url"], "--output", str(tmp_path / "gemba.json"), "--answers",
                       str(tmp_path / "answers.jsonl"))
    assert failed.returncode == 1 and failed.stderr.count("\n") == 1, failed.stderr[-3000:]
    assert f"{judge_server['base_url']} (model {NAME})" in failed.stderr
    assert "GEMBA-ESA: the judge answered nothing parsable for any segment of any system" in failed.stderr
    assert not (tmp_path / "gemba.json").exists() and not (tmp_path / "answers.jsonl").exists()
    # GEMBA-ESA's spans, then 11 scores a segment, for each distinct translation, and GEMBA-MQM's 11
    assert len((tmp_path / "cache" / "answers.jsonl").read_text().splitlines()) >= 5 * (1 + 11 + 11)
    refused = judge_cli(tmp_path, judge_server["base_url"], "--model", "no-such-judge",
                        "--output", str(tmp_path / "gemba.json"))
    assert refused.returncode == 1 and refused.stderr.count("\n") == 1 and "no-such-judge" in refused.stderr
    assert "404" in refused.stderr and not (tmp_path / "gemba.json").exists()


def test_the_judges_unparsed_answers_are_counted_cached_and_resumed_and_the_key_is_written_nowhere(judge_server,
                                                                                                   tmp_path):
    """Through a proxy that makes the judge answer some prompts in GEMBA's form (:func:`some_answers_parse`): the
    lamp's sentence scores 85 in GEMBA-ESA and Tom's -5 in GEMBA-MQM (asked again twice, warmer), every other
    segment is counted unparsed and left out of the mean; the cost note counts the requests. A rerun answers
    everything from the cache; with half the cache's lines gone (a killed run), only the rest is asked again."""
    from faulty_endpoint import FaultyProxy

    with FaultyProxy(judge_server["base_url"].rsplit("/v1", 1)[0]) as proxy:
        proxy.rewrite(some_answers_parse)
        base_url = proxy.url + "/v1"
        first = judge_cli(tmp_path, base_url, "--baseline", "sentence-level", "--bootstrap-samples", "50", "--output",
                          str(tmp_path / "gemba.json"), "--answers", str(tmp_path / "answers.jsonl"),
                          "--price-input", "2", "--price-output", "8", "--timeout", "300", "--max-retries", "2")
        assert first.returncode == 0, first.stderr[-3000:]
        scored = json.loads((tmp_path / "gemba.json").read_text())
        assert scored["columns"] == ["GEMBA-ESA", "GEMBA-MQM"]
        for system in SYSTEMS:
            assert scored["systems"][system]["GEMBA-ESA"] | {"signature": None} == {
                "score": 85.0, "parsed": 1, "unparsed": 2, "signature": None}
            assert scored["systems"][system]["GEMBA-MQM"] | {"signature": None} == {
                "score": -5.0, "parsed": 1, "unparsed": 2, "signature": None}
        asked = scored["usage"]["requests"]
        cache = tmp_path / "cache" / "answers.jsonl"
        assert asked == len(cache.read_text().splitlines()) == proxy.count("/v1/chat/completions")
        assert f"{asked} requests" in scored["notes"][0] and "per million" in scored["notes"][0]
        answers = [json.loads(line) for line in (tmp_path / "answers.jsonl").read_text().splitlines()]
        tom = next(a for a in answers if a["metric"] == "GEMBA-MQM" and a["line"] == 1)
        assert tom["score"] == -5 and len(tom["answers"]) == 3, "asked at 0.0 and 0.1, parsed at 0.2"
        assert sum(a["score"] is None for a in answers) == 8
        again = judge_cli(tmp_path, base_url, "--output", str(tmp_path / "again.json"))
        assert again.returncode == 0, again.stderr[-3000:]
        assert json.loads((tmp_path / "again.json").read_text())["usage"]["requests"] == 0
        lines = cache.read_text().splitlines()
        cache.write_text("\n".join(lines[:len(lines) // 2]) + "\n" + lines[len(lines) // 2][:25])  # killed mid-line
        resumed = judge_cli(tmp_path, base_url, "--output", str(tmp_path / "resumed.json"))
        assert resumed.returncode == 0, resumed.stderr[-3000:]
        usage = json.loads((tmp_path / "resumed.json").read_text())["usage"]
        assert usage["requests"] == len(lines) - len(lines) // 2
    written = [p for p in tmp_path.rglob("*") if p.is_file() and judge_server["key"] in p.read_text(errors="ignore")]
    assert not written and judge_server["key"] not in first.stdout + first.stderr


def test_the_scoring_pages_judge_block_scores_the_demo_in_table_3(judge_server, trained_demo, tmp_path):
    """docs/scoring.md's GEMBA block as written (its endpoint a proxy in front of this module's server that answers
    the ESA score 70 and MQM's errors from the second, warmer try on), but for what the tiny judge needs: 2 sampled
    sentences instead of 200, answers of 16 to 32 tokens. The workflow's rule gemba judges the trained demo's
    sentence-level and doc-trans; Table 3 shows both columns, and the note the requests and their cost. The key is in
    no file of the workflow's folder."""
    from docnmt import layout
    from docnmt.config import validate
    from docnmt.score import tables
    from docnmt.workflow.tables import score_manifest

    from faulty_endpoint import FaultyProxy

    proxy = FaultyProxy(judge_server["base_url"].rsplit("/v1", 1)[0]).__enter__()
    proxy.rewrite(every_answer_in_form)
    (block,) = doc_blocks(REPO / "docs/scoring.md", "yaml", "## An LLM as the judge")
    metrics = yaml.safe_load(block.replace("http://127.0.0.1:8000/v1", proxy.url + "/v1"))["metrics"]
    metrics["gemba"].update(sample=2, max_tokens=16, max_tokens_limit=32, cache=str(tmp_path / "judge-cache"),
                            max_retries=2, timeout=300)
    work = copy_workdir(trained_demo, tmp_path / "demo")
    config = yaml.safe_load((REPO / "config.yaml").read_text())
    config.update(tasks=["demo"], strategies=["sentence-level", "doc-trans"], metrics=metrics)
    config["mbr"]["strategies"] = config["cad"]["strategies"] = config["docmbr"]["strategies"] = []
    config["task_settings"]["demo"]["ctxpro"] = []
    config["scoring"].update(significance_baselines=["sentence-level"], bootstrap_samples=100)
    (tmp_path / "judge.yaml").write_text(yaml.safe_dump(config, sort_keys=False))  # the presets' order: no retraining
    target = layout.score_file("demo", "test", "gemba")
    env = {**tool_env(), KEY_ENV: judge_server["key"]}
    try:
        run_snakemake(work, "--profile", str(REPO / "profiles/cpu"), "--cores", "2", target,
                      "--configfile", str(tmp_path / "judge.yaml"), env=env)
    finally:
        proxy.__exit__(None, None, None)
    scored = json.loads((work / target).read_text())
    usage = scored["usage"]  # where both systems translate a sentence alike, the second is answered by the cache
    # GEMBA-ESA: the spans and the score at once; GEMBA-MQM: parsed at the second try, warmer (every_answer_in_form)
    assert scored["judged"] == 2 and usage["requests"] + usage["cached_answers"] == 2 * 2 * (2 + 2)
    assert "|sample:2|" in scored["signatures"]["GEMBA-MQM"]
    for system in ("sentence-level", "doc-trans"):
        assert scored["systems"][system]["GEMBA-ESA"]["score"] == 70 and \
            scored["systems"][system]["GEMBA-MQM"]["score"] == -5
    manifest = score_manifest(validate(config))
    spec = {"bleu_ter": {"test": str(work / manifest["tasks"]["demo"]["bleu_ter"]["test"])},
            "gemba": {"test": str(work / target)}}
    table = tables.quality_table({"strategies": manifest["strategies"], "tasks": {"demo": spec}})
    for column, cell in (("demo test GEMBA-MQM", "-5.0"), ("demo test GEMBA-ESA", "70.0")):
        assert [row[table.header.index(column)] for row in table.rows] == [cell] * 2
    notes = "\n".join(table.notes)
    assert "[N unparsed]" in notes and "the judge my-judge at 127.0.0.1:" in notes
    assert "at 2.0/8.0 per million prompt/completion tokens" in notes
    leaked = [p for p in work.rglob("*") if p.is_file() and not p.is_symlink() and p.stat().st_size < 50_000_000
              and judge_server["key"].encode() in p.read_bytes()]
    assert not leaked, leaked

"""The LLM judge (docnmt.score.judge) against a real server: vLLM's OpenAI-compatible server on the tests' tiny Llama,
its context widened to 4096 positions (GEMBA's few-shot prompts are about 1500 of its tokens; the tiny model was
trained on 512 and babbles beyond), on a loopback port with a key, once for this module. Its answers do not parse,
which is what the tests use: every unparsed segment is counted, nothing is scored 0, a rerun asks nothing again, a
run cut short resumes, and the key is written nowhere."""

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
        pytest.skip(f"no vLLM environment at {VLLM_PYTHON}: `make vllm` makes it (make test does)")
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


def judge_cli(folder, server, *more: str) -> subprocess.CompletedProcess:
    (folder / "src.en").write_text("".join(s + "\n" for s in SOURCES))
    for name, lines in SYSTEMS.items():
        (folder / f"{name}.de").write_text("".join(s + "\n" for s in lines))
    command = [sys.executable, "-m", "docnmt.score.judge", "--source", str(folder / "src.en"), "--reference",
               str(folder / "sentence-level.de"), *[a for n in SYSTEMS for a in ("--system", f"{n}={folder}/{n}.de")],
               "--source-language", "en", "--target-language", "de", "--base-url", server["base_url"], "--model", NAME,
               "--api-key-env", KEY_ENV, "--cache", str(folder / "cache"), "--max-tokens", "16",
               "--max-tokens-limit", "32", "--max-concurrency", "4", "--seed", "0", *more]
    return subprocess.run(command, capture_output=True, text=True, env=tool_env(), timeout=900)


def test_the_judges_unparsed_answers_are_counted_cached_and_resumed_and_the_key_is_written_nowhere(judge_server,
                                                                                                   tmp_path):
    """The tiny judge answers with German sentences: every answer is asked again up to temperature 1.0 (GEMBA-MQM:
    11 requests a segment; GEMBA-ESA: the spans, then 11 for the score), none parses, each segment is counted
    unparsed and the score is none. A rerun answers everything from the cache; with half the cache's lines gone (a
    killed run), only the rest is asked again."""
    first = judge_cli(tmp_path, judge_server, "--baseline", "sentence-level", "--bootstrap-samples", "50",
                      "--output", str(tmp_path / "gemba.json"), "--answers", str(tmp_path / "answers.jsonl"),
                      "--price-input", "2", "--price-output", "8", "--timeout", "300", "--max-retries", "2")
    assert first.returncode == 0, first.stderr[-3000:]
    scored = json.loads((tmp_path / "gemba.json").read_text())
    assert scored["columns"] == ["GEMBA-ESA", "GEMBA-MQM"]
    for system in SYSTEMS:
        for column in scored["columns"]:
            entry = scored["systems"][system][column]
            assert entry["unparsed"] == 3 and entry["parsed"] == 0 and entry["score"] is None, entry
    asked = scored["usage"]["requests"]
    cache = tmp_path / "cache" / "answers.jsonl"
    # at least GEMBA-MQM's 11 and GEMBA-ESA's 1 + 11 a segment (more where an answer cut short is asked for more)
    assert asked == len(cache.read_text().splitlines()) >= len(SYSTEMS) * len(SOURCES) * (11 + 1 + 11)
    assert scored["usage"]["cached_answers"] == 0
    assert f"{asked} requests (0 answers from the cache)" in scored["notes"][0] and "per million" in scored["notes"][0]
    answers = [json.loads(line) for line in (tmp_path / "answers.jsonl").read_text().splitlines()]
    assert len(answers) == 2 * len(SYSTEMS) * len(SOURCES)
    assert all(a["score"] is None and len(a["answers"]) == 11 for a in answers)
    again = judge_cli(tmp_path, judge_server, "--output", str(tmp_path / "again.json"))
    assert again.returncode == 0, again.stderr[-3000:]
    assert json.loads((tmp_path / "again.json").read_text())["usage"]["requests"] == 0
    lines = cache.read_text().splitlines()
    cache.write_text("\n".join(lines[:len(lines) // 2]) + "\n" + lines[len(lines) // 2][:25])  # killed mid-line
    resumed = judge_cli(tmp_path, judge_server, "--output", str(tmp_path / "resumed.json"))
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    usage = json.loads((tmp_path / "resumed.json").read_text())["usage"]
    assert usage["requests"] == len(lines) - len(lines) // 2 and usage["cached_answers"] == asked - usage["requests"]
    written = [p for p in tmp_path.rglob("*") if p.is_file() and judge_server["key"] in p.read_text(errors="ignore")]
    assert not written and judge_server["key"] not in first.stdout + first.stderr


def test_the_scoring_pages_judge_block_scores_the_demo_in_table_3(judge_server, trained_demo, tmp_path):
    """docs/scoring.md's GEMBA block as written (its endpoint this module's server), but for what the tiny judge
    needs: 2 sampled sentences instead of 200, answers of 16 to 32 tokens. The workflow's rule gemba judges the
    trained demo's sentence-level and doc-trans; Table 3 shows both columns with the unparsed counts, and the note
    the requests and their cost. The key is in no file of the workflow's folder."""
    from docnmt import layout
    from docnmt.config import validate
    from docnmt.score import tables
    from docnmt.workflow.tables import score_manifest

    (block,) = doc_blocks(REPO / "docs/scoring.md", "yaml", "## An LLM as the judge")
    metrics = yaml.safe_load(block.replace("http://127.0.0.1:8000/v1", judge_server["base_url"]))["metrics"]
    metrics["gemba"].update(sample=2, max_tokens=16, max_tokens_limit=32, cache=str(tmp_path / "judge-cache"),
                            max_retries=2, timeout=300)
    work = copy_workdir(trained_demo, tmp_path / "demo")
    config = yaml.safe_load((REPO / "config.yaml").read_text())
    config.update(tasks=["demo"], strategies=["sentence-level", "doc-trans"], metrics=metrics)
    config["mbr"]["strategies"] = []
    config["task_settings"]["demo"]["ctxpro"] = []
    config["scoring"].update(significance_baselines=["sentence-level"], bootstrap_samples=100)
    (tmp_path / "judge.yaml").write_text(yaml.safe_dump(config, sort_keys=False))  # the presets' order: no retraining
    target = layout.score_file("demo", "test", "gemba")
    env = {**tool_env(), KEY_ENV: judge_server["key"]}
    run_snakemake(work, "--profile", str(REPO / "profiles/cpu"), "--cores", "2", target,
                  "--configfile", str(tmp_path / "judge.yaml"), env=env)
    scored = json.loads((work / target).read_text())
    usage = scored["usage"]  # where both systems translate a sentence alike, the second is answered by the cache
    assert scored["judged"] == 2 and usage["requests"] + usage["cached_answers"] >= 2 * 2 * (11 + 1 + 11)
    assert "|sample:2|" in scored["signatures"]["GEMBA-MQM"]
    manifest = score_manifest(validate(config))
    spec = {"bleu_ter": {"test": str(work / manifest["tasks"]["demo"]["bleu_ter"]["test"])},
            "gemba": {"test": str(work / target)}}
    table = tables.bleu_ter_table({"strategies": manifest["strategies"], "tasks": {"demo": spec}})
    for column in ("demo test GEMBA-MQM", "demo test GEMBA-ESA"):
        assert [row[table.header.index(column)] for row in table.rows] == ["- [2 unparsed]"] * 2
    notes = "\n".join(table.notes)
    assert "[N unparsed]" in notes and "the judge my-judge at 127.0.0.1:" in notes
    assert "at 2.0/8.0 per million prompt/completion tokens" in notes
    leaked = [p for p in work.rglob("*") if p.is_file() and not p.is_symlink() and p.stat().st_size < 50_000_000
              and judge_server["key"].encode() in p.read_bytes()]
    assert not leaked, leaked

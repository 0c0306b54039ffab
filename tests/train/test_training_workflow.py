"""Training through Snakemake: both demo models, the document model's context advantage,
and resuming a killed training from its last checkpoint."""

import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import REPO, copy_workdir, run_snakemake, tool_env

pytestmark = pytest.mark.workflow

TEST_CONFIG = str(REPO / ".test" / "config_demo.yaml")


def test_both_demo_models_are_trained(trained_demo):
    for level in ("sentence", "document"):
        model = trained_demo / f"results/demo/models/{level}/checkpoint_best.pt"
        assert model.stat().st_size > 1_000_000, f"{level}: a trained checkpoint"
        log = (trained_demo / f"logs/demo/train/{level}.log").read_text()
        assert "--required-batch-size-multiple 1" in log and "--cpu" in log
        curve = (trained_demo / f"results/demo/models/{level}/learning_curve.csv").read_text().splitlines()
        assert curve[0].startswith("kind,epoch,num_updates") and len(curve) > 5
    png = trained_demo / "results/demo/plots/learning_curves.png"
    assert png.read_bytes()[:4] == b"\x89PNG"


def contrastive_accuracy(workdir: Path, level: str) -> float:
    from docnmt.score import contrastive

    out = workdir / f"acc_{level}.json"
    contrastive.main([
        "--model", str(workdir / f"results/demo/models/{level}/checkpoint_best.pt"),
        "--data", str(workdir / f"data/demo/bin/{level}"), "--level", level, "--k", "3",
        "--src", str(workdir / "data/demo/bpe/contrapro.en"), "--tgt", str(workdir / "data/demo/bpe/contrapro.de"),
        "--examples", str(workdir / "data/demo/contrapro/contrapro.examples.jsonl"),
        "--codes", str(workdir / "data/demo/bpe/codes"), "--output", str(out),
    ])
    return json.loads(out.read_text())["overall"]["accuracy"]


def test_document_model_gets_context_dependent_pronouns_clearly_better(trained_demo):
    """Forced scoring of the demo's contrastive pronoun set: the gender of 'it' is only
    recoverable from the previous sentences, which only the document model sees."""
    sentence = contrastive_accuracy(trained_demo, "sentence")
    document = contrastive_accuracy(trained_demo, "document")
    print(f"demo ContraPro accuracy: sentence {sentence:.3f}, document {document:.3f}")
    assert document >= 0.9, f"document-level accuracy {document:.3f}: the context model must resolve the pronouns"
    assert document - sentence >= 0.3, f"document {document:.3f} vs sentence {sentence:.3f}: expected a clear advantage"


def checkpoint_updates(path: Path) -> int:
    import torch

    return int(torch.load(path, map_location="cpu", weights_only=False)["optimizer_history"][-1]["num_updates"])


def test_killed_training_resumes_from_its_last_checkpoint(small_demo_data, tmp_path):
    target = "results/demo/models/document/checkpoint_best.pt"
    copy_workdir(small_demo_data, tmp_path)
    cpu = ("--profile", str(REPO / "profiles/cpu"), "--cores", "2")
    planned = run_snakemake(tmp_path, target, "-n", *cpu, "--configfile", TEST_CONFIG).stdout
    assert re.search(r"^train\s+1$", planned, re.M) and not re.search(r"^binarize\s", planned, re.M), planned
    last = tmp_path / "results/demo/models/document/checkpoints/checkpoint_last.pt"
    snakemake = [str(Path(tool_env()["PATH"].split(os.pathsep)[0]) / "snakemake"), "-s", str(REPO / "Snakefile"),
                 "--directory", str(tmp_path), target, *cpu, "--configfile", TEST_CONFIG]
    proc = subprocess.Popen(snakemake, env=tool_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        deadline = time.time() + 300
        while not last.exists() and time.time() < deadline and proc.poll() is None:
            time.sleep(0.1)
        assert last.exists(), "training never wrote checkpoint_last.pt"
        os.killpg(proc.pid, signal.SIGKILL)  # the node is preempted: Snakemake and fairseq die at once
    finally:
        proc.wait(timeout=60)
    killed_at = checkpoint_updates(last)
    assert not (tmp_path / target).exists(), "a killed training must not present a best checkpoint"
    assert killed_at >= 1

    run_snakemake(tmp_path, "--unlock", "--configfile", TEST_CONFIG)
    run_snakemake(tmp_path, target, *cpu, "--configfile", TEST_CONFIG, "--rerun-incomplete")
    log = (tmp_path / "logs/demo/train/document.log").read_text()
    assert f"resuming from update {killed_at}" in log, log[-3000:]
    assert f"@ {killed_at} updates" in log, "fairseq must load the checkpoint at the update where it was killed"
    from docnmt.train.curves import parse_line

    rerun = [row for row in map(parse_line, log.splitlines()) if row]
    assert rerun and rerun[0]["num_updates"] > killed_at, (
        f"the rerun's first logged update must come after {killed_at}, not restart from zero: {rerun[:1]}"
    )
    final = checkpoint_updates(tmp_path / "results/demo/models/document/checkpoints/checkpoint_last.pt")
    assert final > killed_at, f"training continued past update {killed_at} (ended at {final})"
    history = (tmp_path / "results/demo/models/document/checkpoints/fairseq.log").read_text()
    assert history.count("fairseq_cli.train | {'_name'") == 2, "the history keeps the killed run and the resumed one"
    assert history.count("fairseq_cli.train | done training") == 1, "only the resumed run finished"
    assert (tmp_path / target).exists()

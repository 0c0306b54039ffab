"""Resuming a killed training from its last checkpoint, on the test-size demo's data stage.

Its own module, apart from the trained demo's tests: it needs only the data stage, so it runs while the demo trains.
"""

import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from helpers import REPO, TEST_CONFIG, copy_workdir, run_snakemake, tool_env

#: make test-full: a training killed and resumed, end to end.
pytestmark = [pytest.mark.workflow, pytest.mark.full]


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
    # the training holds right after it has put checkpoint_last.pt in place (tests/hold/sitecustomize.py), and is
    # killed there: never before its first checkpoint, never after it finished
    held = tmp_path / "held"
    env = dict(tool_env(), DOCNMT_TEST_HOLD=f"checkpoint_last.pt={held}",
               PYTHONPATH=os.pathsep.join(filter(None, [str(REPO / "tests" / "hold"), os.environ.get("PYTHONPATH")])))
    proc = subprocess.Popen(snakemake, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        deadline = time.time() + 600
        while not held.exists() and proc.poll() is None and time.time() < deadline:
            time.sleep(0.2)
        assert held.exists(), f"the training never put checkpoint_last.pt in place (Snakemake's exit: {proc.poll()})"
        assert proc.poll() is None, "Snakemake is still running: the training holds"
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

"""bench/gpu-check, its CPU part: the same steps as on a GPU, so that its first GPU run is not its first run."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import REPO, tool_env

#: make test-full: a benchmark's run.
pytestmark = pytest.mark.full

SCRIPT = REPO / "bench" / "gpu-check"


def test_missing_data_without_snakemake_is_a_clear_error(tmp_path):
    env = tool_env()
    env["PATH"] = str(tmp_path)  # no snakemake there
    result = subprocess.run([sys.executable, str(SCRIPT), "--data", str(tmp_path / "nothing"), "--out", str(tmp_path / "out")],
                            capture_output=True, text=True, env=env)
    assert result.returncode != 0
    assert "the demo's prepared data is missing" in result.stderr and "bin/sentence/manifest.json" in result.stderr
    assert not (tmp_path / "out").exists(), "nothing written"


#: The smoke test's longest hypothesis, in tokens (the decode CLI's --max-len-b).
MAX_LEN = 24


@pytest.mark.workflow
def test_gpu_check_runs_on_cpu(small_demo_data, tmp_path):
    """Train 10 updates, decode every strategy in bfloat16 and in float32 on CPU, compare, summarize (on the
    test-size demo's data stage). The barely trained models never end a sentence: hypotheses of at most 24 tokens
    (--max-len-b) instead of the default 200 keep the 36 decodes short."""
    out = tmp_path / "check"
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--data", str(small_demo_data / "data/demo"), "--out", str(out),
         "--device", "cpu", "--dtype", "bfloat16", "--updates", "10", "--docs", "2", "--beam", "2", "--h", "2",
         "--max-len-b", str(MAX_LEN), "--min-agreement", "0", "--no-bench", "--vllm", "none"],
        capture_output=True, text=True, env=dict(tool_env(), OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1")),
        timeout=1500,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    summary = result.stdout.strip().splitlines()[-1]
    assert summary.startswith("gpu-check summary: 20/20 checks passed on cpu (bfloat16)") and summary.endswith("PASS")
    for level in ("sentence", "document"):
        assert (out / f"results/demo/models/{level}/checkpoint_best.pt").exists()
    for folder, dtype in (("device-cpu-bfloat16", "bfloat16"), ("reference-cpu-float32", "float32")):
        sidecars = sorted((out / "decode" / folder).glob("*.json"))
        assert len(sidecars) == 9, "every strategy"
        for path in sidecars:
            sidecar = json.loads(path.read_text())
            assert (sidecar["device"], sidecar["dtype"]) == ("cpu", dtype)
            assert sidecar["sentences"] == sidecar["hypotheses"] == len((out / "subset/test.src").read_text().splitlines())
            assert sidecar["max_len_b"] == MAX_LEN
            hypotheses = path.with_suffix(".bpe").read_text(encoding="utf-8").splitlines()
            assert max(len(h.split()) for h in hypotheses) <= MAX_LEN, f"{path.stem}: at most --max-len-b tokens"

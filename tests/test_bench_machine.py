"""bench/machine: the machine's speed on the project's fixed work, each figure read from a real run."""

import re
import subprocess
import sys

import pytest

from helpers import REPO, tool_env

#: make test-full: a benchmark's run.
pytestmark = pytest.mark.full

SCRIPT = REPO / "bench" / "machine"


def figures(output: str) -> dict[str, float]:
    found = {name: re.search(rf"^{re.escape(label)}\s+([\d.]+) ", output, re.M)
             for name, label in (("matmul", "matmul 256x256 float32, one thread"), ("torch", "import torch"),
                                 ("fairseq", "import fairseq (import_fairseq)"),
                                 ("training", "demo training, sentence level"))}
    return {name: float(match[1]) for name, match in found.items() if match}


def test_the_machine_figures_are_measured_on_the_demo_data(small_demo_data, tmp_path):
    """On the test-size demo's data: every figure positive, the training's from fairseq's log between updates 5
    and 10; without the data, the training figure is left out with the path it looked at."""
    result = subprocess.run([sys.executable, str(SCRIPT), "--workdir", str(small_demo_data), "--repeats", "1",
                             "--updates", "10"], capture_output=True, text=True, env=tool_env(), timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    found = figures(result.stdout)
    assert set(found) == {"matmul", "torch", "fairseq", "training"} and all(v > 0 for v in found.values()), result.stdout
    assert "updates 5-10" in result.stdout and "medians of 1" in result.stdout
    # an import of fairseq includes torch's
    assert found["fairseq"] > found["torch"] * 0.8, result.stdout
    empty = subprocess.run([sys.executable, str(SCRIPT), "--workdir", str(tmp_path), "--repeats", "1"],
                           capture_output=True, text=True, env=tool_env(), timeout=600)
    assert empty.returncode == 0 and "training" not in figures(empty.stdout), empty.stdout
    assert f"demo training: left out, no demo data at {tmp_path.resolve()}/data/demo/bin/sentence" in empty.stdout


def test_too_few_updates_for_two_log_lines_is_a_clear_error(tmp_path):
    result = subprocess.run([sys.executable, str(SCRIPT), "--workdir", str(tmp_path), "--updates", "6"],
                            capture_output=True, text=True, env=tool_env(), timeout=60)
    assert result.returncode == 2
    assert "--updates 6: fairseq logs every 5 updates, and the figure needs two of its lines: give at least 10" \
        in result.stderr

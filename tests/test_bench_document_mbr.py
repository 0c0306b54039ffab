"""bench/document_mbr on the real TED sample: every solver and weighting timed, each talk won by one system."""

import re
import subprocess
import sys

import pytest

from helpers import REPO, tool_env

#: make test-full: a benchmark's run.
pytestmark = pytest.mark.full

SAMPLES = REPO.parent / "shared" / "real-samples" / "iwslt17-ted-test-en-de"


@pytest.mark.skipif(not SAMPLES.is_dir(), reason=f"no real samples at {SAMPLES} (../shared/real-samples)")
def test_every_solver_and_weighting_selects_each_talk_once():
    result = subprocess.run([sys.executable, str(REPO / "bench" / "document_mbr"), "--talks", "3", "--repeats", "1"],
                            capture_output=True, text=True, env=tool_env(), timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    assert re.search(r"^document MBR benchmark: \d+ sentences in 3 TED talks", result.stdout, re.M), result.stdout
    rows = re.findall(r"^\| (assign|sinkhorn) \| (uniform|length) \| ([\d.]+) \| [\d. ]+ \| (.+) \|$", result.stdout,
                      re.M)
    assert [(solver, weights) for solver, weights, *_ in rows] == [
        ("assign", "uniform"), ("assign", "length"), ("sinkhorn", "uniform"), ("sinkhorn", "length")]
    for *_, won in rows:
        assert won == "cheating 3", "the unchanged reference is every talk's consensus"

"""Training through Snakemake: both demo models, their learning curves and plot (the document model's context
advantage on ContraPro: tests/score/test_scoring_workflow.py, from the workflow's accuracy files; resuming a killed
training: test_resume.py)."""

import re
from datetime import datetime

import pytest

pytestmark = pytest.mark.workflow


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


def training_span(log: str) -> tuple[datetime, datetime]:
    """When fairseq-train logged first and last (its log lines start with their time)."""
    times = re.findall(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) \| INFO \|", log, re.MULTILINE)
    assert len(times) > 2, "fairseq-train's timed log lines"
    return datetime.fromisoformat(times[0]), datetime.fromisoformat(times[-1])


def test_the_cpu_profile_trains_both_levels_side_by_side(trained_demo):
    """profiles/cpu runs each GPU rule, and binarize, on one thread: on the demo's two cores, the document level's
    binarize cannot wait for a second free core while the sentence-level training holds one, so the two trainings
    overlap (they once ran one after the other, 7 minutes more)."""
    spans = {level: training_span((trained_demo / f"logs/demo/train/{level}.log").read_text())
             for level in ("sentence", "document")}
    (s_start, s_end), (d_start, d_end) = spans["sentence"], spans["document"]
    overlap = min(s_end, d_end) - max(s_start, d_start)
    assert overlap > (min(s_end - s_start, d_end - d_start)) / 2, f"the trainings hardly overlap: {spans}"

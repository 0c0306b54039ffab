"""Training through Snakemake: both demo models, their learning curves and plot (the document model's context
advantage on ContraPro: tests/score/test_scoring_workflow.py, from the workflow's accuracy files; resuming a killed
training: test_resume.py)."""

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

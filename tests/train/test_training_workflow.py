"""Training through Snakemake: both demo models, their learning curves and plot (the document model's context
advantage on ContraPro: tests/score/test_scoring_workflow.py, from the workflow's accuracy files; resuming a killed
training: test_resume.py, which holds the training at its first checkpoint and kills it there)."""

import re

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


def test_the_cpu_profile_lets_both_levels_train_side_by_side(tmp_path):
    """profiles/cpu runs each GPU rule, and binarize, on one thread, and its gpu resource (1024) limits nothing: on
    the demo's two cores the scheduler can run both trainings at once, and a training beside the other level's
    binarize (with binarize on two threads, the document level's binarize could not start while the sentence-level
    training held a core, and the two trainings ran one after the other: 7 minutes more). Read from the jobs
    Snakemake plans with the profile, not from a run's clock."""
    import yaml

    from helpers import REPO, TEST_CONFIG, run_snakemake

    targets = [f"results/demo/models/{level}/checkpoint_best.pt" for level in ("sentence", "document")]
    planned = run_snakemake(tmp_path, *targets, "-n", "--profile", str(REPO / "profiles/cpu"), "--cores", "2",
                            "--configfile", TEST_CONFIG).stdout
    jobs: dict[str, list[tuple[int, int]]] = {}
    for block in re.split(r"\n(?=rule |localrule )", planned):
        name = re.match(r"(?:local)?rule (\w+):", block)
        if name and name.group(1) in ("train", "binarize"):
            threads = re.search(r"^\s+threads: (\d+)$", block, re.M)
            gpu = re.search(r"\bgpu=(\d+)", block)
            jobs.setdefault(name.group(1), []).append((int(threads.group(1)) if threads else 1,
                                                       int(gpu.group(1)) if gpu else 0))
    assert len(jobs["train"]) == 2 and len(jobs["binarize"]) == 2, planned
    profile = yaml.safe_load((REPO / "profiles/cpu/config.yaml").read_text())
    gpus = int(dict(r.split("=") for r in profile["resources"])["gpu"])
    (train_threads, train_gpu), _ = jobs["train"]
    assert 2 * train_threads <= 2 and 2 * train_gpu <= gpus, "both trainings fit on two cores at once"
    assert all(train_threads + threads <= 2 for threads, _ in jobs["binarize"]), "a training beside a binarize"

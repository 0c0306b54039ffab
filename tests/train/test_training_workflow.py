"""Training through Snakemake: both demo models and the document model's context advantage (resuming a killed
training: test_resume.py)."""

import json
from pathlib import Path

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

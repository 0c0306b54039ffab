"""The best checkpoint and early stopping follow the validation perplexity, as the paper says.

"All systems are trained until the validation perplexity does no longer improve and the best
checkpoint is selected using validation perplexity as well" (Herold & Ney 2023, appendix). fairseq's
default is the label-smoothed validation loss, which can disagree. Here a tiny model is trained with
``docnmt.train.cli`` on a corpus built so that the two disagree: the training targets are
deterministic (each target token follows from the previous one), the validation targets are noisy
(half of their tokens random), and the label smoothing is large (0.6). As the model grows confident,
the validation perplexity keeps falling (its optimum is a confidence of about 0.5) while the
label-smoothed loss, whose optimum is a confidence of about 0.2, turns and rises early on.
"""

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import REPO, tool_env
from docnmt.preprocess.binarize import binarize
from docnmt.train.curves import parse_log, read_csv

VOCAB = 30
INTERVAL = 5      # validate (and save) every 5 updates
PATIENCE = 3      # stop after 3 validations without a lower validation perplexity
MAX_UPDATE = 150


def write_corpus(root: Path, seed: int = 1) -> None:
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(VOCAB)]
    targets = [f"t{i}" for i in range(VOCAB)]

    def pair(noise: float) -> tuple[str, str]:
        n = rng.randint(3, 6)
        src = [rng.choice(words) for _ in range(n)]
        first = int(src[0][1:])
        tgt = [targets[(first + j) % VOCAB] if rng.random() >= noise else rng.choice(targets) for j in range(n)]
        return " ".join(src), " ".join(tgt)

    for split, size, noise in (("train", 200, 0.0), ("valid", 40, 0.5), ("test", 5, 0.0)):
        pairs = [pair(noise) for _ in range(size)]
        (root / f"{split}.en").write_text("".join(p[0] + "\n" for p in pairs), encoding="utf-8")
        (root / f"{split}.de").write_text("".join(p[1] + "\n" for p in pairs), encoding="utf-8")
    (root / "dict.txt").write_text("".join(f"{w} 10\n" for w in words + targets) + "<sep> 1\n", encoding="utf-8")


PRESET = [
    "--arch", "transformer", "--encoder-layers", "1", "--decoder-layers", "1", "--encoder-embed-dim", "32",
    "--decoder-embed-dim", "32", "--encoder-ffn-embed-dim", "64", "--decoder-ffn-embed-dim", "64",
    "--encoder-attention-heads", "2", "--decoder-attention-heads", "2", "--share-all-embeddings",
    "--optimizer", "adam", "--lr", "0.003", "--lr-scheduler", "inverse_sqrt", "--warmup-updates", "5",
    "--max-tokens", "1200", "--max-update", str(MAX_UPDATE), "--validate-interval-updates", str(INTERVAL),
    "--save-interval-updates", str(INTERVAL), "--validate-interval", "1000", "--save-interval", "1000",
    "--keep-interval-updates", "1",
]

#: The module's fixtures that train a model (conftest gives their tests the tier ``trains``).
TRAINING_FIXTURES = {"trained"}


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    root = tmp_path_factory.mktemp("best-checkpoint")
    write_corpus(root)
    binarize("en", "de", {s: root / s for s in ("train", "valid", "test")}, root / "dict.txt", root / "bin", 1)
    command = [
        sys.executable, "-m", "docnmt.train.cli", "--data", str(root / "bin"), "--save-dir", str(root / "ck"),
        "--output", str(root / "model" / "checkpoint_best.pt"), "--history", str(root / "ck" / "fairseq.log"),
        "--curve", str(root / "model" / "learning_curve.csv"), "--sidecar", str(root / "model" / "checkpoint_best.json"),
        "--src", "en", "--tgt", "de", "--dropout", "0.0", "--label-smoothing", "0.6", "--patience", str(PATIENCE),
        "--", *PRESET,
    ]
    result = subprocess.run(command, env=tool_env(), cwd=REPO, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    valid = [row for row in parse_log(root / "ck" / "fairseq.log") if row["kind"] == "valid"]
    print("validations (update, loss, nll_loss):", [(r["num_updates"], r["loss"], r["nll_loss"]) for r in valid])
    return root, result.stdout, valid


def test_the_published_checkpoint_has_the_lowest_validation_perplexity(trained):
    root, stdout, valid = trained
    lowest = min(row["nll_loss"] for row in valid)
    expected = max(row["num_updates"] for row in valid if row["nll_loss"] == lowest)  # fairseq: a tie goes to the later
    sidecar = json.loads((root / "model" / "checkpoint_best.json").read_text())
    assert sidecar["best_checkpoint_metric"] == "nll_loss" and "validation perplexity" in sidecar["selected_by"]
    assert sidecar["num_updates"] == expected, [(r["num_updates"], r["loss"], r["nll_loss"]) for r in valid]
    assert sidecar["valid_nll_loss"] == pytest.approx(lowest)
    assert sidecar["valid_ppl"] == pytest.approx(2 ** lowest, rel=1e-6)

    import torch

    state = torch.load(root / "model" / "checkpoint_best.pt", map_location="cpu", weights_only=False)
    assert state["optimizer_history"][-1]["num_updates"] == expected
    assert f"best checkpoint: update {expected}, validation perplexity {2 ** lowest:.3f}; selected by validation " \
           "perplexity" in stdout
    marked = [r for r in read_csv(root / "model" / "learning_curve.csv") if r["best_checkpoint"]]
    assert [(r["kind"], r["num_updates"]) for r in marked] == [("valid", expected)]


def test_the_label_smoothed_loss_would_have_chosen_another_checkpoint(trained):
    """The corpus is built for the two metrics to disagree, clearly (by more than 0.05 bits each way)."""
    _, _, valid = trained
    by_loss = min(valid, key=lambda r: r["loss"])
    by_ppl = min(valid, key=lambda r: (r["nll_loss"], -r["num_updates"]))
    assert by_ppl["num_updates"] > by_loss["num_updates"]
    assert by_ppl["loss"] - by_loss["loss"] > 0.05, "the chosen checkpoint is clearly worse by the smoothed loss"
    assert by_loss["nll_loss"] - by_ppl["nll_loss"] > 0.05, "and the loss's choice clearly worse by perplexity"


def test_early_stopping_follows_the_validation_perplexity(trained):
    _, stdout, valid = trained
    best, last_improvement = None, None
    for row in valid:
        if best is None or row["nll_loss"] < best:  # fairseq's --patience counts strict improvements
            best, last_improvement = row["nll_loss"], row["num_updates"]
    last = valid[-1]["num_updates"]
    if last < MAX_UPDATE:
        assert "early stop since valid performance hasn't improved for last 3 runs" in stdout
        assert last == last_improvement + PATIENCE * INTERVAL
    by_loss = min(valid, key=lambda r: r["loss"])["num_updates"]
    assert last > by_loss + PATIENCE * INTERVAL, "early stopping by the smoothed loss would have stopped it sooner"

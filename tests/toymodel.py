"""A toy translation task and a tiny fairseq transformer trained on it, shared by the search and CXMI tests
(conftest.py's session fixtures ``toy_data`` and ``toy``)."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

from helpers import tool_env

MAX_POSITIONS = 64  # small, so that the length limits are cheap to reach
TINY = [
    "--arch", "transformer", "--encoder-layers", "1", "--decoder-layers", "2",
    "--encoder-embed-dim", "64", "--decoder-embed-dim", "64",
    "--encoder-ffn-embed-dim", "128", "--decoder-ffn-embed-dim", "128",
    "--encoder-attention-heads", "2", "--decoder-attention-heads", "2", "--share-all-embeddings",
    "--optimizer", "adam", "--lr", "0.005", "--lr-scheduler", "inverse_sqrt", "--warmup-updates", "50",
    "--max-tokens", "1024",
    "--max-source-positions", str(MAX_POSITIONS), "--max-target-positions", str(MAX_POSITIONS),
]


def env() -> dict:
    # one thread: on a shared 2-core machine, torch's default threads make training ~10x slower
    return dict(tool_env(), OMP_NUM_THREADS="1")


def toy_corpus(folder: Path, seed: int = 7) -> None:
    """A reversal task with a word mapping (s3 s7 -> t7 t3); 40% of the lines are two-sentence
    windows joined by <sep> on both sides, so <sep> is a real target token."""
    rng = random.Random(seed)

    def sentence():
        return [rng.randrange(24) for _ in range(rng.randint(2, 6))]

    folder.mkdir(parents=True)
    for split, n in (("train", 2000), ("valid", 100), ("test", 24)):
        src_lines, tgt_lines = [], []
        for _ in range(n):
            sents = [sentence() for _ in range(2 if rng.random() < 0.4 else 1)]
            src_lines.append(" <sep> ".join(" ".join(f"s{w}" for w in s) for s in sents))
            tgt_lines.append(" <sep> ".join(" ".join(f"t{w}" for w in reversed(s)) for s in sents))
        (folder / f"{split}.en").write_text("".join(line + "\n" for line in src_lines), encoding="utf-8")
        (folder / f"{split}.de").write_text("".join(line + "\n" for line in tgt_lines), encoding="utf-8")


def run(*args: str) -> None:
    result = subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env())
    assert result.returncode == 0, f"{' '.join(args[:2])} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"


def train(root: Path, name: str, *extra: str) -> Path:
    run("-m", "docnmt.train.cli", "--data", str(root / "bin"), "--save-dir", str(root / f"{name}-checkpoints"),
        "--output", str(root / f"{name}.pt"), "--dropout", "0.1", "--label-smoothing", "0.1",
        "--src", "en", "--tgt", "de", "--history", str(root / f"{name}.log"), "--", *TINY, *extra)
    return root / f"{name}.pt"

"""What the demo's models are made from, as one digest: ``bench/decode`` prints it above its table, and
``docs/benchmarks.md`` records it with each table of ``bench/decode`` on the demo. The gate
(``tests/decode/test_search_work.py``) fails when the digest of the checkout differs from the last one recorded: a
change to the demo's training preset, its task settings (the corpus's size and seed, BPE, dropout), its data's
generator or the training's code reruns ``bench/decode``, and its table is recorded with the date, so that the cost
table cannot slip unseen again (issue 84: two changes of the preset went without a rerun).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from .. import config as configuration

PACKAGE = Path(__file__).resolve().parents[1]
REPO = PACKAGE.parents[1]

#: The package's files the demo's models depend on: its data's generator and the training's code (the learning
#: curves' plot is not among them).
SOURCES = ("corpora/demo.py", "corpora/demo_templates.py", "corpora/demo_vocabulary.py", "train/cli.py",
           "train/fairseq_train.py")

#: Where docs/benchmarks.md records a digest: ``demo models digest: <12 hex digits>`` on the line below a table.
MARK = "demo models digest:"


def demo_models_digest(config_file: Path = REPO / "config.yaml", task: str = "demo") -> str:
    """12 hex digits of sha256 over the task's training preset, its task settings and :data:`SOURCES`."""
    config = configuration.read(config_file)
    settings = (config.get("task_settings") or {}).get(task)
    if settings is None:
        raise configuration.ConfigError(f"{config_file}: no task_settings.{task}")
    preset_name = settings.get("model", "base")
    preset = ((config.get("training") or {}).get("presets") or {}).get(preset_name)
    if preset is None:
        raise configuration.ConfigError(f"{config_file}: task_settings.{task}.model names {preset_name!r}, "
                                        f"which training.presets does not define")
    digest = hashlib.sha256(json.dumps({"preset": preset, "task": settings}, sort_keys=True).encode())
    for name in SOURCES:
        digest.update(name.encode() + b"\0" + (PACKAGE / name).read_bytes() + b"\0")
    return digest.hexdigest()[:12]


def recorded_digests(text: str) -> list[str]:
    """The digests a page records (:data:`MARK`), in the page's order."""
    return [line.split(MARK, 1)[1].split()[0].strip("`.,;") for line in text.splitlines() if MARK in line]

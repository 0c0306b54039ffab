"""The arguments of the training rule (``rules/train.smk``): a task's model preset as fairseq-train arguments and
its time limit."""

from __future__ import annotations

from docnmt.train.cli import options_to_args


def preset_args(config: dict, task: str) -> list[str]:
    """The task's architecture/optimizer preset as fairseq-train arguments (a list; the rule quotes each)."""
    return [str(a) for a in options_to_args(config["training"]["presets"][config["task_settings"][task]["model"]])]


def training_runtime(config: dict, task: str) -> int:
    """Minutes a training job may run: training.runtime_minutes of the task's preset, else two days."""
    return config["training"]["runtime_minutes"].get(config["task_settings"][task]["model"], 2880)

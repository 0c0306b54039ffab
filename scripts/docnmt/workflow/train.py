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


def training_params(config: dict) -> dict:
    """The train rule's params beside its paths: the task's dropout and label smoothing (functions of the job's
    wildcards), the workflow's patience and GPUs."""
    settings = config["task_settings"]
    return {"dropout": lambda w: settings[w.task]["dropout"],
            "label_smoothing": lambda w: settings[w.task]["label_smoothing"],
            "patience": config["training"]["patience"], "gpus": training_gpus(config)}


def training_gpus(config: dict) -> int:
    """The GPUs a training job asks for and uses (training.gpus; 0 on a CPU)."""
    return config["training"]["gpus"]

"""What ``snakemake`` (rule all) and ``snakemake data`` (rule data) make for the configured tasks."""

from __future__ import annotations

from docnmt import layout

from .systems import curve_systems, task_systems
from .tables import data_statistics, tables_targets
from .tasks import LEVELS, binarized, evalsets, is_external, langs, model_file, task_levels


def decode_targets(config: dict, task: str) -> list[str]:
    """The detokenized hypotheses of every system the task decodes, the MBR plot's included."""
    decodes = [(evalset, system) for evalset in evalsets(config, task) for system in task_systems(config, task, evalset)]
    decodes += [("test", system) for system in curve_systems(config, task)]
    return [layout.decode_file(task, evalset, system, "txt") for evalset, system in decodes]


def data_targets(config: dict) -> list[str]:
    """Everything up to the binarized data, ContraPro and the statistics table (`snakemake data`)."""
    targets = list(data_statistics(config).values())
    for task in config["tasks"]:
        if is_external(config, task):
            targets += [layout.processed_file(task, "bpe", "test", lang) for lang in langs(config, task)]
            targets += [layout.model_check(task, level) for level in task_levels(config, task)]
            continue
        targets += [binarized(config, task, level) for level in LEVELS]
        if config["task_settings"][task]["contrapro"]:
            targets += [layout.window_file(task, "contrapro", lang) for lang in langs(config, task)]
    return targets


def all_targets(config: dict) -> list[str]:
    """Everything: the data, both models and their learning curves, every decode, every table and plot, and each
    task's comparison page."""
    targets = data_targets(config)
    for task in config["tasks"]:
        if not is_external(config, task):
            targets += [model_file(config, task, level) for level in LEVELS]
            targets.append(layout.learning_curves_plot(task))
        targets += decode_targets(config, task)
        targets.append(layout.compare_page(task))
    return targets + tables_targets(config)

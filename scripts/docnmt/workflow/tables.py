"""The tables and plots (``docnmt.score.tables``, ``docnmt.score.plots``) as the rules of ``rules/score.smk``
make them: the manifest of a set of tasks' score files, which tables and plots those tasks have, and where
they go (``docnmt.layout``): each task's own, and the configured tasks' together under the config's
``tables.name`` (``docnmt.config.tables_name``)."""

from __future__ import annotations

import json

from docnmt import layout
from docnmt.config import tables_name
from docnmt.decode.backend import backend
from docnmt.decode.variants import variant
from docnmt.score.tables import renamed_from

from .metrics import metric_evalsets, seam, span_checkpoints
from .systems import (cad_sweep_strategy, cad_sweep_systems, curve_counts, mbr_curve_systems, mbr_strategies,
                      qe_strategies, skipped_selections,
                      skipped_strategies, table_systems, task_systems)
from .tasks import (LEVELS, ctxpro_evalsets, cxmi_tasks, engine_args, evalsets, german_tasks, model_backend, prices,
                    task_levels, tgt)

#: Plots of the report, each with its caption in report/{name}.rst, and its category.
PLOTS = {"bleu": "Quality", "pronouns": "Pronouns", "cost": "Cost", "cxmi": "Context usage", "mbr": "MBR selection",
         "cad": "Context-aware decoding",
         "ctxpro": "Context phenomena"}


def task_scores(config: dict, task: str) -> dict:
    """Every score file of one task, by kind (the tables' manifest entry)."""
    settings = config["task_settings"][task]
    entry = {
        "description": settings.get("description", task),
        "tgt": tgt(config, task),
        # the metric seam's score files, by metric and evaluation set (docnmt.score.metric)
        **{m.name: {e: layout.score_file(task, e, m.name) for e in metric_evalsets(config, task, m)}
           for m in seam(config)},
        "perplexity": {lvl: layout.score_file(task, "test", f"perplexity.{lvl}") for lvl in task_levels(config, task)},
        "sidecars": {s: layout.decode_file(task, "test", s, "json") for s in task_systems(config, task, "test")},
    }
    if span_checkpoints(config):
        entry["comet_error_spans"] = {"test": layout.comet_error_spans(task, "test")}
    skipped = {**skipped_strategies(config, task), **skipped_selections(config, task)}
    if skipped:
        entry["skipped"] = skipped
    lacking = backend(model_backend(config, task)).lacks(["forced_scoring"], engine_args(config, task))
    if lacking:  # perplexity and CXMI score forced targets: not scored, the tables say why
        entry["perplexity"] = {}
        entry["unscored"] = {"perplexity": lacking, "cxmi": lacking}
    if prices(config, task):
        entry["prices"] = prices(config, task)
    # pronoun F1 and CXMI on the test set and ContraPro; a ctxpro set has its own accuracy
    paper_sets = evalsets(config, task, ctxpro_sets_too=False)
    if task in german_tasks(config):
        entry["pronoun_f1"] = {e: layout.score_file(task, e, "pronouns") for e in paper_sets}
    if settings["contrapro"]:
        entry["contrapro_accuracy"] = {lvl: layout.score_file(task, "contrapro", f"accuracy.{lvl}") for lvl in LEVELS}
    if task in cxmi_tasks(config):
        entry["cxmi"] = {e: layout.score_file(task, e, "cxmi") for e in paper_sets}
        entry["cxmi_sentences"] = {e: layout.cxmi_sentences(task, e) for e in paper_sets}
        entry["context_usage"] = {e: layout.score_file(task, e, "context_usage") for e in paper_sets}
    if ctxpro_evalsets(config, task):
        entry["ctxpro_accuracy"] = {e: layout.score_file(task, e, "ctxpro") for e in ctxpro_evalsets(config, task)}
    return entry


def _tasks(config: dict, tasks) -> list[str]:
    return list(config["tasks"]) if tasks is None else list(tasks)


def score_manifest(config: dict, tasks=None) -> dict:
    """The tables' manifest: their rows (every strategy, then every variant's systems) and each task's score files (default:
    the configured tasks)."""
    tasks = _tasks(config, tasks)
    settings = config["mbr"]
    systems = table_systems(config)
    curve = {t: mbr_curve_systems(config, t) for t in tasks if mbr_curve_systems(config, t)}
    sweep = {t: cad_sweep_strategy(config, t) for t in tasks if cad_sweep_systems(config, t)}
    return {"strategies": systems, "tasks": {t: task_scores(config, t) for t in tasks},
            **({"metric_modules": config["metrics"]["modules"]} if config["metrics"]["modules"] else {}),
            **({"mbr_curve": {"counts": [settings["count"]] + curve_counts(config), "tasks": curve}} if curve else {}),
            **({"cad_sweep": {"alpha": config["cad"]["alpha"], "alphas": sorted({float(a) for a in [
                config["cad"]["alpha"], *config["cad"]["sweep"]]}), "tasks": sweep}} if sweep else {}),
            **({"mbr": {k: settings[k] for k in ("candidates", "count", "utility", "epsilon", "seed")}}
               if mbr_strategies(config) else {}),
            **({"qe_rerank": {"count": config["qe_rerank"]["count"], "checkpoint": config["qe_rerank"]["checkpoint"]}}
               if qe_strategies(config) else {}),
            **({"docmbr": {k: config["docmbr"][k] for k in ("weights", "solver")}}
               if variant("docmbr").systems(config) else {})}


#: Entries of a task's manifest that are not files: reasons (a strategy skipped, a table unscored) and a served
#: model's prices.
NOT_FILES = ("skipped", "unscored", "prices")


def manifest_files(config: dict, tasks=None) -> list[str]:
    """All files the manifest names (the inputs of the tables and plots)."""
    files = []
    for entry in score_manifest(config, tasks)["tasks"].values():
        for key, value in entry.items():
            if isinstance(value, dict) and key not in NOT_FILES:
                files += list(value.values())
    return files


def manifest_arg(config: dict, tasks=None) -> str:
    """The manifest as one JSON argument (the rules quote it)."""
    return json.dumps(score_manifest(config, tasks), separators=(",", ":"))


def table_names(config: dict, tasks=None) -> list[str]:
    """The tables of these tasks together (default: the configured tasks)."""
    tasks = _tasks(config, tasks)
    names = ["perplexity", "quality", *renamed_from("quality")]
    if any(t in german_tasks(config) for t in tasks):
        names += ["pronoun_f1", "pronoun_classes"]
    if any(config["task_settings"][t]["contrapro"] for t in tasks):
        names.append("contrapro_accuracy")
    if any(t in cxmi_tasks(config) for t in tasks):
        names += ["context_usage", "context_split", "context_sentences"]
    if any(ctxpro_evalsets(config, t) for t in tasks):
        names += ["ctxpro_accuracy", "ctxpro_rules"]
    if span_checkpoints(config):
        names.append("xcomet_spans")
    if variant("docmbr").systems(config):
        names.append("docmbr_wins")
    return names + ["decoding_cost"]


def table_files(config: dict, name: str) -> list[str]:
    """A combined table in every format."""
    return [layout.combined_table(tables_name(config), name, ext) for ext in layout.TABLE_FORMATS]


def data_statistics(config: dict) -> dict[str, str]:
    """The paper's Table 5 (rule data_statistics) by format: the configured tasks' data, among their combined
    tables."""
    return {fmt: layout.combined_table(tables_name(config), "data_statistics", ext)
            for fmt, ext in (("markdown", "md"), ("csv", "csv"), ("latex", "tex"))}


def plot_names(config: dict, tasks=None) -> list[str]:
    """The plots of these tasks together (default: the configured tasks)."""
    tasks = _tasks(config, tasks)
    return [p for p in PLOTS if (p != "pronouns" or any(t in german_tasks(config) for t in tasks))
            and (p != "cxmi" or any(t in cxmi_tasks(config) for t in tasks))
            and (p != "ctxpro" or any(ctxpro_evalsets(config, t) for t in tasks))
            and (p != "mbr" or any(mbr_curve_systems(config, t) for t in tasks))
            and (p != "cad" or any(cad_sweep_systems(config, t) for t in tasks))]


def plot_file(config: dict, name: str) -> str:
    """A combined plot."""
    return layout.combined_plot(tables_name(config), name)


def plot_tasks(config: dict, name: str) -> list[str]:
    """The configured tasks that have this plot of their own."""
    return [t for t in config["tasks"] if name in plot_names(config, [t])]


def tables_targets(config: dict) -> list[str]:
    """Every task's tables and plots, and the configured tasks' together."""
    tasks = config["tasks"]
    targets = [layout.task_tables_dir(t) for t in tasks]
    targets += [layout.task_plot(t, p) for t in tasks for p in plot_names(config, [t])]
    targets += [f for name in table_names(config) for f in table_files(config, name)]
    return targets + [plot_file(config, p) for p in plot_names(config)]

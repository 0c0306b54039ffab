"""The metrics in the workflow (config ``metrics``, ``mbr.utility: comet:NAME``, ``qe_rerank``): the rules the metric
seam makes from each declaration (:mod:`docnmt.score.metric`: their inputs, options, outputs and environment, an
environment of its own as a backend's is: :func:`docnmt.workflow.environments.environment_path`), the checks of the
configured metrics before any job runs, and the options and inputs of the rule ``comet_env`` and of the decodes that
select by a learned metric (:mod:`docnmt.score.comet`, :mod:`docnmt.decode.metric_client`)."""

from __future__ import annotations

from collections.abc import Mapping

from docnmt import layout
from docnmt.decode import mbr
from docnmt.decode.variants import parse_system, variant

from docnmt.score.metric import Metric, of_config, seam_metrics

from .environments import environment_path
from .tasks import evalsets, runtime

#: The metric whose checkpoints (``metrics.comet``) MBR's ``comet:NAME`` utility and QE reranking select by: the
#: rule comet_env runs in its environment.
SELECTION_METRIC = "comet"


def checkpoints(config: dict) -> dict[str, str]:
    """The configured COMET checkpoints, name -> folder (metrics.comet)."""
    return dict(config["metrics"]["comet"])


def span_checkpoints(config: dict) -> list[str]:
    """The configured checkpoints that tag error spans (XCOMET): the table xcomet_spans shows them."""
    from docnmt.score.comet import checkpoint

    return [name for name, folder in checkpoints(config).items() if checkpoint(name, folder).spans]


def qe_checkpoint(config: dict) -> str | None:
    return config["qe_rerank"]["checkpoint"]


def mbr_checkpoint(config: dict) -> str | None:
    """The checkpoint of MBR's utility comet:NAME, else None."""
    return mbr.Settings(utility=config["mbr"]["utility"]).learned


# ---- the metric seam's rules -------------------------------------------------------------------------------
def rules(config: dict) -> list[Metric]:
    """The metrics the seam's rule runs (each a rule of that name, whether the config asks for it or not)."""
    return [m for m in of_config(config).values() if m.rule]


def seam(config: dict) -> list[Metric]:
    """The metrics the seam's rule runs that this config asks for (their score files are the tables')."""
    return seam_metrics(config)


def metric(config: dict, name: str) -> Metric:
    return of_config(config)[name]


def metric_evalsets(config: dict, task: str, declared: Metric) -> list[str]:
    """The evaluation sets a metric scores on a task: the test set, or every set the task decodes."""
    return ["test"] if declared.evalsets == "test" else evalsets(config, task)


def evalset_pattern(declared: Metric) -> str:
    """The rule's wildcard constraint of {evalset}."""
    return "test" if declared.evalsets == "test" else ".+"


def metric_outputs(declared: Metric) -> dict[str, str]:
    """The rule's outputs: its score file (``scores``) and the further files it declares, by option name."""
    return {"scores": layout.score_file("{task}", "{evalset}", declared.name),
            **{name: path("{task}", "{evalset}") for name, path in declared.outputs.items()}}


def metric_output_args(declared: Metric, output: Mapping) -> list[str]:
    """``--NAME FILE`` for each further file it writes (a list; the rule quotes each)."""
    return [arg for name in declared.outputs for arg in (f"--{name.replace('_', '-')}", output[name])]


def metric_runtime(config: dict, name: str, task: str) -> int:
    demo, other = metric(config, name).runtime
    return runtime(config, task, demo=demo, other=other)


def metric_path(config: dict, declared: Metric, basedir: str, conda: bool) -> str:
    """What its rule puts before PATH: the folder of its own environment's Python, where it declares one and the
    config asks for it, else nothing."""
    if declared.own_environment is None or not declared.enabled(config):
        return ""
    return environment_path(config, declared.own_environment, basedir, conda)


def selection_metric(config: dict) -> Metric:
    """The metric the decodes that select by a learned metric score with (its environment runs their scorer)."""
    return metric(config, SELECTION_METRIC)


def check(config: dict) -> None:
    """Every checkpoint configured or named is a local COMET folder with its encoder local, QE reranking's is
    reference-free and MBR's reference-based: ValueError (InputError) naming the config key or the file."""
    from docnmt.score.comet import checkpoint
    from docnmt.textio import InputError

    for declared in seam(config):
        declared.check(config)
    named, described = checkpoints(config), {}
    for name, folder in named.items():
        try:
            described[name] = checkpoint(name, folder)
        except InputError as err:
            raise ValueError(f"config key 'metrics.comet.{name}': {err}") from None
    for key, name, reference_free in (("qe_rerank.checkpoint", qe_checkpoint(config), True),
                                      ("mbr.utility", mbr_checkpoint(config), False),
                                      ("docmbr.utility", variant("docmbr").learned(config), False)):
        if name is None:
            continue
        if name not in named:
            raise ValueError(f"config key '{key}': {name!r} is not a checkpoint of metrics.comet "
                             f"({', '.join(named) or 'none configured'})")
        if described[name].reference_free != reference_free:
            what = ("QE reranking needs a reference-free checkpoint (CometKiwi, COMET-QE)" if reference_free else
                    "MBR's utility compares candidates as references: it needs a reference-based checkpoint")
            raise ValueError(f"config key '{key}': checkpoint {name!r} ({described[name].class_identifier}) is "
                             f"{'reference-based' if reference_free else 'reference-free'}; {what}")


def comet_path(config: dict, basedir: str, conda: bool) -> str:
    """What the rule comet_env puts before PATH: the folder of the selection metric's Python and ':'
    (metrics.comet_python, default the checkout's .venv-comet), or nothing (no checkpoint configured, or --sdm conda,
    whose envs/comet.yaml provides python)."""
    return metric_path(config, selection_metric(config), basedir, conda)


# ---- decodes that select by a learned metric -------------------------------------------------------------
def selection_inputs(config: dict, system: str) -> dict:
    """unbabel-comet's environment file, for a system whose variant selects by a learned metric."""
    kind = parse_system(system)[1]
    return {"comet_env": layout.comet_env()} if kind and variant(kind).learned(config) else {}


def selection_options(config: dict, system: str, input: Mapping) -> list[str]:
    """The checkpoint options of a system whose variant selects by a learned metric (QE reranking, MBR's
    comet:NAME; a list, the rule quotes each)."""
    kind = parse_system(system)[1]
    name = variant(kind).learned(config) if kind else None
    if name is None:
        return []
    return ["--comet-checkpoint", f"{name}={checkpoints(config)[name]}", "--comet-env", input["comet_env"],
            "--comet-timeout", str(config["metrics"]["timeout"]), "--comet-batch-size",
            str(config["metrics"]["batch_size"])]

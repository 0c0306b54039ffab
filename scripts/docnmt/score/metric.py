"""The metric seam: every metric declares, next to its code, what the workflow, the schema and the tables need to know
of it (:class:`Metric`), and the registry collects the declarations.

A metric module sets ``METRIC`` (a :class:`Metric`, or a tuple of them) at its bottom; the package's metric modules
are found by reading the package (:func:`builtin_modules`), and a config's ``metrics.modules`` adds modules of one's
own (importable names). A metric's :attr:`Metric.order` places it among the others (Table 3's columns). What follows
from a declaration:

- **a metric the seam runs** (``rule=True``): its rule (``rules/score.smk`` makes rule ``NAME`` from the
  declaration: its environment, inputs, options, threads and GPU), its score file (``docnmt.layout.score_file(task,
  evalset, NAME)``, plus :attr:`Metric.outputs`), its entry in the tables' manifest (``NAME: {evalset: path}``) and,
  with ``table="quality"``, its columns in Table 3 with their signatures, significance marks and note;
- **its config keys**: ``metrics.NAME``, a block of the properties it declares (:attr:`Metric.options`), which the
  config's schema gains when it is read (:func:`docnmt.config.with_metrics`), each passed to its CLI as
  ``--KEY VALUE``;
- **metrics that score a model, not a text** (perplexity, ContraPro, CXMI; ``rule=False``) declare the same
  properties for the docs and the table of metrics (``docs/architecture.md``), and keep rules of their own: theirs
  take the task's model and its forced scoring (``docnmt.decode.backend``), which the seam's rule does not give.

The seam's score-file protocol: the rule runs ``python -m MODULE [COMMAND...] --source S --reference R
[--docids D] [--select EXAMPLES] --system NAME=PATH... [--baseline NAME...] --bootstrap-samples N [options]
--output FILE [--OUTPUT FILE...]`` and the module writes one JSON object::

    {"columns": [COLUMN, ...], "signatures": {COLUMN: SIGNATURE},
     "systems": {SYSTEM: {COLUMN: {"score": FLOAT, ...}}},
     "paired_bootstrap": {BASELINE: {"systems": {SYSTEM: {COLUMN: {"significant": BOOL, ...}}}}}, "alpha": 0.05}
"""

from __future__ import annotations

import functools
import importlib
from dataclasses import dataclass, field
from typing import Callable

from docnmt.installation import Environment

#: The package whose modules declaring ``METRIC`` are the built-in metrics, found by reading them
#: (:func:`builtin_modules`): a new built-in metric is its module and nothing else.
PACKAGE = "docnmt.score"


@functools.lru_cache(maxsize=1)
def builtin_modules() -> tuple[str, ...]:
    """The package's metric modules: every module of :data:`PACKAGE` that assigns ``METRIC`` at its top level,
    read from its source (nothing is imported to find them), once per process: every registry look-up (a
    Snakemake run makes over a hundred) reads the answer."""
    from pathlib import Path

    from ..textio import declaring_modules

    return declaring_modules(PACKAGE, Path(__file__).resolve().parent, "METRIC")


#: Where a metric runs, unless it declares an environment of its own (an :class:`~docnmt.installation.Environment`,
#: as unbabel-comet's is): the workflow's environment (.venv, its ``conda`` file), the model's (a task's backend's),
#: or against an endpoint over HTTP.
ENVIRONMENTS = ("main", "model", "endpoint")
#: What one score is computed on.
UNITS = ("sentence", "paragraph", "document")
#: What a metric may need beside the hypotheses (languages: the task's source and target language codes, given as
#: --source-language and --target-language).
NEEDS = ("source", "reference", "docids", "model", "languages")
#: Which evaluation sets the seam's rule scores: the test set only, or every set of a task (ContraPro's and
#: ctxpro's example sentences too).
EVALSETS = ("test", "all")


@dataclass(frozen=True)
class Metric:
    """A metric as the workflow, the schema and the tables know it.

    ``name``: its rule, score file (``NAME.json``), manifest key and config block (``metrics.NAME``); ``module``:
    the module whose CLI scores (``python -m MODULE`` + ``command``); ``columns``: the Table 3 columns it writes
    under a config (a function of the validated config); ``signature``: what its signature records (the score
    file holds the signature itself)."""

    name: str
    module: str
    summary: str
    columns: Callable[[dict], list[str]]
    #: where it runs: one of :data:`ENVIRONMENTS`, or an environment of its own (its venv, make target and conda
    #: file; the seam's rule puts its Python first on PATH)
    environment: str | Environment
    unit: str
    needs: tuple[str, ...]
    #: whether a higher score is better: one answer, or one per column where they differ (TER)
    higher_is_better: bool | dict[str, bool]
    signature: str
    #: the seam's rule runs it (False: a rule of its own, see the module docstring)
    rule: bool = True
    #: the table that shows it: "quality" (Table 3's columns), or the name of a table of its own
    table: str = "quality"
    command: tuple[str, ...] = ()
    evalsets: str = "test"
    #: whether a config asks for it (default: whenever the workflow runs)
    enabled: Callable[[dict], bool] = lambda config: True
    #: the checks of its configuration before any job runs (a ValueError naming the config key and file)
    check: Callable[[dict], None] = lambda config: None
    #: the schema properties of its config block metrics.NAME (JSON schema, each with a description)
    options: dict = field(default_factory=dict)
    #: its options beyond its config block's (a function of the validated config; a list the rule quotes)
    arguments: Callable[[dict], list[str]] = lambda config: []
    #: further files it writes beside its score file: option -> a layout function of (task, evalset)
    outputs: dict[str, Callable[[str, str], str]] = field(default_factory=dict)
    #: scores shown in Table 3 as score x scale with this many decimals
    scale: float = 1.0
    digits: int = 1
    #: the note under Table 3 that says what its columns are
    note: str = ""
    #: its conda environment file under envs/ (with --sdm conda); an environment of its own names its own
    conda: str = "scoring.yaml"
    #: it also scores the systems of the MBR curve on the test set (the MBR plot reads them from its score file)
    curve: bool = False
    gpu: bool = False
    threads: int = 1
    mem_mb: int = 2000
    #: minutes, on the demo and on the paper's tasks
    runtime: tuple[int, int] = (30, 60)
    #: where it stands among the metrics (Table 3's columns, the docs' table; lower first, equal: by name)
    order: int = 100

    def __post_init__(self):
        if not isinstance(self.environment, Environment) and self.environment not in ENVIRONMENTS:
            raise ValueError(f"metric {self.name!r}: environment {self.environment!r} is neither one of "
                             f"{', '.join(ENVIRONMENTS)} nor an environment of its own (docnmt.installation.Environment)")
        for attribute, allowed in (("unit", UNITS), ("evalsets", EVALSETS)):
            if getattr(self, attribute) not in allowed:
                raise ValueError(f"metric {self.name!r}: {attribute} {getattr(self, attribute)!r} is not one of "
                                 f"{', '.join(allowed)}")
        unknown = set(self.needs) - set(NEEDS)
        if unknown:
            raise ValueError(f"metric {self.name!r}: needs {', '.join(sorted(unknown))}; known: {', '.join(NEEDS)}")
        if not self.name.replace("_", "").isalnum() or not self.name[0].isalpha():
            raise ValueError(f"metric {self.name!r}: a name is a Python identifier (it names a rule and a file)")
        for key, entry in self.options.items():
            if "description" not in entry:
                raise ValueError(f"metric {self.name!r}: option {key!r} has no description")

    @property
    def own_environment(self) -> Environment | None:
        """Its environment of its own, or None (it runs in one of :data:`ENVIRONMENTS`)."""
        return self.environment if isinstance(self.environment, Environment) else None

    @property
    def conda_file(self) -> str:
        """Its rule's conda environment file, relative to rules/ (``--sdm conda``)."""
        own = self.own_environment
        return own.conda if own is not None else f"../envs/{self.conda}"

    def higher_better(self, column: str) -> bool:
        """Whether a higher score of this column is better."""
        if isinstance(self.higher_is_better, dict):
            return self.higher_is_better[column]
        return self.higher_is_better

    def option_args(self, config: dict) -> list[str]:
        """Its declared options' values in its config block as CLI options: ``--key-name VALUE`` (a true boolean:
        the flag alone; false and null: nothing; a list: the option once per item), then its other arguments."""
        args = []
        block = config["metrics"].get(self.name) or {}
        for key in self.options:
            value = block.get(key)
            option = "--" + key.replace("_", "-")
            if value is True:
                args.append(option)
            elif isinstance(value, list):
                args += [a for item in value for a in (option, str(item))]
            elif value is not None and value is not False:
                args += [option, str(value)]
        return args + self.arguments(config)


def _declared(module_name: str) -> tuple[Metric, ...]:
    try:
        module = importlib.import_module(module_name)
    except ImportError as err:
        raise ValueError(f"metric module {module_name!r} cannot be imported: {err}") from None
    declared = getattr(module, "METRIC", ())
    declared = declared if isinstance(declared, tuple) else (declared,)
    if not declared or not all(isinstance(m, Metric) for m in declared):
        raise ValueError(f"metric module {module_name!r} declares no METRIC (a docnmt.score.metric.Metric)")
    return tuple(declared)


def metrics(extra_modules=()) -> dict[str, Metric]:
    """Every declared metric, name -> Metric: the package's (:func:`builtin_modules`, in their :attr:`Metric.order`),
    then those of ``extra_modules`` (a config's ``metrics.modules``)."""
    package = sorted((metric for name in builtin_modules() for metric in _declared(name)),
                     key=lambda metric: (metric.order, metric.name))
    found: dict[str, Metric] = {}
    for metric in (*package, *(metric for name in extra_modules for metric in _declared(name))):
        if metric.name in found:
            raise ValueError(f"metric {metric.name!r} of {metric.module} is declared twice (also by "
                             f"{found[metric.name].module})")
        found[metric.name] = metric
    return found


def config_modules(config: dict) -> list[str]:
    """A (possibly unvalidated) config's metrics.modules."""
    modules = (config.get("metrics") or {}).get("modules") or []
    return list(modules) if isinstance(modules, list) else []


def of_config(config: dict) -> dict[str, Metric]:
    """The metrics a config's workflow knows (the package's and its metrics.modules)."""
    return metrics(config_modules(config))


def seam_metrics(config: dict) -> list[Metric]:
    """The metrics the seam's rule runs that this config asks for, in registry order."""
    return [m for m in of_config(config).values() if m.rule and m.enabled(config)]


def table_metrics(manifest: dict, table: str = "quality") -> list[Metric]:
    """The metrics of a table, as the tables' manifest names them (its ``metric_modules``)."""
    return [m for m in metrics(manifest.get("metric_modules", ())).values() if m.rule and m.table == table]

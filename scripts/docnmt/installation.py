"""The interpreter the workflow's rules run on, and what to say when it is not set up.

Every rule runs ``python -m docnmt.STAGE.MODULE`` in bash, with the package
installed in that interpreter: in ``.venv`` by `make setup` (editable, from
the checkout), or in each rule's conda env by its post-deploy script
(``--sdm conda``). :func:`shell_prefix` is the bash code the Snakefile puts
before each command: Snakemake's strict mode and, unless each rule has its
own conda env, the folder of the interpreter that runs Snakemake first on
PATH, so ``.venv/bin/snakemake`` works without activating ``.venv``. Every
path in it is quoted, so a checkout under any path works.

An interpreter without the project's packages is reported in one line
(:func:`setup_hint`): by the Snakefile before any job starts
(:func:`missing_modules`, :func:`install_problems`), and by the package
itself when a CLI cannot import a package (``docnmt/__init__.py``).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

#: The distribution name of the package (pyproject.toml).
DISTRIBUTION = "docnmt-search"


@dataclass(frozen=True)
class Environment:
    """An environment of its own, for a backend or a metric whose pins conflict with the project's ``.venv`` (vLLM's
    backend, unbabel-comet's metric): a virtual environment that ``make`` creates in the checkout, and its conda file
    for ``--sdm conda``. A declaration names it (:attr:`docnmt.decode.backend.Backend.environment`,
    :attr:`docnmt.score.metric.Metric.environment`); the workflow puts its Python first on its rules' PATH
    (:func:`docnmt.workflow.environments.environment_path`) and this module's hint names it."""

    #: the venv folder, relative to the checkout
    venv: str
    #: the make target that creates it
    make: str
    #: its pinned requirements file
    requirements: str
    #: the conda environment file of its rules, relative to rules/ (``--sdm conda``)
    conda: str
    #: the packages (import names) it has that the project's ``.venv`` lacks: a command that misses one is told to
    #: run in this environment (:func:`setup_hint`)
    modules: tuple[str, ...] = ()
    #: the config key (dotted) that may name its Python instead of the checkout's venv (empty: none)
    python_key: str = ""

    @property
    def python(self) -> str:
        return f"{self.venv}/bin/python"


#: Import names of the third-party packages the workflow's modules need, all
#: installed by `make setup` into .venv (each rule's conda env has its share).
REQUIRED_MODULES = (
    "sacremoses", "subword_nmt", "yaml", "jsonschema", "torch", "numpy", "fairseq",
    "sacrebleu", "HanTa", "matplotlib", "pandas",
)


def missing_modules(names=REQUIRED_MODULES) -> list[str]:
    """The modules of ``names`` that this interpreter cannot import (looked up, not imported)."""
    return [name for name in names if importlib.util.find_spec(name) is None]


def setup_hint(missing, python: str | None = None) -> str:
    """One line: which interpreter lacks which packages, and how to set up: for a package that a backend's or a
    metric's own environment has (vLLM's, unbabel-comet's), that environment's command and make target."""
    from .seams import lookup

    own = [(f"the backend {b.name}", b.environment) for b in lookup("backends").values()]
    own += [(f"the metric {m.name}", m.environment) for m in lookup("metrics")().values()]
    for who, environment in own:
        if isinstance(environment, Environment) and set(missing) & set(environment.modules):
            command = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
            installed = installed_source()
            checkout = installed[0] if installed is not None and installed[0] is not None else Path(".")
            runner = Path(checkout) / environment.venv / "bin"
            run = shlex.quote(str(runner / command)) if command.startswith("docnmt-") else \
                f"{shlex.quote(str(runner / 'python'))} -m ..."
            return (f"{python or sys.executable} lacks {', '.join(sorted(set(missing) & set(environment.modules)))}: "
                    f"{who} runs in its own environment, {environment.venv} "
                    f"(`{environment.make}` makes it): run the same command there, {run} ...")
    return (
        f"{python or sys.executable} lacks the project's Python packages ({', '.join(missing)}): "
        "run `make setup`, then `.venv/bin/snakemake ...` (or `source .venv/bin/activate` first), "
        "or run Snakemake with --sdm conda"
    )


def installed_source() -> tuple[Path | None, bool] | None:
    """Where this interpreter's docnmt-search was installed from (None: not from a folder) and whether editable;
    None if it is not installed.

    Read from the distribution's ``direct_url.json`` (PEP 610), which pip writes for every install from a folder.
    """
    from importlib import metadata

    try:
        dist = metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return None
    direct = json.loads(dist.read_text("direct_url.json") or "{}")
    url = urlparse(direct.get("url", ""))
    source = Path(unquote(url.path)) if url.scheme == "file" else None
    return source, bool(direct.get("dir_info", {}).get("editable"))


def install_problems(checkout: str | os.PathLike) -> tuple[str | None, str | None]:
    """(error, warning) about this interpreter's docnmt for the rules of ``checkout``, each one line or None.

    Error: not installed, or installed without ``-e`` (the package reads the checkout's ``schemas/`` and
    ``config.yaml``). Warning: installed from another checkout, whose code the rules would then run.
    """
    installed = installed_source()
    if installed is None:
        return setup_hint([f"docnmt (the distribution {DISTRIBUTION})"]), None
    source, editable = installed
    if not editable:
        return (f"{sys.executable} has {DISTRIBUTION} installed without -e (from {source or 'an archive'}): "
                f"install it editable from this checkout, `make setup` or `pip install -e {shlex.quote(str(checkout))}`"), None
    if source is not None and Path(source).resolve() != Path(checkout).resolve():
        return None, (f"the rules run the docnmt installed in {sys.prefix} from {source}, not from this checkout "
                      f"({checkout}); to run this checkout's code, `pip install -e {shlex.quote(str(checkout))}` "
                      "there or use a virtual environment of its own")
    return None, None


def shell_prefix(python: str | os.PathLike | None) -> str:
    """Bash code run before every rule's command (plain bash: the Snakefile escapes braces for Snakemake).

    ``python``: the interpreter whose folder goes first on PATH, or None (each rule's conda env provides python).
    """
    prefix = "set -euo pipefail; "
    if python is not None:
        prefix += f'export PATH={shlex.quote(os.path.dirname(str(python)))}:"$PATH"; '
    return prefix

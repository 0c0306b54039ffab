"""The interpreter the workflow's rules run on, and what to say when it is not set up.

Every rule runs ``python -m docnmt.STAGE.MODULE`` in bash. :func:`shell_prefix` is the
bash code the Snakefile puts before each command: Snakemake's strict mode, the
package on PYTHONPATH and, unless each rule has its own conda env
(``--sdm conda``), the folder of the interpreter that runs Snakemake first on
PATH, so ``.venv/bin/snakemake`` works without activating ``.venv``. Every path
in it is quoted, so a checkout under any path works.

An interpreter without the project's packages is reported in one line
(:func:`setup_hint`): by the Snakefile before any job starts
(:func:`missing_modules`), and by the package itself when a rule's
``python -m docnmt.STAGE.MODULE`` cannot import a package (``docnmt/__init__.py``).
"""

from __future__ import annotations

import importlib.util
import os
import shlex
import sys

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
    """One line: which interpreter lacks which packages, and how to set up."""
    return (
        f"{python or sys.executable} lacks the project's Python packages ({', '.join(missing)}): "
        "run `make setup`, then `.venv/bin/snakemake ...` (or `source .venv/bin/activate` first), "
        "or run Snakemake with --sdm conda"
    )


def shell_prefix(scripts: str | os.PathLike, python: str | os.PathLike | None) -> str:
    """Bash code run before every rule's command (plain bash: the Snakefile escapes braces for Snakemake).

    ``python``: the interpreter whose folder goes first on PATH, or None (each rule's conda env provides python).
    """
    prefix = f"set -euo pipefail; export PYTHONPATH={shlex.quote(str(scripts))}${{PYTHONPATH:+:$PYTHONPATH}}; "
    if python is not None:
        prefix += f'export PATH={shlex.quote(os.path.dirname(str(python)))}:"$PATH"; '
    return prefix

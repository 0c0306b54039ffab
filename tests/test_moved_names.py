"""The old names of the modules that moved (docnmt.seams.MOVED) keep importing for one release: the same module
object under its new name, with a DeprecationWarning naming both, as a researcher's own backend or metric of 0.1
imports them (``from docnmt.interface import Backend, register``, ``from docnmt.metrics import Metric``)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from docnmt.seams import MOVED


def _run(program: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-W", "always::DeprecationWarning", "-c", program], capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("old, new", sorted(MOVED.items()))
def test_an_old_module_name_imports_the_new_module_with_a_deprecation_warning(old, new):
    result = _run(f"import importlib, {new} as new\nold = importlib.import_module({old!r})\n"
                  "print(old is new)")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True"]
    assert f"DeprecationWarning: {old} is now {new}; the old name goes in docnmt 0.2" in result.stderr


def test_a_backend_and_a_metric_of_0_1_import_their_names_as_before():
    result = _run("from docnmt.interface import REGISTRY, Backend, register\nfrom docnmt.metrics import Metric\n"
                  "from docnmt.decode.backend import REGISTRY as registry\nfrom docnmt.score.metric import Metric as M\n"
                  "print(REGISTRY is registry, Metric is M, 'fairseq' in REGISTRY)")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "True", "True"]


def test_a_name_that_never_was_is_still_an_import_error():
    result = _run("import docnmt.interfaces")
    assert result.returncode == 1 and "ModuleNotFoundError: No module named 'docnmt.interfaces'" in result.stderr

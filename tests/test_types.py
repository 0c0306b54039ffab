"""The interface is written as the code is: mypy (pinned in requirements.txt, configured in pyproject.toml) checks
docnmt.decode.backend and docnmt.decode.backends, each of whose packages asks that it is a docnmt.decode.backend.BackendModule
(its load returns a ModelLike, its searcher a SearcherLike)."""

import subprocess
import sys

import pytest

from helpers import REPO

pytestmark = [pytest.mark.fast, pytest.mark.tools]


def mypy(*targets: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mypy", "--no-incremental", *targets], cwd=REPO,
                          capture_output=True, text=True, timeout=300)


def test_mypy_passes_on_the_interface_and_the_backends():
    pytest.importorskip("mypy")
    result = mypy("-m", "docnmt.decode.backend", "-m", "docnmt.decode.requests", "-m", "docnmt.decode.load_options",
                  "-p", "docnmt.decode.prompting", "-p", "docnmt.decode.backends")
    assert result.returncode == 0, result.stdout[-4000:]
    assert "Success: no issues found" in result.stdout


def test_every_registered_package_asks_mypy_to_check_it_against_the_interface():
    """Each backend package declares, next to its code, that it is a BackendModule (its load returns a ModelLike,
    its searcher a SearcherLike): the mypy run above checks every built-in one."""
    from docnmt.decode.backend import REGISTRY

    for described in REGISTRY.values():
        source = (REPO / "scripts" / (described.module.replace(".", "/") + "/__init__.py")).read_text(encoding="utf-8")
        assert f"import {described.module} as _this" in source and "_conforms: BackendModule = _this" in source, \
            described.module


def test_mypy_finds_a_backend_whose_searcher_lacks_the_interface(tmp_path):
    """The check has teeth: a searcher without score_forced and sample is refused as a SearcherLike."""
    pytest.importorskip("mypy")
    bad = tmp_path / "bad_backend.py"
    bad.write_text(
        "from docnmt.decode.backend import SearcherLike\nfrom docnmt.decode.requests import Counted\n\n\n"
        "class Half(Counted):\n"
        "    model = None\n    beam = eos = pad = vocab = max_source_positions = max_target_positions = 1\n\n"
        "    def search(self, requests):\n        return []\n\n\n"
        "def searcher() -> SearcherLike:\n    return Half()\n", encoding="utf-8")
    result = mypy(str(bad))
    assert result.returncode == 1 and "SearcherLike" in result.stdout, result.stdout[-2000:]

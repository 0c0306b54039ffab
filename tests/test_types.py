"""The interface is written as the code is: mypy (pinned in requirements.txt, configured in pyproject.toml) checks
docnmt.interface and docnmt.decode.backends, whose conformance module asks that every registered backend package
is a docnmt.interface.BackendModule and its model and searcher classes ModelLike and SearcherLike."""

import subprocess
import sys

import pytest

from helpers import REPO

pytestmark = pytest.mark.fast


def mypy(*targets: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mypy", "--no-incremental", *targets], cwd=REPO,
                          capture_output=True, text=True, timeout=300)


def test_mypy_passes_on_the_interface_and_the_backends():
    pytest.importorskip("mypy")
    result = mypy("-m", "docnmt.interface", "-m", "docnmt.search", "-p", "docnmt.decode.backends")
    assert result.returncode == 0, result.stdout[-4000:]
    assert "Success: no issues found" in result.stdout


def test_the_conformance_module_names_every_registered_backend():
    from docnmt.interface import REGISTRY

    import ast

    tree = ast.parse((REPO / "scripts/docnmt/decode/backends/conformance.py").read_text(encoding="utf-8"))
    (packages,) = [node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef) and node.name == "packages"]
    (returned,) = [node.value for node in ast.walk(packages) if isinstance(node, ast.Return)]
    assert isinstance(returned, ast.List)
    checked = sorted(element.id for element in returned.elts if isinstance(element, ast.Name))
    assert checked == sorted(described.module.rsplit(".", 1)[1] for described in REGISTRY.values())


def test_mypy_finds_a_backend_whose_searcher_lacks_the_interface(tmp_path):
    """The check has teeth: a searcher without score_forced and sample is refused as a SearcherLike."""
    pytest.importorskip("mypy")
    bad = tmp_path / "bad_backend.py"
    bad.write_text(
        "from docnmt.interface import SearcherLike\nfrom docnmt.search import Counted\n\n\n"
        "class Half(Counted):\n"
        "    model = None\n    beam = eos = pad = vocab = max_source_positions = max_target_positions = 1\n\n"
        "    def search(self, requests):\n        return []\n\n\n"
        "def searcher() -> SearcherLike:\n    return Half()\n", encoding="utf-8")
    result = mypy(str(bad))
    assert result.returncode == 1 and "SearcherLike" in result.stdout, result.stdout[-2000:]

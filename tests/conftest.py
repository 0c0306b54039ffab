"""Shared test fixtures: paths, the Snakemake runner, the trained demo. The tests import the package docnmt as a
user's Python does: installed (`make setup` installs it into .venv, editable, from this checkout)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

REAL_SAMPLES = REPO.parent / "shared" / "real-samples"


def pytest_configure(config):
    config.addinivalue_line("markers", "workflow: runs Snakemake end to end (slower)")
    if importlib.util.find_spec("docnmt") is None:
        raise pytest.UsageError(f"{sys.executable} lacks the package docnmt: run `make setup` (or `make test`), "
                                "which installs it into .venv from this checkout")
    import docnmt

    installed = Path(docnmt.__file__).resolve().parents[1]
    if installed != REPO / "scripts":
        raise pytest.UsageError(f"{sys.executable} imports docnmt from {installed}, not from this checkout "
                                f"({REPO}): `pip install -e {REPO}` in it, or use this checkout's .venv")


@pytest.fixture
def repo() -> Path:
    return REPO


def tool_env() -> dict:
    """The environment for Snakemake and rule subprocesses: this interpreter's bin first."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"] = "1"
    return env


def run_snakemake(workdir: Path, *args: str, check: bool = True, timeout: int = 1800,
                  python: Path | None = None) -> subprocess.CompletedProcess:
    """Run Snakemake on this repo's Snakefile with ``workdir`` as working directory
    (``python``: as ``python -m snakemake`` with that interpreter, instead of the ``snakemake`` script)."""
    if python is None:
        snakemake = shutil.which("snakemake", path=tool_env()["PATH"])
        assert snakemake, "snakemake is not installed in this environment (run `make setup`)"
        launcher = [snakemake]
    else:
        launcher = [str(python), "-m", "snakemake"]
    command = [*launcher, "-s", str(REPO / "Snakefile"), "--directory", str(workdir), *args]
    result = subprocess.run(command, capture_output=True, text=True, env=tool_env(), timeout=timeout)
    if check and result.returncode != 0:
        raise AssertionError(
            f"snakemake {' '.join(args)} failed ({result.returncode}):\n{result.stdout[-6000:]}\n{result.stderr[-6000:]}"
        )
    return result


@pytest.fixture(scope="session")
def trained_demo(tmp_path_factory):
    """The full demo (as `make demo` configures it) trained through Snakemake, both levels.

    DOCNMT_DEMO_WORKDIR reuses a workflow directory (Snakemake then only checks
    that everything is up to date), for fast iterations during development.
    """
    reuse = os.environ.get("DOCNMT_DEMO_WORKDIR")
    workdir = Path(reuse) if reuse else tmp_path_factory.mktemp("demo-trained")
    started = time.perf_counter()
    run_snakemake(
        workdir, "results/demo/models/sentence/checkpoint_best.pt", "results/demo/models/document/checkpoint_best.pt",
        "results/demo/plots/learning_curves.png", "data/demo/bpe/contrapro.en", "data/demo/bpe/contrapro.de",
        "--cores", "2", "--resources", "gpu=1", timeout=3000,
    )
    print(f"demo preprocessing + training: {time.perf_counter() - started:.0f} s")
    return workdir


@pytest.fixture(scope="session")
def bare_python(tmp_path_factory) -> Path:
    """A Python without the project's packages (a venv without pip), as a fresh system python would be."""
    folder = tmp_path_factory.mktemp("bare") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True, capture_output=True)
    python = folder / "bin" / "python"
    probe = subprocess.run([str(python), "-c", "import sacremoses"], capture_output=True)
    if probe.returncode == 0:
        pytest.skip(f"{python} can import sacremoses (system site packages), so it is not bare")
    return python

"""Shared fixtures: the trained demo, the test-size demo's data, the tiny models, a bare Python.

The tests import the package docnmt as a user's Python does: installed (`make setup` installs it into .venv,
editable, from this checkout). `make test` runs them with pytest-xdist (`-n auto --dist loadscope`: a module's
tests stay on one worker, so a module fixture is made once). The session fixtures here are made once per
session, whichever worker asks first, under a file lock (pytest-xdist's documented way, :func:`helpers.made_once`).
Every test is marked with its tier from the fixtures it uses (docs/development.md, "Tests"):

* ``demo``: reads the trained demo (``trained_demo``, ``demo_models``); `make test` trains it before pytest;
* ``trains``: trains a tiny model itself or through a fixture (``toy``, ``hf_marian``, ...), or is marked so;
* ``fast``: everything else, which trains nothing (`make test-fast`).

A test marked ``full`` runs in `make test-full` only (the long end-to-end runs: docs/development.md, "Tests"). At the
end of a session, every test whose setup and call took more than :data:`SLOW_SECONDS` together is listed: a warning,
not a failure (these machines are noisy); such a test belongs in `make test-full` or needs a shared setup.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

from helpers import (DEMO_COMMAND, DEMO_LLM_CONFIG, DEMO_LLM_TRAIN, REPO, TEST_CONFIG, VLLM_PYTHON, made_once,
                     run_snakemake)

# One torch thread in the tests and everything they start (a Snakemake job gets its rule's threads instead):
# pytest-xdist runs a worker per core, and a second torch thread on a busy core only waits, spinning.
for _name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

#: The fixtures that train a model (directly or through another fixture): a test using one is of the tier
#: ``trains``. A test module names its own such fixtures in a module-level ``TRAINING_FIXTURES`` set; a test that
#: trains otherwise (or asks for a fixture with ``request.getfixturevalue``) is marked ``@pytest.mark.trains``.
TRAINING_FIXTURES = {"toy", "toy_data", "hf_marian", "hf_m2m100", "tiny_llama", "tiny_qwen2_base", "small_demo_data",
                     "vllm_side_outputs", "vllm_outputs", "vllm_families"}
#: The fixtures that run vLLM's engine in .venv-vllm, which `make test-full` makes: a test using one is ``full``.
VLLM_FIXTURES = {"vllm_side_outputs", "vllm_outputs", "vllm_families"}
#: The fixtures of the trained demo: a test using one is of the tier ``demo``.
DEMO_FIXTURES = {"trained_demo", "demo_models", "trained_demo_llm", "mechanics_demo"}
#: A test whose setup and call together take longer than this is listed at the end of the session.
SLOW_SECONDS = 60


def pytest_configure(config):
    if importlib.util.find_spec("docnmt") is None:
        raise pytest.UsageError(f"{sys.executable} lacks the package docnmt: run `make setup` (or `make test`), "
                                "which installs it into .venv from this checkout")
    import docnmt

    installed = Path(docnmt.__file__).resolve().parents[1]
    if installed != REPO / "scripts":
        raise pytest.UsageError(f"{sys.executable} imports docnmt from {installed}, not from this checkout "
                                f"({REPO}): `pip install -e {REPO}` in it, or use this checkout's .venv")


def pytest_collection_modifyitems(config, items):
    """Each test gets its tier's marker (``demo``, ``trains`` or ``fast``), and ``full`` where it uses a fixture of
    VLLM_FIXTURES or of its module's ``FULL_FIXTURES`` (a long shared run); the order stays pytest's."""
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        if fixtures & (VLLM_FIXTURES | getattr(item.module, "FULL_FIXTURES", set())):
            item.add_marker(pytest.mark.full)
        if fixtures & DEMO_FIXTURES or item.get_closest_marker("demo"):
            item.add_marker(pytest.mark.demo)
        elif fixtures & (TRAINING_FIXTURES | getattr(item.module, "TRAINING_FIXTURES", set())) \
                or item.get_closest_marker("trains"):
            item.add_marker(pytest.mark.trains)
        else:
            item.add_marker(pytest.mark.fast)


def pytest_terminal_summary(terminalreporter):
    """Every test whose setup and call took more than SLOW_SECONDS together (pytest-xdist's workers report each
    phase to the controller, so this sees them all)."""
    from collections import defaultdict

    took: dict[str, float] = defaultdict(float)
    for reports in terminalreporter.stats.values():
        for report in reports:
            if getattr(report, "when", None) in ("setup", "call"):
                took[report.nodeid] += getattr(report, "duration", 0.0)
    slow = sorted(((seconds, nodeid) for nodeid, seconds in took.items() if seconds > SLOW_SECONDS), reverse=True)
    if slow:
        terminalreporter.section(f"tests over {SLOW_SECONDS} s (setup and call)")
        for seconds, nodeid in slow:
            terminalreporter.write_line(f"{seconds:7.1f} s  {nodeid}")
        terminalreporter.write_line("each belongs in make test-full (marker full) or needs a shared setup "
                                    "(docs/development.md, \"Tests\")")


@pytest.fixture
def repo() -> Path:
    return REPO


def _demo(workdir: Path) -> Path:
    """The whole demo as `make demo` runs it, with its report."""
    run_snakemake(workdir, *DEMO_COMMAND, timeout=3000)
    run_snakemake(workdir, "--config", "tasks=[demo]", "--report", str(workdir / "report.html"))
    return workdir


@pytest.fixture(scope="session")
def trained_demo(tmp_path_factory) -> Path:
    """The workflow directory of the finished demo: both models, every decode, score, table and plot.

    `make test` makes it before pytest in DOCNMT_DEMO_WORKDIR (`make demo DEMO_DIR=...`), so no worker waits for it,
    and the tests read it as it is; `DOCNMT_DEMO_WORKDIR=$PWD pytest tests/score` reads a `make demo` of the
    checkout. Without that variable, the first worker that needs it makes it."""
    reuse = os.environ.get("DOCNMT_DEMO_WORKDIR")
    if not reuse:
        return made_once(tmp_path_factory, "demo", _demo)
    from docnmt import layout

    finished = [layout.model_file("demo", level) for level in ("sentence", "document")] + \
        [layout.combined_table("demo", table, "md") for table in ("quality", "pronoun_f1", "contrapro_accuracy")] + \
        ["report.html"]
    missing = [path for path in finished if not (Path(reuse) / path).is_file()]
    if missing:
        pytest.fail(f"DOCNMT_DEMO_WORKDIR={reuse} holds no finished demo (no {', '.join(missing)}): run "
                    "`make demo DEMO_DIR=...` there", pytrace=False)
    return Path(reuse)


@pytest.fixture(scope="session")
def demo_models(trained_demo) -> Path:
    """The demo's workflow directory for the tests that read only its data and models (the same run)."""
    return trained_demo


def _demo_llm(workdir: Path) -> Path:
    """make demo-llm's model trained in the demo's workflow directory, and its tables for the strategies the findings
    compare (the Makefile's test-demo-llm does the same)."""
    import subprocess

    from helpers import tool_env

    subprocess.run([sys.executable, *DEMO_LLM_TRAIN, "--train", str(workdir / "data/demo/corpus/train"), "--output",
                    str(workdir / "results/demo-llm/model")], check=True, capture_output=True, env=tool_env())
    run_snakemake(workdir, "tables", "--profile", str(REPO / "profiles" / "cpu"), "--cores", "2", "--config",
                  *DEMO_LLM_CONFIG, timeout=3000)
    return workdir


@pytest.fixture(scope="session")
def trained_demo_llm(trained_demo, tmp_path_factory) -> Path:
    """The demo's workflow directory with make demo-llm's tiny causal LM (results/demo-llm/model) and the tables of
    sentence-level, doc-trans and cheating on it (results/tables/demo-llm/). `make test-full` makes them before its
    long tests (test-demo-llm); without DOCNMT_DEMO_WORKDIR, the first worker that needs them does."""
    from docnmt import layout

    if os.environ.get("DOCNMT_DEMO_WORKDIR"):
        table = Path(os.environ["DOCNMT_DEMO_WORKDIR"]) / layout.combined_table("demo-llm", "quality", "md")
        if not table.is_file():
            pytest.fail(f"DOCNMT_DEMO_WORKDIR holds no demo LLM ({table}): run `make test-demo-llm` (make test-full "
                        "does)", pytrace=False)
        return trained_demo
    return made_once(tmp_path_factory, "demo-llm", lambda _folder: _demo_llm(trained_demo))


def _mechanics(workdir: Path) -> Path:
    """The mechanics demo as `make test-mechanics` builds it (the Makefile is its one definition)."""
    import subprocess

    from helpers import COMET_PYTHON

    if not COMET_PYTHON.exists():
        pytest.skip(f"no COMET environment at {COMET_PYTHON}: `make comet` makes it (make test-full does)")
    subprocess.run(["make", "--no-print-directory", "-C", str(REPO), "test-mechanics", f"TEST_MECHANICS={workdir}"],
                   check=True, capture_output=True, text=True)
    return workdir


@pytest.fixture(scope="session")
def mechanics_demo(tmp_path_factory) -> Path:
    """The workflow directory of the mechanics demo (.test/config_demo.yaml and config_mechanics.yaml: the
    test-size demo through every rule and target, MBR, ctxpro, COMET, XCOMET and MetricX from tiny checkpoints in
    its models/, the report and the tables), for the tests of equalities, files and tables. `make test` builds it
    before pytest in DOCNMT_MECHANICS_WORKDIR (`make test-mechanics`); without that variable the first worker that
    needs it builds it the same way."""
    from docnmt import layout

    reuse = os.environ.get("DOCNMT_MECHANICS_WORKDIR")
    if not reuse:
        return made_once(tmp_path_factory, "mechanics", _mechanics)
    table = Path(reuse) / layout.combined_table("demo", "quality", "md")
    if not table.is_file():
        pytest.fail(f"DOCNMT_MECHANICS_WORKDIR={reuse} holds no finished mechanics demo (no {table}): run "
                    "`make test-mechanics`", pytrace=False)
    return Path(reuse)


def _small_demo_data(workdir: Path) -> Path:
    run_snakemake(workdir, "data/demo/bin/sentence", "data/demo/bin/document", "--cores", "2", "--configfile",
                  TEST_CONFIG)
    return workdir


@pytest.fixture(scope="session")
def small_demo_data(tmp_path_factory) -> Path:
    """The test-size demo's data stage (.test/config_demo.yaml: corpus, BPE, windows, both binarized levels). Read
    it, or copy it with :func:`helpers.copy_workdir` to build on it. `make test-mechanics` builds it as the mechanics
    demo's first step and copies it, as it is then, to DOCNMT_DATA_STAGE: one build for both; without that variable
    the first worker that needs it builds it the same way."""
    reuse = os.environ.get("DOCNMT_DATA_STAGE")
    if not reuse:
        return made_once(tmp_path_factory, "demo-preprocess", _small_demo_data)
    if not (Path(reuse) / "data/demo/bin/document").is_dir():
        pytest.fail(f"DOCNMT_DATA_STAGE={reuse} holds no data stage of the test-size demo (no data/demo/bin/document): "
                    "run `make test-mechanics`", pytrace=False)
    return Path(reuse)


def _toy_data(root: Path) -> Path:
    from toymodel import run, toy_corpus

    toy_corpus(root / "txt")
    run("-m", "docnmt.preprocess.dictionary", "--input", str(root / "txt/train.en"), str(root / "txt/train.de"),
        "--output", str(root / "dict.txt"))
    run("-m", "docnmt.preprocess.binarize", "--src", "en", "--tgt", "de", "--trainpref", str(root / "txt/train"),
        "--validpref", str(root / "txt/valid"), "--testpref", str(root / "txt/test"),
        "--dict", str(root / "dict.txt"), "--destdir", str(root / "bin"))
    return root


@pytest.fixture(scope="session")
def toy_data(tmp_path_factory) -> Path:
    """The toy reversal task (tests/toymodel.py): its folder, with its joined dictionary and binarized splits."""
    return made_once(tmp_path_factory, "search-toy", _toy_data)


@pytest.fixture(scope="session")
def toy(toy_data, tmp_path_factory):
    """(data root, checkpoint, Model): a tiny transformer trained on the toy task (sinusoidal positions, post-norm,
    fairseq's transformer), once per session for the search and the CXMI tests."""
    from toymodel import train

    from docnmt.decode.backends.fairseq.model import Model

    checkpoint = made_once(tmp_path_factory, "search-toy-model",
                           lambda _folder: train(toy_data, "model", "--max-epoch", "12"))
    return toy_data, checkpoint, Model(checkpoint, toy_data / "bin")


def _tiny_model(tmp_path_factory, name: str) -> Path:
    """One of tests/tiny_models.py's models: `make test` builds them before pytest in DOCNMT_TINY_MODELS (`make
    test-tiny-models`); without it, the first worker that needs one builds it the same way."""
    import tiny_models

    reuse = os.environ.get("DOCNMT_TINY_MODELS")
    if reuse and (Path(reuse) / name / "config.json").is_file():
        return Path(reuse) / name
    return made_once(tmp_path_factory, f"tiny-{name}", lambda folder: tiny_models.BUILDS[name](folder / "model"))


@pytest.fixture(scope="session")
def hf_marian(tmp_path_factory) -> Path:
    """The tiny Marian model of tests/hfmodel.py (a tokenizer trained on the demo corpus with a <brk> separator,
    150 updates on its sentences and k=3 windows), saved with save_pretrained: its folder (tests/tiny_models.py)."""
    return _tiny_model(tmp_path_factory, "marian")


@pytest.fixture(scope="session")
def hf_m2m100(tmp_path_factory) -> Path:
    """The tiny M2M100 of tests/hfmodel.py (language tokens ``__en__``, ``__de__``; 150 updates): its folder."""
    return _tiny_model(tmp_path_factory, "m2m100")


@pytest.fixture(scope="session")
def tiny_llama(tmp_path_factory) -> Path:
    """The tiny Llama of tests/llmmodel.py (a byte-level tokenizer trained on the demo corpus with a ChatML chat
    template, 150 updates on its pairs as chat turns), saved with save_pretrained: its folder."""
    return _tiny_model(tmp_path_factory, "llama")


@pytest.fixture(scope="session")
def tiny_qwen2_base(tmp_path_factory) -> Path:
    """A tiny Qwen2 whose tokenizer has no chat template (a base model's, tests/llmmodel.py), 150 updates on the demo's
    pairs written out with the plain part of the template translate (enough to answer with a translation and the
    template's end, a blank line: 60 answered with the blank line alone): its folder."""
    return _tiny_model(tmp_path_factory, "qwen2-plain")


@pytest.fixture(scope="session")
def vllm_documents():
    """The demo's first 4 test documents, and text pairs with a window of context for the model's own scoring."""
    import llmmodel

    _, docs = llmmodel.demo_documents()
    docs = docs[:4]
    src = [s for d in docs for s in d.src]
    ref = [t for d in docs for t in d.tgt]
    pairs = {"src": [" <sep> ".join(src[max(0, i - 1):i + 1]) for i in range(len(src))],
             "tgt": [" <sep> ".join(ref[max(0, i - 1):i + 1]) for i in range(len(ref))]}
    return {"src": src, "ref": ref, "docids": [d.docid for d in docs for _ in d.src], "pairs": pairs}


@pytest.fixture(scope="session")
def vllm_side_outputs(tmp_path_factory, tiny_llama, tiny_qwen2_base, vllm_documents) -> dict:
    """Every engine pass of the tests on vLLM, in one process of vLLM's environment for the session
    (tests/vllm_side.py): the backend vllm on :func:`vllm_documents` with the tiny Llama (the strategies'
    translations, forced scores, samples, the console scripts) and a beam search with the tiny base Qwen2's plain
    template, then each family's tiny model (tests/llmfamilies.py) on its documents, one engine after the other."""
    import json
    import subprocess

    import llmfamilies
    from docnmt.decode.backends.causal_lm.tiny import FAMILIES

    if not VLLM_PYTHON.exists():
        pytest.skip(f"no vLLM environment at {VLLM_PYTHON}: `make vllm` makes it (make test-full does)")
    # each family's model made once (made_once); a second worker that asks meanwhile builds from the other end of the
    # list instead of waiting behind the first one's every build
    worker = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0")[2:] or 0)
    order = list(FAMILIES)[::-1] if worker % 2 else list(FAMILIES)
    built = {name: llmfamilies.family_folder(tmp_path_factory, name) for name in order}
    folders = {name: built[name] for name in FAMILIES}

    def run(folder: Path) -> Path:
        (folder / "docs.json").write_text(json.dumps(vllm_documents), encoding="utf-8")
        (folder / "family-docs.json").write_text(json.dumps(llmfamilies.plain_documents(
            llmfamilies.family_documents())), encoding="utf-8")
        families = [f"--family={name}={path}" for name, path in folders.items()]
        result = subprocess.run([str(VLLM_PYTHON), str(REPO / "tests" / "vllm_side.py"), "--model", str(tiny_llama),
                                 "--plain-model", str(tiny_qwen2_base), "--documents", str(folder / "docs.json"),
                                 *families, "--family-documents", str(folder / "family-docs.json"),
                                 "--output", str(folder / "vllm.json")],
                                capture_output=True, text=True, timeout=1200, cwd=folder,
                                env={**os.environ, "PYTHONPATH": str(REPO / "scripts")})
        assert result.returncode == 0, result.stderr[-4000:]
        return folder / "vllm.json"

    return json.loads(made_once(tmp_path_factory, "vllm-side", run).read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def vllm_outputs(vllm_side_outputs) -> dict:
    """What the backend vllm gives on :func:`vllm_documents` with the tiny Llama (and the tiny base Qwen2's beam
    search): :func:`vllm_side_outputs`' model part."""
    return {key: value for key, value in vllm_side_outputs.items() if key != "families"}


@pytest.fixture(scope="session")
def vllm_families(vllm_side_outputs) -> dict:
    """Each family's docnmt-check-model status and greedy translations on vLLM, and the check of an architecture
    vLLM has no implementation of: :func:`vllm_side_outputs`' family part."""
    return vllm_side_outputs["families"]


@pytest.fixture(scope="session")
def paper_dry_run(tmp_path_factory) -> list[dict]:
    """The session's one dry run of the paper's DAG (tasks news, ted and os; the targets all and data): each job's
    rule, files and wildcards (helpers.dry_run_jobs), read by every test that inspects that DAG."""
    from helpers import dry_run_jobs

    return made_once(tmp_path_factory, "paper-dry-run", lambda folder: dry_run_jobs(folder, "[news,ted,os]", "all",
                                                                                   "data"))


def _bare_python(root: Path) -> Path:
    """A Python without the project's packages (a venv without pip), as a fresh system python would be."""
    import subprocess

    folder = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True, capture_output=True)
    python = folder / "bin" / "python"
    probe = subprocess.run([str(python), "-c", "import sacremoses"], capture_output=True)
    if probe.returncode == 0:
        pytest.skip(f"{python} can import sacremoses (system site packages), so it is not bare")
    return python


@pytest.fixture(scope="session")
def bare_python(tmp_path_factory) -> Path:
    """A Python without the project's packages (:func:`_bare_python`), made once per session."""
    return made_once(tmp_path_factory, "bare", _bare_python)


@pytest.fixture
def no_outside_network(monkeypatch):
    """No name lookup or connection but the loopback's, in this test's process (tests/loopback.py, forbid_outside):
    the download tests, whose fallbacks would otherwise try a source's real locations."""
    from loopback import forbid_outside

    forbid_outside(monkeypatch)


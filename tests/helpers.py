"""What the tests share besides fixtures: the checkout's paths, the environment of the tools they start, the
Snakemake runner, the shell commands of a documentation page, a copy of a workflow directory, and what a CLI run
in-process made (:func:`captured`).

Import it as ``from helpers import run_snakemake`` (pytest puts ``tests/`` on ``sys.path`` for the conftest)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: vLLM's environment (``make vllm``), where the vllm backend's tests and the served model's server run vLLM.
VLLM_PYTHON = Path(os.environ.get("DOCNMT_VLLM_PYTHON", REPO / ".venv-vllm" / "bin" / "python"))

#: unbabel-comet's environment (``make comet``), where the COMET tests and the mechanics demo's tiny checkpoints run.
COMET_PYTHON = REPO / ".venv-comet" / "bin" / "python"

#: The unmodified IWSLT17 TED samples beside the checkout; tests that read them skip where it is absent.
REAL_SAMPLES = REPO.parent / "shared" / "real-samples"

#: The demo at test size (.test/config_demo.yaml, merged over config.yaml): 140 documents, 16 updates.
TEST_CONFIG = str(REPO / ".test" / "config_demo.yaml")
#: The mechanics demo's further settings (merged over TEST_CONFIG; make test-mechanics): 80 updates, every metric.
MECHANICS_CONFIG = str(REPO / ".test" / "config_mechanics.yaml")

#: `make demo`'s Snakemake, on CPU: the CPU profile (each GPU rule on one thread, as many at once as cores).
DEMO_COMMAND = ("--profile", str(REPO / "profiles" / "cpu"), "--cores", "2", "--config", "tasks=[demo]")


#: make demo-llm's model as the Makefile's test-demo-llm trains it, and the tables of the strategies the findings compare
#: (the Makefile's LLM_TRAIN and TEST_LLM_CONFIG; tests/test_demo_llm.py keeps them equal).
DEMO_LLM_TRAIN = ("-m", "docnmt.decode.backends.causal_lm.tiny", "--src", "en", "--tgt", "de", "--steps", "1600",
                  "--refine", "0.1", "--threads", "2")
DEMO_LLM_CONFIG = ("tasks=[demo-llm]", "strategies=[sentence-level,doc-trans,cheating]", "mbr={strategies: []}",
                   "cad={strategies: []}", "docmbr={strategies: []}", "task_settings={demo-llm: {ctxpro: []}}")


def mechanics_config() -> dict:
    """The mechanics demo's validated config: config.yaml, then TEST_CONFIG and MECHANICS_CONFIG merged over it, as
    `make test-mechanics` gives them to Snakemake."""
    from docnmt.config import WORKFLOW_CONFIG, merge, read, validate

    return validate(merge(merge(read(WORKFLOW_CONFIG), read(Path(TEST_CONFIG))), read(Path(MECHANICS_CONFIG))))


def tool_env() -> dict:
    """The environment for Snakemake and rule subprocesses: this interpreter's bin first."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"] = "1"
    return env


def captured(monkeypatch, target: str) -> list:
    """What each call of ``target`` (``"module.function"``, e.g. ``"docnmt.decode.backends.make_searcher"``) returns
    while the test runs, in call order. The CLIs import their loaders and searchers from the package when they run,
    so a CLI's ``main([...])`` called in-process hands them to the test: what its options made of a model (its dtype)
    or of a searcher (its batch size, its counters) can be checked after the run."""
    import importlib

    module_name, name = target.rsplit(".", 1)
    module = importlib.import_module(module_name)
    original = getattr(module, name)
    made: list = []

    def record(*args, **kwargs):
        made.append(original(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(module, name, record)
    return made


def run_snakemake(workdir: Path, *args: str, check: bool = True, timeout: int = 1800,
                  python: Path | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run Snakemake on this repo's Snakefile with ``workdir`` as working directory
    (``python``: as ``python -m snakemake`` with that interpreter, instead of the ``snakemake`` script;
    ``env``: its environment, by default :func:`tool_env`)."""
    env = tool_env() if env is None else env
    if python is None:
        snakemake = shutil.which("snakemake", path=env["PATH"])
        assert snakemake, "snakemake is not installed in this environment (run `make setup`)"
        launcher = [snakemake]
    else:
        launcher = [str(python), "-m", "snakemake"]
    command = [*launcher, "-s", str(REPO / "Snakefile"), "--directory", str(workdir), *args]
    result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=timeout)
    if check and result.returncode != 0:
        raise AssertionError(
            f"snakemake {' '.join(args)} failed ({result.returncode}):\n{result.stdout[-6000:]}\n{result.stderr[-6000:]}"
        )
    return result


def dry_run_jobs(workdir: Path, task_list: str, *targets: str) -> list[dict]:
    """The jobs of `snakemake -n [TARGETS] --config tasks=TASK_LIST` in ``workdir``: for each, its rule, input,
    output, log and benchmark (lists of paths) and wildcards (a dict)."""
    stdout = run_snakemake(workdir, *targets, "-n", "--config", f"tasks={task_list}", timeout=600).stdout
    jobs = []
    for block in re.split(r"\n(?=(?:local)?rule \S+:\n)", stdout):
        rule = re.match(r"(?:local)?rule (\S+):\n", block)
        if not rule:
            continue
        job = {"rule": rule[1]}
        for key in ("input", "output", "log", "benchmark", "wildcards"):
            found = re.search(rf"^    {key}: (.*)$", block, re.M)
            job[key] = found[1].split(", ") if found else []
        job["wildcards"] = dict(item.split("=", 1) for item in job["wildcards"])
        jobs.append(job)
    return jobs


#: The pages of the manual, and the kinds of code block they show that a test runs as written: commands (bash),
#: configs and templates (yaml) and Python (tests/test_option_coverage.py audits that each is run).
DOC_PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
BLOCK_LANGUAGES = ("bash", "yaml", "python")


def block_key(page: Path, block: str) -> str:
    """A code block's name in the option ledger: its page and a digest of its text."""
    import hashlib

    return f"{page.relative_to(REPO).as_posix()}:{hashlib.sha1(block.encode('utf-8')).hexdigest()[:10]}"


def all_doc_blocks() -> dict[str, str]:
    """Every code block of :data:`DOC_PAGES` in :data:`BLOCK_LANGUAGES`: its :func:`block_key` -> its page and
    first line (what the audit names)."""
    found = {}
    for page in DOC_PAGES:
        for lang, block in re.findall(r"^```(\w+)\n(.*?)^```", page.read_text(encoding="utf-8"), re.S | re.M):
            if lang in BLOCK_LANGUAGES:
                found[block_key(page, block)] = f"{page.relative_to(REPO).as_posix()}: {block.splitlines()[0]}"
    return found


def doc_blocks(page: Path, lang: str, *section: str) -> list[str]:
    """A page's ``lang`` code blocks as written (of one section: after each of ``section``'s markers in turn, up to
    the next ``## `` heading or bold paragraph title), each recorded in the option ledger (docnmt.ledger) as run by
    the test that reads it: a test reads a block to run it as written."""
    from docnmt import ledger

    source = page.read_text(encoding="utf-8")
    for marker in section:
        source = source.split(marker, 1)[1]
    if section:
        source = source.split("\n## ", 1)[0].split("\n**", 1)[0]
    blocks = re.findall(rf"^```{lang}\n(.*?)^```", source, re.S | re.M)
    assert blocks, f"{page.name}: no {lang} block after {section}"
    ledger.record("doc", page.relative_to(REPO).as_posix(), [block_key(page, block) for block in blocks])
    return blocks


def block_commands(block: str) -> list[str]:
    """The command lines of a bash block as written: continuation lines joined, comments cut."""
    joined = re.sub(r"\\\n\s*", " ", re.sub(r"[ \t]+#[^\n]*(?=\\?\n)", "", block))
    return [line.strip() for line in joined.splitlines() if line.strip() and not line.startswith("#")]


def shell_commands(page: Path, *section: str) -> list[str]:
    """The commands of a page's bash blocks (of one section, :func:`doc_blocks`), continuation lines joined, comments
    cut."""
    return [command for block in doc_blocks(page, "bash", *section) for command in block_commands(block)]


def copy_workdir(source: Path, target: Path) -> Path:
    """A copy of a workflow directory that Snakemake finds up to date: files with their times, and Snakemake's
    own records (.snakemake/metadata) of how each was made."""
    shutil.copytree(source, target, symlinks=True, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("locks", "incomplete", "log", "auxiliary", "conda"))
    return target


def made_once(tmp_path_factory, name: str, make):
    """``make(folder)``'s value, made once per test session however many pytest-xdist workers ask: the first one
    makes it under a file lock in a folder that every worker of the session shares, the others wait for the lock
    and read the value back (pytest-xdist's documented recipe). The value must pickle (paths, tuples of them);
    an error or a skip of ``make`` is raised again in every worker that asks, without making it again."""
    import pickle

    import pytest
    from filelock import FileLock

    base = tmp_path_factory.getbasetemp()
    # under xdist each worker's basetemp is a folder of the session's (popen-gwN); without it, the session's own
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    record = root / f"{name}.made.pickle"
    with FileLock(str(root / f"{name}.lock")):
        if not record.exists():
            folder = root / name
            folder.mkdir()
            try:
                outcome = ("value", make(folder))
            except pytest.skip.Exception as skipped:
                outcome = ("skip", skipped.msg)
            except BaseException as error:  # noqa: BLE001 - kept for the other workers, raised below
                outcome = ("error", f"{name}: {type(error).__name__}: {error}")
                record.write_bytes(pickle.dumps(outcome))
                raise
            record.write_bytes(pickle.dumps(outcome))
        else:
            outcome = pickle.loads(record.read_bytes())
    kind, value = outcome
    if kind == "skip":
        pytest.skip(value)
    if kind == "error":
        pytest.fail(f"the session's setup failed in another test: {value}", pytrace=False)
    return value


#: ctxpro's en-de auxiliary dev set, unmodified (tests/data/ctxpro/README.md), and the md5 its registry gives.
CTXPRO_DATA = REPO / "tests" / "data" / "ctxpro"
CTXPRO_DEV = "en-de/auxiliary/dev"
CTXPRO_DEV_FILE = "auxiliary.opensubtitles.en-de.dev"


def ctxpro_mirror(root: Path) -> Path:
    """ctxpro's en-de auxiliary dev JSON and inputs, unpacked where a mirror serves GitHub's URLs of them
    (``root/github.com/rewicks/ctxpro/raw/main/release/{evalsets,inputs}/``); returns that ``release`` folder (what
    ``ctxpro.local`` reads)."""
    import gzip

    release = root / "github.com" / "rewicks" / "ctxpro" / "raw" / "main" / "release"
    for packed, target in ((f"{CTXPRO_DEV_FILE}.json.gz", release / "evalsets" / f"{CTXPRO_DEV_FILE}.json"),
                           (f"{CTXPRO_DEV_FILE}.gz", release / "inputs" / CTXPRO_DEV_FILE)):
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(gzip.decompress((CTXPRO_DATA / packed).read_bytes()))
    return release

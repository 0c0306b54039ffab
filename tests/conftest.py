"""Shared test fixtures: paths, the Snakemake runner, the trained demo. The tests import the package docnmt as a
user's Python does: installed (`make setup` installs it into .venv, editable, from this checkout)."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from helpers import DEMO_COMMAND, REAL_SAMPLES, REPO, TEST_CONFIG, copy_workdir, run_snakemake, shell_commands, tool_env  # noqa: F401

# One torch thread in the tests and everything they start (a Snakemake job gets its rule's threads instead): the
# demo trains and decodes in the background meanwhile, and a second thread on a busy core only waits, spinning.
for _name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")


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


#: How much lower the tests' CPU priority is than the background demo's (os.nice).
DEMO_PRIORITY = 10


def needs_demo(item) -> bool:
    """A test that reads the demo's trained models, or the whole finished demo (directly or through another
    fixture)."""
    return bool({"trained_demo", "demo_models"} & set(getattr(item, "fixturenames", ())))


def needs_finished_demo(item) -> bool:
    """A test that reads the demo's decodes, scores, tables or plots, not only its models and data."""
    return "trained_demo" in getattr(item, "fixturenames", ())


class Prepared:
    """An expensive setup, made once per session: by the background worker, or by the first test that needs it,
    whichever comes first.

    The background worker starts at the first test. It makes the setups that the test modules register with
    :func:`in_background` one after the other, in their registration order. Meanwhile the foreground runs the
    other tests. The modules whose setups are made in the background run last, so that their setups are ready, or
    nearly so, when their tests come. Both cores stay busy to the end, also once the demo has finished. A test that
    needs a setup sooner makes it itself, or waits for the worker to finish it. A setup's error (or skip) is raised
    in every test that uses it.

    ``make(folder)`` gets a new folder of its own named ``folder``. It must not change the process's environment
    or working directory: the foreground goes on meanwhile. What must be undone at the session's end (a started
    service) it registers with :meth:`at_end`.
    """

    registered: list["Prepared"] = []  # the worker's candidates (:func:`in_background`)
    every: list["Prepared"] = []  # every setup, for the terminal summary
    finalizers: list = []  # run at the session's end, the last registered first (:meth:`at_end`)
    base: Path | None = None

    #: which background thread makes a setup, and when: the worker from the first test on (``in_background``), or
    #: the second thread once the demo's models are trained (``after_demo_models``) or the demo has finished
    #: (``after_the_demo``)
    WHEN = ("worker", "demo models", "demo finished")

    def __init__(self, make, folder: str, fixture: str | None = None, when: str = "worker"):
        assert when in Prepared.WHEN, when
        self.make, self.folder, self.module, self.fixture, self.when = make, folder, make.__module__, fixture, when
        self.lock = threading.Lock()
        self.done, self.value, self.error = False, None, None
        self.seconds: float | None = None
        self.started: float | None = None
        self.maker: str | None = None
        Prepared.every.append(self)

    @staticmethod
    def at_end(finalizer) -> None:
        """Call ``finalizer()`` at the session's end, after the background worker has stopped."""
        Prepared.finalizers.append(finalizer)

    def get(self, blocking: bool = True):
        """The setup's value (made now if nobody has made it yet); ``blocking=False``: None if another thread is
        making it."""
        if not self.lock.acquire(blocking=blocking):
            return None
        try:
            if not self.done:
                assert Prepared.base is not None, "Prepared.get() before the session's first test"
                folder = Prepared.base / self.folder
                folder.mkdir(parents=True)
                self.maker = threading.current_thread().name
                self.started = time.perf_counter()
                try:
                    self.value = self.make(folder)
                except BaseException as err:  # pytest's skip and fail too: raised again in each test
                    self.error = err
                self.seconds, self.done = time.perf_counter() - self.started, True
        finally:
            self.lock.release()
        if self.error is not None:
            raise self.error
        return self.value


def in_background(folder: str, fixture: str | None = None):
    """Registers ``make(folder)`` as a setup of its test module that the background worker makes (see
    :class:`Prepared`); the module's fixtures return its ``.get()``. ``fixture``: a setup of this conftest,
    made in the background first when a test of the session uses that fixture."""

    def register(make) -> Prepared:
        prepared = Prepared(make, folder, fixture)
        Prepared.registered.append(prepared)
        return prepared

    return register


def after_demo_models(folder: str):
    """Registers ``make(demo_workdir, folder)`` as a setup of its test module that a second background thread
    makes from the demo's trained models and data, as soon as they are (:func:`demo_models_queue`): the subprocess
    work of the demo's tests (a fairseq CLI to compare with), made while the demo decodes and the foreground runs
    the demo's in-process tests, not after them."""

    def register(make) -> Prepared:
        def from_demo(target: Path):
            DemoRun.decided.wait(timeout=600)  # the worker starts before the demo_run fixture has decided
            if DemoRun.current is None:
                pytest.skip("no demo in this session")
            return make(DemoRun.current.wait_models(), target)

        prepared = Prepared(from_demo, folder, when="demo models")
        prepared.module = make.__module__
        Prepared.registered.append(prepared)
        return prepared

    return register


def after_the_demo(folder: str):
    """Registers ``make(folder)`` as a setup of its test module that needs nothing of the demo, but that the second
    background thread makes once the whole demo has finished, where the session runs it (:func:`demo_models_queue`).

    For the subprocess work of the tests that the foreground reaches last: once the demo is done, one thread of
    tests is left, and the session used to end on one core (45 s of tests after the demo's end, most of it
    Snakemake and the CLIs as a user runs them). Made meanwhile by the second thread, they end it on two. A test that
    comes before the demo's end makes the setup itself, as it would without the thread."""

    def register(make) -> Prepared:
        prepared = Prepared(make, folder, when="demo finished")
        Prepared.registered.append(prepared)
        return prepared

    return register


def background_modules(items) -> list[str]:
    """The test modules among ``items`` with a setup for the background worker, in its order."""
    modules = {item.module.__name__ for item in items if getattr(item, "module", None) is not None}
    return list(dict.fromkeys(p.module for p in Prepared.registered
                              if p.fixture is None and p.when == "worker" and p.module in modules))


def background_queue(items) -> list[Prepared]:
    """The setups the background worker makes for ``items``: first those of this conftest whose fixture a test
    uses, then those of the test modules, in their registration order."""
    modules = {item.module.__name__ for item in items if getattr(item, "module", None) is not None}
    used = {name for item in items for name in getattr(item, "fixturenames", ())}
    return [p for p in Prepared.registered if p.fixture in used] + \
        [p for p in Prepared.registered if p.fixture is None and p.when == "worker" and p.module in modules]


def demo_models_queue(items) -> list[Prepared]:
    """The setups made from the demo's models (:func:`after_demo_models`) for ``items``, then those made after the
    whole demo (:func:`after_the_demo`), where the session runs the demo: a second background thread makes them
    once the models are trained, and once the demo has finished."""
    modules = {item.module.__name__ for item in items if getattr(item, "module", None) is not None}
    if not any(needs_demo(item) for item in items):
        return []
    return [p for when in ("demo models", "demo finished") for p in Prepared.registered
            if p.when == when and p.module in modules]


def pytest_collection_modifyitems(config, items):
    """The order of the tests. A module is never split, so its module fixtures are made once.

    1. First, the modules that need neither the demo nor a background setup. They run while the demo trains and
       decodes in the background, and the background worker makes its setups.
    2. Then the modules that need only the demo's trained models and data: their tests are in-process work on
       one core, so they run while the demo decodes and scores and the worker's setups run, not last.
    3. Then the modules whose setups the background worker makes, in the worker's order: by then most are ready.
       Their tests start Snakemake and the CLIs, so the session ends on both cores.
    4. Last, the modules that read the finished demo (the demo is the session's longest chain).
    """
    demo_modules = {item.path for item in items if needs_demo(item)}
    finished_demo_modules = {item.path for item in items if needs_finished_demo(item)}
    background = background_modules(items)

    def rank(item) -> tuple[int, int]:
        module = item.module.__name__ if getattr(item, "module", None) is not None else None
        if item.path in finished_demo_modules:
            return 3, 0
        if item.path in demo_modules:
            return 1, 0
        return (2, background.index(module)) if module in background else (0, 0)

    items.sort(key=rank)  # stable: each group keeps its order


SESSION_START = time.perf_counter()


def pytest_terminal_summary(terminalreporter):
    """When each background setup ran, for how long and in which thread; when the demo finished."""
    made = [p for p in Prepared.every if p.started is not None]
    if not made and DemoRun.finished is None:
        return
    terminalreporter.section("background setups (seconds from the session's start)")
    for p in sorted(made, key=lambda p: p.started):
        start = p.started - SESSION_START
        end = f"{start + p.seconds:.0f}" if p.seconds is not None else "unfinished"
        terminalreporter.write_line(f"{p.folder}: {start:.0f} to {end}, in the {p.maker} thread"
                                    + (f" ({type(p.error).__name__})" if p.error is not None else ""))
    if DemoRun.models_trained is not None:
        terminalreporter.write_line(f"the demo's models: trained at {DemoRun.models_trained - SESSION_START:.0f}")
    if DemoRun.finished is not None:
        terminalreporter.write_line(f"the demo: finished at {DemoRun.finished - SESSION_START:.0f}")


@pytest.fixture(scope="session", autouse=True)
def background_worker(request, tmp_path_factory):
    """Makes the registered setups of this session's test modules in a thread, from the first test on; at the
    session's end it finishes the setup it is making (its subprocesses would otherwise outlive the session)."""
    Prepared.base = tmp_path_factory.mktemp("background")
    stop = threading.Event()

    def work(queue) -> None:
        for prepared in queue:
            if prepared.when == "demo finished":
                DemoRun.decided.wait(timeout=600)
                while DemoRun.current is not None and not DemoRun.current.done.wait(timeout=1):
                    if stop.is_set():
                        return
            if stop.is_set():
                return
            try:
                prepared.get(blocking=False)
            except BaseException:  # noqa: S110 - kept in the Prepared and raised in its tests
                pass

    workers = [threading.Thread(target=work, args=(background_queue(request.session.items),),
                                name="background setups", daemon=True),
               # each of these setups waits for the demo's models itself (after_demo_models)
               threading.Thread(target=work, args=(demo_models_queue(request.session.items),),
                                name="demo model setups", daemon=True)]
    for worker in workers:
        worker.start()
    yield workers[0]
    stop.set()
    for worker in workers:
        worker.join()
    errors = []
    while Prepared.finalizers:
        try:
            Prepared.finalizers.pop()()
        except Exception as err:  # noqa: BLE001 - every finalizer runs; the failures are reported together
            errors.append(f"{type(err).__name__}: {err}")
    assert not errors, "at the session's end:\n" + "\n".join(errors)


class DemoRun:
    """The whole demo, as `make demo` runs it (training, all nine strategies, scores, tables and plots), in a
    Snakemake started in the background before the first test; its output goes to ``snakemake.log``.

    It runs in two Snakemake calls one after the other: first up to the two trained models (:data:`MODEL_TARGETS`),
    then everything else. The tests that need only the models and data (:func:`demo_models`) start after the
    first, while the second decodes and scores."""

    #: The first call's targets: the demo's two models (their data comes with them).
    MODEL_TARGETS = tuple(f"results/demo/models/{level}/checkpoint_best.pt" for level in ("sentence", "document"))

    #: when the demo's Snakemake exited (perf_counter), for the terminal summary
    finished: float | None = None
    #: when the demo's models were trained (perf_counter), for the terminal summary
    models_trained: float | None = None
    #: the session's demo run (for the setups made from it, :func:`after_demo_models`), and whether the demo_run
    #: fixture has decided on it yet (it runs after the background worker has started)
    current: "DemoRun | None" = None
    decided = threading.Event()

    def __init__(self, workdir: Path):
        self.workdir = workdir
        self.log = workdir.parent / f"{workdir.name}-snakemake.log"
        self.log.write_bytes(b"")
        self.started = time.perf_counter()
        self.seconds: float | None = None
        self.returncodes: dict[str, int] = {}
        self.process: subprocess.Popen | None = None
        self.stopping = False
        self.lock = threading.Lock()
        self.models_done, self.done = threading.Event(), threading.Event()
        threading.Thread(target=self._run, name="demo runner", daemon=True).start()
        DemoRun.current = self

    def _run(self) -> None:
        command = [str(Path(sys.executable).parent / "snakemake"), "-s", str(REPO / "Snakefile"), "--directory",
                   str(self.workdir)]
        try:
            for phase, targets in (("models", self.MODEL_TARGETS), ("everything", ())):
                with self.lock, open(self.log, "ab") as log:
                    if self.stopping:
                        break
                    # the targets before the options: --config takes every word after it
                    self.process = subprocess.Popen([*command, *targets, *DEMO_COMMAND], stdout=log,
                                                    stderr=subprocess.STDOUT, env=tool_env(), start_new_session=True)
                self.returncodes[phase] = self.process.wait()
                if phase == "models":
                    DemoRun.models_trained = time.perf_counter()
                    self.models_done.set()
                if self.returncodes[phase] != 0:
                    break
        finally:
            DemoRun.finished = time.perf_counter()
            self.models_done.set()
            self.done.set()

    def _check(self, event: threading.Event, phase: str, timeout: int) -> Path:
        if not event.wait(timeout=timeout):
            self.stop()
            raise AssertionError(f"the demo did not finish in {timeout} s; see {self.log}")
        phases = ("models",) if phase == "models" else ("models", "everything")
        codes = {p: self.returncodes.get(p) for p in phases}
        if any(code != 0 for code in codes.values()):
            tail = self.log.read_text(encoding="utf-8", errors="replace")[-8000:]
            raise AssertionError(f"the demo's Snakemake failed (exit codes {codes}, None: not run); "
                                 f"{self.log}:\n{tail}")
        return self.workdir

    def wait_models(self, timeout: int = 3000) -> Path:
        """The working directory once the demo's two models are trained; its log's end if that failed."""
        return self._check(self.models_done, "models", timeout)

    def wait(self, timeout: int = 3000) -> Path:
        """The working directory once the whole demo has finished; its log's end if it failed."""
        workdir = self._check(self.done, "everything", timeout)
        if self.seconds is None:
            self.seconds = time.perf_counter() - self.started
            print(f"\nthe demo (training, decoding, scoring) in the background: {self.seconds:.0f} s")
        return workdir

    def stop(self) -> None:
        with self.lock:
            self.stopping = True
            process = self.process
        if process is not None and process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)


@pytest.fixture(scope="session", autouse=True)
def demo_run(request, tmp_path_factory):
    """Starts the demo in the background at the first test of a session that has demo tests.

    DOCNMT_DEMO_WORKDIR reuses a workflow directory (Snakemake then only checks
    that everything is up to date), for fast iterations during development.
    """
    if not any(needs_demo(item) for item in request.session.items):
        DemoRun.decided.set()
        yield None
        return
    reuse = os.environ.get("DOCNMT_DEMO_WORKDIR")
    run = DemoRun(Path(reuse) if reuse else tmp_path_factory.mktemp("demo-trained"))
    DemoRun.decided.set()
    # The demo is the longest chain of the session, and its tests wait for it: the tests' thread, and everything
    # it starts from now on, yields the cores to it (a thread's nice value is its own on Linux; its subprocesses
    # inherit it). The background worker's thread keeps its priority: its setups are what the tests wait for next.
    # Measured on 2 cores, fresh clones: at equal priority the demo finished at 911 s of a 1071 s session (a run
    # that other work on the machine also slowed), with the tests' thread lowered at 664 s of 929 s. With the
    # worker lowered too, the demo finished at 734 s, but the worker's setups at 871 s, and the session at 1005 s.
    # Work the worker starts that is long and not waited for (the Slurm cluster's jobs) yields to the demo too.
    # The demo has a session of its own, and this kernel schedules by session (autogroups): the nice values order
    # the tests' threads, while the demo's session and the tests' share the cores. Run in the tests' session (a
    # process group of its own) with the worker at nice 5, the demo finished at 693 s instead of 744 s, but the
    # session took 971 s instead of 943 s: the tests' own work then waited. Giving the demo's session autogroup nice
    # -5 (/proc/PID/autogroup) made it finish at 661 s instead of 819 s, but the worker's setups then ended at 860 s
    # and pytest took 974 s instead of 946 s: the CPU, not the order, bounds the session. Since the demo runs in two
    # calls and its model-only tests come earlier (a2eb9e1), the tests' thread at nice 5 instead of 10 made the
    # session longer: 15:15 instead of 14:43 for make test on a fresh clone.
    os.nice(DEMO_PRIORITY)
    yield run
    run.stop()


@pytest.fixture(scope="session")
def trained_demo(demo_run):
    """The workflow directory of the finished demo: both models, every decode, score, table and plot."""
    return demo_run.wait()


@pytest.fixture(scope="session")
def demo_models(demo_run):
    """The demo's workflow directory once both models are trained: its data (corpus, BPE, windows, binarized) and
    models, while the demo may still decode and score."""
    return demo_run.wait_models()



def _small_demo_data(workdir: Path) -> Path:
    run_snakemake(workdir, "data/demo/bin/sentence", "data/demo/bin/document", "--cores", "2", "--configfile",
                  TEST_CONFIG)
    return workdir


#: The test-size demo's data stage, for the fixture below and for background setups.
SMALL_DEMO_DATA = Prepared(_small_demo_data, "demo-preprocess")


@pytest.fixture(scope="session")
def small_demo_data() -> Path:
    """The test-size demo's data stage (corpus, BPE, windows, both binarized levels), made once per session.
    Read it, or copy it with :func:`copy_workdir` to build on it."""
    return SMALL_DEMO_DATA.get()


@in_background("search-toy", fixture="toy_data")
def toy_data_setup(root: Path) -> Path:
    """The toy reversal task (tests/toymodel.py), its joined dictionary and binarized splits."""
    from toymodel import run, toy_corpus

    toy_corpus(root / "txt")
    run("-m", "docnmt.preprocess.dictionary", "--input", str(root / "txt/train.en"), str(root / "txt/train.de"),
        "--output", str(root / "dict.txt"))
    run("-m", "docnmt.preprocess.binarize", "--src", "en", "--tgt", "de", "--trainpref", str(root / "txt/train"),
        "--validpref", str(root / "txt/valid"), "--testpref", str(root / "txt/test"),
        "--dict", str(root / "dict.txt"), "--destdir", str(root / "bin"))
    return root


@in_background("search-toy-model", fixture="toy")
def toy_setup(folder: Path):
    """(data root, checkpoint, Model): a tiny transformer trained on the toy task (sinusoidal positions, post-norm,
    fairseq's transformer), once per session for the search and the CXMI tests."""
    from toymodel import train

    from docnmt.decode.model import Model

    toy_data = toy_data_setup.get()
    checkpoint = train(toy_data, "model", "--max-epoch", "12")
    return toy_data, checkpoint, Model(checkpoint, toy_data / "bin")


@pytest.fixture(scope="session")
def toy_data() -> Path:
    """The toy task's folder (:func:`toy_data_setup`)."""
    return toy_data_setup.get()


@pytest.fixture(scope="session")
def toy():
    """(data root, checkpoint, Model) of the toy model (:func:`toy_setup`)."""
    return toy_setup.get()


@in_background("hf marian", fixture="hf_marian")
def hf_marian_setup(folder: Path) -> Path:
    """The tiny Marian model of tests/hfmodel.py (a tokenizer trained on the demo corpus with a <brk> separator,
    300 updates on its sentences and k=3 windows), saved with save_pretrained: its folder."""
    import hfmodel

    return hfmodel.build(folder / "model", steps=300)


@pytest.fixture(scope="session")
def hf_marian() -> Path:
    """The tiny Marian model's folder (:func:`hf_marian_setup`), for the transformers backend's tests."""
    return hf_marian_setup.get()


def _bare_python(root: Path) -> Path:
    """A Python without the project's packages (a venv without pip), as a fresh system python would be."""
    folder = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True, capture_output=True)
    python = folder / "bin" / "python"
    probe = subprocess.run([str(python), "-c", "import sacremoses"], capture_output=True)
    if probe.returncode == 0:
        pytest.skip(f"{python} can import sacremoses (system site packages), so it is not bare")
    return python


BARE_PYTHON = Prepared(_bare_python, "bare")


@pytest.fixture(scope="session")
def bare_python() -> Path:
    """A Python without the project's packages (:func:`_bare_python`), made once per session."""
    return BARE_PYTHON.get()

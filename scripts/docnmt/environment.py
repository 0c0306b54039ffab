"""The interpreter the workflow's rules run on, and what to say when it is not set up.

Every rule runs ``python -m docnmt.STAGE.MODULE`` in bash, with the package
installed in that interpreter: in ``.venv`` by `make setup` (editable, from
the checkout), or in each rule's conda env by its post-deploy script
(``--sdm conda``). :func:`shell_prefix` is the bash code the Snakefile puts
before each command: Snakemake's strict mode and, unless each rule has its
own conda env, the folder of the interpreter that runs Snakemake first on
PATH, so ``.venv/bin/snakemake`` works without activating ``.venv``. Every
path in it is quoted, so a checkout under any path works.

A CLI that has loaded torch and a model calls :func:`freeze_heap` when it runs as a program: the cyclic
garbage collector then no longer walks the hundreds of thousands of objects that importing torch and fairseq or
transformers creates. The package imports fairseq through :func:`import_fairseq`, which leaves out the
scikit-learn and scipy.stats imports of two fairseq components the workflow never runs.

An interpreter without the project's packages is reported in one line
(:func:`setup_hint`): by the Snakefile before any job starts
(:func:`missing_modules`, :func:`install_problems`), and by the package
itself when a CLI cannot import a package (``docnmt/__init__.py``).
"""

from __future__ import annotations

import gc
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import shlex
import sys
import threading
import types
from pathlib import Path
from urllib.parse import unquote, urlparse

#: The distribution name of the package (pyproject.toml).
DISTRIBUTION = "docnmt-search"

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
    """One line: which interpreter lacks which packages, and how to set up: for a package that a backend's own
    environment has (vLLM's), that environment's command and make target."""
    from .interface import REGISTRY

    for described in REGISTRY.values():
        environment = described.environment
        if environment is not None and set(missing) & set(environment.modules):
            command = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
            installed = installed_source()
            checkout = installed[0] if installed is not None and installed[0] is not None else Path(".")
            runner = Path(checkout) / environment.venv / "bin"
            run = shlex.quote(str(runner / command)) if command.startswith("docnmt-") else \
                f"{shlex.quote(str(runner / 'python'))} -m ..."
            return (f"{python or sys.executable} lacks {', '.join(sorted(set(missing) & set(environment.modules)))}: "
                    f"the backend {described.name} runs in its own environment, {environment.venv} "
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


def freeze_heap(argv) -> None:
    """Where a CLI's ``main(argv)`` runs as the program (``argv`` None: ``python -m`` or a console script), moves
    every object alive now (the modules of torch, fairseq or transformers, the loaded model) into the collector's
    permanent generation (:func:`gc.freeze`): its full collections while the CLI works, and the one at the exit,
    no longer walk them. They live until the exit anyway. A caller's own process (``main([...])`` from Python) is
    left alone. Measured on 2 cores: a doc-trans decode of the demo's test set 5.0 to 3.8 s, 60 updates of the
    demo's training 46 to 43 s."""
    if argv is None:
        gc.freeze()


#: The modules that ``import fairseq`` imports only for two components the workflow never runs: the
#: sentence_prediction criterion (F1, Matthews, Pearson and Spearman correlation) and the audio_classification
#: task (ROC curve). Importing them costs 1.7 s of CPU, half of importing fairseq.
FAIRSEQ_DEFERRED = ("sklearn", "sklearn.metrics", "scipy.stats")


class Deferred(types.ModuleType):
    """A stand-in for a module, or for an attribute path in it, that fairseq imports but the workflow never calls.

    Its attributes are stand-ins too; a call imports the real module and calls the real attribute, so
    fairseq's components behave as before if anything calls them."""

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return Deferred(f"{self.__name__}.{attr}")

    def __call__(self, *args, **kwargs):
        return resolve(self.__name__)(*args, **kwargs)


def resolve(name: str):
    """The object a dotted name stands for: its longest importable module prefix, then attributes."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            target = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            if cut == 1:
                raise
            continue
        for attr in parts[cut:]:
            target = getattr(target, attr)
        return target


class _DeferringFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves stand-ins (:class:`Deferred`) for :data:`FAIRSEQ_DEFERRED`, to the thread that installed it only."""

    def __init__(self):
        self.thread = threading.get_ident()

    def find_spec(self, fullname, path, target=None):
        if fullname in FAIRSEQ_DEFERRED and threading.get_ident() == self.thread:
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        return Deferred(spec.name)

    def exec_module(self, module):
        module.__path__ = []


def _defer_config_store():
    """Until hydra's ConfigStore is first read or written again, its ``store`` only records its calls.

    fairseq's import stores the dataclass config of each of its components there (0.25 s of CPU: OmegaConf turns
    each into a config). Only hydra's config composition reads them: fairseq-train's argument parsing, and the
    loading of a checkpoint saved with argparse arguments. Every read goes through ``ConfigStore._open``, so the
    first read, or the first store after the import, makes the recorded calls in their order first, then puts the
    class's own methods back. Returns the function to call once fairseq is imported."""
    # hydra is fairseq's dependency, imported here only on the way to fairseq (which import_fairseq imports by name
    # too): the modules that import this one but never fairseq do not need it in their environment
    ConfigStore = importlib.import_module("hydra.core.config_store").ConfigStore
    store, open_ = ConfigStore.store, ConfigStore._open
    pending, lock = [], threading.Lock()

    def record(self, *args, **kwargs):
        pending.append((self, args, kwargs))

    def flush():
        with lock:
            while pending:
                self, args, kwargs = pending.pop(0)
                store(self, *args, **kwargs)
            ConfigStore.store, ConfigStore._open = store, open_

    def store_after(self, *args, **kwargs):
        flush()
        return store(self, *args, **kwargs)

    def open_after(self, path):
        flush()
        return open_(self, path)

    def imported():
        ConfigStore.store, ConfigStore._open = store_after, open_after

    ConfigStore.store = record
    return imported


def import_fairseq():
    """fairseq, imported (once) without importing :data:`FAIRSEQ_DEFERRED`, its components' configs stored in hydra
    when hydra first needs them (:func:`_defer_config_store`).

    ``import fairseq`` registers every criterion and task it has, and two of them import scikit-learn and
    scipy.stats: 3.6 s of CPU in every process that loads a model, 1.9 s without them. While fairseq is imported,
    those modules are stand-ins (:class:`Deferred`), which fairseq's modules keep; then they leave
    ``sys.modules`` (and ``scipy``'s attributes), so a later import gets the real packages. Only while the
    process runs no other Python thread, so that no other import can see a stand-in (or the store half-made);
    with other threads running, or with one of those modules already imported, fairseq is imported as usual.
    """
    if "fairseq" in sys.modules:
        return sys.modules["fairseq"]
    if threading.active_count() > 1 or any(name in sys.modules for name in FAIRSEQ_DEFERRED):
        return importlib.import_module("fairseq")
    finder = _DeferringFinder()
    sys.meta_path.insert(0, finder)
    stored = _defer_config_store()
    try:
        return importlib.import_module("fairseq")
    finally:
        stored()
        sys.meta_path.remove(finder)
        for name in FAIRSEQ_DEFERRED:
            if isinstance(sys.modules.get(name), Deferred):
                del sys.modules[name]
            parent, _, child = name.rpartition(".")
            # vars(), not getattr(): a package's __getattr__ (SciPy's) would import the real submodule
            if parent in sys.modules and isinstance(vars(sys.modules[parent]).get(child), Deferred):
                delattr(sys.modules[parent], child)

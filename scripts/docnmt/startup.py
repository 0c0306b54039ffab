"""A CLI process's start, made cheaper: fairseq imported without what the workflow never runs, and the heap frozen
once the frameworks and the model are loaded.

A CLI that has loaded torch and a model calls :func:`freeze_heap` when it runs as a program: the cyclic
garbage collector then no longer walks the hundreds of thousands of objects that importing torch and fairseq or
transformers creates. The package imports fairseq through :func:`import_fairseq`, which leaves out the
scikit-learn and scipy.stats imports of two fairseq components the workflow never runs.
"""

from __future__ import annotations

import gc
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import threading
import types


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

"""The option ledger: which options of the package's CLIs, and which keys of the workflow's config, a run set to a
value other than their default.

It is off unless the environment variable ``DOCNMT_OPTION_LEDGER`` names a folder. Then every CLI built with
:func:`docnmt.manual.argument_parser` notes, each time it parses a command line, the options given with a
non-default value (:func:`record_options`), and appends them where the run finishes with exit status 0
(:func:`settle`): a command line refused or failed does not count. Every Snakemake run that ends with its jobs
done (not a dry run: the Snakefile's ``onsuccess``) appends the config keys whose values differ from the
workflow's ``config.yaml`` (:func:`record_config`, :func:`docnmt.config.changed_keys`). Each process writes a file of its own there, one JSON object a
line.

`make test` sets it for the whole suite and the demo it trains; then ``tests/test_option_coverage.py`` reads every
record and names each option of the console scripts and each key of ``schemas/config.schema.yaml`` that no test
set (docs/development.md, "Tests").
"""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

#: The environment variable that names the ledger's folder; unset: nothing is recorded.
ENV = "DOCNMT_OPTION_LEDGER"


def active() -> bool:
    return bool(os.environ.get(ENV))


def _append(record: dict) -> None:
    folder = os.environ.get(ENV)
    if not folder:
        return
    Path(folder).mkdir(parents=True, exist_ok=True)
    with open(Path(folder) / f"{socket.gethostname()}-{os.getpid()}.jsonl", "a", encoding="utf-8") as handle:
        handle.write(json.dumps(record, sort_keys=True) + "\n")


def record(kind: str, name: str, keys, **extra) -> None:
    """One record: ``kind`` (``cli``, ``config`` or ``doc``), what it is about (a CLI's module, a Snakefile, a page),
    and the ``keys`` set (option strings, config key paths, code blocks)."""
    if active():
        _append({"kind": kind, "name": name, "keys": sorted(set(keys)), **extra})


#: The options parsed by this process's CLI, until it finishes (:func:`settle`).
_pending: list[dict] = []


def settle(finished: bool) -> None:
    """A CLI's run ended: its parsed options go to the ledger where it ``finished`` (exit 0), and are dropped where it
    was refused or failed (:func:`docnmt.textio.cli_errors` calls this)."""
    while _pending:
        found = _pending.pop(0)
        if finished:
            _append(found)


def record_options(module: str, parser, given: dict) -> None:
    """The options of ``module``'s CLI that the command line gave a value other than their default (``given``:
    dest -> value, as parsed), held until the run finishes (:func:`settle`)."""
    declared = getattr(parser, "declared_defaults", {})
    keys = []
    for action in parser._actions:
        if not action.option_strings or action.dest not in given:
            continue
        default = declared.get(action.dest, action.default)
        if given[action.dest] != default:
            keys.append(max(action.option_strings, key=len))
    if active():
        _pending.append({"kind": "cli", "name": module, "keys": sorted(set(keys))})


# ---- config keys ---------------------------------------------------------------------
def changed_keys(config, default, known, path: tuple = ()) -> set[str]:
    """The schema's key paths (``known``: dotted, as :func:`docnmt.config.schema_keys` gives them, a name the user
    chooses written ``<task>``; this module imports nothing of the package, which every CLI imports) whose values differ between ``config`` and ``default``: a key whose path is known is
    compared down to its own keys; any other value is compared whole, at the deepest known path above it."""
    known = {tuple(k.split(".")) if isinstance(k, str) else k for k in known}
    found: set[str] = set()
    if not isinstance(config, dict):
        return found
    base = default if isinstance(default, dict) else {}
    for key, value in config.items():
        step = next((s for s in (str(key), *{p[len(path)] for p in known if len(p) > len(path) and p[:len(path)] ==
                                             path and p[len(path)].startswith("<")}) if path + (s,) in known), None)
        if step is None or value == base.get(key, _MISSING):
            continue
        found.add(".".join(path + (step,)))
        found |= changed_keys(value, base.get(key), known, path + (step,))
    return found


_MISSING = object()


def record_config(snakefile: str, keys) -> None:
    """The config keys a finished workflow run set to other values than ``config.yaml``'s
    (:func:`docnmt.config.changed_keys`)."""
    record("config", str(snakefile), keys)


def read(folder: os.PathLike | str) -> list[dict]:
    """Every record of a ledger's folder."""
    records = []
    for path in sorted(Path(folder).glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                records.append(json.loads(line))
    return records

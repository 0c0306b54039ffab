"""The audit of the option ledger (docnmt.ledger): every option of the console scripts and every key of the config
schema is set to a non-default value by at least one test that runs the code it reaches: a console script run to
its end (exit 0), or a Snakemake run whose jobs finished (not a dry run). Every command, config and Python block of
the README and the manual is read by a test that runs it as written (helpers.doc_blocks). A short allow-list says
why each exception cannot run here.

`make test` runs the suite with DOCNMT_OPTION_LEDGER set (every CLI and workflow run of the suite and of the demo it
trains writes what it set there), then this module alone (``-m audit``) on what they wrote. Elsewhere it skips.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path

import pytest

from helpers import all_doc_blocks

pytestmark = pytest.mark.audit

#: What no test can set to a non-default value or run as written here, and why (at most 10 entries): an option
#: (``SCRIPT --option``), a config key, or a code block of the docs (``PAGE: its first line``).
ALLOWED = {
    "README.md: make demo   # set up .venv, run the offline demo workflow on the CPU, print its tables":
        "what CI runs: .ci/run is `make test`, which runs make demo itself (DEMO_DIR=.test-demo) and checks its "
        "findings before pytest; a test that ran make would set up .venv again and start the suite inside itself",
    "README.md: source .venv/bin/activate                   # once per shell, in the checkout":
        "the paper's three tasks: their corpora download from the internet (a test has none), and they train on a "
        "GPU, a Slurm cluster or in conda environments; the README's offline block after it runs in "
        "tests/test_any_path.py",
    "docs/benchmarks.md: # on the GPU machine, with torch (CUDA) and fairseq installed, from the repository root":
        "bench/gpu-check trains and decodes on CUDA (--fp16): it needs a GPU, which CI lacks",
    "docs/cluster.md: snakemake --profile profiles/slurm --config 'tasks=[news,ted,os]'   # from a login node, in "
    "tmux/screen":
        "the paper's three tasks on a Slurm cluster: downloads from the internet and GPU nodes; tests/test_slurm.py "
        "runs the demo through this profile on a one-node Slurm instead",
    "docs/own-models.md: # a vLLM task on two GPUs (tensor parallelism)":
        "an 8B model over two GPUs: neither is here; tests/test_vllm_workflow.py dry-runs the block as written and "
        "finds gpu=2 on its model rules",
    "docs/cluster.md: source .venv/bin/activate":
        "the paper's three tasks on a GPU workstation (training, data, DAG): their corpora download from the internet "
        "and they train on a GPU",
}


class _Captured(Exception):
    pass


def console_script_options() -> dict[str, list[str]]:
    """Console script -> its options (the longest spelling of each; ``--help`` left out), read from the parsers
    its ``main`` builds: it is called with ``--help`` and stopped at the first parse of a parser that has help."""
    from docnmt import manual

    found: dict[str, list[str]] = {}
    original = manual.ArgumentParser.parse_known_args
    for script, module in manual.COMMANDS.items():
        options: list[str] = []

        def capture(self, args=None, namespace=None):
            for action in self._actions:
                if action.option_strings and action.dest != "help":
                    name = max(action.option_strings, key=len)
                    if name not in options:
                        options.append(name)
            if self.add_help:
                raise _Captured
            return original(self, ["--not-an-option"], namespace)

        manual.ArgumentParser.parse_known_args = capture
        try:
            importlib.import_module(module).main(["--help"])
        except _Captured:
            pass
        finally:
            manual.ArgumentParser.parse_known_args = original
        found[script] = options
    return found


def config_keys() -> list[str]:
    """Every key of the config schema, as docs/configuration.md lists them (docnmt.config.schema_keys)."""
    from docnmt.config import schema_keys

    return [row[0] for row in schema_keys()]


def test_the_enumeration_finds_every_console_script_and_the_schemas_keys():
    options = console_script_options()
    assert set(options) == {"docnmt-translate", "docnmt-check-model", "docnmt-check-config", "docnmt-check-corpus",
                            "docnmt-check-sources", "docnmt-decode", "docnmt-bleu-ter", "docnmt-pronoun-f1", "docnmt-perplexity",
                            "docnmt-cxmi", "docnmt-ctxpro", "docnmt-metricx",
                            "docnmt-compare"}
    assert {"--k", "--template", "--task", "--mbr-seed"} <= set(options["docnmt-translate"] + options["docnmt-decode"])
    assert "--show-taggers" in options["docnmt-pronoun-f1"] and "--markdown" in options["docnmt-check-config"]
    keys = config_keys()
    assert {"task_settings.<task>.models.template", "decode.max_tokens", "sources.<source>.md5"} <= set(keys)


def test_the_allow_list_is_short_and_names_real_options_and_keys():
    from helpers import all_doc_blocks

    options = console_script_options()
    real = {f"{script} {option}" for script, names in options.items() for option in names} | set(config_keys()) | \
        set(all_doc_blocks().values())
    assert len(ALLOWED) <= 10
    assert not set(ALLOWED) - real, f"allow-list entries that are no option or key: {sorted(set(ALLOWED) - real)}"
    assert all(len(reason) > 20 for reason in ALLOWED.values()), "each exception says why"


def test_every_option_and_config_key_is_set_by_a_test_that_runs_it():
    from docnmt import ledger, manual

    folder = os.environ.get(ledger.ENV)
    if not folder or not any(Path(folder).glob("*.jsonl")):
        pytest.skip(f"no option ledger ({ledger.ENV} unset or empty): `make test` writes it with the whole suite, "
                    "then runs this audit")
    records = ledger.read(folder)
    modules = {module: script for script, module in manual.COMMANDS.items()}
    set_options = {f"{modules[r['name']]} {key}" for r in records if r["kind"] == "cli" and r["name"] in modules
                   for key in r["keys"]}
    set_keys = {key for r in records if r["kind"] == "config" for key in r["keys"]}
    run_blocks = {key for r in records if r["kind"] == "doc" for key in r["keys"]}
    missing = [f"{script} {option}" for script, options in console_script_options().items() for option in options
               if f"{script} {option}" not in set_options and f"{script} {option}" not in ALLOWED]
    missing += [key for key in config_keys() if key not in set_keys and key not in ALLOWED]
    missing += [f"the block {name!r}" for key, name in all_doc_blocks().items()
                if key not in run_blocks and name not in ALLOWED]
    assert not missing, (f"{len(missing)} options, config keys and code blocks of the docs that no test sets to a "
                         "non-default value in a run that finishes (a CLI to exit 0, a workflow run, not a dry run) "
                         f"or runs as written: {'; '.join(missing)}")

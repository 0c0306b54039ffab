"""A backend of one's own, added as docs/development.md ("Adding a backend") says: a package outside the checkout whose
``__init__`` registers its description with one line, named by DOCNMT_BACKENDS. With no other edit, docnmt-translate,
docnmt-check-model, the config's validation and a workflow task run on it."""

import json
import os
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from helpers import REPO, run_snakemake, tool_env
from toy_backend_source import DOCS, LEXICON, TOY_INIT, TOY_MODEL, translated


@pytest.fixture(scope="module")
def toy(tmp_path_factory) -> Path:
    """The toy package in a folder of its own (not on the project's path), a model folder and two documents."""
    root = tmp_path_factory.mktemp("toy backend")
    package = root / "plugins" / "toy_backend"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(textwrap.dedent(TOY_INIT), encoding="utf-8")
    (package / "model.py").write_text(textwrap.dedent(TOY_MODEL), encoding="utf-8")
    (root / "lexicon").mkdir()
    (root / "lexicon/lexicon.tsv").write_text("".join(f"{k}\t{v}\n" for k, v in LEXICON.items()), encoding="utf-8")
    (root / "corpus").mkdir()
    for ext, lines in (("en", [s for d in DOCS for s in d]), ("de", [translated(s) for d in DOCS for s in d]),
                       ("docids", [f"doc{n}" for n, d in enumerate(DOCS) for _ in d])):
        (root / f"corpus/test.{ext}").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return root


def plugin_env(toy: Path) -> dict:
    """The environment a user sets: the package's folder on PYTHONPATH and its name in DOCNMT_BACKENDS."""
    env = tool_env()
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(toy / "plugins"), env.get("PYTHONPATH")]))
    env["DOCNMT_BACKENDS"] = "toy_backend"
    return env


@pytest.fixture
def registered(toy, monkeypatch):
    """The toy package imported in this process, as DOCNMT_BACKENDS has the registry import it: its ``__init__``
    registers it; taken out again afterwards."""
    import importlib

    from docnmt.decode.backend import REGISTRY

    monkeypatch.syspath_prepend(str(toy / "plugins"))
    importlib.import_module("toy_backend")
    yield REGISTRY["toy"]
    del REGISTRY["toy"]
    for name in [name for name in sys.modules if name.startswith("toy_backend")]:
        del sys.modules[name]


def test_a_package_named_in_docnmt_backends_that_does_not_import_is_one_line_naming_the_variable(monkeypatch, capsys):
    from docnmt.decode import backend as interface
    from docnmt.decode.translate import main

    monkeypatch.setenv("DOCNMT_BACKENDS", "no_such_backend_package")
    monkeypatch.setattr(interface, "REGISTRY", interface.Registry())
    with pytest.raises(SystemExit) as stopped:
        main(["--help"])
    assert stopped.value.code == 1
    assert capsys.readouterr().err == ("error: DOCNMT_BACKENDS: the backend package 'no_such_backend_package' does not "
                                       "import (ModuleNotFoundError: No module named 'no_such_backend_package')\n")


def translate(*args) -> int:
    from docnmt.decode.translate import main

    return main([str(arg) for arg in args])


def test_a_registered_package_is_a_backend_of_every_cli_with_its_options(toy, registered, tmp_path, capsys):
    from docnmt.decode import checks

    source = tmp_path / "docs.txt"
    source.write_text("\n\n".join("\n".join(d) for d in DOCS) + "\n", encoding="utf-8")
    for strategy, upper in (("sentence-level", False), ("doc-trans", True), ("full-segment", False)):
        out = tmp_path / f"{strategy}.de"
        assert translate("--backend", "toy", "--strategy", strategy, "--input", source, "--sentence-model",
                         toy / "lexicon", "--document-model", toy / "lexicon", "--src-lang", "en", "--tgt-lang", "de",
                         "--beam", "1", "--output", out, *(["--engine-args", "upper=true"] if upper else [])) == 0
        assert out.read_text(encoding="utf-8") == "\n\n".join(
            "\n".join(translated(s, upper) for s in d) for d in DOCS) + "\n", strategy
    with pytest.raises(SystemExit):
        translate("--help")
    help_text = " ".join(capsys.readouterr().out.split())
    assert "toy: a lexicon folder (plain text, word by word)" in help_text and "toy: upper (bool)" in help_text
    report = tmp_path / "check.json"
    assert checks.main(["--model", str(toy / "lexicon"), "--backend", "toy", "--level", "document", "--output", str(report)]) == 0
    assert "a lexicon of 9 words: OK" in capsys.readouterr().out and json.loads(report.read_text())["entries"] == 9
    with pytest.raises(SystemExit):
        translate("--backend", "toy", "--strategy", "sentence-level", "--input", source, "--sentence-model",
                  toy / "lexicon", "--src-lang", "en", "--tgt-lang", "de", "--beam", "1", "--output", tmp_path / "x",
                  "--engine-args", "seed=1")
    assert "expected KEY=VALUE with KEY one of upper (for toy models), found 'seed=1'" in capsys.readouterr().err
    with pytest.raises((SystemExit, ValueError), match="toy models have no beam search|2"):
        translate("--backend", "toy", "--strategy", "doc-trans-beam", "--input", source, "--document-model",
                  toy / "lexicon", "--src-lang", "en", "--tgt-lang", "de", "--output", tmp_path / "y")
    assert "toy models have no beam search" in capsys.readouterr().err


@pytest.mark.workflow
def test_a_workflow_task_runs_on_a_registered_package(toy, tmp_path):
    """The config validates the toy's name and its options block (its own keys only), and the workflow checks its
    models, decodes and scores with it."""
    from docnmt import layout

    models = {"backend": "toy", "k": 2, "engine_args": {"upper": False}, "sentence": {"checkpoint": str(toy / "lexicon")},
              "document": {"checkpoint": str(toy / "lexicon")}}
    task = {"description": "a toy backend", "src": "en", "tgt": "de", "corpus": {"type": "prepared", "dir": str(toy / "corpus")},
            "models": models}
    config = tmp_path / "toy.yaml"
    config.write_text(yaml.safe_dump({"tasks": ["mine"], "strategies": ["sentence-level", "doc-trans", "full-segment"],
                                      "beam": 1, "docmbr": {"strategies": []}, "task_settings": {"mine": task}}))
    bleu = layout.score_file("mine", "test", "bleu_ter")
    run_snakemake(tmp_path, bleu, "--profile", str(REPO / "profiles/cpu"), "--cores", "1", "--configfile", str(config),
                  env=plugin_env(toy))
    for strategy in ("sentence-level", "doc-trans", "full-segment"):
        decoded = (tmp_path / layout.decode_file("mine", "test", strategy, "txt")).read_text(encoding="utf-8")
        assert decoded.splitlines() == [translated(s) for d in DOCS for s in d], strategy
    systems = json.loads((tmp_path / bleu).read_text())["systems"]
    assert sorted(systems) == ["doc-trans", "full-segment", "sentence-level"]
    assert all(s["TER"]["score"] == 0.0 and s["d-BLEU"]["score"] == 100.0 for s in systems.values()), systems
    # an option of another backend in the toy's block is named as not the toy's
    models["engine_args"] = {"tensor_parallel_size": 2}
    config.write_text(yaml.safe_dump({"tasks": ["mine"], "task_settings": {"mine": task}}))
    result = run_snakemake(tmp_path, bleu, "--cores", "1", "--configfile", str(config), "-n", env=plugin_env(toy),
                           check=False)
    assert result.returncode != 0
    assert ("'task_settings.mine.models.engine_args.tensor_parallel_size': not an option of toy models; theirs: upper"
            in result.stdout + result.stderr), (result.stdout + result.stderr)[-3000:]

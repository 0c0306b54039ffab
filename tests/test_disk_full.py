"""A full disk: preprocessing and decoding steps fail with one line naming the output, and leave neither a
partial output nor a temporary file. Runs on a small tmpfs (mounting it needs root; skipped otherwise)."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import REPO, tool_env

from docnmt.textio import DiskFullError, atomic_outputs, atomic_write

MESSAGE = "no space left on device while writing; the partial output was removed, free some space and rerun"


def env() -> dict:
    return dict(tool_env(), OMP_NUM_THREADS="1")


def run(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True, env=env(), timeout=600)
    if check:
        assert result.returncode == 0, f"{args[0]} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return result


@pytest.fixture
def small_fs(tmp_path):
    """A 256 KiB tmpfs, unmounted afterwards; skipped where it cannot be mounted."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs for the full-disk tests needs root (as in CI)")
    mount = tmp_path / "small fs"
    mount.mkdir()
    result = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mount)], capture_output=True, text=True)
    if result.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {result.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=True)


def fill(folder: Path, leave: int = 0) -> None:
    """Fill ``folder``'s file system up to ``leave`` bytes."""
    with open(folder / "filler", "wb") as handle:
        chunk = b"\0" * 4096
        try:
            while os.statvfs(folder).f_bavail * os.statvfs(folder).f_frsize > leave:
                handle.write(chunk)
                handle.flush()
        except OSError:
            pass


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*") if p.name != "filler")


def random_text(path: Path, lines: int, seed: int = 1) -> Path:
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(300)] + ["the", "it", "a", ",", "."]
    path.write_text("".join(" ".join(rng.choice(words) for _ in range(12)) + "\n" for _ in range(lines)), encoding="utf-8")
    return path


def test_atomic_write_on_a_full_disk_names_the_output_and_leaves_nothing(small_fs):
    target = small_fs / "out.txt"
    with pytest.raises(DiskFullError) as err:
        with atomic_write(target) as handle:
            for _ in range(100):
                handle.write("x" * 10000)
    assert str(err.value) == f"{target}: {MESSAGE}"
    assert leftovers(small_fs) == []


def test_atomic_outputs_on_a_full_disk_leave_no_output_and_no_temporary(small_fs):
    targets = [small_fs / f"out.{ext}" for ext in ("en", "de", "docids")]
    with pytest.raises(DiskFullError) as err:
        with atomic_outputs(targets) as handles:
            for _ in range(40):
                for handle in handles:
                    handle.write("y" * 10000)
    assert str(targets[0]) in str(err.value) and "no space left" in str(err.value)
    assert leftovers(small_fs) == []


def test_tokenize_cli_on_a_full_disk_is_one_line_and_no_output(tmp_path, small_fs):
    text = random_text(tmp_path / "big.en", 8000)
    output = small_fs / "shards" / "train.en.1-of-1.tok"
    result = run("docnmt.preprocess.tokenize", "tok", "--lang", "en", "--input", str(text), "--output", str(output), check=False)
    assert result.returncode == 1
    assert result.stderr.splitlines() == [f"error: {output}: {MESSAGE}"], result.stderr
    assert leftovers(small_fs) == ["shards"], "the folder it made, empty"


@pytest.mark.workflow
def test_binarize_on_a_full_disk_names_the_folder_and_removes_fairseqs_partial_output(tmp_path, small_fs):
    for split in ("train", "valid", "test"):
        for lang in ("en", "de"):
            random_text(tmp_path / f"{split}.{lang}", 4000, seed=len(split) + len(lang))
    run("docnmt.preprocess.dictionary", "--input", str(tmp_path / "train.en"), str(tmp_path / "train.de"),
        "--output", str(tmp_path / "dict.txt"))
    destdir = small_fs / "bin" / "sentence"
    result = run("docnmt.preprocess.binarize", "--src", "en", "--tgt", "de", *[
        a for split in ("train", "valid", "test") for a in (f"--{split}pref", str(tmp_path / split))
    ], "--dict", str(tmp_path / "dict.txt"), "--destdir", str(destdir), "--workers", "2", check=False)
    assert result.returncode == 1
    assert result.stderr.splitlines()[-1] == f"error: {destdir}: {MESSAGE}", result.stderr[-2000:]
    assert leftovers(small_fs) == ["bin"], "neither the destination nor fairseq's temporary folder"


@pytest.mark.workflow
def test_decode_on_a_full_disk_is_one_line_and_leaves_no_hypotheses(tmp_path, small_fs, toy):
    """The session's toy model (conftest ``toy``, trained once) decodes its test split onto the full disk."""
    root, model, _ = toy
    txt = root / "txt"
    docids = tmp_path / "test.docids"
    lines = len((txt / "test.en").read_text(encoding="utf-8").splitlines())
    docids.write_text("".join(f"d{i // 4}\n" for i in range(lines)), encoding="utf-8")
    out = small_fs / "decode" / "test"
    out.mkdir(parents=True)
    fill(small_fs)
    result = run("docnmt.decode.cli", "--strategy", "sentence-level", "--model", str(model), "--data", str(root / "bin"),
                 "--src", str(txt / "test.en"), "--docids", str(docids), "--beam", "2", "--tgt-lang", "de",
                 "--output-bpe", str(out / "sentence-level.bpe"), "--output", str(out / "sentence-level.txt"),
                 "--sidecar", str(out / "sentence-level.json"), check=False)
    assert result.returncode == 1
    names = ", ".join(str(out / f"sentence-level.{ext}") for ext in ("bpe", "txt", "json"))
    assert result.stderr.splitlines()[-1] == f"error: {names}: {MESSAGE}", result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    assert leftovers(small_fs) == ["decode", "test"], "no hypothesis file, no temporary"
    # the resume journal met the full disk first: given up in one line, the decode went on to its outputs
    assert (f"{out / 'sentence-level.journal'}: no space left on the device for the resume journal: decoding on "
            "without it") in result.stdout

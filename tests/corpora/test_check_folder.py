"""docnmt-check-corpus (docnmt.corpora.check): a corpus folder checked split by split; each problem is one error
line naming the file (and line)."""

import subprocess
import sys
from pathlib import Path

import pytest

from docnmt.corpora.check import check_folder, main
from docnmt.textio import InputError


def write_split(folder: Path, split: str, docids=("d1", "d1", "d2")) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{split}.en").write_text("One.\nTwo.\nThree.\n", encoding="utf-8")
    (folder / f"{split}.fr").write_text("Un.\nDeux.\nTrois.\n", encoding="utf-8")
    (folder / f"{split}.docids").write_text("".join(d + "\n" for d in docids), encoding="utf-8")


def test_every_split_found_is_counted(tmp_path):
    write_split(tmp_path, "train")
    write_split(tmp_path, "test")
    assert check_folder(tmp_path, "en", "fr") == {"train": {"sentences": 3, "documents": 2},
                                                  "test": {"sentences": 3, "documents": 2}}


def test_a_split_named_with_splits_must_be_there(tmp_path):
    write_split(tmp_path, "test")
    with pytest.raises(InputError, match=r"valid\.en: expected this file of split 'valid' \(the split is named"):
        check_folder(tmp_path, "en", "fr", ["test", "valid"])


def test_a_split_with_a_missing_file_and_an_empty_folder_are_named(tmp_path):
    write_split(tmp_path, "train")
    (tmp_path / "train.fr").unlink()
    with pytest.raises(InputError, match=r"train\.fr: expected this file of split 'train'"):
        check_folder(tmp_path, "en", "fr")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match=r"empty: expected at least one split"):
        check_folder(tmp_path / "empty", "en", "fr")
    with pytest.raises(InputError, match=r"no-such: expected a corpus folder"):
        check_folder(tmp_path / "no-such", "en", "fr")


def test_a_document_split_in_two_blocks_is_named_with_its_line(tmp_path):
    write_split(tmp_path, "test", docids=("d1", "d2", "d1"))
    with pytest.raises(InputError, match=r"test\.docids:3: document 'd1' continues here"):
        check_folder(tmp_path, "en", "fr")


def test_the_command_prints_the_counts_or_one_error_line(tmp_path, capsys):
    write_split(tmp_path, "test")
    assert main([str(tmp_path), "--src", "en", "--tgt", "fr"]) == 0
    assert "test: 3 sentences in 2 documents" in capsys.readouterr().out
    (tmp_path / "test.docids").write_text("d1\nd1\n", encoding="utf-8")
    result = subprocess.run([str(Path(sys.executable).parent / "docnmt-check-corpus"), str(tmp_path), "--src", "en",
                             "--tgt", "fr"], capture_output=True, text=True)
    assert result.returncode == 1 and result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith(f"error: {tmp_path / 'test.docids'}") and "expected 3 lines" in result.stderr


def test_splits_checks_only_the_splits_named(tmp_path, capsys):
    """--splits test checks and counts the test split alone: a broken train split beside it (its document ids one
    line short) is not read, where the command without --splits checks it and fails naming it."""
    write_split(tmp_path, "test")
    write_split(tmp_path, "train", docids=("d1", "d1"))
    assert main([str(tmp_path), "--src", "en", "--tgt", "fr", "--splits", "test"]) == 0
    assert capsys.readouterr().out == f"test: 3 sentences in 2 documents\n{tmp_path}: valid (test)\n"
    with pytest.raises(SystemExit):
        main([str(tmp_path), "--src", "en", "--tgt", "fr"])
    assert f"error: {tmp_path / 'train.docids'}" in capsys.readouterr().err

"""The resume journal (docnmt.decode.journal) as a file, without a decode: what it refuses, keeps and replaces."""

import json

import pytest

from docnmt.decode.journal import FORMAT, Journal
from docnmt.decode.requests import Hypothesis
from docnmt.textio import InputError

KEY = {"strategy": "doc-trans", "inputs": {}, "settings": {"beam": 1}, "version": "x"}


@pytest.mark.parametrize("content", [b"my notes\n", b'{"not": "a journal"}\n', b"\x00\x01binary"])
def test_a_file_that_is_no_journal_is_refused_and_left_as_it_is(tmp_path, content):
    """Issue 57, fault 4: a file given as --journal by mistake was truncated without a word."""
    path = tmp_path / "notes.txt"
    path.write_bytes(content)
    with pytest.raises(InputError, match=rf"notes.txt: expected a decode's resume journal \({FORMAT}\) or no "
                                         r"file, found another file: left as it is"):
        Journal(path, KEY)
    assert path.read_bytes() == content


def test_an_empty_file_and_a_journal_whose_first_line_was_cut_short_are_journals(tmp_path):
    for content in (b"", b'{"format": "docnmt-dec'):
        path = tmp_path / "cut.journal"
        path.write_bytes(content)
        Journal(path, KEY)
        assert json.loads(path.read_text(encoding="utf-8"))["key"] == KEY


def test_a_journal_of_the_same_key_is_read_and_of_another_replaced(tmp_path, capsys):
    path = tmp_path / "decode.journal"
    Journal(path, KEY).append(1, 0, "d", [[Hypothesis([1, 2], -0.5, -1.0)]], {"forward_calls": 3}, 0.1)
    again = Journal(path, KEY)
    assert again.lookup(1, 0, "d")["hyps"] == [[[[1, 2], -0.5, -1.0, True]]]
    assert "1 chunks (1 requests) done before" in capsys.readouterr().out
    Journal(path, {**KEY, "settings": {"beam": 4}})
    assert "written for another decode (beam differ): starting afresh" in capsys.readouterr().out


def test_the_model_is_keyed_by_a_fingerprint_of_its_model_files_read_in_part(tmp_path, monkeypatch):
    """Issue 57, fault 5: the key hashed every file of a model folder, all of each (tens of GB for an LLM, at each
    decode's start), and a stray file in the folder changed it. Now: the model's files, a large one by its size
    and its first and last MiB."""
    import builtins

    from docnmt.decode.journal import decode_key
    from docnmt.textio import FINGERPRINT_BYTES

    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text('{"model_type": "llama"}', encoding="utf-8")
    weights = folder / "model.safetensors"
    weights.write_bytes(bytes(range(256)) * (40 * FINGERPRINT_BYTES // 256))
    key = decode_key("doc-trans", {"model": folder}, {})
    read = []
    opened = builtins.open

    def counting(file, mode="r", *args, **kwargs):
        handle = opened(file, mode, *args, **kwargs)
        if "b" in mode and str(file).endswith(".safetensors"):
            original = handle.read
            handle.read = lambda n=-1: read.append(len(data := original(n))) or data
        return handle

    monkeypatch.setattr(builtins, "open", counting)
    assert decode_key("doc-trans", {"model": folder}, {}) == key
    monkeypatch.setattr(builtins, "open", opened)
    assert sum(read) == 2 * FINGERPRINT_BYTES, "the 40 MiB weights: their first and last MiB only"
    (folder / "README.md").write_text("notes", encoding="utf-8")
    (folder / ".cache").mkdir()
    (folder / ".cache" / "x.lock").write_text("", encoding="utf-8")
    assert decode_key("doc-trans", {"model": folder}, {}) == key, "a stray file changes nothing"
    for change in (lambda: (folder / "config.json").write_text('{"model_type": "qwen2"}', encoding="utf-8"),
                   lambda: weights.write_bytes(weights.read_bytes()[:-1] + b"\x01"),
                   lambda: weights.write_bytes(weights.read_bytes() + b"\x00")):
        change()
        changed = decode_key("doc-trans", {"model": folder}, {})
        assert changed != key
        key = changed
    checkpoint = tmp_path / "checkpoint_best.pt"
    checkpoint.write_bytes(b"fairseq")
    assert decode_key("doc-trans", {"model": checkpoint}, {})["inputs"]["model"] != \
        decode_key("doc-trans", {"model": tmp_path / "other.pt"}, {})["inputs"]["model"]

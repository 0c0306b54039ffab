"""The resume journal (docnmt.decode.journal) as a file, without a decode: what it refuses, keeps and replaces."""

import json

import pytest

from docnmt.decode.journal import FORMAT, Journal
from docnmt.interface import Hypothesis
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

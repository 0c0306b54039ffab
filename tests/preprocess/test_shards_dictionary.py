"""Sharding round trip, and the joined dictionary."""

import pytest

from docnmt.preprocess import dictionary, shards
from docnmt.textio import InputError


def test_split_then_gather_restores_the_file(tmp_path):
    text = "".join(f"line {i}\n" for i in range(11))
    (tmp_path / "in").write_text(text, encoding="utf-8")
    outs = [tmp_path / f"s{i}" for i in range(4)]
    sizes = shards.split(tmp_path / "in", outs)
    assert sizes == [3, 3, 3, 2]
    shards.gather(outs, tmp_path / "out")
    assert (tmp_path / "out").read_text(encoding="utf-8") == text


def test_more_shards_than_lines_gives_empty_shards(tmp_path):
    (tmp_path / "in").write_text("a\n", encoding="utf-8")
    outs = [tmp_path / f"s{i}" for i in range(3)]
    assert shards.split(tmp_path / "in", outs) == [1, 0, 0]
    shards.gather(outs, tmp_path / "out")
    assert (tmp_path / "out").read_text() == "a\n"


def test_dictionary_is_joined_sorted_and_has_sep(tmp_path):
    (tmp_path / "a.en").write_text("the cat@@ s\nthe dog\n", encoding="utf-8")
    (tmp_path / "a.de").write_text("die Katze\n", encoding="utf-8")
    entries = dictionary.build([tmp_path / "a.en", tmp_path / "a.de"])
    tokens = [t for t, _ in entries]
    assert "<sep>" in tokens and "the" in tokens and "Katze" in tokens
    counts = [c for _, c in entries]
    assert counts == sorted(counts, reverse=True)
    assert dict(entries)["the"] == 2


def test_dictionary_rejects_fairseq_reserved_symbols(tmp_path):
    (tmp_path / "a").write_text("ok\nbad </s> here\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        dictionary.build([tmp_path / "a"])
    assert err.value.line == 2

"""The common document format: reading, validation errors that name file and line."""

import json

import pytest

from docnmt.corpora import corpus
from docnmt.corpora.corpus import Document, read_split, write_split
from docnmt.textio import InputError


def write(tmp_path, src, tgt, ids):
    paths = [tmp_path / "x.en", tmp_path / "x.de", tmp_path / "x.docids"]
    for path, lines in zip(paths, (src, tgt, ids)):
        path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return paths


def test_read_split_groups_consecutive_lines_into_documents(tmp_path):
    paths = write(tmp_path, ["a", "b", "c"], ["A", "B", "C"], ["d1", "d1", "d2"])
    docs = read_split(*paths)
    assert [(d.docid, d.src, d.tgt) for d in docs] == [("d1", ["a", "b"], ["A", "B"]), ("d2", ["c"], ["C"])]


def test_write_then_read_round_trips(tmp_path):
    docs = [Document("x", ["s1", "s2"], ["t1", "t2"]), Document("y", ["s3"], ["t3"])]
    paths = [tmp_path / "a.en", tmp_path / "a.de", tmp_path / "a.docids"]
    write_split(docs, *paths)
    assert read_split(*paths) == docs


def test_different_line_counts_name_the_file_and_line(tmp_path):
    paths = write(tmp_path, ["a", "b", "c"], ["A", "B"], ["d", "d", "d"])
    with pytest.raises(InputError) as err:
        read_split(*paths)
    assert err.value.path == str(paths[1]) and err.value.line == 3, str(err.value)
    assert "expected 3 lines" in str(err.value)


def test_missing_docids_file_is_named(tmp_path):
    paths = write(tmp_path, ["a"], ["A"], ["d"])
    paths[2].unlink()
    with pytest.raises(InputError, match="x.docids: file not found"):
        read_split(*paths)


def test_misaligned_docids_with_too_few_lines(tmp_path):
    paths = write(tmp_path, ["a", "b"], ["A", "B"], ["d"])
    with pytest.raises(InputError) as err:
        read_split(*paths)
    assert err.value.path.endswith("x.docids") and err.value.line == 2


def test_non_contiguous_document_is_an_error(tmp_path):
    paths = write(tmp_path, ["a", "b", "c"], ["A", "B", "C"], ["d1", "d2", "d1"])
    with pytest.raises(InputError) as err:
        read_split(*paths)
    assert err.value.line == 3 and "contiguous" in str(err.value)


def test_empty_document_is_an_error(tmp_path):
    paths = write(tmp_path, ["a", "", " "], ["A", "", ""], ["d1", "d2", "d2"])
    with pytest.raises(InputError) as err:
        read_split(*paths)
    assert err.value.line == 2 and "'d2' is empty" in str(err.value)


def test_empty_docid_line_is_an_error(tmp_path):
    paths = write(tmp_path, ["a", "b"], ["A", "B"], ["d1", ""])
    with pytest.raises(InputError) as err:
        read_split(*paths)
    assert err.value.line == 2


def test_sep_in_raw_text_is_an_error(tmp_path):
    paths = write(tmp_path, ["a", "b <sep> c"], ["A", "B"], ["d", "d"])
    with pytest.raises(InputError) as err:
        read_split(*paths)
    assert err.value.path == str(paths[0]) and err.value.line == 2 and "<sep>" in str(err.value)


def test_invalid_utf8_names_the_line(tmp_path):
    paths = write(tmp_path, ["a", "b"], ["A", "B"], ["d", "d"])
    paths[1].write_bytes(b"A\nB \xff\n")
    with pytest.raises(InputError) as err:
        read_split(*paths)
    assert err.value.line == 2 and "UTF-8" in str(err.value)


def test_check_cli_writes_stats_and_exits_nonzero_on_bad_input(tmp_path, capsys):
    paths = write(tmp_path, ["a", "b", "c"], ["A", "B", "C"], ["d1", "d1", "d2"])
    stats = tmp_path / "stats.json"
    corpus.main(["check", "--src", str(paths[0]), "--tgt", str(paths[1]), "--docids", str(paths[2]), "--stats", str(stats)])
    assert json.loads(stats.read_text()) == {"sentences": 3, "documents": 2}
    paths[1].write_text("A\n", encoding="utf-8")
    stats.unlink()
    with pytest.raises(SystemExit) as exit_:
        corpus.main(["check", "--src", str(paths[0]), "--tgt", str(paths[1]), "--docids", str(paths[2]), "--stats", str(stats)])
    assert exit_.value.code == 1
    assert "x.de:2:" in capsys.readouterr().err
    assert not stats.exists(), "no output may be left behind on bad input"


def test_copy_cli_copies_byte_for_byte_and_names_a_missing_input(tmp_path, capsys):
    source = tmp_path / "mine" / "train.en"
    source.parent.mkdir()
    source.write_bytes("Grüße\r\nno final newline".encode("utf-8"))
    output = tmp_path / "corpus" / "train.en"
    output.parent.mkdir()
    assert corpus.main(["copy", "--input", str(source), "--output", str(output)]) == 0
    assert output.read_bytes() == source.read_bytes()
    with pytest.raises(SystemExit) as exit_:
        corpus.main(["copy", "--input", str(tmp_path / "missing.en"), "--output", str(tmp_path / "corpus" / "x.en")])
    assert exit_.value.code == 1
    assert "missing.en: file not found" in capsys.readouterr().err
    assert sorted(p.name for p in output.parent.iterdir()) == ["train.en"], "no output may be left behind"

"""k-sentence windows: document boundaries, counts, first-sentence windows."""

import pytest

from docnmt.preprocess import windows
from docnmt.preprocess.windows import make_windows, split, window_bounds


def test_one_window_per_sentence_and_first_sentences_get_shorter_windows():
    out = make_windows(["a", "b", "c", "d"], ["x"] * 4, k=3)
    assert out == ["a", "a <sep> b", "a <sep> b <sep> c", "b <sep> c <sep> d"]


def test_windows_never_cross_a_document_boundary():
    out = make_windows(["a", "b", "c", "d", "e"], ["x", "x", "y", "y", "y"], k=3)
    assert out == ["a", "a <sep> b", "c", "c <sep> d", "c <sep> d <sep> e"]


def test_one_sentence_documents_stand_alone():
    assert make_windows(["a", "b", "c"], ["x", "y", "z"], k=3) == ["a", "b", "c"]


def test_k1_gives_the_sentences_themselves():
    assert make_windows(["a", "b"], ["x", "x"], k=1) == ["a", "b"]


def test_window_counts_per_length():
    bounds = window_bounds(["d"] * 6 + ["e"] * 2, k=3)
    lengths = [b - a for a, b in bounds]
    assert lengths == [1, 2, 3, 3, 3, 3, 1, 2]


def test_split_inverts_join():
    assert split("a b <sep> c <sep> d e") == ["a b", "c", "d e"]


def test_k_below_one_is_rejected():
    with pytest.raises(ValueError):
        window_bounds(["x"], 0)


def test_cli_rejects_text_that_already_has_sep(tmp_path):
    (tmp_path / "t").write_text("a\nb <sep> c\n", encoding="utf-8")
    (tmp_path / "ids").write_text("d\nd\n", encoding="utf-8")
    with pytest.raises(SystemExit):
        windows.main(["--k", "3", "--docids", str(tmp_path / "ids"), "--input", str(tmp_path / "t"), "--output", str(tmp_path / "o")])
    assert not (tmp_path / "o").exists()


def test_cli_writes_windows(tmp_path):
    (tmp_path / "t").write_text("a\nb\nc\n", encoding="utf-8")
    (tmp_path / "ids").write_text("d\nd\ne\n", encoding="utf-8")
    windows.main(["--k", "2", "--docids", str(tmp_path / "ids"), "--input", str(tmp_path / "t"), "--output", str(tmp_path / "o")])
    assert (tmp_path / "o").read_text().splitlines() == ["a", "a <sep> b", "c"]


def test_streamed_cli_equals_make_windows_and_rejects_mismatched_docids(tmp_path):
    import random

    rng = random.Random(3)
    sentences = [" ".join(rng.choice("abcde") for _ in range(rng.randint(0, 4))) for _ in range(400)]
    docids = []
    while len(docids) < 400:
        docids += [f"doc{len(docids)}"] * rng.randint(1, 7)
    docids = docids[:400]
    (tmp_path / "t").write_text("".join(s + "\n" for s in sentences), encoding="utf-8")
    (tmp_path / "ids").write_text("".join(d + "\n" for d in docids), encoding="utf-8")
    for k in (1, 3):
        windows.main(["--k", str(k), "--docids", str(tmp_path / "ids"), "--input", str(tmp_path / "t"),
                      "--output", str(tmp_path / "o")])
        assert (tmp_path / "o").read_text(encoding="utf-8").splitlines() == windows.make_windows(sentences, docids, k)
    (tmp_path / "ids").write_text("".join(d + "\n" for d in docids[:-1]), encoding="utf-8")
    (tmp_path / "o").unlink()
    with pytest.raises(SystemExit):
        windows.main(["--k", "3", "--docids", str(tmp_path / "ids"), "--input", str(tmp_path / "t"), "--output", str(tmp_path / "o")])
    assert not (tmp_path / "o").exists()

"""The data-statistics table (the paper's Table 5): rows, formatting, bad input."""

import csv
import json

import pytest

from docnmt.corpora import stats
from docnmt.textio import InputError

# The paper's Table 5 (NEWS and OS), as exact counts that round to its cells.
PAPER = {
    ("NEWS", "train"): (330_000, 8_500),
    ("NEWS", "valid"): (2_200, 81),
    ("NEWS", "test"): (3_000, 122),
    ("OS", "train"): (22_500_000, 29_900),
    ("OS", "valid"): (3_500, 5),
    ("OS", "test"): (3_800, 5),
}


def write_stats(path, sentences, documents):
    path.write_text(json.dumps({"sentences": sentences, "documents": documents}), encoding="utf-8")
    return path


def contrapro_report(path, kept):
    """A report as docnmt.corpora.contrapro writes it (only the fields stats reads matter)."""
    report = {"examples": kept + 3, "kept": kept, "missing_document": 3, "segment_out_of_range": 0,
              "source_mismatch": 0, "lines": 5 * kept}
    path.write_text(json.dumps(report), encoding="utf-8")
    return path


@pytest.fixture
def inputs(tmp_path):
    """Inputs given out of order: rows must still come in the paper's order."""
    specs = []
    for task, split in [("NEWS", "test"), ("NEWS", "train"), ("NEWS", "valid"),
                        ("OS", "valid"), ("OS", "train"), ("OS", "test")]:
        path = write_stats(tmp_path / f"{task}.{split}.json", *PAPER[task, split])
        specs.append(f"{task}:{split}:{path}")
    specs.insert(2, f"NEWS:contrapro:{contrapro_report(tmp_path / 'news.cp.json', 12_000)}")
    specs.append(f"OS:contrapro:{contrapro_report(tmp_path / 'os.cp.json', 11_995)}")
    return specs


@pytest.mark.parametrize(
    "count, text",
    [(0, "0"), (81, "81"), (999, "999"), (1000, "1k"), (1138, "1.1k"), (2200, "2.2k"), (3000, "3k"),
     (8500, "8.5k"), (12_000, "12k"), (29_900, "29.9k"), (232_000, "232k"), (330_000, "330k"),
     (22_500_000, "22.5M"), (2250, "2.3k"), (99_960, "100k"), (999_950, "1M"), (3_000_000_000, "3B")],
)
def test_human_readable_counts_follow_the_paper(count, text):
    assert stats.human(count) == text, f"{count} should read {text!r}, got {stats.human(count)!r}"


def test_rows_are_in_the_papers_order_with_exact_counts(tmp_path, inputs):
    md, out_csv = tmp_path / "t.md", tmp_path / "t.csv"
    stats.main(["--input", *inputs, "--markdown", str(md), "--csv", str(out_csv)])
    with open(out_csv, encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == ["task", "dataset", "sentences", "documents"]
    assert rows[1:] == [
        ["NEWS", "train", "330000", "8500"],
        ["NEWS", "valid", "2200", "81"],
        ["NEWS", "test", "3000", "122"],
        ["NEWS", "ContraPro", "12000", "12000"],
        ["OS", "train", "22500000", "29900"],
        ["OS", "valid", "3500", "5"],
        ["OS", "test", "3800", "5"],
        ["OS", "ContraPro", "11995", "11995"],
    ], "rows must be ordered train, valid, test, ContraPro within each task, tasks as given"


def test_markdown_shows_the_papers_style_and_the_exact_counts(tmp_path, inputs):
    md, out_csv = tmp_path / "t.md", tmp_path / "t.csv"
    stats.main(["--input", *inputs, "--markdown", str(md), "--csv", str(out_csv)])
    text = md.read_text(encoding="utf-8")
    assert "| task | dataset | # sent. | # doc. |" in text
    assert "| NEWS | train | 330k (330,000) | 8.5k (8,500) |" in text
    assert "|  | valid | 2.2k (2,200) | 81 (81) |" in text, "the task is named on its first row only"
    assert "| OS | train | 22.5M (22,500,000) | 29.9k (29,900) |" in text
    assert "|  | ContraPro | 12k (11,995) | 12k (11,995) |" in text


def test_contrapro_report_counts_kept_examples_as_sentences_and_documents(tmp_path):
    assert stats.read_stats(contrapro_report(tmp_path / "r.json", 42)) == (42, 42)


def test_unknown_splits_follow_the_known_ones(tmp_path):
    a = write_stats(tmp_path / "a.json", 10, 1)
    b = write_stats(tmp_path / "b.json", 20, 2)
    rows = stats.build_rows([("T", "dev2", a), ("T", "train", b)])
    assert [r.dataset for r in rows] == ["train", "dev2"]


@pytest.mark.parametrize(
    "content, expected",
    [
        (None, "file not found"),
        ("{not json", "syntax error"),
        ("[1, 2]", "expected a JSON object"),
        ('{"sentences": 3}', "'documents'"),
        ('{"sentences": -1, "documents": 1}', "non-negative integer"),
        ('{"sentences": "3", "documents": 1}', "non-negative integer"),
        ('{"kept": 2.5}', "'kept'"),
    ],
)
def test_bad_stats_file_is_an_error_naming_it(tmp_path, content, expected):
    path = tmp_path / "bad.stats.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError) as err:
        stats.read_stats(path)
    assert err.value.path == str(path) and expected in str(err.value), str(err.value)


def test_cli_bad_stats_exits_nonzero_and_writes_nothing(tmp_path, capsys):
    good = write_stats(tmp_path / "good.json", 10, 1)
    bad = tmp_path / "bad.json"
    bad.write_text('{"sentences": 1}', encoding="utf-8")
    md, out_csv = tmp_path / "t.md", tmp_path / "t.csv"
    with pytest.raises(SystemExit) as exit_info:
        stats.main(["--input", f"T:train:{good}", f"T:test:{bad}", "--markdown", str(md), "--csv", str(out_csv)])
    assert exit_info.value.code == 1
    assert str(bad) in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.json", "good.json"], "no output on error"


def test_malformed_input_spec_and_duplicates_are_usage_errors(tmp_path):
    good = write_stats(tmp_path / "good.json", 10, 1)
    for specs in (["T:train"], [f"T:train:{good}", f"T:train:{good}"]):
        with pytest.raises(SystemExit) as exit_info:
            stats.main(["--input", *specs, "--markdown", str(tmp_path / "m"), "--csv", str(tmp_path / "c")])
        assert exit_info.value.code == 2


def test_path_with_colons_is_kept_whole(tmp_path):
    assert stats.parse_input("OS:test:C:/data/test.stats.json") == ("OS", "test", stats.Path("C:/data/test.stats.json"))


def test_cli_also_writes_latex_in_the_papers_style(tmp_path):
    from docnmt.corpora import stats

    path = tmp_path / "train.stats.json"
    path.write_text(json.dumps({"sentences": 330000, "documents": 8500}))
    stats.main(["--input", f"news:train:{path}", "--markdown", str(tmp_path / "t.md"), "--csv", str(tmp_path / "t.csv"),
                "--latex", str(tmp_path / "t.tex")])
    tex = (tmp_path / "t.tex").read_text()
    assert "news & train & 330k & 8.5k \\\\" in tex and "\\label{tab:data-statistics}" in tex


def test_markdown_and_latex_carry_the_papers_number_and_caption():
    rows = [stats.Row("news", "train", 330_000, 8_500)]
    assert stats.to_markdown(rows).startswith(
        "**Table 5: data statistics for the different document-level translation tasks**\n")
    assert "Table 5: data statistics for the different document-level translation tasks" in stats.to_latex(rows)

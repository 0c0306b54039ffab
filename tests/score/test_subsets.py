"""Evaluation subsets: a per-line subsets file read by the scorers, pronoun F1 per subset, and the table's note."""

import json
import subprocess

import pytest

from helpers import REPO, tool_env
from docnmt.score import evalset, pronouns, tables
from docnmt.textio import write_lines
from test_pronouns import T

SRC = ["I bought a car.", "It was cheap.", "I like it.", "Hello Tom!", "It is red."]
REF = ["Ich habe ein Auto gekauft.", "Es war billig.", "Ich mag es.", "Hallo Tom!", "Er ist rot."]
SUBSETS = ["", "ambiguous-antecedent", "ambiguous-antecedent other", "", "other"]


def eval_files(tmp_path, subsets=SUBSETS, **systems):
    write_lines(tmp_path / "src.en", SRC)
    write_lines(tmp_path / "ref.de", REF)
    write_lines(tmp_path / "test.subsets", subsets)
    args = ["--source", str(tmp_path / "src.en"), "--reference", str(tmp_path / "ref.de")]
    for name, hyps in systems.items():
        write_lines(tmp_path / f"{name}.txt", hyps)
        args += ["--system", f"{name}={tmp_path / f'{name}.txt'}"]
    return args


def test_subsets_file_gives_each_subsets_lines_in_file_order(tmp_path):
    eval_files(tmp_path)
    data = evalset.load(tmp_path / "src.en", tmp_path / "ref.de", {}, subsets=tmp_path / "test.subsets")
    assert data.subsets == {"ambiguous-antecedent": [1, 2], "other": [2, 4]}
    assert data.subset("other", data.reference) == ["Ich mag es.", "Er ist rot."]
    assert evalset.load(tmp_path / "src.en", tmp_path / "ref.de", {}).subsets == {}


def test_subsets_follow_a_selection_of_lines(tmp_path):
    eval_files(tmp_path)
    select = tmp_path / "examples.jsonl"
    write_lines(select, [json.dumps({"line": 2}), json.dumps({"line": 3})])
    data = evalset.load(tmp_path / "src.en", tmp_path / "ref.de", {}, select, tmp_path / "test.subsets")
    assert data.subsets == {"ambiguous-antecedent": [0], "other": [0]}  # positions among the selected lines


@pytest.mark.parametrize("lines, expected", [
    (SUBSETS[:-1], "test.subsets: expected 5 lines (one per line of"),
    (["", "bad/name", "", "", ""], "test.subsets:2: expected subset names of letters"),
])
def test_a_bad_subsets_file_is_an_error_naming_it_and_nothing_is_written(tmp_path, capsys, lines, expected):
    args = eval_files(tmp_path, subsets=lines, cheating=REF)
    with pytest.raises(SystemExit):
        pronouns.main(args + ["--subsets", str(tmp_path / "test.subsets"), "--tagger", "hanta",
                              "--output", str(tmp_path / "out.json")])
    assert expected in capsys.readouterr().err
    assert not (tmp_path / "out.json").exists()


def test_pronoun_f1_scores_every_subset_on_its_own(tmp_path):
    wrong = ["Ich habe einen Wagen gekauft.", "Er war billig.", "Ich mag ihn.", "Hallo Tom!", "Er ist rot."]
    args = eval_files(tmp_path, cheating=REF, **{"doc-trans": wrong})
    out = tmp_path / "out.json"
    pronouns.main(args + ["--subsets", str(tmp_path / "test.subsets"), "--tagger", "hanta", "--min-examples", "1",
                          "--output", str(out)])
    result = json.loads(out.read_text())
    ambiguous = result["subsets"]["ambiguous-antecedent"]
    assert ambiguous["sentences"] == 2
    # on the subset: the reference has 'es' twice (neuter, weight 0); doc-trans has 'er'/'ihn' (masculine) instead
    assert ambiguous["systems"]["cheating"]["gender"]["classes"]["neuter"]["f1"] == pytest.approx(1.0)
    assert ambiguous["systems"]["doc-trans"]["gender"]["classes"]["neuter"]["f1"] == 0.0
    assert ambiguous["systems"]["doc-trans"]["gender"]["classes"]["masculine"]["hyp"] == 2
    # the whole set also holds the unambiguous 'Er ist rot.', which both get right
    assert result["systems"]["doc-trans"]["gender"]["classes"]["masculine"]["match"] == 1
    assert set(result["subsets"]) == {"ambiguous-antecedent", "other"}


def test_the_pronoun_table_notes_every_subsets_f1_per_strategy():
    refs = [T("Er/PPER passt"), T("Sie/PPER passt"), T("Ich mag es/PPER")]
    good, bad = refs, [T("Sie/PPER passt"), T("Er/PPER passt"), T("Ich mag es/PPER")]
    sources = ["It fits."] * 2 + ["I like it."]
    systems = {"doc-trans": pronouns.score(sources, bad, refs, 5), "cheating": pronouns.score(sources, good, refs, 5)}
    data = {"tagger": "test", "min_examples": 5, "systems": systems,
            "subsets": {"ambiguous-antecedent": {"sentences": 3, "systems": systems}}}
    notes = tables._subset_notes(["doc-trans", "cheating"], "demo", "test", data)
    assert notes == [
        "demo test, subset ambiguous-antecedent (3 sentences; reference examples masculine 1, feminine 1, neuter 1; "
        "fewer than 5 per class, so indicative): gender F1 doc-trans nan, cheating 100.0."
    ]  # not a single match is the fork's NaN, shown as in Table 4; formality has no reference examples: no note
    assert tables._subset_notes(["doc-trans"], "demo", "test", {"systems": systems}) == []


def _dry_run_commands(tmp_path):
    out = subprocess.run(
        [str(REPO / ".venv/bin/snakemake"), "-s", str(REPO / "Snakefile"), "--directory", str(tmp_path), "-n", "-p",
         "--forceall", "tables", "--config", "tasks=[demo]"],
        capture_output=True, text=True, env=tool_env(), check=True)
    return [line.strip() for line in out.stdout.splitlines() if "docnmt.score.pronouns" in line]


def test_the_workflow_passes_the_demo_test_sets_subsets_to_pronoun_f1_only_there(tmp_path):
    commands = _dry_run_commands(tmp_path)
    assert len(commands) == 2, commands
    test = next(c for c in commands if "corpus/test.de" in c)
    contrapro = next(c for c in commands if "contrapro.de" in c)
    assert "--subsets data/demo/corpus/test.subsets" in test
    assert "--subsets" not in contrapro

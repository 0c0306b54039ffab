"""The comparison page's Python side (docnmt.score.compare): the metrics from summed statistics equal sacrebleu's,
the paired approximate randomization, what the page embeds (contexts, spans, examples), the Marot file in its
documented format, and docnmt-compare's errors on bad input. The page in a real browser:
tests/score/test_compare_browser.py."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import numpy as np
import pytest

from compare_inputs import OUTPUTS, REFERENCE, SOURCE, SPAN, make_inputs

from docnmt.score.compare import cli, collect, marot, page, randomization


@pytest.fixture
def inputs(tmp_path):
    return make_inputs(tmp_path / "set")


def _texts(seed: int, count: int = 120):
    rng = random.Random(seed)
    words = "der die das Haus ist rot Katze schläft heute nicht sehr gut wir sie es ein eine Lampe".split()
    refs = [" ".join(rng.choice(words) for _ in range(rng.randint(1, 14))) + "." for _ in range(count)]
    hyps = [" ".join(w if rng.random() < 0.7 else rng.choice(words) for w in r[:-1].split()) + "." for r in refs]
    hyps[3] = ""  # an empty hypothesis: no n-grams at all
    return hyps, refs


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_bleu_chrf_and_ter_from_summed_statistics_equal_sacrebleus_corpus_scores(seed):
    from docnmt.score.sacrebleu_metrics import _metrics

    hyps, refs = _texts(seed)
    outputs = {"a": hyps}
    docs = collect.documents([f"d{i // 10}" for i in range(len(refs))])
    computed = {m["name"]: m for m in collect.corpus_statistics(outputs, refs, docs)}
    for name, metric in _metrics().items():
        expected = metric.corpus_score(hyps, [refs]).score
        rows = np.asarray(computed[name]["stats"]["a"], dtype="float64")
        assert randomization.score(computed[name]["kind"], randomization.summed(rows), len(rows)) == \
            pytest.approx(expected, abs=1e-9), name
    from docnmt.score.sacrebleu_metrics import join_documents
    from sacrebleu.metrics import BLEU

    docids = [f"d{i // 10}" for i in range(len(refs))]
    expected = BLEU().corpus_score(join_documents(hyps, docids), [join_documents(refs, docids)]).score
    rows = np.asarray(computed["d-BLEU"]["stats"]["a"], dtype="float64")
    assert randomization.bleu(randomization.summed(rows)) == pytest.approx(expected, abs=1e-9)


def test_the_randomization_stream_is_mulberry32_and_its_swaps_are_its_bits():
    draws = randomization.mulberry32(12345)
    first = [next(draws) for _ in range(3)]
    words = randomization.swap_words(70, trials=2, seed=12345)  # 3 blocks of 32 per trial
    assert words.shape == (2, 3) and list(words[0]) == first
    swapped = randomization.swaps(70, trials=2, seed=12345)
    assert swapped.shape == (2, 70)
    assert [bool((first[1] >> j) & 1) for j in range(32)] == list(swapped[0, 32:64])
    assert 0.3 < swapped.mean() < 0.7


def test_the_paired_test_equals_its_definition_and_finds_a_real_difference_only():
    rng = np.random.default_rng(0)
    base = rng.normal(0.5, 0.1, size=(90, 1))
    words = randomization.swap_words(90, trials=400, seed=7)
    swapped = randomization.swaps(90, trials=400, seed=7)
    for shift, significant in ((0.0, False), (0.08, True)):
        system = base + shift + rng.normal(0, 0.02, size=(90, 1))
        test = randomization.paired_test("mean", base, system, words)
        # the definition: each trial swaps the pair of a segment where its bit is set
        observed = system.mean() - base.mean()
        trial_a = np.where(swapped, system[:, 0], base[:, 0]).mean(axis=1)
        trial_b = np.where(swapped, base[:, 0], system[:, 0]).mean(axis=1)
        count = int((np.abs(trial_b - trial_a) >= abs(observed) - 1e-12).sum())
        assert test["p"] == pytest.approx((count + 1) / 401, abs=2 / 401)
        assert test["delta"] == pytest.approx(observed)
        assert (test["p"] < randomization.ALPHA) is significant
    same = randomization.paired_test("mean", base, base.copy(), words)
    assert same["p"] == 1.0 and same["delta"] == 0.0


def test_the_page_data_holds_each_strategys_context_the_spans_and_the_examples_marks(inputs):
    data = page.page_data(collect.Inputs(
        source=inputs["src"], reference=inputs["ref"], docids=inputs["docids"], systems=inputs["systems"],
        scores=inputs["scores"], context_sets={"ctxpro": inputs["ctxpro"]},
        context_sources={"ctxpro": inputs["src"]},
        context_systems={"ctxpro": {n: p for n, p in inputs["systems"].items() if n != "cheating"}}))
    contexts = data["contexts"]
    assert contexts["sentence-level"]["kind"] == "none" and contexts["cheating"]["kind"] == "reference"
    assert contexts["last-sentence"]["kind"] == "recorded" and contexts["last-sentence"]["recorded"][2] == \
        OUTPUTS["last-sentence"][:2]
    assert contexts["2-pass"] == {"kind": "first-pass", "strategy": "2-pass", "k": 3, "first_pass": "sentence-level"}
    assert contexts["refine"] == {"kind": "draft", "strategy": "refine", "k": 3, "draft": "sentence-level"}
    assert data["spans"] == [[0, 1, SPAN["start"], SPAN["end"], 2, "XCOMET[tiny]"]]
    assert [m["name"] for m in data["metrics"]] == ["BLEU", "chrF++", "TER", "d-BLEU", "COMET[tiny]"]
    comet = data["metrics"][-1]
    assert comet["scale"] == 100.0 and comet["stats"]["cheating"][0] == pytest.approx(0.65)
    marks = {(t["class"], s): m for t in data["tests"] for s, m in t["marks"].items()}
    assert marks[("NOM.FEM.SING", "sentence-level")] == 0 and marks[("NOM.FEM.SING", "last-sentence")] == 1
    assert marks[("NOM.FORM", "sentence-level")] == 0 and marks[("NOM.FORM", "2-pass")] == 1
    assert data["tests"][0]["context"] == [SOURCE[0]]
    assert data["documents"] == [{"id": "d1", "lines": [0, 1, 2]}, {"id": "d2", "lines": [3, 4, 5]},
                                 {"id": "d3", "lines": [6, 7]}]


def test_docnmt_compare_writes_one_self_contained_page_and_the_overview_python_computes(inputs, tmp_path, capsys):
    out = tmp_path / "out dir" / "compare.html"
    out.parent.mkdir()
    assert cli.main(inputs["args"] + ["--output", str(out), "--marot", str(tmp_path / "m.tsv")]) == 0
    html = out.read_text(encoding="utf-8")
    assert "8 sentences in 3 documents" in capsys.readouterr().out
    assert not re.search(r"<(script|link|img)[^>]+(src|href)=", html), "the page fetches nothing"
    assert "http://" not in html.split("<script type=\"application/json\"")[0]
    embedded = html.split('<script type="application/json" id="docnmt-data">', 1)[1].split("</script>", 1)[0]
    data = json.loads(embedded)
    assert data["baseline"] == "sentence-level" and data["trials"] == randomization.TRIALS
    table = page.printed(data, page.overview(data, list(range(len(SOURCE)))))
    assert table["BLEU"]["cheating"][0] == "100.00"
    assert table["BLEU"]["sentence-level"] == [table["BLEU"]["sentence-level"][0]]  # the baseline: no test


def marot_rows(path) -> list[list[str]]:
    """The data rows of a Marot file, each split into its ten columns (Marot splits a line at tabs)."""
    lines = path.read_text(encoding="utf-8").split("\n")
    assert lines[0] == "\t".join(marot.COLUMNS) and "system\tdoc" in lines[0] and lines[-1] == ""
    rows = [line.split("\t") for line in lines[1:-1]]
    assert all(len(row) == 10 for row in rows), "a tab or line break inside a text would break a row"
    return rows


def strict_json(text: str):
    """JSON as a browser's JSON.parse reads it: NaN and Infinity are no JSON numbers."""
    def refuse(constant):
        raise AssertionError(f"a non-finite number ({constant}) in the metadata")

    return json.loads(text, parse_constant=refuse)


@pytest.fixture
def small_marot(inputs, tmp_path):
    path = tmp_path / "compare.marot.tsv"
    assert cli.main(inputs["args"] + ["--output", str(tmp_path / "p.html"), "--marot", str(path)]) == 0
    return marot_rows(path)


def test_marot_metrics_rows_give_tokens_with_their_sentence_splits_and_the_texts_back(small_marot):
    """marot.js reads target_sentence_splits wherever target_tokens are given (and the source's and each
    reference's likewise): their num_tokens add up to the tokens, and the tokens joined are the column's text."""
    metric_rows = [r for r in small_marot if r[4] == ""]
    assert len(metric_rows) == len(SOURCE) * len(OUTPUTS)
    for system, doc, doc_seg, global_seg, rater, source, target, category, severity, metadata in metric_rows:
        segment = strict_json(metadata)["segment"]
        line = int(global_seg) - 1
        assert (source, target, category, severity) == (SOURCE[line], OUTPUTS[system][line], "", "")
        for side, text in (("source", source), ("target", target)):
            assert "".join(segment[f"{side}_tokens"]) == text
            splits = segment[f"{side}_sentence_splits"]
            assert sum(split["num_tokens"] for split in splits) == len(segment[f"{side}_tokens"]) > 0
            assert all(set(split) == {"num_tokens"} and isinstance(split["num_tokens"], int) for split in splits)
    assert [r[2] for r in metric_rows if r[0] == "2-pass"] == ["1", "2", "3", "1", "2", "3", "1", "2"]


def test_marot_gets_the_reference_once_per_segment_as_its_readme_documents(small_marot):
    with_reference = {}
    for row in small_marot:
        segment = strict_json(row[9]).get("segment", {})
        if "references" in segment:
            assert (row[1], row[2]) not in with_reference, "once per segment, not once per system"
            with_reference[(row[1], row[2])] = row[0]
            assert segment["primary_reference"] in segment["references"]
            assert segment["references"][segment["primary_reference"]] == REFERENCE[int(row[3]) - 1]
        else:
            assert "primary_reference" not in segment and "reference_tokens" not in segment
    assert len(with_reference) == len(SOURCE) and set(with_reference.values()) == {"sentence-level"}


def test_marot_takes_every_metric_as_higher_is_better_so_ter_is_exported_negated(inputs, tmp_path, small_marot):
    data = page.page_data(collect.Inputs(
        source=inputs["src"], reference=inputs["ref"], docids=inputs["docids"], systems=inputs["systems"],
        scores=inputs["scores"]))
    ter = next(m for m in data["metrics"] if m["name"] == "TER")
    for row in (r for r in small_marot if r[4] == ""):
        metrics = strict_json(row[9])["segment"]["metrics"]
        assert set(metrics) == {"BLEU", "chrF++", "-TER", "COMET[tiny]"}
        line = int(row[3]) - 1
        stats = ter["stats"][row[0]][line * ter["width"]:(line + 1) * ter["width"]]
        assert metrics["-TER"] == pytest.approx(-randomization.ter(stats), abs=1e-6)
        assert all(isinstance(v, (int, float)) and np.isfinite(v) for v in metrics.values())


def test_marot_gets_xcomets_spans_as_automqm_with_a_no_error_row_for_every_other_system(small_marot):
    """A rater named AutoMQM... is scored as automatic MQM; a segment rated for some systems only is hidden by
    Marot's default filter, so every system gets a row of that rater on every segment XCOMET scored."""
    rated = [r for r in small_marot if r[4] != ""]
    assert {r[4] for r in rated} == {"AutoMQM-XCOMET[tiny]"}
    assert sorted((r[0], r[3]) for r in rated) == sorted((s, str(line + 1)) for s in OUTPUTS
                                                         for line in range(len(SOURCE)))
    [error] = [r for r in rated if r[7] != "no-error"]
    assert error[:5] == ["sentence-level", "d1", "2", "2", "AutoMQM-XCOMET[tiny]"]
    assert error[6] == "<v>Es</v> ist rot." and (error[7], error[8]) == ("Other", "Critical")
    meta = strict_json(error[9])
    first, last = meta["target_spans"][0]
    target_tokens = marot.tokens(OUTPUTS["sentence-level"][1])
    assert "".join(target_tokens[first:last + 1]) == "Es" == meta["marked_text"]
    for row in rated:
        if row is not error:
            assert (row[7], row[8]) == ("no-error", "no-error") and strict_json(row[9])["target_spans"] == []
            assert "<v>" not in row[6]


def hand_made(outputs: dict[str, list[str]], spans: list[list], ter_stats: dict, mean_stats: dict,
              scored=None) -> dict:
    """The page's data for marot.rows, made by hand: two segments of one document."""
    systems = list(outputs)
    return {"systems": systems, "outputs": outputs, "source": ["A  b\tc.", "Tom  saw   it ."],
            "reference": ["A b c.", "Tom sah  es ."], "documents": [{"id": "doc\t1", "lines": [0, 1]}],
            "metrics": [{"name": "TER", "kind": "ter", "unit": "segment", "higher": False, "width": 2, "scale": 1.0,
                         "stats": ter_stats},
                        {"name": "MetricX", "kind": "mean", "unit": "segment", "higher": False, "width": 1,
                         "scale": 1.0, "stats": mean_stats}],
            "spans": spans, "severities": ["minor", "major", "critical"],
            "span_scored": {"XCOMET": list(range(len(systems))) if scored is None else scored}}


def test_marot_spans_in_the_middle_and_at_the_end_of_a_sentence_with_several_spaces_and_a_tab():
    outputs = {"a": ["A  b\tc.", "Tom  sah   es ."], "b": ["A b c.", "Tom sah es."]}
    middle, end = outputs["a"][1].index("sah"), len(outputs["a"][1])
    spans = [[0, 1, middle, middle + 3, 1, "XCOMET"], [0, 1, end - 4, end, 0, "XCOMET"], [0, 0, 3, 6, 2, "XCOMET"]]
    data = hand_made(outputs, spans, {"a": [1, 3, 0, 4], "b": [0, 3, 2, 4]}, {"a": [2.5, 1.0], "b": [0.5, 3.0]})
    rows = marot.rows(data)
    assert all("\t" not in cell and "\n" not in cell for row in rows for cell in row)
    by_target = {}
    for row in rows:
        if row[4] == "":
            segment = strict_json(row[9])["segment"]
            assert "".join(segment["target_tokens"]) == row[6] and "\t" not in row[6]
            by_target[(row[0], row[3])] = segment["target_tokens"]
    errors = [r for r in rows if r[7] == "Other"]
    marked = {}
    for row in errors:
        first, last = strict_json(row[9])["target_spans"][0]
        tokens = by_target[(row[0], row[3])]
        assert "".join(tokens[first:last + 1]) == strict_json(row[9])["marked_text"]
        assert row[6] == "".join(tokens[:first]) + "<v>" + "".join(tokens[first:last + 1]) + "</v>" + \
            "".join(tokens[last + 1:])
        marked[row[8]] = "".join(tokens[first:last + 1])
    assert marked == {"Major": "sah", "Minor": "es .", "Critical": "b c."}, \
        "the middle word, the end with its spaces, the span over the tab (a space in the file)"
    assert [(r[0], r[3], r[7]) for r in rows if r[7] == "no-error"] == [("b", "1", "no-error"), ("b", "2", "no-error")]


def test_marot_leaves_a_metric_out_of_a_segment_where_some_system_has_no_number():
    outputs = {"a": ["x", "y"], "b": ["x", "z"]}
    data = hand_made(outputs, [], {"a": [0, 0, 1, 2], "b": [0, 0, 1, 2]},
                     {"a": [float("nan"), 1.0], "b": [0.5, 2.0]})
    metrics = {(r[0], r[3]): strict_json(r[9])["segment"]["metrics"] for r in marot.rows(data) if r[4] == ""}
    assert metrics[("a", "1")] == metrics[("b", "1")] == {"-TER": 0.0}, "MetricX: NaN for a, so for no system"
    assert metrics[("a", "2")] == {"-TER": -50.0, "-MetricX": -1.0} and metrics[("b", "2")]["-MetricX"] == -2.0
    assert "-0.0" not in "".join(r[9] for r in marot.rows(data))


def test_a_span_metric_that_did_not_score_every_system_is_left_out_with_a_note():
    outputs = {"a": ["x", "y"], "b": ["x", "z"]}
    data = hand_made(outputs, [[0, 0, 0, 1, 0, "XCOMET"]], {"a": [0, 1, 0, 1], "b": [0, 1, 0, 1]},
                     {"a": [1, 1], "b": [1, 1]}, scored=[0])
    assert not [r for r in marot.rows(data) if r[4]]
    assert marot.notes(data) == ["XCOMET's spans are left out of the Marot file: it scored 1 of the 2 systems, and "
                                 "Marot hides a segment rated for some systems only"]


@pytest.mark.parametrize("change, message", [
    (lambda i: i["systems"]["2-pass"].write_text("one line\n"), "2-pass.txt: expected 8 hypotheses"),
    (lambda i: i["ref"].write_text("Nur eine Zeile.\n"), "test.de: expected one reference line per line of"),
    (lambda i: (i["scores"] / "comet.error_spans.jsonl").write_text("{not json\n"), "comet.error_spans.jsonl"),
    (lambda i: (i["scores"] / "comet.error_spans.jsonl").write_text(json.dumps(
        {"metric": "X", "system": "sentence-level", "spans": [[]]}) + "\n"), "expected spans for 8 segments"),
    (lambda i: i["args"].extend(["--system", f"cheating={i['systems']['cheating']}"]), "'cheating' is given twice"),
    (lambda i: i["args"].extend(["--baseline", "nobody"]), "--baseline: not one of the systems"),
])
def test_bad_input_is_one_line_naming_the_file_and_no_page_is_written(inputs, tmp_path, capsys, change, message):
    change(inputs)
    out, tsv = tmp_path / "compare.html", tmp_path / "compare.tsv"
    with pytest.raises(SystemExit) as stopped:
        cli.main(inputs["args"] + ["--output", str(out), "--marot", str(tsv)])
    assert stopped.value.code == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err
    assert not out.exists() and not tsv.exists() and not list(tmp_path.glob("*.tmp*"))


def test_the_pronoun_scorer_writes_each_sentences_counts_which_add_up_to_its_totals(inputs, tmp_path):
    from docnmt.score import pronouns

    scores, sentences = tmp_path / "pronouns.json", tmp_path / "pronouns.sentences.jsonl"
    pronouns.main(["--source", str(inputs["src"]), "--reference", str(inputs["ref"]),
                   "--system", f"sentence-level={inputs['systems']['sentence-level']}",
                   "--system", f"cheating={inputs['systems']['cheating']}", "--tagger", "hanta",
                   "--source-tagger", "words", "--min-examples", "1", "--output", str(scores),
                   "--sentences", str(sentences)])
    totals = json.loads(scores.read_text())["systems"]
    records = [json.loads(line) for line in sentences.read_text().splitlines()]
    assert [r["system"] for r in records] == ["sentence-level", "cheating"]
    for record in records:
        assert len(record["counts"]) == len(SOURCE) and record["taggers"]["german"].startswith("HanTa")
        for category, entry in totals[record["system"]].items():
            for cls, counted in entry["classes"].items():
                summed = [sum(s.get(category, {}).get(cls, [0, 0, 0])[i] for s in record["counts"]) for i in range(3)]
                assert summed == [counted["hyp"], counted["ref"], counted["match"]], (category, cls)
    read = collect.pronoun_counts(sentences, ["sentence-level", "cheating"], len(SOURCE))
    assert len(read["systems"]["cheating"]) == len(SOURCE)


def test_the_demo_writes_its_comparison_page_with_table_3s_numbers_and_its_marot_file(trained_demo):
    """The workflow's page of the demo (rule compare_page): every system the task decodes on its test set, the
    unfiltered numbers equal to Table 3's scores, the report linking it, and the Marot file beside it."""
    from docnmt import layout

    html = (trained_demo / layout.compare_page("demo")).read_text(encoding="utf-8")
    data = json.loads(html.split('<script type="application/json" id="docnmt-data">', 1)[1].split("</script>", 1)[0])
    scores = json.loads((trained_demo / layout.score_file("demo", "test", "bleu_ter")).read_text())
    from docnmt.config import load_workflow
    from docnmt.workflow.systems import task_systems

    # every system the task decodes on the test set (the MBR curve's points, scored for its plot, are not systems)
    assert data["systems"] == task_systems(load_workflow(), "demo", "test")
    assert set(data["systems"]) < set(scores["systems"])
    table = page.overview(data, list(range(len(data["source"]))))
    for system in data["systems"]:
        entry = scores["systems"][system]
        for column in ("BLEU", "chrF++", "TER", "d-BLEU"):
            assert table[column][system]["score"] == pytest.approx(entry[column]["score"], abs=6e-5), (system, column)
    shown = page.printed(data, table)
    recorded = json.loads((trained_demo / layout.score_file("demo", "test", "pronouns")).read_text())["systems"]
    for system in data["systems"]:
        for category in ("gender", "formality"):
            f1 = recorded[system][category]["f1"]
            assert shown[f"{category} F1"][system][0] == ("–" if f1 is None else f"{f1 * 100:.1f}"), (system, category)
    assert {c["kind"] for c in data["contexts"].values()} >= {"none", "own", "reference", "first-pass", "recorded"}
    assert data["pronouns"]["systems"] and data["tests"]
    assert "compare.html" in (trained_demo / "report.html").read_text(encoding="utf-8")
    tsv = (trained_demo / layout.compare_marot("demo")).read_text(encoding="utf-8").split("\n")
    assert tsv[0] == "\t".join(marot.COLUMNS) and len(tsv) - 2 == len(data["systems"]) * len(data["source"])


def test_trials_seed_and_an_explicit_spans_file_reach_the_page(inputs, tmp_path):
    """--trials and --seed set the test the page (and Python) computes; --spans reads a spans file by name."""
    spans = tmp_path / "my spans.jsonl"
    spans.write_text((inputs["scores"] / "comet.error_spans.jsonl").read_text(encoding="utf-8"), encoding="utf-8")
    (inputs["scores"] / "comet.error_spans.jsonl").unlink()
    out = tmp_path / "compare.html"
    assert cli.main(inputs["args"] + ["--spans", str(spans), "--trials", "200", "--seed", "7",
                                      "--output", str(out)]) == 0
    html = out.read_text(encoding="utf-8")
    data = json.loads(html.split('<script type="application/json" id="docnmt-data">', 1)[1].split("</script>", 1)[0])
    assert (data["trials"], data["seed"]) == (200, 7) and data["spans"][0][5] == "XCOMET[tiny]"
    table = page.overview(data, list(range(len(SOURCE))))
    p = table["COMET[tiny]"]["cheating"]["p"]
    assert round(p * 201) == pytest.approx(p * 201)  # (count + 1) / (200 + 1)


def test_the_scoring_pages_docnmt_compare_commands_run_as_written(inputs, tmp_path):
    """docs/scoring.md, "The comparison page": both commands, as written, in a folder holding the files they name."""
    import shutil
    import subprocess

    from helpers import REPO, block_commands, doc_blocks, tool_env

    work = tmp_path / "work"
    scores = work / "results/demo/scores/test"
    shutil.copytree(inputs["scores"], scores)
    for name, source in (("test.en", inputs["src"]), ("test.de", inputs["ref"]), ("test.docids", inputs["docids"]),
                         ("sl.de", inputs["systems"]["sentence-level"]), ("dt.de", inputs["systems"]["2-pass"]),
                         ("examples.jsonl", inputs["ctxpro"]), ("set.en", inputs["src"]),
                         ("set.de", inputs["systems"]["2-pass"])):
        shutil.copy(source, work / name)
    records = [json.loads(line) for line in (scores / "comet.error_spans.jsonl").read_text().splitlines()]
    named = {"sentence-level": "baseline", "2-pass": "doc-trans"}
    (work / "comet.error_spans.jsonl").write_text("".join(json.dumps(dict(r, system=named[r["system"]])) + "\n"
                                                          for r in records if r["system"] in named), encoding="utf-8")
    (block,) = doc_blocks(REPO / "docs/scoring.md", "bash", "## The comparison page")
    commands = block_commands(block)
    assert len(commands) == 2 and all(c.startswith("docnmt-compare ") for c in commands)
    for command in commands:
        (work / "compare.html").unlink(missing_ok=True)
        done = subprocess.run(command, shell=True, cwd=work, env=tool_env(), capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        assert "2 systems, 8 sentences in 3 documents" in done.stdout
    html = (work / "compare.html").read_text(encoding="utf-8")
    data = json.loads(html.split('<script type="application/json" id="docnmt-data">', 1)[1].split("</script>", 1)[0])
    assert data["spans"] and data["tests"] and data["systems"] == ["baseline", "doc-trans"]
    assert (work / "compare.marot.tsv").read_text(encoding="utf-8").startswith("system\tdoc\t")


def test_a_pooled_selection_shows_the_strategy_that_won_each_document_and_its_context(inputs):
    """pooled+docmbr's sidecar names each document's winner: the page's data keeps it (the column "won by"), and
    its context is the winner's."""
    decode = inputs["systems"]["sentence-level"].parent
    won_by = {"d1": "last-sentence", "d2": "2-pass", "d3": "sentence-level"}
    lines = OUTPUTS["last-sentence"][:3] + OUTPUTS["2-pass"][3:6] + OUTPUTS["sentence-level"][6:]
    pooled = decode / "pooled+docmbr.txt"
    pooled.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    (decode / "pooled+docmbr.json").write_text(json.dumps({"strategy": "pooled+docmbr", "won_by": won_by}),
                                               encoding="utf-8")
    systems = {**inputs["systems"], "pooled+docmbr": pooled}
    data = page.page_data(collect.Inputs(source=inputs["src"], reference=inputs["ref"], docids=inputs["docids"],
                                         systems=systems))
    assert data["contexts"]["pooled+docmbr"] == {"kind": "pooled", "strategy": "pooled+docmbr", "k": 0,
                                                 "won_by": won_by}
    script = (Path(page.__file__).parent / "page.js").read_text(encoding="utf-8")
    assert 'case "pooled": return' in script and '"won by"' in script

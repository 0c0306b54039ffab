"""The comparison page's Python side (docnmt.score.compare): the metrics from summed statistics equal sacrebleu's,
the paired approximate randomization, what the page embeds (contexts, spans, examples), the Marot file in its
documented format, and docnmt-compare's errors on bad input. The page in a real browser:
tests/score/test_compare_browser.py."""

from __future__ import annotations

import json
import random
import re

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


def test_marot_rows_follow_marots_documented_format(inputs, tmp_path):
    path = tmp_path / "compare.marot.tsv"
    assert cli.main(inputs["args"] + ["--output", str(tmp_path / "p.html"), "--marot", str(path)]) == 0
    lines = path.read_text(encoding="utf-8").split("\n")
    assert lines[0] == "\t".join(marot.COLUMNS) and "system\tdoc" in lines[0] and lines[-1] == ""
    rows = [line.split("\t") for line in lines[1:-1]]
    assert all(len(row) == 10 for row in rows)
    metric_rows = [r for r in rows if r[4] == ""]
    error_rows = [r for r in rows if r[4] != ""]
    assert len(metric_rows) == len(SOURCE) * len(OUTPUTS)
    for row in metric_rows:
        system, doc, doc_seg, global_seg, rater, source, target, category, severity, metadata = row
        meta = json.loads(metadata)["segment"]
        line = int(global_seg) - 1
        assert (source, target, category, severity) == (SOURCE[line], OUTPUTS[system][line], "", "")
        assert "".join(meta["target_tokens"]) == target and "".join(meta["source_tokens"]) == source
        assert meta["primary_reference"] in meta["reference_tokens"]
        assert "".join(meta["reference_tokens"][meta["primary_reference"]]) == REFERENCE[line]
        assert set(meta["metrics"]) == {"BLEU", "chrF++", "TER", "COMET[tiny]"}
    assert [r[2] for r in metric_rows if r[0] == "2-pass"] == ["1", "2", "3", "1", "2", "3", "1", "2"]
    [error] = error_rows
    assert error[:5] == ["sentence-level", "d1", "2", "2", "XCOMET[tiny]"]
    assert error[6] == "<v>Es</v> ist rot." and error[8] == "Critical"
    meta = json.loads(error[9])
    first, last = meta["target_spans"][0]
    assert "".join(meta["segment"]["target_tokens"][first:last + 1]) == "Es" == meta["marked_text"]


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
    spans = json.loads((scores / "comet.error_spans.jsonl").read_text())
    spans["system"] = "baseline"
    (work / "comet.error_spans.jsonl").write_text(json.dumps(spans) + "\n", encoding="utf-8")
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

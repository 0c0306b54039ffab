"""The paper's tables from score files: rows, '-' cells, significance marks, cost ratios, formats and bad input."""

import csv
import json
from types import SimpleNamespace

import pytest

from docnmt.score import pronouns, sacrebleu_metrics, tables
from docnmt.textio import write_lines
from test_pronouns import T

STRATEGIES = ["sentence-level", "full-segment", "last-sentence", "doc-trans"]
REF = ["Der Tisch ist neu.", "Er passt gut.", "Ich mag ihn.", "Kommst du mit?", "Ja, gerne.", "Bis morgen."]
HYPS = {
    "sentence-level": ["Der Tisch ist neu.", "Es passt gut.", "Ich mag es.", "Kommen Sie mit?", "Ja.", "Bis morgen."],
    "full-segment": ["Der Tisch ist neu.", "Er passt.", "Ich mag ihn.", "Kommst du mit?", "Ja, gerne.", "Bis dann."],
    "last-sentence": REF,
    "doc-trans": REF,
}


def sidecar(path, strategy, positions, seconds, **extra):
    path.write_text(json.dumps({"strategy": strategy, "decoder_positions": positions, "forward_calls": positions // 10,
                                "seconds": seconds, "sep_mismatch": 0, "cost": "O(NL)", "device": "cpu",
                                "dtype": "float32", **extra}))
    return str(path)


def write_pronoun_file(path, systems, min_examples=1):
    """A pronoun score file as docnmt.score.pronouns writes it (HanTa-like tagger, word-matched source)."""
    _, setup = pronouns.setup_note(pronouns.RULES["blonde-de"], SimpleNamespace(name="HanTa test", paper=False),
                                   pronouns.WordMatcher())
    path.write_text(json.dumps({"rules": "blonde-de", "setup": setup, "min_examples": min_examples,
                                "systems": systems}))
    return str(path)


@pytest.fixture
def manifest(tmp_path):
    write_lines(tmp_path / "src.en", [f"s{i}" for i in range(len(REF))])
    write_lines(tmp_path / "ref.de", REF)
    bleu = {}
    for evalset, names in (("test", STRATEGIES), ("contrapro", [s for s in STRATEGIES if s != "full-segment"])):
        args = ["--source", str(tmp_path / "src.en"), "--reference", str(tmp_path / "ref.de")]
        for name in names:
            write_lines(tmp_path / f"{evalset}.{name}.txt", HYPS[name])
            args += ["--system", f"{name}={tmp_path / f'{evalset}.{name}.txt'}"]
        bleu[evalset] = str(tmp_path / f"{evalset}.bleu_ter.json")
        sacrebleu_metrics.main(args + ["--baseline", "sentence-level", "--baseline", "last-sentence", "--bootstrap-samples", "100",
                             "--output", bleu[evalset]])
    # pronouns: gender reported (threshold 1), formality not (no formal examples in the reference)
    sources = ["It fits.", "It fits.", "I like it.", "Are you coming?"]
    refs = [T("Er/PPER passt"), T("Sie/PPER passt"), T("Ich mag es/PPER"), T("Kommst du/PPER mit")]
    good = [T("Er/PPER passt"), T("Sie/PPER passt"), T("Ich mag es/PPER"), T("Kommst du/PPER mit")]
    bad = [T("Es/PPER passt"), T("Es/PPER passt"), T("Ich mag es/PPER"), T("Kommen Sie/PPER mit")]
    systems = {s: pronouns.score(sources, good if s in ("last-sentence", "doc-trans") else bad, refs, 1)
               for s in STRATEGIES}
    pron = tmp_path / "pronouns.json"
    write_pronoun_file(pron, systems)
    ppl = {}
    for level, names in (("sentence", ["reference", "sentence-level"]), ("document", ["reference"] + STRATEGIES[1:])):
        ppl[level] = str(tmp_path / f"ppl.{level}.json")
        (tmp_path / f"ppl.{level}.json").write_text(json.dumps(
            {"dtype": "float32", "systems": {n: {"perplexity": 1.5 + i / 10} for i, n in enumerate(names)}}))
    acc = {}
    for level, value in (("sentence", 0.4), ("document", 0.9)):
        acc[level] = str(tmp_path / f"acc.{level}.json")
        (tmp_path / f"acc.{level}.json").write_text(json.dumps(
            {"dtype": "float32", "overall": {"accuracy": value}, "by_ante_distance": {"1": {"accuracy": value}}}))
    cars = {
        "sentence-level": sidecar(tmp_path / "sl.json", "sentence-level", 1000, 2.0),
        "full-segment": sidecar(tmp_path / "fs.json", "full-segment", 950, 2.2),
        "last-sentence": sidecar(tmp_path / "ls.json", "last-sentence", 2900, 5.0),
        "doc-trans": sidecar(tmp_path / "dt.json", "doc-trans", 1100, 3.0, rounds=3, redecoded_per_round=[6, 2, 1],
                             converged=True, decoder_positions_with_first_pass=2100, seconds_with_first_pass=5.0),
    }
    return {"strategies": STRATEGIES, "tasks": {"demo": {
        "description": "demo", "tgt": "de", "bleu_ter": bleu, "pronoun_f1": {"test": str(pron)},
        "perplexity": ppl, "contrapro_accuracy": acc, "sidecars": cars}}}


def rows(table):
    return {row[0] if table.name != "perplexity" else (row[0], row[1]): row for row in table.rows}


def test_bleu_table_marks_significance_and_dashes_full_segment_on_contrapro(manifest):
    table = rows(tables.quality_table(manifest))
    header = tables.quality_table(manifest).header
    assert header == ["strategy", "demo test BLEU", "demo test chrF++", "demo test TER", "demo ContraPro BLEU",
                      "demo ContraPro chrF++", "demo ContraPro TER"]
    assert table["full-segment"][4:] == ["-", "-", "-"]
    data = json.loads(open(manifest["tasks"]["demo"]["bleu_ter"]["test"]).read())
    expected = f"{data['systems']['doc-trans']['BLEU']['score']:.1f}"
    cell = table["doc-trans"][1]
    assert cell.startswith(expected)
    significant = data["paired_bootstrap"]["sentence-level"]["systems"]["doc-trans"]["BLEU"]["significant"]
    assert ("*" in cell) == significant
    assert "†" not in table["last-sentence"][1] and "*" not in table["sentence-level"][1]


def test_pronoun_table_reports_a_category_only_above_the_threshold(manifest):
    main, classes = tables.pronoun_tables(manifest)
    table = rows(main)
    assert main.header == ["strategy", "demo test gender", "demo test formality"]
    assert table["doc-trans"][1] == "100.0" and table["sentence-level"][1] != "100.0"
    assert table["doc-trans"][2] == "-"  # formal has 0 reference examples
    assert any("formality: reference examples formal 0, informal 1; not reported" in n for n in main.notes)
    setup = [n for n in main.notes if n.startswith("Pronoun F1 (demo test): ")]
    assert len(setup) == 1 and "rule set blonde-de" in setup[0] and "German tagger HanTa test" in setup[0]
    assert "English source tagger word matching" in setup[0] and "differs from the paper" in setup[0]
    assert "as the paper" not in setup[0]
    assert "demo test formal F1" in classes.header and len(classes.rows) == len(STRATEGIES)


def test_pronoun_table_shows_nan_where_the_forks_value_is_nan(tmp_path):
    """sentence-level matches no gender example (R = P = 0: NaN); doc-trans matches all."""
    sources = ["It fits."] * 2
    refs = [T("er/PPER passt"), T("sie/PPER passt")]
    systems = {"sentence-level": pronouns.score(sources, [T("sie/PPER passt"), T("er/PPER passt")], refs, 0),
               "doc-trans": pronouns.score(sources, refs, refs, 0)}
    pron = write_pronoun_file(tmp_path / "pronouns.json", systems, 0)
    manifest = {"strategies": ["sentence-level", "doc-trans"], "tasks": {"demo": {"pronoun_f1": {"test": pron}}}}
    main, classes = tables.pronoun_tables(manifest)
    table = rows(main)
    assert table["sentence-level"][1] == "nan" and table["doc-trans"][1] == "100.0"
    assert any(n.startswith('"nan": the BlonDe fork\'s value is NaN') for n in main.notes)
    # per class: sentence-level masculine P = 0/1, R = 0/1, F1 NaN; neuter has no example at all
    assert rows(classes)["sentence-level"][1:4] == ["0.0", "0.0", "nan"]
    assert rows(classes)["sentence-level"][7:10] == ["nan", "nan", "nan"]


def test_pronoun_notes_give_the_papers_counts_beside_ours_for_contrapro_and_the_os_test_set(tmp_path):
    sources = ["It fits.", "Are you coming?"]
    refs = [T("er/PPER passt"), T("kommst du/PPER mit")]
    files = {}
    for evalset in ("test", "contrapro"):
        files[evalset] = write_pronoun_file(tmp_path / f"{evalset}.json",
                                            {"doc-trans": pronouns.score(sources, refs, refs, 100)}, 100)
    manifest = {"strategies": ["doc-trans"], "tasks": {"os": {"pronoun_f1": files}, "demo": {"pronoun_f1": files}}}
    main, _ = tables.pronoun_tables(manifest)
    notes = "\n".join(main.notes)
    assert ("os ContraPro gender: reference examples masculine 1, feminine 0, neuter 0 "
            "(the paper: masculine 5011, feminine 4085, neuter 4817); not reported") in notes
    assert "os test formality: reference examples formal 0, informal 1 (the paper: formal 416, informal 605)" in notes
    assert "os test gender: reference examples masculine 1, feminine 0, neuter 0; not reported" in notes
    assert "os ContraPro formality: reference examples formal 0, informal 1; not reported" in notes
    assert "demo ContraPro gender: reference examples masculine 1, feminine 0, neuter 0; not reported" in notes
    assert "Pronoun F1 (os test, os ContraPro, demo test, demo ContraPro): rule set blonde-de" in notes


def test_pronoun_table_names_a_score_file_without_its_setup(tmp_path):
    old = tmp_path / "pronouns.json"
    old.write_text(json.dumps({"tagger": "HanTa", "min_examples": 1, "systems": {"doc-trans": {}}}))
    manifest = {"strategies": ["doc-trans"], "tasks": {"demo": {"pronoun_f1": {"test": str(old)}}}}
    with pytest.raises(tables.InputError, match="pronouns.json: expected a pronoun score file naming its rule set"):
        tables.pronoun_tables(manifest)


def test_perplexity_table_has_the_papers_rows(manifest):
    table = rows(tables.perplexity_table(manifest))
    assert list(table)[:3] == [("sentence-level", "reference"), ("sentence-level", "hyp sentence-level"),
                               ("document-level", "reference")]
    assert table[("document-level", "hyp doc-trans")][2] == "1.80"


def test_cost_table_ratios_include_the_first_pass(manifest):
    table = rows(tables.cost_table(manifest))
    assert table["last-sentence"][2:5] == ["2900", "2.90", "290"]
    assert table["doc-trans"][2:4] == ["2100", "2.10"]  # positions with its first pass
    assert table["doc-trans"][6] == "2.50"


def test_cost_table_shows_rounds_and_what_did_not_converge(manifest, tmp_path):
    table = rows(tables.cost_table(manifest))
    assert table["doc-trans"][8] == "3 (6/2/1)", "parallel doc-trans: rounds and sentences decoded per round"
    assert table["last-sentence"][8] == "-", "a sidecar without rounds"
    sidecar(tmp_path / "sl.json", "sentence-level", 1000, 2.0, rounds=1)
    sidecar(tmp_path / "dt.json", "doc-trans", 1100, 3.0, rounds=2, redecoded_per_round=[6, 2], converged=False,
            unconverged=3, max_rounds=2)
    table = rows(tables.cost_table(manifest))
    assert table["sentence-level"][8] == "1"
    assert table["doc-trans"][8] == "2 (6/2), not converged: 3 sentences"
    sidecar(tmp_path / "dt.json", "doc-trans", 1100, 3.0, rounds=3, redecoded_per_round=[6, 2, 2, 1],
            round_one_reused=True, sequential_from_round=3, converged=True)
    table = rows(tables.cost_table(manifest))
    assert table["doc-trans"][8] == "3 (6/2/2/1), round 1 from 2-pass, sequential from round 3"


def test_cost_table_shows_each_tasks_backend_columns_once_with_its_note(tmp_path):
    """Table 1's own columns come from the backend each task's sidecars name (docnmt.decode.backend.CostColumns): a
    causal-lm task and a vllm task each get the three prompt counters once (causal-lm and vllm declare the same
    counters with notes of their own), a served task its tokens, requests and price."""
    from docnmt.decode.backend import backend

    prompts = {"tokens_prefilled": 90, "tokens_cached": 10, "tokens_generated": 30}
    served = {"prompt_tokens": 100, "cached_tokens": 20, "completion_tokens": 10, "api_requests": 5}
    tasks = {}
    for task, name, counts in (("llm", "causal-lm", prompts), ("engine", "vllm", prompts), ("api", "openai", served)):
        tasks[task] = {"sidecars": {
            s: sidecar(tmp_path / f"{task}.{s}.json", s, 100 * (n + 1), 1.0 + n, backend=name,
                       **{k: v * (n + 1) for k, v in counts.items()})
            for n, s in enumerate(("sentence-level", "doc-trans"))}}
    tasks["api"]["prices"] = {"input": 2.0, "output": 8.0}
    table = tables.cost_table({"strategies": ["sentence-level", "doc-trans"], "tasks": tasks})
    for task in ("llm", "engine"):
        assert [h for h in table.header if h.startswith(f"{task} tokens")] == \
            [f"{task} tokens prefilled", f"{task} tokens from cache", f"{task} tokens generated"]
    assert [h for h in table.header if h.startswith("api ") and "×SL" not in h][-5:] == \
        ["api prompt tokens", "api cached prompt tokens", "api completion tokens", "api API requests", "api cost"]
    doc_trans = table.rows[1]
    at = table.header.index("llm tokens prefilled")
    assert doc_trans[at:at + 2] == ["180", "2.00"], "doc-trans's count and its ratio to sentence-level"
    at = table.header.index("api cost")
    assert doc_trans[at:at + 2] == ["0.0006", "2.00"]  # (200 - 40) x 2 + 40 x 2 (cached at input) + 20 x 8 per 1e6
    for name in ("causal-lm", "vllm", "openai"):
        assert table.notes.count(backend(name).cost.note) == 1, name


def test_cli_writes_markdown_csv_and_latex_for_every_table(manifest, tmp_path):
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    assert tables.main(["--manifest", str(tmp_path / "manifest.json"), "--outdir", str(tmp_path / "out")]) == 0
    names = ["perplexity", "quality", "pronoun_f1", "pronoun_classes", "contrapro_accuracy", "decoding_cost"]
    for name in names:
        md = (tmp_path / "out" / f"{name}.md").read_text()
        assert md.startswith("**") and "| --- |" not in md
        with open(tmp_path / "out" / f"{name}.csv", newline="") as handle:
            header = next(csv.reader(handle))
        assert header[0] in ("model", "strategy")
        tex = (tmp_path / "out" / f"{name}.tex").read_text()
        assert "\\begin{tabular}" in tex and "\\bottomrule" in tex


def test_table_3_is_also_written_under_its_name_of_0_1_until_0_2(manifest, tmp_path):
    """``quality`` was ``bleu_ter`` in 0.1: its files are written under both names, the same table, the old ones as
    0.1 wrote them (the LaTeX label tab:bleu-ter), the old Markdown opening with a line that says so."""
    assert tables.main(["--manifest-json", json.dumps(manifest), "--outdir", str(tmp_path)]) == 0
    new, old = (tmp_path / "quality.md").read_text(), (tmp_path / "bleu_ter.md").read_text()
    assert old == "bleu_ter.md is now quality.md (the same table); the old name goes in docnmt 0.2.\n\n" + new
    assert (tmp_path / "bleu_ter.csv").read_bytes() == (tmp_path / "quality.csv").read_bytes()
    new_tex, old_tex = (tmp_path / "quality.tex").read_text(), (tmp_path / "bleu_ter.tex").read_text()
    assert "\\label{tab:bleu-ter}" in old_tex
    assert old_tex == new_tex.replace("\\label{tab:quality}", "\\label{tab:bleu-ter}")


def test_latex_escapes_marks_and_special_characters():
    tex = tables.Table("a_b", "50% of a_b & c", ["strategy", "x"], [["doc-trans", "33.4*†"]]).latex()
    assert "33.4$^*$$^\\dagger$" in tex and "50\\% of a\\_b \\& c" in tex and "\\label{tab:a-b}" in tex


def test_inline_manifest_gives_the_same_tables(manifest, tmp_path):
    tables.main(["--manifest-json", json.dumps(manifest), "--outdir", str(tmp_path / "a")])
    (tmp_path / "m.json").write_text(json.dumps(manifest))
    tables.main(["--manifest", str(tmp_path / "m.json"), "--outdir", str(tmp_path / "b")])
    assert (tmp_path / "a" / "quality.md").read_text() == (tmp_path / "b" / "quality.md").read_text()


def test_a_missing_sidecar_is_an_error_naming_it_and_no_table_is_written(manifest, tmp_path, capsys):
    manifest["tasks"]["demo"]["sidecars"]["doc-trans"] = str(tmp_path / "gone.json")
    with pytest.raises(SystemExit):
        tables.main(["--manifest-json", json.dumps(manifest), "--outdir", str(tmp_path / "out")])
    assert f"{tmp_path / 'gone.json'}: decode sidecar not found" in capsys.readouterr().err
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_a_malformed_score_file_names_the_file(manifest, tmp_path, capsys):
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    manifest["tasks"]["demo"]["perplexity"]["document"] = str(broken)
    with pytest.raises(SystemExit):
        tables.main(["--manifest-json", json.dumps(manifest), "--outdir", str(tmp_path / "out")])
    assert "broken.json: expected the JSON of a perplexity score file" in capsys.readouterr().err


def test_plots_are_written(manifest, tmp_path):
    from docnmt.score import plots

    for name in plots.PLOTS:
        out = tmp_path / f"{name}.png"
        assert plots.main([name, "--manifest-json", json.dumps(manifest), "--output", str(out)]) == 0
        assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_tables_carry_the_paper_numbers_and_captions_in_its_order(manifest):
    titles = {t.name: t.title for t in tables.all_tables(manifest)}
    assert list(titles) == ["decoding_cost", "perplexity", "quality", "pronoun_f1", "pronoun_classes",
                            "contrapro_accuracy"]
    assert titles["decoding_cost"].startswith("Table 1: computational cost of decoding")
    assert titles["perplexity"] == "Table 2: perplexity values on the test set for different search strategies"
    assert titles["quality"].startswith("Table 3: BLEU, chrF++, TER and d-BLEU scores (in percent)")
    assert titles["pronoun_f1"].startswith("Table 4: F1 scores (in percent) for pronoun translation")
    assert not titles["contrapro_accuracy"].startswith("Table"), "the paper gives the accuracies in its text"
    assert tables.cost_table(manifest).header[:2] == ["strategy", "paper cost"]


def test_float32_everywhere_adds_no_precision_note(manifest):
    for table in tables.all_tables(manifest):
        assert not [n for n in table.notes if "not float32" in n or "not recorded" in n], table.name


def test_half_precision_is_named_under_every_table_it_moves(manifest, tmp_path):
    for strategy, path in manifest["tasks"]["demo"]["sidecars"].items():
        data = json.loads(open(path).read())
        open(path, "w").write(json.dumps({**data, "dtype": "float16"}))
    document = manifest["tasks"]["demo"]["perplexity"]["document"]
    data = json.loads(open(document).read())
    open(document, "w").write(json.dumps({**data, "dtype": "bfloat16"}))
    accuracy = manifest["tasks"]["demo"]["contrapro_accuracy"]["sentence"]
    data = json.loads(open(accuracy).read())
    del data["dtype"]
    open(accuracy, "w").write(json.dumps(data))
    notes = {t.name: " ".join(t.notes) for t in tables.all_tables(manifest)}
    for name in ("decoding_cost", "perplexity", "quality", "pronoun_f1"):
        assert "The search in float16, not float32 as the paper (demo sentence-level, " in notes[name], name
    assert "The forced scoring in bfloat16, not float32 as the paper (demo document-level; decode.dtype)" \
        in notes["perplexity"]
    assert "demo sentence-level-level" not in notes["perplexity"]
    assert "Precision of the contrastive scoring not recorded (demo sentence-level)" in notes["contrapro_accuracy"]
    assert "dtype: float16" in notes["decoding_cost"]


# ---- context usage (CXMI) -------------------------------------------------------------
def cxmi_summary(cxmi, n=6):
    return {"sentences": n, "tokens": 5 * n, "cxmi": cxmi, "cxmi_per_token": cxmi / 5,
            "cxmi_length_normalized": cxmi / 5, "positive_share": 0.5}


@pytest.fixture
def context_manifest(manifest, tmp_path):
    spec = manifest["tasks"]["demo"]
    cx = tmp_path / "cxmi.json"
    cx.write_text(json.dumps({
        "dtype": "float32", "reference": cxmi_summary(0.25), "reference_sentence_model": cxmi_summary(0.5),
        "subsets": {"ambiguous-antecedent": {"in": cxmi_summary(0.9, 2), "rest": cxmi_summary(0.1, 4)}},
        "strategies": {"sentence-level": {**cxmi_summary(0.0), "exact": True},
                       "last-sentence": {**cxmi_summary(0.3), "exact": False},
                       "doc-trans": {**cxmi_summary(0.375), "exact": True}}}))
    tsv = tmp_path / "cxmi.tsv"
    tsv.write_text("line\tdocid\tposition\ttokens\tp_cxmi\n" + "".join(
        f"{i + 1}\td\t{i + 1}\t5\t{v:.6f}\n" for i, v in enumerate([0.0, 1.2, -0.3, 0.4, 0.0, 0.2])))
    usage = tmp_path / "usage.json"
    part = lambda bleu, f1, reported=True: {"sentences": 1, "BLEU": bleu, "gender_f1": f1,  # noqa: E731
                                            "gender_examples": 1, "gender_reported": reported}
    usage.write_text(json.dumps({
        "share": 0.1, "top_sentences": 1, "rest_sentences": 5, "threshold": 1.2, "min_examples": 100,
        "pronoun_setup": "rule set blonde-de; German tagger HanTa",
        "top": [{"rank": 1, "line": 2, "docid": "d", "position": 2, "p_cxmi": 1.2, "context_source": ["s0"],
                 "context_reference": ["Der Tisch ist neu."], "source": "s1", "reference": "Er passt | gut.",
                 "translations": {"sentence-level": "Es passt gut.", "doc-trans": "Er passt gut."}}],
        "split": {"sentence-level": {"top": part(40.0, 0.0, False), "rest": part(80.0, None)},
                  "doc-trans": {"top": part(100.0, 1.0, False), "rest": part(90.0, 0.5)}}}))
    spec.update(cxmi={"test": str(cx)}, cxmi_sentences={"test": str(tsv)}, context_usage={"test": str(usage)})
    return manifest


def test_context_usage_table_gives_cxmi_per_set_subset_and_strategy(context_manifest):
    table = tables.context_usage_table(context_manifest)
    cells = {row[0]: row[1:] for row in table.rows}
    assert table.header == ["measure", "demo test"]
    assert cells["CXMI (reference)"] == ["0.250"] and cells["CXMI per token (reference)"] == ["0.050"]
    assert cells["CXMI, sentence-level model as context-free term"] == ["0.500"]
    assert cells["CXMI on subset ambiguous-antecedent"] == ["0.900"]
    assert cells["CXMI on the rest (not ambiguous-antecedent)"] == ["0.100"]
    assert cells["CXMI of hyp doc-trans"] == ["0.375"] and cells["CXMI of hyp full-segment"] == ["-"]
    notes = " ".join(table.notes)
    assert "Not in the paper" in notes and "Fernandes et al., ACL 2021" in notes and "ACL 2023" in notes
    assert "Approximate (a last-sentence decode from an older version" in notes and "demo test last-sentence" in notes


def test_context_split_and_top_sentence_tables(context_manifest):
    split = tables.context_split_table(context_manifest)
    assert split.header == ["strategy", "demo test BLEU top 10%", "demo test BLEU rest", "demo test gender F1 top 10%",
                            "demo test gender F1 rest"]
    cells = rows(split)
    assert cells["doc-trans"][1:] == ["100.0", "90.0", "100.0 (few)", "50.0"]
    assert cells["sentence-level"][1:] == ["40.0", "80.0", "0.0 (few)", "nan"]
    assert cells["full-segment"][1:] == ["-"] * 4
    assert any("the 1 sentences with the highest P-CXMI of the reference (P-CXMI >= 1.200) against the other 5" in n
               for n in split.notes)
    top = tables.context_sentences_table(context_manifest)
    assert top.header[-2:] == ["sentence-level", "doc-trans"]
    assert top.rows[0][:5] == ["demo", "test", "1", "2", "1.200"] and top.rows[0][8] == "Er passt | gut."
    assert "| Er passt \\| gut. |" in top.markdown(), "a | inside a cell is escaped in Markdown"
    names = [t.name for t in tables.all_tables(context_manifest)]
    assert names[-3:] == ["context_usage", "context_split", "context_sentences"]


def test_cxmi_histogram_is_drawn(context_manifest, tmp_path):
    from docnmt.score import plots

    out = tmp_path / "cxmi.png"
    assert plots.main(["cxmi", "--manifest-json", json.dumps(context_manifest), "--output", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_mbr_rows_in_every_table_with_d_bleu_and_the_utility_evaluations(manifest, tmp_path):
    """A system with MBR selection (doc-trans+mbr, test set only) is a row "doc-trans, MBR" of every table; Table 3
    gains d-BLEU where the score file has it, Table 1 the utility evaluations, and the notes say what MBR is."""
    write_lines(tmp_path / "test.docids", ["a", "a", "a", "b", "b", "b"])
    args = ["--source", str(tmp_path / "src.en"), "--reference", str(tmp_path / "ref.de")]
    for name in STRATEGIES + ["doc-trans+mbr", "doc-trans+mbr-1", "doc-trans+mbr-4"]:
        write_lines(tmp_path / f"mbr.{name}.txt", HYPS.get(name, HYPS["sentence-level"]))
        args += ["--system", f"{name}={tmp_path / f'mbr.{name}.txt'}"]
    task = manifest["tasks"]["demo"]
    task["bleu_ter"]["test"] = str(tmp_path / "mbr.bleu_ter.json")
    sacrebleu_metrics.main(args + ["--docids", str(tmp_path / "test.docids"), "--baseline", "sentence-level",
                         "--bootstrap-samples", "50", "--output", task["bleu_ter"]["test"]])
    task["sidecars"]["doc-trans+mbr"] = sidecar(
        tmp_path / "dtm.json", "doc-trans", 4000, 6.0, mbr={"candidates": "beam", "count": 12, "utility": "chrf",
                                                            "selections": 6, "utility_evaluations": 864})
    manifest["strategies"] = STRATEGIES + ["doc-trans+mbr"]
    manifest["mbr"] = {"candidates": "beam", "count": 12, "utility": "chrf", "epsilon": 0.02, "seed": 1}
    bleu = tables.quality_table(manifest)
    assert bleu.header[1:5] == ["demo test BLEU", "demo test chrF++", "demo test TER", "demo test d-BLEU"]
    mbr_row = rows(bleu)["doc-trans, MBR"]
    assert mbr_row[1] != "-" and mbr_row[5:] == ["-", "-", "-"], "test set only"
    assert any(n.startswith("d-BLEU signature: d-BLEU|nrefs:1") for n in bleu.notes)
    assert any("MBR over 12 beam candidates, utility sentence chrF (fastchrf" in n for n in bleu.notes)
    cost = tables.cost_table(manifest)
    assert cost.header[-3] == "demo utility evaluations"
    assert rows(cost)["doc-trans, MBR"][-3] == "864" and rows(cost)["doc-trans"][-3] == "-"
    assert ("document-level", "hyp doc-trans, MBR") in rows(tables.perplexity_table(manifest))
    assert "doc-trans, MBR" in rows(tables.pronoun_tables(manifest)[0])
    assert "doc-trans, MBR (4)" not in rows(bleu), "the plot's decodes are not rows"
    from docnmt.score import plots

    manifest["mbr_curve"] = {"counts": [12, 1, 4], "tasks": {"demo": ["doc-trans+mbr-1", "doc-trans+mbr-4"]}}
    assert plots.main(["mbr", "--manifest-json", json.dumps(manifest), "--output", str(tmp_path / "mbr.png")]) == 0
    assert (tmp_path / "mbr.png").read_bytes()[:4] == b"\x89PNG"


def test_cost_table_counts_searches_and_positions_per_search(manifest, tmp_path):
    """Table 1's searches leave out the requests that shared an identical request's search, and add a first pass's;
    positions per search compare the work of one search with sentence-level's (what a repeated sentence does not
    change); a sidecar from before requests were recorded has neither."""
    header = tables.cost_table(manifest).header
    at = header.index("demo searches")
    assert header[at + 1] == "demo positions per search ×SL"
    table = rows(tables.cost_table(manifest))
    assert table["sentence-level"][at:at + 2] == ["-", "-"]
    sidecar(tmp_path / "sl.json", "sentence-level", 1000, 2.0, requests=10, repeated_requests=5)
    sidecar(tmp_path / "ls.json", "last-sentence", 2900, 5.0, requests=10, repeated_requests=1)
    sidecar(tmp_path / "dt.json", "doc-trans", 1100, 3.0, requests=6, decoder_positions_with_first_pass=2100,
            seconds_with_first_pass=5.0, first_pass={"decoder_positions": 1000, "requests": 10,
                                                      "repeated_requests": 5})
    table = rows(tables.cost_table(manifest))
    assert table["sentence-level"][at:at + 2] == ["5", "1.00"]
    assert table["last-sentence"][at:at + 2] == ["9", f"{2900 / 9 / 200:.2f}"]
    assert table["doc-trans"][at:at + 2] == ["11", f"{2100 / 11 / 200:.2f}"]
    assert table["full-segment"][at:at + 2] == ["-", "-"]

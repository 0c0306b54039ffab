"""Learned metrics (docnmt.score.comet) from tiny local COMET checkpoints built here (docnmt.score.tiny_comet):
loading offline, scores equal to comet-score's (COMET, Doc-COMET, QE), selection by them (QE reranking and COMET as
MBR's utility) against brute force, every error in one line, Table 3's columns, and the workflow's demo run.

The checkpoints are built, and scored, in unbabel-comet's environment (.venv-comet, `make comet`, which `make test`
runs); the tests that need it skip where it is missing. Nothing is downloaded: every scorer runs with its proxies
pointed at a closed port."""

from __future__ import annotations

import json
import random
import subprocess

import pytest

from docnmt.decode import mbr
from docnmt.decode.metric_client import MetricClient
from docnmt.decode.selection import Selector, comet_pairwise
from docnmt.score import comet, span_table, tables
from docnmt.score.significance import mean_bootstrap_tests, mean_paired_bootstrap
from docnmt.textio import InputError, write_lines
from helpers import COMET_PYTHON, REPO, run_snakemake, tool_env

TRAINING_FIXTURES = {"tiny_comet", "tiny_xcomet"}

SRC = ["The table is new.", "It fits well.", "I like it.", "Are you coming?", "Yes, gladly.", "See you tomorrow.",
       "The lamp is old.", "It is bright."]
REF = ["Der Tisch ist neu.", "Er passt gut.", "Ich mag ihn.", "Kommst du mit?", "Ja, gerne.", "Bis morgen.",
       "Die Lampe ist alt.", "Sie ist hell."]
HYP = ["Der Tisch ist neu.", "Es passt gut.", "Ich mag es.", "Kommen Sie mit?", "Ja.", "Bis morgen.",
       "Die Lampe ist alt.", "Es ist hell."]
DOCIDS = ["a"] * 6 + ["b"] * 2


def offline_env() -> dict:
    """The scorers' environment: no hub, and any network request would fail at once."""
    env = tool_env()
    env.update(HTTP_PROXY="http://127.0.0.1:9", HTTPS_PROXY="http://127.0.0.1:9", NO_PROXY="",
               HF_HUB_ETAG_TIMEOUT="1")
    env.pop("HF_HUB_OFFLINE", None)
    return env


def comet_run(*args, check=True) -> subprocess.CompletedProcess:
    result = subprocess.run([str(COMET_PYTHON), *map(str, args)], capture_output=True, text=True, env=offline_env(),
                            timeout=600)
    assert not check or result.returncode == 0, result.stderr[-3000:]
    return result


@pytest.fixture(scope="session")
def tiny_comet(mechanics_demo):
    """A reference-based (regression) and a reference-free (kiwi) checkpoint: the mechanics demo's, which make
    test-mechanics makes in .venv-comet from its corpus (docnmt.score.tiny_comet, 10 steps, 300 pieces)."""
    if not COMET_PYTHON.exists():
        pytest.skip(f"unbabel-comet's environment {COMET_PYTHON.parent.parent} is missing: run `make comet`")
    return mechanics_demo / "models" / "comet-da", mechanics_demo / "models" / "comet-kiwi"


@pytest.fixture(scope="session")
def tiny_xcomet(mechanics_demo):
    """A tiny XCOMET (docnmt.score.tiny_comet --kind xcomet), left random: its tagger marks error spans at random.
    The mechanics demo's."""
    if not COMET_PYTHON.exists():
        pytest.skip(f"unbabel-comet's environment {COMET_PYTHON.parent.parent} is missing: run `make comet`")
    return mechanics_demo / "models" / "xcomet"


def comet_args(model, src, mts, out, ref=None, context=False) -> list:
    """comet-score's command line for several files at once, its scores to the JSON file ``out`` (its --to_json
    keeps every digit, where its printout rounds to 4)."""
    return ["-s", src, "-t", *mts, "--model", model / "checkpoints" / "model.ckpt", "--gpus", "0", "--quiet",
            "--batch_size", "16", "--to_json", out] + (["-r", ref] if ref else []) \
        + (["--enable-context"] if context else [])


def read_comet_json(out) -> list[tuple[float, list[float], list]]:
    """comet-score's --to_json file: per file given, in order, (system score, segment scores, error spans)."""
    scored = []
    for entries in json.loads(out.read_text()).values():
        segments = [entry["COMET"] for entry in entries]
        scored.append((sum(segments) / len(segments), segments, [entry.get("errors", []) for entry in entries]))
    return scored


# ---- without unbabel-comet: checks, context, significance, selection, tables ----------------------------------
def fake_checkpoint(folder, **hparams):
    (folder / "checkpoints").mkdir(parents=True)
    (folder / "checkpoints" / "model.ckpt").write_bytes(b"not loaded")
    encoder = folder / "encoder"
    encoder.mkdir()
    values = {"class_identifier": "regression_metric", "pretrained_model": str(encoder), "pool": "avg", **hparams}
    (folder / "hparams.yaml").write_text("".join(f"{k}: {json.dumps(v)}\n" for k, v in values.items()))
    return folder


def test_checkpoints_are_checked_before_loading_and_each_problem_is_one_line_naming_the_file(tmp_path):
    with pytest.raises(InputError, match="COMET checkpoint 'x' not found .*nothing is downloaded") as err:
        comet.checkpoint("x", tmp_path / "missing")
    assert str(tmp_path / "missing") in str(err.value)
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="expected checkpoints/model.ckpt"):
        comet.checkpoint("x", tmp_path / "empty")
    hub = fake_checkpoint(tmp_path / "hub", pretrained_model="xlm-roberta-large")
    with pytest.raises(InputError) as err:
        comet.checkpoint("wmt22-comet-da", hub)
    message = str(err.value)
    assert str(hub / "hparams.yaml") in message and "\n" not in message
    assert "pretrained_model 'xlm-roberta-large' is not a local folder" in message
    assert "set pretrained_model: /absolute/path/to/it in this file" in message
    odd = fake_checkpoint(tmp_path / "odd", class_identifier="bleurt")
    with pytest.raises(InputError, match="expected class_identifier, one of .* found 'bleurt'"):
        comet.checkpoint("odd", odd)


@pytest.mark.parametrize("hparams, reference_free, columns", [
    ({}, False, ["COMET[m]", "Doc-COMET[m]"]),
    ({"class_identifier": "referenceless_regression_metric"}, True, ["QE[m]", "Doc-QE[m]"]),
    ({"class_identifier": "unified_metric", "input_segments": ["mt", "src"]}, True, ["QE[m]"]),
    ({"class_identifier": "unified_metric", "input_segments": ["mt", "src", "ref"]}, False, ["COMET[m]"]),
    ({"pool": "cls"}, False, ["COMET[m]"]),
    ({"class_identifier": "xcomet_metric"}, False, ["XCOMET[m]"]),
    ({"class_identifier": "xcomet_metric", "input_segments": ["mt", "src"]}, True, ["XCOMET-QE[m]"]),
])
def test_what_a_checkpoint_scores_follows_its_class(tmp_path, hparams, reference_free, columns):
    point = comet.checkpoint("m", fake_checkpoint(tmp_path / "m", **hparams))
    assert point.reference_free is reference_free and point.columns(2) == columns
    assert point.columns(0) == columns[:1]


def test_the_workflow_refuses_a_reference_based_checkpoint_for_qe_and_an_unknown_name(tmp_path):
    from docnmt.workflow import metrics

    da = fake_checkpoint(tmp_path / "da")
    config = {"metrics": {"comet": {"da": str(da)}}, "qe_rerank": {"checkpoint": "da"}, "mbr": {"utility": "chrf"},
              "docmbr": {"utility": "chrf"}}
    with pytest.raises(ValueError, match="'qe_rerank.checkpoint': checkpoint 'da' .* is reference-based; QE "
                                         "reranking needs a reference-free checkpoint"):
        metrics.check(config)
    config["qe_rerank"]["checkpoint"], config["mbr"]["utility"] = None, "comet:nope"
    with pytest.raises(ValueError, match="'mbr.utility': 'nope' is not a checkpoint of metrics.comet"):
        metrics.check(config)
    config["mbr"]["utility"], config["docmbr"]["utility"] = "chrf", "comet:nope"
    with pytest.raises(ValueError, match="'docmbr.utility': 'nope' is not a checkpoint of metrics.comet"):
        metrics.check(config)
    config["docmbr"]["utility"] = "chrf"
    config["metrics"]["comet"]["gone"] = str(tmp_path / "gone")
    with pytest.raises(ValueError, match="config key 'metrics.comet.gone': .* not found"):
        metrics.check(config)


def test_doc_comet_context_is_the_previous_sentences_of_the_same_document():
    joined = comet.with_context(HYP, DOCIDS, 2, "</s>", context=REF)
    assert joined[0] == HYP[0]
    assert joined[1] == f"{REF[0]} </s> {HYP[1]}"
    assert joined[3] == f"{REF[1]} </s> {REF[2]} </s> {HYP[3]}"
    assert joined[6] == HYP[6]  # a new document: no context from the last one
    assert joined[7] == f"{REF[6]} </s> {HYP[7]}"


def test_paired_bootstrap_of_segment_means_marks_a_real_difference_only():
    base = [0.5 + 0.01 * (i % 7) for i in range(200)]
    result = mean_paired_bootstrap({"a": base, "same": list(base), "better": [s + 0.05 for s in base]}, "a", 200)
    assert result["a"]["score"] == pytest.approx(sum(base) / len(base), abs=1e-6)
    assert not result["same"]["significant"] and result["same"]["identical_to_baseline"]
    assert result["better"]["significant"] and result["better"]["p_value"] < 0.05


def test_the_tests_of_a_score_file_pair_the_segments_both_systems_scored():
    """mean_bootstrap_tests (COMET's, MetricX's and the judge's paired_bootstrap): each baseline present, every system
    per column as mean_paired_bootstrap gives it; where a segment is None in either system (an unparsed answer), the
    pair leaves it out; an absent baseline, or a system alone, has no tests."""
    base = [0.5 + 0.01 * (i % 7) for i in range(60)]
    better = [s + 0.05 for s in base]
    holes = [None if i % 5 == 0 else s for i, s in enumerate(better)]
    tests = mean_bootstrap_tests({"X": {"a": base, "b": better}, "Y": {"a": base, "b": holes}}, ["a", "zz"], 100,
                                 {"X": "X|sig", "Y": "Y|sig"})
    assert list(tests) == ["a"] and tests["a"]["signatures"] == {"X": "X|sig|bs:100", "Y": "Y|sig|bs:100"}
    assert tests["a"]["systems"]["b"]["X"] == mean_paired_bootstrap({"a": base, "b": better}, "a", 100)["b"]
    kept = [i for i in range(60) if i % 5]
    assert tests["a"]["systems"]["b"]["Y"] == mean_paired_bootstrap(
        {"a": [base[i] for i in kept], "b": [better[i] for i in kept]}, "a", 100)["b"]
    assert "Y" not in tests["a"]["systems"]["a"] and "X" in tests["a"]["systems"]["a"]
    assert mean_bootstrap_tests({"X": {"a": base}}, ["a"], 100) == {}


class FakeScorer:
    """A learned metric that scores a candidate by its length against the reference's (or alone, for QE)."""

    def __init__(self):
        self.calls = []

    def score(self, src, mt, ref=None):
        self.calls.append((list(src), list(mt), None if ref is None else list(ref)))
        return [-abs(len(m) - len(r)) if ref else len(m) for m, r in zip(mt, ref or mt)]

    def record(self):
        return {"forward_passes": sum(len(c[1]) for c in self.calls)}


def test_qe_reranking_keeps_the_best_qe_score_and_counts_n_forward_passes():
    scorer = FakeScorer()
    selector = Selector(mbr.Settings(count=3, utility="qe:kiwi"), scorer)
    assert selector.select(["a b", "a b c d", "a"], "x y") == 1
    assert scorer.calls == [(["x y"] * 3, ["a b", "a b c d", "a"], None)]
    assert selector.record()["utility_evaluations"] == 3 and selector.record()["metric"]["forward_passes"] == 3


def test_comet_as_mbr_utility_scores_every_ordered_pair_with_the_source():
    scorer = FakeScorer()
    texts = ["abc", "abcd", "abcdefgh"]
    matrix = comet_pairwise(scorer, texts, "src")
    assert matrix == [[-abs(len(a) - len(b)) for b in texts] for a in texts]
    src, mt, ref = scorer.calls[0]
    assert src == ["src"] * 9 and mt[:3] == ["abc"] * 3 and ref[:3] == texts
    selector = Selector(mbr.Settings(count=3, utility="comet:da"), FakeScorer())
    assert selector.select(texts, "src") == 1 and selector.evaluations == 9


def test_a_learned_utility_needs_its_checkpoint_on_the_command_line(capsys):
    from docnmt.decode import cli

    base = ["--strategy", "doc-trans", "--model", "m.pt", "--src", "s", "--docids", "d", "--tgt-lang", "de",
            "--output-bpe", "o", "--output", "o", "--sidecar", "o"]
    for extra, message in ((["--qe-rerank"], "--qe-rerank needs --comet-checkpoint NAME=FOLDER"),
                           (["--mbr", "--mbr-utility", "comet:da"], "comet:da needs --comet-checkpoint da=FOLDER"),
                           (["--mbr", "--qe-rerank"], "--mbr and --qe-rerank are two selections")):
        with pytest.raises(SystemExit) as stopped:
            cli.main(base + extra)
        assert stopped.value.code == 2 and message in capsys.readouterr().err


def test_systems_with_qe_reranking_are_named_and_labelled_as_mbr_systems():
    from docnmt.decode import variants

    assert variants.system_name("doc-trans", kind="qe") == "doc-trans+qe"
    assert variants.parse_system("doc-trans+qe") == ("doc-trans", "qe", None)
    assert variants.parse_system("doc-trans+mbr-4") == ("doc-trans", "mbr", 4)
    assert variants.label("doc-trans+qe") == "doc-trans, QE reranked"


def test_table_3_gets_a_column_per_learned_metric_with_its_signature_and_marks(tmp_path):
    bleu = {"systems": {s: {m: {"score": 30.0, "signature": f"{m}-sig"} for m in ("BLEU", "chrF++", "TER")}
                        for s in ("sentence-level", "doc-trans")}, "paired_bootstrap": {}}
    comet = {"metrics": {"da": {"columns": ["COMET[da]", "Doc-COMET[da]"]}, "kiwi": {"columns": ["QE[kiwi]"]}},
             "signatures": {"COMET[da]": "COMET|model:da", "Doc-COMET[da]": "Doc-COMET|model:da",
                            "QE[kiwi]": "QE|model:kiwi"},
             "systems": {"sentence-level": {"COMET[da]": {"score": 0.81234}, "Doc-COMET[da]": {"score": 0.8},
                                            "QE[kiwi]": {"score": 0.7}},
                         "doc-trans": {"COMET[da]": {"score": 0.83}, "Doc-COMET[da]": {"score": 0.84},
                                       "QE[kiwi]": {"score": 0.69}}},
             "paired_bootstrap": {"sentence-level": {"systems": {"doc-trans": {"Doc-COMET[da]": {"significant": True}}}}}}
    (tmp_path / "bleu.json").write_text(json.dumps(bleu))
    (tmp_path / "comet.json").write_text(json.dumps(comet))
    manifest = {"strategies": ["sentence-level", "doc-trans"],
                "tasks": {"demo": {"bleu_ter": {"test": str(tmp_path / "bleu.json")},
                                   "comet": {"test": str(tmp_path / "comet.json")}}}}
    table = tables.quality_table(manifest)
    assert table.header[-3:] == ["demo test COMET[da]", "demo test Doc-COMET[da]", "demo test QE[kiwi]"]
    assert table.rows[0][-3:] == ["81.23", "80.00", "70.00"]
    assert table.rows[1][-3:] == ["83.00", "84.00*", "69.00"]
    assert "Doc-COMET[da] signature: Doc-COMET|model:da" in table.notes
    assert any(note.startswith("COMET[NAME], QE[NAME]: the mean segment score") for note in table.notes)


# ---- in unbabel-comet's environment ------------------------------------------------------------------------
#: QE reranking's and COMET-MBR's candidates of one source sentence.
CANDIDATES = ["Er passt gut.", "Es passt gut.", "Passt gut.", "Er passt sehr gut hier."]
#: The mechanics demo's systems that its COMET rule scored and Table 3 shows in this order (config_mechanics.yaml).
MECHANICS_SYSTEMS = ("sentence-level", "doc-trans", "sentence-level+qe")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("comet-files")
    for name, lines in (("src.en", SRC), ("ref.de", REF), ("hyp.de", HYP), ("docids", DOCIDS)):
        write_lines(root / name, lines)
    # Doc-COMET's reference: comet-score --enable-context on the files with the context already joined (Vernikos et al.)
    joined = root / "joined"
    joined.mkdir()
    write_lines(joined / "src.en", comet.with_context(SRC, DOCIDS, 2, "</s>"))
    write_lines(joined / "hyp.de", comet.with_context(HYP, DOCIDS, 2, "</s>", context=REF))
    write_lines(joined / "ref.de", comet.with_context(REF, DOCIDS, 2, "</s>"))
    # QE reranking's candidates, and COMET-MBR's ordered pairs of them
    write_lines(root / "cand.src", [SRC[1]] * len(CANDIDATES))
    write_lines(root / "cand.de", CANDIDATES)
    pairs = [(a, b) for a in CANDIDATES for b in CANDIDATES]
    write_lines(root / "pairs.src", [SRC[1]] * len(pairs))
    write_lines(root / "pairs.mt", [a for a, _ in pairs])
    write_lines(root / "pairs.ref", [b for _, b in pairs])
    return root


@pytest.fixture(scope="module")
def reference(files, tiny_comet, tiny_xcomet, mechanics_demo):
    """comet-score's scores of everything this module compares with, computed by comet-score's own code in one
    process of unbabel-comet's environment (tests/comet_side.py): name -> per file given, (system score, segment
    scores, error spans)."""
    from docnmt import layout

    da, kiwi = tiny_comet
    corpus = mechanics_demo / "data/demo/corpus"
    hyps = [mechanics_demo / layout.decode_file("demo", "test", s, "txt") for s in MECHANICS_SYSTEMS]
    jobs = {
        "da": (da, files / "src.en", [files / "hyp.de"], files / "ref.de", False),
        "kiwi": (kiwi, files / "src.en", [files / "hyp.de"], None, False),
        "doc-comet": (da, files / "joined/src.en", [files / "joined/hyp.de"], files / "joined/ref.de", True),
        "xcomet": (tiny_xcomet, files / "src.en", [files / "hyp.de"], files / "ref.de", False),
        "qe-candidates": (kiwi, files / "cand.src", [files / "cand.de"], None, False),
        "mbr-pairs": (da, files / "pairs.src", [files / "pairs.mt"], files / "pairs.ref", False),
        "mechanics-da": (da, corpus / "test.en", hyps, corpus / "test.de", False),
        "mechanics-kiwi": (kiwi, corpus / "test.en", hyps, None, False),
    }
    args = [comet_args(model, src, mts, files / f"{name}.comet.json", ref, context)
            for name, (model, src, mts, ref, context) in jobs.items()]
    (files / "jobs.json").write_text(json.dumps([[str(a) for a in job] for job in args]), encoding="utf-8")
    comet_run(REPO / "tests" / "comet_side.py", files / "jobs.json")
    return {name: read_comet_json(files / f"{name}.comet.json") for name in jobs}


def test_comet_side_scores_as_the_comet_score_command_does(tiny_comet, files, reference):
    """The reference scores of this module come from comet-score's own code in one process (tests/comet_side.py):
    here the ``comet-score`` console script itself, in a process of its own, gives the same, digit for digit."""
    da, _ = tiny_comet
    out = files / "cli.comet.json"
    result = subprocess.run([str(COMET_PYTHON.parent / "comet-score"),
                             *map(str, comet_args(da, files / "src.en", [files / "hyp.de"], out, files / "ref.de"))],
                            capture_output=True, text=True, env=offline_env(), timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    assert read_comet_json(out) == reference["da"]


def test_scores_equal_comet_scores_for_comet_doc_comet_and_qe_offline(tiny_comet, files, reference):
    da, kiwi = tiny_comet
    out = files / "out"
    comet_run("-m", "docnmt.score.comet", "score", "--source", files / "src.en", "--reference", files / "ref.de",
              "--docids", files / "docids", "--system", f"sentence-level={files / 'ref.de'}",
              "--system", f"doc-trans={files / 'hyp.de'}", "--checkpoint", f"tiny-da={da}",
              "--checkpoint", f"tiny-kiwi={kiwi}", "--baseline", "sentence-level", "--bootstrap-samples", "100",
              "--output", out.with_suffix(".json"), "--segments", out.with_suffix(".jsonl"))
    result = json.loads(out.with_suffix(".json").read_text())
    segments = {(r["metric"], r["system"]): r["scores"] for r in map(json.loads, out.with_suffix(".jsonl").open())}
    assert result["metrics"]["tiny-kiwi"]["reference_free"] and result["forward_passes"] == 3 * 2 * len(SRC)
    assert set(result["signatures"]) == {"COMET[tiny-da]", "Doc-COMET[tiny-da]", "QE[tiny-kiwi]"}
    assert "|model:tiny-da|class:regression_metric|" in result["signatures"]["COMET[tiny-da]"]

    ((system, by_segment, _),) = reference["da"]
    assert result["systems"]["doc-trans"]["COMET[tiny-da]"]["score"] == pytest.approx(system, abs=1e-6)
    assert segments[("COMET[tiny-da]", "doc-trans")] == pytest.approx(by_segment, abs=1e-6)
    ((system, by_segment, _),) = reference["kiwi"]
    assert segments[("QE[tiny-kiwi]", "doc-trans")] == pytest.approx(by_segment, abs=1e-6)
    ((system, by_segment, _),) = reference["doc-comet"]
    assert segments[("Doc-COMET[tiny-da]", "doc-trans")] == pytest.approx(by_segment, abs=1e-6)
    assert result["systems"]["doc-trans"]["Doc-COMET[tiny-da]"]["score"] == pytest.approx(system, abs=1e-6)
    assert by_segment != pytest.approx(segments[("COMET[tiny-da]", "doc-trans")], abs=1e-6)  # context matters
    compared = result["paired_bootstrap"]["sentence-level"]["systems"]["doc-trans"]["COMET[tiny-da]"]
    assert 0 < compared["p_value"] <= 1  # sacrebleu's p-value is at least 1/(n+1)
    assert compared["significant"] == (compared["p_value"] < 0.05 and not compared["identical_to_baseline"])


def test_xcomet_scores_and_error_spans_equal_comet_scores_and_the_tables_count_them(tiny_xcomet, files, reference):
    """An XCOMET checkpoint: its column XCOMET[NAME], each segment's score and error spans as comet-score gives them
    (its --to_json's "COMET" and "errors"), written per system with --error-spans; the table xcomet_spans counts
    them by severity and names the commonest."""
    out = files / "xcomet"
    comet_run("-m", "docnmt.score.comet", "score", "--source", files / "src.en", "--reference", files / "ref.de",
              "--docids", files / "docids", "--system", f"sentence-level={files / 'ref.de'}",
              "--system", f"doc-trans={files / 'hyp.de'}", "--checkpoint", f"tiny-x={tiny_xcomet}",
              "--baseline", "sentence-level", "--bootstrap-samples", "100", "--output", out.with_suffix(".json"),
              "--segments", out.with_suffix(".jsonl"), "--error-spans", out.with_suffix(".spans.jsonl"))
    result = json.loads(out.with_suffix(".json").read_text())
    assert result["columns"] == ["XCOMET[tiny-x]"]
    assert "XCOMET|model:tiny-x|class:xcomet_metric|" in result["signatures"]["XCOMET[tiny-x]"]
    spans = {r["system"]: r["spans"] for r in map(json.loads, out.with_suffix(".spans.jsonl").open())}
    ((system, _, errors),) = reference["xcomet"]
    assert result["systems"]["doc-trans"]["XCOMET[tiny-x]"]["score"] == pytest.approx(system, abs=1e-6)
    assert [[{k: pytest.approx(v, abs=1e-6) if k == "confidence" else v for k, v in span.items()}
             for span in segment] for segment in spans["doc-trans"]] == errors
    assert any(spans["doc-trans"]), "the random tagger marks spans: the comparison compares something"
    assert len(spans["doc-trans"]) == len(SRC)
    table = span_table.xcomet_spans_table({"strategies": ["sentence-level", "doc-trans", "cheating"], "tasks": {
        "t": {"comet_error_spans": {"test": str(out.with_suffix(".spans.jsonl"))}}}})
    assert table.header == ["strategy", "t XCOMET[tiny-x] segments with spans", "t XCOMET[tiny-x] minor/major/critical",
                            "t XCOMET[tiny-x] commonest spans"]
    row = table.rows[1]
    flat = [span for segment in spans["doc-trans"] for span in segment]
    assert row[1] == f"{sum(1 for s in spans['doc-trans'] if s)}/{len(SRC)}"
    assert row[2] == "/".join(str(sum(s["severity"] == k for s in flat)) for k in ("minor", "major", "critical"))
    assert row[3].count(" x") == min(span_table.COMMONEST_SPANS, len({(s["text"].strip(), s["severity"]) for s in flat}))
    assert table.rows[2][1:] == ["-", "-", "-"]


def test_qe_reranking_and_comet_mbr_choose_what_brute_force_with_comet_score_chooses(tiny_comet, files, reference):
    da, kiwi = tiny_comet
    source, candidates = SRC[1], CANDIDATES
    ((_, qe, _),) = reference["qe-candidates"]
    with MetricClient(str(COMET_PYTHON), "tiny-kiwi", kiwi, qe=True) as client:
        selector = Selector(mbr.Settings(count=4, utility="qe:tiny-kiwi"), client)
        assert selector.select(candidates, source) == max(range(4), key=lambda i: (qe[i], -i))
        assert client.record()["forward_passes"] == 4
    ((_, utilities, _),) = reference["mbr-pairs"]
    expected = [sum(utilities[4 * i:4 * i + 4]) / 4 for i in range(4)]
    with MetricClient(str(COMET_PYTHON), "tiny-da", da) as client:
        selector = Selector(mbr.Settings(count=4, utility="comet:tiny-da"), client)
        assert selector.expected(candidates, source) == pytest.approx(expected, abs=1e-6)
        assert selector.select(candidates, source) == max(range(4), key=lambda i: (expected[i], -i))


def test_a_decode_with_comet_as_mbr_utility_records_the_metrics_forward_passes(toy, tiny_comet, tmp_path):
    """The decode CLI with --mbr-utility comet:NAME: its scorer in unbabel-comet's environment (the env file of
    `docnmt.score.comet env`), n^2 forward passes per selection, in the sidecar with the checkpoint's signature."""
    import sys

    root, checkpoint, _ = toy
    da, _ = tiny_comet
    comet_run("-m", "docnmt.score.comet", "env", "--output", tmp_path / "comet-env.json")
    (tmp_path / "test.src").write_text("s3 s7 s11\ns1 s2\ns5 s9 s4 s8\n", encoding="utf-8")
    (tmp_path / "test.docids").write_text("a\na\nb\n", encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "docnmt.decode.cli", "--strategy", "doc-trans", "--doc-trans-mode", "sequential",
         "--model", str(checkpoint), "--data", str(root / "bin"), "--src", str(tmp_path / "test.src"),
         "--docids", str(tmp_path / "test.docids"), "--k", "2", "--src-lang", "en", "--tgt-lang", "de", "--mbr",
         "--mbr-count", "3", "--mbr-utility", "comet:tiny-da", "--comet-checkpoint", f"tiny-da={da}",
         "--comet-env", str(tmp_path / "comet-env.json"), "--output-bpe", str(tmp_path / "o.bpe"),
         "--output", str(tmp_path / "o.txt"), "--sidecar", str(tmp_path / "o.json")],
        capture_output=True, text=True, env=offline_env())
    assert result.returncode == 0, result.stderr[-3000:]
    sidecar = json.loads((tmp_path / "o.json").read_text())
    record = sidecar["mbr"]
    assert record["utility"] == "comet:tiny-da" and record["selections"] == 3
    assert record["utility_evaluations"] == record["metric"]["forward_passes"] > 0
    assert record["metric"]["forward_passes"] % 9 == 0  # n^2 for each selection of n = 3 candidates (or 1: none)
    assert record["metric"]["signature"].startswith("COMET|model:tiny-da|")
    assert "|mbr:beam-3-comet:tiny-da|" in sidecar["signature"]
    assert len((tmp_path / "o.txt").read_text().splitlines()) == 3


def test_qe_with_a_reference_based_checkpoint_stops_with_one_line_naming_hparams(tiny_comet, files):
    da, _ = tiny_comet
    result = comet_run("-m", "docnmt.score.comet", "serve", "--checkpoint", da, "--qe", check=False)
    assert result.returncode == 1 and not result.stdout
    assert f"{da / 'hparams.yaml'}: COMET checkpoint '{da.name}' is reference-based" in result.stderr
    with pytest.raises(InputError, match="the COMET scorer of checkpoint 'da', loading the checkpoint: the child "
                                         r"stopped \(exit status 1\); its last stderr lines: error: .*hparams.yaml: "
                                         "COMET checkpoint 'da' is reference-based"):
        MetricClient(str(COMET_PYTHON), "da", da, qe=True)


def test_the_comet_rules_run_on_the_python_metrics_comet_python_names(mechanics_demo, tmp_path):
    """metrics.comet_python: the rules comet_env and comet run their commands with that Python (a dry run of the
    mechanics demo with another one: both rules' commands, and nothing else, would run again, on it)."""
    python = tmp_path / "my comet" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.symlink_to(COMET_PYTHON)
    from helpers import MECHANICS_CONFIG, TEST_CONFIG

    from docnmt import layout

    result = run_snakemake(mechanics_demo, "--dry-run", "--printshellcmds", "--nolock",
                           layout.score_file("demo", "test", "comet"), "--configfile", TEST_CONFIG, MECHANICS_CONFIG,
                           "--config", f"metrics={{comet_python: '{python}'}}")
    commands = [line.strip() for line in result.stdout.splitlines() if "docnmt.score.comet" in line]
    assert {c.split("docnmt.score.comet ")[1].split()[0] for c in commands} == {"env", "score"}, result.stdout
    for command in commands:  # each runs that Python: by its path, or first on PATH
        assert str(python) in command or f"export PATH='{python.parent}:" in command, command


def test_the_mechanics_demos_tables_show_comet_doc_comet_xcomet_and_a_qe_reranked_row_equal_to_comet_score(
        mechanics_demo, tiny_comet, reference, monkeypatch):
    """The done-when of the learned metrics, on the mechanics demo (make test-mechanics): three checkpoints built
    outside the workflow (COMET, CometKiwi, XCOMET), Table 3 and XCOMET's error spans with their table. The metrics'
    settings there are not config.yaml's (.test/config_mechanics.yaml): one sentence of Doc-COMET context
    (metrics.context), batches of 8 (metrics.batch_size), a timeout of 300 s (metrics.timeout), sentence-level QE
    reranked among 4 instead of doc-trans (qe_rerank.strategies, qe_rerank.count)."""
    from helpers import mechanics_config

    from docnmt import layout
    from docnmt.workflow.tables import score_manifest, table_names

    work = mechanics_demo
    comet_file = layout.score_file("demo", "test", "comet")
    qe_sidecar = json.loads((work / layout.decode_file("demo", "test", "sentence-level+qe", "json")).read_text())
    assert qe_sidecar["mbr"]["utility"] == "qe:tiny-kiwi" and qe_sidecar["mbr"]["metric"]["forward_passes"] > 0
    assert qe_sidecar["strategy"] == "sentence-level" and qe_sidecar["mbr"]["count"] == 4
    assert qe_sidecar["mbr"]["metric"]["timeout"] == 300, "metrics.timeout reaches the decode"
    assert "|batch:8|" in qe_sidecar["mbr"]["metric"]["signature"], "metrics.batch_size reaches the selection"
    assert not (work / layout.decode_file("demo", "test", "doc-trans+qe", "json")).exists()
    scores = json.loads((work / comet_file).read_text())
    assert scores["context"] == 1
    assert "|context:1|batch:8|" in scores["signatures"]["Doc-COMET[tiny-da]"]
    assert "|context:0|batch:8|" in scores["signatures"]["COMET[tiny-da]"]
    validated = mechanics_config()
    monkeypatch.chdir(work)  # its checkpoints' folders are relative to the workflow directory, as the rules see them
    manifest = score_manifest(validated)
    assert "xcomet_spans" in table_names(validated)
    spec = manifest["tasks"]["demo"]
    spans_file = work / spec["comet_error_spans"]["test"]
    spec = {"bleu_ter": {"test": str(work / spec["bleu_ter"]["test"])}, "comet": {"test": str(work / comet_file)},
            "comet_error_spans": {"test": str(spans_file)}}
    table = tables.quality_table({"strategies": manifest["strategies"], "tasks": {"demo": spec}})
    spans = [json.loads(line) for line in spans_file.read_text().splitlines()]
    assert {("XCOMET[tiny-xcomet]", s) for s in MECHANICS_SYSTEMS} <= {(r["metric"], r["system"]) for r in spans}
    shown = span_table.xcomet_spans_table({"strategies": manifest["strategies"], "tasks": {"demo": spec}})
    labels = {"sentence-level": "sentence-level", "doc-trans": "doc-trans",
              "sentence-level+qe": "sentence-level, QE reranked"}
    assert {row[0] for row in shown.rows} >= set(labels.values())
    assert all(row[1].endswith(f"/{len(spans[0]['spans'])}") for row in shown.rows)
    rows = {row[0]: row for row in table.rows}
    columns = {name: table.header.index(f"demo test {name}") for name in
               ("COMET[tiny-da]", "Doc-COMET[tiny-da]", "QE[tiny-kiwi]", "XCOMET[tiny-xcomet]")}
    for system, (da_score, _, _), (kiwi_score, _, _) in zip(MECHANICS_SYSTEMS, reference["mechanics-da"],
                                                            reference["mechanics-kiwi"], strict=True):
        row = rows[labels[system]]
        assert float(row[columns["COMET[tiny-da]"]].rstrip("*†")) == pytest.approx(da_score * 100, abs=0.006)
        assert float(row[columns["QE[tiny-kiwi]"]].rstrip("*†")) == pytest.approx(kiwi_score * 100, abs=0.006)
        assert row[columns["Doc-COMET[tiny-da]"]] != "-"


@pytest.mark.full  # make test-full: the manual's COMET blocks run for real (test_docs.py parses them in make test)
def test_the_scoring_pages_comet_configuration_and_qe_command_run_as_written(trained_demo, tiny_comet, tmp_path):
    """docs/scoring.md's two COMET blocks, as written, on the tiny checkpoints as `/models/wmt22-comet-da` and
    `/models/wmt22-cometkiwi-da` (the root `/models` replaced by a folder here, nothing else):

    * "The configuration.": the block, a config file of its own, given after a config the test builds (a task with
      `models:`, the demo's trained models, on its first two test documents; sentence-level and doc-trans, MBR for
      doc-trans alone, no MBR curve, doc-trans sequential): COMET, Doc-COMET with 2 sentences of context and QE with
      batches of 16, doc-trans QE-reranked among 12 and with COMET as MBR's utility, as the block sets them;
    * "Selection by a learned metric" (by hand): its two commands, through a shell with the console scripts on PATH,
      in a folder where `.venv-comet` is unbabel-comet's environment, `doc/checkpoint_best.pt` and `doc-bin` the
      demo's document-level model and `test.bpe.en`, `test.docids` the workflow's BPE of the same documents: the
      workflow's doc-trans+qe translations."""
    import yaml

    from helpers import doc_blocks, shell_commands

    from docnmt import layout

    page = REPO / "docs/scoring.md"
    (block,) = doc_blocks(page, "yaml", "**The configuration.**")
    commands = shell_commands(page, "### Selection by a learned metric")
    assert [c.split()[0] for c in commands] == [".venv-comet/bin/python", "docnmt-decode"], commands
    da, kiwi = tiny_comet
    models = tmp_path / "models"
    models.mkdir()
    (models / "wmt22-comet-da").symlink_to(da, target_is_directory=True)
    (models / "wmt22-cometkiwi-da").symlink_to(kiwi, target_is_directory=True)
    (tmp_path / "comet.yaml").write_text(block.replace("/models/", f"{models}/"), encoding="utf-8")
    demo = trained_demo
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    ids = (demo / "data/demo/corpus/test.docids").read_text(encoding="utf-8").splitlines()
    first_two = list(dict.fromkeys(ids))[:2]
    keep = sum(1 for d in ids if d in first_two)
    for ext in ("en", "de", "docids"):
        lines = (demo / f"data/demo/corpus/test.{ext}").read_text(encoding="utf-8").splitlines()[:keep]
        (corpus / f"test.{ext}").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    levels = {level: {"checkpoint": str(demo / f"results/demo/models/{level}/checkpoint_best.pt"),
                      "data": str(demo / f"data/demo/bin/{level}")} for level in ("sentence", "document")}
    task = {"src": "en", "tgt": "de", "corpus": {"type": "prepared", "dir": str(corpus)},
            "models": {"k": 3, "bpe_codes": str(demo / "data/demo/bpe/codes"), "tokenize": "moses", **levels}}
    (tmp_path / "task.yaml").write_text(yaml.safe_dump({
        "tasks": ["mine"], "task_settings": {"mine": task}, "strategies": ["sentence-level", "doc-trans"],
        "mbr": {"strategies": ["doc-trans"], "curve": {"strategy": None}}, "doc_trans": {"mode": "sequential"},
        "cad": {"strategies": []}, "docmbr": {"strategies": []}}))
    work = tmp_path / "work"
    comet_file = layout.score_file("mine", "test", "comet")
    run_snakemake(work, "--profile", str(REPO / "profiles/cpu"), "--cores", "2", comet_file, "--configfile",
                  str(tmp_path / "task.yaml"), str(tmp_path / "comet.yaml"), env=offline_env())
    scores = json.loads((work / comet_file).read_text())
    assert set(scores["systems"]) == {"sentence-level", "doc-trans", "doc-trans+mbr", "doc-trans+qe"}
    assert "|context:2|batch:16|" in scores["signatures"]["Doc-COMET[wmt22-comet-da]"]
    assert "|context:0|batch:16|" in scores["signatures"]["COMET[wmt22-comet-da]"]
    assert "QE[wmt22-cometkiwi-da]" in scores["signatures"]
    sidecars = {system: json.loads((work / layout.decode_file("mine", "test", system, "json")).read_text())["mbr"]
                for system in ("doc-trans+qe", "doc-trans+mbr")}
    assert (sidecars["doc-trans+qe"]["utility"], sidecars["doc-trans+qe"]["count"]) == ("qe:wmt22-cometkiwi-da", 12)
    assert sidecars["doc-trans+mbr"]["utility"] == "comet:wmt22-comet-da"
    assert sidecars["doc-trans+mbr"]["metric"]["forward_passes"] > 0
    # the commands by hand, on the same documents and model: the workflow's QE-reranked doc-trans
    hand = tmp_path / "by hand"
    (hand / "doc").mkdir(parents=True)
    (hand / ".venv-comet").symlink_to(COMET_PYTHON.parent.parent, target_is_directory=True)
    (hand / "doc/checkpoint_best.pt").symlink_to(levels["document"]["checkpoint"])
    (hand / "doc-bin").symlink_to(levels["document"]["data"], target_is_directory=True)
    (hand / "test.bpe.en").symlink_to(work / "data/mine/bpe/test.en")
    (hand / "test.docids").symlink_to(corpus / "test.docids")
    for command in commands:
        command = command.replace("/models/", f"{models}/")
        result = subprocess.run(command, shell=True, cwd=hand, env=offline_env(), capture_output=True, text=True,
                                timeout=600)
        assert result.returncode == 0, f"{command}\n{result.stdout[-2000:]}\n{result.stderr[-3000:]}"
    sidecar = json.loads((hand / "hyp.json").read_text())
    assert (sidecar["mbr"]["utility"], sidecar["mbr"]["count"]) == ("qe:kiwi", 12)
    assert sidecar["mbr"]["selections"] == keep and sidecar["mbr"]["metric"]["signature"].startswith("QE|model:kiwi|")
    workflow = work / layout.decode_file("mine", "test", "doc-trans+qe", "txt")
    assert (hand / "hyp.txt").read_text() == workflow.read_text()


def faulty_comet_env(folder, mode: str):
    """A COMET environment file whose Python runs the scorer with a fault (tests/faulty_comet.py)."""
    fake = folder / f"python-{mode}"
    fake.write_text(f'#!/bin/sh\nexec "{COMET_PYTHON}" "{REPO / "tests" / "faulty_comet.py"}" {mode} "$@"\n')
    fake.chmod(0o755)
    (folder / f"comet-env-{mode}.json").write_text(json.dumps({"python": str(fake)}))
    return folder / f"comet-env-{mode}.json"


@pytest.mark.parametrize("mode", ["print", "die", "hang"])
def test_a_scorer_that_prints_dies_or_hangs_ends_the_decode_cleanly(toy, tiny_comet, tmp_path, mode):
    """The selection server's faults (docnmt.decode.metric_client): what it prints to stdout is logged and changes
    nothing; a server that dies or hangs at its second request ends the decode with one line naming the checkpoint,
    the request and its last stderr lines, within the timeout, and no output is written."""
    import sys
    import time

    root, checkpoint, _ = toy
    da, _ = tiny_comet
    (tmp_path / "test.src").write_text("s3 s7 s11\ns1 s2\ns5 s9 s4 s8\n", encoding="utf-8")
    (tmp_path / "test.docids").write_text("a\na\nb\n", encoding="utf-8")

    # The timeout covers the checkpoint's loading too (unbabel-comet's import), which took more than 12 s with three
    # pytest workers on two cores: the faults that never wait for it get a long one, the hang 20 s (the whole decode
    # of the die case, loading included, takes 14 s on a quiet machine).
    timeout = 20 if mode == "hang" else 120

    def decode(name, env_file):
        begin = time.monotonic()
        result = subprocess.run(
            [sys.executable, "-m", "docnmt.decode.cli", "--strategy", "doc-trans", "--model", str(checkpoint),
             "--data", str(root / "bin"), "--src", str(tmp_path / "test.src"), "--docids", str(tmp_path / "test.docids"),
             "--k", "2", "--tgt-lang", "de", "--mbr", "--mbr-count", "3", "--mbr-utility", "comet:tiny-da",
             "--comet-checkpoint", f"tiny-da={da}", "--comet-env", str(env_file), "--comet-timeout", str(timeout),
             "--output-bpe", str(tmp_path / f"{name}.bpe"), "--output", str(tmp_path / f"{name}.txt"),
             "--sidecar", str(tmp_path / f"{name}.json")], capture_output=True, text=True, env=offline_env(),
            timeout=300)
        return result, time.monotonic() - begin

    result, _ = decode(mode, faulty_comet_env(tmp_path, mode))
    if mode == "print":
        assert result.returncode == 0, result.stderr[-3000:]
        assert "a library's progress bar on stdout" in result.stderr
        assert "and a line written to file descriptor 1" in result.stderr
        record = json.loads((tmp_path / "print.json").read_text())["mbr"]  # every answer read, none garbled
        assert record["selections"] == 3 and record["metric"]["forward_passes"] == 9 * record["metric"]["requests"] > 0
        return
    assert result.returncode == 1
    last = result.stderr.strip().splitlines()[-1]
    happened = "the child stopped (exit status 3)" if mode == "die" else \
        f"no answer within {timeout} s (the timeout); the child was killed"
    assert last.startswith(f"error: {da}: the COMET scorer of checkpoint 'tiny-da', request 2 (9 segments, source ")
    assert f": {happened}; its last stderr lines: " in last and f"faulty scorer: {mode} at request 2" in last
    assert not any((tmp_path / f"{mode}.{ext}").exists() for ext in ("bpe", "txt", "json")), "no output"
    assert (tmp_path / f"{mode}.journal").exists(), "the finished chunks stay for the rerun"
    leftover = subprocess.run(["pgrep", "-f", f"python-{mode}|faulty_comet.py {mode}"], capture_output=True, text=True)
    assert leftover.stdout.strip() == "", "the scorer was killed"

"""BLEU/TER with SacreBLEU: equal to the sacrebleu CLI, signatures, paired bootstrap, and bad input; docnmt-perplexity's
options on the toy model (tests/toymodel.py) and bad input of the forced-scoring CLIs."""

import json
import subprocess

import pytest

from helpers import REAL_SAMPLES, tool_env
from docnmt.score import sacrebleu_metrics, significance
from docnmt.textio import write_lines

REF = [
    "Der Tisch steht im Wohnzimmer.",
    "Er passt perfekt.",
    "Ich habe gestern eine Vase gekauft.",
    "Sie war nicht teuer.",
    "Kommst du morgen zum Treffen?",
    "Wir sehen uns am Montag.",
]
HYP_A = [
    "Der Tisch steht im Wohnzimmer.",
    "Es passt perfekt.",
    "Ich kaufte gestern eine Vase.",
    "Sie war nicht teuer.",
    "Kommen Sie morgen zum Treffen?",
    "Wir sehen uns am Montag.",
]
HYP_B = [
    "Der Tisch ist im Wohnzimmer.",
    "Er passt gut.",
    "Ich habe gestern eine Vase gekauft.",
    "Es war nicht teuer.",
    "Kommst du morgen zum Treffen?",
    "Bis Montag.",
]


def files(tmp_path, src=None, ref=REF, **systems):
    write_lines(tmp_path / "src.en", src if src is not None else [f"source {i}" for i in range(len(ref))])
    write_lines(tmp_path / "ref.de", ref)
    args = ["--source", str(tmp_path / "src.en"), "--reference", str(tmp_path / "ref.de")]
    for name, hyps in systems.items():
        path = tmp_path / f"{name}.txt"
        if hyps is None:
            path.write_text("")
        else:
            write_lines(path, hyps)
        args += ["--system", f"{name}={path}"]
    return args


def sacrebleu_cli(ref, hyp, metrics=("bleu", "chrf", "ter")):
    out = subprocess.run(["sacrebleu", str(ref), "-i", str(hyp), "-m", *metrics, "--chrf-word-order", "2", "-b",
                          "-w", "4"], capture_output=True, text=True, env=tool_env(), check=True).stdout
    scores = json.loads(out)  # one metric: a number; several: a list
    return [float(x) for x in (scores if isinstance(scores, list) else [scores])]


def test_bleu_chrf_and_ter_equal_the_sacrebleu_cli(tmp_path):
    args = files(tmp_path, **{"sentence-level": HYP_A, "doc-trans": HYP_B})
    assert sacrebleu_metrics.main(args + ["--output", str(tmp_path / "out.json")]) == 0
    result = json.loads((tmp_path / "out.json").read_text())
    for name in ("sentence-level", "doc-trans"):
        bleu, chrf, ter = sacrebleu_cli(tmp_path / "ref.de", tmp_path / f"{name}.txt")
        assert result["systems"][name]["BLEU"]["score"] == pytest.approx(bleu, abs=1e-4)
        assert result["systems"][name]["chrF++"]["score"] == pytest.approx(chrf, abs=1e-4)
        assert "nc:6|nw:2" in result["systems"][name]["chrF++"]["signature"]
        assert result["systems"][name]["TER"]["score"] == pytest.approx(ter, abs=1e-4)
        assert result["systems"][name]["BLEU"]["signature"].startswith("nrefs:1|case:mixed|eff:no|tok:13a")
        assert "tok:tercom" in result["systems"][name]["TER"]["signature"]
    assert result["sentences"] == len(REF)


@pytest.mark.skipif(not (REAL_SAMPLES / "iwslt17-ted-test-en-de").is_dir(), reason="../shared/real-samples is absent")
def test_bleu_on_real_ted_text_equals_the_cli(tmp_path):
    """Real IWSLT17 German references, a 'hypothesis' of shifted sentences: both scorers agree."""
    from realformat import real_ted_en_de

    src, ref = real_ted_en_de(REAL_SAMPLES / "iwslt17-ted-test-en-de", tmp_path)
    hyp = ref[1:] + ref[:1]
    args = files(tmp_path, src=src, ref=ref, shifted=hyp)
    sacrebleu_metrics.main(args + ["--output", str(tmp_path / "out.json")])
    result = json.loads((tmp_path / "out.json").read_text())
    bleu, _, ter = sacrebleu_cli(tmp_path / "ref.de", tmp_path / "shifted.txt")
    assert result["systems"]["shifted"]["BLEU"]["score"] == pytest.approx(bleu, abs=1e-4)
    assert result["systems"]["shifted"]["TER"]["score"] == pytest.approx(ter, abs=1e-4)


DOCIDS = ["talk1", "talk1", "talk2", "talk2", "talk1", "talk3"]  # talk1's third sentence comes after talk2


def test_document_bleu_is_sacrebleus_corpus_bleu_on_hand_joined_documents(tmp_path):
    from sacrebleu.metrics import BLEU

    write_lines(tmp_path / "test.docids", DOCIDS)
    args = files(tmp_path, **{"sentence-level": HYP_A, "doc-trans": HYP_B})
    sacrebleu_metrics.main(args + ["--docids", str(tmp_path / "test.docids"), "--baseline", "sentence-level",
                         "--bootstrap-samples", "100", "--output", str(tmp_path / "out.json")])
    result = json.loads((tmp_path / "out.json").read_text())
    joined_ref = [f"{REF[0]} {REF[1]} {REF[4]}", f"{REF[2]} {REF[3]}", REF[5]]
    for name, hyp in (("sentence-level", HYP_A), ("doc-trans", HYP_B)):
        joined = [f"{hyp[0]} {hyp[1]} {hyp[4]}", f"{hyp[2]} {hyp[3]}", hyp[5]]
        d_bleu = result["systems"][name]["d-BLEU"]
        assert d_bleu["score"] == pytest.approx(BLEU().corpus_score(joined, [joined_ref]).score, abs=1e-4)
        assert d_bleu["documents"] == 3 and d_bleu["signature"].startswith("d-BLEU|nrefs:1|case:mixed")
        write_lines(tmp_path / f"{name}.joined", joined)
    write_lines(tmp_path / "ref.joined", joined_ref)
    assert result["systems"]["doc-trans"]["d-BLEU"]["score"] == pytest.approx(
        sacrebleu_cli(tmp_path / "ref.joined", tmp_path / "doc-trans.joined", ("bleu",))[0], abs=1e-4)
    test = result["paired_bootstrap"]["sentence-level"]
    assert set(test["signatures"]) == {"BLEU", "chrF++", "TER", "d-BLEU"} and "bs:100" in test["signatures"]["d-BLEU"]
    assert 0 < test["systems"]["doc-trans"]["d-BLEU"]["p_value"] <= 1


def test_document_ids_that_do_not_match_the_source_are_an_error_naming_the_file(tmp_path, capsys):
    write_lines(tmp_path / "test.docids", DOCIDS[:-1])
    args = files(tmp_path, **{"sentence-level": HYP_A})
    with pytest.raises(SystemExit):
        sacrebleu_metrics.main(args + ["--docids", str(tmp_path / "test.docids"), "--output", str(tmp_path / "out.json")])
    assert f"{tmp_path / 'test.docids'}: expected one document id per line of {tmp_path / 'src.en'} (6), found 5" \
        in capsys.readouterr().err
    assert not (tmp_path / "out.json").exists()


def test_paired_bootstrap_against_each_baseline_present(tmp_path):
    args = files(tmp_path, **{"sentence-level": HYP_A, "last-sentence": HYP_B, "cheating": REF})
    sacrebleu_metrics.main(args + ["--baseline", "sentence-level", "--baseline", "last-sentence", "--baseline", "absent",
                         "--bootstrap-samples", "200", "--output", str(tmp_path / "out.json")])
    result = json.loads((tmp_path / "out.json").read_text())
    assert set(result["paired_bootstrap"]) == {"sentence-level", "last-sentence"}
    test = result["paired_bootstrap"]["sentence-level"]
    assert "bs:200" in test["signatures"]["BLEU"] and "seed:12345" in test["signatures"]["BLEU"]
    cheating = test["systems"]["cheating"]["BLEU"]
    assert 0 < cheating["p_value"] <= 1 and cheating["significant"] == (cheating["p_value"] < 0.05)
    assert "p_value" not in test["systems"]["sentence-level"]["BLEU"]
    assert cheating["score"] == pytest.approx(100.0)


def test_the_shared_resamples_give_sacrebleus_paired_test_against_every_baseline():
    """Each system's statistics and resampled scores are made once for every baseline (sacrebleu_metrics.PairedBootstrap):
    scores, means, confidence half-widths and p-values equal sacrebleu's PairedTest, run once per baseline."""
    from sacrebleu.significance import PairedTest

    systems = {"sentence-level": HYP_A, "last-sentence": HYP_B, "doc-trans": HYP_A[:3] + HYP_B[3:], "cheating": REF}
    shared = significance.PairedBootstrap(systems, REF, sacrebleu_metrics._metrics(), 300)
    for baseline in ("sentence-level", "last-sentence"):
        ours = sacrebleu_metrics.paired_bootstrap_against(shared, None, baseline)
        named = [(baseline, systems[baseline])] + [(n, h) for n, h in systems.items() if n != baseline]
        signatures, theirs = PairedTest(named, sacrebleu_metrics._metrics(), references=[REF], test_type="bs", n_samples=300)()
        for (key, signature), metric in zip(signatures.items(), sacrebleu_metrics.METRICS):
            assert ours["signatures"][metric] == str(signature)
            for name, result in zip(theirs["System"], theirs[key]):
                entry = ours["systems"][name][metric]
                assert (entry["score"], entry["mean"], entry["ci"]) == (round(result.score, 4), result.mean, result.ci)
                assert entry.get("p_value") == (None if name == baseline else result.p_value), (baseline, name, metric)


def test_a_system_identical_to_its_baseline_is_never_significant(tmp_path):
    """sacrebleu's paired bootstrap gives identical systems p = 1/(n+1); the tables must not mark them."""
    args = files(tmp_path, **{"sentence-level": HYP_A, "last-sentence": HYP_B, "doc-trans": HYP_B})
    sacrebleu_metrics.main(args + ["--baseline", "last-sentence", "--bootstrap-samples", "100", "--output", str(tmp_path / "o.json")])
    test = json.loads((tmp_path / "o.json").read_text())["paired_bootstrap"]["last-sentence"]["systems"]["doc-trans"]
    for metric in ("BLEU", "TER"):
        assert test[metric]["p_value"] < 0.05  # what sacrebleu says
        assert test[metric]["identical_to_baseline"] is True and test[metric]["significant"] is False


def test_contrapro_scores_only_the_selected_example_lines(tmp_path):
    hyp = list(REF)
    hyp[0] = "ganz falsch"  # a context line: not scored
    args = files(tmp_path, **{"doc-trans": hyp})
    select = tmp_path / "examples.jsonl"
    write_lines(select, [json.dumps({"line": 1}), json.dumps({"line": 4})])
    sacrebleu_metrics.main(args + ["--select", str(select), "--output", str(tmp_path / "out.json")])
    result = json.loads((tmp_path / "out.json").read_text())
    assert result["sentences"] == 2
    assert result["systems"]["doc-trans"]["BLEU"]["score"] == pytest.approx(100.0)


@pytest.mark.parametrize("case, expected", [
    ("short", "expected 6 hypotheses (one per line of"),
    ("empty", "found an empty file"),
    ("mismatch", "expected one reference line per line of"),
    ("missing", "file not found"),
])
def test_bad_input_is_an_error_naming_the_file_and_writes_nothing(tmp_path, capsys, case, expected):
    if case == "short":
        args = files(tmp_path, bad=HYP_A[:-1])
    elif case == "empty":
        args = files(tmp_path, bad=None)
    elif case == "mismatch":
        args = files(tmp_path, src=["one line"], bad=HYP_A)
    else:
        args = files(tmp_path) + ["--system", f"bad={tmp_path / 'absent.txt'}"]
    with pytest.raises(SystemExit):
        sacrebleu_metrics.main(args + ["--output", str(tmp_path / "out.json")])
    err = capsys.readouterr().err
    assert expected in err
    named = {"short": "bad.txt", "empty": "bad.txt", "mismatch": "ref.de", "missing": "absent.txt"}[case]
    assert named in err
    assert not (tmp_path / "out.json").exists()


def test_a_selected_line_out_of_range_names_the_selection_file_and_line(tmp_path, capsys):
    args = files(tmp_path, ok=HYP_A)
    select = tmp_path / "examples.jsonl"
    write_lines(select, [json.dumps({"line": 1}), json.dumps({"line": 99})])
    with pytest.raises(SystemExit):
        sacrebleu_metrics.main(args + ["--select", str(select), "--output", str(tmp_path / "out.json")])
    assert "examples.jsonl:2: expected a line number in 0..5, found 99" in capsys.readouterr().err


@pytest.mark.parametrize("case, expected", [
    ("short", "expected 3 hypotheses (one per line of"),
    ("docids", "expected one document id per line of"),
])
def test_perplexity_bad_input_names_the_file_before_any_model_is_loaded(tmp_path, capsys, case, expected):
    from docnmt.score import perplexity

    write_lines(tmp_path / "test.en", ["a", "b", "c"])
    write_lines(tmp_path / "test.docids", ["d1", "d1", "d2"] if case == "short" else ["d1", "d1"])
    write_lines(tmp_path / "hyp.bpe", ["x", "y"] if case == "short" else ["x", "y", "z"])
    with pytest.raises(SystemExit):
        perplexity.main(["--model", str(tmp_path / "absent.pt"), "--data", str(tmp_path), "--level", "document",
                         "--src", str(tmp_path / "test.en"), "--docids", str(tmp_path / "test.docids"),
                         "--system", f"doc-trans={tmp_path / 'hyp.bpe'}", "--output", str(tmp_path / "ppl.json")])
    err = capsys.readouterr().err
    assert expected in err and ("hyp.bpe" if case == "short" else "test.docids") in err
    assert not (tmp_path / "ppl.json").exists()


def test_perplexity_scores_with_its_k_dtype_and_batch_size(toy, tmp_path, monkeypatch):
    """docnmt-perplexity --level document --k 2 --dtype bfloat16 --batch-size 2 on the toy model (tests/toymodel.py):
    the output records k 2 and bfloat16, the model scored is bfloat16, and the reference's perplexity, tokens and
    forward calls are those of docnmt.score.perplexity's function with a bfloat16 model, k 2 and batches of 2
    requests: k 3 (the third sentence's context two sentences) and float32 give other perplexities, one batch
    fewer forward calls."""
    import torch

    from helpers import captured

    from docnmt.decode.backends import make_searcher
    from docnmt.decode.backends.fairseq.model import Model
    from docnmt.decode.strategies import Decoder
    from docnmt.score import perplexity

    root, checkpoint, _ = toy
    src = ["s3 s7 s11", "s1 s2", "s5 s9 s4 s8", "s6 s10", "s12 s0 s13"]
    ref = ["t11 t7 t3", "t2 t1", "t8 t4 t9 t5", "t10 t6", "t13 t0 t12"]
    docids = ["d1", "d1", "d1", "d2", "d2"]
    for name, lines in (("test.en", src), ("test.de", ref), ("test.docids", docids)):
        write_lines(tmp_path / name, lines)
    made = captured(monkeypatch, "docnmt.decode.backends.make_searcher")
    assert perplexity.main(["--model", str(checkpoint), "--data", str(root / "bin"), "--level", "document",
                            "--k", "2", "--dtype", "bfloat16", "--batch-size", "2", "--src", str(tmp_path / "test.en"),
                            "--docids", str(tmp_path / "test.docids"), "--system",
                            f"reference={tmp_path / 'test.de'}", "--output", str(tmp_path / "ppl.json")]) == 0
    result = json.loads((tmp_path / "ppl.json").read_text())
    (searcher,) = made
    assert (result["k"], result["dtype"]) == (2, "bfloat16")
    assert next(searcher.model.model.parameters()).dtype == torch.bfloat16
    found = result["systems"]["reference"]

    def api(k, dtype="bfloat16", batch_size=2):
        scorer = make_searcher(Model(checkpoint, root / "bin", dtype=dtype), batch_size=batch_size)
        return perplexity.perplexity(scorer, Decoder(scorer, k=k, h=1), src, docids, ref, "document", k), scorer

    expected, scorer = api(2)
    assert found["perplexity"] == expected["perplexity"] and found["tokens"] == expected["tokens"] == 19  # 14 and 5 </s>
    assert searcher.forward_calls == scorer.forward_calls > api(2, batch_size=64)[1].forward_calls
    assert api(3)[0]["perplexity"] != found["perplexity"], "k 3: the third sentence has two context sentences"
    full = api(2, dtype="float32")[0]["perplexity"]
    assert full != found["perplexity"] and full == pytest.approx(found["perplexity"], rel=0.05)


@pytest.mark.parametrize("module, required", [
    ("perplexity", ["--level", "document", "--src", "s", "--docids", "d", "--system", "reference=r"]),
    ("cxmi", ["--src", "s", "--ref", "r", "--docids", "d", "--sentences", "o.tsv"]),
    ("contrastive", ["--level", "document", "--src", "s", "--tgt", "t", "--examples", "e.jsonl"]),
])
@pytest.mark.parametrize("batch_size", ["0", "-2"])
def test_a_forced_scoring_batch_size_below_one_is_a_usage_error_before_any_model_is_loaded(tmp_path, capsys, module,
                                                                                         required, batch_size):
    """--batch-size of the forced-scoring CLIs is a whole number of at least 1, as the decoding CLIs' (it was any
    int: 0 loaded the model, then stopped with a traceback from the searcher)."""
    import importlib

    main = importlib.import_module(f"docnmt.score.{module}").main
    with pytest.raises(SystemExit) as stop:
        main(["--model", str(tmp_path / "absent.pt"), "--data", str(tmp_path), *required, "--batch-size", batch_size,
              "--output", str(tmp_path / "out.json")])
    assert stop.value.code == 2
    assert f"argument --batch-size: expected a whole number of at least 1, got '{batch_size}'" in capsys.readouterr().err

"""P-CXMI and CXMI (docnmt.score.cxmi) on a tiny model, against log-probabilities computed by hand with one plain
forward pass of the fairseq model per (source, target) pair; the context definitions of every strategy; the
context usage split and its errors."""

from __future__ import annotations

import functools
import json

import pytest

from helpers import tool_env

from docnmt.score.context_usage import ranked, top_lines
from docnmt.decode.strategies import STRATEGIES
from docnmt.score.cxmi import CONTEXTS, summary
from docnmt.score.sentence_file import read_sentences
from docnmt.textio import InputError

#: A two-sentence document in the toy language (s_n -> t_n, reversed) and a one-sentence one.
SRC = ["s3 s7 s1", "s4 s2", "s5 s6 s8"]
REF = ["t1 t7 t3", "t2 t4", "t8 t6 t5"]
DOCIDS = ["d1", "d1", "d2"]


@pytest.fixture(scope="module")
def tiny(toy, tmp_path_factory):
    """The toy model of the search tests (conftest.py: trained once per session on the toy reversal task, windows
    of up to two sentences), beside a two-document test set in its language."""
    data, checkpoint, _ = toy
    root = tmp_path_factory.mktemp("cxmi-tiny")
    (root / "model.pt").symlink_to(checkpoint)
    (root / "bin").symlink_to(data / "bin")
    for name, lines in (("test.en", SRC), ("test.de", REF), ("test.docids", DOCIDS)):
        (root / name).write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return root


@functools.lru_cache(maxsize=None)
def load(root):
    from docnmt.decode.backends.fairseq.model import Model

    return Model(root / "model.pt", root / "bin")


def by_hand(root, source: str, target: str) -> float:
    """log p(target's last sentence and its end | source), natural log, from one full forward pass (no cache,
    no batching): the tokens after the target's last <sep> (with the final </s>, or a trailing <sep> itself)."""
    import torch

    model = load(root)
    src = model.encode(source, source=True)
    tgt = model.encode(target)
    if target.endswith("<sep>"):
        tgt = tgt[:-1]  # the sentence ends in <sep>, not </s>
    with torch.no_grad():
        logits, _ = model.model(torch.tensor([src]), torch.tensor([len(src)]), torch.tensor([[model.eos] + tgt[:-1]]))
        lprobs = torch.log_softmax(logits.float(), dim=-1)[0]
    seps = [i for i, t in enumerate(tgt[:-1]) if t == model.sep]
    first = seps[-1] + 1 if seps else 0
    return float(sum(lprobs[i, tgt[i]] for i in range(first, len(tgt))))


def cxmi_cli(root, tmp_path, *extra: str) -> tuple[dict, list[dict]]:
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-m", "docnmt.score.cxmi", "--model", str(root / "model.pt"), "--data", str(root / "bin"),
         "--k", "3", "--src", str(root / "test.en"), "--ref", str(root / "test.de"),
         "--docids", str(root / "test.docids"), "--output", str(tmp_path / "cxmi.json"),
         "--sentences", str(tmp_path / "cxmi.tsv"), *extra],
        capture_output=True, text=True, env=dict(tool_env(), OMP_NUM_THREADS="1"))
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads((tmp_path / "cxmi.json").read_text()), read_sentences(tmp_path / "cxmi.tsv")


def test_p_cxmi_by_hand_empty_context_is_zero_and_swapping_flips_the_sign(tiny, tmp_path):
    result, rows = cxmi_cli(tiny, tmp_path)
    first, second, alone = rows
    # the document's first sentence (and a one-sentence document) has no context: exactly 0, not merely close
    assert first["p_cxmi"] == 0.0 and alone["p_cxmi"] == 0.0
    with_context = by_hand(tiny, f"{SRC[0]} <sep> {SRC[1]}", f"{REF[0]} <sep> {REF[1]}")
    without = by_hand(tiny, SRC[1], REF[1])
    assert second["p_cxmi"] == pytest.approx(with_context - without, abs=1e-4)
    assert abs(second["p_cxmi"]) > 1e-3, "the context changes the tiny model's probabilities"
    # context and no context swapped: log q(y|x) - log q(y|x,C) is the same number with the other sign
    assert without - with_context == pytest.approx(-second["p_cxmi"], abs=1e-4)
    assert second["tokens"] == 3  # t2 t4 </s>
    ref = result["reference"]
    assert ref["cxmi"] == pytest.approx(second["p_cxmi"] / 3, abs=1e-6)
    assert ref["cxmi_per_token"] == pytest.approx(second["p_cxmi"] / (4 + 3 + 4), abs=1e-6)
    assert ref["cxmi_length_normalized"] == pytest.approx(second["p_cxmi"] / 3 / 3, abs=1e-6)


def test_strategy_contexts_by_hand(tiny, tmp_path):
    """Every strategy's hypothesis with the context it was decoded with, against the hand computation."""
    hyps = ["t1 t3", "t2 t4", "t8 t6 t5"]  # one hypothesis file for all: the contexts differ, not the text
    first_pass = ["t7 t3", "t2", "t8 t5"]
    (tmp_path / "hyp.bpe").write_text("".join(h + "\n" for h in hyps), encoding="utf-8")
    (tmp_path / "first.bpe").write_text("".join(h + "\n" for h in first_pass), encoding="utf-8")
    generated = [[], ["t9 t9"], []]
    (tmp_path / "last.json").write_text(json.dumps({"generated_context": generated}), encoding="utf-8")
    systems = [arg for s in CONTEXTS if not STRATEGIES[s].prompted  # source-primed: tests/decode/test_causal_lm.py
               for arg in ("--system", f"{s}={tmp_path / 'hyp.bpe'}")]
    result, rows = cxmi_cli(tiny, tmp_path, *systems, "--first-pass", str(tmp_path / "first.bpe"),
                            "--last-sentence-sidecar", str(tmp_path / "last.json"))
    free = [by_hand(tiny, s, h) for s, h in zip(SRC, hyps)]
    two = f"{SRC[0]} <sep> {SRC[1]}"
    expected = {
        "sentence-level": [0.0, 0.0, 0.0],
        "no-context": [0.0, 0.0, 0.0],
        # one segment of both sentences: the first ends in <sep>, the second follows its own first output
        "full-segment": [by_hand(tiny, two, f"{hyps[0]} <sep>") - free[0],
                         by_hand(tiny, two, f"{hyps[0]} <sep> {hyps[1]}") - free[1], 0.0],
        # the window's own generated context (from the sidecar), not the kept outputs
        "last-sentence": [0.0, by_hand(tiny, two, f"t9 t9 <sep> {hyps[1]}") - free[1], 0.0],
        # right context: the first sentence of its window, so it ends in <sep>
        "first-sentence": [by_hand(tiny, two, f"{hyps[0]} <sep>") - free[0], 0.0, 0.0],
        "2-pass": [0.0, by_hand(tiny, two, f"{first_pass[0]} <sep> {hyps[1]}") - free[1], 0.0],
        "doc-trans": [0.0, by_hand(tiny, two, f"{hyps[0]} <sep> {hyps[1]}") - free[1], 0.0],
        "doc-trans-beam": [0.0, by_hand(tiny, two, f"{hyps[0]} <sep> {hyps[1]}") - free[1], 0.0],
        "cheating": [0.0, by_hand(tiny, two, f"{REF[0]} <sep> {hyps[1]}") - free[1], 0.0],
    }
    for strategy, values in expected.items():
        got = [row[f"p_cxmi[{strategy}]"] for row in rows]
        assert got == pytest.approx(values, abs=1e-4), strategy
        assert result["strategies"][strategy]["exact"], strategy
        assert result["strategies"][strategy]["cxmi"] == pytest.approx(sum(got) / 3, abs=1e-5)
    assert expected["2-pass"][1] != pytest.approx(expected["doc-trans"][1], abs=1e-4), "the contexts differ"


def test_last_sentence_without_recorded_context_is_marked_approximate(tiny, tmp_path):
    (tmp_path / "hyp.bpe").write_text("".join(h + "\n" for h in REF), encoding="utf-8")
    (tmp_path / "last.json").write_text(json.dumps({"strategy": "last-sentence"}), encoding="utf-8")
    result, rows = cxmi_cli(tiny, tmp_path, "--system", f"last-sentence={tmp_path / 'hyp.bpe'}",
                            "--last-sentence-sidecar", str(tmp_path / "last.json"))
    assert result["strategies"]["last-sentence"]["exact"] is False
    # its own previous outputs (here the reference) stand in: the reference's P-CXMI
    assert [r["p_cxmi[last-sentence]"] for r in rows] == pytest.approx([r["p_cxmi"] for r in rows], abs=1e-6)


def test_bad_inputs_name_the_file(tiny, tmp_path):
    import subprocess
    import sys

    (tmp_path / "short.bpe").write_text("t1\n", encoding="utf-8")
    base = [sys.executable, "-m", "docnmt.score.cxmi", "--model", str(tiny / "model.pt"), "--data", str(tiny / "bin"),
            "--src", str(tiny / "test.en"), "--ref", str(tiny / "test.de"), "--docids", str(tiny / "test.docids"),
            "--output", str(tmp_path / "o.json"), "--sentences", str(tmp_path / "o.tsv")]
    env = dict(tool_env(), OMP_NUM_THREADS="1")
    out = subprocess.run(base + ["--system", f"doc-trans={tmp_path / 'short.bpe'}"], capture_output=True, text=True,
                         env=env)
    assert out.returncode != 0 and "short.bpe" in out.stderr and "expected 3 hypotheses" in out.stderr
    out = subprocess.run(base + ["--system", f"2-pass={tmp_path / 'short.bpe'}"], capture_output=True, text=True,
                         env=env)
    assert out.returncode != 0
    out = subprocess.run(base + ["--system", f"my-strategy={tiny / 'test.de'}"], capture_output=True, text=True,
                         env=env)
    assert out.returncode != 0 and "no context definition for my-strategy" in out.stderr
    assert not (tmp_path / "o.json").exists() and not (tmp_path / "o.tsv").exists()


def test_summary_and_sentence_file_errors(tmp_path):
    assert summary([0.5, -0.1, 0.0], [5, 2, 3]) == pytest.approx(
        {"sentences": 3, "tokens": 10, "cxmi": 0.4 / 3, "cxmi_per_token": 0.04,
         "cxmi_length_normalized": (0.1 - 0.05) / 3, "positive_share": 1 / 3})
    bad = tmp_path / "bad.tsv"
    bad.write_text("line\tdocid\tposition\ttokens\tp_cxmi\n1\td\t1\t3\tx\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"bad.tsv:2: expected numbers"):
        read_sentences(bad)
    bad.write_text("line\tdocid\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"bad.tsv:1: expected a header"):
        read_sentences(bad)


def test_top_share_is_at_least_one_sentence_and_ties_keep_line_order():
    rows = [{"line": n, "p_cxmi": v} for n, v in enumerate([0.1, 0.9, 0.5, 0.9, -0.2, 0.0, 0.3, 0.2, 0.1, 0.4], 1)]
    assert ranked(rows)[:4] == [1, 3, 2, 9]  # 0-based; the two 0.9 in line order
    assert top_lines(rows, 0.1) == [1]
    assert top_lines(rows, 0.25) == [1, 3, 2]  # ceil(2.5)
    assert top_lines(rows[:3], 0.1) == [1]
    with pytest.raises(ValueError):
        top_lines(rows, 0)


def test_context_usage_names_a_sentence_file_that_does_not_cover_the_scored_lines(tmp_path, capsys):
    from docnmt.score import context_usage

    for name, lines in (("src.en", ["a", "b", "c"]), ("ref.de", ["x", "y", "z"]), ("hyp.de", ["x", "y", "w"]),
                        ("ids", ["d1", "d1", "d2"])):
        (tmp_path / name).write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    (tmp_path / "short.tsv").write_text("line\tdocid\tposition\ttokens\tp_cxmi\n1\td1\t1\t2\t0.000000\n"
                                        "2\td1\t2\t2\t0.500000\n", encoding="utf-8")
    with pytest.raises(SystemExit):
        context_usage.main(["--sentences", str(tmp_path / "short.tsv"), "--source", str(tmp_path / "src.en"),
                            "--reference", str(tmp_path / "ref.de"), "--docids", str(tmp_path / "ids"),
                            "--system", f"doc-trans={tmp_path / 'hyp.de'}", "--output", str(tmp_path / "out.json")])
    assert f"{tmp_path / 'short.tsv'}: expected P-CXMI for the 3 scored lines" in capsys.readouterr().err
    assert not (tmp_path / "out.json").exists()


def test_the_cli_scores_with_its_k_dtype_and_batch_size(tiny, tmp_path, monkeypatch):
    """docnmt-cxmi --k 2 --dtype bfloat16 --batch-size 1 on a three-sentence document: the summary records k 2 and
    bfloat16, the model scored is bfloat16, and each sentence's P-CXMI and the forward calls are those of the
    module's functions with a bfloat16 model, k 2 and one request a batch; k 3 (the third sentence's context two
    sentences) and float32 give another P-CXMI of the third sentence, batches of 64 fewer forward calls."""
    import torch

    from helpers import captured

    from docnmt.decode.backends import make_searcher
    from docnmt.decode.backends.fairseq.model import Model
    from docnmt.decode.documents import group
    from docnmt.decode.strategies import Decoder
    from docnmt.score import cxmi

    src, ref, docids = SRC[:2] + ["s9 s10"], REF[:2] + ["t10 t9"], ["d1", "d1", "d1"]
    for name, lines in (("test.en", src), ("test.de", ref), ("test.docids", docids)):
        (tmp_path / name).write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    made = captured(monkeypatch, "docnmt.decode.backends.make_searcher")
    assert cxmi.main(["--model", str(tiny / "model.pt"), "--data", str(tiny / "bin"), "--k", "2", "--dtype",
                      "bfloat16", "--batch-size", "1", "--src", str(tmp_path / "test.en"), "--ref",
                      str(tmp_path / "test.de"), "--docids", str(tmp_path / "test.docids"), "--output",
                      str(tmp_path / "cxmi.json"), "--sentences", str(tmp_path / "cxmi.tsv")]) == 0
    result, rows = json.loads((tmp_path / "cxmi.json").read_text()), read_sentences(tmp_path / "cxmi.tsv")
    (searcher,) = made
    assert (result["k"], result["dtype"]) == (2, "bfloat16")
    assert next(searcher.model.model.parameters()).dtype == torch.bfloat16

    def api(k, dtype="bfloat16", batch_size=1):
        scorer = make_searcher(Model(tiny / "model.pt", tiny / "bin", dtype=dtype), batch_size=batch_size)
        found = cxmi.reference_pcxmi(cxmi.PairScorer(Decoder(scorer, k=k, h=1)), group(src, docids, ref=ref), k,
                                     {0, 1, 2})
        return [found[line]["p_cxmi"] for line in range(3)], scorer

    expected, scorer = api(2)
    assert [row["p_cxmi"] for row in rows] == pytest.approx(expected, abs=1e-6) and expected[0] == 0.0
    assert searcher.forward_calls == scorer.forward_calls > api(2, batch_size=64)[1].forward_calls
    assert api(3)[0][2] != pytest.approx(expected[2], abs=1e-3), "k 3: the third sentence has two context sentences"
    full = api(2, dtype="float32")[0]
    assert full[2] != expected[2] and full[2] == pytest.approx(
        by_hand(tiny, f"{src[1]} <sep> {src[2]}", f"{ref[1]} <sep> {ref[2]}") - by_hand(tiny, src[2], ref[2]), abs=1e-4)

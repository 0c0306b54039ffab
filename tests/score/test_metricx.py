"""docnmt.score.metricx: MetricX-24 on the stock mT5 class, against a plain forward of the same checkpoint, on tiny
checkpoints tied (as transformers 5 saves an mT5) and untied (as the released MetricX-24 models are)."""

import json
import subprocess
import sys

import pytest

from helpers import tool_env

TRAINING_FIXTURES = {"checkpoints"}

SOURCES = ["The lamp is old.", "Hi Tom!", "Where do you live now?", "I bought a bag yesterday. It was cheap."]
HYPOTHESES = ["Die Lampe ist alt.", "Hallo Tom!", "Wo wohnst du jetzt?", "Ich kaufte gestern einen Beutel."]
REFERENCES = ["Die Lampe ist alt.", "Hallo Tom!", "Wo wohnen Sie jetzt?", "Ich habe gestern eine Tasche gekauft."]


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    """{tied: folder} of the tiny checkpoints (docnmt.score.tiny_metricx), and one whose vocabulary lacks id 250089."""
    from docnmt.score.tiny_metricx import build

    root = tmp_path_factory.mktemp("metricx")
    return {"tied": build(root / "tied", tied=True), "untied": build(root / "untied", tied=False),
            "small": build(root / "small", vocab_size=1000)}


def plain_forward(folder, source, hypothesis, reference, scale):
    """The official computation, written out: the stock model's whole forward from decoder input 0, the logit of
    <extra_id_10> (250089) after the decoder's output was scaled where the checkpoint ties its embeddings, clipped."""
    import torch
    from transformers import AutoTokenizer, MT5ForConditionalGeneration

    tokenizer = AutoTokenizer.from_pretrained(str(folder))
    model = MT5ForConditionalGeneration.from_pretrained(str(folder)).eval()
    text = f"source: {source} candidate: {hypothesis}" + ("" if reference is None else f" reference: {reference}")
    ids = tokenizer(text, return_tensors="pt")["input_ids"]
    assert ids[0, -1] == tokenizer.eos_token_id
    with torch.no_grad():
        logits = model(input_ids=ids[:, :-1], decoder_input_ids=torch.zeros((1, 1), dtype=torch.long)).logits
    return float(torch.clamp(logits[0, 0, 250089] * scale, 0, 25))


@pytest.mark.parametrize("kind", ["tied", "untied"])
def test_scores_equal_the_official_computation_with_and_without_the_reference(checkpoints, kind):
    import torch

    from docnmt.score.metricx import MetricX

    metric = MetricX(checkpoints[kind], device="cpu")
    assert metric.scale == (16 ** -0.5 if kind == "tied" else 1.0)
    assert torch.equal(metric.model.lm_head.weight, metric.model.shared.weight) == (kind == "tied")
    for references in (REFERENCES, None):
        batched = metric.score(SOURCES, HYPOTHESES, references, batch_size=3)
        alone = [plain_forward(checkpoints[kind], s, h, None if references is None else r, metric.scale)
                 for s, h, r in zip(SOURCES, HYPOTHESES, REFERENCES)]
        assert batched == pytest.approx(alone, abs=5e-5)
        assert all(0 < value < 25 for value in batched) and len(set(batched)) == len(batched), batched
    with_ref, qe = metric.score(SOURCES, HYPOTHESES, REFERENCES), metric.score(SOURCES, HYPOTHESES)
    assert with_ref != qe, "the reference is part of the input"


def test_inputs_are_truncated_and_lose_their_final_eos_as_metricx24_does(checkpoints):
    from docnmt.score.metricx import MetricX, input_text

    metric = MetricX(checkpoints["tied"], device="cpu", max_input_length=8)
    full = metric.tokenizer(input_text(SOURCES[3], HYPOTHESES[3], REFERENCES[3]))["input_ids"]
    (cut,) = metric.tokenize([input_text(SOURCES[3], HYPOTHESES[3], REFERENCES[3])])
    assert len(full) > 8 and len(cut) == 7 and cut == full[:7]
    assert input_text("a", "b") == "source: a candidate: b"
    assert input_text("a", "b", "c") == "source: a candidate: b reference: c"


def test_docnmt_metricx_writes_each_line_back_with_its_prediction(checkpoints, tmp_path):
    """metricx24.predict's interface: JSON lines in, each written back with prediction (standard output, or
    --output); --qe reads no reference; a line without a needed field, or a checkpoint whose vocabulary lacks the
    score token, is one error line and no output."""
    from docnmt.score.metricx import MetricX

    rows = [{"source": s, "hypothesis": h, "reference": r, "id": i}
            for i, (s, h, r) in enumerate(zip(SOURCES, HYPOTHESES, REFERENCES))]
    (tmp_path / "in.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    base = ["docnmt-metricx", "--checkpoint", str(checkpoints["untied"]), "--input", str(tmp_path / "in.jsonl"),
            "--batch-size", "2", "--device", "cpu"]
    printed = subprocess.run(base, capture_output=True, text=True, env=tool_env())
    assert printed.returncode == 0, printed.stderr
    written = [json.loads(line) for line in printed.stdout.splitlines()]
    metric = MetricX(checkpoints["untied"], device="cpu")
    assert [{k: v for k, v in w.items() if k != "prediction"} for w in written] == rows
    assert [w["prediction"] for w in written] == pytest.approx(metric.score(SOURCES, HYPOTHESES, REFERENCES), abs=1e-5)
    qe = subprocess.run(base + ["--qe", "--tokenizer", str(checkpoints["untied"]), "--output", str(tmp_path / "qe.jsonl")],
                        capture_output=True, text=True, env=tool_env())
    assert qe.returncode == 0 and qe.stdout == "", qe.stderr
    predictions = [json.loads(line)["prediction"] for line in (tmp_path / "qe.jsonl").read_text().splitlines()]
    assert predictions == pytest.approx(metric.score(SOURCES, HYPOTHESES), abs=1e-5)
    (tmp_path / "bad.jsonl").write_text(json.dumps({"source": "a", "hypothesis": "b"}) + "\n", encoding="utf-8")
    for args, message in (
            (["--input", str(tmp_path / "bad.jsonl")], "bad.jsonl:1: expected the string fields source, hypothesis, "
                                                       "reference; missing reference"),
            (["--checkpoint", str(checkpoints["small"])], "vocab_size 1000: a MetricX-24 model reads its score at token "
                                                          "250089 (<extra_id_10>), which this vocabulary lacks")):
        failed = subprocess.run(base + args + ["--output", str(tmp_path / "none.jsonl")], capture_output=True,
                                text=True, env=tool_env())
        assert failed.returncode == 1 and failed.stderr.count("\n") == 1 and message in failed.stderr, failed.stderr
        assert not (tmp_path / "none.jsonl").exists()


def test_docnmt_metricx_truncates_and_runs_in_the_dtype_it_is_given(checkpoints, tmp_path):
    """--max-input-length cuts every input as MetricX(max_input_length=) does (the scores change where inputs were
    longer), and --dtype bfloat16 loads the weights in bfloat16: its scores are the class's in that dtype."""
    from docnmt.score.metricx import MetricX

    (tmp_path / "in.jsonl").write_text("".join(json.dumps({"source": s, "hypothesis": h, "reference": r}) + "\n"
                                               for s, h, r in zip(SOURCES, HYPOTHESES, REFERENCES)), encoding="utf-8")
    result = subprocess.run(["docnmt-metricx", "--checkpoint", str(checkpoints["tied"]), "--input",
                             str(tmp_path / "in.jsonl"), "--device", "cpu", "--max-input-length", "8",
                             "--dtype", "bfloat16"], capture_output=True, text=True, env=tool_env())
    assert result.returncode == 0, result.stderr
    predictions = [json.loads(line)["prediction"] for line in result.stdout.splitlines()]
    cut = MetricX(checkpoints["tied"], device="cpu", max_input_length=8, dtype="bfloat16")
    assert str(cut.model.dtype) == "torch.bfloat16"
    assert predictions == pytest.approx(cut.score(SOURCES, HYPOTHESES, REFERENCES), abs=1e-5)
    full = MetricX(checkpoints["tied"], device="cpu", max_input_length=64, dtype="bfloat16")
    assert predictions != pytest.approx(full.score(SOURCES, HYPOTHESES, REFERENCES), abs=1e-5)


def test_the_scoring_pages_command_runs_as_written(checkpoints, tmp_path):
    """docs/scoring.md's docnmt-metricx command, in a folder that holds a checkpoint under the page's name (the tiny
    untied one) and an in.jsonl: out.jsonl has a prediction per line, the checkpoint's scores."""
    import shlex
    import shutil

    from helpers import REPO, shell_commands
    from docnmt.score.metricx import MetricX

    (command,) = shell_commands(REPO / "docs/scoring.md", "## MetricX-24")
    shutil.copytree(checkpoints["untied"], tmp_path / "metricx-24-hybrid-large")
    (tmp_path / "in.jsonl").write_text("".join(json.dumps({"source": s, "hypothesis": h, "reference": r}) + "\n"
                                               for s, h, r in zip(SOURCES, HYPOTHESES, REFERENCES)), encoding="utf-8")
    result = subprocess.run(shlex.split(command), cwd=tmp_path, capture_output=True, text=True, env=tool_env())
    assert result.returncode == 0, result.stderr
    predictions = [json.loads(line)["prediction"] for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    expected = MetricX(checkpoints["untied"], device="cpu").score(SOURCES, HYPOTHESES, REFERENCES)
    assert predictions == pytest.approx(expected, abs=1e-5)


@pytest.mark.trains
def test_tiny_metricx_makes_a_checkpoint_that_docnmt_metricx_reads(tmp_path):
    """`python -m docnmt.score.tiny_metricx` (make demo-metrics's checkpoint): tied with --tied, another model with
    another --seed; MetricX scores with it."""
    from docnmt.score.metricx import MetricX

    for args, name in ((["--tied", "--seed", "2"], "tied"), ([], "untied")):
        made = subprocess.run([sys.executable, "-m", "docnmt.score.tiny_metricx", "--output", str(tmp_path / name),
                               *args], capture_output=True, text=True, env=tool_env())
        assert made.returncode == 0, made.stderr
    config = json.loads((tmp_path / "tied" / "config.json").read_text())
    assert config["tie_word_embeddings"] and not json.loads((tmp_path / "untied" / "config.json").read_text())[
        "tie_word_embeddings"]
    scores = {name: MetricX(tmp_path / name, device="cpu").score(SOURCES, HYPOTHESES, REFERENCES)
              for name in ("tied", "untied")}
    assert all(0 < v < 25 for values in scores.values() for v in values) and scores["tied"] != scores["untied"]

"""pooled+docmbr (docnmt.decode.document_mbr's CLI): each document's translation chosen among the strategies' by
MBR-OT, its sidecar (winners, ties, expected utilities, the candidates' cost), the BPE file following the chosen
documents, and the bad inputs that stop it with one line and nothing written."""

import json
import subprocess
import sys

import pytest

from helpers import tool_env

#: Two documents, three strategies. Document d1: "a" and "b" give the same text, "c" another: the majority's text
#: wins and goes to the first of the two. Document d2: all three differ (chrF's recall weighting favours c's longer
#: sentences).
DOCIDS = ["d1", "d1", "d2", "d2"]
TEXTS = {
    "a": ["Er sieht den Hund .", "Er bellt laut .", "Sie kommt heute nicht .", "Das ist gut ."],
    "b": ["Er sieht den Hund .", "Er bellt laut .", "Sie kommt heute nicht .", "Das ist sehr gut ."],
    "c": ["Es sieht den Hund .", "Es bellt .", "Sie kommt heute nicht mehr .", "Das ist sehr gut so ."],
}


def sidecar(positions: int, first_pass: int | None = None) -> dict:
    record = {"strategy": "x", "backend": "fairseq", "device": "cpu", "dtype": "float32", "decoder_positions": positions,
              "forward_calls": 2, "requests": 4, "repeated_requests": 0, "sep_mismatch": 0, "seconds": 1.0}
    if first_pass is not None:
        record["first_pass"] = {"decoder_positions": first_pass, "seconds": 0.5}
    return record


@pytest.fixture
def files(tmp_path):
    paths = {"docids": tmp_path / "test.docids"}
    paths["docids"].write_text("".join(d + "\n" for d in DOCIDS), encoding="utf-8")
    for name, lines in TEXTS.items():
        for ext, suffix in (("txt", ""), ("bpe", "@@")):
            path = tmp_path / f"{name}.{ext}"
            path.write_text("".join(line + suffix + "\n" for line in lines), encoding="utf-8")
        (tmp_path / f"{name}.json").write_text(json.dumps(sidecar(100, 40 if name != "a" else None)), encoding="utf-8")
    return tmp_path


def run(folder, *extra, names=("a", "b", "c")):
    args = [sys.executable, "-m", "docnmt.decode.document_mbr", "--docids", str(folder / "test.docids")]
    for name in names:
        args += ["--candidate", f"{name}={folder / (name + '.txt')}", "--candidate-bpe",
                 f"{name}={folder / (name + '.bpe')}", "--candidate-sidecar", f"{name}={folder / (name + '.json')}"]
    args += ["--output", str(folder / "out.txt"), "--output-bpe", str(folder / "out.bpe"), "--sidecar",
             str(folder / "out.json"), *extra]
    return subprocess.run(args, capture_output=True, text=True, env=tool_env(), timeout=120)


def direct_utility(hyp: list[str], ref: list[str]) -> float:
    """MBR-OT's assign utility computed directly: sacrebleu's sentence chrF of every pair, scipy's assignment."""
    import numpy as np
    from sacrebleu.metrics import CHRF
    from scipy.optimize import linear_sum_assignment

    if hyp == ref:
        return 1.0
    cost = np.array([[1 - CHRF().sentence_score(h, [r]).score / 100 for r in ref] for h in hyp])
    rows, cols = linear_sum_assignment(cost)
    return 1 - cost[rows, cols].mean()


def test_each_document_is_the_candidate_of_highest_expected_utility_and_a_tie_goes_to_the_first(files):
    result = run(files, "--solver", "assign")
    assert result.returncode == 0, result.stderr
    record = json.loads((files / "out.json").read_text(encoding="utf-8"))
    for docid, lines in (("d1", slice(0, 2)), ("d2", slice(2, 4))):
        docs = {n: TEXTS[n][lines] for n in "abc"}
        expected = {n: sum(direct_utility(docs[n], docs[m]) for m in "abc") / 3 for n in "abc"}
        assert record["expected_utility"][docid] == pytest.approx(expected, abs=1e-6)
        best = max(expected.values())
        assert record["won_by"][docid] == next(n for n in "abc" if expected[n] > best - 1e-9)
    assert record["won_by"]["d1"] == "a" and record["same_as_chosen"]["d1"] == ["a", "b"]
    assert record["won_by"]["d2"] == "c" and record["same_as_chosen"]["d2"] == ["c"]
    assert record["wins"] == {"a": 1, "b": 0, "c": 1}
    chosen_lines = TEXTS["a"][:2] + TEXTS["c"][2:]
    assert (files / "out.txt").read_text(encoding="utf-8").splitlines() == chosen_lines
    assert (files / "out.bpe").read_text(encoding="utf-8").splitlines() == [line + "@@" for line in chosen_lines]
    assert record["docmbr"] == {"strategies": ["a", "b", "c"], "utility": "chrf", "solver": "assign",
                                "weights": "uniform", "utility_evaluations": 2 + 6,
                                "selection_seconds": record["docmbr"]["selection_seconds"]}
    # the candidates' cost: their own positions summed, the first pass that b and c started from once
    assert record["decoder_positions"] == 300 and record["decoder_positions_with_first_pass"] == 340
    assert "pooled+docmbr: 2 documents; won by a 1, b 0, c 1" in result.stdout


def test_the_order_of_the_candidates_breaks_the_tie(files):
    assert run(files, "--solver", "assign", names=("b", "a", "c")).returncode == 0
    assert json.loads((files / "out.json").read_text(encoding="utf-8"))["won_by"]["d1"] == "b"


def test_a_candidate_whose_documents_are_not_the_test_sets_stops_with_one_line_naming_it(files):
    (files / "c.txt").write_text("one line\n", encoding="utf-8")
    result = run(files)
    assert result.returncode == 1
    assert result.stderr.strip().count("\n") == 0 and str(files / "c.txt") in result.stderr
    assert "has 1 lines, the test set 4" in result.stderr
    assert not any((files / f"out.{ext}").exists() for ext in ("txt", "bpe", "json"))


def test_one_candidate_or_a_name_twice_is_a_usage_error(files):
    one = run(files, names=("a",))
    assert one.returncode == 2 and "at least two" in one.stderr
    twice = run(files, names=("a", "a"))
    assert twice.returncode == 2 and "--candidate 'a' is given twice" in twice.stderr
    assert not (files / "out.json").exists()


@pytest.mark.demo
def test_the_demos_pooled_system_is_the_direct_computation_on_its_strategies_translations(trained_demo):
    """On the demo's test set: every document's expected utilities in pooled+docmbr's sidecar are sacrebleu's
    sentence chrF and scipy's assignment over the candidates' translations, the chosen one the first of the highest,
    and its translation is the chosen strategy's, document by document (a sample of ten documents, for time)."""
    from docnmt import layout

    record = json.loads((trained_demo / layout.decode_file("demo", "test", "pooled+docmbr", "json")).read_text())
    assert record["docmbr"]["solver"] == "assign" and record["docmbr"]["utility"] == "chrf"
    names = record["docmbr"]["strategies"]
    assert "cheating" not in names and len(names) >= 2
    read = lambda name: (trained_demo / layout.decode_file("demo", "test", name, "txt")).read_text(
        encoding="utf-8").splitlines()
    texts, chosen = {n: read(n) for n in names}, read("pooled+docmbr")
    docids = (trained_demo / layout.corpus_file("demo", "test", "docids")).read_text(encoding="utf-8").splitlines()
    lines = {}
    for line, docid in enumerate(docids):
        lines.setdefault(docid, []).append(line)
    assert sum(record["wins"].values()) == len(lines) == record["documents"]
    for docid in list(lines)[::10]:
        docs = {n: [texts[n][i] for i in lines[docid]] for n in names}
        expected = {n: sum(direct_utility(docs[n], docs[m]) for m in names) / len(names) for n in names}
        assert record["expected_utility"][docid] == pytest.approx(expected, abs=1e-6)
        best = max(expected.values())
        assert record["won_by"][docid] == next(n for n in names if expected[n] > best - 1e-9)
        assert [chosen[i] for i in lines[docid]] == docs[record["won_by"][docid]]


def test_the_decoding_pages_command_runs_as_written(tmp_path):
    """docs/decoding.md's pooled+docmbr command, as written, in a folder with its files: three strategies'
    translations of the two documents above."""
    from helpers import REPO, shell_commands

    (command,) = shell_commands(REPO / "docs/decoding.md", "## Document-level MBR")
    assert command.startswith("python -m docnmt.decode.document_mbr --docids test.docids"), command
    (tmp_path / "test.docids").write_text("".join(d + "\n" for d in DOCIDS), encoding="utf-8")
    for name, lines in zip(("doc-trans", "2-pass", "sentence-level"), TEXTS.values()):
        (tmp_path / f"{name}.txt").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    result = subprocess.run(command, shell=True, cwd=tmp_path, env=tool_env(), capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    record = json.loads((tmp_path / "pooled.json").read_text(encoding="utf-8"))
    assert record["won_by"] == {"d1": "doc-trans", "d2": "sentence-level"}
    assert (tmp_path / "pooled.txt").read_text(encoding="utf-8").splitlines() == TEXTS["a"][:2] + TEXTS["c"][2:]


class FakeScorer:
    """A scorer as MetricClient's: 1 for an identical pair, else 0; it keeps its requests."""

    def __init__(self):
        self.requests = []

    def score(self, src, mt, ref=None):
        self.requests.append((list(src), list(mt), list(ref)))
        return [1.0 if m == r else 0.0 for s, m, r in zip(src, mt, ref)]


def test_comet_as_the_sentence_utility_scores_each_distinct_pair_once_with_the_first_sentences_source():
    from docnmt.decode import document_mbr as dm

    candidates = [TEXTS["a"][2:], TEXTS["b"][2:], TEXTS["c"][2:]]
    sources = ["She is not coming today .", "That is good ."]
    scorer = FakeScorer()
    similarity = dm.PooledComet(candidates, sources, scorer)
    distinct = list(dict.fromkeys(s for c in candidates for s in c))
    (src, mt, ref), = scorer.requests
    assert len(mt) == len(distinct) ** 2 and set(zip(mt, ref)) == {(h, r) for h in distinct for r in distinct}
    # each sentence's source is the test set's at its first position: a's and b's first, c's own longer first
    assert {m: s for s, m in zip(src, mt)} == {distinct[0]: sources[0], distinct[1]: sources[1],
                                              distinct[2]: sources[1], distinct[3]: sources[0],
                                              distinct[4]: sources[1]}
    chosen = dm.select(candidates, similarity, solver="assign")
    assert chosen.expected[0] == pytest.approx((1 + 0.5 + 0) / 3), "a shares one of two sentences with b"


def test_comet_needs_its_checkpoint_and_the_source(files):
    for extra, message in ((["--utility", "comet:da"], "needs --comet-checkpoint da=FOLDER"),
                           (["--utility", "comet:da", "--comet-checkpoint", "da=/x"], "needs --source"),
                           (["--utility", "bleu"], "expected chrf or comet:NAME")):
        result = run(files, *extra)
        assert result.returncode == 2 and message in result.stderr, result.stderr
    assert not (files / "out.json").exists()

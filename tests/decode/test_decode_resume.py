"""A decode killed with SIGKILL partway resumes from its journal (docnmt.decode.journal) to the uninterrupted output.

The kill comes at a point the test chooses, not at a time: tests/killed.py runs the decode CLI with the journal's
chunk size set and sends itself SIGKILL right after the journal has synced its N-th chunk."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import REPO, tool_env
from docnmt.decode import cli as decode_cli

KILLED = REPO / "tests" / "killed.py"
#: Requests per journal chunk in these tests (the default, 256, would make one chunk of the test sets).
CHUNK = 4
#: The module's fixtures that train a model (conftest gives their tests the tier ``trains``).
TRAINING_FIXTURES = {"tiny_llama"}


def killed(argv: list[str], after: int) -> subprocess.CompletedProcess:
    """The decode CLI in a child that kills itself once the journal holds ``after`` chunks."""
    return subprocess.run([sys.executable, str(KILLED), str(CHUNK), str(after), *argv], capture_output=True,
                          text=True, env=tool_env(), timeout=600)


def outputs(folder: Path, name: str) -> list[str]:
    return ["--output-bpe", str(folder / f"{name}.bpe"), "--output", str(folder / f"{name}.txt"),
            "--sidecar", str(folder / f"{name}.json")]


def decode(argv: list[str], folder: Path, name: str, monkeypatch) -> dict:
    """The decode in this process, with the tests' chunk size: its sidecar."""
    from docnmt.decode import journal

    monkeypatch.setattr(journal, "CHUNK", CHUNK)
    assert decode_cli.main(argv + outputs(folder, name)) == 0
    return json.loads((folder / f"{name}.json").read_text(encoding="utf-8"))


def kill_and_resume(argv: list[str], tmp_path: Path, after, monkeypatch, capsys) -> tuple[dict, dict]:
    """Decode uninterrupted; decode again, killed after ``after`` chunks (a number, or a function of the
    uninterrupted decode's sidecar that gives it); rerun the killed one. Asserts what holds for every backend and
    strategy, returns both sidecars."""
    whole = decode(argv, tmp_path, "whole", monkeypatch)
    if callable(after):
        after = after(whole)
    assert not (tmp_path / "whole.journal").exists(), "the journal is removed once the outputs are written"
    result = killed(argv + outputs(tmp_path, "resumed"), after)
    assert result.returncode == -9, result.stdout[-2000:] + result.stderr[-3000:]
    journal = tmp_path / "resumed.journal"
    assert len(journal.read_text(encoding="utf-8").splitlines()) == 1 + after, "the header and the finished chunks"
    assert not any((tmp_path / f"resumed.{ext}").exists() for ext in ("bpe", "txt", "json")), "no outputs"
    with open(journal, "a", encoding="utf-8") as handle:  # a record the kill cut short
        handle.write('{"call": 9, "chunk": 0, "digest": "ab')
    capsys.readouterr()
    resumed = json.loads(json.dumps(decode(argv, tmp_path, "resumed", monkeypatch)))
    assert f"resuming from {journal}: {after} chunks" in capsys.readouterr().out
    for ext in ("bpe", "txt"):
        assert (tmp_path / f"resumed.{ext}").read_bytes() == (tmp_path / f"whole.{ext}").read_bytes()
    assert resumed["resumed"]["chunks"] == after and 0 < resumed["resumed"]["requests"] <= after * CHUNK
    assert whole["resumed"] == {"chunks": 0, "requests": 0, "seconds": 0.0}
    assert resumed["requests"] == whole["requests"] and resumed["rounds"] == whole["rounds"]
    assert not journal.exists()
    return whole, resumed


@pytest.fixture(scope="module")
def fairseq_inputs(demo_models, tmp_path_factory) -> tuple[Path, list[str]]:
    """The demo's first 9 test documents (40 sentences, BPE), and the decode arguments of its models."""
    from docnmt.textio import read_lines

    w, folder = demo_models, tmp_path_factory.mktemp("resume-inputs")
    for name, source in (("src", "data/demo/bpe/test.en"), ("docids", "data/demo/corpus/test.docids")):
        (folder / name).write_text("".join(f"{line}\n" for line in read_lines(w / source)[:40]), encoding="utf-8")
    return w, ["--src", str(folder / "src"), "--docids", str(folder / "docids"), "--beam", "4", "--tgt-lang", "de"]


def fairseq_model(w: Path, level: str) -> list[str]:
    return ["--model", str(w / f"results/demo/models/{level}/checkpoint_best.pt"),
            "--data", str(w / f"data/demo/bin/{level}")]


def test_a_killed_fairseq_sentence_level_decode_resumes_to_the_same_output(fairseq_inputs, tmp_path, monkeypatch,
                                                                           capsys):
    w, common = fairseq_inputs
    whole, resumed = kill_and_resume(["--strategy", "sentence-level", *fairseq_model(w, "sentence"), *common],
                                     tmp_path, 3, monkeypatch, capsys)
    # the same chunks searched, once each, between the two runs: the cost of one decode
    assert (resumed["decoder_positions"], resumed["forward_calls"]) == (whole["decoder_positions"],
                                                                        whole["forward_calls"])
    assert resumed["resumed"]["requests"] == 3 * CHUNK and 0 < resumed["resumed"]["decoder_positions"]


def test_a_killed_fairseq_parallel_doc_trans_resumes_in_a_later_round(fairseq_inputs, tmp_path, monkeypatch, capsys):
    w, common = fairseq_inputs
    decode(["--strategy", "sentence-level", *fairseq_model(w, "sentence"), *common], tmp_path, "first", monkeypatch)
    argv = ["--strategy", "doc-trans", "--doc-trans-mode", "parallel", "--first-pass", str(tmp_path / "first.bpe"),
            *fairseq_model(w, "document"), *common]
    round_one = -(-40 // CHUNK)  # chunks of round 1 (every sentence)

    def partway_into_round_two(whole: dict) -> int:
        """The kill comes after round 2's last chunk but one: how many sentences round 2 redecodes is the trained
        model's (7 of the demo's 40 on the machine of 2026-12-02, more than 8 on that of the day before: training's
        floating-point sums differ between CPUs), so it is read from the uninterrupted decode."""
        chunks = -(-whole["redecoded_per_round"][1] // CHUNK)
        assert chunks >= 2, f"a kill partway into round 2 needs two chunks there: {whole['redecoded_per_round']}"
        return round_one + chunks - 1

    whole, resumed = kill_and_resume(argv, tmp_path, partway_into_round_two, monkeypatch, capsys)
    assert resumed["redecoded_per_round"] == whole["redecoded_per_round"] and resumed["converged"]
    assert (resumed["decoder_positions"], resumed["forward_calls"]) == (whole["decoder_positions"],
                                                                        whole["forward_calls"])


def test_a_journal_of_another_decode_is_replaced_with_one_line_naming_the_difference(fairseq_inputs, tmp_path,
                                                                                       monkeypatch, capsys):
    w, common = fairseq_inputs
    argv = ["--strategy", "sentence-level", *fairseq_model(w, "sentence"), *common]
    journal = tmp_path / "mine.journal"
    assert killed(argv + outputs(tmp_path, "x") + ["--journal", str(journal)], 2).returncode == -9
    changed = [a if a != "4" else "3" for a in argv]  # beam 3
    capsys.readouterr()
    sidecar = decode(changed + ["--journal", str(journal)], tmp_path, "x", monkeypatch)
    assert f"{journal}: written for another decode (beam differ): starting afresh" in capsys.readouterr().out
    assert sidecar["resumed"]["chunks"] == 0 and not journal.exists()
    # --no-journal: nothing written, nothing read
    assert killed(argv + outputs(tmp_path, "y") + ["--no-journal"], 1).returncode == 0
    assert not (tmp_path / "y.journal").exists()


@pytest.fixture(scope="module")
def llm_inputs(tmp_path_factory) -> list[str]:
    """Three of the demo's test documents, plain text (a causal LM reads it), and their ids."""
    import llmmodel

    _, docs = llmmodel.demo_documents()
    folder = tmp_path_factory.mktemp("resume-llm")
    (folder / "src").write_text("".join(f"{s}\n" for d in docs[:3] for s in d.src), encoding="utf-8")
    (folder / "docids").write_text("".join(f"{d.docid}\n" for d in docs[:3] for _ in d.src), encoding="utf-8")
    return ["--backend", "causal-lm", "--src", str(folder / "src"), "--docids", str(folder / "docids"), "--beam", "1",
            "--src-lang", "en", "--tgt-lang", "de", "--max-len-b", "40"]


@pytest.mark.parametrize("strategy", ["sentence-level", "doc-trans"])
def test_a_killed_causal_lm_decode_resumes_to_the_same_output(tiny_llama, llm_inputs, strategy, tmp_path, monkeypatch,
                                                              capsys):
    argv = ["--strategy", strategy, "--model", str(tiny_llama), *llm_inputs]
    after = 2
    if strategy == "doc-trans":
        decode(["--strategy", "sentence-level", "--model", str(tiny_llama), *llm_inputs], tmp_path, "first",
               monkeypatch)
        argv += ["--doc-trans-mode", "parallel", "--first-pass", str(tmp_path / "first.bpe")]
        sentences = len(Path(llm_inputs[llm_inputs.index("--src") + 1]).read_text().splitlines())
        after = -(-sentences // CHUNK) + 1  # one chunk into round 2
    whole, resumed = kill_and_resume(argv, tmp_path, after, monkeypatch, capsys)
    # the resumed run starts with an empty prefix cache: the prompt tokens split otherwise between prefilled and
    # cached, but they and the generated ones add up to one decode's
    assert resumed["tokens_generated"] == whole["tokens_generated"]
    assert (resumed["tokens_prefilled"] + resumed["tokens_cached"]
            == whole["tokens_prefilled"] + whole["tokens_cached"])


@pytest.mark.full  # make test-full: the manual's block run for real (tests/test_docs.py dry-runs it in make test)
def test_the_decoding_pages_resume_command_runs_as_written(demo_models, tmp_path):
    """docs/decoding.md's block, in a folder holding its files (the demo's sentence-level model and, as the test set,
    the first 2004 sentences of its training split, whole documents: 852 distinct requests, since identical ones are
    searched once, so 4 chunks of the default 256): killed after 3 chunks, the command as written resumes with the
    line the page shows."""
    from helpers import shell_commands
    from docnmt.textio import read_lines

    command, = shell_commands(REPO / "docs" / "decoding.md", "## Resuming a killed decode")
    w = demo_models
    (tmp_path / "sent.pt").symlink_to(w / "results/demo/models/sentence/checkpoint_best.pt")
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "sentence").symlink_to(w / "data/demo/bin/sentence")
    src, ids = read_lines(w / "data/demo/bpe/train.en")[:2004], read_lines(w / "data/demo/corpus/train.docids")[:2005]
    assert ids[-1] != ids[-2] and len(set(src)) == 852, "whole documents, 852 distinct sentences"
    ids = ids[:-1]
    (tmp_path / "test.bpe.en").write_text("".join(f"{s}\n" for s in src), encoding="utf-8")
    (tmp_path / "test.docids").write_text("".join(f"{d}\n" for d in ids), encoding="utf-8")
    argv = command.split()
    assert argv[0] == "docnmt-decode"
    first = subprocess.run([sys.executable, str(KILLED), "256", "3", *argv[1:]], cwd=tmp_path, capture_output=True,
                           text=True, env=tool_env(), timeout=600)
    assert first.returncode == -9, first.stderr[-3000:]
    again = subprocess.run(command, shell=True, cwd=tmp_path, capture_output=True, text=True, env=tool_env(),
                           timeout=600)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "resuming from hyp.journal: 3 chunks (768 requests) done before" in again.stdout
    assert len((tmp_path / "hyp.bpe").read_text(encoding="utf-8").splitlines()) == len(src)


def test_a_killed_translate_resumes_to_the_same_translations(tiny_llama, llm_inputs, tmp_path, monkeypatch, capsys):
    """docnmt-translate keeps the decode's record (docnmt.decode.record) as the decode CLI does: killed after two
    chunks of its journal and run again the same way, it resumes and writes the uninterrupted run's translations."""
    from docnmt.decode import journal, translate

    src = Path(llm_inputs[llm_inputs.index("--src") + 1]).read_text(encoding="utf-8").splitlines()
    docids = Path(llm_inputs[llm_inputs.index("--docids") + 1]).read_text(encoding="utf-8").splitlines()
    talk = tmp_path / "talk.en"
    talk.write_text("".join(("\n" if i and docids[i] != docids[i - 1] else "") + f"{s}\n"
                            for i, s in enumerate(src)), encoding="utf-8")
    argv = ["--backend", "causal-lm", "--document-model", str(tiny_llama), "--src-lang", "en", "--tgt-lang", "de",
            "--strategy", "doc-trans", "--beam", "1", "--max-len-b", "40", "--input", str(talk)]
    monkeypatch.setattr(journal, "CHUNK", CHUNK)
    assert translate.main(argv + ["--output", str(tmp_path / "whole.de")]) == 0
    assert not (tmp_path / "whole.de.journal").exists()
    kept = tmp_path / "journals" / "talk.journal"  # --journal: a path of one's own
    resumed = ["--output", str(tmp_path / "resumed.de"), "--journal", str(kept)]
    result = killed(["translate", *argv, *resumed], 2)
    assert result.returncode == -9, result.stdout[-2000:] + result.stderr[-3000:]
    assert len(kept.read_text(encoding="utf-8").splitlines()) == 3 and not (tmp_path / "resumed.de").exists()
    assert not (tmp_path / "resumed.de.journal").exists()
    capsys.readouterr()
    assert translate.main(argv + resumed) == 0
    assert f"resuming from {kept}: 2 chunks" in capsys.readouterr().out
    assert (tmp_path / "resumed.de").read_bytes() == (tmp_path / "whole.de").read_bytes()
    assert not kept.exists()
    # --no-journal: nothing written
    assert killed(["translate", *argv, "--output", str(tmp_path / "none.de"), "--no-journal"], 1).returncode == 0
    assert not (tmp_path / "none.de.journal").exists()


def test_a_killed_causal_lm_decode_at_beam_3_without_the_prefix_cache_resumes_to_the_same_bytes(
        tiny_llama, llm_inputs, tmp_path, monkeypatch, capsys):
    """Where byte for byte holds for a causal LM at beam > 1 (docs/decoding.md): without the prefix cache, each
    prompt is prefilled whole in both runs."""
    argv = ["--strategy", "sentence-level", "--model", str(tiny_llama), *llm_inputs, "--beam", "3",
            "--cache-bytes", "0"]
    whole, resumed = kill_and_resume(argv, tmp_path, 2, monkeypatch, capsys)
    assert whole["prefix_cache"]["limit_bytes"] == 0 and resumed["tokens_cached"] == 0

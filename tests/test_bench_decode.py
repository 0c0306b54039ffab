"""bench/decode on the demo's models, each table read from a real run: every request searched (the goals' footing)
against the workflow's sharing, where the positions go (--profile), the demo models' digest, and parallel
doc-trans from scratch on long documents with its guess."""

import re
import subprocess
import sys

import pytest

from helpers import REPO, tool_env

#: make test-full: a benchmark's run.
pytestmark = pytest.mark.full

SCRIPT = REPO / "bench" / "decode"


def bench(*args) -> str:
    result = subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, env=tool_env(),
                            timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


def table(output: str) -> dict[str, list[str]]:
    """The rows of the printed table, by their first cell."""
    return {cells[0]: cells[1:] for cells in (
        [c.strip() for c in line.strip().strip("|").split("|")] for line in output.splitlines()
        if line.startswith("| ") and not line.startswith("| strategy"))}


def test_profile_counts_every_search_and_shared_repeats_search_fewer(demo_models):
    """--profile: every request searched by default (searches = requests, sentence-level 1.00 per search), fewer
    searches with --share-repeated where the first documents repeat a sentence; positions = the searches' steps x
    beam + the prefill, as the columns say."""
    every = table(bench("--workdir", str(demo_models), "--profile", "--docs", "12"))
    shared = table(bench("--workdir", str(demo_models), "--profile", "--docs", "12", "--share-repeated"))
    names = ["sentence-level", "no-context", "full-segment", "last-sentence", "first-sentence", "2-pass", "doc-trans",
             "doc-trans-beam", "cheating"]
    assert list(every) == names and list(shared) == names
    for name, row in every.items():
        requests, searches, positions, per_search = int(row[0]), int(row[1]), int(row[8]), float(row[9])
        assert searches == requests, name
        assert per_search == pytest.approx(positions / searches, abs=0.06), name
        steps, prefill = float(row[4]), float(row[7])
        assert per_search == pytest.approx(12 * steps + prefill, rel=0.01), name
    assert every["sentence-level"][10] == "1.00"
    assert int(shared["sentence-level"][1]) < int(shared["sentence-level"][0]), "the demo repeats sentences"
    assert int(shared["sentence-level"][8]) < int(every["sentence-level"][8])
    assert float(every["cheating"][7]) > 0 == float(every["sentence-level"][7]), "a forced context is prefilled"


def test_the_goal_table_times_every_request_and_the_workflows_sharing_and_prints_the_digest(demo_models):
    from docnmt.train.demo_digest import demo_models_digest

    output = bench("--workdir", str(demo_models), "--docs", "12", "--repeats", "1")
    rows = table(output)
    assert f"demo models digest: {demo_models_digest()}" in output
    assert "every request searched (the paper's Table 1" in output
    assert rows["sentence-level"][5] == "1.00"
    shared = rows["sentence-level, repeats shared"]
    assert int(shared[4]) < int(rows["sentence-level"][4]), "the repeats shared: fewer positions"
    assert float(rows["cheating"][5]) <= 1.4, "cheating's positions against every sentence searched"


def test_long_documents_from_scratch_guess_and_equal_sequential(demo_models):
    output = bench("--workdir", str(demo_models), "--long-docs", "25", "--docs", "3", "--repeats", "1")
    rows = table(output)
    guessed = rows["doc-trans parallel, from scratch (guessed)"]
    assert re.fullmatch(r"\d+ \+ guess \(\d+ sentences at beam 1\)", guessed[6]), guessed
    n = int(re.search(r"(\d+) sentences in 3 documents", output)[1])
    assert f"guess ({n} sentences at beam 1)" in guessed[6]
    assert f"doc-trans parallel, from scratch (guessed) = sequential doc-trans: {n}/{n} sentences identical" in output
    assert re.search(r"^parallel doc-trans from scratch: [\d.]+ x sentence-level's wall time \(goal 2.5\)$", output,
                     re.M)


def test_cad_times_doc_trans_and_doc_trans_beam_against_themselves(demo_models):
    """--cad: doc-trans and doc-trans-beam, each with context-aware decoding next to itself without; the positions
    about double (the side without context has no prefix to prefill), the goal printed."""
    output = bench("--workdir", str(demo_models), "--docs", "6", "--repeats", "1", "--h", "4", "--cad", "0.5")
    rows = table(output)
    assert list(rows) == ["doc-trans", "doc-trans-beam"]
    assert "context-aware decoding:" in output and "alpha 0.5" in output
    for name, row in rows.items():
        assert row[4] == "2.2", name
        assert 1.3 < float(row[5]) < 2.2, f"{name}: positions ratio {row[5]}"


def test_drafts_time_2_pass_and_parallel_doc_trans_with_verification_and_keep_their_output(demo_models):
    """--drafts at beam 1: 2-pass, parallel doc-trans from scratch and the overlapping windows with their drafts
    verified, each against itself without, the goals printed, the same output, most draft tokens accepted."""
    output = bench("--workdir", str(demo_models), "--long-docs", "25", "--docs", "3", "--repeats", "1", "--beam", "1",
                   "--drafts")
    drafts = output[output.index("draft verification (beam 1"):]
    rows = table(drafts)
    assert set(rows) == {"2-pass", "doc-trans parallel, from scratch (guessed)", "last-sentence", "first-sentence"}
    for name, row in rows.items():
        goal = {"2-pass": "1.6", "doc-trans parallel, from scratch (guessed)": "2.0"}.get(name, "-")
        assert row[2] == goal and row[5] == "True", (name, row)
        accepted, drafted = (int(x) for x in re.match(r"(\d+) of (\d+)", row[4]).groups())
        assert drafted and accepted > drafted / 2, row
    floor = re.search(r"2-pass's floor: with each draft taken after one forced pass over it .* it took ([\d.]+) x "
                      r"sentence-level's wall time, the first pass included \(goal 1\.6\)", output)
    assert floor and float(floor.group(1)) > 1.0, output


def test_refine_drafts_time_refine_with_its_draft_verified_on_the_tiny_llama(demo_models, tiny_llama):
    output = bench("--workdir", str(demo_models), "--backend", "causal-lm", "--model", str(tiny_llama),
                   "--refine-drafts", "--docs", "4", "--min-sentences", "1", "--repeats", "1", "--beam", "1",
                   "--max-len-b", "40")
    assert re.search(r"refine over the sentence-level draft, beam 1, 4 documents .* ratio [\d.]+ .*goal 0\.6\).*"
                     r"accepted draft tokens \d+ of \d+ .* the same refinements: yes", output), output
    steps = re.search(r"one new token per row .* took a median (\d+)% of refine's wall time: the least ratio "
                      r"verification could reach is ([\d.]+)", output)
    assert steps and 0 < int(steps.group(1)) < 100, output
    assert float(steps.group(2)) == pytest.approx(1 - int(steps.group(1)) / 100, abs=0.006), output


def test_refine_drafts_on_vllm_time_refine_with_the_engines_ngram_speculative_decoding(demo_models, tiny_llama):
    """--backend vllm --refine-drafts: refine over the sentence-level draft on two engines of the tiny Llama, with
    vLLM's n-gram speculative decoding and without, interleaved: the ratio, the goal, the engine's accepted draft
    tokens and the same refinements."""
    from helpers import VLLM_PYTHON

    if not VLLM_PYTHON.exists():
        pytest.skip(f"no vLLM environment at {VLLM_PYTHON}: `make vllm` makes it (make test-full does)")
    output = bench("--workdir", str(demo_models), "--backend", "vllm", "--model", str(tiny_llama), "--refine-drafts",
                   "--docs", "4", "--min-sentences", "1", "--repeats", "1", "--beam", "1", "--max-len-b", "40")
    assert re.search(r"refine over the sentence-level draft on vLLM, beam 1, 4 documents .* ratio [\d.]+ .*goal 0\.6\)"
                     r".*draft tokens accepted \d+ of [1-9]\d* .* the same refinements: yes", output), output


def test_transformers_drafts_time_the_drafting_strategies_with_and_without_verification(demo_models, hf_marian):
    """--backend transformers --beam 1 --drafts on the tiny Marian: the strategies' table, the draft table (each row
    the same output with its drafts verified, some draft tokens accepted), and the search equal to generate's greedy
    search on every request, scores included."""
    output = bench("--workdir", str(demo_models), "--backend", "transformers", "--model", str(hf_marian),
                   "--separator", "<brk>", "--beam", "1", "--drafts", "--docs", "4", "--repeats", "1")
    drafts = table(output[output.index("draft verification (beam 1"):output.index("forced-prefix search vs")])
    assert set(drafts) == {"last-sentence", "first-sentence", "2-pass", "doc-trans-parallel"}, output
    for name, row in drafts.items():
        assert row[4] == "True", (name, row)
        assert int(re.match(r"(\d+) of (\d+)", row[3]).group(2)) > 0, (name, row)
    same, total = re.search(r"the same n-best on (\d+) of (\d+) requests", output).groups()
    assert same == total, output

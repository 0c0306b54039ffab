"""Every setting changed: one workflow run of the test-size demo (.test/config_demo.yaml) with the settings no other
workflow test changes set to other values than config.yaml's, from the windows to the tables, each checked where it
shows: the windows, the jobs' command lines and resources, the models' and decodes' sidecars, the score files, the
tables' notes. (The option ledger, docs/development.md "Tests", sees them set in a finished run.)

The other settings' runs: the archive members, documented mirrors, checksum sources and BPE's minimum frequency in
tests/corpora/test_real_corpora_workflow.py, the learned metrics' in tests/score/test_comet.py, a causal LM's
language names, doc-trans's mode and pronoun F1's default reporting rule in tests/test_external_models.py."""

from __future__ import annotations

import csv
import json
import math
import re

import pytest
import yaml

from docnmt import layout
from docnmt.textio import read_lines
from helpers import REPO, TEST_CONFIG, copy_workdir, run_snakemake, tool_env

#: make test-full: the option audit's run of every key no other workflow test changes.
pytestmark = [pytest.mark.workflow, pytest.mark.full]

#: The settings changed, over .test/config_demo.yaml (config.yaml's values in the comments). beam 2, two strategies,
#: one MBR strategy, no ContraPro, 100 bootstrap samples: fewer and shorter decodes.
CHANGED = {
    "k": 2,  # 3
    "beam": 2,
    "strategies": ["sentence-level", "doc-trans"],
    "decode": {"dtype": "bfloat16", "max_tokens": 2000},  # float32, null
    "mbr": {"strategies": ["sentence-level"], "candidates": "sampling", "count": 3, "utility": "chrf++",
            "epsilon": 0.05, "seed": 7,  # beam, 12, chrf, 0.02, 1
            "curve": {"strategy": "sentence-level", "counts": [2]}},  # doc-trans, [1, 4]
    "doc_trans": {"max_rounds": 1},  # null
    "scoring": {"bootstrap_samples": 100, "significance_baselines": ["sentence-level"],
                # auto, auto, blonde-de
                "tagger": "hanta", "source_tagger": "words", "pronoun_rules": "capitalized-formal",
                "context_usage": {"top": 5, "share": 0.25}},  # 20, 0.1
    "training": {"patience": 3, "gpus": 2, "runtime_minutes": {"demo": 30}},  # 5, 1, 60
    "task_settings": {"demo": {"contrapro": False}},
}


def jobs(output: str) -> dict[str, list[dict]]:
    """rule -> its jobs as Snakemake printed them (``-p``): each job's ``resources`` and ``Shell command`` lines."""
    found: dict[str, list[dict]] = {}
    job = None
    for line in output.splitlines():
        start = re.match(r"^(?:local)?rule (\S+):$", line)
        if start:
            job = {}
            found.setdefault(start.group(1), []).append(job)
        elif job is not None and line.strip().startswith("resources: "):
            job["resources"] = dict(item.split("=", 1) for item in line.strip()[len("resources: "):].split(", "))
        elif job is not None and line.startswith("Shell command: "):
            job["shell"] = line[len("Shell command: "):]
    return found


@pytest.fixture(scope="module")
def changed_run(small_demo_data, tmp_path_factory):
    """The test-size demo's data copied, then `snakemake tables` with CHANGED: (workdir, rule -> jobs). CUDA hidden:
    training.gpus asks for 2 GPUs, which training takes only where CUDA is visible (and refuses where fewer are)."""
    folder = tmp_path_factory.mktemp("changed-settings")
    work = copy_workdir(small_demo_data, folder / "work")
    config = folder / "changed.yaml"
    config.write_text(yaml.safe_dump(CHANGED), encoding="utf-8")
    result = run_snakemake(work, "tables", "-p", "--profile", str(REPO / "profiles/cpu"), "--cores", "2",
                           "--configfile", TEST_CONFIG, str(config), env=dict(tool_env(), CUDA_VISIBLE_DEVICES=""))
    return work, jobs(result.stdout + "\n" + result.stderr)


def sidecar(work, system: str) -> dict:
    return json.loads((work / layout.decode_file("demo", "test", system, "json")).read_text(encoding="utf-8"))


def test_k_makes_the_document_windows_and_the_decodes_two_sentences_long(changed_run):
    work, _ = changed_run
    sentences = read_lines(work / layout.processed_file("demo", "bpe", "test", "en"))
    docids = read_lines(work / layout.corpus_file("demo", "test", "docids"))
    windows = read_lines(work / layout.window_file("demo", "test", "en"))
    for i, window in enumerate(windows):
        first = i == 0 or docids[i - 1] != docids[i]
        assert window.split(" <sep> ") == ([] if first else [sentences[i - 1]]) + [sentences[i]], i
    assert sidecar(work, "doc-trans")["k"] == 2
    for name in ("cxmi", "perplexity.document"):
        assert json.loads((work / layout.score_file("demo", "test", name)).read_text(encoding="utf-8"))["k"] == 2


def test_training_runs_with_the_patience_gpus_and_time_limit_configured(changed_run):
    work, by_rule = changed_run
    assert len(by_rule["train"]) == 2
    for job in by_rule["train"]:
        assert "--patience 3 --gpus 2 " in job["shell"], job
        assert (job["resources"]["gpu"], job["resources"]["runtime"]) == ("2", "30"), job
    for level in ("sentence", "document"):
        model = json.loads((work / layout.model_sidecar("demo", level)).read_text(encoding="utf-8"))
        assert model["patience"] == 3 and model["device"] == "CPU", "training.gpus counts only where CUDA is visible"
        log = (work / layout.log_file(f"demo/train/{level}")).read_text(encoding="utf-8")
        assert re.search(r"^running: .*fairseq_train .* --patience 3 ", log, re.M), level


def test_decodes_run_in_bfloat16_in_batches_of_at_most_max_tokens_positions(changed_run):
    """decode.dtype everywhere (the tables say so); decode.max_tokens: a request takes beam x (source + token limit)
    positions, so that at most 2000 // (2 x 201) = 4 requests share a batch: the sentence-level decode of 58 sentences
    needs at least 15 batches, each at least one forward call (one batch of all of them without the limit)."""
    work, by_rule = changed_run
    for system in ("sentence-level", "doc-trans", "sentence-level+mbr", "sentence-level+mbr-2"):
        assert sidecar(work, system)["dtype"] == "bfloat16" and "|dtype:bfloat16|" in sidecar(work, system)["signature"]
    for level in ("sentence", "document"):
        assert json.loads((work / layout.score_file("demo", "test", f"perplexity.{level}")).read_text())["dtype"] \
            == "bfloat16"
    decodes = [job["shell"] for rule, found in by_rule.items() if rule.startswith("decode_") for job in found]
    assert len(decodes) == 4 and all("--max-tokens 2000" in shell for shell in decodes), decodes
    plain = sidecar(work, "sentence-level")
    per_batch = 2000 // (plain["beam"] * (1 + plain["max_len_b"]))
    assert plain["forward_calls"] >= math.ceil(plain["requests"] / per_batch), plain
    assert "The search in bfloat16, not float32" in (work / "results/tables/demo/quality.md").read_text("utf-8")


def test_mbr_selects_among_epsilon_samples_by_chrf_plus_plus_and_its_curve_is_the_sentence_levels(changed_run):
    work, _ = changed_run
    for system, count in (("sentence-level+mbr", 3), ("sentence-level+mbr-2", 2)):
        record = sidecar(work, system)
        assert {k: record["mbr"][k] for k in ("candidates", "count", "utility", "epsilon", "seed")} == \
            {"candidates": "sampling", "count": count, "utility": "chrf++", "epsilon": 0.05, "seed": 7}, system
        assert f"|mbr:sampling-{count}-chrf++-eps0.05-seed7|" in record["signature"]
        assert record["mbr"]["selections"] == record["sentences"]
    scores = json.loads((work / layout.score_file("demo", "test", "bleu_ter")).read_text(encoding="utf-8"))
    assert set(scores["systems"]) == {"sentence-level", "doc-trans", "sentence-level+mbr", "sentence-level+mbr-2"}
    assert not list((work / "results/demo/decode/test").glob("doc-trans+mbr*"))


def test_doc_trans_stops_after_max_rounds(changed_run):
    work, by_rule = changed_run
    record = sidecar(work, "doc-trans")
    assert (record["doc_trans_mode"], record["max_rounds"], record["rounds"]) == ("parallel", 1, 1)
    assert "--max-rounds 1" in by_rule["decode_doc_trans"][0]["shell"]
    assert record["redecoded_per_round"] == [record["sentences"]], "round 1 only: every sentence once"


def test_pronoun_f1_uses_the_configured_rules_and_taggers_and_the_tables_say_so(changed_run):
    work, _ = changed_run
    pronouns = json.loads((work / layout.score_file("demo", "test", "pronouns")).read_text(encoding="utf-8"))
    assert pronouns["rules"] == "capitalized-formal" and not pronouns["as_paper"]
    assert pronouns["taggers"]["german"].startswith("HanTa ") and pronouns["taggers"]["english"].startswith("word")
    usage = json.loads((work / layout.score_file("demo", "test", "context_usage")).read_text(encoding="utf-8"))
    assert usage["pronoun_setup"] == pronouns["setup"]
    assert "capitalized-formal is stricter than the paper" in (work / "results/tables/demo/pronoun_f1.md").read_text()


def test_context_usage_shows_the_top_sentences_and_splits_at_the_share_configured(changed_run):
    work, _ = changed_run
    usage = json.loads((work / layout.score_file("demo", "test", "context_usage")).read_text(encoding="utf-8"))
    sentences = len(read_lines(work / layout.corpus_file("demo", "test", "en")))
    assert [row["rank"] for row in usage["top"]] == [1, 2, 3, 4, 5]
    assert usage["share"] == 0.25 and usage["top_sentences"] == math.ceil(0.25 * sentences)
    assert usage["top_sentences"] + usage["rest_sentences"] == sentences
    with open(work / "results/tables/demo/context_sentences.csv", encoding="utf-8", newline="") as handle:
        assert len(list(csv.DictReader(handle))) == 5

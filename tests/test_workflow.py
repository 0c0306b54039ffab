"""The workflow through Snakemake: demo preprocessing into a temporary directory, config errors."""

import collections
import json

import pytest

from helpers import REPO, run_snakemake

pytestmark = pytest.mark.workflow


@pytest.fixture(scope="module")
def demo_workdir(small_demo_data):
    return small_demo_data


def test_demo_preprocessing_binarizes_both_levels(demo_workdir):
    for level in ("sentence", "document"):
        manifest = json.loads((demo_workdir / f"data/demo/bin/{level}/manifest.json").read_text())
        for split in ("train", "valid", "test"):
            stats = json.loads((demo_workdir / f"data/demo/corpus/{split}.stats.json").read_text())
            assert manifest["examples"][split] == stats["sentences"], f"{level}/{split}: one example per sentence"


def test_both_levels_share_one_dictionary(demo_workdir):
    dicts = [(demo_workdir / f"data/demo/bin/{level}/dict.{lang}.txt").read_text()
             for level in ("sentence", "document") for lang in ("en", "de")]
    assert all(d == dicts[0] for d in dicts), "sentence and document level, source and target: one joined dictionary"
    assert "<sep> " in dicts[0]


def test_document_windows_respect_documents(demo_workdir):
    ids = (demo_workdir / "data/demo/corpus/test.docids").read_text().splitlines()
    windows = (demo_workdir / "data/demo/doc/test.en").read_text().splitlines()
    sentences = (demo_workdir / "data/demo/bpe/test.en").read_text().splitlines()
    assert len(windows) == len(ids) == len(sentences)
    for i, (docid, window) in enumerate(zip(ids, windows)):
        position = i - ids.index(docid)  # 0-based position in its document
        assert window.count("<sep>") == min(position, 2), f"line {i + 1}: window of k=3 within document {docid}"
        assert window.split(" <sep> ")[-1] == sentences[i], "the last segment of a window is the current sentence"


def test_bpe_text_restores_the_raw_text(demo_workdir):
    from docnmt.preprocess.bpe import remove_bpe
    from docnmt.preprocess.tokenize import detokenize

    raw = (demo_workdir / "data/demo/corpus/test.de").read_text(encoding="utf-8").splitlines()
    encoded = (demo_workdir / "data/demo/bpe/test.de").read_text(encoding="utf-8").splitlines()
    assert len(raw) == len(encoded)
    same = sum(detokenize(remove_bpe(t), "de") == r for r, t in zip(raw, encoded))
    assert same / len(raw) > 0.99, f"only {same}/{len(raw)} test sentences survive tok+BPE -> un-BPE+detok"


def test_the_training_data_is_scattered_into_shards_and_an_evaluation_split_is_one(demo_workdir):
    """.test/config_demo.yaml's two shards: train is tokenized and encoded in two pieces, gathered in order; valid and
    test each in one piece, read from the checked split itself (no scatter job). (The evaluation sets beyond the
    splits, ContraPro and ctxpro, are one piece each too.)"""
    logs = demo_workdir / "logs/demo"
    for lang in ("en", "de"):
        for rule in ("tokenize", "apply_bpe"):
            pieces = sorted(p.name for p in (logs / rule).glob(f"*.{lang}.*.log")
                            if p.name.startswith(("train.", "valid.", "test.")))
            assert pieces == [f"test.{lang}.1-of-1.log", f"train.{lang}.1-of-2.log", f"train.{lang}.2-of-2.log",
                              f"valid.{lang}.1-of-1.log"], (rule, pieces)
    assert sorted(p.name for p in (logs / "shard").glob("*.log")) == ["train.de.log", "train.en.log"]
    for split in ("train", "test"):
        raw = (demo_workdir / f"data/demo/corpus/{split}.en").read_text(encoding="utf-8").splitlines()
        assert len((demo_workdir / f"data/demo/bpe/{split}.en").read_text(encoding="utf-8").splitlines()) == len(raw)


def test_unknown_task_fails_naming_the_key(tmp_path):
    result = run_snakemake(tmp_path, "-n", "--config", "tasks=[demo,wmt99]", check=False)
    assert result.returncode != 0
    assert "tasks[1]" in result.stdout + result.stderr and "wmt99" in result.stdout + result.stderr


def test_bad_corpus_fails_naming_file_and_line_and_leaves_no_output(tmp_path):
    corpus = tmp_path / "mine"
    corpus.mkdir()
    for split in ("train", "valid", "test"):
        (corpus / f"{split}.en").write_text("Hello.\nHow are you?\n", encoding="utf-8")
        (corpus / f"{split}.de").write_text("Hallo.\n", encoding="utf-8")
        (corpus / f"{split}.docids").write_text("d1\nd1\n", encoding="utf-8")
    config = tmp_path / "mine.yaml"
    config.write_text(
        "tasks: [mine]\ntask_settings:\n  mine: {src: en, tgt: de, bpe_merges: 10, dropout: 0.1, "
        f"label_smoothing: 0.1, corpus: {{type: prepared, dir: {corpus}}}}}\n",
        encoding="utf-8",
    )
    result = run_snakemake(tmp_path, "data/mine/corpus/train.stats.json", "--cores", "1", "--configfile", str(config), check=False)
    assert result.returncode != 0
    log = (tmp_path / "logs/mine/check_corpus/train.log").read_text()
    assert "train.de:2: expected 2 lines" in log, log
    assert not (tmp_path / "data/mine/corpus/train.stats.json").exists()


def test_paper_config_dry_run_plans_the_full_dag_offline(paper_dry_run):
    """All three paper tasks: downloads through binarization, training and every decode, planned without network."""
    jobs = collections.Counter(job["rule"] for job in paper_dry_run)
    assert jobs.get("download") == 7, f"every real source is downloaded once (TED's test set is one archive): {jobs}"
    for rule in ("corpus_news", "corpus_ted", "corpus_os"):
        assert jobs.get(rule) == 1, f"{rule}: {jobs}"
    assert jobs.get("binarize") == 6 and jobs.get("train") == 6, f"2 levels x 3 tasks: {jobs}"
    # and each task's three ctxpro sets (config.yaml: en-de for news and os, en-it for ted): 9 more evaluation sets
    assert jobs.get("decode_full_segment") == 3 + 9, "full-segment: test and ctxpro sets (not ContraPro)"
    assert jobs.get("decode_doc_trans") == 5 + 3 + 3 * 2 + 3 + 9 * 2, (
        "test sets of 3 tasks + ContraPro of news and os, + doc-trans+mbr and the MBR plot's 2 counts per test set, "
        "+ doc-trans+cad per test set, + the ctxpro sets, with doc-trans+cad on each")
    assert jobs.get("select_document_mbr") == 3, "pooled+docmbr per test set"
    assert jobs.get("decode_sentence_level") == 5 + 3 + 9 and jobs.get("decode_no_context") == 5 + 9, \
        "MBR: mbr.strategies"
    assert jobs.get("decode_cheating") == 5 + 3, "cheating: not on the ctxpro sets (no reference for the context)"
    assert jobs.get("ctxpro_download") == 2 * 9 - 6, "each set's JSON and inputs once (news and os share theirs)"
    assert all(jobs.get(f"ctxpro_set_{t}") == 3 for t in ("news", "ted", "os")) and jobs.get("ctxpro_accuracy") == 9
    assert jobs.get("contrapro_set") == 2 and jobs.get("data_statistics") == 1
    assert jobs.get("bleu_ter") == 5 + 9, "test of 3 tasks + ContraPro of news and os + the ctxpro sets"
    assert jobs.get("pronoun_f1") == 4, "German targets only: test and ContraPro of news and os (not TED En-It)"
    assert jobs.get("perplexity") == 6 and jobs.get("contrapro_accuracy") == 4, jobs
    assert jobs.get("tables") == 1 and all(jobs.get(f"plot_{p}") == 1 for p in ("bleu", "pronouns", "cost", "mbr",
                                                                                "ctxpro")), jobs


def test_data_target_stops_before_training(paper_dry_run):
    """The jobs `snakemake data` runs (those its inputs need, and theirs): through binarization, no training."""
    made_by = {path: job for job in paper_dry_run for path in job["output"]}
    (data,) = [job for job in paper_dry_run if job["rule"] == "data"]
    needed, wanted = set(), list(data["input"])
    while wanted:
        job = made_by.get(wanted.pop())
        if job is not None and id(job) not in needed:
            needed.add(id(job))
            wanted += job["input"]
    rules = {job["rule"] for job in paper_dry_run if id(job) in needed}
    assert {"download", "corpus_news", "binarize"} <= rules and "train" not in rules, sorted(rules)


@pytest.mark.parametrize("mode", ["parallel", "sequential"])
@pytest.mark.parametrize("with_two_pass", [True, False])
def test_parallel_doc_trans_takes_two_pass_over_as_round_one_where_it_is_decoded(tmp_path, mode, with_two_pass):
    """The doc-trans rule's command, planned: in parallel mode from the sentence-level first pass, plus 2-pass's
    output as round 1 where 2-pass is among the strategies; sequential mode needs neither."""
    strategies = ["sentence-level", "doc-trans"] + (["2-pass"] if with_two_pass else [])
    result = run_snakemake(tmp_path, "-n", "-p", "--forceall", "results/demo/decode/test/doc-trans.txt",
                           "--config", f"strategies=[{','.join(strategies)}]", f"doc_trans={{mode: {mode}}}")
    command = next(line for line in result.stdout.splitlines() if "--strategy doc-trans " in line)
    assert ("--first-pass results/demo/decode/test/sentence-level.bpe" in command) == (mode == "parallel"), command
    assert ("--round-one results/demo/decode/test/2-pass.bpe --round-one-sidecar results/demo/decode/test/2-pass.json"
            in command) == (mode == "parallel" and with_two_pass), command


@pytest.mark.parametrize("dtype", [None, "float16"])
def test_every_search_and_forced_scoring_runs_in_the_configured_dtype(tmp_path, dtype):
    """decode.dtype reaches every decode, perplexity and ContraPro-accuracy command: float32 unless asked."""
    extra = ["--config", f"decode={{dtype: {dtype}}}"] if dtype else []
    result = run_snakemake(tmp_path, "-n", "-p", "--forceall", "results/demo/decode/test/doc-trans.txt",
                           "results/demo/scores/test/perplexity.document.json",
                           "results/demo/scores/contrapro/accuracy.sentence.json", *extra)
    commands = [line for line in result.stdout.splitlines()
                if any(m in line for m in ("docnmt.decode.cli", "docnmt.score.perplexity", "docnmt.score.contrastive"))]
    assert {m for m in ("decode.cli", "perplexity", "contrastive") for c in commands if m in c} == \
        {"decode.cli", "perplexity", "contrastive"}, commands
    for command in commands:
        assert f"--dtype {dtype or 'float32'} " in command, command


def test_the_os_corpus_removes_contrapro_segments_unless_configured_for_films(tmp_path):
    for extra, removal in (([], "segments"), (["task_settings={os: {corpus: {type: os, contrapro_removal: films}}}"],
                                              "films")):
        result = run_snakemake(tmp_path, "-n", "-p", "--forceall", "data/os/corpus/train.en",
                               "--config", "tasks=[os]", *extra)
        command = next(line for line in result.stdout.splitlines() if "docnmt.corpora.parsers os " in line)
        assert f"--contrapro-removal {removal} --contrapro-context 2 " in command, command

"""The search's work against sentence-level's on the demo, in decoder positions (deterministic, unlike wall time):
a check of work, not of time (issue 84). ``bench/decode`` holds the wall-time goals; these hold the positions that
set them, on the demo's models of this run."""

import csv

import pytest

from docnmt import layout
from docnmt.train import demo_digest

#: The most decoder positions a strategy of the paper's O(NL) may compute per sentence-level position.
LIMIT = 1.4


def table1(workdir):
    with open(workdir / layout.task_table("demo", "decoding_cost", "csv"), encoding="utf-8", newline="") as f:
        return {row["strategy"]: row for row in csv.DictReader(f)}


def test_cheatings_searches_compute_at_most_1_4_times_sentence_levels_positions(trained_demo):
    """Table 1 of make test's demo run: cheating's decoder positions per search against sentence-level's. (Its ×SL
    column also counts the 199 repeated sentences of the demo's test set, whose search sentence-level shares and a
    strategy with context cannot: docs/benchmarks.md, "The cost table's slip of December, and where the positions
    go (issue 84)".)"""
    rows = table1(trained_demo)
    sl, cheating = rows["sentence-level"], rows["cheating"]

    def per_search(row):
        return int(row["demo decoder positions"]) / int(row["demo searches"])

    ratio = float(cheating["demo positions per search ×SL"])
    assert ratio == pytest.approx(per_search(cheating) / per_search(sl), abs=0.006)
    assert ratio <= LIMIT, (f"cheating computes {ratio:.2f}x sentence-level's decoder positions per search on the demo "
                            f"(at most {LIMIT}): bench/decode --profile shows where they go")


@pytest.fixture(scope="module")
def demo_decode(demo_models):
    """Each strategy's decode of the demo test set in this process, every request searched (as the paper's Table 1
    counts cost): its decoder positions."""
    from docnmt.corpora.corpus import read_docids
    from docnmt.decode.backends.fairseq.model import Model
    from docnmt.decode.backends.fairseq.search import Searcher
    from docnmt.decode.documents import group
    from docnmt.decode.strategies import REGISTRY, Decoder
    from docnmt.textio import read_lines

    w = demo_models
    src = read_lines(w / "data/demo/bpe/test.en")
    ref = read_lines(w / "data/demo/bpe/test.de")
    ids = read_docids(w / "data/demo/corpus/test.docids")
    models = {level: Model(w / layout.model_file("demo", level), w / f"data/demo/bin/{level}", "cpu", "float32")
              for level in ("sentence", "document")}

    def positions(strategy, **options):
        searcher = Searcher(models["sentence" if strategy == "sentence-level" else "document"], beam=12)
        decoder = Decoder(searcher, k=3, h=12, share_repeated=False, **options)
        REGISTRY[strategy](decoder, group(src, ids, ref))
        return searcher.decoder_positions

    return positions


@pytest.mark.parametrize("strategy", ["doc-trans", "cheating"])
def test_sequential_doc_trans_and_cheating_compute_at_most_1_4_times_sentence_levels_positions(demo_decode, strategy):
    """doc-trans's own work: the workflow's doc-trans row includes its first passes (parallel mode), so its check is a
    decode in sequential mode (each sentence once, after its predecessor) against sentence-level's of the same
    sentences."""
    base = demo_decode("sentence-level")
    ratio = demo_decode(strategy, doc_trans_mode="sequential") / base
    assert ratio <= LIMIT, (f"{strategy} (sequential) computes {ratio:.2f}x sentence-level's decoder positions on the "
                            f"demo (at most {LIMIT}): bench/decode --profile shows where they go")


def test_the_last_bench_decode_table_was_measured_on_these_demo_models():
    """A change to the demo's preset, task settings, data generator or training reruns bench/decode, and its table is
    recorded in docs/benchmarks.md with the date and the digest it prints."""
    recorded = demo_digest.recorded_digests((demo_digest.REPO / "docs/benchmarks.md").read_text(encoding="utf-8"))
    current = demo_digest.demo_models_digest()
    assert recorded, f"docs/benchmarks.md records no '{demo_digest.MARK}' line under a bench/decode table"
    assert recorded[-1] == current, (
        f"the demo's models changed (digest {current}; the last bench/decode table in docs/benchmarks.md was measured "
        f"on {recorded[-1]}): rerun `bench/decode --workdir DEMO` and `bench/decode --long-docs 100` on a quiet machine "
        "and record their tables with the date, bench/machine's figures and the digest they print")


def test_the_digest_follows_the_preset_and_names_a_missing_one(tmp_path):
    from docnmt.config import ConfigError

    text = (demo_digest.REPO / "config.yaml").read_text(encoding="utf-8")
    changed = tmp_path / "config.yaml"
    changed.write_text(text.replace("max-update: 400", "max-update: 401"), encoding="utf-8")
    assert demo_digest.demo_models_digest(changed) != demo_digest.demo_models_digest()
    changed.write_text(text.replace("model: demo\n", "model: tiny\n"), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"config\.yaml: task_settings\.demo\.model names 'tiny'"):
        demo_digest.demo_models_digest(changed)
    assert demo_digest.recorded_digests("x\ndemo models digest: `abc123def456` (2026-12-07)\n") == ["abc123def456"]

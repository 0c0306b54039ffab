"""A researcher's own models: trained with plain fairseq-train outside the workflow (their own BPE codes, their
own dictionary, the separator <brk>), then checked, decoded with every strategy, scored and tabled by the
workflow, whose decodes equal docnmt.decode.cli's for the same checkpoints."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import REPO, run_snakemake, tool_env
from docnmt.corpora.corpus import read_split
from docnmt.textio import read_lines

pytestmark = pytest.mark.workflow

K = 3
SEPARATOR = "<brk>"
#: subword-nmt's own command line (its console script ``subword-nmt``)
SUBWORD_NMT = "from subword_nmt.subword_nmt import main; main()"
PRESET = [
    "--arch", "transformer", "--encoder-layers", "1", "--decoder-layers", "1", "--encoder-embed-dim", "32",
    "--decoder-embed-dim", "32", "--encoder-ffn-embed-dim", "64", "--decoder-ffn-embed-dim", "64",
    "--encoder-attention-heads", "2", "--decoder-attention-heads", "2", "--share-all-embeddings",
    "--optimizer", "adam", "--lr", "0.003", "--lr-scheduler", "inverse_sqrt", "--warmup-updates", "10",
    "--max-tokens", "4000", "--max-update", "40", "--no-epoch-checkpoints", "--cpu",
    "--criterion", "label_smoothed_cross_entropy", "--label-smoothing", "0.1",
]


def python(*args, cwd):
    env = dict(tool_env(), TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD="1")
    return subprocess.run([sys.executable, *map(str, args)], env=env, cwd=cwd, capture_output=True, text=True,
                          check=True)


@pytest.fixture(scope="module")
def own(tmp_path_factory):
    """What a researcher brings: demo-generator data prepared with their own scripts and two trained models."""
    root = tmp_path_factory.mktemp("own models")
    python("-m", "docnmt.corpora.demo", "--outdir", root / "raw", "--seed", 11, "--train-docs", 150,
           "--valid-docs", 8, "--test-docs", 6, cwd=root)
    from docnmt.preprocess.tokenize import tokenize

    splits = {s: read_split(root / f"raw/{s}.en", root / f"raw/{s}.de", root / f"raw/{s}.docids")
              for s in ("train", "valid", "test")}
    for split, docs in splits.items():
        for lang, side in (("en", "src"), ("de", "tgt")):
            (root / f"{split}.tok.{lang}").write_text("".join(tokenize(s, lang) + "\n" for d in docs for s in getattr(d, side)))
    # their own joint BPE, with subword-nmt's own command line
    python("-c", SUBWORD_NMT, "learn-joint-bpe-and-vocab", "--input", root / "train.tok.en", root / "train.tok.de",
           "-s", 400, "-o", root / "bpe.codes", "--write-vocabulary", root / "vocab.en", root / "vocab.de", cwd=root)
    for split in splits:
        for lang in ("en", "de"):
            python("-c", SUBWORD_NMT, "apply-bpe", "-c", root / "bpe.codes", "--input", root / f"{split}.tok.{lang}",
                   "--output", root / f"{split}.bpe.{lang}", cwd=root)
    # their own k=3 windows, joined by <brk>, within documents
    for split, docs in splits.items():
        for lang in ("en", "de"):
            lines, out, start = read_lines(root / f"{split}.bpe.{lang}"), [], 0
            for doc in docs:
                part = lines[start:start + len(doc)]
                out += [f" {SEPARATOR} ".join(part[max(0, i - K + 1): i + 1]) for i in range(len(part))]
                start += len(doc)
            (root / f"{split}.win.{lang}").write_text("".join(line + "\n" for line in out))
    for level, prefix in (("sentence", "bpe"), ("document", "win")):
        python("-m", "fairseq_cli.preprocess", "--source-lang", "en", "--target-lang", "de", "--joined-dictionary",
               "--trainpref", f"train.{prefix}", "--validpref", f"valid.{prefix}", "--destdir", f"{level}-bin",
               "--workers", 1, cwd=root)
        python("-m", "fairseq_cli.train", f"{level}-bin", *PRESET, "--save-dir", f"{level}-ck", cwd=root)
    # the test documents, raw, as a prepared corpus folder
    (root / "corpus").mkdir()
    for ext in ("en", "de", "docids"):
        (root / "corpus" / f"test.{ext}").write_bytes((root / f"raw/test.{ext}").read_bytes())
    return root


def external_config(own: Path, workdir: Path, levels=("sentence", "document")) -> Path:
    models = {"k": K, "separator": SEPARATOR, "bpe_codes": str(own / "bpe.codes"), "tokenize": "moses"}
    for level in levels:
        models[level] = {"checkpoint": str(own / f"{level}-ck/checkpoint_best.pt"), "data": str(own / f"{level}-bin")}
    # beam 2 and h 2 keep the barely trained models' nine decodes short
    config = {"tasks": ["mine"], "beam": 2, "h": 2, "task_settings": {"mine": {
        "description": "my own models", "src": "en", "tgt": "de", "pronoun_min_examples": 1,
        "corpus": {"type": "prepared", "dir": str(own / "corpus")}, "models": models}}}
    path = workdir / "mine.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def test_the_workflow_compares_the_strategies_on_models_trained_elsewhere(own, tmp_path):
    config = external_config(own, tmp_path)
    run_snakemake(tmp_path, "tables", "--cores", "2", "--resources", "gpu=1", "--configfile", str(config))
    assert not (tmp_path / "results/mine/models/document/checkpoint_best.pt").exists(), "no training"
    assert not list((tmp_path / "data/mine").glob("bin*")) and not (tmp_path / "data/mine/bpe/codes").exists()
    check = json.loads((tmp_path / "results/mine/models/document/check.json").read_text())
    assert (check["separator"], check["k"], check["bpe"]["unknown"]) == (SEPARATOR, K, 0)
    bleu = (tmp_path / "results/tables/bleu_ter.md").read_text()
    for strategy in ("sentence-level", "2-pass", "doc-trans", "doc-trans-beam", "cheating"):
        assert f"| {strategy} | " in bleu and f"| {strategy} | - |" not in bleu, strategy
    # the workflow's decodes are docnmt.decode.cli's for the same checkpoints
    for strategy in ("last-sentence", "doc-trans"):
        out = tmp_path / f"cli-{strategy}"
        extra = ["--doc-trans-mode", "sequential"] if strategy == "doc-trans" else []
        python("-m", "docnmt.decode.cli", "--strategy", strategy, *extra,
               "--model", own / "document-ck/checkpoint_best.pt", "--data", own / "document-bin",
               "--src", tmp_path / "data/mine/bpe/test.en", "--docids", own / "corpus/test.docids",
               "--separator", SEPARATOR, "--k", K, "--beam", 2, "--tgt-lang", "de", "--output-bpe", f"{out}.bpe",
               "--output", f"{out}.txt", "--sidecar", f"{out}.json", cwd=REPO)
        assert read_lines(f"{out}.txt") == read_lines(tmp_path / f"results/mine/decode/test/{strategy}.txt"), strategy
    # and the workflow's BPE of the test set is what the researcher's own subword-nmt call gave
    assert read_lines(tmp_path / "data/mine/bpe/test.en") == read_lines(own / "test.bpe.en")


def test_a_missing_sentence_level_model_skips_its_strategies_and_the_tables_say_why(own, tmp_path):
    config = external_config(own, tmp_path, levels=("document",))
    run_snakemake(tmp_path, "tables", "--cores", "2", "--resources", "gpu=1", "--configfile", str(config))
    bleu = (tmp_path / "results/tables/bleu_ter.md").read_text()
    assert "| sentence-level | - | - |" in bleu and "| 2-pass | - | - |" in bleu
    assert "| doc-trans | - |" not in bleu, "doc-trans runs sequentially without the sentence-level first pass"
    assert "mine: not decoded (\"-\"): sentence-level (no sentence-level model in task_settings.mine.models); " \
           "2-pass (no sentence-level model in task_settings.mine.models)." in bleu
    sidecar = json.loads((tmp_path / "results/mine/decode/test/doc-trans.json").read_text())
    assert sidecar["doc_trans_mode"] == "sequential" and sidecar["separator"] == SEPARATOR


def test_a_wrong_separator_stops_before_any_decode_naming_the_dictionary(own, tmp_path):
    config = external_config(own, tmp_path)
    data = yaml.safe_load(config.read_text())
    data["task_settings"]["mine"]["models"]["separator"] = "<sep>"
    config.write_text(yaml.safe_dump(data))
    result = run_snakemake(tmp_path, "tables", "--cores", "2", "--resources", "gpu=1", "--configfile", str(config),
                           check=False)
    assert result.returncode != 0
    log = (tmp_path / "logs/mine/check_model/document.log").read_text()
    assert "dict.en.txt: expected the separator token '<sep>' of the document-level model" in log
    decoded = {p.stem for p in (tmp_path / "results/mine/decode").glob("*/*.txt")}
    assert decoded <= {"sentence-level"}, f"no document-level decode may start: {decoded}"

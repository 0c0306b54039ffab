"""docs/own-models.md's configs and commands for models trained elsewhere, run as written (make test-full): the
fairseq `models:` config with its snakemake command and the WMT test-set commands, the transformers task and the
causal-LM task. The researcher's models are tests/test_external_models.py's (its ``own`` fixture, made once per
session)."""

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from helpers import REPO, doc_blocks, run_snakemake, shell_commands, tool_env
from docnmt.corpora.corpus import read_split
from docnmt.textio import read_lines
from test_external_models import K, SEPARATOR, hf_task, own, row, wmt_xml  # noqa: F401 (own: the fixture)

pytestmark = [pytest.mark.workflow, pytest.mark.trains, pytest.mark.full]


# ---- docs/own-models.md's configs and commands for the workflow, as written ----------------------------------------
def checkout_links(folder: Path) -> Path:
    """A working directory from which a bare `snakemake` (no -s) runs this checkout's workflow, as from the checkout:
    its Snakefile, config.yaml, rules/ and schemas/ linked (the workflow finds them beside its Snakefile)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("Snakefile", "config.yaml", "rules", "schemas"):
        (folder / name).symlink_to(REPO / name)
    return folder


def test_the_manuals_models_config_snakemake_command_and_test_set_commands_run_as_written(own, tmp_path):
    """docs/own-models.md's fairseq `models:` config ("In the workflow"), written as `mine.yaml` with only its root
    `/data/` replaced by a folder here, where `mine/corpus` holds the researcher's first two test documents and the
    other paths their codes, checkpoints and data folders; then the page's `snakemake` command, as written, through a
    shell from a working directory with the checkout's Snakefile: no training, both models checked, every strategy
    decoded, scored and tabled. Then its two commands for WMT test sets ("WMT test sets") on the same documents as a
    WMT XML and a WMT24++ JSONL file: the same translations as the workflow's doc-trans."""
    from sacrebleu.dataset.base import Dataset
    from sacrebleu.dataset.wmt_xml import WMTXMLDataset

    page = REPO / "docs/own-models.md"
    (block,) = doc_blocks(page, "yaml", "## In the workflow")
    (command,) = shell_commands(page, "## In the workflow")
    testset_commands = shell_commands(page, "## WMT test sets")
    assert command == "snakemake --cores all --resources gpu=1 --configfile mine.yaml", command
    assert [c.split()[:3] for c in testset_commands] == [["docnmt-translate", "--input", "wmttest2023.en-de.xml"],
                                                         ["docnmt-translate", "--input", "en-de_DE.jsonl"]]
    mine = tmp_path / "data/mine"
    (mine / "corpus").mkdir(parents=True)
    first, second = read_split(own / "corpus/test.en", own / "corpus/test.de", own / "corpus/test.docids")[:2]
    lines = [0, 1, 2, len(first), len(first) + 1, len(first) + 2]  # two documents, three sentences each
    for ext in ("en", "de", "docids"):
        kept = [read_lines(own / f"corpus/test.{ext}")[line] for line in lines]
        (mine / f"corpus/test.{ext}").write_text("".join(s + "\n" for s in kept), encoding="utf-8")
    docs = read_split(mine / "corpus/test.en", mine / "corpus/test.de", mine / "corpus/test.docids")
    (mine / "bpe.codes").symlink_to(own / "bpe.codes")
    for level, name in (("sentence", "sent"), ("document", "doc")):
        (mine / name).mkdir()
        (mine / f"{name}/checkpoint_best.pt").symlink_to(own / f"{level}-ck/checkpoint_best.pt")
        (mine / f"{name}-bin").symlink_to(own / f"{level}-bin", target_is_directory=True)
    work = checkout_links(tmp_path / "work")
    (work / "mine.yaml").write_text(block.replace("/data/", f"{tmp_path}/data/"), encoding="utf-8")
    result = subprocess.run(command, shell=True, cwd=work, env=tool_env(), capture_output=True, text=True,
                            timeout=1800)
    assert result.returncode == 0, f"{command}\n{result.stdout[-3000:]}\n{result.stderr[-6000:]}"
    assert not list((work / "results/mine/models").glob("*/checkpoint_best.pt")), "no training"
    checks = {level: json.loads((work / f"results/mine/models/{level}/check.json").read_text())
              for level in ("sentence", "document")}
    assert (checks["document"]["separator"], checks["document"]["k"]) == (SEPARATOR, K), checks["document"]
    assert checks["sentence"]["bpe"]["unknown"] == checks["document"]["bpe"]["unknown"] == 0
    sentences = len(lines)
    assert read_lines(work / "data/mine/bpe/test.en") == [read_lines(own / "test.bpe.en")[line] for line in lines]
    bleu = (work / "results/tables/mine/quality.md").read_text()
    for strategy in yaml.safe_load((REPO / "config.yaml").read_text())["strategies"]:  # the paper's nine
        assert row(bleu, strategy, "mine")[0] != "-", (strategy, bleu)
    assert (work / "results/plots/mine/bleu.png").is_file() and (work / "results/tables/mine/pronoun_f1.md").is_file()
    workflow = read_lines(work / "results/mine/decode/test/doc-trans.txt")
    assert len(workflow) == sentences
    # the test set commands, on the same documents as WMT XML and WMT24++ JSONL files
    wmt_xml(mine, work / "wmttest2023.en-de.xml")
    rows = [{"lp": "en-de_DE", "domain": "speech", "document_id": d.docid, "segment_id": n, "is_bad_source": False,
             "source": s, "target": t, "original_target": t}
            for d in docs for n, (s, t) in enumerate(zip(d.src, d.tgt))]
    (work / "en-de_DE.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    for command in testset_commands:
        result = subprocess.run(command, shell=True, cwd=work, env=tool_env(), capture_output=True, text=True,
                                timeout=600)
        assert result.returncode == 0, f"{command}\n{result.stdout[-2000:]}\n{result.stderr[-3000:]}"
    fields = WMTXMLDataset._unwrap_wmt21_or_later(str(work / "submission.xml"))
    assert [Dataset._clean(t) for t in fields["docnmt-doc-trans"]] == workflow
    written = [json.loads(line) for line in (work / "en-de_DE.mine.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r["source"] for r in written] == [r["source"] for r in rows]
    assert [r["hypothesis"] for r in written] == workflow


def test_the_manuals_transformers_task_runs_as_written(hf_marian, tmp_path):
    """docs/own-models.md's `models:` config for a Hugging Face model ("Hugging Face models", "In the workflow"), as
    written with only its roots `/data/` and `/models/` replaced by folders here: `my-talks` holds two short demo test
    documents, and both model folders are the tiny Marian model. The workflow checks both folders and decodes
    doc-trans (parallel, from the sentence-level first pass): the Python API's sequential doc-trans, beam 12."""
    from docnmt import layout
    from docnmt.decode.backends.transformers.model import HFModel, HFSearcher
    from docnmt.decode.documents import group
    from docnmt.decode.strategies import REGISTRY, Decoder

    (block,) = doc_blocks(REPO / "docs/own-models.md", "yaml", "## Hugging Face models", "**In the workflow.**")
    task = hf_task(tmp_path, hf_marian)  # its corpus folder: two demo documents, six sentences each
    talks = tmp_path / "data/my-talks"
    talks.mkdir(parents=True)
    for ext in ("en", "de", "docids"):
        (talks / f"test.{ext}").write_text((Path(task["corpus"]["dir"]) / f"test.{ext}").read_text())
    (tmp_path / "models").mkdir()
    for name in ("opus-mt-en-de", "opus-mt-en-de-doc"):
        (tmp_path / "models" / name).symlink_to(hf_marian, target_is_directory=True)
    config = tmp_path / "mine-hf.yaml"
    config.write_text(block.replace("/data/", f"{tmp_path}/data/").replace("/models/", f"{tmp_path}/models/"))
    decoded = layout.decode_file("mine-hf", "test", "doc-trans", "txt")
    run_snakemake(tmp_path / "work", decoded, "--profile", str(REPO / "profiles/cpu"), "--cores", "2",
                  "--configfile", str(config))
    checks = {level: json.loads((tmp_path / "work" / layout.model_check("mine-hf", level)).read_text())
              for level in ("sentence", "document")}
    assert {(c["backend"], c["model_type"]) for c in checks.values()} == {("transformers", "marian")}
    assert (checks["document"]["separator"], checks["document"]["k"]) == (SEPARATOR, K), checks["document"]
    sidecar = json.loads((tmp_path / "work" / layout.decode_file("mine-hf", "test", "doc-trans", "json")).read_text())
    assert (sidecar["backend"], sidecar["doc_trans_mode"], sidecar["converged"]) == ("transformers", "parallel", True)
    docs = group(read_lines(talks / "test.en"), read_lines(talks / "test.docids"))
    marian = HFModel(hf_marian, separator=SEPARATOR, device="cpu")
    expected = REGISTRY["doc-trans"](Decoder(HFSearcher(marian, beam=12), k=K, h=12), docs)
    assert read_lines(tmp_path / "work" / decoded) == [s for d in expected for s in d]


def test_the_manuals_causal_lm_task_runs_as_written(tiny_llama, tmp_path):
    """docs/own-models.md's `models:` config for an LLM ("LLMs", "In the workflow"), as written with only its roots
    `/data/` and `/models/` replaced by folders here: `my-talks` holds two short demo test documents, `my-llm` is the
    tiny Llama. The workflow checks it as both levels and decodes doc-trans (parallel, from the sentence-level first
    pass): the Python API's sequential doc-trans with the default template, beam 12."""
    from docnmt import layout
    from docnmt.decode.backends import load_model, make_searcher
    from docnmt.decode.documents import group
    from docnmt.decode.strategies import REGISTRY, Decoder

    (block,) = doc_blocks(REPO / "docs/own-models.md", "yaml", "## LLMs", "**In the workflow.**")
    task = hf_task(tmp_path, tiny_llama)
    talks = tmp_path / "data/my-talks"
    talks.mkdir(parents=True)
    for ext in ("en", "de", "docids"):
        lines = (Path(task["corpus"]["dir"]) / f"test.{ext}").read_text().splitlines()
        (talks / f"test.{ext}").write_text("".join(line + "\n" for line in lines[:3] + lines[6:9]))
    (tmp_path / "models").mkdir()
    (tmp_path / "models/my-llm").symlink_to(tiny_llama, target_is_directory=True)
    config = tmp_path / "mine-llm.yaml"
    config.write_text(block.replace("/data/", f"{tmp_path}/data/").replace("/models/", f"{tmp_path}/models/"))
    decoded = layout.decode_file("mine-llm", "test", "doc-trans", "txt")
    run_snakemake(tmp_path / "work", decoded, "--profile", str(REPO / "profiles/cpu"), "--cores", "2",
                  "--configfile", str(config))
    for level in ("sentence", "document"):
        check = json.loads((tmp_path / "work" / layout.model_check("mine-llm", level)).read_text())
        assert (check["backend"], check["model_type"], check["chat_template"]) == ("causal-lm", "llama", True)
    sidecar = json.loads((tmp_path / "work" / layout.decode_file("mine-llm", "test", "doc-trans", "json")).read_text())
    assert (sidecar["backend"], sidecar["doc_trans_mode"], sidecar["converged"]) == ("causal-lm", "parallel", True)
    docs = group(read_lines(talks / "test.en"), read_lines(talks / "test.docids"))
    model = load_model("causal-lm", tiny_llama, src_lang="en", tgt_lang="de", device="cpu")
    expected = REGISTRY["doc-trans"](Decoder(make_searcher(model, beam=12), k=K, h=12), docs)
    assert read_lines(tmp_path / "work" / decoded) == [s for d in expected for s in d]

"""A researcher's own Hugging Face models in the workflow: a transformers (seq2seq) task on the tiny Marian model and a
causal-LM task on the tiny Llama in one run, and a base model's task with its own plain template; each checked,
decoded with every strategy its backend takes, scored and tabled, its doc-trans the Python API's. The fairseq models
trained elsewhere are tests/test_external_models.py's (a module of its own, so that each runs on its own worker)."""

import json
from pathlib import Path

import pytest
import yaml

from helpers import REPO, run_snakemake
from test_external_models import K, PLAIN_TEMPLATE, SEPARATOR, hf_task, llm_task, row, search_settings
from docnmt.textio import read_lines

#: make test-full: models trained elsewhere.
pytestmark = [pytest.mark.workflow, pytest.mark.trains, pytest.mark.full]

#: the tables of :func:`hf_tasks`' run (tables.name: its tasks)
TABLES = "results/tables/hf+llm"


@pytest.fixture(scope="module")
def hf_tasks(hf_marian, tiny_llama, tmp_path_factory) -> Path:
    """One workflow run, two tasks on Hugging Face models trained elsewhere: ``hf`` on the tiny Marian model
    (:func:`hf_task`), which takes pronoun F1's reporting rule from scoring.pronoun_min_examples, and ``llm`` on the
    tiny Llama (:func:`llm_task`), which sets its own; the search settings of every such run
    (:func:`search_settings`)."""
    workdir = tmp_path_factory.mktemp("hf-models-workflow")
    hf = hf_task(workdir, hf_marian)
    del hf["pronoun_min_examples"]
    (workdir / "llm").mkdir()
    config = {"tasks": ["hf", "llm"], **search_settings(), "scoring": {"pronoun_min_examples": 2},
              "decode": {"cache_bytes": "64M"},  # the causal LM's prefix cache; the other backends hold none
              "task_settings": {"hf": hf, "llm": llm_task(workdir / "llm", tiny_llama)}}
    (workdir / "hf.yaml").write_text(yaml.safe_dump(config))
    run_snakemake(workdir, "tables", "--profile", str(REPO / "profiles/cpu"), "--cores", "2", "--configfile",
                  str(workdir / "hf.yaml"))
    return workdir


def test_the_workflow_gives_the_tables_of_a_transformers_task(hf_tasks, hf_marian):
    """Checked, decoded with every strategy, scored and tabled, with no tokenization, BPE or binarization of its own;
    the tables' notes name the backend; its doc-trans (parallel) is the Python API's sequential doc-trans."""
    from docnmt.decode.documents import group
    from docnmt.decode.backends.transformers.model import HFModel, HFSearcher
    from docnmt.decode.strategies import REGISTRY, Decoder, strategies_for

    workdir = hf_tasks
    check = json.loads((workdir / "results/hf/models/document/check.json").read_text(encoding="utf-8"))
    sentences = len(read_lines(workdir / "hf-corpus/test.en"))
    assert (check["backend"], check["separator"], check["sample"]["lines"]) == ("transformers", "<brk>", sentences)
    assert not (workdir / "data/hf/bin").exists() and not (workdir / "data/hf/bpe/codes").exists()
    bleu = (workdir / TABLES / "quality.md").read_text(encoding="utf-8")
    for strategy in strategies_for("transformers"):
        cells = row(bleu, strategy, "hf")
        assert cells and "-" not in cells, (strategy, bleu)
    assert "The search on transformers (Hugging Face) models for hf" in bleu
    perplexity = (workdir / TABLES / "perplexity.md").read_text(encoding="utf-8")
    assert "The forced scoring on transformers (Hugging Face) models for hf" in perplexity
    # pronoun F1's reporting rule: the task's own where it sets one, else scoring.pronoun_min_examples (2, not 100)
    for task, least in (("hf", 2), ("llm", 1)):
        pronouns = json.loads((workdir / f"results/{task}/scores/test/pronouns.json").read_text(encoding="utf-8"))
        assert pronouns["min_examples"] == least and all(
            cell["reported"] == all(n >= least for n in cell["examples"].values())
            for scores in pronouns["systems"].values() for cell in scores.values()), task
    sidecar = json.loads((workdir / "results/hf/decode/test/doc-trans.json").read_text(encoding="utf-8"))
    assert sidecar["backend"] == "transformers" and sidecar["doc_trans_mode"] == "parallel" and sidecar["converged"]
    src = read_lines(workdir / "data/hf/bpe/test.en")
    assert src == read_lines(workdir / "hf-corpus/test.en"), "plain text: no Moses, no BPE"
    docs = group(src, read_lines(workdir / "hf-corpus/test.docids"))
    marian = HFModel(hf_marian, separator=SEPARATOR, device="cpu")
    expected = REGISTRY["doc-trans"](Decoder(HFSearcher(marian, beam=2), k=K, h=2), docs)
    assert read_lines(workdir / "results/hf/decode/test/doc-trans.txt") == [s for d in expected for s in d]


def test_the_workflow_gives_the_tables_of_a_causal_lm_task(hf_tasks, tiny_llama):
    """Checked, decoded with every strategy, scored and tabled; Table 1 counts the prompt tokens read from the cache;
    the notes name the backend and the template; its doc-trans is the Python API's sequential doc-trans."""
    from docnmt.decode.backends import load_model, make_searcher
    from docnmt.decode.documents import group
    from docnmt.decode.strategies import REGISTRY, Decoder, strategies_for

    workdir = hf_tasks
    check = json.loads((workdir / "results/llm/models/document/check.json").read_text(encoding="utf-8"))
    assert (check["backend"], check["model_type"], check["chat_template"]) == ("causal-lm", "llama", True)
    tables = workdir / TABLES
    bleu = (tables / "quality.md").read_text(encoding="utf-8")
    for strategy in strategies_for("causal-lm"):
        cells = row(bleu, strategy, "llm")
        assert cells and "-" not in cells, (strategy, bleu)
    assert "The search on causal-lm (causal LM) models for llm (template my-chat.yaml)" in bleu
    cost = (tables / "decoding_cost.md").read_text(encoding="utf-8")
    prefilled, _, cached, _, generated, _ = row(cost, "doc-trans", "llm")[10:]
    assert int(cached) > 0 and int(generated) > 0 and int(prefilled) > 0, cost
    assert "tokens from cache" in cost and "hf tokens prefilled" not in cost
    sidecar = json.loads((workdir / "results/llm/decode/test/doc-trans.json").read_text(encoding="utf-8"))
    assert sidecar["template"] == "my-chat.yaml" and sidecar["tokens_cached"] == int(cached)
    assert sidecar["prefix_cache"]["limit_bytes"] == 64 << 20, "decode.cache_bytes reaches the decode"
    assert 0 < sidecar["prefix_cache"]["bytes_peak"] <= 64 << 20
    assert "prefix_cache" not in json.loads((workdir / "results/hf/decode/test/doc-trans.json").read_text()), \
        "decode.cache_bytes is set; the transformers backend holds no prefix cache"
    perplexity = (tables / "perplexity.md").read_text(encoding="utf-8")
    assert "causal LM" in perplexity
    src = read_lines(workdir / "llm/hf-corpus/test.en")
    docs = group(src, read_lines(workdir / "llm/hf-corpus/test.docids"))
    model = load_model("causal-lm", tiny_llama, src_lang="en", tgt_lang="de", device="cpu",
                       template=str(workdir / "llm/my-chat.yaml"))
    expected = REGISTRY["doc-trans"](Decoder(make_searcher(model, beam=2), k=K, h=2), docs)
    assert read_lines(workdir / "results/llm/decode/test/doc-trans.txt") == [s for d in expected for s in d]


def test_a_base_model_task_decodes_and_scores_with_its_own_plain_template(tiny_qwen2_base, tmp_path):
    """models.template in a workflow task on a base model (no chat template): the decode and perplexity rules pass it
    on, and the output is the Python API's with that template. The prompt names the languages of
    models.language_codes (names, not the task's codes), and doc-trans runs sentence after sentence (doc_trans.mode
    sequential) although the task has a sentence-level model."""
    from docnmt import layout
    from docnmt.decode.backends import load_model, make_searcher
    from docnmt.decode.documents import group
    from docnmt.decode.strategies import REGISTRY, Decoder

    task = llm_task(tmp_path, tiny_qwen2_base, PLAIN_TEMPLATE, "my-plain.yaml")
    task["description"] = "a base causal LM"
    task["models"]["language_codes"] = {"src": "English", "tgt": "Swiss German"}
    config = tmp_path / "base.yaml"
    # the strategies it checks (last-sentence; doc-trans, which the document model's perplexity reads), no MBR
    config.write_text(yaml.safe_dump({"tasks": ["base"], "beam": 2, "doc_trans": {"mode": "sequential"},
                                      "strategies": ["last-sentence", "doc-trans"], "mbr": {"strategies": []},
                                      "task_settings": {"base": task}}))
    decoded = layout.decode_file("base", "test", "last-sentence", "txt")
    result = run_snakemake(tmp_path, decoded, layout.score_file("base", "test", "perplexity.document"), "--profile",
                           str(REPO / "profiles/cpu"), "--cores", "2", "--configfile", str(config), "-p")
    sidecar = json.loads((tmp_path / layout.decode_file("base", "test", "last-sentence", "json")).read_text())
    assert sidecar["template"] == "my-plain.yaml"
    commands = [line for line in result.stdout.splitlines() + result.stderr.splitlines()
                if line.startswith("Shell command: ") and "docnmt.decode.cli" in line]
    assert commands and all("--src-lang English --tgt-lang 'Swiss German'" in line for line in commands), commands
    src = read_lines(tmp_path / "hf-corpus/test.en")
    docs = group(src, read_lines(tmp_path / "hf-corpus/test.docids"))
    model = load_model("causal-lm", tiny_qwen2_base, src_lang="English", tgt_lang="Swiss German", device="cpu",
                       template=str(tmp_path / "my-plain.yaml"))
    assert not model.prompter.chat
    prompt = model.prompter.text([], src[0])
    assert "Translate from English into Swiss German." in prompt and prompt.endswith("Swiss German:\n"), prompt
    expected = REGISTRY["last-sentence"](Decoder(make_searcher(model, beam=2), k=K, h=2), docs)
    assert read_lines(tmp_path / decoded) == [s for d in expected for s in d]
    # doc-trans (decoded for the document model's perplexity): sequential, without the sentence-level first pass
    doc_trans = json.loads((tmp_path / layout.decode_file("base", "test", "doc-trans", "json")).read_text())
    assert doc_trans["doc_trans_mode"] == "sequential" and "first_pass" not in doc_trans
    assert "converged" not in doc_trans and "round_one" not in doc_trans

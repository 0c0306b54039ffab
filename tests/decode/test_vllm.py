"""The backend vllm (docnmt.decode.backends.vllm) against causal-lm on the tests' tiny trained Llama (head size 32),
in float32 on the CPU: greedy search gives causal-lm's translations for every strategy, forced scoring its
log-probs within 1e-3, and the cost counters the same prompt tokens. vLLM runs in its own environment (.venv-vllm,
`make vllm`, which `make test` makes): one process (tests/vllm_side.py) loads the model once for the session and
writes what the tests compare."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import VLLM_PYTHON
from vllm_side import decode_run

REPO = Path(__file__).resolve().parents[2]
#: The module's fixtures that train a model (conftest gives their tests the tier ``trains``).
TRAINING_FIXTURES = {"llama"}
GREEDY = ["sentence-level", "doc-trans", "doc-trans-document", "cheating", "source-primed"]


@pytest.fixture(scope="module")
def documents(vllm_documents):
    return vllm_documents


@pytest.fixture(scope="module")
def llama(tiny_llama):
    from docnmt.decode.backends import load_model

    return load_model("causal-lm", tiny_llama, src_lang="en", tgt_lang="de", device="cpu")


@pytest.mark.parametrize("name", GREEDY)
def test_greedy_vllm_gives_causal_lms_translations_and_reads_the_same_prompt_tokens(vllm_outputs, llama, documents,
                                                                                   name):
    expected, counters = decode_run(llama, documents, name)
    found = vllm_outputs["decodes"][name]
    assert found["hypotheses"] == expected
    assert len(expected) == len(documents["src"]) and all(expected)
    # the same prompts, whichever engine's cache served them
    seen = found["counters"]
    assert seen["tokens_prefilled"] + seen["tokens_cached"] == counters["tokens_prefilled"] + counters["tokens_cached"]
    assert seen["tokens_generated"] > 0 and seen["forward_calls"] > 0


def test_speculative_ngram_gives_the_same_greedy_translations_and_refuses_epsilon_sampling(vllm_outputs):
    """decode.speculative: ngram (vLLM's n-gram speculative decoding, drafts looked up in the prompt): every greedy
    decode and refine over the sentence-level draft give the engine's translations without it; epsilon sampling, a
    logits processor vLLM does not run then, is refused in words."""
    found = vllm_outputs["speculative"]
    assert found["decodes"] == {name: vllm_outputs["decodes"][name]["hypotheses"] for name in found["decodes"]}
    assert set(found["decodes"]) == set(GREEDY)
    assert found["refine"] == vllm_outputs["refine"] and all(found["refine"])
    assert found["sample"].startswith("epsilon sampling (MBR's samples) runs as the engine's logits processor")
    # docnmt-translate --speculative ngram: the talks as translated without it
    assert found["translate"] == 0 and found["translated"] == vllm_outputs["clis"]["translated"]


def test_forced_scoring_agrees_within_a_thousandth_of_a_nat(vllm_outputs, llama, documents):
    from docnmt.decode.backends import make_searcher
    from docnmt.decode.requests import Request

    searcher = make_searcher(llama, beam=1)
    requests = [Request(llama.encode(s, source=True)) for s in documents["src"]]
    targets = [llama.encode(t, source=True) for t in documents["ref"]]
    expected = [s.logprob for s in searcher.score_forced(requests, targets)]
    assert vllm_outputs["forced"] == pytest.approx(expected, abs=1e-3)
    pairs = [s.logprob for s in llama.score(documents["pairs"]["src"], documents["pairs"]["tgt"])]
    assert vllm_outputs["pairs"] == pytest.approx(pairs, abs=1e-3)


def test_beam_search_gives_causal_lms_translations_and_n_best(vllm_outputs, llama, documents):
    """vLLM's beam search runs causal-lm's (transformers') search over the engine's steps
    (docnmt.decode.prompting.beam): at beam 3 the strategy's translations are causal-lm's, and at the paper's beam 12
    the 12-best of two requests are causal-lm's, scores within 1e-3."""
    from docnmt.decode.backends import make_searcher
    from docnmt.decode.requests import Request

    expected, _ = decode_run(llama, documents, "sentence-level-beam-3")
    assert vllm_outputs["decodes"]["sentence-level-beam-3"]["hypotheses"] == expected
    requests = [Request(llama.encode(s, source=True)) for s in documents["src"][:2]]
    nbest = make_searcher(llama, beam=12, max_len=20).search(requests)
    found = vllm_outputs["beam_12"]
    assert [[text for text, _ in hyps] for hyps in found] == [[llama.decode(h.tokens) for h in hyps] for hyps in nbest]
    assert [score for hyps in found for _, score in hyps] == pytest.approx([h.score for hyps in nbest for h in hyps],
                                                                           abs=1e-3)


def test_beam_search_with_a_plain_template_ends_at_its_end_text_as_causal_lm_does(vllm_outputs, tiny_qwen2_base,
                                                                                     documents):
    """A base model's plain template ends an answer with a text (a blank line), not a token: vLLM's beam search
    watches the candidates' texts as causal-lm's generate does with its stop string, and gives the same 4-best."""
    from docnmt.decode.backends import load_model, make_searcher
    from docnmt.decode.requests import Request

    model = load_model("causal-lm", tiny_qwen2_base, src_lang="en", tgt_lang="de", device="cpu", template="translate")
    requests = [Request(model.encode(s, source=True)) for s in documents["src"][:4]]
    nbest = make_searcher(model, beam=4, max_len=30).search(requests)
    found = vllm_outputs["plain_beam_4"]
    assert [[(text, complete) for text, _, complete in hyps] for hyps in found] == \
        [[(model.decode(h.tokens), h.complete) for h in hyps] for hyps in nbest]
    assert [score for hyps in found for _, score, _ in hyps] == pytest.approx(
        [h.score for hyps in nbest for h in hyps], abs=1e-3)
    assert any(complete for hyps in found for _, _, complete in hyps), "some answers end at the template's end text"


def test_epsilon_samples_repeat_under_a_seed_and_an_epsilon_near_1_leaves_the_greedy_answer(vllm_outputs):
    same, again, greedy = vllm_outputs["samples"]
    assert same == again and len(same) == 4
    assert greedy == [vllm_outputs["decodes"]["sentence-level"]["hypotheses"][0]] * 4


def test_the_engine_ran_in_float32_on_the_cpu(vllm_outputs):
    assert vllm_outputs["dtype"] == "float32" and vllm_outputs["device"] == "cpu"


def test_the_console_scripts_run_on_vllm_with_engine_args_reusing_one_engine(vllm_outputs, documents):
    """docnmt-check-model, docnmt-decode, docnmt-perplexity, docnmt-cxmi and docnmt-translate with --backend vllm and
    --engine-args, called in the vLLM process after the model above was loaded with the same engine options (the
    engine is reused): each exits 0; the decode CLI's doc-trans is the Python API's; perplexity and CXMI are
    scored."""
    clis = vllm_outputs["clis"]
    assert {name: clis[name] for name in ("check", "decode", "perplexity", "cxmi", "translate")} == dict.fromkeys(
        ("check", "decode", "perplexity", "cxmi", "translate"), 0)
    assert clis["decoded"] == vllm_outputs["decodes"]["doc-trans"]["hypotheses"]
    assert len(clis["translated"].strip().split("\n\n")) == 2  # the two documents, a blank line between
    assert json.dumps(clis["perplexity_json"]) and json.dumps(clis["cxmi_json"])


def prepared_corpus(documents: dict, tmp_path: Path) -> Path:
    """The documents as a prepared corpus's test set in ``tmp_path`` (a workflow task's ``corpus: prepared``); a
    skip where vLLM's environment is not made."""
    if not VLLM_PYTHON.exists():
        pytest.skip(f"no vLLM environment at {VLLM_PYTHON}: `make vllm` makes it (make test-full does)")
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name, lines in (("test.en", documents["src"]), ("test.de", documents["ref"]),
                        ("test.docids", documents["docids"])):
        (corpus / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return corpus


@pytest.mark.full  # needs .venv-vllm, which make test-full makes
def test_a_vllm_task_checks_its_models_in_vllms_environment_with_its_engine_args(tiny_llama, documents, tmp_path):
    """A workflow task with backend: vllm and every key of models.engine_args, run for its check_model jobs (no engine
    starts for a check): the rule runs the check in .venv-vllm with --engine-args, whose max_model_len becomes the
    context window the check reports."""
    import yaml

    from helpers import run_snakemake

    corpus = prepared_corpus(documents, tmp_path)
    engine = {"tensor_parallel_size": 1, "gpu_memory_utilization": 0.1, "max_model_len": 256, "seed": 3}
    task = {"src": "en", "tgt": "de", "corpus": {"type": "prepared", "dir": str(corpus)},
            "models": {"backend": "vllm", "engine_args": engine, "sentence": {"checkpoint": str(tiny_llama)},
                       "document": {"checkpoint": str(tiny_llama)}}}
    (tmp_path / "mine.yaml").write_text(yaml.safe_dump({"tasks": ["mine-vllm"],
                                                        "task_settings": {"mine-vllm": task}}), encoding="utf-8")
    checks = [f"results/mine-vllm/models/{level}/check.json" for level in ("sentence", "document")]
    run_snakemake(tmp_path, *checks, "--cores", "1", "--configfile", str(REPO / "config.yaml"),
                  str(tmp_path / "mine.yaml"))
    for path in checks:
        report = json.loads((tmp_path / path).read_text(encoding="utf-8"))
        assert report["backend"] == "vllm" and report["max_positions"] == 256 and report["head_size"] == 32
    log = (tmp_path / "logs/mine-vllm/check_model/document.log").read_text(encoding="utf-8")
    assert "for vLLM on the cpu" in log and "context window 256" in log


@pytest.mark.full  # needs .venv-vllm, which make test-full makes; two decodes, each starting an engine
def test_a_vllm_task_refines_with_speculative_ngram_and_refines_settings(tiny_llama, documents, tmp_path):
    """A workflow run of a backend: vllm task at beam 1 with decode.speculative: ngram and decode.verify_drafts: false,
    refine over sentence-level by document unit in two rounds, with its template a file of one's own: the decodes
    finish, their commands carry the settings, refine's sidecar records them, and it gives one line per sentence."""
    import shutil

    import yaml

    from docnmt.layout import decode_file
    from helpers import run_snakemake

    corpus = prepared_corpus(documents, tmp_path)
    template = tmp_path / "my improve.yaml"
    shutil.copy(REPO / "scripts/docnmt/decode/prompting/templates/refine/improve.yaml", template)
    task = {"src": "en", "tgt": "de", "corpus": {"type": "prepared", "dir": str(corpus)},
            "models": {"backend": "vllm", "engine_args": {"gpu_memory_utilization": 0.1, "max_model_len": 512},
                       "templates": {"refine": str(template)}, "sentence": {"checkpoint": str(tiny_llama)},
                       "document": {"checkpoint": str(tiny_llama)}}}
    config = {"tasks": ["mine-vllm"], "task_settings": {"mine-vllm": task}, "beam": 1,
              "strategies": ["sentence-level", "refine"], "decode": {"speculative": "ngram", "verify_drafts": False},
              "refine": {"draft": "sentence-level", "unit": "document", "rounds": 2}}
    (tmp_path / "mine.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    refined = decode_file("mine-vllm", "test", "refine", "txt")
    run_snakemake(tmp_path, refined, "--cores", "1", "--configfile", str(REPO / "config.yaml"),
                  str(tmp_path / "mine.yaml"))
    lines = (tmp_path / refined).read_text(encoding="utf-8").split("\n")[:-1]
    assert len(lines) == len(documents["src"])
    sidecar = json.loads((tmp_path / decode_file("mine-vllm", "test", "refine", "json")).read_text(encoding="utf-8"))
    record = sidecar["refine"]
    assert (record["unit"], record["rounds"], record["template"]) == ("document", 2, "my improve.yaml")
    assert record["draft_cost"]["strategy"] == "sentence-level"
    assert sidecar["speculative"] == "ngram"


@pytest.fixture
def llama_copy(tiny_llama, tmp_path):
    """A copy of the tiny Llama's folder whose config a test may change."""
    import shutil

    return Path(shutil.copytree(tiny_llama, tmp_path / "llama"))


def check_line(*args: str) -> str:
    """docnmt-check-model --backend vllm's output: its last line of stderr on a failure, else of stdout."""
    result = subprocess.run([sys.executable, "-m", "docnmt.decode.checks", "--backend", "vllm", *args],
                            capture_output=True, text=True, env={**os.environ, "CUDA_VISIBLE_DEVICES": ""})
    lines = (result.stderr if result.returncode else result.stdout).strip().splitlines()
    return f"{result.returncode}: {lines[-1] if lines else ''}"


def test_check_model_for_vllm_reports_each_problem_in_one_line(llama_copy, hf_marian, tmp_path):
    """docnmt-check-model --backend vllm, without starting the engine: the head size vLLM's CPU build cannot run, a
    model that is not a causal LM, a prompt beyond the context window (--engine-args max_model_len), a template
    without its placeholder, each one line naming the file; and a passing check's line names the head size and the
    context window."""
    config = json.loads((llama_copy / "config.json").read_text(encoding="utf-8"))
    sample = tmp_path / "talk.en"
    sample.write_text("We went to the station early .\nThe train was late again .\n", encoding="utf-8")
    common = ["--src-lang", "en", "--tgt-lang", "de", "--level", "document", "--k", "3", "--sample", str(sample)]
    ok = check_line("--model", str(llama_copy), *common)
    assert ok.startswith("0: ") and "head size 32, context window 512" in ok and ok.endswith(": OK")
    short = check_line("--model", str(llama_copy), *common, "--engine-args", "max_model_len=40")
    assert short.startswith("1: error: ") and f"{sample}:" in short and "context window 40" in short
    template = tmp_path / "mine.yaml"
    template.write_text("system: Translate.\nuser: no placeholder\n", encoding="utf-8")
    bad = check_line("--model", str(llama_copy), *common, "--template", str(template))
    assert bad.startswith("1: error: ") and "mine.yaml" in bad and "{source}" in bad
    not_causal = check_line("--model", str(hf_marian), *common)
    assert not_causal.startswith("1: error: ") and "not a causal LM" in not_causal
    config.update(head_dim=16, hidden_size=64, num_attention_heads=4, num_key_value_heads=4)
    (llama_copy / "config.json").write_text(json.dumps(config), encoding="utf-8")
    small = check_line("--model", str(llama_copy), *common)
    assert small.startswith("1: error: ") and "config.json" in small and "attention head size 16" in small


def test_beam_search_ends_beams_at_the_end_of_the_turn_and_counts_every_beams_tokens(vllm_outputs):
    """Issue 57, fault 7: LLM.beam_search ended a beam at the tokenizer's end token only; the tiny Llama's turn ends
    at <|im_end|> (its generation config's), so every beam ran past the answer and, once cut, the four were the
    same answer. The search over the engine's steps ends a beam at any of the model's end tokens: the n-best holds
    four different answers, and tokens_generated counts every live beam's token at every step, those of the beams
    that were dropped too."""
    beam = vllm_outputs["beam_4"]
    for nbest in beam["nbest"]:
        assert len(nbest) == 4 and len(set(nbest)) == 4, nbest
    assert beam["tokens_generated"] > sum(sum(lengths) for lengths in beam["lengths"])

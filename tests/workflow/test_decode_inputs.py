"""docnmt.workflow.decode: a task's models as inputs and options, and each strategy's decode inputs and options."""

import re

import pytest

from docnmt import layout
from docnmt.workflow import decode
from wfconfigs import demo_config, external_config


def test_a_fairseq_model_comes_with_its_data_a_transformers_model_with_its_language_codes():
    config = external_config()
    assert decode.model_inputs(config, "mine", "document") == {"model": "models/document/checkpoint.pt",
                                                               "data": "models/document/data-bin"}
    assert decode.model_inputs(config, "hf", "sentence", "sentence_model", "sentence_data") == {"sentence_model": "hf-model"}
    assert decode.model_args(config, "mine", {"model": "m.pt", "data": "bin"}) == [
        "--backend", "fairseq", "--model", "m.pt", "--data", "bin"]
    assert decode.model_args(config, "hf", {"model": "hf-model"}) == [
        "--backend", "transformers", "--model", "hf-model", "--src-lang", "en_XX", "--tgt-lang", "de_DE"]
    assert decode.tgt_lang_args(config, "hf") == [] and decode.tgt_lang_args(config, "mine") == ["--tgt-lang", "de"]


def test_a_model_from_elsewhere_is_checked_with_its_codes_and_sample_tokenizer():
    config = external_config()
    assert decode.check_codes_args(config, "mine") == ["--codes", "models/bpe.codes"]
    assert decode.check_codes_args(config, "mine-doc") == []
    assert decode.check_sample_args(config, "mine") == ["--sample-tokenize", "moses", "--sample-lang", "en"]
    assert decode.check_sample_args(config, "hf") == []
    assert decode.model_checks(config, "mine", ["document"]) == {"checks": [layout.model_check("mine", "document")]}
    assert decode.model_checks(demo_config(), "demo", ["document"]) == {}


def test_parallel_doc_trans_starts_from_the_first_pass_and_reuses_2_pass_as_round_one():
    config = demo_config(doc_trans={"mode": "parallel", "max_rounds": 3})
    inputs = decode.decode_inputs(config, "doc-trans", "demo", "test", "doc-trans")
    assert inputs["first_pass"] == layout.decode_file("demo", "test", "sentence-level", "bpe")
    assert inputs["round_one"] == layout.decode_file("demo", "test", "2-pass", "bpe")
    assert inputs["src"] == layout.processed_file("demo", "bpe", "test", "en") and "ref" not in inputs
    options = decode.decode_options(config, "doc-trans", "demo", "doc-trans", inputs)
    assert options == ["--doc-trans-mode", "parallel", "--max-rounds", "3",
                       "--first-pass", inputs["first_pass"], "--first-pass-sidecar", inputs["first_pass_sidecar"],
                       "--round-one", inputs["round_one"], "--round-one-sidecar", inputs["round_one_sidecar"]]
    # with MBR selection, round one is decoded again (its candidates are needed)
    assert "round_one" not in decode.decode_inputs(config, "doc-trans", "demo", "test", "doc-trans+mbr")


def test_sequential_doc_trans_needs_only_its_model():
    config = demo_config(doc_trans={"mode": "sequential"})
    inputs = decode.decode_inputs(config, "doc-trans", "demo", "contrapro", "doc-trans")
    assert set(inputs) == {"model", "data", "src", "docids"}
    assert inputs["docids"] == layout.corpus_file("demo", "contrapro", "docids")
    assert decode.decode_options(config, "doc-trans", "demo", "doc-trans", inputs) == ["--doc-trans-mode", "sequential"]


def test_cheating_reads_the_reference_and_an_external_decode_waits_for_its_model_checks():
    config = external_config()
    inputs = decode.decode_inputs(config, "cheating", "mine", "test", "cheating")
    assert inputs["ref"] == layout.processed_file("mine", "bpe", "test", "de")
    assert inputs["checks"] == [layout.model_check("mine", "document")]
    assert decode.decode_options(config, "cheating", "mine", "cheating", inputs) == ["--ref", inputs["ref"]]
    assert decode.decode_inputs(config, "sentence-level", "mine", "test", "sentence-level")["model"] == \
        "models/sentence/checkpoint.pt"


def test_mbr_options_follow_the_system_name_and_the_mbr_settings():
    config = demo_config(mbr={"candidates": "sampling", "count": 8, "epsilon": 0.05, "seed": 3})
    assert decode.variant_options(config, "doc-trans") == []
    args = decode.variant_options(config, "doc-trans+mbr-4")
    assert args[:5] == ["--mbr", "--mbr-candidates", "sampling", "--mbr-count", "4"]
    assert args[-4:] == ["--mbr-epsilon", "0.05", "--mbr-seed", "3"]
    assert decode.variant_options(config, "doc-trans+mbr")[4] == "8"


def test_every_decode_shares_the_search_options_and_writes_layouts_files():
    config = external_config(beam=5, h=3, decode={"dtype": "bfloat16"})
    assert decode.search_args(config, "mine") == ["--beam", 5, "--k", 4, "--h", 3, "--dtype", "bfloat16",
                                                  "--separator", "<brk>"]
    assert decode.decode_outputs()["sidecar"] == layout.decode_file("{task}", "{evalset}", "{system}", "json")


def test_a_causal_lm_task_names_its_languages_template_and_context():
    """The languages its prompt names (the task's codes), its template, its decodes' document context, and no data
    folder or BPE."""
    config = external_config()
    assert decode.model_args(config, "llm", {"model": "llm"}) == [
        "--backend", "causal-lm", "--model", "llm", "--src-lang", "en", "--tgt-lang", "de",
        "--template", "my-template.yaml"]
    assert decode.search_args(config, "llm")[-2:] == ["--context", "document"]
    assert "--context" not in decode.search_args(config, "mine")
    assert set(decode.model_inputs(config, "llm", "document")) == {"model"}


def test_full_segment_takes_the_sentence_level_hypotheses_as_its_guide_only_where_they_are_decoded():
    config = demo_config()
    inputs = decode.decode_inputs(config, "full-segment", "demo", "test", "full-segment")
    assert inputs["first_pass"] == layout.decode_file("demo", "test", "sentence-level", "bpe")
    assert "first_pass_sidecar" not in inputs  # a guide, not part of its cost
    assert decode.decode_options(config, "full-segment", "demo", "full-segment", inputs) == [
        "--first-pass", inputs["first_pass"]]
    without = demo_config(strategies=["full-segment", "doc-trans"])
    inputs = decode.decode_inputs(without, "full-segment", "demo", "test", "full-segment")
    assert "first_pass" not in inputs and decode.decode_options(without, "full-segment", "demo", "full-segment",
                                                                  inputs) == []


def test_decode_max_tokens_reaches_the_search_only_where_it_is_set():
    assert "--max-tokens" not in decode.search_args(demo_config(), "demo")
    args = decode.search_args(demo_config(decode={"dtype": "float32", "max_tokens": 50000}), "demo")
    assert args[args.index("--max-tokens") + 1] == 50000


def test_the_costliest_decodes_start_first():
    """Each decode rule's priority is its strategy's cost factor at the config's k and h (doc-trans-beam's h=12
    first, then the window strategies' k=3, 2-pass, and the one-pass strategies last)."""
    from docnmt.decode.strategies import STRATEGIES

    config = demo_config()
    priority = {name: decode.decode_priority(config, name, "contrapro") for name in STRATEGIES}
    assert priority["doc-trans-beam"] == config["h"] == 12
    assert priority["last-sentence"] == priority["first-sentence"] == config["k"] == 3
    assert priority["2-pass"] == 2 and priority["sentence-level"] == priority["doc-trans"] == 1
    assert decode.decode_priority({**config, "k": 5, "h": 4}, "doc-trans-beam", "ctxpro-demo-test") == 4
    assert STRATEGIES["last-sentence"].cost_factor(k=5, h=12) == 5


def test_the_test_set_and_its_scoring_chain_come_before_the_other_sets():
    """Every decode of the test set before any decode of another set, in the same cost order (the test set's
    doc-trans-beam first), and CXMI and context usage on the test set as soon as they are ready: above every other
    set's decode; on the other sets they keep the default priority."""
    from docnmt.workflow import score

    config = demo_config()
    on_test = {name: decode.decode_priority(config, name, "test") for name in config["strategies"]}
    elsewhere = {name: decode.decode_priority(config, name, "contrapro") for name in config["strategies"]}
    assert min(on_test.values()) > max(elsewhere.values()) == elsewhere["doc-trans-beam"]
    assert {name: p - elsewhere[name] for name, p in on_test.items()} == dict.fromkeys(config["strategies"], 13)
    assert decode.evalset_priority(config, "test") == 1 + config["h"]
    fewer = {**config, "strategies": ["sentence-level", "last-sentence"]}
    assert decode.evalset_priority(fewer, "test") == 1 + config["k"]
    assert decode.evalset_priority(config, "contrapro") == 0
    assert score.chain_priority(config, "test") > max(elsewhere.values())
    assert score.chain_priority(config, "contrapro") == score.chain_priority(config, "ctxpro-demo-test") == 0


def test_draft_verification_is_on_unless_the_config_turns_it_off():
    assert "--no-verify-drafts" not in decode.search_args(demo_config(), "demo")
    args = decode.search_args(demo_config(decode={"dtype": "float32", "verify_drafts": False}), "demo")
    assert args[-1] == "--no-verify-drafts"


def test_refine_decodes_after_its_draft_with_its_unit_rounds_and_the_tasks_template():
    from docnmt.workflow import systems

    strategies = ["sentence-level", "full-segment", "doc-trans", "refine"]
    config = external_config(strategies=strategies, refine={"draft": "doc-trans", "unit": "document", "rounds": 2})
    config["task_settings"]["llm"]["models"]["templates"] = {"refine": "my-refine.yaml"}
    inputs = decode.decode_inputs(config, "refine", "llm", "test", "refine")
    assert inputs["draft"] == layout.decode_file("llm", "test", "doc-trans", "bpe")
    assert inputs["draft_sidecar"] == layout.decode_file("llm", "test", "doc-trans", "json")
    assert decode.decode_options(config, "refine", "llm", "refine", inputs) == [
        "--draft", inputs["draft"], "--draft-sidecar", inputs["draft_sidecar"], "--refine-unit", "document",
        "--refine-rounds", "2", "--refine-template", "my-refine.yaml"]
    # a fairseq task skips it (no conversation); a task without its draft's decode skips it with the draft's reason
    assert "conversation" in systems.skipped_strategies(config, "mine")["refine"]
    assert "refine" in systems.task_strategies(config, "llm", "test")
    default = external_config(strategies=strategies)
    assert decode.decode_inputs(default, "refine", "llm", "test", "refine")["draft"] == layout.decode_file(
        "llm", "test", "full-segment", "bpe")
    assert "refine" not in systems.task_strategies(default, "llm", "contrapro")


@pytest.mark.parametrize("refine, message", [
    ({"draft": "refine"}, "'refine.draft': refine cannot improve its own translation"),
    ({"draft": "2-pass"}, "'refine.draft': '2-pass' is not among the configured strategies"),
    ({"rounds": 0}, "'refine.rounds': 0 is less than the minimum of 1"),
    ({"unit": "paragraph"}, "'refine.unit'"),
])
def test_a_refine_setting_that_cannot_run_is_an_error_naming_its_key(refine, message):
    from docnmt.config import ConfigError

    with pytest.raises(ConfigError, match=re.escape(message)):
        demo_config(strategies=["full-segment", "refine"], refine=refine)

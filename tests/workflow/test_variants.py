"""A system's variants (docnmt.decode.variants): one declaration each, from which the systems' names, the rules'
wildcard, the systems a task decodes, the tables' rows and the config's checks follow; pooled+docmbr's candidates,
rule options and the configs it refuses."""

import re

import pytest

from docnmt.config import ConfigError
from docnmt.decode import variants
from docnmt.workflow import decode, systems
from wfconfigs import demo_config, external_config


def test_the_registry_holds_the_built_in_variants_in_their_order():
    assert list(variants.variants()) == ["mbr", "qe", "cad", "docmbr"]
    assert variants.variant("docmbr").pooled and not variants.variant("mbr").pooled
    with pytest.raises(ValueError, match="no variant 'nope'; known: mbr, qe, cad, docmbr"):
        variants.variant("nope")


@pytest.mark.parametrize("name, parsed, label", [
    ("doc-trans", ("doc-trans", None, None), "doc-trans"),
    ("doc-trans-beam+mbr", ("doc-trans-beam", "mbr", None), "doc-trans-beam, MBR"),
    ("doc-trans+mbr-4", ("doc-trans", "mbr", 4), "doc-trans, MBR (4)"),
    ("2-pass+qe", ("2-pass", "qe", None), "2-pass, QE reranked"),
    ("pooled+docmbr", ("pooled", "docmbr", None), "pooled, document MBR"),
])
def test_a_systems_name_parses_back_to_its_strategy_variant_and_point(name, parsed, label):
    assert variants.parse_system(name) == parsed
    assert variants.label(name) == label
    strategy, kind, point = parsed
    if kind is not None:
        assert variants.system_name(strategy, point, kind) == name


def test_a_strategys_rule_makes_its_variants_but_not_the_pooled_ones():
    pattern = systems.system_pattern("doc-trans")
    for name in ("doc-trans", "doc-trans+mbr", "doc-trans+mbr-4", "doc-trans+qe"):
        assert re.fullmatch(pattern, name), name
    for name in ("doc-trans-beam", "doc-trans+docmbr", "pooled+docmbr", "doc-trans+mbr-x"):
        assert not re.fullmatch(pattern, name), name
    assert re.fullmatch(systems.pooled_pattern(variants.variant("docmbr")), "pooled+docmbr")


def test_pooled_docmbr_selects_among_every_strategy_that_does_not_read_the_reference():
    config = demo_config()
    candidates = systems.pooled_candidates(config, "demo", variants.variant("docmbr"))
    assert candidates == [s for s in config["strategies"] if s != "cheating"]
    assert systems.task_systems(config, "demo", "test")[-1] == "pooled+docmbr"
    assert "pooled+docmbr" not in systems.task_systems(config, "demo", "contrapro")
    assert systems.table_systems(config)[-1] == "pooled+docmbr"
    inputs = decode.pooled_inputs(config, variants.variant("docmbr"), "demo")
    args = decode.pooled_args(config, variants.variant("docmbr"), "demo", inputs)
    assert args[:2] == ["--candidate", f"sentence-level={inputs['candidates'][0]}"]
    assert args[-4:] == ["--weights", "uniform", "--solver", "assign"]
    assert [r.rule for r in decode.pooled_variants(config)] == ["select_document_mbr"]


def test_its_strategies_listed_keep_their_order_and_an_empty_list_runs_none():
    config = demo_config(docmbr={"strategies": ["doc-trans", "sentence-level"], "solver": "sinkhorn",
                                 "weights": "length"})
    assert systems.pooled_candidates(config, "demo", variants.variant("docmbr")) == ["doc-trans", "sentence-level"]
    assert decode.pooled_args(config, variants.variant("docmbr"), "demo", decode.pooled_inputs(
        config, variants.variant("docmbr"), "demo"))[-4:] == ["--weights", "length", "--solver", "sinkhorn"]
    none = demo_config(docmbr={"strategies": []})
    assert "pooled+docmbr" not in systems.task_systems(none, "demo", "test") and not decode.pooled_variants(none)


def test_a_task_that_decodes_fewer_than_two_of_them_skips_it_with_the_reason():
    config = external_config(docmbr={"strategies": ["sentence-level", "2-pass"]})
    # mine-doc has no sentence-level model: one candidate left
    assert "pooled+docmbr" not in systems.task_systems(config, "mine-doc", "test")
    assert systems.skipped_selections(config, "mine-doc") == {
        "pooled+docmbr": "fewer than two of its strategies are decoded on the test set"}
    assert "pooled+docmbr" in systems.task_systems(config, "mine", "test")


@pytest.mark.parametrize("strategies, message", [
    (["doc-trans", "cheating"], r"'docmbr.strategies': 'cheating' reads the reference"),
    (["doc-trans"], r"'docmbr.strategies': a selection needs at least two strategies, got doc-trans"),
    (["doc-trans", "source-primed"], r"'docmbr.strategies': 'source-primed' is not a configured strategy"),
    (["doc-trans", "greedy"], r"'docmbr.strategies\[1\]': unknown value 'greedy'"),
    ("some", r"'docmbr.strategies': 'some' is not allowed; The candidates' strategies"),
])
def test_a_bad_list_of_strategies_is_a_config_error_naming_the_key(strategies, message):
    with pytest.raises(ConfigError, match=message):
        demo_config(docmbr={"strategies": strategies})


@pytest.mark.parametrize("key, value", [("solver", "emd"), ("weights", "idf")])
def test_a_bad_setting_is_a_config_error_naming_the_key(key, value):
    with pytest.raises(ConfigError, match=rf"'docmbr.{key}': unknown value '{value}'"):
        demo_config(docmbr={key: value})


def test_cxmi_leaves_the_pooled_system_out_and_perplexity_scores_it_with_the_document_model():
    from docnmt.workflow import score

    config = demo_config()
    assert "pooled+docmbr" not in score.cxmi_systems(config, "demo", "test")
    assert systems.level_strategies(config, "demo", "document")[-1] == "pooled+docmbr"


def test_cad_is_decoded_on_ctxpros_sets_too_and_the_selections_on_the_test_set_only():
    config = demo_config(cad={"strategies": ["doc-trans", "cheating", "2-pass"]})
    on_ctxpro = systems.task_systems(config, "demo", "ctxpro-demo-test")
    # ctxpro's accuracy reads translations: the context strategies' CAD decodes join it, cheating's cannot (no
    # reference for the context sentences); ContraPro is ranked by scoring, which has its own CAD row
    assert [s for s in on_ctxpro if "+" in s] == ["doc-trans+cad", "2-pass+cad"]
    assert not [s for s in systems.task_systems(config, "demo", "contrapro") if "+" in s]
    assert "cheating+cad" in systems.task_systems(config, "demo", "test")

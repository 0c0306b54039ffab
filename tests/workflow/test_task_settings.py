"""docnmt.workflow.tasks and .systems: a task's settings and what it decodes, from the validated config alone."""

import re

import pytest

from docnmt import layout
from docnmt.workflow import systems, tasks
from wfconfigs import demo_config, external_config, paper_config, workflow_config


def test_the_workflows_own_tasks_have_both_levels_the_configured_k_and_sep():
    config = paper_config(k=5)
    for task in ("news", "ted", "os"):
        assert tasks.task_levels(config, task) == ["sentence", "document"]
        assert (tasks.task_k(config, task), tasks.task_separator(config, task)) == (5, "<sep>")
        assert tasks.model_backend(config, task) == "fairseq" and tasks.language_codes(config, task) == []
        assert tasks.model_file(config, task, "document") == layout.model_file(task, "document")
        assert tasks.binarized(config, task, "sentence") == layout.binarized(task, "sentence")
        assert tasks.bpe_codes(config, task) == layout.bpe_codes(task)


def test_external_tasks_take_levels_k_separator_and_paths_from_their_models():
    config = external_config()
    assert tasks.external_tasks(config) == ["demo-llm", "demo-vllm", "mine", "mine-doc", "hf", "llm"]  # config.yaml's first
    assert tasks.task_levels(config, "mine-doc") == ["document"]
    assert (tasks.task_k(config, "mine"), tasks.task_separator(config, "mine")) == (4, "<brk>")
    assert tasks.model_file(config, "mine", "sentence") == "models/sentence/checkpoint.pt"
    assert tasks.binarized(config, "mine", "document") == "models/document/data-bin"
    assert tasks.bpe_codes(config, "mine") == "models/bpe.codes"
    assert tasks.external_codes(config, "mine") == ["models/bpe.codes"] and tasks.external_codes(config, "mine-doc") == []
    assert tasks.model_backend(config, "hf") == "transformers"
    assert tasks.language_codes(config, "hf") == ["--src-lang", "en_XX", "--tgt-lang", "de_DE"]


def test_tasks_by_kind_follow_task_settings():
    config = paper_config()
    assert tasks.real_tasks(config) == ["news", "ted", "os"]
    assert tasks.tasks_of_type(config, "demo") == ["demo"]
    assert tasks.contrapro_tasks(config) == ["news", "os", "demo"]
    assert tasks.german_tasks(config) == ["news", "os", "demo", "demo-llm", "demo-vllm"]
    assert tasks.cxmi_tasks(config) == ["news", "ted", "os"]  # the configured ones only
    sets = ["ctxpro-gender-test", "ctxpro-formality-test", "ctxpro-auxiliary-test"]
    assert tasks.evalsets(config, "news") == ["test", "contrapro", *sets] and tasks.evalsets(config, "ted") == ["test", *sets]
    assert tasks.evalsets(config, "news", ctxpro_sets_too=False) == ["test", "contrapro"]
    assert tasks.ctxpro_sets(config, "ted") == ["en-it/gender/test", "en-it/formality/test", "en-it/auxiliary/test"]


def test_corpus_settings_fall_back_to_the_corpus_types_defaults():
    config = paper_config()
    assert tasks.corpus_setting(config, "os", "valid_docs") == 5
    assert tasks.corpus_setting(config, "demo", "train_docs") == 1200
    assert tasks.corpus_setting(config, "news", "valid_docs") is None
    assert tasks.has_subsets(config, "demo", "test") and not tasks.has_subsets(config, "demo", "contrapro")
    assert tasks.pronoun_min_examples(config, "demo") == 30
    assert tasks.pronoun_min_examples(config, "news") == config["scoring"]["pronoun_min_examples"]
    assert tasks.runtime(config, "demo", demo=30, other=120) == 30 and tasks.runtime(config, "os", 30, 120) == 120


def test_alternatives_match_exactly_the_names():
    pattern = tasks.alternatives(["os", "mine-doc", "a.b"])
    assert all(re.fullmatch(pattern, n) for n in ("os", "mine-doc", "a.b"))
    assert not any(re.fullmatch(pattern, n) for n in ("axb", "mine", "os2"))
    assert not re.fullmatch(tasks.alternatives([]), "")


@pytest.mark.parametrize("task, settings, key", [
    ("demo", {"tgt": "it"}, "task_settings.demo': the demo corpus is en->de"),
    ("ted", {"contrapro": True}, "task_settings.ted.contrapro': ContraPro is en->de only"),
])
def test_check_names_the_config_key_of_a_non_en_de_demo_or_contrapro(task, settings, key):
    config = workflow_config(task_settings={task: settings})
    with pytest.raises(ValueError, match=re.escape(key)):
        tasks.check(config)
    tasks.check(paper_config())


def test_a_task_without_a_sentence_level_model_skips_its_strategies_and_runs_doc_trans_sequentially():
    config = external_config(doc_trans={"mode": "parallel"})
    assert systems.skipped_strategies(config, "mine") == {}
    assert set(systems.skipped_strategies(config, "mine-doc")) == {"sentence-level", "2-pass"}
    assert "no sentence-level model in task_settings.mine-doc.models" in systems.skipped_strategies(config, "mine-doc")["2-pass"]
    assert systems.doc_trans_mode(config, "mine") == "parallel"
    assert systems.doc_trans_mode(config, "mine-doc") == "sequential"
    assert "doc-trans" in systems.first_pass_strategies(config, "mine")
    assert "doc-trans" not in systems.first_pass_strategies(config, "mine-doc")
    assert systems.strategy_levels(config, "doc-trans", "mine") == {"sentence", "document"}
    assert systems.strategy_levels(config, "doc-trans", "mine-doc") == {"document"}


def test_task_systems_add_mbr_systems_on_the_test_set_only():
    config = demo_config(strategies=["sentence-level", "full-segment", "doc-trans"],
                         mbr={"strategies": ["doc-trans", "cheating"], "curve": {"strategy": "doc-trans", "counts": [2, 4]}})
    assert systems.mbr_strategies(config) == ["doc-trans"]  # cheating is not configured
    assert systems.task_systems(config, "demo", "test") == ["sentence-level", "full-segment", "doc-trans", "doc-trans+mbr",
                                                            "doc-trans+cad", "pooled+docmbr"]
    # full-segment does not apply to ContraPro; no MBR there
    assert systems.task_systems(config, "demo", "contrapro") == ["sentence-level", "doc-trans"]
    counts = [n for n in (2, 4) if n != config["mbr"]["count"]]
    assert systems.curve_systems(config, "demo") == [f"doc-trans+mbr-{n}" for n in counts]
    assert systems.level_strategies(config, "demo", "sentence") == ["sentence-level"]
    assert systems.level_strategies(config, "demo", "document") == ["full-segment", "doc-trans", "doc-trans+mbr", "doc-trans+cad",
                                                                        "pooled+docmbr"]


def test_a_strategys_rule_and_system_pattern():
    assert systems.strategy_rule_name("doc-trans-beam") == "decode_doc_trans_beam"
    pattern = systems.system_pattern("doc-trans")
    assert all(re.fullmatch(pattern, s) for s in ("doc-trans", "doc-trans+mbr", "doc-trans+mbr-4"))
    assert not any(re.fullmatch(pattern, s) for s in ("doc-trans-beam", "doc-trans+mbr-x"))
    config = paper_config()
    evalsets = systems.strategy_evalsets(config, "full-segment")
    assert "test" in evalsets and "ctxpro-gender-test" in evalsets and "contrapro" not in evalsets
    assert "ctxpro-gender-test" not in systems.strategy_evalsets(config, "cheating")
    assert systems.not_for_evalset("cheating", "ctxpro-gender-test") == "a ctxpro set has no reference for its context sentences"


@pytest.mark.parametrize("task, fault, message", [
    ("news", {"ctxpro": ["en-de/formalty/test"]}, "task_settings.news.ctxpro[0]': en-de/formalty/test: no ctxpro set "
                                                  "of this name; close names: en-de/formality/test"),
    ("news", {"ctxpro": ["en-it/gender/test"]}, "en-it/gender/test translates en->it, the task en->de"),
    ("ted", {"tgt": "ja", "ctxpro": ["en-ja/gender/test"]},
     "sentence-splitter, which does not know the target language 'ja'"),
])
def test_a_tasks_ctxpro_sets_are_checked_when_the_config_is_read(task, fault, message):
    """An unknown set (with the close names), another pair, or a target language that ctxpro's scorer cannot split:
    one line naming the key, before any job."""
    config = paper_config()
    config["task_settings"][task].update(fault)
    config["ctxpro"]["sets"]["en-ja/gender/test"] = {"json": "g.json", "inputs": "g.inputs", "md5": None, "info": ""}
    with pytest.raises(ValueError, match=re.escape(message)):
        tasks.check(config)

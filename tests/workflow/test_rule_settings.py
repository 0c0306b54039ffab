"""Rules that only wire: every param a rule file passes comes from docnmt.workflow (tested here without Snakemake),
no rule file reads the config itself, and the rules that load a task's model share one set of params and one
command prefix (docnmt.workflow.model_rules, docnmt.workflow.environments.in_environment)."""

import re
from pathlib import Path
from types import SimpleNamespace

from docnmt import layout
from docnmt.workflow import corpora, environments, model_rules, preprocess, score, systems, tasks, train
from wfconfigs import demo_config, external_config, paper_config

RULES = Path(__file__).resolve().parents[2] / "rules"


def test_no_rule_file_reads_the_config_or_spells_the_path_prefix_itself():
    for smk in sorted(RULES.glob("*.smk")):
        for number, line in enumerate(smk.read_text(encoding="utf-8").splitlines(), start=1):
            code = line.split("#", 1)[0]
            assert not re.search(r"\b(config|SETTINGS)\[", code), f"{smk.name}:{number}: reads the config: {line.strip()}"
            assert "export PATH" not in code, f"{smk.name}:{number}: the PATH prefix is in_environment's"


def test_the_task_and_strategy_lists_the_rules_are_made_from():
    config = demo_config(strategies=["sentence-level", "doc-trans"])
    assert tasks.configured_tasks(config) == ["demo"] and tasks.configured_tasks(paper_config()) == ["news", "ted", "os"]
    assert {"news", "ted", "os", "demo"} <= set(tasks.task_names(config))
    assert systems.configured_strategies(config) == ["sentence-level", "doc-trans"]
    assert corpora.source_names(config) == list(config["sources"])


def test_a_tasks_windows_and_contrapro_context_follow_its_k():
    config = paper_config(k=5)
    assert tasks.context_sentences(config, "news") == 4
    external = external_config()
    assert tasks.context_sentences(external, "mine") == tasks.task_k(external, "mine") - 1 == 3


def test_the_corpus_preprocessing_and_training_settings():
    config = demo_config()
    assert corpora.demo_seed(config, "demo") == config["task_settings"]["demo"]["corpus"]["seed"]
    assert corpora.download_settings(config) == {"lock": config["download_lock"], "retries": config["download_retries"]}
    assert preprocess.bpe_merges(paper_config(), "os") == 32000 and preprocess.bpe_merges(paper_config(), "news") == 15000
    assert preprocess.bpe_min_frequency(config) == config["preprocess"]["bpe_min_frequency"]
    assert preprocess.shards(config) == config["preprocess"]["shards"]
    encoding = preprocess.external_encoding(external_config())
    assert {key: value(SimpleNamespace(task="mine")) for key, value in encoding.items()} == {
        "tokenize": "moses", "codes": "models/bpe.codes"}
    params = train.training_params(config)
    job = SimpleNamespace(task="demo")
    assert (params["dropout"](job), params["label_smoothing"](job)) == (
        config["task_settings"]["demo"]["dropout"], config["task_settings"]["demo"]["label_smoothing"])
    assert (params["patience"], params["gpus"]) == (config["training"]["patience"], train.training_gpus(config))


def test_the_scorers_settings():
    config = demo_config()
    assert score.pronoun_settings(config) == {"tagger": config["scoring"]["tagger"],
                                              "source_tagger": config["scoring"]["source_tagger"],
                                              "rules": config["scoring"]["pronoun_rules"]}
    assert score.context_usage_settings(config) == dict(config["scoring"]["context_usage"])


def test_the_params_every_model_loading_rule_shares():
    config = external_config()
    params = model_rules.model_params(config, "/checkout with space", False)
    job = SimpleNamespace(task="mine", level="document")
    assert (params["k"](job), params["separator"](job), params["dtype"]) == (4, "<brk>", config["decode"]["dtype"])
    assert params["path"](job) == ""  # fairseq runs in the workflow's own environment
    inputs = {"model": "models/document/checkpoint.pt", "data": "models/document/data-bin"}
    assert params["model"](job, inputs) == ["--backend", "fairseq", "--model", "models/document/checkpoint.pt",
                                            "--data", "models/document/data-bin"]
    own = model_rules.model_params(demo_config(), "/x", False)
    model, data = layout.model_file("demo", "sentence"), layout.binarized("demo", "sentence")
    assert own["model"](SimpleNamespace(task="demo", level="sentence"), {"model": model, "data": data}) == [
        "--backend", "fairseq", "--model", model, "--data", data]
    assert model_rules.model_gpus(config)(job) == 1
    assert model_rules.model_conda(config, "../envs/models.yaml")(job) == "../envs/models.yaml"


def test_a_command_in_its_environment_starts_with_the_one_path_prefix():
    assert environments.in_environment("python -m x") == 'export PATH={params.path:q}"$PATH"; python -m x'

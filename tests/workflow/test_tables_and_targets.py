"""docnmt.workflow.tables and .targets: the tables' manifest, which tables and plots a set of tasks has, and what
rules all and data make."""

import json

from docnmt import layout
from docnmt.config import tables_name
from docnmt.workflow import tables, targets
from wfconfigs import demo_config, external_config, paper_config


def test_the_manifest_names_every_score_file_of_each_task():
    config = paper_config()
    manifest = tables.score_manifest(config)
    assert list(manifest["tasks"]) == ["news", "ted", "os"]
    news, ted = manifest["tasks"]["news"], manifest["tasks"]["ted"]
    sets = ["ctxpro-gender-test", "ctxpro-formality-test", "ctxpro-auxiliary-test"]
    assert news["bleu_ter"] == {e: layout.score_file("news", e, "bleu_ter") for e in ["test", "contrapro", *sets]}
    assert "pronoun_f1" in news and "contrapro_accuracy" in news and "pronoun_f1" not in ted and "contrapro_accuracy" not in ted
    # pronoun F1 and CXMI stay on the test set and ContraPro; each ctxpro set has its own accuracy
    assert list(news["pronoun_f1"]) == list(news["cxmi"]) == ["test", "contrapro"] and list(ted["cxmi"]) == ["test"]
    assert ted["ctxpro_accuracy"] == {e: layout.score_file("ted", e, "ctxpro") for e in sets}
    assert manifest["strategies"][:len(config["strategies"])] == config["strategies"]
    assert json.loads(tables.manifest_arg(config)) == manifest
    files = tables.manifest_files(config, ["ted"])
    assert layout.score_file("ted", "test", "perplexity.sentence") in files
    assert all(path.startswith("results/ted/") for path in files)


def test_the_manifest_of_a_task_without_a_sentence_level_model_says_what_it_skipped():
    config = external_config()
    entry = tables.score_manifest(config, ["mine-doc"])["tasks"]["mine-doc"]
    assert set(entry["skipped"]) == {"sentence-level", "2-pass"} and list(entry["perplexity"]) == ["document"]
    assert entry["skipped"]["2-pass"] not in tables.manifest_files(config, ["mine-doc"])


def test_a_set_of_tasks_has_the_tables_and_plots_its_tasks_allow():
    config = paper_config()
    assert "pronoun_f1" not in tables.table_names(config, ["ted"]) and "contrapro_accuracy" not in tables.table_names(config, ["ted"])
    assert {"pronoun_f1", "contrapro_accuracy", "context_usage"} <= set(tables.table_names(config))
    assert "pronouns" not in tables.plot_names(config, ["ted"]) and "pronouns" in tables.plot_names(config)
    assert tables.plot_tasks(config, "pronouns") == ["news", "os"]
    assert tables.table_files(config, "quality") == [layout.combined_table("news+ted+os", "quality", e)
                                                      for e in ("md", "csv", "tex")]
    assert tables.data_statistics(config)["latex"] == layout.combined_table(tables_name(config), "data_statistics", "tex")
    assert tables.plot_file(config, "bleu") == layout.combined_plot("news+ted+os", "bleu")


def test_all_makes_the_data_models_decodes_and_every_table_and_plot():
    config = demo_config()
    everything = targets.all_targets(config)
    assert everything[:len(targets.data_targets(config))] == targets.data_targets(config)
    for path in (layout.model_file("demo", "document"), layout.learning_curves_plot("demo"), layout.task_tables_dir("demo"),
                 layout.decode_file("demo", "contrapro", "doc-trans", "txt"), *tables.table_files(config, "decoding_cost")):
        assert path in everything, path
    assert len(everything) == len(set(everything))


def test_data_of_an_external_task_is_its_encoded_test_set_and_its_model_checks():
    config = external_config()
    data = targets.data_targets(config)
    assert layout.processed_file("mine", "bpe", "test", "en") in data
    assert layout.model_check("mine-doc", "document") in data and layout.model_check("mine-doc", "sentence") not in data
    assert not any(p.startswith("data/mine/bin") for p in data)
    everything = targets.all_targets(config)
    assert not any("/models/" in p and p.endswith(".pt") for p in everything)
    assert layout.decode_file("mine-doc", "test", "sentence-level", "txt") not in everything

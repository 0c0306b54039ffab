"""docnmt.workflow.corpora, .preprocess and .train: the corpus rules' recipes and the preprocessing and training
rules' inputs and arguments."""

import json

import pytest

from docnmt import layout
from docnmt.config import ConfigError
from docnmt.workflow import corpora, preprocess, train
from wfconfigs import demo_config, paper_config, workflow_config


def test_each_real_corpus_recipe_reads_its_downloads_and_writes_every_split():
    config = paper_config()
    inputs, args = corpora.corpus_recipe(config, "news")
    assert inputs == ["downloads/news-commentary-v14/news-commentary-v14.de-en.tsv.gz",
                      "downloads/wmt15-test/extracted", "downloads/wmt18-test/extracted"]
    assert args[:3] == ["news", "--nc", inputs[0]] and args[-4:] == ["--src", "en", "--tgt", "de"]
    inputs, args = corpora.corpus_recipe(config, "ted")
    assert all(path.endswith("/extracted") for path in inputs)
    assert args[args.index("--valid-src") + 1].startswith("downloads/iwslt17-trnmted/extracted/")
    inputs, args = corpora.corpus_recipe(config, "os")
    assert inputs == [corpora.download_path(config, "opensubtitles2018-de-en"), corpora.download_path(config, "contrapro")]
    assert args[args.index("--contrapro-context") + 1] == config["k"] - 1
    assert args[args.index("--valid-docs") + 1] == 5  # the os corpus type's default
    assert corpora.corpus_outputs(config, "os")[-3:] == [layout.corpus_file("os", "contrapro_docs", e)
                                                          for e in ("en", "de", "docids")]
    assert len(corpora.corpus_outputs(config, "ted")) == 9


def test_a_download_is_named_after_its_url_without_the_query():
    sha256 = "8a" * 32
    config = workflow_config(sources={"x": {"url": "https://host/a/b.tgz?download=1", "sha256": sha256}})
    assert corpora.download_path(config, "x") == "downloads/x/b.tgz"
    spec = json.loads(corpora.download_spec(config, "x"))
    assert (spec["name"], spec["url"], spec["sha256"], spec["mirrors"]) == ("x", "https://host/a/b.tgz?download=1",
                                                                            sha256, [])
    assert corpora.mirror_args(config) == [] and corpora.mirror_args(workflow_config(mirror="m")) == ["--mirror", "m"]


def test_a_missing_source_or_member_names_its_config_key():
    config = paper_config()
    del config["sources"]["wmt18-test"]
    with pytest.raises(ConfigError, match="'sources.wmt18-test' is missing"):
        corpora.corpus_recipe(config, "news")
    config = paper_config()
    del config["sources"]["wmt15-test"]["members"]["ref"]
    with pytest.raises(ConfigError, match=r"sources.wmt15-test.mirrors\[0\].members: expected the roles of the "
                                          r"source's members \(src\), found ref, src"):
        corpora.corpus_recipe(config, "news")
    config["sources"]["wmt15-test"]["mirrors"] = []
    with pytest.raises(ConfigError, match="'sources.wmt15-test.members.ref' is missing"):
        corpora.corpus_recipe(config, "news")


def test_contrapro_comes_from_the_demo_itself_or_from_the_os_tasks_documents():
    config = paper_config()
    assert corpora.contrapro_sources(config, "demo") == {"json": layout.demo_contrapro("demo"),
                                                         **corpora.corpus_split(config, "demo", "test")}
    news = corpora.contrapro_sources(config, "news")
    assert news["json"] == "downloads/contrapro/contrapro.json"
    assert news["src"] == layout.corpus_file("os", "contrapro_docs", "en")
    no_os = workflow_config(task_settings={"os": {"corpus": {"type": "prepared", "dir": "x"}}})
    with pytest.raises(ConfigError, match="needs an OpenSubtitles task"):
        corpora.contrapro_sources(no_os, "news")


def test_the_demo_corpus_and_contrapro_outputs_are_layouts_paths_with_the_task_wildcard():
    outputs = corpora.demo_outputs()
    assert outputs["valid_de"] == layout.corpus_file("{task}", "valid", "de")
    assert outputs["contrapro"] == layout.demo_contrapro("{task}")
    assert corpora.contrapro_outputs()["examples"] == layout.contrapro_examples("{task}")
    assert corpora.demo_docs_args(demo_config(), "demo") == ["--train-docs", 1200, "--valid-docs", 40, "--test-docs", 100]


def test_statistics_inputs_cover_the_configured_tasks_splits_and_contrapro():
    items = corpora.statistics_inputs(paper_config())
    assert list(items)[:4] == ["news:train", "news:valid", "news:test", "news:ContraPro"]
    assert items["ted:test"] == layout.corpus_stats("ted", "test") and "ted:ContraPro" not in items


def test_only_the_training_data_is_scattered_into_shards():
    config = demo_config(preprocess={"shards": 3})
    assert preprocess.split_shards(config, "train") == ["1-of-3", "2-of-3", "3-of-3"]
    assert preprocess.split_shards(config, "test") == ["1-of-1"]
    assert preprocess.shard_text(config, "demo", "test", "en", "1-of-1") == layout.corpus_file("demo", "test", "en")
    assert preprocess.shard_text(config, "demo", "train", "en", "2-of-3") == layout.shard_file("demo", "train", "en", "2-of-3", "raw")
    assert preprocess.split_shard_files(config, "demo", "bpe", "train", "de") == [
        layout.shard_file("demo", "train", "de", f"{i}-of-3", "bpe") for i in (1, 2, 3)]
    assert preprocess.shard_pattern("raw") == "data/{{task}}/shards/{{split}}.{{lang}}.{scatteritem}.raw"


def test_each_level_binarizes_its_own_text():
    config = demo_config()
    assert preprocess.binarize_inputs(config, "demo", "sentence")[:2] == [layout.processed_file("demo", "bpe", "train", "en"),
                                                                         layout.processed_file("demo", "bpe", "train", "de")]
    assert preprocess.binarize_prefixes(config, "demo", "document") == [
        "--trainpref", "data/demo/doc/train", "--validpref", "data/demo/doc/valid", "--testpref", "data/demo/doc/test"]
    assert preprocess.bpe_sample_lines(config, "demo") == 0


def test_training_takes_the_tasks_preset_and_time_limit():
    config = demo_config(training={"runtime_minutes": {"demo": 7}})
    args = train.preset_args(config, "demo")
    assert "--arch" in args and all(isinstance(a, str) for a in args)
    assert train.training_runtime(config, "demo") == 7
    assert train.training_runtime(config, "news") == config["training"]["runtime_minutes"].get("base", 2880)


def test_a_test_set_gives_the_convert_options_and_one_output_option_per_file():
    from docnmt.workflow.tasks import testset_tasks

    test = {"format": "wmt24pp-jsonl", "file": "en-de_DE.jsonl", "reference": "original_target"}
    config = workflow_config(tasks=["mine"], task_settings={"mine": {
        "src": "en", "tgt": "de", "bpe_merges": 10, "dropout": 0.1, "label_smoothing": 0.1,
        "corpus": {"type": "prepared", "dir": "corpus", "test": test}}})
    assert testset_tasks(config) == ["mine"] and corpora.testset_file(config, "mine") == "en-de_DE.jsonl"
    assert corpora.testset_args(config, "mine") == ["convert", "--format", "wmt24pp-jsonl", "--src", "en", "--tgt", "de",
                                                    "--reference", "original_target"]
    assert [corpora.testset_output_option(config, "mine", ext) for ext in ("en", "de", "docids")] == \
        ["--src-out", "--tgt-out", "--docids-out"]
    with pytest.raises(ValueError, match="test.fr is none of the test split's files"):
        corpora.testset_output_option(config, "mine", "fr")

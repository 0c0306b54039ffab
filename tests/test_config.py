"""Config validation: every error names the key."""

import copy
from pathlib import Path

import pytest
import yaml

from docnmt.config import STRATEGIES, ConfigError, load, validate

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def config():
    return yaml.safe_load((REPO / "config.yaml").read_text())


def test_shipped_config_is_valid_and_describes_the_paper_tasks(config):
    valid = validate(config)
    settings = valid["task_settings"]
    assert {"news", "ted", "os", "demo"} <= set(settings)
    assert (settings["news"]["bpe_merges"], settings["ted"]["bpe_merges"], settings["os"]["bpe_merges"]) == (15000, 15000, 32000)
    assert (settings["news"]["dropout"], settings["news"]["label_smoothing"]) == (0.3, 0.2)
    assert (settings["ted"]["dropout"], settings["ted"]["label_smoothing"]) == (0.3, 0.2)
    assert (settings["os"]["dropout"], settings["os"]["label_smoothing"]) == (0.1, 0.1)
    assert (valid["beam"], valid["k"], valid["h"]) == (12, 3, 12)
    assert tuple(valid["strategies"]) == STRATEGIES
    assert (settings["ted"]["src"], settings["ted"]["tgt"]) == ("en", "it")


def test_unknown_task_names_the_key(config):
    config["tasks"] = ["demo", "wmt99"]
    with pytest.raises(ConfigError, match=r"'tasks\[1\]'.*unknown task 'wmt99'"):
        validate(config)


def test_unknown_strategy_names_the_key(config):
    config["strategies"] = ["sentence-level", "greedy-oracle"]
    with pytest.raises(ConfigError, match=r"'strategies\[1\]'.*unknown value 'greedy-oracle'"):
        validate(config)


def test_wrong_type_names_the_key(config):
    config["task_settings"]["news"]["bpe_merges"] = "many"
    with pytest.raises(ConfigError, match=r"'task_settings.news.bpe_merges'.*expected integer"):
        validate(config)


def test_missing_key_names_the_key(config):
    del config["task_settings"]["os"]["dropout"]
    with pytest.raises(ConfigError, match=r"'task_settings.os.dropout' is missing"):
        validate(config)


def test_unknown_key_is_rejected(config):
    config["beam_size"] = 4
    with pytest.raises(ConfigError, match="beam_size"):
        validate(config)


def test_defaults_are_filled_in(config):
    del config["k"]
    del config["preprocess"]
    valid = validate(config)
    assert valid["k"] == 3 and valid["preprocess"]["shards"] == 4


def test_prepared_corpus_needs_a_dir(config):
    config["task_settings"]["mine"] = copy.deepcopy(config["task_settings"]["news"])
    config["task_settings"]["mine"]["corpus"] = {"type": "prepared"}
    with pytest.raises(ConfigError, match=r"task_settings.mine.corpus.dir' is missing"):
        validate(config)


def test_malformed_yaml_file_is_named(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("tasks: [demo\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="bad.yaml: not valid YAML"):
        load(path)


def test_unknown_model_preset_names_the_key(config):
    config["task_settings"]["ted"]["model"] = "big"
    with pytest.raises(ConfigError, match=r"'task_settings.ted.model': unknown preset 'big'"):
        validate(config)


def test_preset_may_not_set_what_the_workflow_controls(config):
    config["training"]["presets"]["base"]["dropout"] = 0.5
    with pytest.raises(ConfigError, match=r"training.presets.base"):
        validate(config)

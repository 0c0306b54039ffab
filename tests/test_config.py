"""Config validation: every error names the key."""

import copy
from pathlib import Path

import pytest
import yaml

from docnmt.config import STRATEGIES, ConfigError, load, validate
from docnmt.decode.backend import names

REPO = Path(__file__).resolve().parents[1]
#: the registered backends whose models take language codes, as the messages name them
CODED = names(lambda b: b.language_codes)


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


@pytest.mark.parametrize("change, message", [
    ({"mbr": {"count": 0}}, r"'mbr.count': 0 is less than the minimum of 1"),
    ({"mbr": {"candidates": "nucleus"}}, r"'mbr.candidates'.*unknown value 'nucleus'"),
    ({"mbr": {"utility": "bleurt"}}, r"'mbr.utility': 'bleurt' is not allowed; use chrf: .* comet:NAME"),
])
def test_bad_mbr_settings_name_the_key(config, change, message):
    for key, value in change.items():
        config[key] = {**config[key], **value} if isinstance(value, dict) else value
    with pytest.raises(ConfigError, match=message):
        validate(config)


def test_mbr_defaults_and_no_curve(config):
    del config["mbr"]
    assert validate(config)["mbr"] == {"strategies": ["sentence-level", "doc-trans", "cheating"], "candidates": "beam",
                                       "count": 12, "utility": "chrf", "epsilon": 0.02, "seed": 1,
                                       "curve": {"strategy": "doc-trans", "counts": [1, 4]}}
    config["mbr"] = {"strategies": [], "curve": {"strategy": None}}
    assert validate(config)["mbr"]["strategies"] == []


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


NAME_RULE = "use letters, digits, _ and -, starting with a letter, at most 64 characters"


@pytest.mark.parametrize("name", ["my task", "a/b", "x;rm -rf ~", "$(id)", "'q'", "ünï", "-flag", "a" * 65, ""])
def test_a_task_name_that_is_not_safe_for_paths_and_rule_names_names_the_key(config, name):
    config["task_settings"][name] = copy.deepcopy(config["task_settings"]["demo"])
    config["tasks"] = [name]
    with pytest.raises(ConfigError) as err:
        validate(config)
    key = f"task_settings.{name}"
    assert str(err.value).startswith(f"config key {key!r}: the name {name!r} is not allowed; {NAME_RULE}")


def test_a_listed_task_with_an_unsafe_name_names_its_place_in_tasks(config):
    config["tasks"] = ["demo", "de mo"]
    with pytest.raises(ConfigError, match=r"^config key 'tasks\[1\]': 'de mo' is not allowed; use letters"):
        validate(config)


def test_preset_and_source_names_are_restricted_too(config):
    bad_preset = copy.deepcopy(config)
    bad_preset["training"]["presets"]["big model"] = {"arch": "transformer"}
    with pytest.raises(ConfigError, match=r"^config key 'training.presets.big model': the name 'big model' is not allowed"):
        validate(bad_preset)
    bad_model = copy.deepcopy(config)
    bad_model["task_settings"]["demo"]["model"] = "demo && id"
    with pytest.raises(ConfigError, match=r"^config key 'task_settings.demo.model': 'demo && id' is not allowed"):
        validate(bad_model)
    bad_source = copy.deepcopy(config)
    bad_source["sources"]["../up"] = {"url": "https://example.org/x"}
    with pytest.raises(ConfigError, match=r"^config key 'sources.../up': the name '../up' is not allowed; use letters, "
                                          r"digits, '.', _ and -, starting with a letter or digit"):
        validate(bad_source)


def test_safe_names_with_digits_dashes_and_underscores_are_valid(config):
    config["task_settings"]["iwslt17_en-de2"] = copy.deepcopy(config["task_settings"]["demo"])
    config["tasks"] = ["iwslt17_en-de2"]
    assert validate(config)["tasks"] == ["iwslt17_en-de2"]


def test_a_config_file_is_checked_over_config_yaml_as_configfile_reads_it(tmp_path, capsys):
    from docnmt.config import main

    mine = tmp_path / "mine.yaml"
    mine.write_text("tasks: [mine]\ntask_settings:\n  mine: {src: en, tgt: fr, bpe_merges: 15000, dropout: 0.3, "
                    "label_smoothing: 0.2, corpus: {type: prepared, dir: /data/mine}}\n", encoding="utf-8")
    assert main([str(mine)]) == 0
    assert f"{mine}: valid (over config.yaml); tasks: mine" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main([str(mine), "--alone"])  # alone it lacks the workflow's presets
    assert "unknown preset 'base'" in capsys.readouterr().err
    for path, text, message in ((tmp_path / "none.yaml", None, "config file not found"),
                                (tmp_path / "bad.yaml", "tasks: [a\n", "not valid YAML")):
        if text is not None:
            path.write_text(text, encoding="utf-8")
        with pytest.raises(SystemExit):
            main([str(path)])
        err = capsys.readouterr().err
        assert err.startswith(f"error: {path}: {message}") and err.count("\n") == 1, err


def models_task(config, backend, **models):
    """A task with models trained elsewhere; both levels' model files given, ``models`` over the rest."""
    files = {"checkpoint": "doc.pt", "data": "bin"} if backend == "fairseq" else {"checkpoint": "my-doc-model"}
    config["tasks"] = ["mine"]
    config["task_settings"]["mine"] = {"src": "en", "tgt": "de", "corpus": {"type": "prepared", "dir": "corpus"},
                                       "models": {"backend": backend, "document": dict(files), **models}}
    return config


def test_models_of_each_backend_get_their_tokenize_default(config):
    fairseq = validate(models_task(copy.deepcopy(config), "fairseq"))["task_settings"]["mine"]["models"]
    assert (fairseq["tokenize"], fairseq["bpe_codes"]) == ("moses", "none")
    hf = validate(models_task(config, "transformers", language_codes={"src": "eng_Latn", "tgt": "deu_Latn"}))
    models = hf["task_settings"]["mine"]["models"]
    assert (models["tokenize"], models["bpe_codes"], models["language_codes"]["tgt"]) == ("none", "none", "deu_Latn")


@pytest.mark.parametrize("backend, change, message", [
    ("fairseq", {"document": {"checkpoint": "doc.pt"}},
     r"'task_settings.mine.models.document.data' is missing \(required for a fairseq model"),
    ("transformers", {"document": {"checkpoint": "m", "data": "bin"}},
     r"'task_settings.mine.models.document.data': a data folder is for fairseq models"),
    ("transformers", {"tokenize": "moses"}, r"'task_settings.mine.models.tokenize': 'moses' is for fairseq models"),
    ("transformers", {"bpe_codes": "codes"}, r"'task_settings.mine.models.bpe_codes': 'codes' is for fairseq"),
    ("fairseq", {"language_codes": {"src": "en", "tgt": "de"}},
     rf"'task_settings.mine.models.language_codes': for {CODED} models \(language tokens"),
])
def test_models_settings_that_do_not_fit_the_backend_name_the_key(config, backend, change, message):
    with pytest.raises(ConfigError, match=message):
        validate(models_task(config, backend, **change))


def test_contrapro_on_a_transformers_task_is_refused_naming_the_key(config):
    config = models_task(config, "transformers")
    config["task_settings"]["mine"]["contrapro"] = True
    with pytest.raises(ConfigError, match=r"'task_settings.mine.contrapro': the workflow's ContraPro evaluation needs fairseq models"):
        validate(config)


def test_the_models_blocks_of_the_manual_are_valid_configs(tmp_path):
    """Every YAML block of docs/own-models.md, as a --configfile over config.yaml (a commented line uncommented too)."""
    import re

    from docnmt.config import load_workflow

    blocks = re.findall(r"^```yaml\n(.*?)^```", (REPO / "docs/own-models.md").read_text(encoding="utf-8"), re.S | re.M)
    blocks = [block for block in blocks if "tasks:" in block]  # not the prompt template it shows
    assert len(blocks) >= 2
    for number, block in enumerate(blocks):
        variants = [block] + ([re.sub(r"^(\s*)# (language_codes: |template: |context: )", r"\1\2", block, flags=re.M)]
                              if "# language_codes:" in block else [])
        for variant in variants:
            path = tmp_path / f"block{number}.yaml"
            path.write_text(variant, encoding="utf-8")
            config = load_workflow(path)
            for name in config["tasks"]:
                assert "models" in config["task_settings"][name], name


def test_alone_validates_a_complete_file_by_itself_and_markdown_prints_the_manuals_table(tmp_path, capsys):
    """--alone validates a file as it is: a complete config (config.yaml with its own task list) is valid alone;
    without its presets it is not (alone, nothing fills them in), though it is over config.yaml. --markdown prints
    the schema's table, the one docs/configuration.md holds."""
    import re

    from docnmt.config import main, schema_markdown

    config = yaml.safe_load((REPO / "config.yaml").read_text())
    config["tasks"] = ["ted", "demo"]
    (tmp_path / "complete.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    assert main([str(tmp_path / "complete.yaml"), "--alone"]) == 0
    assert capsys.readouterr().out == f"{tmp_path / 'complete.yaml'}: valid (alone); tasks: ted, demo\n"
    del config["training"]["presets"]
    (tmp_path / "no-presets.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    with pytest.raises(SystemExit):
        main([str(tmp_path / "no-presets.yaml"), "--alone"])
    err = capsys.readouterr().err
    assert "unknown preset '" in err and "presets in training.presets: (none)" in err, err
    assert main([str(tmp_path / "no-presets.yaml")]) == 0
    assert "valid (over config.yaml); tasks: ted, demo" in capsys.readouterr().out

    assert main(["--markdown"]) == 0
    printed = capsys.readouterr().out
    page = (REPO / "docs/configuration.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- generated: python -m docnmt.config --markdown -->\n(.*?)<!-- end generated -->", page,
                      re.S)
    assert printed == block.group(1) == schema_markdown()
    assert printed.startswith("| key | type | default | description |\n") and "| `decode.max_tokens` |" in printed

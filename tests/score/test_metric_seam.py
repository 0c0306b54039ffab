"""The metric seam (docnmt.score.metric): every metric's declaration, the config blocks and rules that follow from
them, a metric of one's own added as one module and one line, and MetricX-24 in the workflow's Table 3."""

from __future__ import annotations

import json
import re

import pytest

from helpers import REPO, copy_workdir, run_snakemake, tool_env

from docnmt.score import metric as registry

TRAINING_FIXTURES = {"metricx_checkpoint"}


def test_every_package_metric_declares_a_valid_seam_entry_and_the_rules_that_follow_exist():
    """The package's metrics in the tables' order; each own-rule metric names a rule of rules/score.smk, each seam
    metric a module with a CLI."""
    import importlib

    declared = registry.metrics()
    assert list(declared) == ["bleu_ter", "comet", "metricx", "gemba", "pronoun_f1", "perplexity", "contrapro_accuracy",
                              "ctxpro_accuracy", "cxmi"]
    rules = set(re.findall(r"^rule (\w+):", (REPO / "rules/score.smk").read_text(), re.M))
    for metric in declared.values():
        assert metric.unit in registry.UNITS
        assert metric.own_environment is not None or metric.environment in registry.ENVIRONMENTS
        if metric.rule:
            assert callable(importlib.import_module(metric.module).main)
        else:
            assert metric.name in rules, f"{metric.name}: an own-rule metric names its rule"
    assert {m.name for m in declared.values() if m.higher_is_better is False} == {"metricx", "perplexity"}
    assert not declared["metricx"].higher_is_better and not declared["bleu_ter"].higher_better("TER")


def test_a_metric_with_an_environment_of_its_own_runs_there_and_a_shared_one_in_its_conda_file(tmp_path):
    """COMET declares unbabel-comet's environment as vLLM's backend does: its rule's conda file and its PATH are
    that environment's (metrics.comet_python names another Python), with no name compared; a shared one's rule has
    its envs/ file and nothing on PATH."""
    from docnmt.config import load_workflow
    from docnmt.config import ConfigError
    from docnmt.installation import Environment
    from docnmt.workflow import metrics as wf_metrics

    declared = registry.metrics()
    comet, bleu = declared["comet"], declared["bleu_ter"]
    assert isinstance(comet.environment, Environment) and comet.own_environment.venv == ".venv-comet"
    assert comet.conda_file == "../envs/comet.yaml" and bleu.conda_file == "../envs/scoring.yaml"
    assert bleu.own_environment is None
    checkout = tmp_path / "a checkout"
    (checkout / ".venv-comet" / "bin").mkdir(parents=True)
    (checkout / ".venv-comet" / "bin" / "python").write_text("")
    config = load_workflow()
    config["metrics"]["comet"] = {"da": "/models/da"}
    assert wf_metrics.metric_path(config, comet, str(checkout), conda=False) == f"{checkout}/.venv-comet/bin:"
    assert wf_metrics.metric_path(config, comet, str(checkout), conda=True) == ""
    assert wf_metrics.metric_path(config, bleu, str(checkout), conda=False) == ""
    assert wf_metrics.comet_path(config, str(checkout), conda=False) == f"{checkout}/.venv-comet/bin:"
    other = tmp_path / "my comet" / "bin" / "python"
    other.parent.mkdir(parents=True)
    other.write_text("")
    config["metrics"]["comet_python"] = str(other)
    assert wf_metrics.metric_path(config, comet, str(checkout), conda=False) == f"{other.parent}:"
    config["metrics"]["comet_python"] = str(tmp_path / "none" / "python")
    with pytest.raises(ConfigError, match=r"config key 'metrics.comet_python': .*none/python not found; run `make "
                                          r"comet` \(it creates .venv-comet\)"):
        wf_metrics.metric_path(config, comet, str(checkout), conda=False)
    config["metrics"]["comet"] = {}  # not asked for: nothing on PATH, nothing checked
    assert wf_metrics.metric_path(config, comet, str(checkout), conda=False) == ""


def test_an_own_environment_without_a_config_key_is_the_checkouts_venv_and_its_make_target_when_missing(tmp_path):
    from docnmt.config import ConfigError
    from docnmt.installation import Environment
    from docnmt.workflow.environments import environment_path

    env = Environment(venv=".venv-mine", make="make mine", requirements="requirements-mine.txt",
                      conda="../envs/mine.yaml")
    with pytest.raises(ConfigError, match=re.escape(f"{tmp_path}/.venv-mine/bin/python not found: run `make mine` "
                                                    "(it creates .venv-mine), or use --sdm conda (envs/mine.yaml)")):
        environment_path({}, env, str(tmp_path), conda=False)
    (tmp_path / ".venv-mine" / "bin").mkdir(parents=True)
    (tmp_path / ".venv-mine" / "bin" / "python").write_text("")
    assert environment_path({}, env, str(tmp_path), conda=False) == f"{tmp_path}/.venv-mine/bin:"
    assert environment_path({}, None, str(tmp_path), conda=False) == ""


def test_a_package_missing_from_a_metrics_own_environment_is_told_to_run_there():
    from docnmt.installation import setup_hint

    hint = setup_hint(["comet"], python="/usr/bin/python3")
    assert "the metric comet runs in its own environment, .venv-comet (`make comet` makes it)" in hint, hint


@pytest.mark.parametrize("field, value, message", [
    ("environment", "comet", "environment 'comet' is neither one of main, model, endpoint nor an environment of its "
                             "own (docnmt.installation.Environment)"),
    ("unit", "word", "unit 'word' is not one of sentence, paragraph, document"),
    ("needs", ("source", "images"), "needs images; known: source, reference, docids, model"),
    ("name", "my-metric", "a name is a Python identifier"),
    ("options", {"k": {"type": "integer"}}, "option 'k' has no description"),
])
def test_a_bad_declaration_is_one_error_naming_the_metric(field, value, message):
    fields = dict(name="mine", module="mine", summary="s", columns=lambda c: ["X"], environment="main",
                  unit="sentence", needs=("reference",), higher_is_better=True, signature="x")
    fields[field] = value
    with pytest.raises(ValueError, match=re.escape(message)):
        registry.Metric(**fields)


def test_a_metrics_config_block_becomes_its_cli_options():
    from docnmt.config import read, validate

    config = validate({**read(REPO / "config.yaml"), "metrics": {"metricx": {
        "checkpoint": "/m x", "mode": ["qe"], "batch_size": 4}}})
    assert config["metrics"]["metricx"] == {"checkpoint": "/m x", "tokenizer": None, "mode": ["qe"], "batch_size": 4,
                                            "max_input_length": 1536}
    assert registry.metrics()["metricx"].option_args(config) == [
        "--checkpoint", "/m x", "--mode", "qe", "--batch-size", "4", "--max-input-length", "1536", "--dtype", "float32"]
    assert [m.name for m in registry.seam_metrics(config)] == ["bleu_ter", "metricx"]


def test_config_errors_name_the_key(tmp_path):
    from docnmt.config import ConfigError, read, validate

    base = read(REPO / "config.yaml")
    with pytest.raises(ConfigError, match=r"config key 'metrics.modules': metric module 'no_such_metric' cannot be "
                                          "imported"):
        validate({**base, "metrics": {"modules": ["no_such_metric"]}})
    with pytest.raises(ConfigError, match=r"metrics.metricx.batch_size"):
        validate({**base, "metrics": {"metricx": {"checkpoint": "x", "batch_size": 0}}})
    (tmp_path / "config.json").write_text(json.dumps({"vocab_size": 32000, "d_model": 8}))
    from docnmt.workflow.metrics import check

    with pytest.raises(ValueError, match=r"config key 'metrics.metricx': .*config.json: vocab_size 32000: a "
                                         r"MetricX-24 model reads its score at token 250089"):
        check(validate({**base, "metrics": {"metricx": {"checkpoint": str(tmp_path)}}}))


@pytest.fixture(scope="module")
def metricx_checkpoint(mechanics_demo):
    """A tiny MetricX-24 checkpoint (docnmt.score.tiny_metricx): the mechanics demo's, the one make test-mechanics
    made beside it."""
    return mechanics_demo / "models" / "metricx"


def test_metricx_and_a_metric_of_ones_own_get_their_columns_in_table_3(mechanics_demo, metricx_checkpoint, tmp_path,
                                                                      monkeypatch):
    """The done-when of the seam: a copy of the mechanics demo, a MetricX-24 checkpoint built outside it, configured
    by docs/scoring.md's block as written (its /models a folder here: both modes, QE first, the tokenizer named,
    batches of 4) with inputs cut at 64 tokens, and tests/toy_metric.py named in metrics.modules (and found on
    PYTHONPATH), nothing else. The workflow's rules metricx and toy_length score the test set (the toy also
    ContraPro's example sentences: evalsets "all"); Table 3 shows MetricX, MetricX-QE and LenRatio with their
    signatures, notes and significance marks; MetricX's cells are the class's mean segment scores."""
    import yaml

    from docnmt import layout
    from docnmt.config import validate
    from docnmt.corpora.corpus import read_lines
    from docnmt.score import tables
    from docnmt.score.metricx import MetricX
    from docnmt.workflow.tables import score_manifest

    import shutil

    from helpers import MECHANICS_CONFIG, TEST_CONFIG, doc_blocks, mechanics_config

    work = copy_workdir(mechanics_demo, tmp_path / "demo")
    (block,) = doc_blocks(REPO / "docs/scoring.md", "yaml", "## MetricX-24")
    models = tmp_path / "models"
    shutil.copytree(metricx_checkpoint, models / "metricx-24-hybrid-large-v2p6")
    shutil.copytree(metricx_checkpoint, models / "mt5-large")
    metrics = yaml.safe_load(block.replace("/models", str(models)))["metrics"]
    metrics["metricx"]["max_input_length"] = 64  # beyond the page's block: inputs cut short
    # over the mechanics demo's own config: the page's MetricX (for the demo's), and the toy metric
    config = {"strategies": ["sentence-level", "doc-trans"], "metrics": {"modules": ["toy_metric"], **metrics},
              "mbr": {"strategies": []}, "qe_rerank": {"strategies": []}, "cad": {"strategies": []},
              "docmbr": {"strategies": []}, "task_settings": {"demo": {"ctxpro": []}},
              "scoring": {"significance_baselines": ["sentence-level"], "bootstrap_samples": 100}}
    (tmp_path / "seam.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    from docnmt.config import merge

    validated = validate(merge(mechanics_config(), config))
    monkeypatch.chdir(work)  # the checkpoints' folders are relative to the workflow directory, as the rules see them
    manifest = score_manifest(validated)
    spec = manifest["tasks"]["demo"]
    assert manifest["metric_modules"] == ["toy_metric"]
    assert set(spec["toy_length"]) == {"test", "contrapro"} and set(spec["metricx"]) == {"test"}
    targets = [spec["metricx"]["test"], *spec["toy_length"].values()]
    env = {**tool_env(), "PYTHONPATH": str(REPO / "tests")}
    run_snakemake(work, "--profile", str(REPO / "profiles/cpu"), "--cores", "2", *targets, "--configfile",
                  TEST_CONFIG, MECHANICS_CONFIG, str(tmp_path / "seam.yaml"), env=env)
    absolute = {"strategies": manifest["strategies"], "metric_modules": ["toy_metric"], "tasks": {"demo": {
        name: {e: str(work / p) for e, p in spec[name].items()} for name in ("bleu_ter", "metricx", "toy_length")}}}
    for e in spec["bleu_ter"]:
        absolute["tasks"]["demo"]["bleu_ter"][e] = str(mechanics_demo / spec["bleu_ter"][e])
    table = tables.quality_table(absolute)
    header = table.header
    for column in ("demo test MetricX", "demo test MetricX-QE", "demo test LenRatio", "demo ContraPro LenRatio"):
        assert column in header, header
    assert header.index("demo test BLEU") < header.index("demo test MetricX-QE") < header.index("demo test MetricX") \
        < header.index("demo test LenRatio") < header.index("demo ContraPro BLEU")
    notes = "\n".join(table.notes)
    assert "Lower is better: TER, MetricX-QE, MetricX." in notes and "tests/toy_metric.py" in notes
    assert "MetricX signature: MetricX|model:metricx-24-hybrid-large-v2p6|ckpt:" in notes and "|mode:reference|maxlen:64|" in notes
    assert "MetricX-QE signature: MetricX-QE|" in notes and "|mode:qe|" in notes
    assert "LenRatio signature: LenRatio|chars|sentences:" in notes
    corpus = work / "data/demo/corpus"
    source, reference = read_lines(corpus / "test.en"), read_lines(corpus / "test.de")
    metric = MetricX(metricx_checkpoint, device="cpu", max_input_length=64)
    for row, system in zip(table.rows, ["sentence-level", "doc-trans"], strict=True):
        hyps = read_lines(work / layout.decode_file("demo", "test", system, "txt"))
        for column, references in (("MetricX", reference), ("MetricX-QE", None)):
            scores = metric.score(source, hyps, references, batch_size=4)
            cell = row[header.index(f"demo test {column}")]
            assert float(cell.rstrip("*†")) == pytest.approx(sum(scores) / len(scores), abs=0.006), (column, cell)
    written = json.loads((work / spec["metricx"]["test"]).read_text())
    assert written["columns"] == ["MetricX-QE", "MetricX"] and written["lower_is_better"]
    test = written["paired_bootstrap"]["sentence-level"]["systems"]["doc-trans"]["MetricX"]
    assert set(test) >= {"p_value", "significant"}
    marked = table.rows[1][header.index("demo test MetricX")].endswith("*")
    assert marked == test["significant"]

"""Tables that survive a second configuration: each task's own tables and plots in results/{task}/, the configured
tasks' together under the config's tables.name, so that a run of another configuration writes beside them."""

import re
from pathlib import Path

import pytest
import yaml

from helpers import TEST_CONFIG, run_snakemake
from docnmt import layout
from docnmt.config import ConfigError, load_workflow, tables_name

pytestmark = pytest.mark.workflow

#: The folders of tables and plots, of a task (results/TASK/...) or of a configuration (results/tables/NAME/...).
TABLE_OUTPUT = re.compile(r"^results/(?:tables|plots)/|^results/[^/]+/(?:tables|plots)(?:/|$)")


def test_the_layout_puts_a_tasks_tables_in_its_folder_and_the_combined_ones_under_the_name():
    assert layout.task_table("ted", "quality", "md") == "results/ted/tables/quality.md"
    assert layout.task_tables_dir("ted") == "results/ted/tables"
    assert layout.task_plot("ted", "bleu") == "results/ted/plots/bleu.png"
    assert layout.combined_table("paper", "quality", "tex") == "results/tables/paper/quality.tex"
    assert layout.combined_plot("paper", "cost") == "results/plots/paper/cost.png"


def test_the_name_defaults_to_the_tasks_joined_and_the_config_sets_it(tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump({"tasks": ["news", "ted", "os"]}))
    assert tables_name(load_workflow(config)) == "news+ted+os"
    assert tables_name(load_workflow(Path(TEST_CONFIG))) == "demo"
    config.write_text(yaml.safe_dump({"tasks": ["news"], "tables": {"name": "mine.v2"}}))
    assert tables_name(load_workflow(config)) == "mine.v2"


def test_a_name_that_is_no_folder_name_is_an_error_naming_the_key(tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump({"tables": {"name": "../elsewhere"}}))
    with pytest.raises(ConfigError, match=r"config key 'tables.name': '../elsewhere' is not allowed; use letters, "
                                          r"digits, '.', '\+', _ and -"):
        load_workflow(config)


def planned_outputs(workdir: Path, *config: str) -> set[str]:
    """The files and folders of tables and plots that a dry run of this configuration would write."""
    result = run_snakemake(workdir, "--dry-run", *config, timeout=300)
    outputs = {path.strip() for line in result.stdout.splitlines() if line.startswith("    output: ")
               for path in line.split(": ", 1)[1].split(", ")}
    return {path for path in outputs if TABLE_OUTPUT.match(path)}


def test_a_second_configuration_writes_no_table_or_plot_of_the_first(tmp_path):
    """The test-size demo, then a configuration with another task and a name of its own, in one working directory:
    every table and plot of the first is there, under its own name, and the second's dry run writes none of them."""
    demo = load_workflow(Path(TEST_CONFIG))["task_settings"]["demo"]
    second = tmp_path / "second.yaml"
    second.write_text(yaml.safe_dump({"tasks": ["other"], "tables": {"name": "mine"}, "task_settings": {
        "other": {**demo, "corpus": {**demo["corpus"], "seed": 8}, "description": "another demo task"}}}))
    first = planned_outputs(tmp_path, "--configfile", TEST_CONFIG)
    then = planned_outputs(tmp_path, "--configfile", TEST_CONFIG, str(second))
    assert first >= {"results/demo/tables", "results/demo/plots/bleu.png", "results/tables/demo/quality.md",
                     "results/tables/demo/data_statistics.md", "results/plots/demo/bleu.png"}, sorted(first)
    assert then >= {"results/other/tables", "results/other/plots/bleu.png", "results/tables/mine/quality.md",
                    "results/tables/mine/data_statistics.md", "results/plots/mine/bleu.png"}, sorted(then)
    assert not first & then, f"the second configuration would rewrite the first's {sorted(first & then)}"
    assert all(p.startswith(("results/demo/", "results/tables/demo/", "results/plots/demo/")) for p in first), first


def test_after_two_configurations_both_data_statistics_tables_are_there(tmp_path):
    """A real run of Table 5 (rule data_statistics: the demo corpus and its checks, a few seconds) for the
    test-size demo and then for a second configuration, in one working directory: the first's table is untouched."""
    demo = load_workflow(Path(TEST_CONFIG))["task_settings"]["demo"]
    second = tmp_path / "second.yaml"
    second.write_text(yaml.safe_dump({"tasks": ["other"], "tables": {"name": "mine"}, "task_settings": {
        "other": {**demo, "corpus": {**demo["corpus"], "seed": 8, "train_docs": 20}}}}))
    work = tmp_path / "work"
    run_snakemake(work, "--cores", "2", "--configfile", TEST_CONFIG, "--", "data_statistics", timeout=300)
    first = work / "results/tables/demo/data_statistics.md"
    before = (first.read_text(encoding="utf-8"), first.stat().st_mtime_ns)
    run_snakemake(work, "--cores", "2", "--configfile", TEST_CONFIG, str(second), "--", "data_statistics", timeout=300)
    assert (first.read_text(encoding="utf-8"), first.stat().st_mtime_ns) == before, "the first table was rewritten"
    assert "| demo | train |" in before[0] and "| other |" not in before[0], before[0]
    assert "| other | train |" in (work / "results/tables/mine/data_statistics.md").read_text(encoding="utf-8")

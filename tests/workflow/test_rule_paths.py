"""Every file of every job is a path of docnmt.layout: the rules spell none themselves.

A dry run of the demo and of the paper's tasks lists each job's inputs, outputs, log and benchmark. Each input and
output must be the value of one of layout's functions (any of them, found by introspection, each called with its
parameters as placeholders that stand for the config's tasks, splits, levels, evaluation sets, languages and
sources); each log and benchmark must be layout's ``log_file`` and ``benchmark_file`` of one job name, starting
with the job's task. A path spelled by hand in a rule file (``data/{task}/foo.txt``) matches no function."""

from __future__ import annotations

import inspect
import re

import pytest

from docnmt import layout
from docnmt.workflow import targets, tasks
from helpers import REPO, dry_run_jobs
from wfconfigs import demo_config, paper_config

CONFIGS = {"[demo]": demo_config, "[news,ted,os]": paper_config}
#: Job names of the jobs that have no task: the downloads, and the configured tasks' tables together.
WORKFLOW_JOBS = ("downloads", "data_statistics", "tables", "plots")
#: The rules that only name targets (`snakemake`, `snakemake data`): they run nothing, so they log nothing.
TARGET_RULES = ("all", "data")
#: A quoted path in a rule file or the Snakefile (not a job's name, which layout's log_file and benchmark_file
#: make a path of): every path comes from docnmt.layout instead.
PATH_LITERAL = re.compile(r"""(?<!log_file\()(?<!benchmark_file\()["'](?:data|results|logs|benchmarks|downloads)/""")


def domains(config: dict) -> dict[str, str]:
    """The regex each placeholder stands for, by the parameter name of layout's functions; others: one path part."""
    def alternatives(values):
        return "|".join(re.escape(str(v)) for v in values)

    langs = {lang for task in config["tasks"] for lang in tasks.langs(config, task)}
    return {
        "task": alternatives(config["tasks"]),
        "split": alternatives(tasks.all_splits(config) + ["contrapro_docs"]),
        "level": alternatives(tasks.LEVELS),
        "evalset": alternatives(tasks.all_evalsets(config)),
        "stage": "raw|tok|bpe",
        "lang": alternatives(sorted(langs)),
        "source": alternatives(config["sources"]),
        "shard": r"\d+-of-\d+",
    }


def layout_patterns(config: dict) -> dict[str, re.Pattern]:
    """Each of layout's path functions (not the logs' and benchmarks') as a regex of the paths it gives."""
    where = domains(config)
    patterns = {}
    for name, func in inspect.getmembers(layout, inspect.isfunction):
        if func.__module__ != layout.__name__ or name in ("log_file", "benchmark_file"):
            continue
        parts = func(*(f"\0{p}\0" for p in inspect.signature(func).parameters)).split("\0")
        patterns[name] = re.compile("".join(re.escape(part) if i % 2 == 0 else f"(?:{where.get(part, '[^/]+')})"
                                            for i, part in enumerate(parts)))
    return patterns


@pytest.fixture(scope="module", params=list(CONFIGS))
def dry_run(request, tmp_path_factory):
    """(task list, its validated config, the jobs of its dry run): the paper's is the session's one dry run of its
    DAG (conftest's ``paper_dry_run``, targets all and data)."""
    if request.param == "[news,ted,os]":
        return request.param, CONFIGS[request.param](), request.getfixturevalue("paper_dry_run")
    workdir = tmp_path_factory.mktemp("rule-paths")
    return request.param, CONFIGS[request.param](), dry_run_jobs(workdir, request.param)


def test_the_patterns_know_layouts_paths_and_nothing_spelled_by_hand():
    patterns = layout_patterns(demo_config())
    for path in (layout.corpus_file("demo", "contrapro", "de"), layout.shard_file("demo", "train", "en", "2-of-4", "tok"),
                 layout.score_file("demo", "contrapro", "accuracy.sentence"), layout.combined_plot("demo", "bleu"),
                 layout.decode_file("demo", "test", "doc-trans+mbr", "json"), layout.learning_curves_plot("demo")):
        assert any(p.fullmatch(path) for p in patterns.values()), path
    for path in ("data/demo/foo/train.en", "data/demo/corpus/extra/train.en", "results/demo/plots/x.svg",
                 "data/news/corpus/train.en", "logs/demo/train/document.log", "results/demo/decode/dev/x.txt"):
        assert not any(p.fullmatch(path) for p in patterns.values()), path


def test_every_input_and_output_of_every_job_is_a_layout_path(dry_run):
    task_list, config, jobs = dry_run
    patterns = layout_patterns(config)
    assert len(jobs) > 100
    unknown = [f"{job['rule']} {key}: {path}" for job in jobs for key in ("input", "output") for path in job[key]
               if not any(p.fullmatch(path) for p in patterns.values())]
    assert not unknown, f"tasks={task_list}: paths that no function of docnmt.layout gives:\n" + "\n".join(unknown[:20])


def test_every_log_and_benchmark_is_named_by_layout_after_the_job(dry_run):
    task_list, _, jobs = dry_run
    for job in jobs:
        if job["rule"] in TARGET_RULES:
            continue
        assert len(job["log"]) == 1 and len(job["benchmark"]) == 1, job
        name = re.fullmatch(r"logs/(.+)\.log", job["log"][0])
        assert name and job["log"][0] == layout.log_file(name[1]), job
        assert job["benchmark"][0] == layout.benchmark_file(name[1]), f"{job['rule']}: log and benchmark differ"
        first = name[1].split("/")[0]
        expected = job["wildcards"].get("task")
        assert first == expected if expected else first in (*WORKFLOW_JOBS, *task_list.strip("[]").split(",")), job


def test_rule_all_makes_the_packages_targets(dry_run):
    _, config, jobs = dry_run
    (all_job,) = [job for job in jobs if job["rule"] == "all"]
    assert all_job["input"] == targets.all_targets(config)


def test_no_rule_file_spells_a_path():
    found = [f"{path.name}:{number}: {line.strip()}" for path in [*sorted((REPO / "rules").glob("*.smk")), REPO / "Snakefile"]
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
             if PATH_LITERAL.search(line)]
    assert not found, "paths spelled in the rules instead of taken from docnmt.layout:\n" + "\n".join(found)

"""The Slurm profile (profiles/slurm) against a real single-node Slurm cluster.

tests/slurm/cluster.sh brings up MariaDB, munged, slurmdbd, slurmctld and
slurmd in a temporary directory (installing the Debian packages if needed,
which needs root and apt; the module is skipped when they cannot be had) and
this module submits the demo through ``snakemake --profile profiles/slurm``
to it, then checks with ``sacct`` what Slurm really ran. Overrides on the
command line, all for the test cluster's size and speed:

* ``train:cpus_per_task=1`` and ``--set-threads train=1``: the profile asks 4
  CPUs for training, the test node has ``nproc`` (2) of them and Slurm would
  refuse the job. The job's Snakemake runs with ``--cores all``, so the
  training would take both of the node's cores as torch threads and data
  loaders; beside the session's other work on two cores two threads spin
  (16 updates took 50 CPU-s in 90 s with two, 6 s alone);
* ``--slurm-init-seconds-before-status-checks 5``: the first status check after
  5 s instead of 40 s (the demo's jobs take seconds).

Everything else (executor, jobs, retries, keep-going, default resources, the
GPU rules' gpu=1, sacct status, kept logs) comes from the profile. The jobs'
``srun`` is cluster.sh's wrapper (first on PATH), which gives it back the
SLURM_CONF that the jobstep plugin deletes.

The module's fixtures start the cluster and make the profile run once (the
module's tests stay on one pytest-xdist worker); Snakemake and ``sacct`` reach
the cluster through an explicit environment (:func:`cluster_env`), never the
process's own. The cluster is stopped at the module's end.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from helpers import REPO, TEST_CONFIG, copy_workdir, run_snakemake, tool_env

#: make test-full: the Slurm profile, on a Slurm of its own.
pytestmark = [pytest.mark.workflow, pytest.mark.trains, pytest.mark.full]

CLUSTER_SH = REPO / "tests" / "slurm" / "cluster.sh"
PROFILE = REPO / "profiles" / "slurm"
# What the node of cluster.sh has fewer of than the profile asks: CPUs.
TEST_CLUSTER_OVERRIDES = {"train": {"cpus_per_task": 1}}
TEST_CLUSTER_THREADS = ("--set-threads", "train=1")
SUBMITTED_RE = re.compile(r"Job (\d+) has been submitted with SLURM jobid (\d+) \(log: (\S+)\)\.")
SACCT_FIELDS = ("JobID", "JobName", "State", "ExitCode", "Elapsed", "AllocTRES", "Comment")
SACCT_FORMAT = "JobID,JobName%36,State,ExitCode,Elapsed,AllocTRES%45,Comment%45"


def _profile() -> dict:
    return yaml.safe_load((PROFILE / "config.yaml").read_text(encoding="utf-8"))


def _set_resources() -> list[str]:
    """The profile's set-resources with the test cluster's overrides, as CLI arguments.

    ``--set-resources`` on the command line replaces the profile's whole
    mapping, so all of the profile's entries are passed again.
    """
    merged: dict[str, dict] = {rule: dict(values) for rule, values in _profile()["set-resources"].items()}
    for rule, values in TEST_CLUSTER_OVERRIDES.items():
        merged.setdefault(rule, {}).update(values)
    return ["--set-resources", *(f"{rule}:{key}={value}" for rule, values in merged.items() for key, value in values.items())]


def _default_resources(extra: dict) -> list[str]:
    """The profile's default-resources plus ``extra``, as CLI arguments (the CLI replaces the mapping)."""
    merged = {**_profile()["default-resources"], **extra}
    return ["--default-resources", *(f"{key}={value}" for key, value in merged.items())]


def space_free_python(folder: Path) -> Path | None:
    """The README's workaround where this interpreter's path has whitespace: the executor plugins write
    ``sys.executable`` unquoted into every job's command (upstream), so Snakemake is started through a link to
    the environment in ``folder`` (the test's working directory, without spaces). None where no link is needed."""
    if not any(c.isspace() for c in sys.executable):
        return None
    link = folder / ".venv-link"
    if not link.exists():
        link.symlink_to(Path(sys.prefix), target_is_directory=True)
    return link / "bin" / Path(sys.executable).name


def cluster_env(cluster: Path) -> dict:
    """The environment of Snakemake and sacct for the test cluster: what `cluster.sh start` prints to export,
    the cluster's config and the srun wrapper that gives the jobs' srun its SLURM_CONF back (see cluster.sh)."""
    env = tool_env()
    env["SLURM_CONF"] = str(cluster / "etc" / "slurm.conf")
    env["PATH"] = os.pathsep.join([str(cluster / "bin"), env["PATH"]])
    return env


def run_profile(cluster: Path, workdir: Path, *targets: str, extra: tuple[str, ...] = (), check: bool = True,
                timeout: int = 600):
    """``snakemake --profile profiles/slurm TARGETS --configfile .test/config_demo.yaml`` in ``workdir``."""
    return run_snakemake(
        workdir, "--profile", str(PROFILE), *targets, "--configfile", TEST_CONFIG,
        "--slurm-init-seconds-before-status-checks", "1", *_set_resources(), *TEST_CLUSTER_THREADS, *extra,
        check=check, timeout=timeout, python=space_free_python(workdir), env=cluster_env(cluster),
    )


def sacct(cluster: Path, *args: str) -> str:
    result = subprocess.run(["sacct", *args], capture_output=True, text=True, env=cluster_env(cluster), timeout=60)
    assert result.returncode == 0, f"sacct {' '.join(args)}: {result.stderr}"
    return result.stdout


def slurm_jobs(cluster: Path) -> dict[str, dict[str, str]]:
    """Every job (allocation, no steps) the cluster has accounted: {jobid: fields}."""
    out = sacct(cluster, "-a", "-X", "-n", "-P", "-S", "2020-01-01", f"--format={','.join(SACCT_FIELDS)}")
    jobs = {}
    for line in out.splitlines():
        values = line.split("|")
        jobs[values[0]] = dict(zip(SACCT_FIELDS, values))
    return jobs


def wait_accounted(cluster: Path, jobids: set[str], timeout: float = 30) -> dict[str, dict[str, str]]:
    """sacct's records of ``jobids``, once all of them are there and finished."""
    deadline = time.monotonic() + timeout
    while True:
        jobs = slurm_jobs(cluster)
        done = {j: jobs[j] for j in jobids if j in jobs and jobs[j]["State"] not in ("PENDING", "RUNNING")}
        if len(done) == len(jobids) or time.monotonic() > deadline:
            return done
        time.sleep(1)


def submitted(output: str) -> dict[str, tuple[str, str]]:
    """{slurm jobid: (rule, slurm log)} from Snakemake's 'has been submitted' lines."""
    result = {}
    for _, slurm_id, log in SUBMITTED_RE.findall(output):
        rule = re.search(r"/rule_([^/]+)/", log)
        result[slurm_id] = (rule.group(1) if rule else "?", log)
    return result


def sacct_excerpt(cluster: Path, jobids) -> str:
    ids = ",".join(sorted(jobids, key=int))
    return sacct(cluster, "-a", "-X", "-S", "2020-01-01", "-j", ids, f"--format={SACCT_FORMAT}")


def stop_cluster(directory: Path) -> None:
    """Stops the cluster's daemons (by their pids) and removes its MariaDB data (130 MB); configs and logs stay."""
    stopped = subprocess.run(["bash", str(CLUSTER_SH), "stop", str(directory)], capture_output=True, text=True,
                             timeout=300)
    assert stopped.returncode == 0, f"cluster.sh stop failed:\n{stopped.stderr}"
    shutil.rmtree(directory / "mysql" / "data", ignore_errors=True)


@pytest.fixture(scope="module")
def slurm_cluster(tmp_path_factory) -> Path:
    """A running single-node cluster's directory, stopped at the module's end (also when its start failed half-way).
    Snakemake and sacct reach it through :func:`cluster_env`: the process's own environment is never changed."""
    if sys.platform != "linux" or shutil.which("bash") is None:
        pytest.skip("the test Slurm cluster needs Linux with bash (and Debian's Slurm packages)")
    directory = tmp_path_factory.mktemp("slurm-cluster")
    started = time.perf_counter()
    try:
        try:
            start = subprocess.run(["bash", str(CLUSTER_SH), "start", str(directory)], capture_output=True, text=True,
                                   timeout=900)
        except subprocess.TimeoutExpired as timeout:
            pytest.fail(f"cluster.sh start did not finish in 900 s:\n{timeout.stderr}")
        if start.returncode == 3:
            pytest.skip(f"no Slurm cluster: {start.stderr.strip().splitlines()[-1]}")
        if start.returncode != 0:
            pytest.fail(f"cluster.sh start failed ({start.returncode}):\n{start.stdout}\n{start.stderr}")
        print(f"\ntest Slurm cluster up in {time.perf_counter() - started:.0f} s ({directory})")
        yield directory
    finally:
        stop_cluster(directory)


TRAIN_TARGET = "results/demo/models/document/checkpoint_best.pt"
BROKEN_TARGET = "data/broken/corpus/test.stats.json"


@pytest.fixture(scope="module")
def profile_run(slurm_cluster, small_demo_data, tmp_path_factory) -> dict:
    """One run through the profile that serves the success and the failure tests: the document-level demo model
    (the last preprocessing steps and the training as Slurm jobs) and, beside it, the check of a second task's
    corrupt corpus (its docids one line short), which fails on the node, is retried once and is reported, while
    the training goes on (the profile's keep-going).

    The steps before ``windows`` come from the session's test-size demo data (conftest's ``small_demo_data``,
    the same config), copied with Snakemake's records, its windows and document-level binarization removed; the
    copy of the broken corpus runs locally first. On Slurm each job starts its own Snakemake (~8 s on two loaded
    cores): all 52 jobs through the profile took 8 minutes instead of 2, and the 44 small ones before ``windows``
    took 15 s locally.
    """
    cluster, workdir = slurm_cluster, tmp_path_factory.mktemp("slurm-profile-run")
    copy_workdir(small_demo_data, workdir)
    for made_on_slurm in ("data/demo/doc", "data/demo/bin/document"):
        shutil.rmtree(workdir / made_on_slurm)
    corpus = workdir / "broken-corpus"
    corpus.mkdir()
    (corpus / "test.en").write_text("One.\nTwo.\nThree.\n", encoding="utf-8")
    (corpus / "test.de").write_text("Eins.\nZwei.\nDrei.\n", encoding="utf-8")
    (corpus / "test.docids").write_text("d1\nd1\n", encoding="utf-8")
    broken = workdir / "broken.yaml"
    broken.write_text(yaml.safe_dump({"tasks": ["demo", "broken"], "task_settings": {"broken": {
        "description": "a corrupt prepared corpus", "src": "en", "tgt": "de", "bpe_merges": 10, "dropout": 0.1,
        "label_smoothing": 0.1, "corpus": {"type": "prepared", "dir": str(corpus)}}}}))
    run_snakemake(workdir, TRAIN_TARGET, *(f"data/broken/corpus/test.{ext}" for ext in ("en", "de", "docids")),
                  "--cores", "2", "--configfile",
                  TEST_CONFIG, str(broken), "--omit-from", "windows")
    before = set(slurm_jobs(cluster))
    started = time.perf_counter()
    result = run_profile(cluster, workdir, TRAIN_TARGET, BROKEN_TARGET,
                         extra=("--configfile", TEST_CONFIG, str(broken)), check=False, timeout=900)
    duration = time.perf_counter() - started
    output = result.stdout + result.stderr
    jobs = submitted(output)
    accounted = wait_accounted(cluster, set(jobs))
    new = set(slurm_jobs(cluster)) - before
    summary = f"profile run of {len(jobs)} Slurm jobs: {duration:.0f} s (exit {result.returncode})\n" + \
        (sacct_excerpt(cluster, jobs) if jobs else "")
    print("\n" + summary)
    return {"workdir": workdir, "result": result, "output": output, "jobs": jobs, "accounted": accounted, "new": new}


def test_demo_runs_through_the_profile_on_slurm(profile_run):
    """The training chain: every job submitted once, COMPLETED, the GPU where asked, its Slurm log kept."""
    workdir, output, accounted = profile_run["workdir"], profile_run["output"], profile_run["accounted"]
    assert (workdir / TRAIN_TARGET).is_file()
    chain = {j: job for j, job in profile_run["jobs"].items() if job[0] != "check_corpus"}
    stats = re.search(r"^total\s+(\d+)$", output, re.MULTILINE)
    assert stats, "Snakemake printed no job stats"
    assert len(chain) + 1 == int(stats.group(1)), "every job of the DAG is submitted to Slurm (no localrules)"
    assert sorted({rule for rule, _ in chain.values()}) == ["binarize", "train", "windows"]
    assert profile_run["new"] == set(profile_run["jobs"]), "Slurm ran exactly the jobs that Snakemake submitted"
    assert set(chain) <= set(accounted), f"not accounted by sacct: {sorted(set(chain) - set(accounted))}"
    states = {j: accounted[j]["State"] for j in chain}
    assert set(states.values()) == {"COMPLETED"}, states
    for slurm_id, (rule, log) in chain.items():
        assert f"rule_{rule}" in accounted[slurm_id]["Comment"], (slurm_id, rule, accounted[slurm_id])
        assert Path(log).is_file(), f"kept Slurm log of job {slurm_id} (slurm-keep-successful-logs)"
        tres = dict(item.split("=", 1) for item in accounted[slurm_id]["AllocTRES"].split(","))
        if rule == "train":
            assert tres.get("gres/gpu") == "1", f"train (gpu=1) got no GPU from Slurm: {accounted[slurm_id]}"
            assert tres["cpu"] == "1" and tres["mem"] == "16000M", f"train's cpus_per_task and mem_mb: {tres}"
            slurm_log = Path(log).read_text(encoding="utf-8", errors="replace")
            assert "Finished jobid: 0 (Rule: train)" in slurm_log
            # the job's Snakemake takes --set-threads from the submitting one: the rule's command gets one thread
            assert " --workers 1 -- " in slurm_log, "the training's threads on the node"
        else:
            assert "gres/gpu" not in tres, f"{rule} (no GPU) was given one: {accounted[slurm_id]}"


def test_unknown_partition_fails_at_submission(slurm_cluster, profile_run, tmp_path):
    """sbatch refuses the job; Snakemake says so and no output is left behind (after the profile run: the
    cluster's jobs are compared before and after it)."""
    cluster, workdir = slurm_cluster, tmp_path
    before = set(slurm_jobs(cluster))
    result = run_profile(cluster, workdir, "data/demo/corpus/test.en",
                         extra=tuple(_default_resources({"slurm_partition": "nonexistent"})), check=False, timeout=300)
    after = set(slurm_jobs(cluster))
    output = result.stdout + result.stderr
    print(f"\n--- unknown partition: Snakemake's error (exit {result.returncode})")
    print("\n".join(line for line in output.splitlines() if "sbatch:" in line or "Error in rule" in line))
    assert result.returncode != 0
    assert "Error in rule demo_corpus" in output and "SLURM sbatch failed" in output
    assert "invalid partition specified: nonexistent" in output
    assert not (workdir / "data").exists(), sorted(str(p) for p in (workdir / "data").rglob("*"))
    assert after == before, "a rejected submission leaves no Slurm job"


def test_failing_job_is_reported_with_its_slurm_log(profile_run):
    """The corrupt corpus: check_corpus fails on the node, is retried once, and is reported with its Slurm log;
    its output is removed, and Snakemake exits non-zero after the training finished."""
    output, jobs, accounted = profile_run["output"], profile_run["jobs"], profile_run["accounted"]
    print("\n".join(line for line in output.splitlines() if "SLURM" in line or "rror" in line)[:4000])
    assert profile_run["result"].returncode != 0
    assert "Error in rule check_corpus" in output
    failed = {j: job for j, job in jobs.items() if job[0] == "check_corpus"}
    retries = _profile()["retries"]
    assert len(failed) == 1 + retries, f"check_corpus submitted once plus {retries} retries: {failed}"
    for slurm_id, (_, log) in failed.items():
        assert f"SLURM-job '{slurm_id}' failed, SLURM status is: 'FAILED'" in output
        assert log in output.split(f"SLURM-job '{slurm_id}' failed", 1)[1], f"the Slurm log of {slurm_id} is named"
        assert "Error in rule check_corpus" in Path(log).read_text(encoding="utf-8", errors="replace")
    assert {accounted[j]["State"] for j in failed} == {"FAILED"}, accounted
    workdir = profile_run["workdir"]
    assert not (workdir / BROKEN_TARGET).exists(), "the failed rule's output is removed"
    assert "docids" in (workdir / "logs/broken/check_corpus/test.log").read_text(encoding="utf-8").lower()

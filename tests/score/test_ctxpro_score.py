"""docnmt.score.ctxpro: ctxpro accuracy equal to the package's own `ctxpro score`, on its real dev set."""

import json
import subprocess
import sys

import pytest

from helpers import REPO, CTXPRO_DEV, CTXPRO_DEV_FILE, ctxpro_mirror, shell_commands, tool_env
from docnmt.corpora import ctxpro as sets
from docnmt.score import ctxpro


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    return ctxpro_mirror(tmp_path_factory.mktemp("ctxpro-mirror"))


@pytest.fixture(scope="module")
def translations(release, tmp_path_factory):
    """Translations of the dev set's examples that exercise every part of the rule: the reference; the reference
    after another sentence (only the last counts); the expected form replaced; upper case with a last sentence after
    it (an abbreviation that must not split)."""
    examples = json.loads((release / "evalsets" / f"{CTXPRO_DEV_FILE}.json").read_text())
    lines = []
    for i, example in enumerate(examples):
        ref, form = example["ref segment"], example["expected"]
        lines.append([ref, f"Das ist ein Satz. {ref}", ref.replace(form, "xxx"),
                      f"{ref.upper()} Herr Dr. Meier kommt!"][i % 4])
    path = tmp_path_factory.mktemp("ctxpro-hyps") / "hyps.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def package_score(translations, eval_set, *options):
    """What the package's own `ctxpro score` prints."""
    result = subprocess.run([sys.executable, "-m", "ctxpro", "score", "-t", str(translations), "-e", str(eval_set),
                             "-l", "de", *options], capture_output=True, text=True, env=tool_env())
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


@pytest.mark.parametrize("options", [["--complete"], ["--pretty"], []], ids=["complete", "pretty", "total"])
def test_docnmt_ctxpro_prints_what_ctxpro_score_prints(release, translations, options):
    eval_set = release / "evalsets" / f"{CTXPRO_DEV_FILE}.json"
    ours = subprocess.run(["docnmt-ctxpro", "--translations", str(translations), "--eval-set", str(eval_set),
                           "--lang", "de", *options], capture_output=True, text=True, env=tool_env())
    assert ours.returncode == 0, ours.stderr
    theirs = package_score(translations, eval_set, *options)
    assert ours.stdout == theirs
    if options == ["--complete"]:  # the four kinds of line above give each outcome: neither all right nor all wrong
        total = theirs.splitlines()[-1].split("\t")
        assert total[0] == "total" and 0 < int(total[1]) < int(total[2]) == 615


def test_a_named_set_is_downloaded_through_a_mirror_with_its_md5_checked(release, translations, tmp_path):
    mirror = release.parents[5]  # the folder that holds github.com/
    env = dict(tool_env(), CTXPRO=str(tmp_path / "cache"))
    args = ["docnmt-ctxpro", "-t", str(translations), "-e", CTXPRO_DEV, "-l", "de", "-c", "--mirror", str(mirror),
            "--signature"]
    ours = subprocess.run(args, capture_output=True, text=True, env=env)
    assert ours.returncode == 0, ours.stderr
    assert ours.stdout == package_score(translations, release / "evalsets" / f"{CTXPRO_DEV_FILE}.json", "-c")
    assert "md5 matches the published checksum 2c27b954eff6151f476aedc2ac6b0c82" in ours.stderr
    assert ours.stderr.splitlines()[-1] == (f"ctxpro:{CTXPRO_DEV}|md5:2c27b954eff6151f476aedc2ac6b0c82|"
                                            "scorer:ctxpro-0.0.5|splitter:sentence-splitter-1.4:de")
    cached = tmp_path / "cache" / f"{CTXPRO_DEV_FILE}.json"
    cached.write_text(cached.read_text()[:-2] + "]", encoding="utf-8")  # another file under the set's name
    again = subprocess.run(args, capture_output=True, text=True, env=env)
    assert again.returncode == 1 and "differs from the registry's 2c27b954eff6151f476aedc2ac6b0c82" in again.stderr


@pytest.mark.parametrize("fault", ["lines", "lang", "name"])
def test_bad_input_is_one_line_and_no_score(release, translations, tmp_path, fault):
    eval_set = str(release / "evalsets" / f"{CTXPRO_DEV_FILE}.json")
    lang = "de"
    if fault == "lines":
        short = tmp_path / "short.txt"
        short.write_text("".join(translations.read_text().splitlines(keepends=True)[:600]))
        translations, expected = short, "expected 615 hypotheses (one per line of"
    elif fault == "lang":
        lang, expected = "ja", "ja: sentence-splitter does not know this target language; it knows ca, cs, da, de"
    else:
        eval_set, expected = "en-de/auxilary/dev", "no ctxpro set of this name; close names: en-de/auxiliary/dev"
    result = subprocess.run(["docnmt-ctxpro", "-t", str(translations), "-e", eval_set, "-l", lang],
                            capture_output=True, text=True, env=dict(tool_env(), CTXPRO=str(tmp_path / "cache")))
    assert result.returncode == 1 and result.stdout == "" and result.stderr.count("\n") == 1, result.stderr
    assert expected in result.stderr


def test_the_workflows_scorer_scores_only_the_examples_lines_as_ctxpro_score(release, translations, tmp_path):
    """The set's documents (context, then sentence), one hypothesis per line: only the examples' lines are
    scored, per rule as the package scores the same translations; the searches per example come from the
    sidecars, the decodes a strategy builds on included."""
    out = tmp_path / "set"
    spec = sets.registry()[CTXPRO_DEV]
    report = sets.prepare(CTXPRO_DEV, release / "evalsets" / f"{CTXPRO_DEV_FILE}.json",
                          release / "inputs" / CTXPRO_DEV_FILE, spec.md5, "en", "de", out, "x", max_sentences=1)
    records = sets.read_records(out / "x.examples.jsonl")
    hyps = ["context, not scored"] * report["lines"]
    for record, line in zip(records, translations.read_text(encoding="utf-8").splitlines()):
        hyps[record["line"]] = line
    (tmp_path / "hyps.txt").write_text("\n".join(hyps) + "\n", encoding="utf-8")
    sidecars = {"sentence-level": {"requests": report["lines"]}, "2-pass": {"requests": report["lines"], "first_pass": {}},
                "doc-trans": {"requests": 700, "first_pass": {}, "round_one": {}}}
    for name, sidecar in sidecars.items():
        (tmp_path / f"{name}.json").write_text(json.dumps(sidecar))
    args = ["workflow", "--examples", str(out / "x.examples.jsonl"), "--report", str(out / "x.report.json"),
            "--source", str(out / "x.en"), "--lang", "de", "--output", str(tmp_path / "scores.json"),
            "--skipped", "cheating=a ctxpro set has no reference for its context sentences"]
    for name in sidecars:
        args += ["--system", f"{name}={tmp_path / 'hyps.txt'}", "--sidecar", f"{name}={tmp_path / name}.json"]
    assert ctxpro.main(args) == 0
    scores = json.loads((tmp_path / "scores.json").read_text())
    theirs = package_score(translations, release / "evalsets" / f"{CTXPRO_DEV_FILE}.json", "--complete")
    for name in sidecars:
        assert ctxpro.complete_lines(scores["systems"][name]["rules"]) == theirs.splitlines()
    lines_per_example = report["lines"] / 615
    assert scores["systems"]["sentence-level"]["searches_per_example"] == pytest.approx(lines_per_example)
    assert scores["systems"]["2-pass"]["searches_per_example"] == pytest.approx(2 * lines_per_example)
    assert scores["systems"]["doc-trans"]["searches_per_example"] == pytest.approx(700 / 615 + 2 * lines_per_example)
    assert scores["set"] == CTXPRO_DEV and scores["phenomenon"] == "auxiliary" and scores["md5"] == spec.md5
    assert scores["skipped"] == {"cheating": "a ctxpro set has no reference for its context sentences"}


def test_the_scoring_pages_command_runs_as_written(release, translations, tmp_path):
    """docs/scoring.md's docnmt-ctxpro command, in a folder with its hyps.txt, the named set in $CTXPRO as a first
    run downloads it there (its md5 checked again): it prints what `ctxpro score --complete` prints."""
    import shlex
    import shutil

    (command,) = shell_commands(REPO / "docs/scoring.md", "## ctxpro", "**By hand.**")
    shutil.copy(translations, tmp_path / "hyps.txt")
    cache = tmp_path / "cache"
    cache.mkdir()
    shutil.copy(release / "evalsets" / f"{CTXPRO_DEV_FILE}.json", cache)
    result = subprocess.run(shlex.split(command), cwd=tmp_path, capture_output=True, text=True,
                            env=dict(tool_env(), CTXPRO=str(cache)))
    assert result.returncode == 0, result.stderr
    assert result.stdout == package_score(translations, release / "evalsets" / f"{CTXPRO_DEV_FILE}.json", "--complete")

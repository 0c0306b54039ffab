"""docnmt.corpora.ctxpro: ctxpro's registry, its real files checked, and each example as a document."""

import json
import subprocess
import sys

import pytest

from helpers import CTXPRO_DEV, CTXPRO_DEV_FILE, ctxpro_mirror, tool_env
from docnmt.corpora import ctxpro
from docnmt.textio import InputError


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    return ctxpro_mirror(tmp_path_factory.mktemp("ctxpro-mirror"))


@pytest.fixture
def dev(release):
    return release / "evalsets" / f"{CTXPRO_DEV_FILE}.json", release / "inputs" / CTXPRO_DEV_FILE


def test_the_registry_is_the_installed_packages_keyed_by_each_files_url():
    sets = ctxpro.registry()
    assert len(sets) == 90 and all(ctxpro.NAME.fullmatch(name) for name in sets)
    spec = sets[CTXPRO_DEV]
    assert spec.md5 == "2c27b954eff6151f476aedc2ac6b0c82"
    assert spec.inputs == "https://github.com/rewicks/ctxpro/raw/main/release/inputs/" + CTXPRO_DEV_FILE
    # the package's own entry names formality's file as its destination; the URL's name is auxiliary's
    assert sets["en-es/auxiliary/test"].file_name == "auxiliary.opensubtitles.en-es.test.json"
    assert len({s.file_name for s in sets.values()}) == len(sets)
    assert ctxpro.evalset_name("en-it/gender/test") == "ctxpro-gender-test"
    local = ctxpro.registry(local="/copies/release")[CTXPRO_DEV]
    assert (local.json, local.inputs) == (f"/copies/release/evalsets/{CTXPRO_DEV_FILE}.json",
                                          f"/copies/release/inputs/{CTXPRO_DEV_FILE}")


def test_an_unknown_or_malformed_name_is_one_line_with_the_close_names():
    sets = ctxpro.registry({"en-de/demo/test": {"json": "d.json", "inputs": "d.inputs"}})
    assert sets["en-de/demo/test"].md5 is None
    with pytest.raises(InputError, match="close names: en-de/formality/test"):
        ctxpro.lookup("en-de/formalty/test", sets)
    with pytest.raises(InputError, match="PAIR/PHENOMENON/SPLIT"):
        ctxpro.lookup("formality/test", sets)


def test_the_real_dev_set_becomes_one_document_per_example_with_its_sentence_last(dev, tmp_path):
    json_path, inputs = dev
    report = ctxpro.prepare(CTXPRO_DEV, json_path, inputs, ctxpro.registry()[CTXPRO_DEV].md5, "en", "de", tmp_path,
                            "ctxpro-auxiliary-dev", max_sentences=2)
    examples = json.loads(json_path.read_text())
    assert report["examples"] == len(examples) == 615 and report["md5_checked"]
    assert report["context_sentences_in_inputs"] == 5527 and report["rules"] == ["DO.ELL", "WILL.ELL"]
    src = (tmp_path / "ctxpro-auxiliary-dev.en").read_text().splitlines()
    tgt = (tmp_path / "ctxpro-auxiliary-dev.de").read_text().splitlines()
    ids = (tmp_path / "ctxpro-auxiliary-dev.docids").read_text().splitlines()
    records = ctxpro.read_records(tmp_path / "ctxpro-auxiliary-dev.examples.jsonl")
    assert len(src) == len(tgt) == len(ids) == report["lines"] == 615 + report["context_sentences"]
    for record, example, line in zip(records, examples, open(inputs, encoding="utf-8")):
        at = record["line"]
        assert src[at] == example["src segment"] and tgt[at] == example["ref segment"]
        context = line.rstrip("\n").split("<eos> ")[:-1][-2:]
        assert src[at - record["context"]:at] == context and not any(tgt[at - record["context"]:at])
        assert ids[at - record["context"]:at + 1] == [record["docid"]] * (record["context"] + 1)
        assert record["rule"] == example["rule"] and record["expected"] == example["expected"]
    kept = [min(2, line.count("<eos> ")) for line in open(inputs, encoding="utf-8")]
    assert report["context_sentences"] == sum(r["context"] for r in records) == sum(kept)


def test_the_context_bounds_count_sentences_then_words_as_ctxpro_extract():
    context = ["a b c", "d e", "f g h i", "j"]
    assert ctxpro.bound(context, 10, 10000) == context
    assert ctxpro.bound(context, 2, 10000) == ["f g h i", "j"]
    assert ctxpro.bound(context, 6, 10000) == context, "fewer sentences than the bound: all of them"
    assert ctxpro.bound(context, 0, 10000) == []
    # each sentence counts its words plus one: 3+4+5+2 = 14 > 10, drop "a b c" (4) -> 10
    assert ctxpro.bound(context, 10, 10) == ["d e", "f g h i", "j"]
    assert ctxpro.bound(context, 10, 1) == []


@pytest.mark.parametrize("fault", ["md5", "line", "count", "pair", "json"])
def test_bad_files_are_one_line_naming_the_file_and_nothing_is_written(dev, tmp_path, fault):
    json_path, inputs = dev
    md5 = ctxpro.registry()[CTXPRO_DEV].md5
    lines = inputs.read_text(encoding="utf-8").splitlines()
    pair = ("en", "de")
    if fault == "md5":
        md5 = "0" * 32
        expected = "md5 2c27b954eff6151f476aedc2ac6b0c82 differs from the registry's 0000"
    elif fault == "line":
        lines[6] = lines[6].rsplit("<eos> ", 1)[0] + "<eos> Something else."
        expected = f"{tmp_path / 'inputs'}:7: the line's last sentence 'Something else.' is not example 7's"
    elif fault == "count":
        lines = lines[:-1]
        expected = "expected one line per example of the set (615), found 614"
    elif fault == "pair":
        pair = ("en", "it")
        expected = "the set translates en->de, the task en->it"
    else:
        json_path = tmp_path / "broken.json"
        json_path.write_text('[{"src segment": "x"}]')
        md5 = None
        expected = "example 1: expected the fields src segment, ref segment, expected, rule, document id, segment " \
                   "id; missing ref segment"
    (tmp_path / "inputs").write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    result = subprocess.run([sys.executable, "-m", "docnmt.corpora.ctxpro", "--name", CTXPRO_DEV, "--json",
                             str(json_path), "--inputs", str(tmp_path / "inputs"), "--md5", md5 or "none",
                             "--src-lang", pair[0], "--tgt-lang", pair[1], "--out", str(out), "--prefix", "x"],
                            capture_output=True, text=True, env=tool_env())
    assert result.returncode == 1 and result.stderr.count("\n") == 1, result.stderr
    assert expected in result.stderr
    assert not out.exists() or not any(out.iterdir()), "no half-written outputs"


@pytest.mark.workflow
@pytest.mark.parametrize("source", ["mirror", "local", "own"])
def test_the_workflow_fetches_checks_and_builds_a_named_set(release, tmp_path, source):
    """ctxpro_download through a mirror (the registry's md5, the inputs in the download lock), ctxpro.local's copy
    read where it is, or a set of one's own (ctxpro.sets: its files and md5); then ctxpro_set_<task> builds the
    documents, the context bounded by the config."""
    import yaml

    from helpers import REPO, run_snakemake

    config = tmp_path / "ctxpro.yaml"
    name = CTXPRO_DEV if source != "own" else "en-de/auxiliary/mine"
    settings = {"ctxpro": {"max_sentences": 3, "max_words": 40}, "task_settings": {"demo": {"ctxpro": [name]}}}
    if source == "mirror":
        settings["mirror"] = str(release.parents[5])
    elif source == "local":
        settings["ctxpro"]["local"] = str(release)
    else:
        settings["ctxpro"]["sets"] = {name: {
            "json": str(release / "evalsets" / f"{CTXPRO_DEV_FILE}.json"), "inputs": str(release / "inputs" / CTXPRO_DEV_FILE),
            "md5": "2c27b954eff6151f476aedc2ac6b0c82", "info": "ctxpro's en-de auxiliary dev set, as one's own"}}
    config.write_text(yaml.safe_dump(settings))
    evalset = ctxpro.evalset_name(name)
    target = f"data/demo/ctxpro/{evalset}.examples.jsonl"
    run_snakemake(tmp_path / "work", target, "--cores", "1", "--configfile", str(REPO / "config.yaml"), str(config))
    work = tmp_path / "work"
    report = json.loads((work / f"data/demo/ctxpro/{evalset}.report.json").read_text())
    assert report["name"] == name and report["md5"] == "2c27b954eff6151f476aedc2ac6b0c82" and report["md5_checked"]
    assert report["max_sentences"] == 3 and report["max_words"] == 40 and report["examples"] == 615
    assert 0 < report["context_sentences"] < 3 * 615
    downloaded = (work / "downloads/ctxpro").exists()
    assert downloaded == (source == "mirror")
    if downloaded:
        lock = json.loads((work / "results/download-checksums.lock.json").read_text())
        url = "https://github.com/rewicks/ctxpro/raw/main/release/inputs/" + CTXPRO_DEV_FILE
        assert list(lock[f"ctxpro/{CTXPRO_DEV_FILE}"]) == [url], "under the file's name, then its real URL"


@pytest.mark.workflow
def test_the_data_pages_task_block_plans_the_sets_downloads_decodes_and_scores(tmp_path):
    """docs/data.md's block, merged over config.yaml as written: TED's three en-it sets, each downloaded (JSON and
    inputs), built, decoded by every strategy but cheating and scored."""
    import re

    from helpers import REPO, doc_blocks, run_snakemake

    (block,) = doc_blocks(REPO / "docs/data.md", "yaml", "## ctxpro", "**A task names its sets**")
    (tmp_path / "block.yaml").write_text(block)
    out = run_snakemake(tmp_path, "-n", "--configfile", str(REPO / "config.yaml"), str(tmp_path / "block.yaml"),
                        "--config", "tasks=[ted]").stdout
    counts = dict(re.findall(r"^(\w+)\s+(\d+)$", out, re.M))
    assert counts["ctxpro_download"] == "6" and counts["ctxpro_set_ted"] == "3" and counts["ctxpro_accuracy"] == "3"
    assert "decode_cheating" in counts and "results/ted/decode/ctxpro-gender-test/cheating" not in out
    for name in ("gender", "formality", "auxiliary"):
        assert f"https://github.com/rewicks/ctxpro/raw/main/release/inputs/{name}.opensubtitles.en-it.test" not in out
        assert f"results/ted/scores/ctxpro-{name}-test/ctxpro.json" in out

"""The TED task's data as a user meets it in 2026, through the workflow's rules on the loopback server: WIT3's
training archive answers 404 and the next location serves it; the test set is the user's own copy of Google
Drive's archive (``sources.iwslt17-mted-test.local``), with its members in archives inside it; where every location
of a source fails, the run stops with one line per location and nothing is left behind.

The fixtures are the real formats (tests/realformat.py); every location is a loopback address.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import yaml
from loopback import LoopbackServer

import realformat
from docnmt import layout
from docnmt.corpora.corpus import Document
from helpers import run_snakemake

pytestmark = pytest.mark.workflow

WIT3 = "wit3.fbk.eu/archive/2017-01-trnmted/texts/DeEnItNlRo/DeEnItNlRo/DeEnItNlRo-DeEnItNlRo.tgz"
HF = "huggingface.co/datasets/iwslt2017/resolve/ebd7c60/DeEnItNlRo-DeEnItNlRo.tgz"
CORPUS = [layout.corpus_file("ted", split, ext) for split in ("train", "valid", "test") for ext in ("en", "it", "docids")]


def talks(n_docs: int, n_sents: int, start: int) -> list[Document]:
    return [Document(f"ted-{1000 + d}", [f"Talk {d}, sentence {i}: science & art." for i in range(n_sents)],
                     [f"Discorso {d}, frase {i}: scienza e arte." for i in range(n_sents)])
            for d in range(start, start + n_docs)]


FIXTURE = {"train": talks(3, 4, 0), "dev2010": talks(1, 3, 10), "tst2010": talks(1, 2, 11), "tst2017": talks(2, 3, 20)}


#: The test set's members, found by the inner archives' names alone (config.yaml's name their folders too).
TEST_MEMBERS = {"src": ["**/en-it.tgz", "**/IWSLT17.TED.tst2017.mltlng.en-it.en.xml"],
                "ref": ["**/it-en.tgz", "**/IWSLT17.TED.tst2017.mltlng.it-en.it.xml"]}


def ted_config(tmp: Path, server: LoopbackServer, own_test: Path | None, train_sha256: str, test_location: str,
               test_filename: str = "mted-test.tgz") -> Path:
    config = {
        "tasks": ["ted"],
        "download_retries": 0,
        "task_settings": {"ted": {"ctxpro": []}},
        "sources": {
            "iwslt17-trnmted": {"url": server.url_for(WIT3), "sha256": train_sha256, "size": None,
                                "page": server.url_for("wit3.fbk.eu/2017-01"), "mirrors": [server.url_for(HF)]},
            "iwslt17-mted-test": {"url": server.url_for(test_location), "filename": test_filename,
                                  "members": TEST_MEMBERS},
        },
    }
    path = tmp / "ted.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def local_block() -> str:
    """docs/data.md's two lines for the TED test set brought by hand (its section "A file of your own")."""
    from helpers import REPO, doc_blocks

    (block,) = doc_blocks(REPO / "docs/data.md", "yaml", "### A file of your own")
    return block


@pytest.fixture(scope="module")
def ted_run(tmp_path_factory):
    """The TED corpus from a dead first location, a live second one, and the user's own test archive: docs/data.md's
    block as written (its /data/ a folder here), over a config with the fixtures' locations."""
    folder = tmp_path_factory.mktemp("ted locations")
    root, workdir = folder / "served", folder / "work dir"
    workdir.mkdir()
    train = realformat.iwslt17_train_tgz(root / HF, FIXTURE["train"], FIXTURE["dev2010"], FIXTURE["tst2010"])
    block = local_block()
    assert block.count("/data/") == 1 and "local: /data/wit3/2017-01-mted-test.tgz" in block
    own_test = realformat.iwslt17_mted_test_drive_tgz(folder / "data/wit3/2017-01-mted-test.tgz", FIXTURE["tst2017"])
    (workdir / "mine.yaml").write_text(block.replace("/data/", f"{folder}/data/"), encoding="utf-8")
    with LoopbackServer(root) as server:
        config = ted_config(workdir, server, None, hashlib.sha256(train.read_bytes()).hexdigest(), "drive/x.tgz")
        run_snakemake(workdir, *CORPUS, "--cores", "2", "--configfile", str(config), str(workdir / "mine.yaml"))
        requests, url = server.requests, server.url
    return workdir, requests, own_test, url


def lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def test_the_corpus_is_read_from_the_second_location_and_the_users_own_test_archive(ted_run):
    workdir, requests, _, _ = ted_run
    corpus = workdir / "data/ted/corpus"
    expected = {"train": FIXTURE["train"], "valid": FIXTURE["dev2010"] + FIXTURE["tst2010"], "test": FIXTURE["tst2017"]}
    for split, docs in expected.items():
        assert lines(corpus / f"{split}.en") == [s for d in docs for s in d.src], split
        assert lines(corpus / f"{split}.it") == [t for d in docs for t in d.tgt], split
    assert requests == {f"/{WIT3}": 1, f"/{HF}": 1}, "the test set's location is never asked: local replaces it"


def test_the_download_log_names_both_locations_with_their_outcomes(ted_run):
    workdir, _, _, url = ted_run
    log = (workdir / "logs/downloads/iwslt17-trnmted/DeEnItNlRo-DeEnItNlRo.tgz.log").read_text()
    assert f"location 1/2: {url}/{WIT3}\n" in log
    assert "location 1/2: failed: expected HTTP 200, found HTTP 404 File not found (not retried)" in log
    assert f"location 2/2: {url}/{HF}\n" in log and "sha256 matches the published checksum" in log
    assert "location 2/2: served" in log


def test_the_lock_records_the_second_location_and_the_users_file(ted_run):
    workdir, _, own_test, url = ted_run
    lock = json.loads((workdir / "results/download-checksums.lock.json").read_text())
    assert list(lock["iwslt17-trnmted"]) == [f"{url}/{HF}"]
    assert lock["iwslt17-mted-test"] == {f"local:{own_test.resolve()}": {
        "sha256": hashlib.sha256(own_test.read_bytes()).hexdigest(), "size": own_test.stat().st_size}}
    download = workdir / layout.download_file("iwslt17-mted-test", "mted-test.tgz")
    assert download.is_symlink() and download.resolve() == own_test.resolve(), "nothing copied"
    extracted = workdir / layout.extracted_dir("iwslt17-mted-test")
    assert sorted(p.name for p in extracted.iterdir() if not p.name.startswith(".")) == ["IWSLT17.TED.tst2017.mltlng.en-it.en.xml",
                                                            "IWSLT17.TED.tst2017.mltlng.it-en.it.xml"]


def test_every_location_failing_stops_the_run_with_a_line_each_and_leaves_nothing(tmp_path):
    root, workdir = tmp_path / "served", tmp_path / "work"
    root.mkdir()
    workdir.mkdir()
    with LoopbackServer(root) as server:
        config = ted_config(workdir, server, None, "0" * 64, "drive/gone.tgz", test_filename="tst2017.mltlng.tgz")
        target = layout.download_file("iwslt17-mted-test", "tst2017.mltlng.tgz")
        result = run_snakemake(workdir, target, "--cores", "1", "--configfile", str(config), check=False)
        url = server.url
    assert result.returncode != 0
    log = (workdir / "logs/downloads/iwslt17-mted-test/tst2017.mltlng.tgz.log").read_text()
    error = log[log.index("error: "):].splitlines()
    assert error[0].endswith("expected iwslt17-mted-test's file from one of its 1 location(s), found none serving it:")
    assert error[1] == f"  {url}/drive/gone.tgz: expected HTTP 200, found HTTP 404 File not found (not retried)"
    assert error[2].startswith("  what to do: get the file tst2017.mltlng.tgz from https://wit3.fbk.eu/2017-01-b "
                               "by hand and set sources.iwslt17-mted-test.local to its path")
    downloads = workdir / "downloads/iwslt17-mted-test"
    assert not downloads.exists() or sorted(p.name for p in downloads.rglob("*")) == [], \
        sorted(p.name for p in downloads.rglob("*"))


def test_the_data_pages_source_declaration_reads_the_drive_archive_as_written(tmp_path):
    """docs/data.md's declaration of the TED test set (its section on locations), merged over config.yaml as
    written: a valid config whose source finds the en-it member inside the Drive archive's inner en-it.tgz."""
    import yaml

    from docnmt.config import WORKFLOW_CONFIG, merge, read, validate
    from docnmt.corpora.archives import extract_specs
    from docnmt.workflow import corpora
    from helpers import REPO, doc_blocks

    block = doc_blocks(REPO / "docs/data.md", "yaml", "### A source's locations, checksums and the lock")[0]
    assert block.startswith("sources:\n  iwslt17-mted-test:\n    url: gdrive:")
    config = validate(merge(read(WORKFLOW_CONFIG), yaml.safe_load(block)))
    assert corpora.member_path(config, "iwslt17-mted-test", "src") == \
        "downloads/iwslt17-mted-test/extracted/IWSLT17.TED.tst2017.mltlng.en-it.en.xml"
    archive = realformat.iwslt17_mted_test_drive_tgz(tmp_path / "2017-01-mted-test.tgz", FIXTURE["tst2017"])
    declared = corpora.declared_source(config, "iwslt17-mted-test")
    assert sorted(extract_specs(archive, tmp_path / "extracted", declared.specs_for(None))) == [
        "IWSLT17.TED.tst2017.mltlng.en-it.en.xml", "IWSLT17.TED.tst2017.mltlng.it-en.it.xml"]
    assert "Talk 21, sentence 2" in (tmp_path / "extracted/IWSLT17.TED.tst2017.mltlng.en-it.en.xml").read_text()


"""The real-corpus data rules end to end: download from a loopback mirror, verify, extract,
parse, ContraPro with context, preprocess, binarize, and the data-statistics table.

The fixtures are tiny files in the exact real formats (tests/realformat.py),
laid out under host-named folders as a mirror holds them, and served over
127.0.0.1; the workflow's config points `mirror:` at the server. The config
also sets what a user of other copies of the sources would: the archive
members a parser reads (`sources.<source>.members`), a source's documented
other locations (`mirrors`) and where its checksum is published
(`checksum_source`), and BPE's minimum pair frequency.
"""

import csv
import hashlib
import json
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml

import realformat
from helpers import REPO, run_snakemake
from docnmt.corpora.corpus import Document, read_split
from loopback import LoopbackServer

pytestmark = pytest.mark.workflow
#: The tests that read real_run (the three tasks' data stage from a loopback mirror, over a minute here) are
#: ``full`` (tests/conftest.py); make test downloads from a mirror in test_download.py and tests/test_any_path.py.
FULL_FIXTURES = {"real_run"}

CONFIG = yaml.safe_load((REPO / "config.yaml").read_text())
SOURCES = CONFIG["sources"]


def en_de_docs(prefix, n_docs, n_sents, start=0):
    """Documents with entities, quotes and pronouns, in English and German."""
    docs = []
    for d in range(start, start + n_docs):
        src, tgt = [], []
        for i in range(n_sents):
            src.append(f"Report {d}, line {i}: Tom & Jerry said \"it's fine\" about the lamp.")
            tgt.append(f"Bericht {d}, Zeile {i}: Tom & Jerry sagten, \"sie ist gut\" über die Lampe.")
        docs.append(Document(f"{prefix}{d}", src, tgt))
    return docs


def en_it_docs(n_docs, n_sents, start):
    return [
        Document(f"ted-{1000 + d}", [f"Talk {d} sentence {i}: we <3 science & art." for i in range(n_sents)],
                 [f"Discorso {d} frase {i}: amiamo la scienza e l'arte." for i in range(n_sents)])
        for d in range(start, start + n_docs)
    ]


def os_docs():
    docs = []
    for d in range(14):
        n = 4 + d % 3
        docs.append(Document(
            realformat.os_docid(2000 + d, 100 + d, 5000 + d),
            [f"Movie {d}, line {i}: where is it? Do you have it?" for i in range(n)],
            [f"Film {d}, Zeile {i}: wo ist er? Hast du ihn?" for i in range(n)],
        ))
    return docs


FIXTURE = {
    "nc": en_de_docs("nc", 6, 5),
    "nt15": en_de_docs("nt15-", 2, 3, start=10),
    "nt18": en_de_docs("nt18-", 3, 2, start=20),
    # what the WMT18 archive holds under config.yaml's member paths: the config names other members (WMT18_MEMBERS)
    "nt18_other": en_de_docs("other-", 2, 2, start=40),
    "ted_train": en_it_docs(4, 6, 0),
    "dev2010": en_it_docs(1, 3, 10),
    "tst2010": en_it_docs(1, 2, 11),
    "tst2017": en_it_docs(2, 4, 20),
    "os": os_docs(),
}
#: ContraPro examples: (OS document index, 1-based segment id). The first is at the
#: start of its document (no left context), the second at the end (no right context).
CONTRAPRO_AT = [(12, 1), (13, 5), (12, 3)]
#: sources.wmt18-test.members of the test's config: the WMT18 archive holds newstest2018 (FIXTURE["nt18"]) under these
#: paths too, and other documents under config.yaml's, so the news test split shows which members were read.
WMT18_MEMBERS = {"src": "test-v2/newstest2018-ende-src.en.sgm", "ref": "test-v2/newstest2018-ende-ref.de.sgm"}
#: sources.iwslt17-trnmted.mirrors of the test's config, a path of the loopback server: a further location, never
#: fetched while the first serves the file (through `mirror:`).
DOCUMENTED_MIRROR = "/elsewhere.example.org/iwslt2017/DeEnItNlRo-DeEnItNlRo.tgz"
#: Where the loopback server serves the TED test set's Drive archive (config.yaml's url is gdrive:, which no mirror
#: serves): the test's config makes it the source's url, so `mirror:`'s copy of it answers 404 first.
DRIVE_ARCHIVE = "drive/2017-01-mted-test.tgz"
#: preprocess.bpe_min_frequency of the test's config (config.yaml: 2): these corpora repeat their words, so that BPE
#: learning stops earlier only where a pair occurs fewer than 30 times.
BPE_MIN_FREQUENCY = 30


def contrapro_json(docs):
    examples = []
    for index, segment in CONTRAPRO_AT:
        doc = docs[index]
        de_file = doc.docid[len("de/"):].removesuffix(".gz")
        ref = doc.tgt[segment - 1]
        examples.append({
            "document id": de_file, "segment id": segment, "src segment": doc.src[segment - 1], "ref segment": ref,
            "src pronoun": "it", "ref pronoun": "er", "ante distance": 1, "intrasegmental": False, "corpus": "OpenSubtitles",
            "errors": [{"contrastive": ref.replace(" er?", " sie?"), "replacement": "sie", "replacement gender": "Fem"},
                       {"contrastive": ref.replace(" er?", " es?"), "replacement": "es", "replacement gender": "Neut"}],
        })
    return examples


def mirror_path(root: Path, name: str) -> Path:
    if SOURCES[name]["url"].startswith("gdrive:"):
        path = root / DRIVE_ARCHIVE
        path.parent.mkdir(parents=True, exist_ok=True)
        return path
    url = urlsplit(SOURCES[name]["url"])
    path = root / url.netloc / url.path.lstrip("/")
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def build_mirror(root: Path) -> None:
    realformat.news_commentary_tsv_gz(mirror_path(root, "news-commentary-v14"), FIXTURE["nc"])
    realformat.wmt_test_tgz(mirror_path(root, "wmt15-test"), 2015, FIXTURE["nt15"])
    realformat.wmt_test_tgz(mirror_path(root, "wmt18-test"), 2018, FIXTURE["nt18_other"], extra={
        WMT18_MEMBERS[side]: realformat.wmt_sgm_text(FIXTURE["nt18"], side, "newstest2018") for side in ("src", "ref")})
    realformat.iwslt17_train_tgz(mirror_path(root, "iwslt17-trnmted"), FIXTURE["ted_train"], FIXTURE["dev2010"], FIXTURE["tst2010"])
    realformat.iwslt17_mted_test_drive_tgz(mirror_path(root, "iwslt17-mted-test"), FIXTURE["tst2017"])
    realformat.opus_moses_zip(mirror_path(root, "opensubtitles2018-de-en"), FIXTURE["os"], naming="OpenSubtitles2018")
    mirror_path(root, "contrapro").write_text(json.dumps(contrapro_json(FIXTURE["os"]), indent=1), encoding="utf-8")


def loopback_config(tmp: Path, mirror_url: str, root: Path, wrong_md5: str | None = None) -> Path:
    """A config over the shipped one: the loopback mirror, small BPE and OS splits, the fixtures' own digests in place
    of the real published ones, the WMT18 members of WMT18_MEMBERS, a documented mirror, BPE_MIN_FREQUENCY."""
    sources = {}
    for name, entry in SOURCES.items():
        published = {algo: entry.get(algo) for algo in ("sha256", "md5") if entry.get(algo)}
        digests = {}
        for algo in published:
            digests[algo] = hashlib.new(algo, mirror_path(root, name).read_bytes()).hexdigest()
        if entry.get("size"):
            digests["size"] = mirror_path(root, name).stat().st_size
        sources[name] = digests
    if wrong_md5:
        sources["wmt18-test"]["md5"] = wrong_md5
    sources["wmt18-test"]["members"] = WMT18_MEMBERS
    sources["news-commentary-v14"]["checksum_source"] = "the fixture's own sha256 (tests/realformat.py)"
    for entry in sources.values():  # no further location but the loopback server's
        entry["mirrors"] = []
    sources["iwslt17-trnmted"]["mirrors"] = [mirror_url + DOCUMENTED_MIRROR]
    sources["iwslt17-mted-test"]["url"] = f"{mirror_url}/{DRIVE_ARCHIVE}"
    config = {
        "tasks": ["news", "ted", "os"],
        "mirror": mirror_url,
        "download_retries": 1,
        # one shard: this run checks the real formats; the scatter and gather run in the demo (4 shards) and the
        # test-size demo (2); two shards here cost 11 s of CPU more
        "preprocess": {"shards": 1, "bpe_min_frequency": BPE_MIN_FREQUENCY},
        "sources": sources,
        "task_settings": {
            "news": {"bpe_merges": 200},
            "ted": {"bpe_merges": 200},
            "os": {"bpe_merges": 200, "corpus": {"type": "os", "valid_sentences": 8, "valid_docs": 2,
                                                 "test_sentences": 10, "test_docs": 2}},
        },
    }
    path = tmp / "loopback.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def real_run(tmp_path_factory):
    """The data stage of the three real tasks, downloaded from the loopback mirror."""
    folder = tmp_path_factory.mktemp("real-corpora")
    root, workdir = folder / "mirror", folder / "workdir"
    root.mkdir()
    workdir.mkdir()
    build_mirror(root)
    with LoopbackServer(root) as server:
        config = loopback_config(workdir, server.url, root)
        run_snakemake(workdir, "data", "--cores", "2", "--configfile", str(config))
        requests = server.requests
    return workdir, requests


def lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def test_every_source_is_downloaded_once_from_the_mirror(real_run):
    _, requests = real_run
    for name, entry in SOURCES.items():
        if entry["url"].startswith("gdrive:"):
            continue  # no mirror serves a Drive file: below
        url = urlsplit(entry["url"])
        key = f"/{url.netloc}{url.path}"
        assert requests.get(key) == 1, f"{name}: expected one request for {key}, got {requests}"
    assert requests.get(f"/{DRIVE_ARCHIVE}") == 1, "the TED test set's archive from its location after the mirror's"
    assert [key for key in requests if key.endswith(DRIVE_ARCHIVE) and key != f"/{DRIVE_ARCHIVE}"], \
        "the mirror's copy of it was asked first (and answered 404)"


def test_sources_without_published_checksum_are_recorded_in_the_lock(real_run):
    workdir, _ = real_run
    lock = json.loads((workdir / CONFIG["download_lock"]).read_text())
    for name, entry in SOURCES.items():
        located = entry["url"] if not entry["url"].startswith("gdrive:") else None  # the test's own url: below
        assert len(lock[name]) == 1 and (located is None or located in lock[name]), f"{name}: under its location"
        assert all(len(record["sha256"]) == 64 for record in lock[name].values())


def test_news_splits_match_the_fixture(real_run):
    workdir, _ = real_run
    corpus = workdir / "data/news/corpus"
    for split, docs in (("train", FIXTURE["nc"]), ("valid", FIXTURE["nt15"]), ("test", FIXTURE["nt18"])):
        assert lines(corpus / f"{split}.en") == [s for d in docs for s in d.src], f"news {split}.en"
        assert lines(corpus / f"{split}.de") == [t for d in docs for t in d.tgt], f"news {split}.de: de column, entities unescaped"
        assert len(set(lines(corpus / f"{split}.docids"))) == len(docs), f"news {split}: one id per document"


def test_ted_splits_match_the_fixture(real_run):
    workdir, _ = real_run
    corpus = workdir / "data/ted/corpus"
    expected = {"train": FIXTURE["ted_train"], "valid": FIXTURE["dev2010"] + FIXTURE["tst2010"], "test": FIXTURE["tst2017"]}
    for split, docs in expected.items():
        assert lines(corpus / f"{split}.en") == [s for d in docs for s in d.src], f"ted {split}.en"
        assert lines(corpus / f"{split}.it") == [t for d in docs for t in d.tgt], f"ted {split}.it"


def test_os_split_sizes_and_contrapro_segments_left_out_of_training(real_run):
    """The default removal (segments): each example's line and k-1 = 2 lines on either side leave train.

    Film 12 (4 lines) has examples at lines 1 and 3: every line goes. Film 13 (5 lines) has one at
    line 5: lines 3-5 go, lines 1-2 stay in train as the piece ``{docid}@1``.
    """
    workdir, _ = real_run
    corpus = workdir / "data/os/corpus"
    films = [FIXTURE["os"][12], FIXTURE["os"][13]]
    split_ids = {split: set(lines(corpus / f"{split}.docids")) for split in ("train", "valid", "test", "contrapro_docs")}
    assert len(split_ids["valid"]) == 2 and len(split_ids["test"]) == 2
    assert split_ids["contrapro_docs"] == {d.docid for d in films}
    assert not (split_ids["valid"] | split_ids["test"]) & split_ids["contrapro_docs"]
    train = read_split(corpus / "train.en", corpus / "train.de", corpus / "train.docids")
    pieces = [d for d in train if d.docid.split("@")[0] in split_ids["contrapro_docs"]]
    assert [(d.docid, d.src) for d in pieces] == [(f"{films[1].docid}@1", films[1].src[:2])]
    others = {d.docid for d in FIXTURE["os"]} - split_ids["contrapro_docs"]
    assert split_ids["train"] | split_ids["valid"] | split_ids["test"] == others | {f"{films[1].docid}@1"}
    report = json.loads((corpus / "prepare.report.json").read_text())
    cut = report["contrapro_removed_from_train"]
    assert (cut["removal"], cut["lines"], cut["films_touched"], cut["examples_found"]) == ("segments", 7, 2, 3)


def test_contrapro_gets_left_and_right_context(real_run):
    workdir, _ = real_run
    for task in ("news", "os"):
        folder = workdir / f"data/{task}/contrapro"
        examples = [json.loads(line) for line in lines(folder / "contrapro.examples.jsonl")]
        src = lines(folder / "contrapro.en")
        assert len(examples) == len(CONTRAPRO_AT)
        for example, (index, segment) in zip(examples, CONTRAPRO_AT):
            doc = FIXTURE["os"][index]
            assert src[example["line"]] == doc.src[segment - 1]
            assert example["left"] == min(2, segment - 1), "k-1=2 sentences of left context, fewer at a document start"
            assert example["right"] == min(2, len(doc) - segment), "k-1=2 of right context, fewer at a document end"


def test_the_archive_members_read_are_those_the_config_names(real_run):
    """sources.wmt18-test.members: only the members the config names are unpacked, and the news test split is theirs
    (config.yaml's member paths hold other documents in this archive)."""
    from docnmt import layout

    workdir, _ = real_run
    extracted = workdir / layout.extracted_dir("wmt18-test")
    unpacked = [p.relative_to(extracted).as_posix() for p in extracted.rglob("*") if p.is_file()]
    assert sorted(name for name in unpacked if not name.startswith(".snakemake")) == sorted(WMT18_MEMBERS.values())
    test_en = lines(workdir / "data/news/corpus/test.en")
    assert test_en == [s for d in FIXTURE["nt18"] for s in d.src]
    assert not set(test_en) & {s for d in FIXTURE["nt18_other"] for s in d.src}


def test_mirrors_and_checksum_source_document_a_source_and_change_no_download(real_run):
    """sources.<source>.mirrors are tried only where the locations before them fail, and .checksum_source is
    documentation: the further location is never contacted while the first serves the file, and the source with a
    changed checksum_source is fetched from its url through `mirror:` and verified against its sha256 as before."""
    workdir, requests = real_run
    url = urlsplit(SOURCES["iwslt17-trnmted"]["url"])
    assert DOCUMENTED_MIRROR not in requests and requests.get(f"/{url.netloc}{url.path}") == 1, requests
    log = (workdir / "logs/downloads/news-commentary-v14/news-commentary-v14.de-en.tsv.gz.log").read_text()
    assert "sha256 matches the published checksum" in log, log


def test_bpe_learning_stops_at_the_configured_minimum_pair_frequency(real_run, tmp_path):
    """preprocess.bpe_min_frequency: each task's codes are subword-nmt's with that minimum frequency (its 200 merges
    asked), fewer merges in all than with config.yaml's 2."""
    from docnmt import layout
    from docnmt.preprocess.bpe import learn

    workdir, _ = real_run
    merges = {2: 0, BPE_MIN_FREQUENCY: 0}
    for task, langs in (("news", ("en", "de")), ("ted", ("en", "it")), ("os", ("en", "de"))):
        inputs = [workdir / layout.processed_file(task, "tok", "train", lang) for lang in langs]
        for frequency in merges:
            codes = tmp_path / f"{task}.{frequency}.codes"
            learn(inputs, codes, merges=200, min_frequency=frequency)
            merges[frequency] += len(codes.read_text(encoding="utf-8").splitlines())
        assert (workdir / layout.bpe_codes(task)).read_text(encoding="utf-8") == codes.read_text(encoding="utf-8"), task
    assert merges[BPE_MIN_FREQUENCY] < merges[2], merges


def test_statistics_table_counts(real_run):
    workdir, _ = real_run
    with open(workdir / "results/tables/news+ted+os/data_statistics.csv", encoding="utf-8") as handle:
        rows = {(r["task"], r["dataset"]): (int(r["sentences"]), int(r["documents"])) for r in csv.DictReader(handle)}
    assert rows[("news", "train")] == (30, 6)
    assert rows[("news", "test")] == (6, 3)
    assert rows[("ted", "valid")] == (5, 2)
    assert rows[("news", "ContraPro")] == (3, 3) and rows[("os", "ContraPro")] == (3, 3)
    assert "| news | train |" in (workdir / "results/tables/news+ted+os/data_statistics.md").read_text()


def test_all_three_tasks_are_binarized(real_run):
    workdir, _ = real_run
    for task in ("news", "ted", "os"):
        for level in ("sentence", "document"):
            manifest = json.loads((workdir / f"data/{task}/bin/{level}/manifest.json").read_text())
            assert manifest["examples"]["train"] > 0, f"{task}/{level}"


def test_a_corrupted_download_fails_on_its_checksum(tmp_path):
    root = tmp_path / "mirror"
    build_mirror(root)
    workdir = tmp_path / "work"
    workdir.mkdir()
    with LoopbackServer(root) as server:
        config = loopback_config(workdir, server.url, root, wrong_md5="0" * 32)
        result = run_snakemake(workdir, "downloads/wmt18-test/test.tgz", "--cores", "1", "--configfile", str(config), check=False)
    assert result.returncode != 0
    log = (workdir / "logs/downloads/wmt18-test/test.tgz.log").read_text()
    assert "checksum mismatch" in log and "0" * 32 in log, log
    assert not (workdir / "downloads/wmt18-test/test.tgz").exists(), "a file failing its checksum must not be kept"
    assert not list((workdir / "downloads/wmt18-test").glob("*.tmp*")), "no temporary file may be left"

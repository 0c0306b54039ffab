"""docnmt-check-sources: every location of the configured tasks' sources asked for its headers, on the loopback server
(live, 404, refused, a size that differs from the lock's record, HEAD refused, a Drive file through gdown, a mirror's
copy, a local file)."""

from __future__ import annotations

import json
import socket

import pytest
import yaml
from loopback import LoopbackServer

from docnmt.corpora import gdrive
from docnmt.corpora.probe import probe_source, table
from docnmt.corpora.sources import source_from_config
from docnmt.workflow import source_check

pytestmark = pytest.mark.usefixtures("no_outside_network")


@pytest.fixture
def server(tmp_path):
    with LoopbackServer(tmp_path / "served") as running:
        yield running


def serve(server, relpath: str, data: bytes) -> str:
    target = server.root / relpath
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    return server.url_for(relpath)


def refused_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}/a.tgz"


def test_each_location_is_reported_with_its_status_and_size_against_the_lock(server, monkeypatch):
    monkeypatch.setattr(gdrive, "DRIVE_URL", server.url + "/uc/{id}")
    live = serve(server, "live/a.tgz", b"12345")
    head_refused = serve(server, "nohead/a.tgz", b"123456")
    server.refuse_head("/nohead/a.tgz")
    serve(server, "uc/1hIryKXS4iR9Wv_yiZv9AlgLGnOnKx2_Z", b"drive!")
    dead, refused = server.url_for("dead/a.tgz"), refused_url()
    source = source_from_config("s", {"url": dead, "mirrors": [refused, live, head_refused,
                                                               "gdrive:1hIryKXS4iR9Wv_yiZv9AlgLGnOnKx2_Z"]})
    lock = {"s": {live: {"sha256": "0" * 64, "size": 5}, head_refused: {"sha256": "0" * 64, "size": 7}}}
    rows = probe_source(source, lock=lock, timeout=5)
    found = [(r.kind, r.location, r.live, r.status, r.size, r.size_check) for r in rows]
    assert found == [
        ("url", dead, False, "HTTP 404 File not found", None, "-"),
        ("url", refused, False, "refused", None, "-"),
        ("url", live, True, "HTTP 200 (HEAD)", 5, "matches"),
        ("url", head_refused, True, "HTTP 200 (GET)", 6, "differs"),
        ("gdrive", "gdrive:1hIryKXS4iR9Wv_yiZv9AlgLGnOnKx2_Z", True, "resolved by gdown", 6, "-"),
    ]
    assert server.count("/live/a.tgz") == 1 and server.count("/nohead/a.tgz") == 2, "a HEAD, then a GET where refused"
    printed = table(rows).splitlines()
    assert printed[0].split() == ["source", "kind", "location", "status", "size", "recorded", "size", "check"]
    assert "dead: HTTP 404 File not found" in printed[2] and "live: HTTP 200 (GET)" in printed[5]


def test_a_mirror_and_a_local_file_are_reported_as_such(server, tmp_path):
    serve(server, "data.statmt.org/wmt18/test.tgz", b"mirrored")
    own = tmp_path / "mine.tgz"
    own.write_bytes(b"by hand")
    source = source_from_config("s", {"url": "https://data.statmt.org/wmt18/test.tgz", "local": str(own)})
    rows = probe_source(source, mirror=server.url, timeout=5)
    assert [(r.kind, r.live, r.status, r.size) for r in rows[:2]] == [("local", True, "present", 7),
                                                                      ("mirror", True, "HTTP 200 (HEAD)", 8)]
    assert rows[1].location == f"{server.url}/data.statmt.org/wmt18/test.tgz"
    assert rows[2].kind == "url" and not rows[2].live, "the real host, unreachable from the tests"


def config_file(tmp_path, sources: dict) -> str:
    path = tmp_path / "sources.yaml"
    path.write_text(yaml.safe_dump({"tasks": ["ted"], "sources": sources, "task_settings": {"ted": {"ctxpro": []}},
                                    "download_lock": str(tmp_path / "lock.json")}), encoding="utf-8")
    return str(path)


def test_the_command_prints_the_table_and_exits_1_where_a_source_has_no_live_location(server, tmp_path, capsys):
    train = serve(server, "hf/DeEnItNlRo-DeEnItNlRo.tgz", b"train")
    test = serve(server, "drive/2017-01-mted-test.tgz", b"test")
    (tmp_path / "lock.json").write_text(json.dumps({"iwslt17-trnmted": {train: {"sha256": "0" * 64, "size": 9}}}))
    sources = {"iwslt17-trnmted": {"url": server.url_for("wit3/gone.tgz"), "sha256": None, "size": None,
                                   "mirrors": [train]},
               "iwslt17-mted-test": {"url": test, "mirrors": []}}
    assert source_check.main(["--config", config_file(tmp_path, sources), "--timeout", "5"]) == 0
    out = capsys.readouterr().out.splitlines()
    rows = {line.split()[2]: line for line in out[2:-1]}
    assert "dead: HTTP 404" in rows[server.url_for("wit3/gone.tgz")]
    assert rows[train].split()[-1] == "differs", "5 bytes announced, 9 recorded in the lock"
    assert "live: HTTP 200 (HEAD)" in rows[test] and out[-1].startswith("every source has a live location")

    sources["iwslt17-mted-test"] = {"url": server.url_for("drive/moved.tgz"), "mirrors": [refused_url()]}
    assert source_check.main(["--config", config_file(tmp_path, sources), "--tasks", "ted", "--timeout", "5"]) == 1
    captured = capsys.readouterr()
    assert "dead: refused" in captured.out
    assert captured.err.strip() == 'no live location: iwslt17-mted-test (docs/data.md, "A file of your own")'


def test_the_lock_named_on_the_command_line_gives_the_recorded_sizes(server, tmp_path, capsys):
    test = serve(server, "drive/2017-01-mted-test.tgz", b"test")
    lock = tmp_path / "elsewhere.lock.json"
    lock.write_text(json.dumps({"iwslt17-mted-test": {test: {"sha256": "0" * 64, "size": 4}}}))
    sources = {"iwslt17-trnmted": {"url": test, "sha256": None, "size": None, "mirrors": []},
               "iwslt17-mted-test": {"url": test, "mirrors": []}}
    assert source_check.main(["--config", config_file(tmp_path, sources), "--lock", str(lock)]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()[2:-1]]
    assert [(row[0], row[-3], row[-2], row[-1]) for row in rows] == [("iwslt17-trnmted", "4", "-", "-"),
                                                                     ("iwslt17-mted-test", "4", "4", "matches")]


def test_an_unknown_task_is_a_usage_error(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        source_check.main(["--tasks", "nope"])
    assert exit_.value.code == 2 and "--tasks: unknown task 'nope'" in capsys.readouterr().err


def test_the_ctxpro_sets_files_are_sources_too():
    from docnmt.config import load_workflow

    names = [s.name for s in source_check.configured_sources(load_workflow(), ["ted"])]
    sets = [f"ctxpro/{phenomenon}.opensubtitles.en-it.test{ext}" for phenomenon in ("gender", "formality", "auxiliary")
            for ext in (".json", "")]
    assert names == ["iwslt17-trnmted", "iwslt17-mted-test", *sets]


def test_a_task_without_downloads_says_so(capsys):
    assert source_check.main(["--tasks", "demo"]) == 0
    assert capsys.readouterr().out.strip() == "the tasks demo download nothing"


def test_the_data_pages_check_command_runs_as_written_through_a_mirror(tmp_path, monkeypatch, capsys):
    """docs/data.md's `docnmt-check-sources --tasks news ted os`, as written, over config.yaml's sources: every http(s)
    location answered by `$DOCNMT_MIRROR` (the loopback server, laid out as HOST/PATH), each Drive file by gdown from
    the loopback server; the real hosts themselves are out of this test's reach (refused)."""
    import shlex
    from urllib.parse import urlsplit

    from docnmt.config import load_workflow
    from helpers import REPO, block_commands, doc_blocks

    (block,) = [b for b in doc_blocks(REPO / "docs/data.md", "bash", "## Real data") if "docnmt-check-sources" in b]
    (command,) = block_commands(block)
    config = load_workflow()
    sources = source_check.configured_sources(config, ["news", "ted", "os"])
    with LoopbackServer(tmp_path / "mirror") as mirror:
        for source in sources:
            for location in source.locations:
                if location.kind == "http":
                    parts = urlsplit(location.url)
                    serve(mirror, f"{parts.netloc}{parts.path}", b"x" * 10)
                elif location.kind == "gdrive":
                    serve(mirror, f"uc/{location.gdrive_id}", b"d" * 20)
        monkeypatch.setenv("DOCNMT_MIRROR", mirror.url)
        monkeypatch.setattr(gdrive, "DRIVE_URL", mirror.url + "/uc/{id}")
        monkeypatch.chdir(tmp_path)
        argv = shlex.split(command)
        assert argv[0] == "docnmt-check-sources"
        assert source_check.main(argv[1:] + ["--timeout", "5"]) == 0
    rows = capsys.readouterr().out.splitlines()[2:-1]
    mirrored = [r for r in rows if r.split()[1] == "mirror"]
    drive = [r for r in rows if r.split()[1] == "gdrive"]
    assert mirrored and all("live: HTTP 200 (HEAD)" in r for r in mirrored) and len(drive) == 2
    assert all("live: resolved by gdown" in r for r in drive)
    assert all("dead: " in r for r in rows if r.split()[1] == "url"), "the real hosts: refused here"
    assert {r.split()[0] for r in rows} == {s.name for s in sources}


"""A source's locations in order, Google Drive through gdown, a file of the user's own, archives inside archives.

Every location is on the loopback server (tests/loopback.py) or on disk; the process may reach no other host
(``no_outside_network``). The sources are declared as config.yaml declares them (docnmt.corpora.sources), with the
checksums of the fixtures' own files.
"""

from __future__ import annotations

import hashlib
import io
import json
import socket
import tarfile
from pathlib import Path

import gdown
import pytest
from loopback import LoopbackServer

import realformat
from docnmt.config import WORKFLOW_CONFIG, ConfigError, merge, read, validate
from docnmt.corpora import download, gdrive
from docnmt.corpora.archives import extract_specs
from docnmt.corpora.download import extract_origin, fetch_source
from docnmt.corpora.sources import SourceError, source_from_config
from docnmt.textio import InputError

pytestmark = pytest.mark.usefixtures("no_outside_network")
FAST = {"backoff": 0.001, "timeout": 10, "retries": 1}
PAGE = "https://wit3.fbk.eu/2017-01-b"
DRIVE_ID = "1hIryKXS4iR9Wv_yiZv9AlgLGnOnKx2_Z"


@pytest.fixture
def server(tmp_path):
    with LoopbackServer(tmp_path / "served") as running:
        yield running


def serve(server: LoopbackServer, relpath: str, data: bytes) -> str:
    target = server.root / relpath
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    return server.url_for(relpath)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def tgz(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def closed_port() -> int:
    """A loopback port nothing listens on (a refused connection)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*") if p.name.startswith(".") or p.name.endswith(".tmp"))


# ---- locations in order -------------------------------------------------------------------------------------------
def test_the_second_location_serves_where_the_first_answers_404_and_the_log_names_both(server, tmp_path, capsys):
    data = b"the archive"
    dead = server.url_for("wit3.fbk.eu/archive/a.tgz")
    live = serve(server, "huggingface.co/a.tgz", data)
    source = source_from_config("s", {"url": dead, "sha256": sha256(data), "mirrors": [live]})
    out, origin = tmp_path / "downloads" / "a.tgz", tmp_path / "downloads" / "origin" / "a.tgz.json"
    fetch_source(source, out, lock=tmp_path / "lock.json", origin=origin, **FAST)
    assert out.read_bytes() == data
    log = capsys.readouterr().out
    assert f"location 1/2: {dead}" in log and "location 1/2: failed: expected HTTP 200, found HTTP 404" in log
    assert f"location 2/2: {live}" in log and "location 2/2: served, 11 bytes" in log
    assert "sha256 matches the published checksum" in log, "the second location's file: the source's checksum"
    assert json.loads(origin.read_text())["url"] == live
    assert json.loads((tmp_path / "lock.json").read_text()) == {"s": {live: {"sha256": sha256(data), "size": 11}}}
    assert server.count("/wit3.fbk.eu/archive/a.tgz") == 1, "a 404 is not retried"


def test_a_location_with_another_file_is_verified_with_its_own_checksum_and_read_with_its_own_layout(server, tmp_path):
    member = b"<mteval>newstest2015</mteval>\n"
    statmt = server.url_for("statmt.org/wmt15/test.tgz")
    dev = tgz({"dev/newstest2015-ende-src.en.sgm": member, "dev/newsdev2016-enro-src.en.sgm": b"x"})
    second = serve(server, "data.statmt.org/wmt20/dev.tgz", dev)
    source = source_from_config("wmt15-test", {
        "url": statmt, "md5": "0" * 32, "members": {"src": "test/newstest2015-ende-src.en.sgm"},
        "mirrors": [{"url": second, "md5": hashlib.md5(dev).hexdigest(),
                     "members": {"src": "dev/newstest2015-ende-src.en.sgm"}}]})
    out, origin = tmp_path / "test.tgz", tmp_path / "origin.json"
    fetch_source(source, out, origin=origin, **FAST)
    extracted = tmp_path / "extracted"
    assert extract_origin(out, extracted, origin) == ["test/newstest2015-ende-src.en.sgm"]
    assert (extracted / "test/newstest2015-ende-src.en.sgm").read_bytes() == member, \
        "the member lands where the source's own spec puts it, whichever location's layout it came in"


def test_every_location_failing_is_a_line_each_and_a_line_on_bringing_the_file(server, tmp_path):
    gone = server.url_for("wit3.fbk.eu/a.tgz")
    server.fail("/wit3.fbk.eu/a.tgz", how=410)
    forbidden = server.url_for("hf/a.tgz")
    server.fail("/hf/a.tgz", how=403)
    refused = f"http://127.0.0.1:{closed_port()}/a.tgz"
    source = source_from_config("iwslt17-trnmted", {
        "url": gone, "sha256": "c" * 64, "size": 329331279, "page": "https://wit3.fbk.eu/2017-01",
        "mirrors": [forbidden, refused]})
    out = tmp_path / "downloads" / "a.tgz"
    with pytest.raises(InputError) as err:
        fetch_source(source, out, lock=tmp_path / "lock.json", origin=tmp_path / "origin.json", **FAST)
    lines = str(err.value).splitlines()
    assert lines[0] == f"{out}: expected iwslt17-trnmted's file from one of its 3 location(s), found none serving it:"
    assert lines[1] == f"  {gone}: expected HTTP 200, found HTTP 410 Gone (not retried)"
    assert lines[2] == f"  {forbidden}: expected HTTP 200, found HTTP 403 Forbidden (not retried)"
    assert lines[3].startswith(f"  {refused}: URLError: [Errno 111] Connection refused, after 2 attempt(s)")
    assert lines[4] == ("  what to do: get the file a.tgz, 329,331,279 bytes, sha256 " + "c" * 64 + " from "
                        "https://wit3.fbk.eu/2017-01 by hand and set sources.iwslt17-trnmted.local to its path "
                        "(docs/data.md, \"A file of your own\")")
    assert len(lines) == 5
    assert not out.exists() and not (tmp_path / "origin.json").exists() and not (tmp_path / "lock.json").exists()
    assert leftovers(tmp_path / "downloads") == []


def test_a_checksum_mismatch_stops_at_the_location_that_served_the_file(server, tmp_path):
    first = serve(server, "a/file.tgz", b"not the published file")
    second = serve(server, "b/file.tgz", b"the published file")
    source = source_from_config("s", {"url": first, "sha256": sha256(b"the published file"), "mirrors": [second]})
    with pytest.raises(InputError, match=f"checksum mismatch for {first}"):
        fetch_source(source, tmp_path / "file.tgz", **FAST)
    assert server.count("/b/file.tgz") == 0 and not (tmp_path / "file.tgz").exists()


def test_the_lock_keys_each_location_by_the_source_and_never_accepts_a_changed_file(server, tmp_path, capsys):
    lock = tmp_path / "lock.json"
    first = serve(server, "a/f.tgz", b"version at the first location")
    second = server.url_for("b/f.tgz")
    source = source_from_config("s", {"url": first, "mirrors": [second]})
    fetch_source(source, tmp_path / "f.tgz", lock=lock, **FAST)
    (server.root / "a/f.tgz").unlink()  # the first location dies; the second has other bytes
    serve(server, "b/f.tgz", b"another copy")
    fetch_source(source, tmp_path / "f.tgz", lock=lock, **FAST)
    assert f"(other bytes than recorded for {first})" in capsys.readouterr().out
    assert json.loads(lock.read_text()) == {"s": {first: {"sha256": sha256(b"version at the first location"),
                                                          "size": 29},
                                                  second: {"sha256": sha256(b"another copy"), "size": 12}}}
    serve(server, "b/f.tgz", b"changed again")
    with pytest.raises(InputError, match=f"{second} changed since it was recorded"):
        fetch_source(source, tmp_path / "f.tgz", lock=lock, **FAST)
    assert (tmp_path / "f.tgz").read_bytes() == b"another copy", "the verified file stays"


def test_a_mirror_is_tried_before_every_location(server, tmp_path, capsys):
    first, second = "https://wit3.fbk.eu/a.tgz", "https://huggingface.co/x/a.tgz"
    serve(server, "huggingface.co/x/a.tgz", b"mirrored")
    source = source_from_config("s", {"url": first, "mirrors": [second]})
    fetch_source(source, tmp_path / "a.tgz", mirror=server.url, **FAST)
    log = capsys.readouterr().out
    assert f"location 1/4: {server.url}/wit3.fbk.eu/a.tgz (the mirror's copy of {first})" in log
    assert f"location 2/4: {server.url}/huggingface.co/x/a.tgz (the mirror's copy of {second})" in log
    assert "location 2/4: served" in log and "location 3/4" not in log, "the real hosts are not asked"


# ---- Google Drive, through gdown ------------------------------------------------------------------------------------
@pytest.fixture
def drive(server, monkeypatch):
    """Drive's address for a file id on the loopback server, and every call our code makes to gdown.download."""
    monkeypatch.setattr(gdrive, "DRIVE_URL", server.url + "/uc/{id}")
    calls = []
    real = gdown.download

    def spy(*args, **kwargs):
        calls.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(gdown, "download", spy)
    return calls


def test_a_drive_location_goes_through_gdown_and_is_verified_and_locked_as_any(server, drive, tmp_path):
    data = realformat.iwslt17_mted_test_drive_tgz(tmp_path / "drive.tgz", realformat_docs()).read_bytes()
    serve(server, f"uc/{DRIVE_ID}", data)
    source = source_from_config("iwslt17-mted-test", {"url": f"gdrive:{DRIVE_ID}", "filename": "2017-01-mted-test.tgz"})
    out, lock = tmp_path / "downloads" / "2017-01-mted-test.tgz", tmp_path / "lock.json"
    fetch_source(source, out, lock=lock, **FAST)
    assert out.read_bytes() == data
    assert [call["url"] for call in drive] == [f"{server.url}/uc/{DRIVE_ID}"], "gdown gets the id's Drive address"
    assert drive[0]["use_cookies"] is False and drive[0]["retries"] == 0 and not isinstance(drive[0]["output"], str), \
        "gdown writes into our atomic file, keeps no cookie file, and leaves the retries to us"
    assert json.loads(lock.read_text()) == {"iwslt17-mted-test": {f"gdrive:{DRIVE_ID}": {"sha256": sha256(data),
                                                                                         "size": len(data)}}}


def test_a_drive_location_that_fails_is_retried_or_passed_over_as_any(server, drive, tmp_path, capsys):
    serve(server, f"uc/{DRIVE_ID}", b"drive bytes")
    server.fail(f"/uc/{DRIVE_ID}", times=1, how=503)
    source = source_from_config("s", {"url": f"gdrive:{DRIVE_ID}", "filename": "f.tgz",
                                      "mirrors": [server.url_for("other/f.tgz")]})
    fetch_source(source, tmp_path / "f.tgz", **FAST)
    assert (tmp_path / "f.tgz").read_bytes() == b"drive bytes" and server.count(f"/uc/{DRIVE_ID}") == 2
    missing = source_from_config("t", {"url": "gdrive:0000000000missing", "filename": "f.tgz",
                                       "mirrors": [serve(server, "other/g.tgz", b"second")]})
    fetch_source(missing, tmp_path / "g.tgz", **FAST)
    assert (tmp_path / "g.tgz").read_bytes() == b"second"
    assert "location 1/2: failed: HTTP 404 File not found (not retried)" in capsys.readouterr().out


def realformat_docs():
    from docnmt.corpora.corpus import Document

    return [Document(f"talk-{d}", [f"Talk {d}, sentence {i}." for i in range(3)],
                     [f"Discorso {d}, frase {i}." for i in range(3)]) for d in range(2)]


# ---- archives inside archives ---------------------------------------------------------------------------------------
TED_TEST_SPECS = {
    "en-it/IWSLT17.TED.tst2017.mltlng.en-it.en.xml": ["**/texts/en/it/en-it.tgz",
                                                      "**/IWSLT17.TED.tst2017.mltlng.en-it.en.xml"],
    "it-en/IWSLT17.TED.tst2017.mltlng.it-en.it.xml": ["**/texts/it/en/it-en.tgz",
                                                      "**/IWSLT17.TED.tst2017.mltlng.it-en.it.xml"],
}


def test_members_inside_archives_inside_the_archive_are_found_by_name_at_any_depth(tmp_path):
    drive = realformat.iwslt17_mted_test_drive_tgz(tmp_path / "2017-01-mted-test.tgz", realformat_docs())
    dest = tmp_path / "extracted"
    assert sorted(extract_specs(drive, dest, TED_TEST_SPECS)) == sorted(TED_TEST_SPECS)
    src = (dest / "en-it/IWSLT17.TED.tst2017.mltlng.en-it.en.xml").read_text(encoding="utf-8")
    assert 'srclang="english"' in src and "Talk 1, sentence 2." in src
    assert sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file()) == sorted(TED_TEST_SPECS)
    assert leftovers(tmp_path) == [], "the inner archives' temporary copies are gone"


def test_a_name_found_twice_or_not_at_all_is_one_error_naming_the_archive(tmp_path):
    inner = tgz({"en-it/IWSLT17.TED.tst2017.mltlng.en-it.en.xml": b"<a/>"})
    twice = tmp_path / "twice.tgz"
    twice.write_bytes(tgz({"a/texts/en/it/en-it.tgz": inner, "b/texts/en/it/en-it.tgz": inner}))
    with pytest.raises(InputError) as err:
        extract_specs(twice, tmp_path / "out", TED_TEST_SPECS)
    assert str(err.value) == (f"{twice}: expected one member '**/texts/en/it/en-it.tgz' (an archive on the way to "
                              "en-it/IWSLT17.TED.tst2017.mltlng.en-it.en.xml), found 2: a/texts/en/it/en-it.tgz, "
                              "b/texts/en/it/en-it.tgz")
    missing = tmp_path / "missing.tgz"
    missing.write_bytes(tgz({"texts/en/it/en-it.tgz": tgz({"en-it/README": b"x"}), "texts/it/en/it-en.tgz": inner}))
    with pytest.raises(InputError, match=rf"^{missing} > texts/en/it/en-it.tgz: expected a member "
                                         r"'\*\*/IWSLT17.TED.tst2017.mltlng.en-it.en.xml' .*found none \(members: "
                                         r"en-it/README\)$"):
        extract_specs(missing, tmp_path / "out", TED_TEST_SPECS)
    assert not (tmp_path / "out").exists() and leftovers(tmp_path) == []


def test_an_unsafe_member_of_an_inner_archive_is_rejected(tmp_path):
    link = tarfile.TarInfo("en-it/IWSLT17.TED.tst2017.mltlng.en-it.en.xml")
    link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        tar.addfile(link)
    outer = tmp_path / "outer.tgz"
    outer.write_bytes(tgz({"texts/en/it/en-it.tgz": buffer.getvalue()}))
    specs = {"x.xml": TED_TEST_SPECS["en-it/IWSLT17.TED.tst2017.mltlng.en-it.en.xml"]}
    with pytest.raises(InputError, match=r"unsafe member .*found a link to '/etc/passwd'"):
        extract_specs(outer, tmp_path / "out", specs)
    assert not (tmp_path / "out").exists()


# ---- a file of the user's own -----------------------------------------------------------------------------------------
def ted_test_source(local=None, **extra) -> dict:
    return {"url": f"gdrive:{DRIVE_ID}", "filename": "2017-01-mted-test.tgz", "page": PAGE,
            "members": {"src": TED_TEST_SPECS["en-it/IWSLT17.TED.tst2017.mltlng.en-it.en.xml"],
                        "ref": TED_TEST_SPECS["it-en/IWSLT17.TED.tst2017.mltlng.it-en.it.xml"]},
            "local": None if local is None else str(local), **extra}


def test_a_local_file_downloads_nothing_and_is_recorded_in_the_lock(server, drive, tmp_path):
    own = realformat.iwslt17_mted_test_drive_tgz(tmp_path / "by hand" / "2017-01-mted-test.tgz", realformat_docs())
    source = source_from_config("iwslt17-mted-test", ted_test_source(own))
    out, lock = tmp_path / "downloads" / "2017-01-mted-test.tgz", tmp_path / "lock.json"
    fetch_source(source, out, lock=lock, origin=tmp_path / "origin.json", **FAST)
    assert out.is_symlink() and out.resolve() == own.resolve() and drive == [] and server.requests == {}
    data = own.read_bytes()
    assert json.loads(lock.read_text()) == {"iwslt17-mted-test": {f"local:{own.resolve()}": {
        "sha256": sha256(data), "size": len(data)}}}
    extract_origin(out, tmp_path / "extracted", tmp_path / "origin.json")
    assert (tmp_path / "extracted/IWSLT17.TED.tst2017.mltlng.it-en.it.xml").is_file(), "at its name: '**/' drops the rest"


def test_a_local_file_is_verified_against_every_locations_published_checksum(tmp_path):
    inner = tgz({"DeEnItNlRo-DeEnItNlRo/train.tags.en-it.en": b"<doc>\n"})
    drive_copy = tgz({"2017-01-trnmted/texts/DeEnItNlRo/DeEnItNlRo/DeEnItNlRo-DeEnItNlRo.tgz": inner})
    own = tmp_path / "2017-01-trnmted.tgz"
    own.write_bytes(drive_copy)
    entry = {"url": "https://wit3.fbk.eu/x/DeEnItNlRo-DeEnItNlRo.tgz", "sha256": sha256(inner),
             "members": {"train_src": "DeEnItNlRo-DeEnItNlRo/train.tags.en-it.en"}, "local": str(own),
             "mirrors": [{"url": "gdrive:12ycYSzLIG253AFN35Y6qoyf9wtkOjakp", "sha256": sha256(drive_copy),
                          "members": {"train_src": ["**/DeEnItNlRo-DeEnItNlRo.tgz",
                                                    "DeEnItNlRo-DeEnItNlRo/train.tags.en-it.en"]}}]}
    out, origin = tmp_path / "DeEnItNlRo-DeEnItNlRo.tgz", tmp_path / "origin.json"
    fetch_source(source_from_config("iwslt17-trnmted", entry), out, origin=origin, **FAST)
    extract_origin(out, tmp_path / "extracted", origin)
    assert (tmp_path / "extracted/DeEnItNlRo-DeEnItNlRo/train.tags.en-it.en").read_bytes() == b"<doc>\n", \
        "the Drive archive brought by hand is read with the Drive location's layout"


@pytest.mark.parametrize("wrong", ["another archive", "truncated", "folder without the members", "nothing there"])
def test_a_wrong_local_file_is_one_line_naming_it_and_nothing_is_written(tmp_path, wrong):
    good = realformat.iwslt17_mted_test_drive_tgz(tmp_path / "good.tgz", realformat_docs()).read_bytes()
    own = tmp_path / "mine" / "2017-01-mted-test.tgz"
    own.parent.mkdir()
    if wrong == "another archive":
        own.write_bytes(tgz({"2017-01-ted-test/texts/en/de/en-de.tgz": tgz({"en-de/README": b"x"})}))
    elif wrong == "truncated":
        own.write_bytes(good[: len(good) // 2])
    elif wrong == "folder without the members":
        own.mkdir()
        (own / "README").write_text("x")
    out, lock = tmp_path / "downloads" / "2017-01-mted-test.tgz", tmp_path / "lock.json"
    source = source_from_config("iwslt17-mted-test", ted_test_source(own))
    with pytest.raises(InputError) as err:
        if wrong == "folder without the members":
            extract_specs(own, tmp_path / "extracted", source.specs_for(None))
        else:
            fetch_source(source, out, lock=lock, **FAST)
    message = str(err.value)
    assert "\n" not in message and message.startswith(str(own)), message
    expected = {"another archive": "expected a member '**/texts/en/it/en-it.tgz'",
                "truncated": "truncated or corrupt archive",
                "folder without the members": "expected a member '**/texts/en/it/en-it.tgz'",
                "nothing there": "expected the file 2017-01-mted-test.tgz (sources.iwslt17-mted-test.local), "
                                 "found nothing"}[wrong]
    assert expected in message, message
    assert not out.exists() and not lock.exists() and not (tmp_path / "extracted").exists()
    assert leftovers(tmp_path / "downloads") == [] if (tmp_path / "downloads").exists() else True


def test_a_local_file_with_a_published_checksum_must_match_one(tmp_path):
    own = tmp_path / "news-commentary-v14.de-en.tsv.gz"
    own.write_bytes(b"a truncated copy")
    source = source_from_config("news-commentary-v14", {
        "url": "https://data.statmt.org/news-commentary/v14/training/news-commentary-v14.de-en.tsv.gz",
        "sha256": "8" * 64, "size": 39390551, "local": str(own)})
    with pytest.raises(InputError) as err:
        fetch_source(source, tmp_path / "out.tsv.gz", **FAST)
    assert str(err.value) == (f"{own}: expected the file news-commentary-v14.de-en.tsv.gz, 39,390,551 bytes, sha256 "
                              f"{'8' * 64} or another location's file (sha256 {'8' * 64} (https://data.statmt.org/"
                              "news-commentary/v14/training/news-commentary-v14.de-en.tsv.gz)), found sha256 "
                              f"{sha256(b'a truncated copy')} (16 bytes); nothing extracted")


def test_a_local_folder_of_the_archives_layout_is_read_as_the_archive(tmp_path):
    folder = tmp_path / "2017-01-mted-test"
    realformat.extract(realformat.iwslt17_mted_test_drive_tgz(tmp_path / "d.tgz", realformat_docs()), folder)
    source = source_from_config("iwslt17-mted-test", ted_test_source(folder))
    code = download.main(["extract", "--archive", str(folder), "--dest", str(tmp_path / "extracted"),
                          "--specs", json.dumps(source.specs_for(None))])
    assert code == 0 and (tmp_path / "extracted/IWSLT17.TED.tst2017.mltlng.en-it.en.xml").is_file()


# ---- declarations ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("entry, message", [
    ({"url": "gdrive:short"}, "sources.s.url: expected gdrive: and a Drive file id, found 'gdrive:short'"),
    ({"url": f"gdrive:{DRIVE_ID}"}, "sources.s.filename: expected the downloaded file's name (a gdrive: URL names "
                                    "none)"),
    ({"url": "ftp://host/a.tgz"}, "sources.s.url: expected an http(s):// or file:// URL or gdrive:ID"),
    ({"url": "https://h/a.tgz", "members": {"src": "../x"}}, "sources.s.members.src: expected a relative path"),
    ({"url": "https://h/a.tgz", "members": {"src": "test/*.sgm"}}, "sources.s.members.src: expected an exact path "
                                                                    "or '**/' and an exact path"),
    ({"url": "https://h/a.tgz", "members": {"src": "a", "ref": "b"},
      "mirrors": [{"url": "https://g/b.tgz", "members": {"src": "x"}}]},
     "sources.s.mirrors[0].members: expected the roles of the source's members (ref, src), found src"),
    ({"url": "https://h/a.tgz", "mirrors": [{"url": "https://g/b.tgz", "md5": "xyz"}]},
     "sources.s.mirrors[0].md5: expected a hexadecimal md5 digest"),
])
def test_a_source_that_cannot_work_is_a_config_error_naming_its_key(entry, message):
    with pytest.raises(SourceError, match=f"^{message.replace('(', '[(]').replace(')', '[)]').replace('[0]', '.0.')}"
                       .replace("*", r"\*").replace("?", r"\?")):
        source_from_config("s", entry)
    with pytest.raises(ConfigError, match="config key '?sources.s."):
        validate(merge(read(WORKFLOW_CONFIG), {"sources": {"s": entry}}))


def test_the_cli_fetches_from_a_spec_and_refuses_a_bad_one(server, tmp_path, capsys):
    live = serve(server, "b/f.txt", b"cli")
    spec = {"name": "s", "url": server.url_for("a/f.txt"), "mirrors": [live]}
    out = tmp_path / "f.txt"
    assert download.main(["fetch", "--spec", json.dumps(spec), "--output", str(out), "--origin",
                          str(tmp_path / "o.json"), "--backoff", "0.001"]) == 0
    assert out.read_bytes() == b"cli" and json.loads((tmp_path / "o.json").read_text())["url"] == live
    with pytest.raises(SystemExit) as exit_:
        download.main(["fetch", "--spec", json.dumps({"name": "s", "url": "gdrive:x"}), "--output", str(out)])
    assert exit_.value.code == 2
    assert "sources.s.url: expected gdrive: and a Drive file id" in capsys.readouterr().err

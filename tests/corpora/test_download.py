"""Downloads and archives: mirrors, checksums, the lock file, retries, safe extraction.

Everything goes through a loopback HTTP server (tests/loopback.py) serving a folder laid out as
``HOST/PATH``, the way institutes mirror the corpora; no test touches a non-loopback address.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import stat
import tarfile
import zipfile
from pathlib import Path

import pytest
from loopback import LoopbackServer

from helpers import REAL_SAMPLES
from docnmt.corpora import download
from docnmt.corpora.download import extract, fetch, mirror_url
from docnmt.textio import InputError

URL = "https://data.statmt.org/wmt18/translation-task/test.tgz"
PATH = "/data.statmt.org/wmt18/translation-task/test.tgz"
FAST = {"backoff": 0.001, "timeout": 10}
#: A failed mirror falls back to the real URL: never reached from a test.
pytestmark = pytest.mark.usefixtures("no_outside_network")


@pytest.fixture
def mirror(tmp_path):
    with LoopbackServer(tmp_path / "mirror") as server:
        yield server


def publish(server: LoopbackServer, url: str, data: bytes) -> None:
    """Put ``data`` where the mirror serves ``url``: ROOT/HOST/PATH."""
    host_path = url.split("://", 1)[1]
    target = server.root / host_path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)


def leftovers(directory: Path) -> list[str]:
    """Temporary files or folders that a failed step left behind."""
    return sorted(p.name for p in directory.iterdir() if p.name.startswith(".") and p.name.endswith((".tmp", ".old")))


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# --------------------------------------------------------------------------------------------
# mirror_url
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("base", ["http://mirror.example/corpora", "http://mirror.example/corpora/"])
def test_mirror_url_puts_host_and_path_under_the_mirror_with_or_without_trailing_slash(base):
    assert mirror_url(URL, base) == "http://mirror.example/corpora/data.statmt.org/wmt18/translation-task/test.tgz"


@pytest.mark.parametrize("base", [None, ""])
def test_mirror_url_without_mirror_is_the_real_url(base):
    assert mirror_url(URL, base) == URL


def test_mirror_url_keeps_the_query_string():
    url = "http://opus.nlpl.eu/download.php?f=OpenSubtitles2018/de-en.txt.zip"
    assert mirror_url(url, "http://m") == "http://m/opus.nlpl.eu/download.php?f=OpenSubtitles2018/de-en.txt.zip"


def test_mirror_url_of_a_local_directory_is_a_file_url(tmp_path):
    expected = tmp_path.resolve() / "data.statmt.org/wmt18/translation-task/test.tgz"
    assert mirror_url(URL, tmp_path) == expected.as_uri()


# --------------------------------------------------------------------------------------------
# fetch: checksums
# --------------------------------------------------------------------------------------------
def test_fetch_through_the_mirror_with_a_correct_sha256(mirror, tmp_path):
    data = b"newstest archive bytes\n" * 1000
    publish(mirror, URL, data)
    out = tmp_path / "raw" / "test.tgz"
    result = fetch(URL, out, sha256=sha256(data), mirror=mirror.url, **FAST)
    assert out.read_bytes() == data
    assert result["source"] == mirror.url + PATH and result["url"] == URL
    assert mirror.count(PATH) == 1
    assert leftovers(out.parent) == []


def test_fetch_with_a_correct_md5_as_published_by_sacrebleu(mirror, tmp_path):
    data = b"<srcset>\n" * 100
    publish(mirror, URL, data)
    out = tmp_path / "test.tgz"
    fetch(URL, out, md5=hashlib.md5(data).hexdigest(), mirror=mirror.url, **FAST)
    assert out.read_bytes() == data


def test_checksum_mismatch_names_url_and_file_and_leaves_nothing(mirror, tmp_path):
    publish(mirror, URL, b"tampered")
    out = tmp_path / "test.tgz"
    with pytest.raises(InputError) as err:
        fetch(URL, out, sha256="0" * 64, mirror=mirror.url, **FAST)
    message = str(err.value)
    assert str(out) in message and URL in message, message
    assert f"expected sha256 {'0' * 64}, found sha256 {sha256(b'tampered')}" in message
    assert not out.exists(), "a file that failed its checksum must not be kept"
    assert leftovers(tmp_path) == []


def test_md5_mismatch_is_reported_with_both_digests(mirror, tmp_path):
    publish(mirror, URL, b"abc")
    with pytest.raises(InputError, match=f"expected md5 {'f' * 32}, found md5 {hashlib.md5(b'abc').hexdigest()}"):
        fetch(URL, tmp_path / "t.tgz", md5="f" * 32, mirror=mirror.url, **FAST)


def test_a_malformed_checksum_is_refused_before_downloading(mirror, tmp_path):
    with pytest.raises(ValueError, match="hexadecimal sha256"):
        fetch(URL, tmp_path / "t.tgz", sha256="abc", mirror=mirror.url, **FAST)
    assert mirror.requests == {}


# --------------------------------------------------------------------------------------------
# fetch: the lock file
# --------------------------------------------------------------------------------------------
def test_first_download_records_sha256_and_size_under_the_source_and_the_real_url(mirror, tmp_path):
    data = b"first download"
    publish(mirror, URL, data)
    lock = tmp_path / "results" / "downloads.lock.json"
    fetch(URL, tmp_path / "test.tgz", lock=lock, mirror=mirror.url, name="wmt18-test", **FAST)
    assert json.loads(lock.read_text()) == {"wmt18-test": {URL: {"sha256": sha256(data), "size": len(data)}}}, (
        "the lock is keyed by the source, then the real URL, not the mirror's"
    )


def test_a_lock_of_0_1_keyed_by_the_url_verifies_and_is_moved_under_the_source(mirror, tmp_path):
    lock = tmp_path / "lock.json"
    lock.write_text(json.dumps({URL: {"sha256": sha256(b"old"), "size": 3}}))
    publish(mirror, URL, b"new")
    with pytest.raises(InputError, match="changed since it was recorded"):
        fetch(URL, tmp_path / "t.tgz", lock=lock, mirror=mirror.url, name="wmt18-test", **FAST)
    publish(mirror, URL, b"old")
    fetch(URL, tmp_path / "t.tgz", lock=lock, mirror=mirror.url, name="wmt18-test", **FAST)
    assert json.loads(lock.read_text()) == {"wmt18-test": {URL: {"sha256": sha256(b"old"), "size": 3}}}


def test_lock_file_keys_are_sorted(mirror, tmp_path):
    lock = tmp_path / "lock.json"
    urls = ["https://b.example/x", "https://a.example/y", "https://c.example/z"]
    for i, url in enumerate(urls):
        publish(mirror, url, b"x")
        fetch(url, tmp_path / f"f{i}", lock=lock, mirror=mirror.url, **FAST)
    assert list(json.loads(lock.read_text())) == sorted(urls), "sources in order (here each named by its URL)"


def test_changed_content_fails_against_the_lock_and_keeps_the_old_file(mirror, tmp_path):
    lock, out = tmp_path / "lock.json", tmp_path / "test.tgz"
    publish(mirror, URL, b"version 1")
    fetch(URL, out, lock=lock, mirror=mirror.url, **FAST)
    publish(mirror, URL, b"version 2, changed upstream")
    with pytest.raises(InputError) as err:
        fetch(URL, out, lock=lock, mirror=mirror.url, **FAST)
    message = str(err.value)
    assert f"changed since it was recorded in {lock}" in message and sha256(b"version 1") in message, message
    assert out.read_bytes() == b"version 1", "a download that fails the lock must not replace the verified file"
    assert json.loads(lock.read_text())[URL][URL]["sha256"] == sha256(b"version 1"), "the record must not move"
    assert leftovers(tmp_path) == []


def test_same_content_passes_the_lock_and_leaves_it_unchanged(mirror, tmp_path):
    lock = tmp_path / "lock.json"
    publish(mirror, URL, b"stable")
    fetch(URL, tmp_path / "a.tgz", lock=lock, mirror=mirror.url, **FAST)
    recorded = lock.read_bytes()
    fetch(URL, tmp_path / "b.tgz", lock=lock, mirror=mirror.url, **FAST)
    assert (tmp_path / "b.tgz").read_bytes() == b"stable"
    assert lock.read_bytes() == recorded


def test_a_published_checksum_is_also_recorded_in_the_lock(mirror, tmp_path):
    lock = tmp_path / "lock.json"
    publish(mirror, URL, b"abc")
    fetch(URL, tmp_path / "t.tgz", md5=hashlib.md5(b"abc").hexdigest(), lock=lock, mirror=mirror.url, **FAST)
    assert json.loads(lock.read_text())[URL] == {URL: {"sha256": sha256(b"abc"), "size": 3}}


def test_a_corrupt_lock_file_is_reported_with_its_path(mirror, tmp_path):
    lock = tmp_path / "lock.json"
    lock.write_text("[1, 2]")
    publish(mirror, URL, b"abc")
    with pytest.raises(InputError, match=f"^{lock}: expected a JSON object"):
        fetch(URL, tmp_path / "t.tgz", lock=lock, mirror=mirror.url, **FAST)
    assert not (tmp_path / "t.tgz").exists()


# --------------------------------------------------------------------------------------------
# fetch: retries
# --------------------------------------------------------------------------------------------
def test_two_503s_are_retried_and_the_third_request_succeeds(mirror, tmp_path):
    publish(mirror, URL, b"payload")
    mirror.fail(PATH, times=2, how=503)
    fetch(URL, tmp_path / "t.tgz", sha256=sha256(b"payload"), mirror=mirror.url, **FAST)
    assert (tmp_path / "t.tgz").read_bytes() == b"payload"
    assert mirror.count(PATH) == 3


@pytest.mark.parametrize("how", ["drop", 429, 500])
def test_dropped_connections_rate_limits_and_server_errors_are_retried(mirror, tmp_path, how):
    publish(mirror, URL, b"payload")
    mirror.fail(PATH, times=1, how=how)
    fetch(URL, tmp_path / "t.tgz", mirror=mirror.url, **FAST)
    assert mirror.count(PATH) == 2


def test_404_fails_at_once_without_retrying(mirror, tmp_path):
    with pytest.raises(InputError, match="expected HTTP 200, found HTTP 404") as err:
        fetch(URL, tmp_path / "t.tgz", mirror=mirror.url, retries=4, **FAST)
    lines = str(err.value).splitlines()
    assert lines[1].startswith(f"  {mirror.url + PATH} (the mirror's copy of {URL}): expected HTTP 200, found HTTP 404")
    assert lines[2].startswith(f"  {URL}: "), "then the real URL (refused here: the tests reach no other host)"
    assert mirror.count(PATH) == 1
    assert list(tmp_path.iterdir()) == [mirror.root]


def test_persistent_failures_give_up_after_the_retries_and_leave_nothing(mirror, tmp_path):
    publish(mirror, URL, b"payload")
    mirror.fail(PATH, times=10, how=503)
    with pytest.raises(InputError, match=r"HTTP 503 .*after 3 attempt\(s\)"):
        fetch(URL, tmp_path / "t.tgz", mirror=mirror.url, retries=2, **FAST)
    assert mirror.count(PATH) == 3
    assert not (tmp_path / "t.tgz").exists() and leftovers(tmp_path) == []


def test_a_truncated_transfer_is_retried(mirror, tmp_path):
    data = os.urandom(100_000)
    publish(mirror, URL, data)
    mirror.fail(PATH, times=1, how="truncate")
    fetch(URL, tmp_path / "t.tgz", mirror=mirror.url, **FAST)
    assert (tmp_path / "t.tgz").read_bytes() == data, "the complete file, not the truncated first transfer"
    assert mirror.count(PATH) == 2


def test_a_transfer_truncated_every_time_fails_cleanly(mirror, tmp_path):
    publish(mirror, URL, os.urandom(10_000))
    mirror.fail(PATH, times=5, how="truncate")
    with pytest.raises(InputError, match=r"truncated transfer: .*after 2 attempt\(s\)"):
        fetch(URL, tmp_path / "t.tgz", mirror=mirror.url, retries=1, **FAST)
    assert mirror.count(PATH) == 2
    assert not (tmp_path / "t.tgz").exists() and leftovers(tmp_path) == []


def test_a_missing_file_in_a_local_directory_mirror_is_not_retried(tmp_path):
    with pytest.raises(InputError, match="not retried"):
        fetch(URL, tmp_path / "t.tgz", mirror=tmp_path / "empty-mirror", retries=3, **FAST)


def test_a_local_directory_mirror_serves_files(tmp_path):
    target = tmp_path / "m" / "data.statmt.org/wmt18/translation-task/test.tgz"
    target.parent.mkdir(parents=True)
    target.write_bytes(b"local")
    fetch(URL, tmp_path / "t.tgz", sha256=sha256(b"local"), mirror=tmp_path / "m", **FAST)
    assert (tmp_path / "t.tgz").read_bytes() == b"local"


# --------------------------------------------------------------------------------------------
# extract
# --------------------------------------------------------------------------------------------
FILES = {
    "en-de/IWSLT17.TED.tst2017.en-de.en.xml": b"<mteval>\n" * 50,
    "en-de/README": b"readme\n",
    "en-de/sub/notes.txt": b"x",
}


def make_tar(path: Path, files: dict[str, bytes], mode: str = "w:gz", extra=()) -> Path:
    with tarfile.open(path, mode) as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        for info in extra:
            tar.addfile(info)
    return path


def make_zip(path: Path, files: dict[str, bytes], symlinks: dict[str, str] | None = None) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():
            zf.writestr(name, data)
        for name, target in (symlinks or {}).items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            zf.writestr(info, target)
    return path


def extracted_tree(dest: Path) -> dict[str, bytes]:
    return {p.relative_to(dest).as_posix(): p.read_bytes() for p in dest.rglob("*") if p.is_file()}


def test_tgz_round_trip(tmp_path):
    archive = make_tar(tmp_path / "en-de.tgz", FILES)
    names = extract(archive, tmp_path / "out")
    assert sorted(names) == sorted(FILES)
    assert extracted_tree(tmp_path / "out") == FILES
    assert leftovers(tmp_path) == []


def test_zip_round_trip(tmp_path):
    archive = make_zip(tmp_path / "de-en.txt.zip", FILES)
    assert sorted(extract(archive, tmp_path / "out")) == sorted(FILES)
    assert extracted_tree(tmp_path / "out") == FILES


def test_the_archive_kind_comes_from_the_content_not_the_name(tmp_path):
    archive = make_tar(tmp_path / "misnamed.zip", FILES)
    assert sorted(extract(archive, tmp_path / "out")) == sorted(FILES)
    plain = make_tar(tmp_path / "no-extension", FILES, mode="w")
    assert sorted(extract(plain, tmp_path / "out2")) == sorted(FILES)


def test_member_patterns_extract_only_the_matching_members(tmp_path):
    archive = make_tar(tmp_path / "a.tgz", FILES)
    names = extract(archive, tmp_path / "out", members=["*/IWSLT17.TED.tst2017.*.xml", "en-de/README"])
    assert sorted(names) == ["en-de/IWSLT17.TED.tst2017.en-de.en.xml", "en-de/README"]
    assert sorted(extracted_tree(tmp_path / "out")) == sorted(names)


def test_a_pattern_that_matches_no_member_is_an_error_listing_the_members(tmp_path):
    archive = make_zip(tmp_path / "a.zip", FILES)
    expected = r"expected a member matching 'test/newstest2015-\*', found none \(members: en-de/"
    with pytest.raises(InputError, match=expected):
        extract(archive, tmp_path / "out", members=["test/newstest2015-*"])
    assert not (tmp_path / "out").exists()


def _link(name, kind, target="/etc/passwd"):
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = target
    return info


@pytest.mark.parametrize(
    "files, extra, member",
    [
        ({"../evil": b"x"}, (), "../evil"),
        ({"ok/../../evil": b"x"}, (), "ok/../../evil"),
        ({"/etc/evil": b"x"}, (), "/etc/evil"),
        ({}, (_link("en-de/link", tarfile.SYMTYPE),), "en-de/link"),
        ({}, (_link("en-de/hard", tarfile.LNKTYPE, "en-de/README"),), "en-de/hard"),
        ({}, (_link("en-de/tty", tarfile.CHRTYPE, ""),), "en-de/tty"),
    ],
    ids=["dotdot", "dotdot-inside", "absolute", "symlink", "hardlink", "device"],
)
def test_unsafe_tar_members_are_rejected_by_name_and_nothing_is_extracted(tmp_path, files, extra, member):
    archive = make_tar(tmp_path / "evil.tgz", {**FILES, **files}, extra=extra)
    with pytest.raises(InputError) as err:
        extract(archive, tmp_path / "out" / "dest")
    message = str(err.value)
    assert message.startswith(f"{archive}: unsafe member {member!r}"), message
    assert not (tmp_path / "out" / "dest").exists()
    assert not (tmp_path / "evil").exists() and not (tmp_path / "out" / "evil").exists()
    assert leftovers(tmp_path / "out") == []


def test_zip_traversal_and_symlink_members_are_rejected(tmp_path):
    with pytest.raises(InputError, match=r"unsafe member '\.\./evil'"):
        extract(make_zip(tmp_path / "a.zip", {**FILES, "../evil": b"x"}), tmp_path / "out")
    expected = r"unsafe member 'en-de/link': expected a file or directory, found a symbolic link"
    with pytest.raises(InputError, match=expected):
        extract(make_zip(tmp_path / "b.zip", FILES, symlinks={"en-de/link": "/etc/passwd"}), tmp_path / "out")
    assert not (tmp_path / "out").exists() and not (tmp_path / "evil").exists()


def test_a_truncated_tgz_is_reported_and_no_destination_is_left(tmp_path):
    whole = make_tar(tmp_path / "whole.tgz", {"big.bin": os.urandom(300_000), **FILES}).read_bytes()
    archive = tmp_path / "test.tgz"
    archive.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(InputError, match=f"^{archive}: truncated or corrupt archive \\("):
        extract(archive, tmp_path / "out")
    assert not (tmp_path / "out").exists()
    assert leftovers(tmp_path) == []


def test_a_truncated_zip_is_reported(tmp_path):
    whole = make_zip(tmp_path / "whole.zip", {"big.bin": os.urandom(100_000)}).read_bytes()
    archive = tmp_path / "de-en.txt.zip"
    archive.write_bytes(whole[: len(whole) - 200])
    with pytest.raises(InputError, match="truncated or corrupt archive"):
        extract(archive, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_a_failed_extraction_keeps_the_previous_destination(tmp_path):
    dest = tmp_path / "out"
    extract(make_tar(tmp_path / "good.tgz", FILES), dest)
    with pytest.raises(InputError):
        extract(make_tar(tmp_path / "evil.tgz", {"../evil": b"x"}), dest)
    assert extracted_tree(dest) == FILES


def test_a_successful_extraction_replaces_the_previous_destination(tmp_path):
    dest = tmp_path / "out"
    extract(make_tar(tmp_path / "one.tgz", {"old.txt": b"old"}), dest)
    extract(make_tar(tmp_path / "two.tgz", {"new.txt": b"new"}), dest)
    assert extracted_tree(dest) == {"new.txt": b"new"}
    assert leftovers(tmp_path) == []


def test_a_file_that_is_no_archive_is_reported(tmp_path):
    path = tmp_path / "news-commentary-v14.de-en.tsv"
    path.write_text("Hallo\tHello\n")
    with pytest.raises(InputError, match=r"expected a \.tar/\.tar\.gz/\.tgz/\.zip archive"):
        extract(path, tmp_path / "out")


# --------------------------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------------------------
def test_cli_fetch_downloads_verifies_and_records(mirror, tmp_path):
    publish(mirror, URL, b"cli bytes")
    out, lock = tmp_path / "raw" / "test.tgz", tmp_path / "lock.json"
    code = download.main(["fetch", "--url", URL, "--output", str(out), "--md5", hashlib.md5(b"cli bytes").hexdigest(),
                          "--lock", str(lock), "--mirror", mirror.url, "--retries", "1", "--backoff", "0.001"])
    assert code == 0 and out.read_bytes() == b"cli bytes"
    assert json.loads(lock.read_text()) == {URL: {URL: {"sha256": sha256(b"cli bytes"), "size": 9}}}


def test_cli_fetch_mirror_defaults_to_the_environment(mirror, tmp_path, monkeypatch):
    publish(mirror, URL, b"env")
    monkeypatch.setenv("DOCNMT_MIRROR", mirror.url)
    assert download.main(["fetch", "--url", URL, "--output", str(tmp_path / "t"), "--backoff", "0.001"]) == 0
    assert mirror.count(PATH) == 1


def test_cli_fetch_error_is_one_line_and_exit_1(mirror, tmp_path, capsys):
    publish(mirror, URL, b"bytes")
    out = tmp_path / "t.tgz"
    with pytest.raises(SystemExit) as exit_:
        download.main(["fetch", "--url", URL, "--output", str(out), "--sha256", "a" * 64, "--mirror", mirror.url])
    assert exit_.value.code == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.startswith(f"error: {out}: checksum mismatch for {URL}"), err


def test_cli_extract_with_member_patterns(tmp_path, capsys):
    archive = make_tar(tmp_path / "a.tgz", FILES)
    code = download.main(["extract", "--archive", str(archive), "--dest", str(tmp_path / "out"), "--members", "*.xml"])
    assert code == 0
    assert list(extracted_tree(tmp_path / "out")) == ["en-de/IWSLT17.TED.tst2017.en-de.en.xml"]
    assert "extracted 1 file(s)" in capsys.readouterr().out


def test_cli_extract_of_a_corrupt_archive_exits_1(tmp_path, capsys):
    archive = tmp_path / "bad.tgz"
    archive.write_bytes(make_tar(tmp_path / "x.tgz", {"a": os.urandom(50_000)}).read_bytes()[:2000])
    with pytest.raises(SystemExit) as exit_:
        download.main(["extract", "--archive", str(archive), "--dest", str(tmp_path / "out")])
    assert exit_.value.code == 1
    assert f"{archive}: truncated or corrupt archive" in capsys.readouterr().err


# --------------------------------------------------------------------------------------------
# A real archive: sacrebleu's published md5 and member paths for IWSLT17 en-de
# --------------------------------------------------------------------------------------------
IWSLT17_EN_DE = "https://raw.githubusercontent.com/hlt-mt/WIT3/master/archive/2017-01-ted-test/texts/en/de/en-de.tgz"
IWSLT17_EN_DE_MD5 = "b68e7097b179491f6c466ef41ad72b9b"  # sacrebleu/dataset/__init__.py, "iwslt17"


@pytest.mark.skipif(not (REAL_SAMPLES / "iwslt17-ted-test-en-de").is_dir(), reason="../shared/real-samples is absent")
def test_real_iwslt17_archive_matches_sacrebleus_md5_and_member_paths(mirror, tmp_path):
    publish(mirror, IWSLT17_EN_DE, (REAL_SAMPLES / "iwslt17-ted-test-en-de" / "en-de.tgz").read_bytes())
    archive = tmp_path / "en-de.tgz"
    fetch(IWSLT17_EN_DE, archive, md5=IWSLT17_EN_DE_MD5, lock=tmp_path / "lock.json", mirror=mirror.url, **FAST)
    names = extract(archive, tmp_path / "en-de", members=["en-de/IWSLT17.TED.tst2017.en-de.en.xml"])
    assert names == ["en-de/IWSLT17.TED.tst2017.en-de.en.xml"]
    assert (tmp_path / "en-de" / names[0]).read_text(encoding="utf-8").count("<seg id=") == 1138

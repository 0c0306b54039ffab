"""Download and unpack the real corpora: mirrors, checksums, a lock file, retries, safe extraction.

Every file is downloaded to a temporary file beside its target and renamed into place only after
it was verified, so a failed or interrupted download never leaves a file that Snakemake (or a
parser) would take for the real one.

Verification:

- a published checksum (``sha256``, or ``md5`` where that is what is published, as sacrebleu
  records for the WMT test archives) must match;
- with a lock file (JSON: real URL -> ``{"sha256": ..., "size": ...}``, kept with the results),
  the first download of a URL records its sha256 and size, and every later download of that URL
  must match them. The key is always the real URL, never the mirror's, so a lock file written
  with one mirror verifies downloads from any other.

Mirrors: institutes keep copies of these files under host-named folders. With ``--mirror M``,
``https://HOST/PATH`` is fetched from ``M/HOST/PATH``; ``M`` may be an http(s) or file URL, or a
local directory.

Transient failures (connection errors and resets, timeouts, HTTP 5xx and 429, a body shorter than
its Content-Length) are retried with exponential backoff; other HTTP errors (404, 403, ...) fail
at once.

CLI::

    python -m docnmt.corpora.download fetch --url URL --output FILE [--sha256 X | --md5 X] [--lock LOCK.json]
                                    [--mirror M] [--retries N] [--backoff S] [--timeout S]
    python -m docnmt.corpora.download extract --archive FILE --dest DIR [--members PATTERN ...]
"""

from __future__ import annotations

import contextlib
import fnmatch
import hashlib
import http.client
import json
import os
import re
import secrets
import shutil
import ssl
import stat
import sys
import tarfile
import time
import urllib.error
import urllib.parse
import urllib.request
import zipfile
import zlib
from pathlib import Path, PurePosixPath
from typing import Iterator, Sequence

from ..textio import InputError, atomic_write, cli_errors
from ..manual import argument_parser
from ..option_ranges import NONNEGATIVE, NONNEGATIVE_INT, POSITIVE

try:  # POSIX: serialise concurrent updates of one lock file (Snakemake runs downloads in parallel)
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None

CHUNK = 1 << 20
USER_AGENT = "docnmt-download/1 (+https://github.com; Python urllib)"
RETRY_HTTP = {408, 425, 429}  # plus every 5xx
MAX_RETRY_AFTER = 60.0  # seconds; a server's Retry-After is honoured up to this
LOOPBACK_HOSTS = {"127.0.0.1", "localhost", "::1"}
HEX = {"sha256": re.compile(r"^[0-9a-f]{64}$"), "md5": re.compile(r"^[0-9a-f]{32}$")}


class _Transient(Exception):
    """A failure worth retrying: the next attempt may succeed."""

    def __init__(self, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


def log(message: str) -> None:
    print(f"[download] {message}", flush=True)


# --------------------------------------------------------------------------------------------
# Mirrors
# --------------------------------------------------------------------------------------------
def mirror_url(url: str, mirror: str | os.PathLike | None) -> str:
    """The address to fetch ``url`` from: ``url`` itself, or ``MIRROR/HOST/PATH`` with a mirror.

    >>> mirror_url("https://data.statmt.org/wmt18/test.tgz", "http://mirror.example/corpora/")
    'http://mirror.example/corpora/data.statmt.org/wmt18/test.tgz'

    A mirror without a scheme is a local directory (made absolute, as a ``file:`` URL). The query
    string of ``url``, if any, is kept.
    """
    if mirror is None or str(mirror).strip() == "":
        return url
    parts = urllib.parse.urlsplit(url)
    if not parts.scheme or not parts.netloc:
        raise ValueError(f"expected an absolute URL (scheme://host/path), found {url!r}")
    base = str(mirror).strip()
    if not re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*://", base):
        base = Path(base).expanduser().resolve().as_uri()
    relative = parts.netloc + (parts.path if parts.path.startswith("/") else "/" + parts.path)
    if parts.query:
        relative += "?" + parts.query
    return base.rstrip("/") + "/" + relative.lstrip("/")


# --------------------------------------------------------------------------------------------
# Lock file
# --------------------------------------------------------------------------------------------
@contextlib.contextmanager
def _exclusive(lock: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``lock`` (through a sidecar ``.LOCKNAME.flock`` file)."""
    lock.parent.mkdir(parents=True, exist_ok=True)
    if fcntl is None:  # pragma: no cover
        yield
        return
    with open(lock.parent / f".{lock.name}.flock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def read_lock(lock: os.PathLike | str) -> dict:
    """The lock file as a dict (empty when the file does not exist yet)."""
    lock = Path(lock)
    if not lock.exists():
        return {}
    try:
        data = json.loads(lock.read_text(encoding="utf-8") or "{}")
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise InputError(lock, f"expected a JSON lock file, found invalid JSON ({err})") from None
    if not isinstance(data, dict):
        raise InputError(lock, f"expected a JSON object mapping URLs to {{sha256, size}}, found {type(data).__name__}")
    for url, entry in data.items():
        valid = isinstance(entry, dict) and isinstance(entry.get("sha256"), str) and isinstance(entry.get("size"), int)
        if not valid:
            raise InputError(lock, f"expected {{\"sha256\": ..., \"size\": ...}} for {url}, found {entry!r}")
    return data


def _check_or_record(lock: Path, url: str, sha256: str, size: int, output: Path) -> None:
    """Verify the download against the lock file's record of ``url``, or record it there."""
    with _exclusive(lock):
        data = read_lock(lock)
        entry = data.get(url)
        if entry is not None:
            if entry["sha256"] != sha256 or int(entry["size"]) != size:
                raise InputError(
                    output,
                    f"{url} changed since it was recorded in {lock}: expected sha256 {entry['sha256']} "
                    f"({entry['size']} bytes), found sha256 {sha256} ({size} bytes)",
                )
            log(f"matches the lock file {lock}: sha256 {sha256}")
            return
        data[url] = {"sha256": sha256, "size": size}
        with atomic_write(lock) as handle:
            json.dump(data, handle, indent=2, sort_keys=True)
            handle.write("\n")
        log(f"recorded in the lock file {lock}: sha256 {sha256}, {size} bytes")


# --------------------------------------------------------------------------------------------
# Download
# --------------------------------------------------------------------------------------------
def _open(source: str, timeout: float):
    parts = urllib.parse.urlsplit(source)
    request = urllib.request.Request(source, headers={"User-Agent": USER_AGENT, "Accept-Encoding": "identity"})
    if parts.hostname in LOOPBACK_HOSTS:  # a proxy can never reach this machine's loopback
        return urllib.request.build_opener(urllib.request.ProxyHandler({})).open(request, timeout=timeout)
    return urllib.request.urlopen(request, timeout=timeout)


def _retry_after(headers) -> float | None:
    value = headers.get("Retry-After") if headers is not None else None
    try:
        return min(float(value), MAX_RETRY_AFTER) if value is not None else None
    except ValueError:
        return None  # an HTTP date: use our own backoff


def _download_once(source: str, handle, timeout: float, want_md5: bool) -> tuple[int, str, str | None]:
    """Stream ``source`` into ``handle``; return (size, sha256, md5). Raises _Transient or InputError."""
    sha256 = hashlib.sha256()
    md5 = hashlib.md5(usedforsecurity=False) if want_md5 else None
    size = 0
    try:
        with _open(source, timeout) as response:
            length = response.headers.get("Content-Length")
            expected = int(length) if length and length.isdigit() else None
            while True:
                chunk = response.read(CHUNK)
                if not chunk:
                    break
                handle.write(chunk)
                sha256.update(chunk)
                if md5 is not None:
                    md5.update(chunk)
                size += len(chunk)
    except urllib.error.HTTPError as err:
        status = f"HTTP {err.code} {err.reason}".strip()
        if err.code >= 500 or err.code in RETRY_HTTP:
            raise _Transient(status, _retry_after(err.headers)) from None
        raise InputError(source, f"expected HTTP 200, found {status} (not retried)") from None
    except (urllib.error.URLError, http.client.HTTPException, ConnectionError, TimeoutError, ssl.SSLError) as err:
        reason = getattr(err, "reason", None) or err
        if isinstance(reason, (FileNotFoundError, IsADirectoryError, PermissionError)):  # file: mirrors
            raise InputError(source, f"expected a readable file, found {type(reason).__name__} (not retried)") from None
        raise _Transient(f"{type(err).__name__}: {reason}") from None
    if expected is not None and size != expected:
        raise _Transient(f"truncated transfer: expected {expected} bytes (Content-Length), received {size}")
    return size, sha256.hexdigest(), (md5.hexdigest() if md5 is not None else None)


def fetch(
    url: str,
    output: os.PathLike | str,
    sha256: str | None = None,
    md5: str | None = None,
    lock: os.PathLike | str | None = None,
    mirror: str | os.PathLike | None = None,
    retries: int = 4,
    backoff: float = 1.0,
    timeout: float = 60,
) -> dict:
    """Download ``url`` (through ``mirror``, if given) to ``output``, verified; return what was fetched.

    ``sha256`` / ``md5``: a published checksum the file must match. ``lock``: a JSON lock file;
    the real ``url`` is checked against its record, or recorded there on first download (also when
    a published checksum is given, so the lock file lists every input of the results).
    ``retries``: how many times a transient failure is retried (``retries + 1`` attempts in all),
    waiting ``backoff * 2**k`` seconds before retry k+1. Raises :class:`InputError` on failure;
    neither ``output`` nor a temporary file is left behind then.
    """
    expected = {}
    for name, value in (("sha256", sha256), ("md5", md5)):
        if value:
            value = value.strip().lower()
            if not HEX[name].match(value):
                raise ValueError(f"expected a hexadecimal {name} digest, found {value!r}")
            expected[name] = value
    if retries < 0:
        raise ValueError(f"retries must be >= 0, found {retries}")
    output = Path(output)
    source = mirror_url(url, mirror)
    log(f"fetch {url} -> {output}")
    if source != url:
        log(f"  from the mirror {source}")
    attempts = retries + 1
    for attempt in range(1, attempts + 1):
        try:
            with atomic_write(output, "wb", encoding=None) as handle:
                size, got_sha256, got_md5 = _download_once(source, handle, timeout, want_md5="md5" in expected)
                log(f"attempt {attempt}/{attempts}: {size} bytes, sha256 {got_sha256}")
                found = {"sha256": got_sha256, "md5": got_md5}
                for name, value in expected.items():
                    if found[name] != value:
                        raise InputError(
                            output,
                            f"checksum mismatch for {url}" + (f" (from {source})" if source != url else "")
                            + f": expected {name} {value}, found {name} {found[name]} ({size} bytes); nothing kept",
                        )
                    log(f"{name} matches the published checksum {value}")
                if lock is not None:
                    _check_or_record(Path(lock), url, got_sha256, size, output)
            log(f"done: {output}")
            return {"url": url, "source": source, "output": str(output), "size": size, "sha256": got_sha256,
                    **({"md5": got_md5} if got_md5 else {})}
        except _Transient as err:
            if attempt == attempts:
                raise InputError(
                    source, f"expected a complete download to {output}, found {err} after {attempts} attempt(s)"
                ) from None
            wait = err.retry_after if err.retry_after is not None else backoff * 2 ** (attempt - 1)
            log(f"attempt {attempt}/{attempts} failed ({err}); retrying in {wait:.2f} s")
            time.sleep(wait)
    raise AssertionError("unreachable")  # pragma: no cover


# --------------------------------------------------------------------------------------------
# Extraction
# --------------------------------------------------------------------------------------------
CORRUPT = (tarfile.TarError, zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, zlib.error, OSError)


def _archive_kind(archive: Path) -> str:
    """'zip' or 'tar', from the file's first bytes (the name is not trusted)."""
    with open(archive, "rb") as handle:
        head = handle.read(512)
    if head[:4] in (b"PK\x03\x04", b"PK\x05\x06", b"PK\x07\x08"):
        return "zip"
    if head[:2] == b"\x1f\x8b" or head[:3] == b"BZh" or head[:6] == b"\xfd7zXZ\x00":
        return "tar"  # compressed; tarfile finds out whether a tar is inside
    if len(head) >= 262 and head[257:262] == b"ustar":
        return "tar"
    raise InputError(archive, f"expected a .tar/.tar.gz/.tgz/.zip archive, found neither (first bytes {head[:8]!r})")


def _unsafe(archive: Path, name: str, found: str, expected: str = "a file or directory") -> InputError:
    return InputError(archive, f"unsafe member {name!r}: expected {expected}, found {found}")


def _safe_name(archive: Path, name: str) -> str:
    """The member's path relative to the destination, or InputError if it could escape it."""
    unified = name.replace("\\", "/")
    if unified.startswith("/") or re.match(r"^[a-zA-Z]:", unified):
        raise _unsafe(archive, name, "an absolute path", expected="a relative path")
    parts = [p for p in PurePosixPath(unified).parts if p not in ("", ".")]
    if ".." in parts:
        raise _unsafe(archive, name, "'..'", expected="a path inside the archive")
    return "/".join(parts)


def _select(archive: Path, names: list[str], patterns: Sequence[str] | None) -> set[str]:
    if not patterns:
        return set(names)
    chosen = set()
    for pattern in patterns:
        hits = {n for n in names if fnmatch.fnmatchcase(n, pattern)}
        if not hits:
            sample = ", ".join(sorted(names)[:8]) + (", ..." if len(names) > 8 else "")
            raise InputError(archive, f"expected a member matching {pattern!r}, found none (members: {sample})")
        chosen |= hits
    return chosen


class _WriteError(Exception):
    """Writing the extracted files failed (disk full, permissions): not the archive's fault."""


def _write_member(reader, target: Path, expected_size: int | None, archive: Path, name: str) -> None:
    written = 0
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        out = open(target, "wb")
    except OSError as err:
        raise _WriteError(f"cannot write {target}: {err}") from err
    with out:
        while True:
            chunk = reader.read(CHUNK)  # errors here are the archive's: truncated or corrupt
            if not chunk:
                break
            try:
                out.write(chunk)
            except OSError as err:
                raise _WriteError(f"cannot write {target}: {err}") from err
            written += len(chunk)
    if expected_size is not None and written != expected_size:
        raise InputError(
            archive, f"truncated or corrupt archive (member {name!r}: expected {expected_size} bytes, found {written})"
        )


def _extract_tar(archive: Path, tmp: Path, patterns) -> list[str]:
    with tarfile.open(archive, "r:*") as tar:
        members = tar.getmembers()  # reads to the end: a truncated archive fails here
        names = {}
        for member in members:
            rel = _safe_name(archive, member.name)
            if rel:
                names[rel] = member  # as tar itself: a later member of the same name wins
        chosen = _select(archive, list(names), patterns)
        for rel in names:
            member = names[rel]
            if rel not in chosen:
                continue
            if member.issym() or member.islnk():
                raise _unsafe(archive, member.name, f"a link to {member.linkname!r}")
            if not (member.isfile() or member.isdir()):
                raise _unsafe(archive, member.name, "a device, FIFO or other special file")
        extracted = []
        for rel, member in names.items():
            if rel not in chosen:
                continue
            if member.isdir():
                (tmp / rel).mkdir(parents=True, exist_ok=True)
                continue
            reader = tar.extractfile(member)
            _write_member(reader, tmp / rel, member.size, archive, member.name)
            extracted.append(rel)
        return extracted


def _extract_zip(archive: Path, tmp: Path, patterns) -> list[str]:
    with zipfile.ZipFile(archive) as zf:
        infos = {}
        for info in zf.infolist():
            rel = _safe_name(archive, info.filename)
            if rel:
                infos[rel] = info
        chosen = _select(archive, list(infos), patterns)
        for rel, info in infos.items():
            if rel not in chosen:
                continue
            mode = info.external_attr >> 16  # Unix mode, when the zip was made on Unix; 0 or bare permissions otherwise
            if stat.S_ISLNK(mode):
                raise _unsafe(archive, info.filename, "a symbolic link")
            if stat.S_IFMT(mode) and not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                raise _unsafe(archive, info.filename, "a special file")
        extracted = []
        for rel, info in infos.items():
            if rel not in chosen:
                continue
            if info.is_dir():
                (tmp / rel).mkdir(parents=True, exist_ok=True)
                continue
            with zf.open(info) as reader:  # checks the CRC at the end of the member
                _write_member(reader, tmp / rel, info.file_size, archive, info.filename)
            extracted.append(rel)
        return extracted


def extract(archive: os.PathLike | str, dest: os.PathLike | str, members: Sequence[str] | None = None) -> list[str]:
    """Safely unpack a .tar(.gz/.bz2/.xz)/.tgz/.zip ``archive`` into the directory ``dest``.

    The kind is detected from the content. Members with absolute paths or ``..`` components,
    links and special files are rejected (InputError naming the archive and the member) before
    anything is written. ``members``: glob patterns (fnmatch, ``*`` also matches ``/``) selecting
    what to extract; each must match at least one member. Files are unpacked into a temporary
    directory beside ``dest`` that replaces ``dest`` only when complete, so a failure leaves no
    partial ``dest``. Extracted files get the current time as mtime (not the archive's), so
    Snakemake sees them as newer than the archive. Returns the extracted files' relative paths.
    """
    archive, dest = Path(archive), Path(dest)
    if not archive.is_file():
        raise InputError(archive, "expected an archive file, found nothing")
    kind = _archive_kind(archive)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.parent / f".{dest.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    tmp.mkdir()
    try:
        try:
            extracted = (_extract_zip if kind == "zip" else _extract_tar)(archive, tmp, members)
        except InputError:
            raise
        except _WriteError as err:
            raise OSError(str(err)) from err.__cause__
        except CORRUPT as err:
            raise InputError(archive, f"truncated or corrupt archive ({type(err).__name__}: {err})") from None
        old = None
        if dest.exists() or dest.is_symlink():
            old = dest.parent / f".{dest.name}.{os.getpid()}.{secrets.token_hex(4)}.old"
            os.replace(dest, old)
        try:
            os.replace(tmp, dest)
        except BaseException:
            if old is not None:
                os.replace(old, dest)
            raise
        if old is not None:
            shutil.rmtree(old) if old.is_dir() and not old.is_symlink() else old.unlink()
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    log(f"extracted {len(extracted)} file(s) from {archive} ({kind}) into {dest}")
    return extracted


# --------------------------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------------------------
@cli_errors
def main(argv=None) -> int:
    parser = argument_parser("docnmt.corpora.download", __doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)

    get = commands.add_parser("fetch", help="download one file, verified")
    get.add_argument("--url", required=True, help="the real URL (the lock file's key)")
    get.add_argument("--output", required=True, type=Path)
    digest = get.add_mutually_exclusive_group()
    digest.add_argument("--sha256", help="published sha256 the file must match")
    digest.add_argument("--md5", help="published md5 the file must match (e.g. sacrebleu's for WMT test sets)")
    get.add_argument("--lock", type=Path, help="JSON lock file: verify against, or record, the sha256 of --url")
    get.add_argument(
        "--mirror",
        default=os.environ.get("DOCNMT_MIRROR") or None,
        help="fetch https://HOST/PATH from MIRROR/HOST/PATH (URL or directory; default: $DOCNMT_MIRROR)",
    )
    get.add_argument("--retries", type=NONNEGATIVE_INT, default=4, help="retries of transient failures (default 4)")
    get.add_argument("--backoff", type=NONNEGATIVE, default=1.0, help="first wait in seconds, doubled per retry (default 1)")
    get.add_argument("--timeout", type=POSITIVE, default=60, help="socket timeout in seconds (default 60)")

    unpack = commands.add_parser("extract", help="unpack an archive safely")
    unpack.add_argument("--archive", required=True, type=Path)
    unpack.add_argument("--dest", required=True, type=Path)
    unpack.add_argument("--members", nargs="+", metavar="PATTERN", help="glob patterns of the members to extract")

    args = parser.parse_args(argv)
    if args.command == "fetch":
        for name in ("sha256", "md5"):
            value = getattr(args, name)
            if value and not HEX[name].match(value.strip().lower()):
                parser.error(f"--{name}: expected a hexadecimal {name} digest, found {value!r}")
        if args.retries < 0:
            parser.error("--retries must be at least 0")
        fetch(args.url, args.output, sha256=args.sha256, md5=args.md5, lock=args.lock, mirror=args.mirror,
              retries=args.retries, backoff=args.backoff, timeout=args.timeout)
    else:
        extract(args.archive, args.dest, members=args.members)
    return 0


if __name__ == "__main__":
    sys.exit(main())

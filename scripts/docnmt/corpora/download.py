"""Download a source's file: every location in order, mirrors, checksums, a lock file, retries; safe extraction.

Every file is downloaded to a temporary file beside its target and renamed into place only after
it was verified, so a failed or interrupted download never leaves a file that Snakemake (or a
parser) would take for the real one.

Locations (:mod:`docnmt.corpora.sources`): a source's ``url`` is tried first, then its ``mirrors`` in order, each
after the one before failed with anything but a checksum mismatch (a 404, 403 or 410, an unknown host, a refused
connection, retries exhausted). ``gdrive:ID`` locations go through gdown (:mod:`docnmt.corpora.gdrive`). The log
names every location tried with its outcome; where all fail, the error has a line per location and one that says
how to bring the file by hand (``sources.NAME.local``). A source's ``local`` file takes precedence over every
location and downloads nothing: it is verified as a download is, and the output links to it.

Verification, the same at every location:

- a published checksum (``sha256``, or ``md5`` where that is what is published, as sacrebleu
  records for the WMT test archives) must match;
- with a lock file (JSON: source -> location -> ``{"sha256": ..., "size": ...}``, kept with the results), the
  first download from a location records its sha256 and size, and every later download from that location must
  match them. The key is the real location, never the mirror's, so a lock file written with one mirror verifies
  downloads from any other. A lock file of 0.1 (real URL -> ``{sha256, size}``) is read as it was written.

Mirrors: institutes keep copies of these files under host-named folders. With ``--mirror M``,
``https://HOST/PATH`` is fetched from ``M/HOST/PATH`` before any location itself; ``M`` may be an http(s) or file
URL, or a local directory.

Transient failures (connection errors and resets, timeouts, HTTP 5xx and 429, a body shorter than
its Content-Length) are retried with exponential backoff; other HTTP errors (404, 403, ...) fail
that location at once.

CLI::

    python -m docnmt.corpora.download fetch (--url URL [--sha256 X | --md5 X] [--source NAME] | --spec JSON)
                                    --output FILE [--origin FILE] [--lock LOCK.json] [--mirror M] [--retries N]
                                    [--backoff S] [--timeout S]
    python -m docnmt.corpora.download extract --archive FILE --dest DIR
                                    [--members PATTERN ... | --origin FILE | --specs JSON]
"""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import json
import os
import re
import secrets
import ssl
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Iterator

from ..textio import InputError, atomic_write, cli_errors, file_digest
from ..manual import argument_parser
from ..option_ranges import NONNEGATIVE, NONNEGATIVE_INT, POSITIVE
from . import gdrive
from .archives import extract, extract_specs, log  # noqa: F401 - extract is this module's API since 0.1
from .sources import Location, Source, SourceError, hex_digest, single_location, source_from_json

try:  # POSIX: serialise concurrent updates of one lock file (Snakemake runs downloads in parallel)
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None

CHUNK = 1 << 20
USER_AGENT = "docnmt-download/1 (+https://github.com; Python urllib)"
RETRY_HTTP = {408, 425, 429}  # plus every 5xx
MAX_RETRY_AFTER = 60.0  # seconds; a server's Retry-After is honoured up to this
LOOPBACK_HOSTS = {"127.0.0.1", "localhost", "::1"}


class _Transient(Exception):
    """A failure worth retrying: the next attempt may succeed."""

    def __init__(self, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


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
    """The lock file as a dict (empty when the file does not exist yet): source -> location -> {sha256, size}, and
    0.1's entries (real URL -> {sha256, size}) as they were written."""
    lock = Path(lock)
    if not lock.exists():
        return {}
    try:
        data = json.loads(lock.read_text(encoding="utf-8") or "{}")
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise InputError(lock, f"expected a JSON lock file, found invalid JSON ({err})") from None
    if not isinstance(data, dict):
        raise InputError(lock, f"expected a JSON object mapping sources to their locations' {{sha256, size}}, "
                               f"found {type(data).__name__}")

    def record(entry) -> bool:
        return isinstance(entry, dict) and isinstance(entry.get("sha256"), str) and isinstance(entry.get("size"), int)

    for key, entry in data.items():
        if not (record(entry) or (isinstance(entry, dict) and entry and all(map(record, entry.values())))):
            raise InputError(lock, f"expected {{location: {{\"sha256\": ..., \"size\": ...}}}} for {key}, "
                                   f"found {entry!r}")
    return data


def _is_record(entry) -> bool:
    """Whether a lock entry is one file's ``{sha256, size}`` (a 0.1 lock's entry under a URL), not a source's."""
    return isinstance(entry, dict) and "sha256" in entry


def _locations(data: dict, source: str) -> dict:
    """The lock's records of a source's locations (none yet: empty)."""
    entry = data.get(source)
    return entry if isinstance(entry, dict) and not _is_record(entry) else {}


def recorded_entry(data: dict, source: str, location: str) -> dict | None:
    """The lock's record of ``location`` of ``source`` (a 0.1 lock keyed it by the URL alone)."""
    if location in _locations(data, source):
        return _locations(data, source)[location]
    legacy = data.get(location)
    return legacy if _is_record(legacy) else None


def _check_or_record(lock: Path, source: str, location: str, sha256: str, size: int, output: Path) -> None:
    """Verify the file against the lock's record of this location of the source, or record it there."""
    with _exclusive(lock):
        data = read_lock(lock)
        entry = recorded_entry(data, source, location)
        if entry is not None:
            if entry["sha256"] != sha256 or int(entry["size"]) != size:
                raise InputError(
                    output,
                    f"{location} changed since it was recorded in {lock}: expected sha256 {entry['sha256']} "
                    f"({entry['size']} bytes), found sha256 {sha256} ({size} bytes)",
                )
            log(f"matches the lock file {lock}: sha256 {sha256}")
            if _is_record(data.get(location)):  # 0.1's key: moved under the source
                _write_lock(lock, data, source, location, entry)
            return
        differs = [other for other, rec in _locations(data, source).items() if rec["sha256"] != sha256]
        _write_lock(lock, data, source, location, {"sha256": sha256, "size": size})
        log(f"recorded in the lock file {lock} under {source}, {location}: sha256 {sha256}, {size} bytes"
            + (f" (other bytes than recorded for {', '.join(differs)})" if differs else ""))


def _write_lock(lock: Path, data: dict, source: str, location: str, record: dict) -> None:
    """Write ``record`` under the source and location, in place of a 0.1 entry under the location alone."""
    locations = _locations(data, source)
    if _is_record(data.get(location)):
        del data[location]
    data[source] = {**locations, location: record}
    with atomic_write(lock) as handle:
        json.dump(data, handle, indent=2, sort_keys=True)
        handle.write("\n")


# --------------------------------------------------------------------------------------------
# Download
# --------------------------------------------------------------------------------------------
def open_url(source: str, timeout: float, method: str = "GET", headers: dict | None = None):
    """urllib's response for ``source`` (no proxy for a loopback address); raises urllib's errors."""
    parts = urllib.parse.urlsplit(source)
    request = urllib.request.Request(source, method=method, headers={
        "User-Agent": USER_AGENT, "Accept-Encoding": "identity", **(headers or {})})
    if parts.hostname in LOOPBACK_HOSTS:  # a proxy can never reach this machine's loopback
        return urllib.request.build_opener(urllib.request.ProxyHandler({})).open(request, timeout=timeout)
    return urllib.request.urlopen(request, timeout=timeout)


def _retry_after(headers) -> float | None:
    value = headers.get("Retry-After") if headers is not None else None
    try:
        return min(float(value), MAX_RETRY_AFTER) if value is not None else None
    except ValueError:
        return None  # an HTTP date: use our own backoff


def _retried(code: int) -> bool:
    """Whether an HTTP status is worth another attempt at the same location (5xx, 408, 425, 429)."""
    return code >= 500 or code in RETRY_HTTP


class _Failed(Exception):
    """This location cannot serve the file (404, refused, retries exhausted): the next one is tried."""


def _download_url(address: str, handle, timeout: float, hashers) -> int:
    """Stream an http(s) or file URL into ``handle``, feeding ``hashers``; its size. Raises _Transient or _Failed."""
    size = 0
    try:
        with open_url(address, timeout) as response:
            length = response.headers.get("Content-Length")
            expected = int(length) if length and length.isdigit() else None
            while True:
                chunk = response.read(CHUNK)
                if not chunk:
                    break
                handle.write(chunk)
                for hasher in hashers:
                    hasher.update(chunk)
                size += len(chunk)
    except urllib.error.HTTPError as err:
        status = f"HTTP {err.code} {err.reason}".strip()
        if _retried(err.code):
            raise _Transient(status, _retry_after(err.headers)) from None
        raise _Failed(f"expected HTTP 200, found {status} (not retried)") from None
    except (urllib.error.URLError, http.client.HTTPException, ConnectionError, TimeoutError, ssl.SSLError) as err:
        reason = getattr(err, "reason", None) or err
        if isinstance(reason, (FileNotFoundError, IsADirectoryError, PermissionError)):  # file: mirrors
            raise _Failed(f"expected a readable file, found {type(reason).__name__} (not retried)") from None
        raise _Transient(f"{type(err).__name__}: {reason}") from None
    if expected is not None and size != expected:
        raise _Transient(f"truncated transfer: expected {expected} bytes (Content-Length), received {size}")
    return size


def _download_once(location: Location, address: str, handle, timeout: float, want_md5: bool
                   ) -> tuple[int, str, str | None]:
    """One attempt at one location: (size, sha256, md5). Raises _Transient or _Failed."""
    sha256 = hashlib.sha256()
    md5 = hashlib.md5(usedforsecurity=False) if want_md5 else None
    hashers = [h for h in (sha256, md5) if h is not None]
    if location.kind == "gdrive":
        try:
            size = gdrive.download(location.gdrive_id, handle, hashers, timeout)
        except gdrive.DriveError as err:
            if err.code is not None:
                raise (_Transient(str(err)) if _retried(err.code) else _Failed(f"{err} (not retried)")) from None
            raise (_Transient if err.transient else _Failed)(str(err)) from None
    else:
        size = _download_url(address, handle, timeout, hashers)
    return size, sha256.hexdigest(), (md5.hexdigest() if md5 is not None else None)


def _attempts(source: Source, mirror) -> list[tuple[Location, str]]:
    """(location, address) in the order tried: the mirror's copy of each http(s) location first, then each
    location itself."""
    mirrored = [(loc, mirror_url(loc.url, mirror)) for loc in source.locations if loc.kind == "http"] if mirror else []
    direct = [(loc, loc.url) for loc in source.locations]
    return mirrored + direct


def _fetch_location(source: Source, location: Location, address: str, output: Path, lock, retries: int,
                    backoff: float, timeout: float) -> dict:
    """The file from one location, verified; raises _Failed where this location cannot serve it, InputError where
    its file is not the expected one (a checksum or lock mismatch: no other location is tried then)."""
    expected = location.published
    attempts = retries + 1
    for attempt in range(1, attempts + 1):
        try:
            with atomic_write(output, "wb", encoding=None) as handle:
                size, got_sha256, got_md5 = _download_once(location, address, handle, timeout, "md5" in expected)
                log(f"  attempt {attempt}/{attempts}: {size} bytes, sha256 {got_sha256}")
                found = {"sha256": got_sha256, "md5": got_md5}
                for name, value in expected.items():
                    if found[name] != value:
                        raise InputError(
                            output,
                            f"checksum mismatch for {location.url}"
                            + (f" (from {address})" if address != location.url else "")
                            + f": expected {name} {value}, found {name} {found[name]} ({size} bytes); nothing kept",
                        )
                    log(f"  {name} matches the published checksum {value}")
                if lock is not None:
                    _check_or_record(Path(lock), source.name, location.url, got_sha256, size, output)
            return {"url": location.url, "source": address, "output": str(output), "size": size,
                    "sha256": got_sha256, **({"md5": got_md5} if got_md5 else {})}
        except _Transient as err:
            if attempt == attempts:
                raise _Failed(f"{err}, after {attempts} attempt(s)") from None
            wait = err.retry_after if err.retry_after is not None else backoff * 2 ** (attempt - 1)
            log(f"  attempt {attempt}/{attempts} failed ({err}); retrying in {wait:.2f} s")
            time.sleep(wait)
    raise AssertionError("unreachable")  # pragma: no cover


def _how_to_bring(source: Source) -> str:
    where = f" from {source.page}" if source.page else ""
    return (f"get {source.expected()}{where} by hand and set sources.{source.name}.local to its path "
            f"(docs/data.md, \"A file of your own\")")


def _use_local(source: Source, output: Path, lock) -> tuple[dict, Location | None]:
    """The user's own file of a source (``local``), verified as a download is, linked at ``output``."""
    path = Path(source.local).resolve()
    if not path.exists():
        raise InputError(source.local, f"expected {source.expected()} (sources.{source.name}.local), found nothing")
    if path.is_dir():
        what = "a folder of its archive's layout is read by the extract step" if source.members else \
            "this source is one file, not an archive"
        raise InputError(source.local, f"expected {source.expected()}, found a folder ({what})")
    log(f"sources.{source.name}.local: {path} (nothing is downloaded)")
    size = path.stat().st_size
    published = [loc for loc in source.locations if loc.published]
    found = {algo: file_digest(path, algorithm=algo)  # md5 only where a location publishes one
             for algo in ("sha256", "md5") if algo == "sha256" or any(algo in loc.published for loc in published)}
    matched = next((loc for loc in published if all(found.get(a) == v for a, v in loc.published.items())), None)
    if published and matched is None:
        wanted = "; ".join(f"{', '.join(f'{a} {v}' for a, v in loc.published.items())} ({loc.url})"
                           for loc in published)
        raise InputError(source.local, f"expected {source.expected()} or another location's file ({wanted}), "
                                       f"found sha256 {found['sha256']} ({size:,} bytes); nothing extracted")
    if matched is not None:
        log(f"  matches the published checksum of {matched.url}")
    if source.members:  # every member is there, before anything is recorded
        import tempfile

        with tempfile.TemporaryDirectory(prefix=".local-check.", dir=output.parent) as scratch:
            extract_specs(path, Path(scratch) / "members", source.specs_for(matched))
    if lock is not None:
        _check_or_record(Path(lock), source.name, f"local:{path}", found["sha256"], size, Path(source.local))
    link = output.parent / f".{output.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    os.symlink(path, link)
    os.replace(link, output)
    log(f"done: {output} -> {path}")
    return ({"url": f"local:{path}", "source": str(path), "output": str(output), "size": size,
             "sha256": found["sha256"]}, matched)


def fetch_source(source: Source, output: os.PathLike | str, lock: os.PathLike | str | None = None,
                 mirror: str | os.PathLike | None = None, retries: int = 4, backoff: float = 1.0, timeout: float = 60,
                 origin: os.PathLike | str | None = None) -> dict:
    """A source's file at ``output``: its ``local`` file, or the first of its locations that serves it, verified.

    ``origin``: a JSON file that records where the file came from and the member specs of that location's archive
    (what :func:`extract_origin` unpacks). Raises :class:`InputError` where the file is not the expected one, or no
    location serves it (one line per location, and how to bring the file by hand); nothing is left behind then.
    """
    if retries < 0:
        raise ValueError(f"retries must be >= 0, found {retries}")
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    log(f"fetch {source.name} -> {output}")
    if source.local is not None:
        result, location = _use_local(source, output, lock)
    else:
        attempts = _attempts(source, mirror)
        failures = []
        for number, (location, address) in enumerate(attempts, start=1):
            via = f" (the mirror's copy of {location.url})" if address != location.url else ""
            log(f"location {number}/{len(attempts)}: {address}{via}")
            try:
                result = _fetch_location(source, location, address, output, lock, retries, backoff, timeout)
                log(f"location {number}/{len(attempts)}: served, {result['size']} bytes")
                break
            except _Failed as err:
                log(f"location {number}/{len(attempts)}: failed: {err}")
                failures.append(f"  {address}{via}: {err}")
        else:
            raise InputError(output, "\n".join([f"expected {source.name}'s file from one of its "
                                                f"{len(attempts)} location(s), found none serving it:", *failures,
                                                f"  what to do: {_how_to_bring(source)}"]))
    if origin is not None:
        with atomic_write(origin) as handle:
            json.dump({"source": source.name, **result, "members": source.specs_for(location)}, handle, indent=1,
                      sort_keys=True)
            handle.write("\n")
    log(f"done: {output}")
    return result


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
    name: str | None = None,
) -> dict:
    """Download one ``url`` (through ``mirror``, if given) to ``output``, verified; return what was fetched.

    ``sha256`` / ``md5``: a published checksum the file must match. ``lock``: a JSON lock file; the file is checked
    against its record of ``url`` under the source ``name`` (default: the URL), or recorded there on first download
    (also when a published checksum is given, so the lock file lists every input of the results). ``retries``: how
    many times a transient failure is retried (``retries + 1`` attempts in all), waiting ``backoff * 2**k`` seconds
    before retry k+1. Raises :class:`InputError` on failure; neither ``output`` nor a temporary file is left behind
    then.
    """
    source = single_location(url, Path(output).name, sha256, md5, name)  # a malformed checksum: a ValueError
    return fetch_source(source, output, lock=lock, mirror=mirror, retries=retries, backoff=backoff, timeout=timeout)


def extract_origin(archive: os.PathLike | str, dest: os.PathLike | str, origin: os.PathLike | str) -> list[str]:
    """Unpack the members an origin file (written by :func:`fetch_source`) names from ``archive``."""
    try:
        members = json.loads(Path(origin).read_text(encoding="utf-8"))["members"]
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise InputError(origin, f"expected the JSON a download writes with its members, found {err!r}") from None
    return extract_specs(archive, dest, members)


# --------------------------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------------------------
@cli_errors
def main(argv=None) -> int:
    parser = argument_parser("docnmt.corpora.download", __doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)

    get = commands.add_parser("fetch", help="download one source's file, verified, from the first location serving it")
    what = get.add_mutually_exclusive_group(required=True)
    what.add_argument("--url", help="the one real URL of the file (the lock file's key)")
    what.add_argument("--spec", help="the source's declaration as JSON: name, url, mirrors (further locations), "
                                     "sha256/md5, members, filename, page, local (what the workflow passes)")
    digest = get.add_mutually_exclusive_group()
    digest.add_argument("--sha256", help="with --url: published sha256 the file must match")
    digest.add_argument("--md5", help="with --url: published md5 the file must match (e.g. sacrebleu's for WMT test "
                                      "sets)")
    get.add_argument("--source", help="with --url: the source's name, its key in the lock file (default: the URL)")
    get.add_argument("--output", required=True, type=Path)
    get.add_argument("--origin", type=Path, help="write where the file came from and its archive's member specs here "
                                                 "(JSON; extract --origin reads it)")
    get.add_argument("--lock", type=Path, help="JSON lock file: verify against, or record, each location's sha256")
    get.add_argument(
        "--mirror",
        default=os.environ.get("DOCNMT_MIRROR") or None,
        help="try https://HOST/PATH at MIRROR/HOST/PATH first (URL or directory; default: $DOCNMT_MIRROR)",
    )
    get.add_argument("--retries", type=NONNEGATIVE_INT, default=4,
                     help="retries of transient failures at each location (default 4)")
    get.add_argument("--backoff", type=NONNEGATIVE, default=1.0, help="first wait in seconds, doubled per retry (default 1)")
    get.add_argument("--timeout", type=POSITIVE, default=60, help="socket timeout in seconds (default 60)")

    unpack = commands.add_parser("extract", help="unpack an archive (or a folder of its layout) safely")
    unpack.add_argument("--archive", required=True, type=Path, help="the archive, or a folder of its layout")
    unpack.add_argument("--dest", required=True, type=Path)
    chosen = unpack.add_mutually_exclusive_group()
    chosen.add_argument("--members", nargs="+", metavar="PATTERN", help="glob patterns of the members to extract")
    chosen.add_argument("--origin", type=Path, help="the member specs of fetch --origin's file")
    chosen.add_argument("--specs", help="member specs as JSON: destination -> path, or list of paths through archives "
                                        "inside archives ('**/NAME' found at any depth)")

    args = parser.parse_args(argv)
    if args.command == "fetch":
        if args.spec is not None:
            if args.sha256 or args.md5 or args.source:
                parser.error("--sha256, --md5 and --source go with --url; --spec declares them itself")
            try:
                source = source_from_json(args.spec)
            except SourceError as err:
                parser.error(str(err))
        else:
            for name in ("sha256", "md5"):
                try:
                    hex_digest(name, getattr(args, name))
                except SourceError as err:
                    parser.error(f"--{name}: {err}")
            source = single_location(args.url, args.output.name, args.sha256, args.md5, args.source)
        fetch_source(source, args.output, lock=args.lock, mirror=args.mirror, retries=args.retries,
                     backoff=args.backoff, timeout=args.timeout, origin=args.origin)
    elif args.origin is not None:
        extract_origin(args.archive, args.dest, args.origin)
    elif args.specs is not None:
        try:
            specs = json.loads(args.specs)
        except json.JSONDecodeError as err:
            parser.error(f"--specs: expected a JSON object, found invalid JSON ({err})")
        if not isinstance(specs, dict):
            parser.error("--specs: expected a JSON object of destinations and member specs")
        try:
            extract_specs(args.archive, args.dest, specs)
        except ValueError as err:
            parser.error(f"--specs: {err}")
    else:
        extract(args.archive, args.dest, members=args.members)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Whether each location of a source serves its file now, asked for headers only (nothing is downloaded).

An http(s) location gets a HEAD request; where HEAD is refused (405, 501, or a 403 some hosts answer HEAD with), a
GET of its first byte (``Range: bytes=0-0``), whose ``Content-Range`` gives the size. A ``file:`` location is
looked at on disk. A ``gdrive:`` location goes through gdown's own resolution of Drive's pages
(:func:`docnmt.corpora.gdrive.probe`), reading at most its first chunk. A mirror's copy of a location is asked as
the location is, and reported as the mirror's; a ``local`` file or folder is reported as such.

The size found is compared with what is recorded for the location: the lock file's record of it, else the size the
config declares.
"""

from __future__ import annotations

import http.client
import os
import re
import ssl
import urllib.error
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

from . import gdrive
from .download import recorded_entry, mirror_url, open_url
from .sources import Location, Source

#: HEAD refused: ask for the first byte instead.
HEAD_REFUSED = {403, 405, 501}
CONTENT_RANGE = re.compile(r"bytes\s+\d+-\d+/(\d+)")


@dataclass(frozen=True)
class Row:
    """One location of one source, as found."""

    source: str
    kind: str  # url, mirror, gdrive, local
    location: str
    live: bool
    status: str
    size: int | None = None
    recorded: int | None = None

    @property
    def size_check(self) -> str:
        """'matches', 'differs' or '-' (nothing recorded, or no size announced)."""
        if self.size is None or self.recorded is None:
            return "-"
        return "matches" if self.size == self.recorded else "differs"


def _head(address: str, timeout: float) -> tuple[bool, str, int | None]:
    """(live, status, size) of an http(s) or file URL."""
    parts = urllib.parse.urlsplit(address)
    if parts.scheme == "file":
        path = Path(urllib.parse.unquote(parts.path))
        return (True, "present", path.stat().st_size) if path.is_file() else (False, "missing", None)
    for method, headers in (("HEAD", {}), ("GET", {"Range": "bytes=0-0"})):
        try:
            with open_url(address, timeout, method=method, headers=headers) as response:
                if response.status == 206:
                    match = CONTENT_RANGE.match(response.headers.get("Content-Range", ""))
                    return True, f"HTTP 206 ({method})", int(match.group(1)) if match else None
                length = response.headers.get("Content-Length")
                return True, f"HTTP {response.status} ({method})", int(length) if length and length.isdigit() else None
        except urllib.error.HTTPError as err:
            if method == "HEAD" and err.code in HEAD_REFUSED:
                continue
            return False, f"HTTP {err.code} {err.reason}".strip(), None
        except (urllib.error.URLError, http.client.HTTPException, ConnectionError, TimeoutError, ssl.SSLError,
                OSError) as err:
            reason = getattr(err, "reason", None) or err
            if isinstance(reason, ConnectionRefusedError):
                return False, "refused", None
            return False, f"{type(reason).__name__}: {reason}", None
    raise AssertionError("unreachable")  # pragma: no cover


def _drive(location: Location, timeout: float) -> tuple[bool, str, int | None]:
    try:
        size = gdrive.probe(location.gdrive_id, timeout)
    except gdrive.DriveError as err:
        return False, str(err), None
    return True, "resolved by gdown", size


def _recorded_size(lock: dict, source: str, key: str, declared: int | None) -> int | None:
    entry = recorded_entry(lock, source, key)
    return int(entry["size"]) if entry is not None else declared


def probe_source(source: Source, mirror=None, lock: dict | None = None, timeout: float = 20) -> list[Row]:
    """A row for the source's ``local`` file (where set), each mirror's copy and each location, in the order a
    download tries them."""
    lock = lock or {}
    rows = []
    if source.local is not None:
        path = Path(source.local).resolve()
        recorded = _recorded_size(lock, source.name, f"local:{path}", None)
        if path.is_dir():
            rows.append(Row(source.name, "local", str(path), True, "folder"))
        elif path.is_file():
            rows.append(Row(source.name, "local", str(path), True, "present", os.path.getsize(path), recorded))
        else:
            rows.append(Row(source.name, "local", str(path), False, "missing"))
    if mirror:
        for location in source.locations:
            if location.kind == "http":
                live, status, size = _head(mirror_url(location.url, mirror), timeout)
                recorded = _recorded_size(lock, source.name, location.url, location.size)
                rows.append(Row(source.name, "mirror", mirror_url(location.url, mirror), live, status, size, recorded))
    for location in source.locations:
        live, status, size = _drive(location, timeout) if location.kind == "gdrive" else _head(location.url, timeout)
        recorded = _recorded_size(lock, source.name, location.url, location.size)
        kind = "gdrive" if location.kind == "gdrive" else "url"
        rows.append(Row(source.name, kind, location.url, live, status, size, recorded))
    return rows


def table(rows: list[Row]) -> str:
    """The rows as an aligned text table: source, location, status, size, recorded size and whether they match."""
    header = ("source", "kind", "location", "status", "size", "recorded", "size check")
    body = [(r.source, r.kind, r.location, ("live: " if r.live else "dead: ") + r.status,
             f"{r.size:,}" if r.size is not None else "-", f"{r.recorded:,}" if r.recorded is not None else "-",
             r.size_check) for r in rows]
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *body)]
    lines = ["  ".join(str(cell).ljust(width) for cell, width in zip(line, widths)).rstrip()
             for line in (header, tuple("-" * w for w in widths), *body)]
    return "\n".join(lines)

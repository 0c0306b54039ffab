"""A download source as the config declares it (``sources.NAME``): its locations in the order they are tried, the
checksum each is verified with, the archive members the parsers read, and a file of the user's own.

A *location* is where the file (or another archive holding the same members) can be had:

- ``https://HOST/PATH`` (or ``http://``, ``file://``): fetched with urllib;
- ``gdrive:ID``: a Google Drive file, fetched through gdown (:mod:`docnmt.corpora.gdrive`).

``sources.NAME.url`` is the first location, ``sources.NAME.mirrors`` the further ones, tried in order after the one
before failed with anything but a checksum mismatch. A further location is a URL (the same file: the source's
published checksum applies), or ``{url, sha256, md5, members, size}`` for another file: its own checksum (none: the
lock file records it) and, where its layout differs, its own members by the same roles.

``sources.NAME.local`` (a file, or a folder of the archive's layout) takes precedence over every location: nothing is
downloaded.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from urllib.parse import urlsplit

from .archives import spec_destination, spec_problem

GDRIVE = "gdrive:"
#: A Google Drive file id: letters, digits, '-' and '_'.
GDRIVE_ID = re.compile(r"^[A-Za-z0-9_-]{10,}$")
HEX = {"sha256": re.compile(r"^[0-9a-f]{64}$"), "md5": re.compile(r"^[0-9a-f]{32}$")}


class SourceError(ValueError):
    """A source's declaration that cannot work; the message names the config key."""


@dataclass(frozen=True)
class Location:
    """One place a source's file can be had, with what verifies it."""

    url: str
    sha256: str | None = None
    md5: str | None = None
    size: int | None = None
    #: role -> member spec, where this location's archive is laid out otherwise than the source's (None: the same)
    members: dict | None = None

    @property
    def kind(self) -> str:
        """'gdrive', 'http' or 'file'."""
        if self.url.startswith(GDRIVE):
            return "gdrive"
        return "file" if urlsplit(self.url).scheme == "file" else "http"

    @property
    def gdrive_id(self) -> str:
        return self.url[len(GDRIVE):]

    @property
    def published(self) -> dict[str, str]:
        """The checksums published for this location's file (algorithm -> digest)."""
        return {algo: value for algo, value in (("sha256", self.sha256), ("md5", self.md5)) if value}


@dataclass(frozen=True)
class Source:
    """``sources.NAME``: its locations in order, its members by role, and what a person needs to get it by hand."""

    name: str
    locations: tuple[Location, ...]
    filename: str
    members: dict = field(default_factory=dict)
    page: str | None = None
    local: str | None = None
    checksum_source: str | None = None

    @property
    def first(self) -> Location:
        return self.locations[0]

    def destinations(self) -> dict[str, str]:
        """role -> where its member lands in the extracted folder (from the source's own member specs)."""
        return {role: spec_destination(spec) for role, spec in self.members.items()}

    def specs_for(self, location: Location | None) -> dict[str, object]:
        """destination -> the member spec to find it with in ``location``'s archive (the source's where the location
        declares none)."""
        own = location.members if location is not None and location.members else self.members
        return {spec_destination(self.members[role]): own[role] for role in self.members}

    def expected(self) -> str:
        """What a person must bring for ``local``: the file's name, and its size and checksum where known."""
        facts = [f"the file {self.filename}"]
        if self.first.size:
            facts.append(f"{self.first.size:,} bytes")
        facts += [f"{algo} {value}" for algo, value in self.first.published.items()]
        return ", ".join(facts)

    def to_json(self) -> str:
        """The declaration as the download CLI's ``--spec`` takes it."""
        return json.dumps({"name": self.name, "url": self.first.url, "sha256": self.first.sha256,
                           "md5": self.first.md5, "size": self.first.size, "filename": self.filename,
                           "members": self.members, "page": self.page, "local": self.local,
                           "mirrors": [location_entry(loc) for loc in self.locations[1:]]}, sort_keys=True)


def location_entry(location: Location) -> dict:
    return {key: value for key, value in (("url", location.url), ("sha256", location.sha256), ("md5", location.md5),
                                          ("size", location.size), ("members", location.members)) if value}


def _location_problem(url) -> str | None:
    if not isinstance(url, str) or not url.strip():
        return f"expected a URL or gdrive:ID, found {url!r}"
    if url.startswith(GDRIVE):
        return None if GDRIVE_ID.match(url[len(GDRIVE):]) else f"expected gdrive: and a Drive file id, found {url!r}"
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https", "file") or (parts.scheme != "file" and not parts.netloc):
        return f"expected an http(s):// or file:// URL or gdrive:ID, found {url!r}"
    return None


def hex_digest(algo: str, value) -> str | None:
    """A published checksum as the verification compares it (lowercase hex), None where none is given;
    :class:`SourceError` where it is no ``algo`` digest."""
    if value in (None, ""):
        return None
    value = str(value).strip().lower()
    if not HEX[algo].match(value):
        raise SourceError(f"expected a hexadecimal {algo} digest, found {value!r}")
    return value


def _digest(key: str, algo: str, value) -> str | None:
    try:
        return hex_digest(algo, value)
    except SourceError as err:
        raise SourceError(f"{key}.{algo}: {err}") from None


def single_location(url: str, filename: str, sha256: str | None = None, md5: str | None = None,
                    name: str | None = None) -> Source:
    """A source of one location, named by its URL where no name is given (the download CLI's ``--url``)."""
    return Source(name or url, (Location(url, hex_digest("sha256", sha256), hex_digest("md5", md5)),), filename)


def _members(key: str, members, roles=None) -> dict:
    if members is None:
        return {}
    if not isinstance(members, dict):
        raise SourceError(f"{key}.members: expected a mapping of roles to member paths, found {members!r}")
    for role, spec in members.items():
        problem = spec_problem(spec)
        if problem:
            raise SourceError(f"{key}.members.{role}: {problem}")
    if roles is not None and set(members) != set(roles):
        raise SourceError(f"{key}.members: expected the roles of the source's members ({', '.join(sorted(roles))}), "
                          f"found {', '.join(sorted(members)) or 'none'}")
    return {role: (spec if isinstance(spec, str) else list(spec)) for role, spec in members.items()}


def default_filename(url: str) -> str | None:
    """The file name a URL gives (None for gdrive:, which names none)."""
    if url.startswith(GDRIVE):
        return None
    return PurePosixPath(urlsplit(url).path).name or None


def source_from_config(name: str, entry: dict) -> Source:
    """``sources.NAME`` as a :class:`Source`; :class:`SourceError` naming the key where it cannot work."""
    key = f"sources.{name}"
    url = entry.get("url")
    problem = _location_problem(url)
    if problem:
        raise SourceError(f"{key}.url: {problem}")
    members = _members(key, entry.get("members"))
    first = Location(url.strip(), _digest(key, "sha256", entry.get("sha256")), _digest(key, "md5", entry.get("md5")),
                     entry.get("size"))
    locations = [first]
    for index, item in enumerate(entry.get("mirrors") or []):
        where = f"{key}.mirrors[{index}]"
        if isinstance(item, str):  # the same file elsewhere: the source's published checksum
            item = {"url": item, "sha256": first.sha256, "md5": first.md5, "size": first.size}
        elif not isinstance(item, dict):
            raise SourceError(f"{where}: expected a URL or {{url, sha256, md5, members, size}}, found {item!r}")
        problem = _location_problem(item.get("url"))
        if problem:
            raise SourceError(f"{where}.url: {problem}")
        own = _members(where, item.get("members"), roles=members) if item.get("members") else None
        locations.append(Location(item["url"].strip(), _digest(where, "sha256", item.get("sha256")),
                                  _digest(where, "md5", item.get("md5")), item.get("size"), own))
    filename = entry.get("filename") or default_filename(first.url)
    if not filename:
        raise SourceError(f"{key}.filename: expected the downloaded file's name (a gdrive: URL names none)")
    if "/" in filename or filename in (".", "..", "extracted"):
        raise SourceError(f"{key}.filename: expected a file name without '/', found {filename!r}")
    local = entry.get("local")
    return Source(name, tuple(locations), filename, members, entry.get("page"),
                  os.path.expanduser(str(local)) if local not in (None, "") else None, entry.get("checksum_source"))


def source_problem(name: str, entry: dict) -> str | None:
    """Why ``sources.NAME`` cannot work (the message names the key), or None: the config's check."""
    try:
        source_from_config(name, entry)
    except SourceError as err:
        return str(err)
    return None


def source_from_json(text: str) -> Source:
    """The CLI's ``--spec``: a declaration as :meth:`Source.to_json` writes it (or a config entry with ``name``)."""
    try:
        entry = json.loads(text)
    except json.JSONDecodeError as err:
        raise SourceError(f"--spec: expected a JSON object, found invalid JSON ({err})") from None
    if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
        raise SourceError("--spec: expected a JSON object with a name and a url")
    return source_from_config(entry.pop("name"), entry)


def local_kind(source: Source) -> str | None:
    """'file' or 'folder' for a ``local:`` that exists, 'missing' for one that does not, None without one."""
    if source.local is None:
        return None
    path = Path(source.local)
    return "folder" if path.is_dir() else "file" if path.exists() else "missing"

"""Safe extraction of a source's archive: .tar(.gz/.bz2/.xz)/.tgz/.zip, archives inside archives, and folders.

Two ways to say what to take out:

- :func:`extract` with glob patterns (``fnmatch``: ``*`` also matches ``/``): every matching member, at its path;
  each pattern must match at least one member (``python -m docnmt.corpora.download extract --members``);
- :func:`extract_specs` with *member specs*, by destination: what the workflow's sources declare
  (``sources.NAME.members``). A spec is a path in the archive, or a list of them: a path through archives inside
  archives (``["**/en-it.tgz", "**/IWSLT17.TED.tst2017.mltlng.en-it.en.xml"]``: the file inside the ``en-it.tgz``
  found somewhere in the outer archive). A path starting with ``**/`` is found by its name at any depth; any
  other path is exact. Each step must find exactly one member: none, or a name found twice, is one error naming the
  archive. The container may also be a folder of the archive's layout (a user's own copy, ``sources.NAME.local``).

Members with absolute paths or ``..`` components, links and special files are rejected (InputError naming the
archive and the member) before anything is written. Files are unpacked into a temporary folder beside the
destination that replaces it only when complete, so a failure leaves no partial destination.
"""

from __future__ import annotations

import fnmatch
import os
import re
import secrets
import shutil
import stat
import tarfile
import tempfile
import zipfile
import zlib
from pathlib import Path, PurePosixPath
from typing import Callable, Sequence

from ..textio import InputError

CHUNK = 1 << 20
CORRUPT = (tarfile.TarError, zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, zlib.error, OSError)
#: The prefix of a member spec's path that finds it by name at any depth.
ANY_DEPTH = "**/"
GLOB = re.compile(r"[*?\[\]]")


def log(message: str) -> None:
    """A line of the download and extract rules' logs (docnmt.corpora.download's too)."""
    print(f"[download] {message}", flush=True)


# ---- member specs ----------------------------------------------------------------------------------------------
def spec_steps(spec: str | Sequence[str]) -> list[str]:
    """The paths of a member spec, outermost first (a string is one step)."""
    return [spec] if isinstance(spec, str) else list(spec)


def spec_problem(spec) -> str | None:
    """Why ``spec`` is no member spec (None where it is one): each step a relative path without '..', exact or
    starting with '**/', with no other glob character."""
    if isinstance(spec, str):
        steps = [spec]
    elif isinstance(spec, (list, tuple)) and spec and all(isinstance(s, str) for s in spec):
        steps = list(spec)
    else:
        return f"expected a path or a non-empty list of paths, found {spec!r}"
    for step in steps:
        rest = step[len(ANY_DEPTH):] if step.startswith(ANY_DEPTH) else step
        parts = PurePosixPath(rest).parts
        if not rest or rest.startswith("/") or ".." in parts:
            return f"expected a relative path inside the archive, found {step!r}"
        if GLOB.search(rest):
            return f"expected an exact path or '**/' and an exact path, found {step!r}"
    return None


def spec_destination(spec: str | Sequence[str]) -> str:
    """Where a spec's file lands under the extracted folder: its last path, without a leading '**/'."""
    last = spec_steps(spec)[-1]
    return last[len(ANY_DEPTH):] if last.startswith(ANY_DEPTH) else last


def _matches(step: str, name: str) -> bool:
    if step.startswith(ANY_DEPTH):
        rest = step[len(ANY_DEPTH):]
        return name == rest or name.endswith("/" + rest)
    return name == step.strip("/")


# ---- containers: an archive or a folder, listed by safe relative name --------------------------------------------
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


def _unsafe(archive, name: str, found: str, expected: str = "a file or directory") -> InputError:
    return InputError(archive, f"unsafe member {name!r}: expected {expected}, found {found}")


def _safe_name(archive, name: str) -> str:
    """The member's path relative to the destination, or InputError if it could escape it."""
    unified = name.replace("\\", "/")
    if unified.startswith("/") or re.match(r"^[a-zA-Z]:", unified):
        raise _unsafe(archive, name, "an absolute path", expected="a relative path")
    parts = [p for p in PurePosixPath(unified).parts if p not in ("", ".")]
    if ".." in parts:
        raise _unsafe(archive, name, "'..'", expected="a path inside the archive")
    return "/".join(parts)


class _WriteError(Exception):
    """Writing the extracted files failed (disk full, permissions): not the archive's fault."""


def _write_member(reader, target: Path, expected_size: int | None, archive, name: str) -> None:
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


class _Container:
    """An opened archive or folder: ``files`` (relative name -> its entry), ``dirs``, ``check(name)`` (raise where
    a member is a link or special file) and ``copy(name, target)``. ``shown`` is how errors name it."""

    def __init__(self, path: Path, shown: str):
        self.path, self.shown = path, shown
        self.files: dict[str, object] = {}
        self.dirs: list[str] = []
        self._close: Callable[[], None] = lambda: None
        if path.is_dir():
            self.kind = "folder"
            for item in sorted(path.rglob("*")):
                rel = item.relative_to(path).as_posix()
                if item.is_file():
                    self.files[rel] = item
            return
        self.kind = _archive_kind(path)
        if self.kind == "zip":
            self._zip = zipfile.ZipFile(path)
            self._close = self._zip.close
            for info in self._zip.infolist():
                rel = _safe_name(shown, info.filename)
                if rel:
                    (self.dirs.append(rel) if info.is_dir() else self.files.__setitem__(rel, info))
        else:
            self._tar = tarfile.open(path, "r:*")
            self._close = self._tar.close
            for member in self._tar.getmembers():  # reads to the end: a truncated archive fails here
                rel = _safe_name(shown, member.name)
                if rel:  # as tar itself: a later member of the same name wins
                    (self.dirs.append(rel) if member.isdir() else self.files.__setitem__(rel, member))

    def close(self) -> None:
        self._close()

    def check(self, rel: str) -> None:
        entry = self.files[rel]
        if self.kind == "tar":
            if entry.issym() or entry.islnk():
                raise _unsafe(self.shown, entry.name, f"a link to {entry.linkname!r}")
            if not entry.isfile():
                raise _unsafe(self.shown, entry.name, "a device, FIFO or other special file")
        elif self.kind == "zip":
            mode = entry.external_attr >> 16  # Unix mode, when made on Unix; 0 or bare permissions otherwise
            if stat.S_ISLNK(mode):
                raise _unsafe(self.shown, entry.filename, "a symbolic link")
            if stat.S_IFMT(mode) and not stat.S_ISREG(mode):
                raise _unsafe(self.shown, entry.filename, "a special file")

    def copy(self, rel: str, target: Path) -> None:
        entry = self.files[rel]
        if self.kind == "folder":
            with open(entry, "rb") as reader:
                _write_member(reader, target, None, self.shown, rel)
        elif self.kind == "zip":
            with self._zip.open(entry) as reader:  # checks the CRC at the end of the member
                _write_member(reader, target, entry.file_size, self.shown, entry.filename)
        else:
            _write_member(self._tar.extractfile(entry), target, entry.size, self.shown, entry.name)


def _sample(names) -> str:
    names = sorted(names)
    return ", ".join(names[:8]) + (", ..." if len(names) > 8 else "")


def _select(container: _Container, patterns: Sequence[str] | None) -> set[str]:
    names = list(container.files) + container.dirs
    if not patterns:
        return set(names)
    chosen = set()
    for pattern in patterns:
        hits = {n for n in names if fnmatch.fnmatchcase(n, pattern)}
        if not hits:
            raise InputError(container.shown, f"expected a member matching {pattern!r}, found none "
                                              f"(members: {_sample(names)})")
        chosen |= hits
    return chosen


def _find_one(container: _Container, step: str, wanted: str) -> str:
    hits = [n for n in container.files if _matches(step, n)]
    if len(hits) == 1:
        return hits[0]
    if not hits:
        raise InputError(container.shown, f"expected a member {step!r} ({wanted}), found none "
                                          f"(members: {_sample(container.files)})")
    raise InputError(container.shown, f"expected one member {step!r} ({wanted}), found {len(hits)}: "
                                      f"{', '.join(sorted(hits))}")


# ---- extraction ------------------------------------------------------------------------------------------------
def _shown(path: Path) -> str:
    """How errors name a container: a user's own file behind a link by its own path."""
    return str(path.resolve()) if path.is_symlink() else str(path)


def _into_place(dest: Path, fill: Callable[[Path], list[str]]) -> list[str]:
    """Run ``fill(tmp)`` on a temporary folder beside ``dest``, then put it in place of ``dest``."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.parent / f".{dest.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    tmp.mkdir()
    try:
        extracted = fill(tmp)
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
    return extracted


def _opened(path: Path, shown: str) -> _Container:
    try:
        return _Container(path, shown)
    except InputError:
        raise
    except CORRUPT as err:
        raise InputError(shown, f"truncated or corrupt archive ({type(err).__name__}: {err})") from None


def _guarded(shown: str, work: Callable[[], list[str]]) -> list[str]:
    try:
        return work()
    except InputError:
        raise
    except _WriteError as err:
        raise OSError(str(err)) from err.__cause__
    except CORRUPT as err:
        raise InputError(shown, f"truncated or corrupt archive ({type(err).__name__}: {err})") from None


def extract(archive: os.PathLike | str, dest: os.PathLike | str, members: Sequence[str] | None = None) -> list[str]:
    """Safely unpack ``archive`` (or copy a folder) into ``dest``; ``members``: glob patterns (fnmatch, ``*`` also
    matches ``/``) selecting what to extract, each matching at least one member. Extracted files get the current
    time as mtime (not the archive's), so Snakemake sees them as newer than the archive. Returns the extracted
    files' relative paths."""
    archive, dest = Path(archive), Path(dest)
    shown = _shown(archive)
    if not archive.exists():
        raise InputError(shown, "expected an archive file, found nothing")

    def fill(tmp: Path) -> list[str]:
        container = _opened(archive, shown)
        try:
            def work():
                chosen = _select(container, members)
                for rel in sorted(chosen & set(container.files)):
                    container.check(rel)
                for rel in sorted(chosen & set(container.dirs)):
                    (tmp / rel).mkdir(parents=True, exist_ok=True)
                names = sorted(chosen & set(container.files))
                for rel in names:
                    container.copy(rel, tmp / rel)
                return names
            return _guarded(shown, work)
        finally:
            container.close()

    extracted = _into_place(dest, fill)
    log(f"extracted {len(extracted)} file(s) from {shown} into {dest}")
    return extracted


def extract_specs(container: os.PathLike | str, dest: os.PathLike | str, specs: dict[str, str | Sequence[str]]
                  ) -> list[str]:
    """Take each member spec's file out of ``container`` (an archive or a folder) to ``dest/DESTINATION``, through
    archives inside it where a spec is a list; ``specs``: destination -> spec. Returns the destinations."""
    container, dest = Path(container), Path(dest)
    shown = _shown(container)
    if not container.exists():
        raise InputError(shown, "expected an archive file or a folder of its layout, found nothing")
    for target, spec in specs.items():
        problem = spec_problem(spec)
        if problem:
            raise ValueError(f"member spec for {target}: {problem}")

    def fill(tmp: Path) -> list[str]:
        scratch = Path(tempfile.mkdtemp(prefix=".nested.", dir=tmp.parent))
        opened: dict[tuple[str, ...], _Container] = {}
        try:
            def open_path(chain: tuple[str, ...]) -> _Container:
                """The container a chain of found members leads to (the outer one for an empty chain)."""
                if chain not in opened:
                    if not chain:
                        opened[chain] = _opened(container, shown)
                    else:
                        outer = open_path(chain[:-1])
                        inner_file = scratch / f"{len(opened)}-{PurePosixPath(chain[-1]).name}"
                        outer.check(chain[-1])
                        outer.copy(chain[-1], inner_file)
                        opened[chain] = _opened(inner_file, f"{outer.shown} > {chain[-1]}")
                return opened[chain]

            def work():
                found = []
                for target, spec in specs.items():
                    chain: tuple[str, ...] = ()
                    steps = spec_steps(spec)
                    for step in steps[:-1]:
                        chain += (_find_one(open_path(chain), step, f"an archive on the way to {target}"),)
                    inner = open_path(chain)
                    name = _find_one(inner, steps[-1], target)
                    inner.check(name)
                    found.append((inner, name, target))
                for inner, name, target in found:
                    inner.copy(name, tmp / target)
                return [target for _, _, target in found]
            return _guarded(shown, work)
        finally:
            for item in opened.values():
                item.close()
            shutil.rmtree(scratch, ignore_errors=True)

    extracted = _into_place(dest, fill)
    log(f"extracted {len(extracted)} file(s) from {shown} into {dest}")
    return extracted

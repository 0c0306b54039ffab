"""Atomic output files and the error type for bad input.

Every CLI in this package reports bad input as one line,
``path:line: what was expected, what was found``, and exits non-zero.
Outputs are written to a temporary file beside the target and moved into
place only when complete, so a failed step never leaves a half-written file
that a later step (or a rerun of Snakemake) would mistake for a result. A
full disk (or quota) while writing is reported the same way, as one line
naming the output, after the temporary file was removed.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import secrets
import shutil
import sys
from pathlib import Path
from typing import Iterator, Sequence


def file_digest(path: os.PathLike | str, pattern: str = "*", algorithm: str = "sha256") -> str:
    """sha256 (``algorithm``: another of hashlib's, md5 where that is what a registry publishes) in hex of a file,
    read in blocks (a checkpoint may hold gigabytes); of a folder, of its files matching ``pattern`` (recursively, by
    relative path and content)."""
    path = Path(path)
    digest = hashlib.new(algorithm)
    files = [path] if path.is_file() else sorted(p for p in path.rglob(pattern) if p.is_file())
    for file in files:
        if file != path:
            digest.update(str(file.relative_to(path)).encode("utf-8") + b"\0")
        with open(file, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 22), b""):
                digest.update(block)
    return digest.hexdigest()


#: The files of a model folder that make the model (what transformers and vLLM load): its configs, tokenizer and
#: weights; anything else in the folder (a README, a stray file) is not part of its fingerprint.
MODEL_FILES = ("*.json", "*.jinja", "*.model", "*.txt", "*.tiktoken", "*.safetensors", "*.bin", "*.pt", "*.pth",
               "*.gguf")
#: A model file larger than twice this is fingerprinted by its size and its first and last this many bytes.
FINGERPRINT_BYTES = 1 << 20


def model_fingerprint(path: os.PathLike | str) -> str:
    """sha256 (hex) that tells a model checkpoint or folder from another without reading all of it: each model file
    (:data:`MODEL_FILES`; a checkpoint file itself) by its relative path, its size and, where it is larger than
    2 MiB, its first and last MiB (a safetensors file's header of tensor names, shapes and offsets and its first
    weights; a torch checkpoint's zip directory, which holds every entry's CRC-32), else all of it. A decode's
    resume journal keys the model by it (reading a 70B model's 140 GB at each decode's start is what it avoids)."""
    path = Path(path)
    digest = hashlib.sha256()
    if path.is_file():
        files = [path]
    else:
        files = sorted({p for pattern in MODEL_FILES for p in path.rglob(pattern) if p.is_file()})
    for file in files:
        size = file.stat().st_size
        digest.update(f"{file.relative_to(path) if file != path else file.name}\0{size}\0".encode("utf-8"))
        with open(file, "rb") as handle:
            if size <= 2 * FINGERPRINT_BYTES:
                digest.update(handle.read())
            else:
                digest.update(handle.read(FINGERPRINT_BYTES))
                handle.seek(size - FINGERPRINT_BYTES)
                digest.update(handle.read(FINGERPRINT_BYTES))
    return digest.hexdigest()


class InputError(Exception):
    """Bad input: a malformed corpus, config, or file. Carries file and line."""

    def __init__(self, path: os.PathLike | str, message: str, line: int | None = None):
        self.path = str(path)
        self.line = line
        self.message = message
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {message}")


#: errno values of a full disk or an exhausted quota.
DISK_FULL = frozenset({errno.ENOSPC, errno.EDQUOT})


class DiskFullError(Exception):
    """An output could not be written: no space left (or the quota is exhausted). Names the output."""

    def __init__(self, path: os.PathLike | str, reason: str = "no space left on device"):
        self.path = str(path)
        super().__init__(
            f"{self.path}: {reason} while writing; the partial output was removed, free some space and rerun"
        )


def is_disk_full(err: BaseException) -> bool:
    return isinstance(err, OSError) and err.errno in DISK_FULL


def _disk_full(err: OSError, path) -> DiskFullError:
    return DiskFullError(path, os.strerror(err.errno).lower())


def _create_tmp(target: Path) -> tuple[int, str]:
    """Create a temporary file beside ``target``; return its descriptor and name.

    ``os.open`` with mode 0o666 keeps the usual umask-based permissions
    (``tempfile.mkstemp`` would make results readable by their owner only).
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = str(target.parent / f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), tmp


@contextlib.contextmanager
def atomic_write(path: os.PathLike | str, mode: str = "w", encoding: str | None = "utf-8") -> Iterator:
    """Open a temporary file next to ``path``; rename it to ``path`` on success.

    On any exception the temporary file is removed and ``path`` is untouched;
    a full disk becomes a :class:`DiskFullError` naming ``path``.
    """
    path = Path(path)
    try:
        fd, tmp = _create_tmp(path)
    except OSError as err:
        if is_disk_full(err):
            raise _disk_full(err, path) from None
        raise
    try:
        kwargs = {"encoding": encoding, "newline": "\n"} if "b" not in mode else {}
        with os.fdopen(fd, mode, **kwargs) as handle:
            yield handle
        os.replace(tmp, path)
    except BaseException as err:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        if is_disk_full(err):
            raise _disk_full(err, path) from None
        raise


@contextlib.contextmanager
def atomic_outputs(paths: Sequence[os.PathLike | str], mode: str = "w") -> Iterator[list]:
    """Like :func:`atomic_write` for several files that must appear together.

    All files are written to temporaries first; they are renamed into place
    only after every one of them was written completely. On any error before
    that, no target is touched and the temporaries are removed; a full disk
    becomes a :class:`DiskFullError` naming the outputs.
    """
    stack = contextlib.ExitStack()
    targets = [Path(p) for p in paths]
    tmps = []
    handles = []
    try:
        for target in targets:
            fd, tmp = _create_tmp(target)
            tmps.append(tmp)
            kwargs = {"encoding": "utf-8", "newline": "\n"} if "b" not in mode else {}
            handles.append(stack.enter_context(os.fdopen(fd, mode, **kwargs)))
        yield handles
        stack.close()
        for tmp, target in zip(tmps, targets):
            os.replace(tmp, target)
    except BaseException as err:
        # Closing flushes buffers, which fails again on a full disk: the
        # temporaries are removed all the same.
        with contextlib.suppress(OSError):
            stack.close()
        for tmp in tmps:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        if is_disk_full(err):
            raise _disk_full(err, ", ".join(map(str, targets))) from None
        raise


def read_lines(path: os.PathLike | str) -> list[str]:
    """Read a UTF-8 text file as a list of lines without their line ends."""
    path = Path(path)
    if not path.exists():
        raise InputError(path, "file not found")
    try:
        with open(path, encoding="utf-8", newline="\n") as handle:
            return [line.rstrip("\n").rstrip("\r") for line in handle]
    except UnicodeDecodeError as err:
        # Locate the line for the message.
        raw = path.read_bytes()
        line = raw[: err.start].count(b"\n") + 1
        raise InputError(path, f"expected UTF-8 text, found an invalid byte ({err.reason})", line) from None


def iter_lines(path: os.PathLike | str) -> Iterator[str]:
    """Stream a UTF-8 text file's lines without their line ends (memory: one line).

    The same errors as :func:`read_lines`: a missing file, or an invalid
    byte named with its line.
    """
    path = Path(path)
    if not path.exists():
        raise InputError(path, "file not found")
    number = 0
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as err:
                raise InputError(path, f"expected UTF-8 text, found an invalid byte ({err.reason})", number) from None
            yield line.rstrip("\n").rstrip("\r")


def load_json(path: os.PathLike | str, what: str) -> dict:
    """The JSON object in ``path`` (a sidecar, score file or manifest: ``what``); a missing or invalid file is
    an :class:`InputError` naming it."""
    path = Path(path)
    if not path.exists():
        raise InputError(path, f"{what} not found (missing file)")
    try:
        return json.loads("\n".join(read_lines(path)))
    except ValueError as err:
        raise InputError(path, f"expected the JSON of a {what}, found invalid JSON ({err})") from None


def json_lines(path: os.PathLike | str, blank_lines: str = "error") -> Iterator[tuple[int, object]]:
    """(1-based line number, value) of each line of a JSON-lines file; a missing file, a line that is no JSON, or a
    blank line (``blank_lines`` "error"; "skip": passed over) is an :class:`InputError` naming the file and line."""
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "file not found")
    with open(path, encoding="utf-8") as handle:
        for number, text in enumerate(handle, start=1):
            if not text.strip():
                if blank_lines == "skip":
                    continue
                raise InputError(path, "expected a JSON object, found an empty line", number)
            try:
                yield number, json.loads(text)
            except json.JSONDecodeError as err:
                raise InputError(path, f"expected a JSON object, found a syntax error: {err.msg}", number) from None


def parse_named(items: Sequence[str], what: str = "system") -> dict[str, Path]:
    """``NAME=PATH`` arguments (of a system, or ``what``), as {name: path} in their order; InputError where one is
    not NAME=PATH or a name comes twice."""
    named: dict[str, Path] = {}
    for item in items:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise InputError(item, f"expected a {what} as NAME=PATH")
        if name in named:
            raise InputError(path, f"{what} {name!r} is given twice")
        named[name] = Path(path)
    return named


def count_lines(path: os.PathLike | str) -> int:
    """The number of lines of a file (a last line without a newline counts), read as bytes."""
    path = Path(path)
    if not path.exists():
        raise InputError(path, "file not found")
    with open(path, "rb") as handle:
        return sum(1 for _ in handle)


def write_lines(path: os.PathLike | str, lines) -> None:
    """Write lines atomically, one per line, each ending in a newline."""
    with atomic_write(path) as handle:
        for line in lines:
            handle.write(line)
            handle.write("\n")


def atomic_concat(inputs: Sequence[os.PathLike | str], output: os.PathLike | str, missing: str = "file not found") -> None:
    """Write the inputs' bytes one after the other to ``output``, atomically (one input: an atomic copy).

    An input that does not exist is an :class:`InputError` naming it (with ``missing`` as the message).
    """
    with atomic_write(output, mode="wb", encoding=None) as dst:
        for path in inputs:
            if not Path(path).exists():
                raise InputError(path, missing)
            with open(path, "rb") as src:
                shutil.copyfileobj(src, dst)


def cli_errors(main):
    """Decorator for ``main(argv=None)``: turn :class:`InputError`, :class:`DiskFullError` (and any other
    full-disk error) into one line on stderr and exit 1. The options a finished run parsed go to the option ledger
    (:mod:`docnmt.ledger`, where it is on)."""

    def wrapper(argv=None):
        from . import ledger

        finished = False
        try:
            result = main(argv)
            finished = result in (0, None)
            return result
        except (InputError, DiskFullError) as err:
            print(f"error: {err}", file=sys.stderr)
            raise SystemExit(1) from None
        except OSError as err:
            if not is_disk_full(err):
                raise
            where = f"{err.filename}: " if err.filename else ""
            print(f"error: {where}{os.strerror(err.errno).lower()}; free some space and rerun", file=sys.stderr)
            raise SystemExit(1) from None
        finally:  # the options of a run that finished count in the option ledger, not those of one refused
            ledger.settle(finished)

    wrapper.__doc__ = main.__doc__
    wrapper.__name__ = main.__name__
    wrapper.__wrapped__ = main
    return wrapper


def selected_lines(select: os.PathLike | str | None, n_lines: int) -> list[int]:
    """All lines, or the ``line`` of every JSON object of ``select`` (one per line): the lines a scorer scores
    (``--select``: ContraPro's and ctxpro's example sentences) or a decode decodes (``--only-lines``)."""
    if select is None:
        return list(range(n_lines))
    lines = []
    for number, text in enumerate(read_lines(select), start=1):
        if not text.strip():
            continue
        try:
            line = json.loads(text)["line"]
        except (ValueError, KeyError, TypeError):
            raise InputError(select, "expected a JSON object with a 'line' field", number) from None
        if not isinstance(line, int) or not 0 <= line < n_lines:
            raise InputError(select, f"expected a line number in 0..{n_lines - 1}, found {line!r}", number)
        lines.append(line)
    if not lines:
        raise InputError(select, "expected at least one selected line, found none")
    return lines


def declaring_modules(package: str, folder, name: str) -> tuple[str, ...]:
    """The modules of ``package`` (its files in ``folder``) that assign ``name`` at their top level (``METRIC``,
    ``VARIANT``), read from their sources: nothing is imported to find them. A registry's built-ins."""
    import ast
    from pathlib import Path

    found = []
    for path in sorted(Path(folder).glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if any(isinstance(node, ast.Assign) and any(getattr(t, "id", None) == name for t in node.targets)
               for node in tree.body):
            found.append(f"{package}.{path.stem}")
    return tuple(found)

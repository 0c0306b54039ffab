"""Google Drive locations (``gdrive:ID``), fetched through gdown, which knows Drive's confirmation pages.

The download itself is any location's: :mod:`docnmt.corpora.download` writes gdown's bytes into its own atomic
temporary file, hashes them as they arrive, retries transient failures and verifies the checksum or the lock. gdown
is given the file's Drive URL (:data:`DRIVE_URL`), no retries of its own and no cookie file.
"""

from __future__ import annotations

from typing import BinaryIO

#: The address gdown is handed for a file id (gdown resolves Drive's confirmation page from there).
DRIVE_URL = "https://drive.google.com/uc?id={id}"


class DriveError(Exception):
    """A Drive location failed: an HTTP status (``code``, which the download classifies as it classifies any
    location's), or else ``transient`` where another attempt may succeed."""

    def __init__(self, message: str, transient: bool = False, code: int | None = None):
        super().__init__(message)
        self.transient = transient
        self.code = code


def drive_url(file_id: str) -> str:
    return DRIVE_URL.format(id=file_id)


class _Tee:
    """Feeds every chunk gdown writes to several hashers (gdown takes one)."""

    def __init__(self, hashers):
        self.hashers = [h for h in hashers if h is not None]

    def update(self, chunk: bytes) -> None:
        for hasher in self.hashers:
            hasher.update(chunk)


def _failure(err: BaseException) -> DriveError:
    import requests
    from gdown.exceptions import DownloadError, FileURLRetrievalError

    if isinstance(err, requests.exceptions.HTTPError) and err.response is not None:
        code = err.response.status_code
        return DriveError(f"HTTP {code} {err.response.reason or ''}".strip(), code=code)
    if isinstance(err, (requests.exceptions.ConnectionError, requests.exceptions.Timeout,
                        requests.exceptions.ChunkedEncodingError, DownloadError)):
        return DriveError(f"{type(err).__name__}: {err}", transient=True)
    if isinstance(err, FileURLRetrievalError):  # no file behind the id, no permission, or Drive's quota
        first = str(err).strip().splitlines()
        return DriveError(f"gdown could not resolve the file ({' '.join(first[:3])})", transient=False)
    raise err


def download(file_id: str, handle: BinaryIO, hashers, timeout: float) -> int:
    """Stream the Drive file into ``handle``, feeding ``hashers``; the number of bytes. Raises :class:`DriveError`."""
    import gdown

    start = handle.tell()
    try:
        gdown.download(url=drive_url(file_id), output=handle, quiet=True, use_cookies=False, hasher=_Tee(hashers),
                       timeout=timeout, retries=0)
    except Exception as err:  # noqa: BLE001 - sorted into transient and permanent failures
        raise _failure(err) from None
    return handle.tell() - start


class _Enough(Exception):
    """Raised from gdown's progress callback: the headers are in, the body is not wanted."""


class _Sink:
    def write(self, data):
        return len(data)

    def flush(self):
        pass

    def tell(self):
        return 0


def probe(file_id: str, timeout: float) -> int | None:
    """The Drive file's size as gdown resolves it (Drive's confirmation page included), reading at most its first
    chunk; None where Drive announces no size. Raises :class:`DriveError`."""
    import gdown

    seen: dict[str, int | None] = {}

    def progress(so_far: int, total: int | None) -> None:
        seen["total"] = total
        raise _Enough

    try:
        gdown.download(url=drive_url(file_id), output=_Sink(), quiet=True, use_cookies=False, timeout=timeout,
                       progress=progress, retries=0)
    except _Enough:
        return seen.get("total")
    except Exception as err:  # noqa: BLE001
        raise _failure(err) from None
    return 0  # an empty file: no chunk, no callback

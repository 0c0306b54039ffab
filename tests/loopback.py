"""A loopback HTTP server for tests: a directory served on 127.0.0.1, with injectable failures.

Tests of downloads must never reach the internet. This server stands in for the
real hosts: lay files out as ``ROOT/HOST/PATH`` and use ``server.url`` as the
mirror (``docnmt.corpora.download.mirror_url`` maps ``https://HOST/PATH`` to
``MIRROR/HOST/PATH``)::

    from loopback import LoopbackServer

    with LoopbackServer(tmp_path / "mirror") as server:
        server.fail("/data.statmt.org/test.tgz", times=2, how=503)  # two 503s, then the file
        fetch("https://data.statmt.org/test.tgz", out, mirror=server.url, backoff=0.01)
        assert server.count("/data.statmt.org/test.tgz") == 3

API (all thread-safe):

- ``LoopbackServer(root)``: a context manager; ``start()`` / ``close()`` do the same by hand.
  It binds to 127.0.0.1 on a free port and serves ``root`` (GET and HEAD).
- ``.url``: ``http://127.0.0.1:PORT`` (no trailing slash); ``.url_for("a/b")`` gives ``.url + "/a/b"``.
- ``.fail(path, times=1, how=503)``: the next ``times`` requests for ``path`` fail, then it is
  served normally. ``how`` is an HTTP status (503, 500, 429, 404, ...), ``"drop"`` (the
  connection is closed before any response: the client sees a reset/remote disconnect), or
  ``"truncate"`` (status 200 with the full ``Content-Length``, but only half of the body is sent
  before the connection closes).
- ``.refuse_head(path)``: every HEAD request for ``path`` is answered 405, GET serves it;
- ``.count(path)``: how many requests ``path`` received (failed ones included);
  ``.requests``: a copy of all counts, keyed by path.

``path`` is the URL path as requested, with a leading slash and without a query string.
Each connection has a 5-second socket timeout and the server polls for shutdown every 50 ms,
so ``close()`` (always called on leaving the ``with`` block) returns promptly.
"""

from __future__ import annotations

import collections
import functools
import http.server
import os
import threading
import urllib.parse
from pathlib import Path

FAULTS_HELP = "an HTTP status code (int), 'drop' or 'truncate'"


class _Handler(http.server.SimpleHTTPRequestHandler):
    server_version = "loopback/1"
    timeout = 5  # seconds; a stuck client cannot hold a handler thread for longer

    def log_message(self, format, *args):  # noqa: A002 - keep test output quiet
        pass

    def _path(self) -> str:
        return urllib.parse.urlsplit(self.path).path

    def do_GET(self):  # noqa: N802 - http.server naming
        self._serve(head=False)

    def do_HEAD(self):  # noqa: N802
        self._serve(head=True)

    def _serve(self, head: bool) -> None:
        owner: LoopbackServer = self.server.owner
        fault = owner._record(self._path())
        if head and fault is None and owner._head_refused(self._path()):
            fault = 405
        if fault is None:
            return super().do_HEAD() if head else super().do_GET()
        self.close_connection = True
        if fault == "drop":
            return  # no status line at all: the client sees the connection close
        if fault == "truncate":
            return self._send_truncated(head)
        self.send_response(fault)
        self.send_header("Content-Length", "0")
        self.send_header("Connection", "close")
        self.end_headers()

    def _send_truncated(self, head: bool) -> None:
        local = Path(self.translate_path(self.path))
        if not local.is_file():
            self.send_error(404)
            return
        body = local.read_bytes()
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        if not head:
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


class LoopbackServer:
    """Serve ``root`` on 127.0.0.1 in a background thread; see the module docstring."""

    def __init__(self, root: os.PathLike | str):
        self.root = Path(root)
        self._lock = threading.Lock()
        self._counts: collections.Counter = collections.Counter()
        self._faults: dict[str, list] = {}
        self._no_head: set[str] = set()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- life cycle -----------------------------------------------------------------
    def start(self) -> "LoopbackServer":
        if self._server is not None:
            return self
        self.root.mkdir(parents=True, exist_ok=True)
        handler = functools.partial(_Handler, directory=str(self.root))
        self._server = _Server(("127.0.0.1", 0), handler)
        self._server.owner = self
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name="loopback-http", daemon=True
        )
        self._thread.start()
        return self

    def close(self) -> None:
        server, thread = self._server, self._thread
        self._server = self._thread = None
        if server is not None:
            server.shutdown()
            server.server_close()
        if thread is not None:
            thread.join(timeout=10)

    def __enter__(self) -> "LoopbackServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()

    # -- addresses --------------------------------------------------------------------
    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("the loopback server is not running (use it as a context manager)")
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def url_for(self, relpath: str) -> str:
        return f"{self.url}/{relpath.lstrip('/')}"

    # -- faults and counts -------------------------------------------------------------
    def fail(self, path: str, times: int = 1, how: int | str = 503) -> None:
        """Make the next ``times`` requests for ``path`` fail with ``how`` (see module docstring)."""
        if not (isinstance(how, int) or how in ("drop", "truncate")):
            raise ValueError(f"how must be {FAULTS_HELP}, not {how!r}")
        if isinstance(how, int) and not 400 <= how <= 599:
            raise ValueError(f"an injected HTTP failure must be a 4xx or 5xx status, not {how}")
        with self._lock:
            self._faults.setdefault(self._key(path), []).extend([how] * times)

    def refuse_head(self, path: str) -> None:
        """Answer every HEAD request for ``path`` with 405 (as some hosts do); GET serves it."""
        with self._lock:
            self._no_head.add(self._key(path))

    def _head_refused(self, path: str) -> bool:
        with self._lock:
            return self._key(path) in self._no_head

    def count(self, path: str) -> int:
        with self._lock:
            return self._counts[self._key(path)]

    @property
    def requests(self) -> dict[str, int]:
        with self._lock:
            return dict(self._counts)

    @staticmethod
    def _key(path: str) -> str:
        return "/" + urllib.parse.urlsplit(path).path.lstrip("/")

    def _record(self, path: str):
        """Count a request; return the fault to inject for it, or None to serve it."""
        key = self._key(path)
        with self._lock:
            self._counts[key] += 1
            queue = self._faults.get(key)
            return queue.pop(0) if queue else None


class OutsideAddress(ConnectionRefusedError):
    """A test's process asked for a host that is not this machine's loopback (see :func:`forbid_outside`)."""


def forbid_outside(monkeypatch) -> None:
    """Refuse, in this process, every name lookup and connection that is not to the loopback: a download that falls
    back to a real location (after a mirror or a fixture's location failed) fails at once, as a refused connection,
    instead of reaching a real host."""
    import ipaddress
    import socket

    lookup, connect = socket.getaddrinfo, socket.socket.connect

    def loopback(host) -> bool:
        if host in (None, "localhost"):
            return True
        try:
            return ipaddress.ip_address(str(host).strip("[]")).is_loopback
        except ValueError:
            return False

    def guarded_lookup(host, *args, **kwargs):
        if not loopback(host):
            raise OutsideAddress(f"the tests reach no host but the loopback: {host}")
        return lookup(host, *args, **kwargs)

    def guarded_connect(self, address):
        if self.family in (socket.AF_INET, socket.AF_INET6) and not loopback(address[0]):
            raise OutsideAddress(f"the tests reach no host but the loopback: {address[0]}")
        return connect(self, address)

    monkeypatch.setattr(socket, "getaddrinfo", guarded_lookup)
    monkeypatch.setattr(socket.socket, "connect", guarded_connect)

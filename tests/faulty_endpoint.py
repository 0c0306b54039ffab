"""A proxy in front of a real OpenAI-compatible server, for the openai backend's fault tests: it forwards every
request to the server and back, except those it is told to fail.

    with FaultyProxy("http://127.0.0.1:8000") as proxy:
        proxy.plan("/v1/chat/completions", [429, 429, 500, "slow", "pass"])  # then everything passes
        proxy.refuse("prompt_logprobs")  # a request with this field gets 400, as a hosted API answers it
        ... base_url=proxy.url + "/v1" ...
        assert proxy.count("/v1/chat/completions") == 5

``plan(path, actions)``: the next requests of ``path`` take these actions in turn: an HTTP status (429 and 503 come
with ``Retry-After: 0``), ``"slow"`` (the answer is held back ``slow_seconds`` before it is forwarded: past the
client's timeout), or ``"pass"``; ``always(path, status)``: once the plan is done, every request of ``path`` fails;
``rewrite(answer)``: the server's chat answers pass through ``answer(request, text)``, which gives the text the
client gets instead (or None: the server's), as a judge that answers some prompts in the expected form would.
"""

from __future__ import annotations

import collections
import http.server
import json
import threading
import time
import urllib.error
import urllib.request


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):  # noqa: A002 - quiet
        pass

    def do_GET(self):  # noqa: N802
        self._handle(None)

    def do_POST(self):  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        self._handle(self.rfile.read(length))

    def _reply(self, status: int, body: bytes, headers: dict | None = None) -> None:
        self.send_response(status)
        for key, value in {"Content-Type": "application/json", "Content-Length": str(len(body)),
                           **(headers or {})}.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def _handle(self, body: bytes | None) -> None:
        proxy: FaultyProxy = self.server.proxy  # type: ignore[attr-defined]
        path = self.path.split("?")[0]
        action = proxy._next(path, body)
        if isinstance(action, int):
            message = {429: "rate limit reached", 500: "internal server error", 503: "overloaded"}.get(action, "refused")
            self._reply(action, json.dumps({"error": {"message": f"proxy: {message}", "code": action}}).encode(),
                        {"Retry-After": "0"} if action in (429, 503) else None)
            return
        if action == "slow":
            time.sleep(proxy.slow_seconds)
        request = urllib.request.Request(proxy.upstream + self.path, data=body, method=self.command,
                                         headers={k: v for k, v in self.headers.items()
                                                  if k.lower() in ("authorization", "content-type")})
        try:
            with urllib.request.urlopen(request, timeout=120) as answer:
                self._reply(answer.status, proxy._rewritten(path, body, answer.status, answer.read()))
        except urllib.error.HTTPError as err:
            self._reply(err.code, err.read())
        except OSError:  # the client went away (a timeout) while the answer was held back
            pass


class FaultyProxy:
    def __init__(self, upstream: str, slow_seconds: float = 3.0):
        self.upstream = upstream.rstrip("/")
        self.slow_seconds = slow_seconds
        self.plans: dict[str, collections.deque] = collections.defaultdict(collections.deque)
        self.failing: dict[str, int] = {}
        self.refused: set[str] = set()
        self.rewriter = None
        self.counts: collections.Counter = collections.Counter()
        self.lock = threading.Lock()
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.server.daemon_threads = True
        self.server.proxy = self  # type: ignore[attr-defined]
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def __enter__(self) -> "FaultyProxy":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    def plan(self, path: str, actions) -> None:
        with self.lock:
            self.plans[path].extend(actions)

    def always(self, path: str, status: int) -> None:
        with self.lock:
            self.failing[path] = status

    def refuse(self, field: str) -> None:
        with self.lock:
            self.refused.add(field)

    def rewrite(self, answer) -> None:
        with self.lock:
            self.rewriter = answer

    def _rewritten(self, path: str, body: bytes | None, status: int, answer: bytes) -> bytes:
        if self.rewriter is None or status != 200 or not path.endswith("/chat/completions") or not body:
            return answer
        reply = json.loads(answer)
        text = self.rewriter(json.loads(body), reply["choices"][0]["message"]["content"])
        if text is None:
            return answer
        reply["choices"][0]["message"]["content"] = text
        reply["choices"][0]["finish_reason"] = "stop"
        return json.dumps(reply).encode()

    def count(self, path: str) -> int:
        with self.lock:
            return self.counts[path]

    def _next(self, path: str, body: bytes | None):
        with self.lock:
            self.counts[path] += 1
            if body and self.refused:
                try:
                    fields = set(json.loads(body))
                except ValueError:
                    fields = set()
                if fields & self.refused:
                    return 400
            if self.plans[path]:
                return self.plans[path].popleft()
            return self.failing.get(path, "pass")

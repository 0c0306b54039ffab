"""A learned metric for the selection of a decode, scored in unbabel-comet's own environment.

unbabel-comet's pins conflict with the decoders' environments (docs/scoring.md, "COMET"), so a decode with COMET
as its MBR utility or with QE reranking (:mod:`docnmt.decode.mbr`) starts ``python -m docnmt.score.comet serve``
in that environment's Python and exchanges JSON lines with it: a request ``{"src": [...], "mt": [...], "ref":
[...]}`` (``ref`` for a reference-based checkpoint), an answer ``{"scores": [...]}``. The checkpoint is loaded once
per decode. Which Python: the JSON file that ``python -m docnmt.score.comet env`` writes in that environment (the
workflow's rule ``comet_env``), or this Python where none is given.

Faults. The protocol has pipes of its own (``serve --protocol-fds IN,OUT``); the child's stdout and stderr both go to
a third pipe, whose lines this process copies to its stderr (the rule's log) and whose last lines it keeps. So a
library that prints cannot garble the answers. Every read and write waits at most ``timeout`` seconds (the
checkpoint's loading included). A child that dies, hangs past the timeout or answers with something that is not an
answer stops the decode with one line (an :class:`~docnmt.textio.InputError` naming the checkpoint's folder): which
checkpoint, which request (its number, segments and source), what happened, and the child's last stderr lines.
:meth:`MetricClient.close` closes the request pipe, waits ``grace`` seconds and then kills the child.
"""

from __future__ import annotations

import collections
import json
import os
import select
import subprocess
import sys
import threading
import time
from pathlib import Path

from ..textio import InputError, load_json

#: The longest wait for an answer (and for the checkpoint's loading), in seconds: far above a selection's scoring
#: (a beam of 12: 144 segments) and an XL checkpoint's loading on a GPU.
DEFAULT_TIMEOUT = 600.0
#: Segments per forward pass of the scorer where none is given (config metrics.batch_size, --comet-batch-size).
DEFAULT_BATCH_SIZE = 64
#: The seconds a closed server gets to exit before it is killed.
GRACE = 10.0
#: The child's stderr lines an error quotes.
LAST_LINES = 5


def comet_python(env_file: os.PathLike | str | None) -> str:
    """The Python of unbabel-comet's environment, from ``env_file`` (None: this Python)."""
    if env_file is None:
        return sys.executable
    record = load_json(env_file, "COMET environment file")
    python = record.get("python") if isinstance(record, dict) else None
    if not python or not os.path.exists(python):
        raise InputError(env_file, f"expected the Python of unbabel-comet's environment under 'python', found "
                                   f"{python!r} (run make comet, or the rule comet_env, again)")
    return python


class MetricClient:
    """One checkpoint, served by a child process in unbabel-comet's environment (module docstring, "Faults"); counts
    the segments it scores (the metric's forward passes)."""

    def __init__(self, python: str, name: str, folder: os.PathLike | str, qe: bool = False, batch_size: int = DEFAULT_BATCH_SIZE,
                 timeout: float = DEFAULT_TIMEOUT, grace: float = GRACE):
        self.name, self.folder, self.timeout, self.grace = name, str(folder), timeout, grace
        self.segments = 0
        self.requests = 0
        self._last: collections.deque[str] = collections.deque(maxlen=LAST_LINES)
        requests_in, self._requests = os.pipe()  # the child reads requests_in
        self._answers, answers_out = os.pipe()  # the child writes answers_out
        log_read, log_write = os.pipe()  # the child's stdout and stderr
        command = [python, "-m", "docnmt.score.comet", "serve", "--checkpoint", self.folder, "--name", name,
                   "--batch-size", str(batch_size), "--protocol-fds", f"{requests_in},{answers_out}"] \
            + (["--qe"] if qe else [])
        try:
            self._process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log_write, stderr=log_write,
                                             pass_fds=(requests_in, answers_out))
        finally:
            for fd in (requests_in, answers_out, log_write):
                os.close(fd)
        os.set_blocking(self._requests, False)
        self._buffer = b""
        self._log = threading.Thread(target=self._copy_log, args=(log_read,), daemon=True)
        self._log.start()
        ready = self._read("loading the checkpoint")
        self.reference_free = ready["reference_free"]
        self.signature = ready["signature"]

    def _copy_log(self, fd: int) -> None:
        """The child's output lines, to this process's stderr, the last ones kept for an error."""
        with open(fd, "r", encoding="utf-8", errors="replace") as lines:
            for line in lines:
                self._last.append(line.rstrip("\n"))
                sys.stderr.write(line)
                sys.stderr.flush()

    def _fail(self, what: str, happened: str):
        """The one-line error: the checkpoint, the request, what happened and the child's last stderr lines."""
        self._log.join(timeout=1)  # the lines a dying child wrote last
        last = " | ".join(line for line in self._last if line.strip()) or "none"
        raise InputError(self.folder, f"the COMET scorer of checkpoint {self.name!r}, {what}: {happened}; its last "
                                      f"stderr lines: {last}")

    def _status(self) -> str:
        try:
            return f"exit status {self._process.wait(timeout=1)}"
        except subprocess.TimeoutExpired:
            return "still running"

    def _read(self, what: str) -> dict:
        deadline = time.monotonic() + self.timeout
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._answers], [], [], left)[0]:
                self.kill()
                self._fail(what, f"no answer within {self.timeout:g} s (the timeout); the child was killed")
            block = os.read(self._answers, 1 << 16)
            if not block:
                self._fail(what, f"the child stopped ({self._status()})")
            self._buffer += block
        line, self._buffer = self._buffer.split(b"\n", 1)
        try:
            answer = json.loads(line)
            if not isinstance(answer, dict):
                raise ValueError("not a JSON object")
        except ValueError:
            self.kill()
            self._fail(what, f"a garbled answer {line[:80].decode('utf-8', 'replace')!r}; the child was killed")
        if "error" in answer:
            self._fail(what, str(answer["error"]))
        return answer

    def _send(self, data: bytes, what: str) -> None:
        deadline = time.monotonic() + self.timeout
        while data:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([], [self._requests], [], left)[1]:
                self.kill()
                self._fail(what, f"the request was not read within {self.timeout:g} s (the timeout); the child was "
                                 "killed")
            try:
                data = data[os.write(self._requests, data):]
            except BrokenPipeError:
                self._fail(what, f"the child stopped ({self._status()})")

    def score(self, src: list[str], mt: list[str], ref: list[str] | None = None) -> list[float]:
        """Segment scores of (src, mt[, ref]) triples; ``ref`` is ignored by a reference-free checkpoint."""
        if not mt:
            return []
        request = {"src": list(src), "mt": list(mt)}
        if ref is not None and not self.reference_free:
            request["ref"] = list(ref)
        source = src[0] if len(src[0]) <= 60 else src[0][:57] + "..."
        what = f"request {self.requests + 1} ({len(mt)} segments, source {source!r})"
        self._send((json.dumps(request) + "\n").encode("utf-8"), what)
        scores = self._read(what).get("scores")
        if not isinstance(scores, list) or len(scores) != len(mt):
            self.kill()
            self._fail(what, f"expected {len(mt)} scores, found {scores!r:.80}; the child was killed")
        self.segments += len(mt)
        self.requests += 1
        return scores

    def record(self) -> dict:
        """What the decode's sidecar records of the metric: its checkpoint, signature, forward passes and timeout."""
        return {"checkpoint": self.folder, "signature": self.signature, "forward_passes": self.segments,
                "requests": self.requests, "timeout": self.timeout}

    def kill(self) -> None:
        if self._process.poll() is None:
            self._process.kill()
            self._process.wait()

    def close(self) -> None:
        """Close the request pipe (the server's end of input), wait ``grace`` seconds, then kill."""
        if self._requests >= 0:
            os.close(self._requests)
            self._requests = -1
        try:
            self._process.wait(timeout=self.grace)
        except subprocess.TimeoutExpired:
            self.kill()
        if self._answers >= 0:
            os.close(self._answers)
            self._answers = -1

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def from_args(settings, args):
    """The scorer of a learned utility (``comet:NAME``, ``qe:NAME``) from the decode's options; None otherwise."""
    if settings is None or not settings.learned:
        return None
    name, _, folder = args.comet_checkpoint.partition("=")
    return MetricClient(comet_python(args.comet_env), name, Path(folder), qe=settings.qe, timeout=args.comet_timeout,
                        batch_size=args.comet_batch_size)

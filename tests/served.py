"""A model served by vLLM's OpenAI-compatible server for the tests (tests/decode/test_openai.py,
tests/score/test_gemba_served.py): a free loopback port, waiting until it answers, and stopping its process group."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until_served(url: str, key: str, process: subprocess.Popen, log: Path, limit: float = 600) -> None:
    started = time.monotonic()
    while time.monotonic() - started < limit:
        if process.poll() is not None:
            raise AssertionError(f"the server exited ({process.returncode}):\n{log.read_text()[-4000:]}")
        try:
            request = urllib.request.Request(f"{url}/v1/models", headers={"Authorization": f"Bearer {key}"})
            with urllib.request.urlopen(request, timeout=5) as answer:
                if answer.status == 200:
                    return
        except OSError:
            time.sleep(1)
    raise AssertionError(f"the server did not answer within {limit} s:\n{log.read_text()[-4000:]}")


def stop(process: subprocess.Popen) -> None:
    """Stops the server's process group (bash, the server, its engine's processes)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=30)
            return
        except subprocess.TimeoutExpired:
            continue

"""A learned metric for the selection of a decode, scored in unbabel-comet's own environment.

unbabel-comet's pins conflict with the decoders' environments (docs/scoring.md, "COMET"), so a decode with COMET
as its MBR utility or with QE reranking (:mod:`docnmt.decode.mbr`) starts ``python -m docnmt.score.learned serve``
in that environment's Python and exchanges JSON lines with it: a request ``{"src": [...], "mt": [...], "ref":
[...]}`` (``ref`` for a reference-based checkpoint), an answer ``{"scores": [...]}``. The checkpoint is loaded once
per decode. Which Python: the JSON file that ``python -m docnmt.score.learned env`` writes in that environment (the
workflow's rule ``comet_env``), or this Python where none is given.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from ..textio import InputError, load_json


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
    """One checkpoint, served by a child process in unbabel-comet's environment; counts the segments it scores
    (the metric's forward passes)."""

    def __init__(self, python: str, name: str, folder: os.PathLike | str, qe: bool = False, batch_size: int = 64):
        self.name, self.folder = name, str(folder)
        command = [python, "-m", "docnmt.score.learned", "serve", "--checkpoint", self.folder, "--name", name,
                   "--batch-size", str(batch_size)] + (["--qe"] if qe else [])
        # the child's warnings and errors go where this process's stderr goes (the rule's log)
        self._process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                         bufsize=1)
        ready = self._read()
        self.reference_free = ready["reference_free"]
        self.signature = ready["signature"]
        self.segments = 0
        self.requests = 0

    def _read(self) -> dict:
        line = self._process.stdout.readline()
        if not line:
            status = self._process.wait()
            raise InputError(self.folder, f"the COMET scorer of checkpoint {self.name!r} stopped (exit status "
                                          f"{status}); its error is in the lines above")
        answer = json.loads(line)
        if "error" in answer:
            raise RuntimeError(f"the COMET scorer of {self.name!r}: {answer['error']}")
        return answer

    def score(self, src: list[str], mt: list[str], ref: list[str] | None = None) -> list[float]:
        """Segment scores of (src, mt[, ref]) triples; ``ref`` is ignored by a reference-free checkpoint."""
        if not mt:
            return []
        request = {"src": list(src), "mt": list(mt)}
        if ref is not None and not self.reference_free:
            request["ref"] = list(ref)
        self._process.stdin.write(json.dumps(request) + "\n")
        self._process.stdin.flush()
        scores = self._read()["scores"]
        self.segments += len(mt)
        self.requests += 1
        return scores

    def record(self) -> dict:
        """What the decode's sidecar records of the metric: its checkpoint, signature and forward passes."""
        return {"checkpoint": self.folder, "signature": self.signature, "forward_passes": self.segments,
                "requests": self.requests}

    def close(self) -> None:
        if self._process.poll() is None:
            self._process.stdin.close()
            self._process.wait(timeout=60)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def from_args(settings, args):
    """The scorer of a learned utility (``comet:NAME``, ``qe:NAME``) from the decode's options; None otherwise."""
    if settings is None or not settings.learned:
        return None
    name, _, folder = args.comet_checkpoint.partition("=")
    return MetricClient(comet_python(args.comet_env), name, Path(folder), qe=settings.qe)

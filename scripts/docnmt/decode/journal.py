"""A decode's finished work on disk as it goes, so that a killed decode resumes where it stopped.

A decode is deterministic: rerun with the same model, inputs and settings, it asks its searcher for the same
searches in the same order (one call for the one-call strategies, one per round for doc-trans, doc-trans-beam and
the other round-based ones), each with the same requests, until the point where it was killed.
:class:`JournaledSearcher` wraps the decode's searcher (the Sampler of MBR's epsilon samples included) and splits
each search call into chunks of at most :data:`CHUNK` requests, the longest requests first (so that the searcher
batches them as it would the whole call). After each chunk it appends the chunk's hypotheses, its cost counters and
its seconds to the :class:`Journal`, a file of JSON lines, flushed and synced. A rerun reads each chunk that the
journal holds for the same call, chunk and requests (compared by a digest of their token ids) instead of searching
it again, and searches the rest. The chunks of a resumed run are those of an uninterrupted one (the journal keeps
its chunk size), so its output is the same, byte for byte, where a request's search does not depend on what the
searcher computed before it (not so for a causal LM's prefix cache at beam > 1, which starts empty in the resumed
run: docs/decoding.md, "Where byte for byte does not hold").

The journal's first line is its key: everything that changes the output (:func:`decode_key`: the model's and the
inputs' checksums, the strategy and the search settings, the package version). A journal with another key is
replaced, and the decode says so in one line naming what differs. A file that is no journal at all is refused and
left as it is. A line cut short by the kill is dropped. The journal is removed when the decode has written its
outputs.

A search that fails with some of its requests answered (a served model's requests, each paid for) leaves a partial
record of those, and the rerun asks only for the others.

The cost counters of the chunks read from the journal are counted apart (:attr:`JournaledSearcher.resumed`) and
added to the totals, so that the sidecar's cost is that of one decode.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any, Sequence

from .requests import Hypothesis, request_tokens
from ..textio import file_digest

#: Requests per chunk of a search call: the granularity of resuming (4 batches of the default 64 requests).
CHUNK = 256
#: The counters a chunk records, beside a prompting searcher's ``prompt_counters()``.
COUNTERS = ("decoder_positions", "forward_calls", "oom_splits")
FORMAT = "docnmt-decode-journal/1"
#: how a journal's first line begins (its header, :class:`Journal`)
HEADER_START = json.dumps({"format": FORMAT})[:-1].encode("utf-8")


#: The inputs that are model checkpoints or folders (named so, or ending so: ``sentence_model``): keyed by their
#: fingerprints (:func:`docnmt.textio.model_fingerprint`), not by a checksum of all their bytes.
MODEL_INPUT = "model"


def decode_key(strategy: str, inputs: dict[str, Any], settings: dict[str, Any]) -> dict:
    """A decode's journal key: the strategy, ``inputs`` (name: path, or (path, pattern) for a folder's files, or
    None) by checksum (the model, :data:`MODEL_INPUT`, by its fingerprint; a served model's name as it is), and the
    search ``settings`` (JSON values)."""
    from .. import __version__
    from ..textio import model_fingerprint

    checksums = {}
    for name, value in inputs.items():
        if value is None:
            continue
        path, pattern = value if isinstance(value, tuple) else (value, "*")
        if not Path(path).exists():
            checksums[name] = str(path)
        elif name.endswith(MODEL_INPUT):
            checksums[name] = model_fingerprint(path)
        else:
            checksums[name] = file_digest(path, pattern)
    return {"strategy": strategy, "inputs": checksums, "settings": settings, "version": __version__}


def requests_digest(requests: Sequence) -> str:
    """A digest of the requests' token ids (source, prefix, document)."""
    digest = hashlib.sha256()
    for request in requests:
        for part in request_tokens(request):
            digest.update(",".join(map(str, part)).encode("ascii") + b";")
        digest.update(b"|")
    return digest.hexdigest()


def _differences(old: dict, new: dict) -> list[str]:
    found = []
    for field in ("strategy", "version"):
        if old.get(field) != new.get(field):
            found.append(field)
    for group in ("inputs", "settings"):
        mine, theirs = old.get(group, {}), new.get(group, {})
        found += [name for name in sorted(set(mine) | set(theirs)) if mine.get(name) != theirs.get(name)]
    return found or ["format"]


class Journal:
    """The journal file at ``path`` for a decode with ``key``: the records of a journal with the same key are read,
    one with another key is replaced (one line on stdout says why)."""

    def __init__(self, path: os.PathLike | str, key: dict):
        self.path = Path(path)
        self.chunk = CHUNK
        self.records: dict[tuple[int, int], dict] = {}
        self.appended = 0
        #: the search calls so far, of every searcher that shares the journal (a decode's are made in one order)
        self.calls = 0
        self.enabled = True
        self._refuse_foreign()
        header, records, valid = self._read()
        if header is not None and header.get("key") == key:
            self.chunk = int(header["chunk"])
            self.records = {(r["call"], r["chunk"]): r for r in records}
            with open(self.path, "r+b") as handle:  # drop a line cut short by the kill
                handle.truncate(valid)
            print(f"resuming from {self.path}: {len(self.records)} chunks "
                  f"({sum(len(r['hyps']) for r in records)} requests) done before", flush=True)
        else:
            if header is not None:
                print(f"{self.path}: written for another decode ({', '.join(_differences(header.get('key', {}), key))}"
                      " differ): starting afresh", flush=True)
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._write("w", {"format": FORMAT, "key": key, "chunk": self.chunk})

    def _refuse_foreign(self) -> None:
        """An InputError naming the file where it exists and is not a journal (a file given as ``--journal`` by
        mistake): it is left as it is. An empty file, or a journal's first line cut short, is a journal's."""
        from ..textio import InputError

        if not self.path.is_file():
            return
        with open(self.path, "rb") as handle:
            start = handle.read(len(HEADER_START))
        if start and not (start.startswith(HEADER_START) or HEADER_START.startswith(start)):
            raise InputError(self.path, f"expected a decode's resume journal ({FORMAT}) or no file, found another "
                                        "file: left as it is (give --journal a path of its own)")

    def _read(self) -> tuple[dict | None, list[dict], int]:
        """The header, the complete records, and the bytes they take; (None, [], 0) for no or a foreign file."""
        if not self.path.exists():
            return None, [], 0
        header, records, valid = None, [], 0
        with open(self.path, "rb") as handle:
            for raw in handle:
                if not raw.endswith(b"\n"):
                    break
                try:
                    entry = json.loads(raw)
                except ValueError:
                    break
                if header is None:
                    if not isinstance(entry, dict) or entry.get("format") != FORMAT:
                        return None, [], 0
                    header = entry
                else:
                    records.append(entry)
                valid += len(raw)
        return header, records, valid

    def next_call(self) -> int:
        """The number of the next search call (1, 2, ...), whichever of the decode's searchers makes it."""
        self.calls += 1
        return self.calls

    def lookup(self, call: int, chunk: int, digest: str) -> dict | None:
        """The record of chunk ``chunk`` of search call ``call`` with these requests, if the journal holds it."""
        record = self.records.get((call, chunk))
        return record if record is not None and record["digest"] == digest else None

    def append(self, call: int, chunk: int, digest: str, hyps: list[list[Hypothesis]], counters: dict,
               seconds: float, partial: dict[int, list[Hypothesis]] | None = None) -> None:
        """Record a searched chunk (synced to disk before this returns); ``partial``: only these of its requests
        (by their index in the chunk) were answered before the search failed. A later record of the same chunk
        takes the place of an earlier one."""
        entry = {"call": call, "chunk": chunk, "digest": digest, "counters": counters, "seconds": seconds,
                 "hyps": [_saved(nbest) for nbest in hyps]}
        if partial is not None:
            entry["partial"] = {str(index): _saved(nbest) for index, nbest in sorted(partial.items())}
        self.records[(call, chunk)] = entry
        self._write("a", entry)
        self.appended += 1

    def _write(self, mode: str, entry: dict) -> None:
        """One line, synced; on a full disk the journal is given up (one line says so) and the decode goes on: its
        outputs then meet the full disk themselves, and say so."""
        from ..textio import is_disk_full

        if not self.enabled:
            return
        try:
            with open(self.path, mode, encoding="utf-8") as handle:
                handle.write(json.dumps(entry) + "\n")
                handle.flush()
                os.fsync(handle.fileno())
        except OSError as err:
            if not is_disk_full(err):
                raise
            self.enabled = False
            self.path.unlink(missing_ok=True)
            print(f"{self.path}: no space left on the device for the resume journal: decoding on without it",
                  flush=True)

    def finish(self) -> None:
        """The decode's outputs are written: the journal is no longer needed."""
        self.path.unlink(missing_ok=True)


def _saved(nbest: list[Hypothesis]) -> list:
    return [[h.tokens, h.score, h.logprob, h.complete] for h in nbest]


def _partial(record: dict | None) -> dict[int, list[Hypothesis]]:
    """A partial record's answered requests (index in its chunk -> n-best); none for no record."""
    if record is None:
        return {}
    return {int(index): _hypotheses([saved])[0] for index, saved in record.get("partial", {}).items()}


def _hypotheses(saved: list) -> list[list[Hypothesis]]:
    return [[Hypothesis(list(tokens), score, logprob, complete) for tokens, score, logprob, complete in nbest]
            for nbest in saved]


def _size(request) -> int:
    return len(request.source) + len(request.prefix) + len(getattr(request, "document", ()) or ())


class JournaledSearcher:
    """``searcher`` with its finished chunks in ``journal`` (module docstring): the same searches, the same results,
    and the cost counters of the chunks read from the journal (:attr:`resumed`) added to the searcher's."""

    def __init__(self, searcher, journal: Journal):
        self.searcher = searcher
        self.journal = journal
        self.call = 0  # the journal's number of the search call under way
        self.resumed: dict[str, float] = {"chunks": 0, "requests": 0, "seconds": 0.0}

    def __getattr__(self, name):  # model, beam, score_forced, ...: the wrapped searcher's
        return getattr(self.searcher, name)

    def _counters(self) -> dict:
        return {**{name: getattr(self.searcher, name) for name in COUNTERS}, **self.searcher.prompt_counters(),
                **self.searcher.draft_counters()}

    @property
    def decoder_positions(self) -> int:
        return self.searcher.decoder_positions + int(self.resumed.get("decoder_positions", 0))

    @property
    def forward_calls(self) -> int:
        return self.searcher.forward_calls + int(self.resumed.get("forward_calls", 0))

    @property
    def oom_splits(self) -> int:
        return self.searcher.oom_splits + int(self.resumed.get("oom_splits", 0))

    def prompt_counters(self) -> dict:
        return {name: value + int(self.resumed.get(name, 0)) for name, value in self.searcher.prompt_counters().items()}

    def draft_counters(self) -> dict:
        from .requests import DRAFT_COUNTERS

        found = {name: getattr(self.searcher, name) + int(self.resumed.get(name, 0)) for name in DRAFT_COUNTERS}
        return found if found["verified_requests"] else {}

    def search(self, requests: Sequence) -> list:
        self.call = self.journal.next_call()
        order = sorted(range(len(requests)), key=lambda i: -_size(requests[i]))
        results: list = [None] * len(requests)
        for number, start in enumerate(range(0, len(order), self.journal.chunk)):
            chosen = order[start:start + self.journal.chunk]
            part = [requests[i] for i in chosen]
            digest = requests_digest(part)
            record = self.journal.lookup(self.call, number, digest)
            if record is not None and "partial" not in record:
                found = _hypotheses(record["hyps"])
                self._resume(record, len(part))
            else:
                found = self._searched(number, digest, part, record)
            for i, nbest in zip(chosen, found):
                results[i] = nbest
        return results

    def _resume(self, record: dict, requests: int) -> None:
        """Counts a journal record's chunk (or its answered requests) as resumed."""
        for name, value in record["counters"].items():
            self.resumed[name] = self.resumed.get(name, 0) + value
        self.resumed["chunks"] += "partial" not in record
        self.resumed["requests"] += requests
        self.resumed["seconds"] += record["seconds"]

    def _searched(self, number: int, digest: str, part: list, record: dict | None) -> list:
        """Chunk ``number`` searched and journaled: its requests that a partial ``record`` does not hold. Where the
        search fails with some requests answered (a served model's, :meth:`..backends.openai.endpoint.Endpoint.map`:
        ``answered``), those are journaled as a partial record before the error goes on, so that a rerun asks only
        for the others."""
        known = _partial(record)
        if record is not None:
            self._resume(record, len(known))
        missing = [j for j in range(len(part)) if j not in known]
        before, begin = self._counters(), time.perf_counter()

        def cost() -> dict:
            after = self._counters()
            return {name: after[name] - before.get(name, 0) for name in after}

        try:
            found = self.searcher.search([part[j] for j in missing]) if missing else []
        except Exception as err:
            answered = getattr(err, "answered", None)
            if answered:
                known.update({missing[j]: nbest for j, nbest in answered.items()})
                self.journal.append(self.call, number, digest, [], cost(), time.perf_counter() - begin,
                                    partial=known)
            raise
        known.update(zip(missing, found))
        found = [known[j] for j in range(len(part))]
        self.journal.append(self.call, number, digest, found, cost(), time.perf_counter() - begin)
        return found

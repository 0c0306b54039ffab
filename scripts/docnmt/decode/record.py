"""A decode's record, built in one place for the decode CLI (:mod:`docnmt.decode.cli`) and ``docnmt-translate``
(:mod:`docnmt.decode.translate`): its resume journal (:mod:`.journal`: the key of its inputs and settings, the
searchers wrapped so that their finished chunks are kept), the cost it reports (this run's and the journal's, as one
decode's), its signature, and the end of its journal once its outputs are written.

    record = DecodeRecord.open(strategy, {"model": path, "src": path}, settings, journal_path)
    searcher = record.wrap(make_searcher(model, ...))   # every searcher of the decode, in the order it makes them
    ...                                                  # the decode
    cost = record.cost(searcher, decoder.stats, seconds)
    ...                                                  # the outputs written
    record.finish()

A decode whose record has no journal (``journal_path`` None: ``--no-journal``) writes and reads nothing.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .. import __version__
from .journal import Journal, JournaledSearcher, decode_key


def settings_of(arguments: dict[str, Any], left_out: tuple[str, ...]) -> dict[str, Any]:
    """The search settings a journal is keyed by: the arguments (JSON values; others as text) less ``left_out``
    (inputs, outputs, and the load options that say only how requests reach a served model), sorted."""
    from .load_options import transport_options

    transport = transport_options()
    settings = {name: value if isinstance(value, (int, float, str, bool, type(None), dict, list)) else str(value)
                for name, value in sorted(arguments.items()) if name not in left_out + transport}
    if isinstance(settings.get("engine_args"), dict):
        settings["engine_args"] = {k: v for k, v in sorted(settings["engine_args"].items())
                                   if k not in transport}
    return settings


def signature(strategy: str, backend: str, beam: int, lenpen: float, k: int, context: str, h: int | None,
              dtype: str, mbr=None, cad: float | None = None) -> str:
    """A decode's signature, sacrebleu's way: what its output depends on, in one line."""
    return (f"docnmt-decode|strategy:{strategy}|backend:{backend}|beam:{beam}|lenpen:{lenpen}|k:{k}"
            + ("|context:document" if context == "document" else "")
            + f"|h:{h if h is not None else '-'}|dtype:{dtype}"
            + ("" if mbr is None else f"|{'qe' if mbr.qe else 'mbr'}:{mbr.candidates}-{mbr.count}-{mbr.utility}"
               + (f"-eps{mbr.epsilon}-seed{mbr.seed}" if mbr.candidates == "sampling" else ""))
            + ("" if cad is None else f"|cad:{cad}")
            + f"|version:{__version__}")


class DecodeRecord:
    """One decode's journal and the cost of its searchers (module docstring)."""

    def __init__(self, journal: Journal | None):
        self.journal = journal
        self.searchers: list[JournaledSearcher] = []

    @classmethod
    def open(cls, strategy: str, inputs: dict[str, Any], settings: dict[str, Any],
             journal_path: os.PathLike | str | None) -> "DecodeRecord":
        """The record of a decode of ``strategy`` on ``inputs`` (name: path; a model checkpoint or folder under a
        name ending in ``model``, by its fingerprint) with ``settings``, journaled at ``journal_path`` (None: not
        journaled): a journal of the same key there is resumed, another replaced, a file that is no journal
        refused."""
        if journal_path is None:
            return cls(None)
        return cls(Journal(Path(journal_path), decode_key(strategy, inputs, settings)))

    def wrap(self, searcher):
        """``searcher`` journaled (as it is without a journal). The decode's searchers share the journal: wrap each
        before the decode, in the same order at every run."""
        if self.journal is None:
            return searcher
        journaled = JournaledSearcher(searcher, self.journal)
        self.searchers.append(journaled)
        return journaled

    def resumed(self) -> dict[str, float]:
        """What the journal gave this run: chunks, requests, seconds and cost counters, all searchers' together."""
        total: dict[str, float] = {"chunks": 0, "requests": 0, "seconds": 0.0}
        for searcher in self.searchers:
            for name, value in searcher.resumed.items():
                total[name] = total.get(name, 0) + value
        return total

    def cost(self, searcher, stats, seconds: float) -> dict[str, Any]:
        """The sidecar's cost of the decode that ``searcher`` (its main searcher, journaled or not) ran: its
        counters (the journal's chunks included), the decoder's ``stats``, and ``seconds`` plus the journal's."""
        resumed = self.resumed()
        return {"decoder_positions": searcher.decoder_positions, "forward_calls": searcher.forward_calls,
                **searcher.prompt_counters(), **_drafts(searcher), "requests": stats.requests, "oom_splits": searcher.oom_splits,
                "seconds": round(seconds + resumed["seconds"], 3), "sep_mismatch": stats.sep_mismatch,
                "context_truncated": stats.context_truncated, "rounds": stats.rounds,
                "repeated_requests": stats.repeated_requests,
                "resumed": {name: round(value, 3) if isinstance(value, float) else value
                            for name, value in resumed.items()}}

    def finish(self) -> None:
        """The decode's outputs are written: its journal goes."""
        if self.journal is not None:
            self.journal.finish()


def _drafts(searcher) -> dict:
    """The sidecar's ``drafts`` (draft verification's counters, :mod:`docnmt.decode.verification`) where a draft was
    verified."""
    found = searcher.draft_counters() if hasattr(searcher, "draft_counters") else {}
    return {"drafts": found} if found else {}

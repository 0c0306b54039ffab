"""The per-sentence P-CXMI file of :mod:`docnmt.score.cxmi` (``--sentences``): writing it and reading it back.

Tab-separated, with a header: ``line`` (1-based, in the evaluation set's files), ``docid``, ``position``
(1-based, in its document), ``tokens`` (target tokens, ``</s>`` included), ``p_cxmi`` (the reference's,
nats), then optional columns (``p_cxmi_sentence_model``, ``p_cxmi[STRATEGY]``). Read without torch, so the
scoring environment's rules (context usage, plots) can read it.
"""

from __future__ import annotations

from pathlib import Path

from ..textio import InputError, read_lines

TSV_FIXED = ("line", "docid", "position", "tokens", "p_cxmi")


def write_sentences(handle, rows: list[dict], columns: list[str]) -> None:
    handle.write("\t".join(columns) + "\n")
    for row in rows:
        handle.write("\t".join(f"{row[c]:.6f}" if isinstance(row[c], float) else str(row[c]) for c in columns) + "\n")


def read_sentences(path: Path | str) -> list[dict]:
    """The ``--sentences`` file back: one dict per row, numbers as numbers."""
    rows = read_lines(path)
    if not rows or rows[0].split("\t")[:len(TSV_FIXED)] != list(TSV_FIXED):
        raise InputError(path, f"expected a header starting with {' '.join(TSV_FIXED)}", 1)
    header = rows[0].split("\t")
    out = []
    for number, text in enumerate(rows[1:], start=2):
        cells = text.split("\t")
        if len(cells) != len(header):
            raise InputError(path, f"expected {len(header)} tab-separated fields, found {len(cells)}", number)
        try:
            row = {h: (c if h == "docid" else int(c) if h in ("line", "position", "tokens") else float(c))
                   for h, c in zip(header, cells)}
        except ValueError:
            raise InputError(path, "expected numbers in every field but docid", number) from None
        out.append(row)
    return out

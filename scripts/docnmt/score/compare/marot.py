"""Google's Marot data file (``marot/README.md`` of google-research): ten tab-separated columns per row, ``system``,
``doc``, ``docSegId``, ``globalSegId``, ``rater``, ``source``, ``target``, ``category``, ``severity`` and
``metadata`` (a JSON object), after a header line.

- One metrics row per segment and system: ``rater``, ``category`` and ``severity`` empty, the segment's scores in
  ``metadata.segment.metrics``, its tokens in ``source_tokens`` and ``target_tokens``, and the reference in
  ``reference_tokens`` under ``primary_reference``.
- One error row per XCOMET or GEMBA-ESA span: the rater named after the metric, the severity given, the span marked
  ``<v>…</v>`` in the target and ``metadata.target_spans`` as the first and last token index of it.

Tokens are the text's runs of non-space and of space characters, so that joined they give the text back.
"""

from __future__ import annotations

import json
import re

from . import randomization

COLUMNS = ("system", "doc", "docSegId", "globalSegId", "rater", "source", "target", "category", "severity",
           "metadata")
REFERENCE = "reference"
_TOKEN = re.compile(r"\S+|\s+")


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


def _cell(text: str) -> str:
    return text.replace("\t", " ").replace("\n", " ").replace("\r", " ")


def token_span(text: str, start: int, end: int) -> tuple[int, int]:
    """The first and last token (indices of :func:`tokens`) that the characters ``start`` to ``end`` touch."""
    first = last = None
    at = 0
    for index, token in enumerate(tokens(text)):
        if at < max(end, start + 1) and at + len(token) > start:
            first = index if first is None else first
            last = index
        at += len(token)
    if first is None:  # an empty span at the very end
        count = len(tokens(text))
        first = last = max(0, count - 1)
    return first, last


def segment_metrics(data: dict, system: str, line: int) -> dict[str, float]:
    out = {}
    for metric in data["metrics"]:
        if metric["unit"] != "segment":
            continue
        width = metric["width"]
        row = metric["stats"][system][line * width:(line + 1) * width]
        out[metric["name"]] = round(randomization.score(metric["kind"], row, 1) * metric["scale"], 6)
    return out


def rows(data: dict) -> list[list[str]]:
    """Every row of the file (without the header)."""
    out = []
    doc_position = {}
    for doc in data["documents"]:
        for position, line in enumerate(doc["lines"]):
            doc_position[line] = (doc["id"], position + 1)
    spans_of: dict[tuple[str, int], list] = {}
    for system_index, line, start, end, severity, metric in data["spans"]:
        spans_of.setdefault((data["systems"][system_index], line), []).append((start, end, severity, metric))
    for system in data["systems"]:
        for line, target in enumerate(data["outputs"][system]):
            doc, seg = doc_position[line]
            source = data["source"][line]
            segment = {"metrics": segment_metrics(data, system, line), "source_tokens": tokens(source),
                       "target_tokens": tokens(target), "reference_tokens": {REFERENCE: tokens(data["reference"][line])},
                       "primary_reference": REFERENCE}
            base = [system, doc, str(seg), str(line + 1)]
            out.append(base + ["", _cell(source), _cell(target), "", "",
                               json.dumps({"segment": segment}, ensure_ascii=False)])
            for start, end, severity, metric in spans_of.get((system, line), []):
                first, last = token_span(target, start, end)
                pieces = tokens(target)
                marked = "".join(pieces[first:last + 1])
                shown = "".join(pieces[:first]) + "<v>" + marked + "</v>" + "".join(pieces[last + 1:])
                meta = {"target_spans": [[first, last]], "source_spans": [], "marked_text": marked,
                        "segment": {"target_tokens": pieces}}
                out.append(base + [metric, _cell(source), _cell(shown), "Other",
                                   data["severities"][severity].capitalize(), json.dumps(meta, ensure_ascii=False)])
    return out


def text(data: dict) -> str:
    """The file: the header line, then :func:`rows`."""
    return "".join("\t".join(row) + "\n" for row in [list(COLUMNS), *rows(data)])

"""Google's Marot data file (``marot/README.md`` and ``marot.js`` of google-research): ten tab-separated columns per
row, ``system``, ``doc``, ``docSegId``, ``globalSegId``, ``rater``, ``source``, ``target``, ``category``,
``severity`` and ``metadata`` (a JSON object), after a header line. What Marot's code requires, and how this file
meets it:

- **A metrics row per segment and system**, ``rater``, ``category`` and ``severity`` empty: ``metadata.segment``
  holds the segment's scores (``metrics``), its tokens (``source_tokens``, ``target_tokens``) and, wherever tokens
  are given, their sentence splits (``source_sentence_splits``, ``target_sentence_splits``: ``[{"num_tokens": n}]``,
  one sentence a segment, adding up to the token count; marot.js iterates them for every segment it shows). Tokens
  are the text's runs of non-space and of space characters, so that joined they give the column's text back.
- **The reference once per segment**, on the first system's metrics row: ``references`` (``{name: text}``) and
  ``primary_reference``, as the README documents them (Marot tokenizes them itself).
- **Metrics Marot can read**: Marot takes every metric but MQM and AutoMQM as higher-is-better, for sorting and its
  significance tests, so a lower-is-better metric (TER, MetricX) is exported negated under its name with a ``-``
  before it (``-TER``). Every value is a finite JSON number: where a metric is undefined for some system's segment
  (NaN), it is left out of that segment for every system, so that a segment has a metric for all systems or none
  (Marot's default filter hides the others).
- **Error spans as automatic MQM**: a rater whose name starts with ``AutoMQM`` is scored as an automatic MQM metric
  of its own, any other as a human rater; so XCOMET's and GEMBA-ESA's spans are rows of the rater
  ``AutoMQM-<metric>`` (``AutoMQM-XCOMET[...]``), category ``Other``, the severity given, the span marked
  ``<v>…</v>`` in the target and ``metadata.target_spans`` the 0-based, inclusive indices of its first and last token
  in the segment's ``target_tokens``. A segment that a span metric scored gets a row of that rater for every system,
  category and severity ``no-error`` where it found no span: Marot hides a segment that some systems have MQM or
  AutoMQM ratings for and others not. A span metric that did not score every system is left out (:func:`notes`).
- **Text Marot can split**: a tab, carriage return or newline inside a text becomes a space (the same length, so a
  span's offsets still hold), in the columns and the tokens alike.
"""

from __future__ import annotations

import json
import math
import re

from . import randomization

COLUMNS = ("system", "doc", "docSegId", "globalSegId", "rater", "source", "target", "category", "severity",
           "metadata")
REFERENCE = "reference"
#: The prefix that makes Marot score a rater as automatic MQM (marot.js: ``isMQMOrAutoMQM``).
AUTOMQM = "AutoMQM-"
NO_ERROR = "no-error"
_TOKEN = re.compile(r"\S+|\s+")
_BREAKS = str.maketrans({"\t": " ", "\n": " ", "\r": " "})


def clean(text: str) -> str:
    """A text as a column holds it: tabs and line breaks as spaces (one character each)."""
    return text.translate(_BREAKS)


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


def sentence_splits(pieces: list[str]) -> list[dict]:
    """One sentence of all the tokens (a segment is a sentence here); none for an empty text."""
    return [{"num_tokens": len(pieces)}] if pieces else []


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


def exported_name(metric: dict) -> str:
    """The metric's name in the file: as it is, or with ``-`` before it where lower is better (its values negated)."""
    return metric["name"] if metric["higher"] else f"-{metric['name']}"


def segment_metrics(data: dict, line: int) -> dict[str, dict[str, float]]:
    """Every system's segment scores of one segment, by exported name: a metric undefined for any system's segment
    is left out for all of them."""
    out: dict[str, dict[str, float]] = {system: {} for system in data["systems"]}
    for metric in data["metrics"]:
        if metric["unit"] != "segment":
            continue
        width, sign = metric["width"], 1 if metric["higher"] else -1
        values = {system: randomization.score(metric["kind"], metric["stats"][system][line * width:(line + 1) * width],
                                              1) * metric["scale"] * sign for system in data["systems"]}
        if all(math.isfinite(v) for v in values.values()):
            for system, value in values.items():
                out[system][exported_name(metric)] = round(value, 6) + 0.0  # no -0.0
    return out


def span_metrics(data: dict) -> list[str]:
    """The span metrics that scored every system: each gets a rater of its own."""
    everyone = set(range(len(data["systems"])))
    return [metric for metric, systems in data.get("span_scored", {}).items() if set(systems) >= everyone]


def notes(data: dict) -> list[str]:
    """What the file leaves out, and why."""
    kept = span_metrics(data)
    return [f"{metric}'s spans are left out of the Marot file: it scored {len(systems)} of the "
            f"{len(data['systems'])} systems, and Marot hides a segment rated for some systems only"
            for metric, systems in data.get("span_scored", {}).items() if metric not in kept]


def _json(value) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


def rows(data: dict) -> list[list[str]]:
    """Every row of the file (without the header)."""
    out = []
    doc_position = {}
    for doc in data["documents"]:
        for position, line in enumerate(doc["lines"]):
            doc_position[line] = (doc["id"], position + 1)
    spans_of: dict[tuple[str, int, str], list] = {}
    for system_index, line, start, end, severity, metric in data["spans"]:
        spans_of.setdefault((data["systems"][system_index], line, metric), []).append((start, end, severity))
    raters = span_metrics(data)
    first_system = data["systems"][0]
    scores = [segment_metrics(data, line) for line in range(len(data["source"]))]
    for system in data["systems"]:
        for line, raw_target in enumerate(data["outputs"][system]):
            doc, seg = doc_position[line]
            source, target = clean(data["source"][line]), clean(raw_target)
            source_tokens, target_tokens = tokens(source), tokens(target)
            segment = {"metrics": scores[line][system],
                       "source_tokens": source_tokens, "source_sentence_splits": sentence_splits(source_tokens),
                       "target_tokens": target_tokens, "target_sentence_splits": sentence_splits(target_tokens)}
            if system == first_system:
                segment["references"] = {REFERENCE: clean(data["reference"][line])}
                segment["primary_reference"] = REFERENCE
            base = [clean(system), clean(doc), str(seg), str(line + 1)]
            out.append(base + ["", source, target, "", "", _json({"segment": segment})])
            for metric in raters:
                rater = AUTOMQM + metric
                found = spans_of.get((system, line, metric), [])
                if not found:
                    out.append(base + [rater, source, target, NO_ERROR, NO_ERROR,
                                       _json({"source_spans": [], "target_spans": [], "marked_text": ""})])
                for start, end, severity in found:
                    first, last = token_span(target, start, end)
                    marked = "".join(target_tokens[first:last + 1])
                    shown = "".join(target_tokens[:first]) + "<v>" + marked + "</v>" + "".join(
                        target_tokens[last + 1:])
                    meta = {"source_spans": [], "target_spans": [[first, last]], "marked_text": marked}
                    out.append(base + [rater, source, shown, "Other", data["severities"][severity].capitalize(),
                                       _json(meta)])
    return out


def text(data: dict) -> str:
    """The file: the header line, then :func:`rows`."""
    return "".join("\t".join(row) + "\n" for row in [list(COLUMNS), *rows(data)])

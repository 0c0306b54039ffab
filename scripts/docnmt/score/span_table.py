"""The table ``xcomet_spans``: XCOMET's error spans per strategy (:mod:`docnmt.score.comet`'s ``--error-spans``
file), beside the paper's tables (:mod:`docnmt.score.tables`)."""

from __future__ import annotations

from pathlib import Path

from ..decode.variants import label as label_of
from ..tablefmt import DASH, Table
from ..textio import json_lines

#: The commonest spans a cell of xcomet_spans names.
COMMONEST_SPANS = 5


def xcomet_spans_table(manifest: dict) -> Table:
    """Per strategy and XCOMET checkpoint: how many segments have error spans, the spans by severity, and the
    commonest spans' texts (docnmt.score.comet's ``--error-spans`` file)."""
    from collections import Counter

    found: dict[tuple[str, str], dict[str, list]] = {}
    for t, spec in manifest["tasks"].items():
        for path in spec.get("comet_error_spans", {}).values():
            for _, row in json_lines(Path(path), blank_lines="skip"):
                found.setdefault((t, row["metric"]), {})[row["system"]] = row["spans"]
    header = ["strategy"]
    for t, metric in found:
        header += [f"{t} {metric} segments with spans", f"{t} {metric} minor/major/critical",
                   f"{t} {metric} commonest spans"]
    rows = []
    for strategy in manifest["strategies"]:
        cells = [label_of(strategy)]
        for key, by_system in found.items():
            segments = by_system.get(strategy)
            if segments is None:
                cells += [DASH] * 3
                continue
            spans = [span for segment in segments for span in segment]
            severity = Counter(span["severity"] for span in spans)
            texts = Counter((span["text"].strip(), span["severity"]) for span in spans if span["text"].strip())
            cells += [f"{sum(1 for s in segments if s)}/{len(segments)}",
                      "/".join(str(severity.get(k, 0)) for k in ("minor", "major", "critical")),
                      "; ".join(f"\"{text}\" {level} x{n}" for (text, level), n in
                                texts.most_common(COMMONEST_SPANS)) or DASH]
        rows.append(cells)
    notes = [f"XCOMET's error spans on the test set (docnmt.score.comet, metadata.error_spans): the segments in "
             f"which the checkpoint tags any span, the spans by severity, and the {COMMONEST_SPANS} commonest span "
             "texts with their severity and count. Every span, with its offsets and confidence, is in "
             "results/TASK/scores/test/comet.error_spans.jsonl."]
    return Table("xcomet_spans", "XCOMET's error spans per strategy", header, rows, notes)

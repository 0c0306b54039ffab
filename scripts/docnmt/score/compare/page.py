"""The comparison page: the data it embeds (:func:`page_data`), the numbers it shows for a set of segments
(:func:`overview`, the page script's ``overview`` in Python), and the one self-contained HTML file (:func:`render`:
the data, ``page.js`` and ``page.css`` of this folder embedded; nothing is fetched)."""

from __future__ import annotations

import json
import math
from importlib import resources

import numpy as np

from ... import __version__
from .. import evalset
from . import collect, randomization

#: The page's files in this package (plain JavaScript and CSS, no build step).
ASSETS = ("page.html", "page.css", "page.js")


def _compact(rows: list[list[float]]) -> list:
    """Statistics as JSON numbers: integers where they are whole (sacrebleu's counts), to keep the page small."""
    return [int(v) if float(v).is_integer() else v for row in rows for v in row]


def page_data(inputs: collect.Inputs, trials: int = randomization.TRIALS, seed: int = randomization.SEED) -> dict:
    """Everything the page shows, read and checked (:mod:`.collect`)."""
    test_set = evalset.load(inputs.source, inputs.reference, inputs.systems)
    source, reference, outputs = test_set.source, test_set.reference, test_set.systems
    _, docids = evalset.read_documents(inputs.source, inputs.docids)
    systems = list(outputs)
    baseline = inputs.baseline or systems[0]
    if baseline not in outputs:
        raise ValueError(f"--baseline {baseline}: not a system given ({', '.join(systems)})")
    docs = collect.documents(docids)
    notes: list[str] = []
    metrics = collect.corpus_statistics(outputs, reference, docs)
    metrics += collect.segment_scores(inputs.scores, systems, len(source), notes)
    pronouns_file = inputs.pronouns or (inputs.scores / "pronouns.sentences.jsonl" if inputs.scores else None)
    pronouns = collect.pronoun_counts(pronouns_file, systems, len(source))
    metrics += collect.pronoun_metrics(pronouns, systems)
    for metric in metrics:
        metric["width"] = len(next(iter(metric["stats"].values()))[0])
        metric["stats"] = {s: _compact(rows) for s, rows in metric["stats"].items()}
        metric.setdefault("scale", 1.0)
    spans = list(inputs.spans)
    if inputs.scores is not None and (inputs.scores / "comet.error_spans.jsonl").is_file() and not spans:
        spans.append(inputs.scores / "comet.error_spans.jsonl")
    span_scored: dict[str, list[int]] = {}
    found_spans = collect.error_spans(spans, systems, outputs, span_scored)
    return {
        "format": 1, "title": inputs.title, "generator": f"docnmt-compare {__version__}",
        "seed": seed, "trials": trials, "alpha": randomization.ALPHA, "baseline": baseline, "systems": systems,
        "source": source, "reference": reference, "documents": docs,
        "doc_of": _doc_of(docs, len(source)),
        "outputs": outputs, "metrics": metrics,
        "contexts": collect.contexts(inputs, systems),
        "spans": found_spans,
        "span_scored": span_scored,
        "severities": list(collect.SEVERITIES),
        "pronouns": pronouns,
        "tests": collect.context_tests(inputs, systems),
        "notes": notes,
    }


def _doc_of(docs: list[dict], count: int) -> list[int]:
    owner = [0] * count
    for index, doc in enumerate(docs):
        for line in doc["lines"]:
            owner[line] = index
    return owner


def units(data: dict, metric: dict, segments: list[int]) -> list[int]:
    """The units a metric is computed on for a set of visible segments: the segments (a segment metric's, or a
    sentence's pronoun counts), or for a document metric (d-BLEU) every document with a visible segment, whole."""
    if metric["unit"] != "document":
        return segments
    return sorted({data["doc_of"][i] for i in segments})


def _rows(metric: dict, system: str, chosen: list[int]) -> np.ndarray:
    width = metric["width"]
    flat = np.asarray(metric["stats"][system], dtype="float64").reshape(-1, width)
    return flat[chosen]


def value(metric: dict, rows: np.ndarray) -> float:
    """The metric on these units, as the page shows it (times its scale)."""
    return randomization.score(metric["kind"], randomization.summed(rows), len(rows), metric.get("weights", ())) \
        * metric["scale"]


def overview(data: dict, segments: list[int], baseline: str | None = None) -> dict:
    """Every metric of every system on these segments, and each system's paired approximate randomization test
    against the baseline: ``{metric: {system: {"score", "delta", "p"}}}`` (the page's Overview)."""
    baseline = baseline or data["baseline"]
    out: dict = {}
    for metric in data["metrics"]:
        chosen = units(data, metric, segments)
        words = randomization.swap_words(len(chosen), data["trials"], data["seed"])
        base_rows = _rows(metric, baseline, chosen)
        out[metric["name"]] = {}
        for system in data["systems"]:
            rows = _rows(metric, system, chosen)
            entry = {"score": value(metric, rows) if chosen else float("nan")}
            if system != baseline and chosen:
                test = randomization.paired_test(metric["kind"], base_rows, rows, words, metric.get("weights", ()))
                entry["delta"] = test["delta"] * metric["scale"]
                entry["p"] = test["p"]
            out[metric["name"]][system] = entry
    return out


def printed(data: dict, table: dict) -> dict:
    """The Overview's numbers as the page prints them: ``{metric: {system: [score, delta, p]}}`` (strings)."""
    digits = {m["name"]: m["digits"] for m in data["metrics"]}
    out = {}
    for name, by_system in table.items():
        out[name] = {}
        for system, entry in by_system.items():
            cells = [f"{entry['score']:.{digits[name]}f}" if math.isfinite(entry["score"]) else "–"]
            if "delta" in entry:  # no difference where either side's score is undefined (an F1 without examples)
                finite = math.isfinite(entry["delta"])
                cells += [f"{entry['delta']:+.{digits[name]}f}" if finite else "–",
                          f"{entry['p']:.4f}" if finite else "–"]
            out[name][system] = cells
    return out


def _asset(name: str) -> str:
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def render(data: dict) -> str:
    """The page: one HTML file with the data, the script and the style embedded."""
    payload = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    payload = payload.replace("</", "<\\/")  # no "</script>" inside the data
    html = _asset("page.html")
    return (html.replace("/*STYLE*/", _asset("page.css"))
            .replace("/*SCRIPT*/", _asset("page.js"))
            .replace("{{TITLE}}", json.dumps(data["title"])[1:-1].replace("<", "&lt;"))
            .replace("{{DATA}}", payload))

"""What the comparison page shows, read from files and checked: the test set (source, reference, documents), every
system's translation, each metric's statistics per segment, the target context each strategy decoded each sentence
with, the error spans, the pronoun counts and the examples of the test sets of context.

Every input is checked where it is read: a file whose line count differs from the source's, a system named twice, a
spans or scores file that does not parse is an :class:`~docnmt.textio.InputError` naming the file (and line).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from ...textio import InputError, file_digest, json_lines, load_json, read_lines

#: The corpus metrics recomputed from sacrebleu's statistics: Table 3's name -> the page's kind.
CORPUS_KINDS = {"BLEU": "bleu", "chrF++": "chrf", "TER": "ter"}
DOCUMENT_BLEU = "d-BLEU"
#: Severities of error spans, mildest first (XCOMET's and GEMBA-ESA's words).
SEVERITIES = ("minor", "major", "critical")


@dataclass
class Inputs:
    """Everything the page is built from (the CLI's options)."""

    source: Path
    reference: Path
    docids: Path
    systems: dict[str, Path]
    baseline: str | None = None
    scores: Path | None = None
    spans: list[Path] = field(default_factory=list)
    pronouns: Path | None = None
    context_sets: dict[str, Path] = field(default_factory=dict)
    context_sources: dict[str, Path] = field(default_factory=dict)
    context_systems: dict[str, dict[str, Path]] = field(default_factory=dict)
    title: str = "docnmt-compare"


def documents(docids: list[str]) -> list[dict]:
    """The documents in order of first appearance: ``{"id", "lines"}`` (the 0-based lines of each)."""
    found: dict[str, list[int]] = {}
    for line, docid in enumerate(docids):
        found.setdefault(docid, []).append(line)
    return [{"id": docid, "lines": lines} for docid, lines in found.items()]


# ---- metrics ------------------------------------------------------------------------------------------------
def _statistics(metric, outputs: dict[str, list[str]], references: list[str]) -> dict[str, list[list[float]]]:
    """sacrebleu's statistics of every system's every segment, each distinct (segment, translation) computed once:
    the strategies translate most sentences alike, and TER's statistics are slow."""
    cache = metric._cache_references([references])
    wanted: dict[tuple[int, str], int] = {}
    for hyps in outputs.values():
        for line, hyp in enumerate(hyps):
            wanted.setdefault((line, hyp), len(wanted))
    pairs = list(wanted)
    metric._ref_cache = [cache[line] for line, _ in pairs]
    rows = [list(map(float, row)) for row in metric._extract_corpus_statistics([hyp for _, hyp in pairs], None)]
    return {system: [rows[wanted[(line, hyp)]] for line, hyp in enumerate(hyps)] for system, hyps in outputs.items()}


def corpus_statistics(outputs: dict[str, list[str]], reference: list[str], docs: list[dict]) -> list[dict]:
    """BLEU, chrF++ and TER (sacrebleu's statistics per segment, the tables' settings), and d-BLEU (per document,
    the sentences joined as the tables join them)."""
    from sacrebleu.metrics import BLEU

    from ..sacrebleu_metrics import _metrics

    metrics = []
    for name, metric in _metrics().items():
        stats = _statistics(metric, outputs, reference)  # before the signature, which needs the references
        metrics.append({"name": name, "kind": CORPUS_KINDS[name], "unit": "segment",
                        "higher": name != "TER", "digits": 2, "signature": str(metric.get_signature()),
                        "stats": stats})
    joined_ref = [" ".join(reference[i] for i in doc["lines"]) for doc in docs]
    joined = {system: [" ".join(hyps[i] for i in doc["lines"]) for doc in docs] for system, hyps in outputs.items()}
    bleu = BLEU()
    stats = _statistics(bleu, joined, joined_ref)
    metrics.append({"name": DOCUMENT_BLEU, "kind": "bleu", "unit": "document", "higher": True, "digits": 2,
                    "signature": f"{DOCUMENT_BLEU}|{bleu.get_signature()}", "stats": stats})
    return metrics


def segment_scores(folder: Path | None, systems: list[str], count: int, notes: list[str]) -> list[dict]:
    """The segment-level metrics a scores folder holds for these systems: COMET's segments file, and every seam
    score file with ``segments`` (MetricX, GEMBA, one's own), each with its declaration's scale and direction
    (:class:`docnmt.score.metric.Metric`, found by the score file's name)."""
    if folder is None:
        return []
    from ..metric import metrics as declared_metrics

    declared = declared_metrics()
    found: dict[str, tuple[object, dict[str, list[float]], str]] = {}
    for path in sorted(folder.glob("*.json")):
        metric = declared.get(path.stem)
        if metric is None or not metric.rule:
            continue
        score_file = load_json(path, "score file")
        if not isinstance(score_file, dict):
            raise InputError(path, "expected a score file (a JSON object)")
        signatures = score_file.get("signatures", {})
        segments = score_file.get("segments")
        if segments is None and "segments" in metric.outputs:  # COMET: its segments file beside the score file
            segments = {}
            segments_path = folder / Path(metric.outputs["segments"]("T", "E")).name
            for number, record in json_lines(segments_path):
                if not isinstance(record, dict) or not {"metric", "system", "scores"} <= set(record):
                    raise InputError(segments_path, "expected a record with the fields metric, system and scores",
                                     number)
                segments.setdefault(record["metric"], {})[record["system"]] = record["scores"]
        for column, by_system in (segments or {}).items():
            found[column] = (metric, by_system, signatures.get(column, ""))
    out = []
    for column, (metric, by_system, signature) in found.items():
        if any(s not in by_system for s in systems):
            continue  # a metric scores what it was given: a system it lacks (an MBR curve's) has no column here
        for system in systems:
            if len(by_system[system]) != count:
                raise InputError(folder, f"{column} of {system}: expected {count} segment scores, found "
                                         f"{len(by_system[system])}")
        if any(v is None for system in systems for v in by_system[system]):
            notes.append(f"{column} is left off: it did not score every segment (a sample, or answers that did not "
                         "parse)")
            continue
        out.append({"name": column, "kind": "mean", "unit": "segment", "higher": metric.higher_better(column)
                    if isinstance(metric.higher_is_better, dict) else metric.higher_is_better,
                    "digits": metric.digits, "scale": metric.scale, "signature": signature,
                    "stats": {s: [[float(v)] for v in by_system[s]] for s in systems}})
    return out


# ---- error spans --------------------------------------------------------------------------------------------
def error_spans(paths: list[Path], systems: list[str], outputs: dict[str, list[str]],
                scored: dict[str, list[int]] | None = None) -> list[list]:
    """Every span of XCOMET's (``comet.error_spans.jsonl``) or GEMBA-ESA's files in that format: ``[system index,
    segment, start, end, severity index, metric]`` with character offsets into the system's output. ``scored``, where
    given, gets each span metric's systems (their indices) whose every segment it scored, spans found or not."""
    spans = []
    scored = {} if scored is None else scored
    for path in paths:
        for number, record in json_lines(path):
            if not isinstance(record, dict) or not {"metric", "system", "spans"} <= set(record) or not isinstance(
                    record["spans"], list):
                raise InputError(path, "expected a record with the fields metric, system and spans (a list per "
                                       "segment)", number)
            if record["system"] not in outputs:
                continue
            system = systems.index(record["system"])
            lines = outputs[record["system"]]
            if len(record["spans"]) != len(lines):
                raise InputError(path, f"expected spans for {len(lines)} segments of {record['system']}, found "
                                       f"{len(record['spans'])}", number)
            scored.setdefault(record["metric"], [])
            if system not in scored[record["metric"]]:
                scored[record["metric"]].append(system)
            for segment, found in enumerate(record["spans"]):
                for span in found:
                    severity = str(span.get("severity", "")).lower() if isinstance(span, dict) else ""
                    if severity not in SEVERITIES or not isinstance(span.get("start"), int) or not isinstance(
                            span.get("end"), int):
                        raise InputError(path, "expected each span with an integer start and end and a severity "
                                               f"({', '.join(SEVERITIES)})", number)
                    start = max(0, min(span["start"], len(lines[segment])))
                    end = max(start, min(span["end"], len(lines[segment])))
                    spans.append([system, segment, start, end, SEVERITIES.index(severity), record["metric"]])
    return spans


# ---- context ------------------------------------------------------------------------------------------------
def sidecar(path: Path) -> dict:
    """A system's decode sidecar beside its translation (``NAME.json``), or an empty dict."""
    candidate = path.with_suffix(".json")
    if not candidate.is_file():
        return {}
    try:
        data = json.loads(candidate.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) and "strategy" in data else {}


def contexts(inputs: Inputs, systems: list[str]) -> dict[str, dict]:
    """Per system: the kind of target context its strategy decodes with (its sidecar names the strategy; the
    strategy's :attr:`~docnmt.decode.strategy_registry.StrategyInfo.target_context`), k, the first pass (the
    system whose file is the one the sidecar names by its sha256; refine's draft likewise) and the recorded context
    where the sidecar keeps it; a pooled selection's (pooled+docmbr) the strategy that won each document (``pooled``: the page shows the
    winner and its context). A system without a sidecar: ``unknown``."""
    from ...decode.strategies import STRATEGIES

    # each system's files (BPE, text) by sha256: a sidecar names its first pass so
    digests = {name: {file_digest(f) for f in (path.with_suffix(".bpe"), path.with_suffix(".txt")) if f.is_file()}
               for name, path in inputs.systems.items()}
    out = {}
    for name in systems:
        found = sidecar(inputs.systems[name])
        info = STRATEGIES.get(found.get("strategy", ""))
        if "won_by" in found:  # a pooled selection (pooled+docmbr): each document has its winner's context
            out[name] = {"kind": "pooled", "strategy": found["strategy"], "k": 0, "won_by": found["won_by"]}
            continue
        if info is None:
            out[name] = {"kind": "unknown", "strategy": found.get("strategy"), "k": 0}
            continue
        kind = info.target_context
        entry = {"kind": kind, "strategy": info.name, "k": int(found.get("k") or 0)}
        if kind == "first-pass":
            digest = found.get("first_pass_sha256")
            entry["first_pass"] = next((other for other in systems
                                        if other != name and digest in digests[other]), None)
        if kind == "recorded":
            entry["recorded"] = found.get("generated_context")
        if kind == "draft":  # refine: the system whose file is the draft it improved
            digest = (found.get("refine") or {}).get("draft_sha256")
            entry["draft"] = next((other for other in systems if other != name and digest in digests[other]), None)
        out[name] = entry
    return out


# ---- pronouns -----------------------------------------------------------------------------------------------
def pronoun_counts(path: Path | None, systems: list[str], count: int) -> dict:
    """The pronoun scorer's per-sentence counts (``pronouns.sentences.jsonl``): per system, per sentence, the
    classes it counted as ``[category, class, hypothesis, reference, match]``; the tagger that counted them and the
    rule set (recorded with the counts; a file of 0.1 without it: ``pronouns.json`` beside it, else the default)."""
    if path is None or not path.is_file():
        return {}
    out: dict = {"systems": {}}
    for number, record in json_lines(path):
        if not isinstance(record, dict) or not {"system", "counts"} <= set(record):
            raise InputError(path, "expected a record with the fields system and counts", number)
        if "taggers" in record:
            out["taggers"] = record["taggers"]
        if "rules" in record:
            out["rules"] = record["rules"]
        if record["system"] not in systems:
            continue
        if len(record["counts"]) != count:
            raise InputError(path, f"expected counts for {count} sentences, found {len(record['counts'])}", number)
        out["systems"][record["system"]] = [
            [[category, cls, *triple] for category, classes in sentence.items() for cls, triple in classes.items()]
            for sentence in record["counts"]]
    if "rules" not in out:
        beside = path.with_name("pronouns.json")
        recorded = load_json(beside, "pronoun score file") if beside.is_file() else {}
        from ..pronouns import DEFAULT_RULES

        out["rules"] = recorded.get("rules", DEFAULT_RULES) if isinstance(recorded, dict) else DEFAULT_RULES
    return out


def pronoun_metrics(counts: dict, systems: list[str]) -> list[dict]:
    """Pronoun gender and formality F1 as metrics of the Overview (kind ``f1``, unit ``counts``): each sentence's
    counts per class of the category (``[hypothesis, reference, match]`` of each class in the rule set's order), the
    classes' weights, and the score computed from their sums as the tables' scorer computes it
    (:func:`docnmt.score.compare.randomization.f1`). None where the counts do not cover every system."""
    if not counts or any(s not in counts.get("systems", {}) for s in systems):
        return []
    from ..pronouns import RULES

    rules = RULES[counts["rules"]]
    taggers = counts.get("taggers", {})
    metrics = []
    for category, spec in rules.categories.items():
        classes = list(spec.classes)
        offset = {cls: 3 * index for index, cls in enumerate(classes)}
        stats = {}
        for system in systems:
            rows = []
            for sentence in counts["systems"][system]:
                row = [0] * (3 * len(classes))
                for cat, cls, hyp, ref, match in sentence:
                    if cat == category:
                        row[offset[cls]:offset[cls] + 3] = [hyp, ref, match]
                rows.append(row)
            stats[system] = rows
        metrics.append({"name": f"{category} F1", "kind": "f1", "unit": "counts", "higher": True, "digits": 1,
                        "scale": 100.0, "weights": [spec.classes[k].weight for k in classes], "classes": classes,
                        "signature": f"pronoun F1|rules:{rules.name}|tagger:{taggers.get('german', '?')}|"
                                     f"source:{taggers.get('english', '?')}|micro-averaged over the sentences",
                        "stats": stats})
    return metrics


# ---- the test sets of context -------------------------------------------------------------------------------
def context_tests(inputs: Inputs, systems: list[str]) -> list[dict]:
    """Every example of the ContraPro and ctxpro sets given: its set, phenomenon, class (the rule or the expected
    pronoun), antecedent distance, source sentence and the source context before it, the expected form, and per
    system its translation of the sentence and whether the expected form is there (ctxpro's rule: a whole word of
    the translation's last sentence, ignoring case and punctuation)."""
    if not inputs.context_sets:
        return []
    from ..ctxpro import last_sentence, passes, splitter

    split = splitter("de")
    tests = []
    for name, examples_path in inputs.context_sets.items():
        records = [record for _, record in json_lines(examples_path)]
        for number, record in enumerate(records, start=1):
            if not isinstance(record, dict) or "line" not in record or not ("expected" in record or
                                                                              "ref pronoun" in record):
                raise InputError(examples_path, "expected an example with the fields line and expected (ctxpro) or "
                                                "ref pronoun (ContraPro)", number)
        source = read_lines(inputs.context_sources[name]) if name in inputs.context_sources else None
        outputs = {system: read_lines(path) for system, path in inputs.context_systems.get(name, {}).items()
                   if system in systems}
        for system, lines in outputs.items():
            if source is not None and len(lines) != len(source):
                raise InputError(inputs.context_systems[name][system],
                                 f"expected {len(source)} lines (one per line of {inputs.context_sources[name]}), "
                                 f"found {len(lines)}")
        for record in records:
            line = record["line"]
            before = record.get("context", record.get("left", 0)) or 0
            expected = record.get("expected", record.get("ref pronoun"))
            test = {"set": name, "phenomenon": record.get("phenomenon", "anaphora"),
                    "class": record.get("rule", record.get("ref pronoun", "")),
                    "distance": record.get("ante distance"), "source": record.get("src segment", ""),
                    "reference": record.get("ref segment", ""), "expected": expected,
                    "context": source[max(0, line - before):line] if source is not None else [],
                    "outputs": {}, "marks": {}}
            for system, lines in outputs.items():
                if line >= len(lines):
                    raise InputError(inputs.context_systems[name][system], f"has no line {line + 1}, which "
                                                                           f"{examples_path} names")
                test["outputs"][system] = lines[line]
                test["marks"][system] = int(passes(last_sentence(lines[line].strip(), split), expected))
            tests.append(test)
    return tests

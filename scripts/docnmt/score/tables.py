"""The paper's tables, regenerated from the workflow's own score files: Markdown, CSV and LaTeX.

Numbered and captioned as in the paper (Herold & Ney, 2023); Table 5, the data
statistics, is written by :mod:`docnmt.corpora.stats`:

- ``decoding_cost``: Table 1, the cost of decoding, measured from the decode
  sidecars (decoder positions, forward calls, wall time, each also as a
  ratio to sentence-level) next to the paper's O(.) column;
- ``perplexity``: Table 2, perplexity of the reference and of every
  strategy's hypotheses (sentence-level model for the sentence-level rows,
  document-level model for the document-level rows);
- ``quality``: Table 3, BLEU, chrF++ and TER on the test set and on ContraPro, and d-BLEU (documents
  joined) on the test set, each with its signature and paired-bootstrap significance marks, and the columns of
  every metric of the seam (COMET, MetricX, GEMBA) a config asks for; until 0.2 its files are also written under
  their name of 0.1, ``bleu_ter`` (:data:`RENAMED`);
- ``pronoun_f1``: Table 4, pronoun gender and formality F1 (a cell is "-"
  where a class has fewer reference examples than the reporting rule asks,
  and "nan" where the BlonDe fork's value is NaN; the counts are written
  under the table, beside the paper's for ContraPro and the OS test set,
  with the rule set and both taggers; an evaluation set scored with subsets
  gets one note per subset with every strategy's F1 on it), and
  ``pronoun_classes``, the
  per-class precision, recall and F1 that the BlonDe extension hides;
- ``contrapro_accuracy``: contrastive scoring accuracy on ContraPro, the
  paper's sanity check (section 4.3, in the text; no table number), overall
  and by antecedent distance;
- ``context_usage``, ``context_split``, ``context_sentences`` (not in the
  paper): CXMI of the document-level model per task and evaluation set, on
  the reference and per strategy; BLEU and pronoun F1 on the highest-P-CXMI
  tenth against the rest; the top sentences (:mod:`docnmt.score.cxmi`,
  :mod:`docnmt.score.context_usage`);
- ``xcomet_spans`` (not in the paper): XCOMET's error spans per strategy, by severity, and the commonest ones;
- ``ctxpro_accuracy``, ``ctxpro_rules`` (not in the paper): accuracy on ctxpro's sets per phenomenon, beside BLEU of
  the example sentences and the searches per example, and per rule (:mod:`docnmt.score.ctxpro`).

Where the search or the forced scoring ran in another precision than
float32 (config ``decode.dtype``), the notes under the tables say so.

Rows are the strategy names used everywhere in the workflow; columns follow
the paper (one group per task and evaluation set). The inputs are named in a
JSON manifest that the workflow builds (``docnmt.workflow.tables.score_manifest``)::

    {"strategies": [...], "tasks": {TASK: {"description": ..., "tgt": "de",
      "bleu_ter": {EVALSET: PATH}, "pronoun_f1": {EVALSET: PATH},
      "perplexity": {LEVEL: PATH}, "contrapro_accuracy": {LEVEL: PATH}, "sidecars": {STRATEGY: PATH},
      "cxmi": {EVALSET: PATH}, "cxmi_sentences": {EVALSET: PATH}, "context_usage": {EVALSET: PATH},
      "ctxpro_accuracy": {EVALSET: PATH}}},
     "mbr": {"candidates": ..., "count": ..., "utility": ...}, "mbr_curve": {"counts": [...], "tasks": {...}}}

Rows are systems: every strategy, then every strategy with MBR selection (``doc-trans+mbr``, shown as
"doc-trans, MBR"; :mod:`docnmt.decode.mbr`), in every table.

CLI::

    python -m docnmt.score.tables --manifest manifest.json --outdir results/tables
"""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

from ..decode.variants import label as label_of, parse_system
from ..tablefmt import DASH, Table, number as _fmt
from .contrapro_table import accuracy_table
from .cost_table import cost_table
from .docmbr_wins import docmbr_wins_table, pooled_sidecars
from .span_table import xcomet_spans_table
from .ctxpro import phenomena_shown
from ..textio import InputError, atomic_outputs, cli_errors, load_json
from ..manual import argument_parser
from .notes import mbr_notes, model_notes, realigned_notes, skipped_notes

#: Marks for a BLEU/TER difference that paired bootstrap resampling finds significant.
MARKS = {"sentence-level": "*", "last-sentence": "†"}
def _test_sidecars(manifest: dict) -> dict[str, dict]:
    """Every task's test-set decode sidecars, labelled ``task strategy`` (their dtype is the decodes')."""
    return {f"{t} {s}": load_json(p, "decode sidecar")
            for t, spec in manifest["tasks"].items() for s, p in spec.get("sidecars", {}).items()}


# ---- Table 2 ---------------------------------------------------------------------
def perplexity_table(manifest: dict) -> Table:
    tasks = list(manifest["tasks"])
    sentence = [s for s in manifest["strategies"] if parse_system(s)[0] == "sentence-level"]
    rows_spec = [("sentence-level", "reference")] + [("sentence-level", s) for s in sentence]
    rows_spec += [("document-level", "reference")] + [("document-level", s)
                                                      for s in manifest["strategies"] if s not in sentence]
    loaded = {t: {lvl: load_json(p, "perplexity score file") for lvl, p in manifest["tasks"][t]["perplexity"].items()}
              for t in tasks}
    rows = []
    dtypes = {f"{t} {lvl}-level": data for t in tasks for lvl, data in loaded[t].items()}
    for model, text in rows_spec:
        level = "sentence" if model == "sentence-level" else "document"
        cells = []
        for t in tasks:
            entry = loaded[t].get(level, {}).get("systems", {}).get(text)
            cells.append(_fmt(entry["perplexity"], 2) if entry else DASH)
        rows.append([model, "reference" if text == "reference" else f"hyp {label_of(text)}"] + cells)
    return Table("perplexity", "Table 2: perplexity values on the test set for different search strategies",
                 ["model", "text"] + tasks, rows,
                 ["sentence-level rows: the sentence-level model, each sentence alone; document-level rows: the "
                  "document-level model, each sentence after the k-1 previous sentences of the same text "
                  "(source window and target context); per token, </s> included (docnmt.score.perplexity)."]
                 + [f"{t}: not scored (\"-\"), and no CXMI or context-usage tables: "
                    f"{manifest['tasks'][t]['unscored']['perplexity']}" for t in tasks
                    if "perplexity" in manifest["tasks"][t].get("unscored", {})]
                 + model_notes(dtypes, "the forced scoring") + model_notes(_test_sidecars(manifest), "the search"))


# ---- Table 3 ---------------------------------------------------------------------
#: sacrebleu's metrics, each per evaluation set (d-BLEU where the score file has it: the test sets).
TABLE3_METRICS = ("BLEU", "chrF++", "TER", "d-BLEU")


def _metric_columns(data: dict) -> list[str]:
    """A seam score file's columns in order: its ``columns``, else (a file written before they were recorded) its
    first system's keys, which the scorers wrote in the same order."""
    return list(data["columns"]) if "columns" in data else list(next(iter(data["systems"].values())))


def quality_table(manifest: dict) -> Table:
    """Table 3: every metric of the seam that declares it (docnmt.score.metric), per task and evaluation set, in
    the registry's order: sacrebleu's, then COMET's, MetricX's and those of the manifest's metric modules."""
    from .metric import table_metrics

    metrics = table_metrics(manifest)
    columns, header, signatures, shown, lower, scorer_notes = [], ["strategy"], {}, [], [], []
    for t, spec in manifest["tasks"].items():
        sets = list(dict.fromkeys(e for m in metrics for e in spec.get(m.name, {})))
        for evalset in sets:
            label = "ContraPro" if evalset == "contrapro" else evalset
            for metric in metrics:
                path = spec.get(metric.name, {}).get(evalset)
                if path is None:
                    continue
                data = load_json(path, f"{metric.name} score file")
                names = _metric_columns(data)
                columns.append((metric, data, names))
                header += [f"{t} {label} {c}" for c in names]
                any_system = next(iter(data["systems"].values()), {})
                for c in names:
                    signatures.setdefault(c, data.get("signatures", {}).get(c) or any_system.get(c, {}).get("signature"))
                    if not metric.higher_better(c) and c not in lower:
                        lower.append(c)
                if metric not in shown:
                    shown.append(metric)
                scorer_notes += [n for n in data.get("notes", []) if n not in scorer_notes]
    rows = []
    for strategy in manifest["strategies"]:
        cells = [label_of(strategy)]
        for metric, data, names in columns:
            entry = data["systems"].get(strategy)
            for column in names:
                if entry is None or column not in entry:
                    cells.append(DASH)
                    continue
                marks = ""
                for baseline, mark in MARKS.items():
                    test = data.get("paired_bootstrap", {}).get(baseline, {}).get("systems", {}).get(strategy, {})
                    if test.get(column, {}).get("significant"):
                        marks += mark
                value, unparsed = entry[column]["score"], entry[column].get("unparsed", 0)
                cell = DASH if value is None else f"{value * metric.scale:.{metric.digits}f}{marks}"
                cells.append(f"{cell} [{unparsed} unparsed]" if unparsed else cell)
        rows.append(cells)
    alpha = columns[0][1].get("alpha", 0.05) if columns else 0.05
    notes = [f"{m} signature: {sig}" for m, sig in signatures.items()]
    if "d-BLEU" in signatures:
        notes.append("d-BLEU: corpus BLEU over documents, each document's sentences joined in order (hypotheses and "
                     "references alike); its significance resamples documents.")
    notes.append(f"* significantly different from sentence-level, † from last-sentence (paired bootstrap "
                 f"resampling, sacrebleu --paired-bs, p < {alpha}). ContraPro: the example sentences only; "
                 "full-segment does not apply there (-).")
    if lower:
        notes.append(f"Lower is better: {', '.join(lower)}.")
    if any(spec.get("ctxpro_accuracy") for spec in manifest["tasks"].values()):
        notes.append("ctxpro sets (ctxpro-PHENOMENON-SPLIT): the example sentences only, against the set's "
                     "'ref segment'; cheating is not decoded there (no reference for the context).")
    notes += [metric.note for metric in shown if metric.note] + scorer_notes
    notes += mbr_notes(manifest) + model_notes(_test_sidecars(manifest), "the search")
    notes += realigned_notes(_test_sidecars(manifest))
    further = "" if set(signatures) <= set(TABLE3_METRICS) else ", and the further metrics' (see the notes),"
    return Table("quality", f"Table 3: BLEU, chrF++, TER and d-BLEU scores (in percent){further} for the different "
                 "tasks and decoding strategies", header, rows, notes)


# ---- Table 4 ---------------------------------------------------------------------
#: Reference example counts the paper gives (section 4.1, footnotes), by (task, evaluation set) and category.
PAPER_COUNTS = {
    **{(task, "contrapro"): {"gender": {"masculine": 5011, "feminine": 4085, "neuter": 4817}} for task in ("news", "os")},
    ("os", "test"): {"formality": {"formal": 416, "informal": 605}},
}
NAN = "nan"


def _pronoun_columns(manifest: dict):
    for t, spec in manifest["tasks"].items():
        for evalset, path in spec.get("pronoun_f1", {}).items():
            data = load_json(path, "pronoun score file")
            if "setup" not in data:
                raise InputError(path, "expected a pronoun score file naming its rule set and taggers ('setup'), "
                                       "found one without: rerun the pronoun_f1 rule")
            # categories, classes and reference example counts are the same for every system
            reference = next(iter(data["systems"].values()))
            yield t, evalset, ("ContraPro" if evalset == "contrapro" else evalset), data, reference


def _f1(value) -> str:
    """A pronoun score: "nan" where the fork's value is NaN (stored as null)."""
    return NAN if value is None else _fmt(value, 1, 100)


def _subset_notes(strategies: list[str], task: str, label: str, data: dict) -> list[str]:
    """One note per evaluation subset and category with reference examples: every strategy's F1 on the subset."""
    notes = []
    for subset, entry in data.get("subsets", {}).items():
        systems = entry["systems"]
        reference = next(iter(systems.values()))
        for category, ref_entry in reference.items():
            if not sum(ref_entry["examples"].values()):
                continue
            counts = ", ".join(f"{c} {n}" for c, n in ref_entry["examples"].items())
            scores = ", ".join(f"{label_of(s)} {_f1(systems[s][category]['f1'])}" for s in strategies if s in systems)
            rule = "" if ref_entry["reported"] else f"; fewer than {data['min_examples']} per class, so indicative"
            notes.append(f"{task} {label}, subset {subset} ({entry['sentences']} sentences; reference examples "
                         f"{counts}{rule}): {category} F1 {scores}.")
    return notes


def pronoun_tables(manifest: dict) -> tuple[Table, Table]:
    columns = list(_pronoun_columns(manifest))
    header, notes, setups = ["strategy"], [], {}
    class_header = ["strategy"]
    for t, evalset, label, data, reference in columns:
        setups.setdefault(data["setup"], []).append(f"{t} {label}")
        for category, entry in reference.items():
            header.append(f"{t} {label} {category}")
            counts = ", ".join(f"{c} {n}" for c, n in entry["examples"].items())
            paper = PAPER_COUNTS.get((t, evalset), {}).get(category)
            if paper:
                counts += " (the paper: " + ", ".join(f"{c} {paper[c]}" for c in entry["examples"] if c in paper) + ")"
            status = "reported" if entry["reported"] else f"not reported (a class has < {data['min_examples']})"
            notes.append(f"{t} {label} {category}: reference examples {counts}; {status}.")
            for cls in entry["classes"]:
                class_header += [f"{t} {label} {cls} P", f"{t} {label} {cls} R", f"{t} {label} {cls} F1"]
    rows, class_rows = [], []
    for strategy in manifest["strategies"]:
        cells, class_cells = [label_of(strategy)], [label_of(strategy)]
        for _t, _evalset, _label, data, reference in columns:
            system = data["systems"].get(strategy)
            for category, ref_entry in reference.items():
                if system is None:
                    cells.append(DASH)
                    class_cells += [DASH] * (3 * len(ref_entry["classes"]))
                    continue
                entry = system[category]
                cells.append(_f1(entry["f1"]) if entry["reported"] else DASH)
                for cls in entry["classes"].values():
                    class_cells += [_f1(cls["precision"]), _f1(cls["recall"]), _f1(cls["f1"])]
        rows.append(cells)
        class_rows.append(class_cells)
    notes += [note for t, _evalset, label, data, _ in columns
              for note in _subset_notes(manifest["strategies"], t, label, data)]
    for setup, where in setups.items():
        notes.append(f"Pronoun F1 ({', '.join(where)}): {setup}.")
    notes += model_notes(_test_sidecars(manifest), "the search")
    nan_note = ("\"nan\": the BlonDe fork's value is NaN (0/0: no weighted reference example, or not a single "
                "match; F1 is R where P is NaN).")
    notes.append(nan_note)
    main = Table("pronoun_f1", "Table 4: F1 scores (in percent) for pronoun translation on different test sets "
                 "(gender and formality)",
                 header, rows, notes)
    classes = Table("pronoun_classes", "Pronoun translation per class: precision, recall and F1 (in percent)",
                    class_header, class_rows,
                    ["Every class, also where the category is not reported; the gender F1 of Table 4 weights "
                     "masculine and feminine 0.5 each and neuter 0, as BlonDe does.", nan_note])
    return main, classes


# ---- ContraPro accuracy -------------------------------------------------------------
# ---- context usage (not in the paper) ------------------------------------------------
CONTEXT_NOTE = ("Not in the paper: it reports no context-usage measure. CXMI (Fernandes et al., ACL 2021) and "
                "P-CXMI (Fernandes et al., ACL 2023) of the document-level model, in nats; see docs/scoring.md, "
                "'Context usage: CXMI and P-CXMI' (docnmt.score.cxmi).")


def _context_columns(manifest: dict, key: str, what: str):
    for t, spec in manifest["tasks"].items():
        for evalset, path in spec.get(key, {}).items():
            yield t, ("ContraPro" if evalset == "contrapro" else evalset), load_json(path, what)


def _nats(value) -> str:
    return DASH if value is None else f"{value:.3f}"


def context_usage_table(manifest: dict) -> Table:
    columns = list(_context_columns(manifest, "cxmi", "CXMI score file"))
    header = ["measure"] + [f"{t} {label}" for t, label, _ in columns]
    rows = [["sentences"] + [str(d["reference"]["sentences"]) for *_, d in columns]]
    rows.append(["CXMI (reference)"] + [_nats(d["reference"]["cxmi"]) for *_, d in columns])
    rows.append(["CXMI per token (reference)"] + [_nats(d["reference"]["cxmi_per_token"]) for *_, d in columns])
    rows.append(["CXMI, sentence-level model as context-free term"]
                + [_nats(d.get("reference_sentence_model", {}).get("cxmi")) for *_, d in columns])
    rows.append(["share of sentences with P-CXMI > 0"]
                + [_fmt(d["reference"]["positive_share"], 1, 100) for *_, d in columns])
    subsets = sorted({name for *_, d in columns for name in d.get("subsets", {})})
    for name in subsets:
        for part, label in (("in", f"CXMI on subset {name}"), ("rest", f"CXMI on the rest (not {name})")):
            rows.append([label] + [_nats(d.get("subsets", {}).get(name, {}).get(part, {}).get("cxmi"))
                                   for *_, d in columns])
    approximate = []
    for strategy in manifest["strategies"]:
        cells = []
        for t, label, d in columns:
            entry = d.get("strategies", {}).get(strategy)
            cells.append(_nats(entry["cxmi"]) if entry else DASH)
            if entry and not entry.get("exact", True):
                approximate.append(f"{t} {label} {strategy}")
        rows.append([f"CXMI of hyp {label_of(strategy)}"] + cells)
    notes = [CONTEXT_NOTE,
             "CXMI (reference): mean over sentences of P-CXMI = log q(y|x,C) - log q(y|x), y the reference "
             "sentence (its tokens and </s>), C the k-1 previous source and reference sentences (the cheating "
             "strategy's context), both terms from the document-level model (the papers' choice). Per token: the "
             "sum over all sentences divided by their tokens. Sentence-level variant: log q(y|x) from the "
             "sentence-level model instead.",
             "CXMI of hyp STRATEGY: the same on the strategy's own hypotheses, each with the context the strategy "
             "conditioned it on (none for sentence-level and no-context: 0). ContraPro: the example sentences only."]
    if approximate:
        notes.append("Approximate (a last-sentence decode from an older version, which did not record the target "
                     "context its windows generated; its own previous outputs stand in): " + ", ".join(approximate)
                     + ". Rerun its decode to make it exact.")
    notes += model_notes({f"{t} {label}": d for t, label, d in columns}, "the CXMI scoring")
    return Table("context_usage", "Context usage: CXMI of the document-level model (nats) on the reference and "
                 "on each strategy's hypotheses", header, rows, notes)


def _split_cell(entry: dict | None, metric: str) -> str:
    """One strategy's BLEU or pronoun F1 on one part of a context split; "(few)" below the example rule."""
    if entry is None or metric not in entry:
        return DASH
    cell = _fmt(entry[metric], 1) if metric == "BLEU" else _f1(entry[metric])
    return cell + ("" if entry.get(metric.replace("_f1", "_reported"), True) else " (few)")


def context_split_table(manifest: dict) -> Table:
    columns = list(_context_columns(manifest, "context_usage", "context usage file"))
    header, rows = ["strategy"], []
    metrics = []
    for t, label, d in columns:
        share = f"top {d['share']:.0%}"
        present = ["BLEU"] + [m for m in ("gender_f1", "formality_f1")
                              if any(m in parts["top"] for parts in d["split"].values())]
        for metric in present:
            name = metric.replace("_f1", " F1")
            header += [f"{t} {label} {name} {share}", f"{t} {label} {name} rest"]
        metrics.append(present)
    for strategy in manifest["strategies"]:
        cells = [label_of(strategy)]
        for (t, label, d), present in zip(columns, metrics):
            parts = d["split"].get(strategy) or {}
            cells += [_split_cell(parts.get(part), metric) for metric in present for part in ("top", "rest")]
        rows.append(cells)
    notes = [CONTEXT_NOTE]
    for t, label, d in columns:
        notes.append(f"{t} {label}: the {d['top_sentences']} sentences with the highest P-CXMI of the reference "
                     f"(P-CXMI >= {d['threshold']:.3f}) against the other {d['rest_sentences']}; BLEU by SacreBLEU, "
                     "pronoun F1 by the paper's BlonDe fork as in Table 4"
                     + (f" ({d['pronoun_setup']}; \"(few)\": a class has fewer than {d['min_examples']} reference "
                        "examples, so indicative)" if d.get("pronoun_setup") else "") + ".")
    return Table("context_split", "Which sentences need context: BLEU and pronoun F1 on the sentences with the "
                 "highest P-CXMI against the rest", header, rows, notes)


def context_sentences_table(manifest: dict) -> Table:
    columns = list(_context_columns(manifest, "context_usage", "context usage file"))
    shown = []
    for *_, d in columns:
        for entry in d["top"]:
            shown += [s for s in entry["translations"] if s not in shown]
    header = ["task", "set", "rank", "line", "P-CXMI", "source context", "source", "reference context", "reference"]
    header += shown
    rows = []
    for t, label, d in columns:
        for entry in d["top"]:
            rows.append([t, label, str(entry["rank"]), str(entry["line"]), _nats(entry["p_cxmi"]),
                         " / ".join(entry["context_source"]), entry["source"], " / ".join(entry["context_reference"]),
                         entry["reference"]] + [entry["translations"].get(s, DASH) for s in shown])
    return Table("context_sentences", "The sentences that need context most: highest P-CXMI of the reference, "
                 "with context and translations", header, rows,
                 [CONTEXT_NOTE, "Context: the k-1 previous sentences of the same document (\" / \" between "
                  "sentences), the context P-CXMI was measured with; line: in the evaluation set's files."])


# ---- ctxpro (not in the paper) ---------------------------------------------------------
CTXPRO_NOTE = ("Not in the paper. ctxpro (Wicks and Post, WMT 2023): an example counts as correct when its expected "
               "form occurs as a whole word in the last sentence of its sentence's translation (case and punctuation "
               "ignored), as `ctxpro score` counts; each example is a document, its context then its sentence, and "
               "only the sentence is scored (docs/scoring.md, 'ctxpro').")


def _ctxpro_sets(manifest: dict) -> list[tuple[str, str, dict, dict | None]]:
    """(task, evalset, its ctxpro scores, its BLEU/TER scores or None) of every task's ctxpro sets."""
    out = []
    for task, spec in manifest["tasks"].items():
        for evalset, path in spec.get("ctxpro_accuracy", {}).items():
            bleu = spec.get("bleu_ter", {}).get(evalset)
            out.append((task, evalset, load_json(path, "ctxpro score file"),
                        None if bleu is None else load_json(bleu, "BLEU/TER score file")))
    return out


def _ctxpro_notes(sets) -> list[str]:
    notes = [CTXPRO_NOTE]
    for task, _, data, _ in sets:
        notes.append(f"{task} {data['set']}: {data['examples']} examples, {data['context_sentences']} context "
                     f"sentences kept; signature {data['signature']}")
        if data.get("skipped"):
            notes.append(f"{task} {data['set']}: not decoded (\"-\"): "
                         + "; ".join(f"{s} ({why})" for s, why in data["skipped"].items()) + ".")
    return notes


def _ctxpro_rows(manifest: dict, sets) -> list[str]:
    """The ctxpro tables' rows: every strategy (one a set skips shows '-', and the notes say why), and the variants'
    systems that some set decoded (CAD; the selections are the test set's only)."""
    decoded = {system for _, _, data, _ in sets for system in data["systems"]}
    return [s for s in manifest["strategies"] if parse_system(s)[1] is None or s in decoded]


def ctxpro_accuracy_table(manifest: dict) -> Table:
    """Accuracy per set (phenomenon and split) and strategy, beside BLEU of the example sentences and the searches
    each strategy made per example."""
    sets = _ctxpro_sets(manifest)
    header = ["strategy"]
    phenomena = []
    for task, _, data, bleu in sets:
        label = f"{task} {data['set']}"
        phenomena.append(phenomena_shown(data))
        header += [f"{label} accuracy"] + [f"{label} {p}" for p in phenomena[-1]]
        header += ([f"{label} BLEU"] if bleu else []) + [f"{label} searches/example"]
    rows = []
    for strategy in _ctxpro_rows(manifest, sets):
        cells = [label_of(strategy)]
        for (_, _, data, bleu), names in zip(sets, phenomena):
            entry = data["systems"].get(strategy)
            cells.append(DASH if entry is None else f"{entry['accuracy']:.1f}")
            cells += [DASH if entry is None else f"{entry['phenomena'][p]['accuracy']:.1f}" for p in names]
            if bleu:
                scored = bleu["systems"].get(strategy)
                cells.append(DASH if scored is None else f"{scored['BLEU']['score']:.1f}")
            per_example = None if entry is None else entry.get("searches_per_example")
            cells.append(DASH if per_example is None else f"{per_example:.2f}")
        rows.append(cells)
    notes = _ctxpro_notes(sets) + [
        "BLEU: of the example sentences against the set's 'ref segment' (sacrebleu, as Table 3). Searches/example: "
        "the search requests a strategy made per example, its context sentences and the decodes it builds on (the "
        "first pass, 2-pass's round 1) included; doc-trans-beam counts each of its h contexts."]
    return Table("ctxpro_accuracy", "ctxpro accuracy (in percent) per phenomenon: the expected form in the "
                 "translation of a sentence whose translation depends on its context", header, rows, notes)


def ctxpro_rules_table(manifest: dict) -> Table:
    """Accuracy per rule (ctxpro's NOM.INFORM.SING, DO.ELL, ...) and strategy, with the rule's expected form."""
    sets = _ctxpro_sets(manifest)
    columns, header = [], ["strategy"]
    for task, _, data, _ in sets:
        any_system = next(iter(data["systems"].values()), {"rules": {}})
        for rule, entry in any_system["rules"].items():
            columns.append((data, rule))
            header.append(f"{task} {data['set']} {rule} ({entry['form']}, n={entry['total']})")
    rows = []
    for strategy in _ctxpro_rows(manifest, sets):
        cells = [label_of(strategy)]
        for data, rule in columns:
            entry = data["systems"].get(strategy, {}).get("rules", {}).get(rule)
            cells.append(DASH if entry is None else _fmt(entry["correct"] / entry["total"], 1, 100))
        rows.append(cells)
    return Table("ctxpro_rules", "ctxpro accuracy (in percent) per rule, as `ctxpro score --complete` reports it",
                 header, rows, _ctxpro_notes(sets))


def all_tables(manifest: dict) -> list[Table]:
    """The tables in the paper's order: 1 cost, 2 perplexity, 3 BLEU/TER, 4 pronoun F1 (with the per-class
    table), then the ContraPro accuracy of the paper's text."""
    tables = [cost_table(manifest), perplexity_table(manifest), quality_table(manifest)]
    if any(spec.get("pronoun_f1") for spec in manifest["tasks"].values()):
        tables += list(pronoun_tables(manifest))
    for table in tables:
        table.notes.extend(skipped_notes(manifest))
    if any(spec.get("contrapro_accuracy") for spec in manifest["tasks"].values()):
        tables.append(accuracy_table(manifest))
    if any(spec.get("cxmi") for spec in manifest["tasks"].values()):
        tables += [context_usage_table(manifest), context_split_table(manifest), context_sentences_table(manifest)]
    if any(spec.get("ctxpro_accuracy") for spec in manifest["tasks"].values()):
        tables += [ctxpro_accuracy_table(manifest), ctxpro_rules_table(manifest)]
    if any(spec.get("comet_error_spans") for spec in manifest["tasks"].values()):
        tables.append(xcomet_spans_table(manifest))
    if pooled_sidecars(manifest):
        tables.append(docmbr_wins_table(manifest))
    return tables


def add_manifest_arguments(parser) -> None:
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--manifest", type=Path, help="JSON file naming every score file (see above)")
    group.add_argument("--manifest-json", help="the same JSON, inline (what the workflow passes)")


def read_manifest(args) -> dict:
    if args.manifest is not None:
        manifest = load_json(args.manifest, "table manifest")
        where = str(args.manifest)
    else:
        try:
            manifest = json.loads(args.manifest_json)
        except ValueError as err:
            raise InputError("--manifest-json", f"expected JSON, found invalid JSON ({err})") from None
        where = "--manifest-json"
    if not isinstance(manifest, dict) or not isinstance(manifest.get("strategies"), list) \
            or not isinstance(manifest.get("tasks"), dict) or not manifest["tasks"]:
        raise InputError(where, "expected a manifest with a 'strategies' list and a non-empty 'tasks' object")
    return manifest


#: Tables renamed, new name -> the name of 0.1, whose files are still written for one release (0.2 drops them):
#: the same table, the Markdown copy opening with a line that says so.
RENAMED = {"quality": "bleu_ter"}


def renamed_from(name: str) -> list[str]:
    """The old names a table's files are also written under (:data:`RENAMED`)."""
    return [RENAMED[name]] if name in RENAMED else []


def table_files(outdir: os.PathLike | str, name: str) -> list[Path]:
    return [Path(outdir) / f"{name}.{ext}" for ext in ("md", "csv", "tex")]


@cli_errors
def main(argv=None) -> int:
    parser = argument_parser("docnmt.score.tables", __doc__.split("\n\n")[0])
    add_manifest_arguments(parser)
    parser.add_argument("--outdir", required=True, type=Path)
    parser.add_argument("--print", action="store_true", help="also print the Markdown tables")
    args = parser.parse_args(argv)
    manifest = read_manifest(args)
    tables = all_tables(manifest)
    # a renamed table's files are also written under its old name, as that name wrote them (LaTeX label included),
    # the Markdown opening with a line that says so
    written = [(table, "") for table in tables] + [
        (replace(table, name=old), f"{old}.md is now {table.name}.md (the same table); the old name goes in "
                                   "docnmt 0.2.\n\n")
        for table in tables for old in renamed_from(table.name)]
    paths = [p for t, _ in written for p in table_files(args.outdir, t.name)]
    with atomic_outputs(paths) as handles:
        for n, (table, note) in enumerate(written):
            md, cs, tex = handles[3 * n: 3 * n + 3]
            md.write(note + table.markdown())
            cs.write(table.csv())
            tex.write(table.latex())
    for table in tables:
        print(table.markdown() if args.print else f"wrote {args.outdir}/{table.name}.{{md,csv,tex}}")
    return 0


if __name__ == "__main__":
    main()

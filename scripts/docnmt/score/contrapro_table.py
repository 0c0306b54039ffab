"""The ContraPro accuracy table (``contrapro_accuracy``, the paper's sanity check in section 4.3): each model's
contrastive scoring accuracy, overall and by antecedent distance, and the document model's with context-aware
decoding's score (:mod:`docnmt.score.contrastive`'s ``--cad``) where it was scored so."""

from __future__ import annotations

from ..tablefmt import DASH, Table, number as _fmt
from ..textio import load_json
from .notes import model_notes


def accuracy_table(manifest: dict) -> Table:
    buckets = ["0", "1", "2", "3", ">3"]
    header, per_task, dtypes = ["model"], [], {}
    for t, spec in manifest["tasks"].items():
        if spec.get("contrapro_accuracy"):
            per_task.append({lvl: load_json(p, "ContraPro accuracy file")
                             for lvl, p in spec["contrapro_accuracy"].items()})
            header += [f"{t} overall"] + [f"{t} distance {b}" for b in buckets]
            dtypes.update({f"{t} {lvl}-level": data for lvl, data in per_task[-1].items()})
    rows = []
    for level in ("sentence", "document"):
        cells = [f"{level}-level"]
        for data in per_task:
            acc = data.get(level)
            if acc is None:
                cells += [DASH] * (1 + len(buckets))
                continue
            cells.append(_fmt(acc["overall"]["accuracy"], 1, 100))
            for b in buckets:
                cells.append(_fmt(acc["by_ante_distance"].get(b, {}).get("accuracy"), 1, 100))
        rows.append(cells)
    cad = [(data.get("document") or {}).get("cad") for data in per_task]
    if any(cad):  # context-aware scoring of the document model: its first alpha
        alphas = sorted({entries[0]["alpha"] for entries in cad if entries})
        cells = [f"document-level, CAD (alpha {', '.join(map(str, alphas))})"]
        for entries in cad:
            first = entries[0] if entries else None
            cells += [DASH] * (1 + len(buckets)) if first is None else [_fmt(first["overall"]["accuracy"], 1, 100)] + [
                _fmt(first["by_ante_distance"].get(b, {}).get("accuracy"), 1, 100) for b in buckets]
        rows.append(cells)
    notes = ["An example counts as correct only if the correct target scores strictly higher than every contrastive "
             "one (a tie is wrong). Distance: sentences between pronoun and antecedent."]
    if any(cad):
        notes.append("CAD: each candidate ranked by context-aware decoding's score, (1 + alpha) log p(y|x,c) - alpha "
                     "log p(y|x), the second term the document model on the example sentence alone (not in the "
                     "paper; docs/decoding.md, 'Context-aware decoding').")
    return Table("contrapro_accuracy", "ContraPro contrastive scoring accuracy (in percent), the paper's sanity check",
                 header, rows, notes + model_notes(dtypes, "the contrastive scoring"))

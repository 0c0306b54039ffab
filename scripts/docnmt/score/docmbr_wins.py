"""The table of document-level MBR's choices (``docmbr_wins``): per task, how many test documents pooled+docmbr
took from each strategy (a tie between identical translations goes to the first in docmbr.strategies), and in how
many the chosen translation was that strategy's too (identical documents are one candidate in effect), read from
pooled+docmbr's decode sidecar (:mod:`docnmt.decode.document_mbr`)."""

from __future__ import annotations

from ..decode.variants import is_pooled
from ..tablefmt import DASH, Table
from ..textio import load_json


def pooled_sidecars(manifest: dict) -> dict[str, dict]:
    """{task: pooled+docmbr's sidecar} for the tasks that decoded it."""
    found = {}
    for task, spec in manifest["tasks"].items():
        for system, path in spec.get("sidecars", {}).items():
            if is_pooled(system):
                found[task] = load_json(path, "decode sidecar")
    return found


def docmbr_wins_table(manifest: dict) -> Table:
    sidecars = pooled_sidecars(manifest)
    names = list(dict.fromkeys(n for sc in sidecars.values() for n in sc["docmbr"]["strategies"]))
    header = ["strategy"] + [f"{t} {column}" for t in sidecars for column in ("won", "chosen translation theirs")]
    rows = []
    for name in names:
        cells = [name]
        for sidecar in sidecars.values():
            if name not in sidecar["docmbr"]["strategies"]:
                cells += [DASH, DASH]
                continue
            same = sum(name in shared for shared in sidecar["same_as_chosen"].values())
            cells += [str(sidecar["wins"][name]), str(same)]
        rows.append(cells)
    rows.append(["documents"] + [cell for sc in sidecars.values() for cell in (str(sc["documents"]), DASH)])
    notes = [f"{t}: utility {sc['docmbr']['utility']}, solver {sc['docmbr']['solver']}, weights "
             f"{sc['docmbr']['weights']}; {sc['docmbr']['utility_evaluations']} document transports solved."
             for t, sc in sidecars.items()]
    return Table("docmbr_wins", "Document-level MBR (pooled+docmbr): the test documents whose translation it took "
                 "from each strategy, by expected MBR-OT utility against every strategy's translation of the "
                 "document", header, rows,
                 ["Won: documents chosen from the strategy (where several strategies' translations of a document "
                  "are the same text, the first in docmbr.strategies takes it). Chosen translation theirs: "
                  "documents where the strategy's translation is the chosen text, won or tied."] + notes)

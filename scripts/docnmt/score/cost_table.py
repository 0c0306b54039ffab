"""Table 1 of the paper, regenerated: the computational cost of each search strategy on the test set (decoder
positions, forward calls, wall time, rounds, MBR's utility evaluations) beside the paper's O(.), each as a ratio to
sentence-level, with the columns of each backend's own cost counters as its package declares them
(:class:`docnmt.decode.backend.CostColumns`: a causal LM's tokens prefilled, from the cache and generated; a served
model's tokens and requests, and their price where the task gives prices)."""

from __future__ import annotations

from ..decode.variants import label as label_of
from ..tablefmt import DASH, Table, number as _fmt
from ..textio import load_json
from .notes import mbr_notes, model_notes, realigned_notes


def _own_columns(t: str, sidecars: dict, spec: dict) -> tuple[list, list[str]]:
    """A task's cost columns of its backend (:class:`docnmt.decode.backend.CostColumns`, as the backend the sidecars name
    declares them; shown where one of its sidecars has their first counter), with the price where the columns have
    one and the task gives prices, and their header cells."""
    from ..decode.backend import DEFAULT, REGISTRY

    named = dict.fromkeys(sc.get("backend", DEFAULT) for sc in sidecars.values())
    shown, header = [], []
    for columns in dict.fromkeys(REGISTRY[n].cost for n in named if n in REGISTRY and REGISTRY[n].cost is not None):
        if not any(columns.counters[0][0] in sc for sc in sidecars.values()):
            continue
        priced = columns.price is not None and bool(spec.get("prices"))
        shown.append((columns, priced))
        header += [f"{t} {label}" for _, name in columns.counters for label in (name, "×SL")]
        header += [f"{t} cost", f"{t} cost ×SL"] if priced else []
    return shown, header


def _own_cells(shown: list, entry: dict | None, base: dict | None, spec: dict) -> list[str]:
    """A strategy's cells of a task's backend cost columns (:func:`_own_columns`)."""
    cells: list[str] = []
    for columns, priced in shown:
        if entry is None:
            cells += [DASH] * (2 * len(columns.counters) + 2 * priced)
            continue
        counts, base_counts = columns.counts(entry), columns.counts(base or {})
        for counter, _ in columns.counters:
            value, ref = counts.get(counter), base_counts.get(counter)
            cells += [DASH if value is None else str(value), _fmt(value / ref, 2) if value is not None and ref else DASH]
        if priced:
            cost = columns.price(counts, spec["prices"])
            ref_cost = columns.price(base_counts, spec["prices"]) if base_counts else None
            cells += [_fmt(cost, 4), _fmt(cost / ref_cost, 2) if ref_cost else DASH]
    return cells


def price_note(task: str, columns, prices: dict) -> str:
    """The note that says at what prices a task's cost column was computed."""
    given = ", ".join(f"{name} {prices[name]}" for name in columns.price_names if name in prices)
    return f"Cost: at {given} per million tokens (task_settings.{task}.{columns.prices_key})."


def cost_table(manifest: dict) -> Table:
    header, per_task, own, drafted = ["strategy", "paper cost"], [], [], []
    for t, spec in manifest["tasks"].items():
        sidecars = {s: load_json(p, "decode sidecar") for s, p in spec["sidecars"].items()}
        per_task.append(sidecars)
        header += [f"{t} decoder positions", f"{t} ×SL", f"{t} forward calls", f"{t} wall s", f"{t} ×SL wall",
                   f"{t} <sep> mismatches", f"{t} rounds", f"{t} utility evaluations", f"{t} searches",
                   f"{t} positions per search ×SL"]
        # the columns of the task's backend's own counters (a causal LM's tokens prefilled, from the cache and
        # generated; a served model's tokens and requests, and their price where given)
        shown, own_header = _own_columns(t, sidecars, spec)
        own.append(shown)
        header += own_header
        drafted.append(any("drafts" in sc for sc in sidecars.values()))
        header += [f"{t} accepted draft tokens"] if drafted[-1] else []
    rows = []
    for strategy in manifest["strategies"]:
        paper = next((sc[strategy]["cost"] for sc in per_task if strategy in sc), DASH)
        cells = [label_of(strategy), paper]
        for sidecars, shown, spec, with_drafts in zip(per_task, own, manifest["tasks"].values(), drafted):
            entry, base = sidecars.get(strategy), sidecars.get("sentence-level")
            if entry is None:
                cells += [DASH] * 10 + _own_cells(shown, None, None, spec) + [DASH] * with_drafts
                continue
            positions = entry.get("decoder_positions_with_first_pass", entry["decoder_positions"])
            seconds = entry.get("seconds_with_first_pass", entry["seconds"])
            cells += [str(positions), _fmt(positions / base["decoder_positions"], 2) if base else DASH,
                      str(entry["forward_calls"]), _fmt(seconds, 1),
                      _fmt(seconds / base["seconds"], 2) if base and base["seconds"] else DASH,
                      str(entry["sep_mismatch"]), _rounds(entry),
                      _utility_evaluations(entry)]
            searches, base_searches = searches_of(entry), searches_of(base) if base else None
            per_search = (_fmt(positions / searches / (base["decoder_positions"] / base_searches), 2)
                          if searches and base_searches else DASH)
            cells += [DASH if searches is None else str(searches), per_search]
            cells += _own_cells(shown, entry, base, spec)
            cells += [_accepted(entry)] if with_drafts else []
        rows.append(cells)
    labelled = {f"{manifest_task} {s}": sc[s] for manifest_task, sc in zip(manifest["tasks"], per_task) for s in sc}
    devices = sorted({sc[s].get("device", "?") for sc in per_task for s in sc})
    dtypes = sorted({sc[s].get("dtype") or "unrecorded" for sc in per_task for s in sc})
    noted = list(dict.fromkeys(columns for shown in own for columns, _ in shown))
    priced = [price_note(t, columns, spec["prices"]) for t, shown, spec in zip(manifest["tasks"], own,
                                                                                  manifest["tasks"].values())
              for columns, with_price in shown if with_price]
    return Table("decoding_cost", "Table 1: computational cost of decoding for each of the search strategies, "
                 "measured on the test set (decoder positions, forward calls, wall time) beside the paper's O(.) "
                 "(N sentences of average length L, k window, h document beam)", header, rows,
                 [COST_NOTE.format(devices=", ".join(devices), dtypes=", ".join(dtypes))]
                 + [columns.note for columns in noted] + priced + ([DRAFTS_NOTE] if any(drafted) else [])
                 + mbr_notes(manifest) + model_notes(labelled, "the search")
                 + realigned_notes(labelled))


#: Table 1's first note (the device and dtype filled in).
COST_NOTE = ("×SL: ratio to sentence-level. 2-pass includes its sentence-level first pass; refine does not include "
             "its draft, whose cost is the draft strategy's own row. Decoder positions: "
             "target positions computed (forced context once per sentence, then one per active beam "
             "hypothesis per step). Rounds: dependent search rounds (1: every sentence in one batched call; "
             "position by position: the longest document); parallel doc-trans: its fixed-point iterations, "
             "with the sentences decoded per round (its cost includes its sentence-level first pass, like "
             "2-pass, and 2-pass's where it takes 2-pass's output over as round 1, which is then not searched "
             "again), the round from which it finished sequentially (one sentence per document and round), "
             "and 'not converged' with the sentences that may differ from sequential doc-trans where the round "
             "limit stopped it. Device: {devices}; dtype: {dtypes}; wall times from the "
             "decode rules. Utility evaluations: MBR selection's pairwise utility scores (n^2 per selection of "
             "n candidates; its search is a beam of n, or n samples); QE reranking's QE scores (n per "
             "selection); for a learned metric (COMET, QE) each is one forward pass of the metric; document MBR's "
             "(pooled+docmbr) document transports (n(n-1) per document of n distinct candidates), its positions, "
             "calls and time the sum of its candidates' (a shared first pass once) plus its selection's time. "
             "Searches: the "
             "requests searched (a request identical to another of the same search call, same window, context and "
             "document, shares its search: a repeated sentence does, for the strategies without target context; "
             "with the first pass's where the positions include it). Positions per search ×SL: decoder positions "
             "per search as a ratio to sentence-level's, the work of one search, which a test set's repeated "
             "sentences do not change (×SL above also counts the searches that sentence-level shares and the "
             "strategies with context cannot).")


def searches_of(entry: dict) -> int | None:
    """The searches a sidecar's decoder positions paid for: its requests less those that shared an identical
    request's search (``repeated_requests``), with its first pass's and reused round 1's where its positions include
    them (``decoder_positions_with_first_pass``); None for a sidecar from before requests were recorded."""
    parts = [entry]
    if "decoder_positions_with_first_pass" in entry:
        parts += [entry.get("first_pass") or {}, entry.get("round_one") or {}]
        parts = [p for p in parts if p]
    if any("requests" not in p for p in parts):
        return None
    return sum(p["requests"] - p.get("repeated_requests", 0) for p in parts)


def _utility_evaluations(entry: dict) -> str:
    """MBR's or QE's utility evaluations, or pooled+docmbr's document transports."""
    selection = entry.get("mbr") or entry.get("docmbr")
    return str(selection["utility_evaluations"]) if selection else DASH


def _accepted(entry: dict) -> str:
    """A decode's accepted draft tokens: of how many, and their share (docnmt.decode.verification)."""
    drafts = entry.get("drafts")
    if not drafts or not drafts.get("draft_tokens"):
        return DASH
    return f"{drafts['accepted_tokens']} of {drafts['draft_tokens']} ({100 * drafts['accepted_tokens'] / drafts['draft_tokens']:.1f}%)"


#: The note on the accepted draft tokens.
DRAFTS_NOTE = ("Accepted draft tokens: at beam 1, a decode given a draft of a sentence's translation (2-pass's first "
               "pass, parallel doc-trans's last round) verifies it in one pass and decodes from the first token the "
               "model disagrees with (docs/decoding.md, 'Draft verification'; the output is the same): the draft's "
               "tokens the greedy search accepted, of all. For a context strategy, the share says how often its "
               "context left the draft as it was.")


def _rounds(entry: dict) -> str:
    """A sidecar's rounds cell: the count; parallel doc-trans adds sentences per round and convergence."""
    rounds = entry.get("rounds")
    if rounds is None:  # a sidecar from before rounds were recorded
        return DASH
    cell = str(rounds)
    if entry.get("redecoded_per_round") is not None:
        cell += f" ({'/'.join(map(str, entry['redecoded_per_round']))})"
    if entry.get("round_one_reused"):
        cell += ", round 1 from 2-pass"
    if entry.get("sequential_from_round"):
        cell += f", sequential from round {entry['sequential_from_round']}"
    if entry.get("converged") is False:
        cell += f", not converged: {entry.get('unconverged', '?')} sentences"
    return cell

"""The overlapping windows of last-sentence and first-sentence (Eq. 1), and their drafts.

Every sentence i is translated in its own window: F_{i-k+1}^i (last-sentence keeps the window's last segment) or
F_i^{i+k-1} (first-sentence keeps its first). A window shares k-1 sentences with its neighbour, so at beam 1, where a
search verifies drafts (:mod:`docnmt.decode.verification`), most of each window's output is known before it is
searched:

1. **A tiling.** The windows of a cover of each document (:func:`tiling`: the first sentence not yet covered, in the
   window that contains it and reaches furthest; for k=3 the windows of sentences 0-2, 3-5, ...) are searched
   first, in one call, as they would be without drafts.
2. **The rest.** Every other window's draft is the tiling's translation of its sentences, joined by ``<sep>``, up to
   the first sentence whose tiling window did not split into one segment per sentence; they are searched in a
   second call, each verified in one pass and decoded on only where the model disagrees.

Verification is exact, so the output is the windows' own, as in one call without drafts; ``Stats.rounds`` counts
the two calls. Elsewhere (beam search, verification off) every window is searched in one call.
"""

from __future__ import annotations

from ..preprocess.windows import join, split
from .documents import Document, window
from .fixed_point import first_segment as _first_segment
from .verification import verifies


def spans(length: int, k: int, keep_last: bool) -> list[tuple[int, int]]:
    """Each sentence's window in a document of ``length`` sentences, as [start, stop) clipped to the document."""
    if keep_last:
        return [(max(0, i - k + 1), i + 1) for i in range(length)]
    return [(i, min(length, i + k)) for i in range(length)]


def tiling(windows: list[tuple[int, int]]) -> list[int]:
    """The windows (their indices, ascending) that cover every sentence: from the first sentence not yet covered,
    the window that contains it and reaches furthest (the first such), until the last sentence is covered."""
    chosen: list[int] = []
    covered = 0
    end = max((stop for _, stop in windows), default=0)
    while covered < end:
        best = max((n for n, (start, stop) in enumerate(windows) if start <= covered < stop),
                   key=lambda n: (windows[n][1], -n))
        chosen.append(best)
        covered = windows[best][1]
    return sorted(chosen)


def draft_text(segments: dict[int, str], start: int, stop: int) -> str | None:
    """The draft of the window [start, stop): the known segments of its sentences, joined by ``<sep>``, up to the
    first sentence without one (None: not even its first)."""
    known = []
    for s in range(start, stop):
        if s not in segments:
            break
        known.append(segments[s])
    return join(known) if known else None


def overlapping(dec, docs: list[Document], keep_last: bool) -> list[list[str]]:
    """Each sentence's translation from its overlapping window (the module docstring): the last segment of
    F_{i-k+1}^i (``keep_last``), else the first of F_i^{i+k-1}."""
    per_doc = [spans(len(d), dec.k, keep_last) for d in docs]
    flat = [(n, i) for n, d in enumerate(docs) for i in range(len(d))]
    out = [[""] * len(d) for d in docs]
    keep = _last_segment if keep_last else _first_segment

    def searched(keys, drafts=None) -> dict[tuple[int, int], list[str]]:
        """The windows of ``keys`` searched in one call (``drafts``: each one's draft), their kept segments in
        ``out``; the windows whose output has one segment per sentence, with their segments."""
        requests = [dec.request(window(docs[n], *per_doc[n][i]), (), docs[n].lines[i], drop_newest=not keep_last)
                    for n, i in keys]
        if drafts is not None:
            requests = [dec.with_draft(r, drafts[key]) for r, key in zip(requests, keys)]
        whole = {}
        for (n, i), nbest in zip(keys, dec.search_round(requests)):
            segments = split(dec.text(dec.best(nbest, keep, source=docs[n].src[i])))
            start, stop = per_doc[n][i]
            if len(segments) != stop - start:
                dec.stats.sep_mismatch += 1
            else:
                whole[(n, i)] = segments
            out[n][i] = segments[-1] if keep_last else segments[0]
            if keep_last:
                dec.stats.generated_context[docs[n].lines[i]] = segments[:-1]
        return whole

    if not verifies(dec.searcher):
        searched(flat)
        return out
    first = [(n, i) for n in range(len(docs)) for i in tiling(per_doc[n])]
    tiled: list[dict[int, str]] = [{} for _ in docs]
    for (n, i), segments in searched(first).items():
        for s, segment in enumerate(segments, start=per_doc[n][i][0]):
            tiled[n].setdefault(s, segment)
    firsts = set(first)
    rest = [key for key in flat if key not in firsts]
    if rest:
        searched(rest, {(n, i): draft_text(tiled[n], *per_doc[n][i]) for n, i in rest})
    return out


def _last_segment(text: str) -> str:
    return split(text)[-1]

"""The documents of a test set, as the strategies, the scorers and translate read them: the library layer that
the CLIs (:mod:`docnmt.decode.cli`, :mod:`docnmt.decode.translate`, :mod:`docnmt.score.perplexity`,
:mod:`docnmt.score.cxmi`) share.

- :class:`Document`: one document's sentences with their global line numbers, and what a strategy may need of it
  (reference, first pass, 2-pass's output as round 1);
- :func:`group`: line-aligned files (source, document ids, optionally reference and first pass) as documents;
- :func:`window` and :func:`previous`: a sentence's window of source sentences and its k-1 previous sentences of
  a text, the context every strategy and scorer builds its requests from.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence


@dataclass
class Document:
    """One document of the test set at BPE level, with its global line numbers."""

    docid: str
    lines: list[int]
    src: list[str]
    ref: list[str] | None = None
    first_pass: list[str] | None = None
    #: 2-pass's hypotheses of this document and whether each had a ``<sep>`` mismatch: parallel
    #: doc-trans takes them as its round 1 instead of decoding it again (module docstring)
    round_one: list[str] | None = None
    round_one_mismatch: list[bool] | None = None
    #: the draft translation refine improves: another strategy's hypotheses (:mod:`docnmt.decode.refinement`)
    draft: list[str] | None = None

    def __len__(self) -> int:
        return len(self.src)


def group(src: list[str], docids: list[str], ref=None, first_pass=None, draft=None) -> list[Document]:
    """Line-aligned files as documents (``draft``: refine's draft translation)."""
    docs: list[Document] = []
    for line, docid in enumerate(docids):
        if not docs or docs[-1].docid != docid:
            docs.append(Document(docid, [], [], [] if ref is not None else None, [] if first_pass is not None else None,
                                 draft=[] if draft is not None else None))
        doc = docs[-1]
        doc.lines.append(line)
        doc.src.append(src[line])
        if ref is not None:
            doc.ref.append(ref[line])
        if first_pass is not None:
            doc.first_pass.append(first_pass[line])
        if draft is not None:
            doc.draft.append(draft[line])
    return docs


def window(doc: Document, start: int, stop: int) -> list[str]:
    """The source sentences ``start`` to ``stop`` (exclusive) of ``doc``, clipped to the document."""
    return doc.src[max(0, start):min(len(doc), stop)]


def previous(sentences: Sequence[str], i: int, k: int) -> list[str]:
    """The (at most) k-1 sentences before sentence ``i`` of ``sentences``: sentence i's context in a k-window."""
    return list(sentences[max(0, i - k + 1):i])


#: A strategy's context: the k-1 previous sentences (``window``), or every earlier sentence of the document
#: (``document``: k is then the longest document's length, so a window reaches the document's start).
CONTEXTS = ("window", "document")


def context_k(context: str, k: int, docs: Sequence[Document]) -> int:
    """The k the strategies use: ``k`` for a window context; for a document context, the longest document's length
    (at least ``k``), so that every window and every context holds the document so far (full-segment: the whole
    document in one segment)."""
    if context not in CONTEXTS:
        raise ValueError(f"unknown context {context!r}, expected one of {', '.join(CONTEXTS)}")
    if context == "window":
        return k
    return max([k] + [len(d) for d in docs])

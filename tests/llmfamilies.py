"""The tests' tiny model of every causal-LM family (docnmt.decode.backends.causal_lm.tiny.FAMILIES), each made once
per session (tests/decode/test_families.py decodes them with causal-lm; conftest's ``vllm_side_outputs`` with vLLM),
and the documents both decode."""

from __future__ import annotations

from pathlib import Path

#: the sliding window and the context window of the families' tiny models, in tokens: a prompt of this backend (the
#: instruction and one sentence) is longer than the window, and a document's conversation longer than the context
WINDOW, CONTEXT = 24, 128


def build_family(folder: Path, architecture: str) -> Path:
    """A family's tiny model (2 layers of 64, heads of 32 as vLLM's CPU build needs), 150 updates on the demo's
    conversations: enough to answer with a sentence and end its turn."""
    import llmmodel
    from docnmt.decode.backends.causal_lm.tiny import build

    docs, _ = llmmodel.demo_documents(40)
    return build(folder / "model", docs, architecture=architecture, steps=150, hidden=64, heads=2, layers=2,
                 window=WINDOW, max_positions=CONTEXT)


def family_folder(tmp_path_factory, architecture: str) -> Path:
    """The family's tiny model folder (:func:`build_family`), made once per session however many workers ask."""
    from helpers import made_once

    return made_once(tmp_path_factory, f"llm-family-{architecture}", lambda folder: build_family(folder, architecture))


def family_documents():
    """The first 4 sentences of the demo's first two test documents (docnmt.decode.documents.Document)."""
    import llmmodel
    from docnmt.decode.documents import group

    _, docs = llmmodel.demo_documents()
    docs = docs[:2]
    return group([s for d in docs for s in d.src[:4]], [d.docid for d in docs for _ in d.src[:4]],
                 ref=[t for d in docs for t in d.tgt[:4]])


def plain_documents(docs) -> dict:
    """Documents as the JSON tests/vllm_side.py reads: src, ref and docids, a line each."""
    return {"src": [s for d in docs for s in d.src], "ref": [t for d in docs for t in d.ref],
            "docids": [d.docid for d in docs for _ in d.src]}

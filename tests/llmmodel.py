"""Tiny causal LMs built here, with no download (docnmt.decode.backends.causal_lm.tiny): a byte-level BPE tokenizer
trained on the demo corpus, with a ChatML chat template, and a 2-layer Llama or Qwen2 model trained briefly on the
demo's pairs written as chat turns, with and without context turns, saved in the ``save_pretrained`` layout that
:class:`docnmt.decode.backends.causal_lm.model.CausalLMModel` loads."""

from __future__ import annotations

from pathlib import Path


def demo_documents(train_docs: int = 120, test_docs: int = 6, seed: int = 5):
    from docnmt.corpora.demo import generate

    docs = generate(seed=seed, n_docs_per_split={"train": train_docs, "test": test_docs})
    return docs["train"], docs["test"]


def build(folder: Path, architecture: str = "llama", steps: int = 200, train_docs: int = 120,
          chat: bool = True) -> Path:
    """Tokenizer and model trained on the demo's conversations, saved in ``folder``."""
    from docnmt.decode.backends.causal_lm.tiny import build as build_tiny

    docs, _ = demo_documents(train_docs)
    return build_tiny(folder, docs, "en", "de", architecture=architecture, steps=steps, chat=chat)


def forced_requests(model, doc, context: int, count: int = 4):
    """The first ``count`` sentences of ``doc`` as forced-scoring requests of ``model`` (each after ``context``
    earlier source sentences, and their reference translations as its forced prefix), and each one's reference."""
    from docnmt.decode.requests import Request

    requests = [Request(model.encode(" <sep> ".join(doc.src[max(0, i - context):i + 1]), source=True),
                        model.encode(" <sep> ".join(doc.ref[max(0, i - context):i]) + " <sep>")[:-1] if i else [])
                for i in range(count)]
    return requests, [model.encode(doc.ref[i])[:-1] for i in range(count)]

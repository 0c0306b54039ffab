"""Validated configs for the tests of docnmt.workflow: the workflow's config.yaml with other tasks or settings
(as `--config` gives them), and tasks whose models come from elsewhere. Each call returns a fresh dict."""

from __future__ import annotations

from docnmt.config import WORKFLOW_CONFIG, merge, read, validate

#: The paper's tasks.
PAPER = ["news", "ted", "os"]


def workflow_config(**overrides) -> dict:
    """config.yaml with ``overrides`` merged over it, validated (defaults filled in) as the workflow does."""
    return validate(merge(read(WORKFLOW_CONFIG), overrides))


def demo_config(**overrides) -> dict:
    return workflow_config(tasks=["demo"], **overrides)


def paper_config(**overrides) -> dict:
    return workflow_config(tasks=PAPER, **overrides)


def fairseq_models(levels=("sentence", "document"), codes="models/bpe.codes") -> dict:
    """task_settings.TASK.models of fairseq models trained elsewhere (k 4, separator <brk>)."""
    models = {"k": 4, "separator": "<brk>", "bpe_codes": codes, "tokenize": "moses"}
    for level in levels:
        models[level] = {"checkpoint": f"models/{level}/checkpoint.pt", "data": f"models/{level}/data-bin"}
    return models


def external_config(**overrides) -> dict:
    """Four tasks on models from elsewhere: ``mine`` (fairseq, both levels), ``mine-doc`` (fairseq, the
    document-level model alone, no BPE), ``hf`` (a Hugging Face model with language codes) and ``llm`` (a causal
    LM with the document as context and a template of its own)."""
    hf = {"backend": "transformers", "k": 2, "separator": "</s>", "language_codes": {"src": "en_XX", "tgt": "de_DE"},
          "sentence": {"checkpoint": "hf-model"}, "document": {"checkpoint": "hf-model"}}
    task = {"src": "en", "tgt": "de", "corpus": {"type": "prepared", "dir": "corpus"}}
    llm = {"backend": "causal-lm", "context": "document", "template": "my-template.yaml",
           "sentence": {"checkpoint": "llm"}, "document": {"checkpoint": "llm"}}
    return workflow_config(tasks=["mine", "mine-doc", "hf", "llm"], task_settings={
        "mine": {**task, "models": fairseq_models()},
        "mine-doc": {**task, "models": fairseq_models(("document",), codes="none")},
        "hf": {**task, "models": hf},
        "llm": {**task, "models": llm},
    }, **overrides)

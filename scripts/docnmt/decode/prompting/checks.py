"""The checks of a prompted model before any decode, each failure one line naming the folder, the template or the
sample's file and line. A causal LM's folder (causal-lm's and vllm's, :func:`check_prompted_folder`), without
loading its weights:

- the folder has the config of a causal LM (not an encoder-decoder model; a model type transformers has a causal
  LM for) and a tokenizer;
- the tokenizer has no more tokens than the model has embeddings;
- the prompt can be made: the tokenizer has a chat template, or a template is given; the template has its keys
  and the placeholder ``{source}``; the languages are given;
- a document-level use gives k of at least 2;
- no sentence of the sample (``--sample``, raw text, documents separated by blank lines) makes a prompt longer
  than the model's context window: the conversation of its k-1 previous sentences of the document (each a turn,
  with itself as its translation's stand-in; none for a sentence-level use) and its own user message. The first
  sentence that does not fit is named with its document. (With ``--context document`` the strategies drop the
  oldest turns of a conversation that outgrows the window, and count them.)

A served model's checks (openai's) prompt the same sample sentences (:func:`sample_sentences`). The line of
docnmt-check-model says the same of a causal LM folder's prompt on either backend (:func:`prompt_summary`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

from ...textio import InputError, read_lines
from ..checks import check_k

#: What a causal LM's folder holds in place of a fairseq model's data folder and BPE codes
#: (:func:`docnmt.decode.checks.no_fairseq_files`).
HOLDS_ITS_TOKENIZER = "a causal LM's folder holds its tokenizer, which segments raw text"

def sample_sentences(sample: Sequence[os.PathLike | str], context: int, max_lines: int = 2000):
    """Each sentence of a check's sample (raw text files, documents separated by blank lines; the first
    ``max_lines`` lines of each) as the checks prompt it: (the file's place in ``sample``, the file, line number,
    document number, its ``context`` previous sentences of the document as turns, each its own translation's
    stand-in, the sentence)."""
    for place, path in enumerate(map(Path, sample)):
        done: list[tuple[str, str]] = []
        document = 1
        for number, line in enumerate(read_lines(path)[:max_lines], start=1):
            if not line.strip():
                if done:
                    document, done = document + 1, []
                continue
            yield place, path, number, document, done[len(done) - context:] if context else [], line.strip()
            done.append((line.strip(), line.strip()))


def check_prompted_folder(folder: os.PathLike | str, level: str, k: int | None, src_lang: str | None,
                          tgt_lang: str | None, sample: Sequence[os.PathLike | str], template: str | None, *,
                          backend: str, max_lines: int = 2000, max_positions: int | None = None,
                          config_check=None) -> dict:
    """The checks above, in order, for the backend ``backend``; the report of what was found (an :class:`InputError`
    at the first failure). ``max_positions``: a context window smaller than the model's (an engine's
    ``max_model_len``); ``config_check``: the backend's own check of the model's config (called with the folder and
    the config) after the first two."""
    from ..backends import load_tokenizer
    from .model import check_causal, load_config, prompter_for

    folder = Path(folder)
    if level not in ("sentence", "document"):
        raise ValueError(f"level must be sentence or document, got {level!r}")
    config = load_config(folder)
    check_causal(folder, config)
    if config_check is not None:
        config_check(folder, config)
    tokenizer = load_tokenizer(folder)
    rows = config.vocab_size
    if len(tokenizer) > rows:
        raise InputError(folder, f"the tokenizer has {len(tokenizer)} tokens, the model's embeddings {rows} rows: "
                                 "a token was added to the tokenizer without model.resize_token_embeddings("
                                 "len(tokenizer)) (save both again with save_pretrained)")
    prompter = prompter_for(folder, tokenizer, template, src_lang, tgt_lang)
    chat = prompter.chat
    check_k(folder, folder, level, k, None)
    limit = int(getattr(config, "max_position_embeddings", 0) or 2048)
    limit = min(limit, max_positions) if max_positions else limit
    last_document: dict[int, int] = {}  # each file's last document
    sentences = longest = 0
    context = (k or 1) - 1 if level == "document" else 0
    for place, path, number, document, turns, sentence in sample_sentences(sample, context, max_lines):
        tokens = len(prompter.ids(turns, sentence))
        if tokens >= limit:
            raise InputError(path, f"document {document}: the prompt of this sentence, with its {len(turns)} "
                                   f"previous sentences as turns, has {tokens} tokens, the model's context "
                                   f"window {limit}: split the sentence or use a smaller k", number)
        last_document[place] = document
        sentences, longest = sentences + 1, max(longest, tokens)
    documents = sum(last_document.values())
    return {
        "checkpoint": str(folder), "backend": backend, "level": level, "model_type": config.model_type,
        "tokenizer": type(tokenizer).__name__, "vocabulary": len(tokenizer), "embeddings": rows,
        "src": src_lang, "tgt": tgt_lang, "template": str(prompter.template.path),
        "chat_template": chat, "k": k if level == "document" else 1, "max_positions": limit,
        "sample": {"documents": documents, "sentences": sentences, "longest_prompt": longest} if sample else None,
    }


def prompt_summary(report: dict, level: str) -> str:
    """What docnmt-check-model's line says of a causal LM folder's prompt (:func:`check_prompted_folder`'s
    ``report``): the languages, the chat template or plain prompt and the template's file, the
    level and k, and the sample's documents and longest prompt (where a sample was checked)."""
    sample = report["sample"]
    return (f"{report['src']}->{report['tgt']}, " + ("chat template" if report["chat_template"] else "plain prompt")
            + f" with {Path(report['template']).name}, {level}-level"
            + (f", k={report['k']}" if level == "document" else "")
            + (f"; sample: {sample['documents']} documents, the longest prompt {sample['longest_prompt']}"
               if sample else ""))

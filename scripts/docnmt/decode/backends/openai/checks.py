"""The openai backend's checks of a served model, before any decode, each failure one line:
- the server is reachable, takes the key (``$api_key_env``) and serves a model of this name (``/v1/models``);
- it answers one short chat request (a conversation of the template, a few tokens);
- where ``prompt_logprobs`` is set, it gives prompt log-probs (one short forced scoring);
- a document-level use gives k of at least 2;
- no sentence of the sample (``--sample``, raw text, documents separated by blank lines) makes a prompt over the
  server's context window: the longest conversation (its k-1 previous sentences as turns, each its own translation's
  stand-in, and its own message) is sent with a one-token answer, and the server's refusal is reported with the
  sentence's file, line and document.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

from ....textio import InputError
from ...checks import no_fairseq_files, reported
from ...prompting.checks import sample_sentences
from .endpoint import EndpointError, Settings


def longest_prompt(model, sample: Sequence[os.PathLike | str], context: int, max_lines: int = 2000):
    """The sample's sentence whose conversation is the longest by the bytes estimate
    (:func:`docnmt.decode.prompting.checks.sample_sentences`): (its messages, its estimate, its turns, its file,
    line, document), or None; with the counts of documents and sentences."""
    best, last_document, sentences = None, {}, 0
    for place, path, number, document, turns, sentence in sample_sentences(sample, context, max_lines):
        messages = model.prompter.messages(turns, sentence)
        size = model.estimate(messages)
        if best is None or size > best[1]:
            best = (messages, size, len(turns), path, number, document)
        last_document[place] = document  # each file's last document
        sentences += 1
    return best, sum(last_document.values()), sentences


def check_served_model(name: str, settings: Settings, level: str, k: int | None = None, src_lang: str | None = None,
                       tgt_lang: str | None = None, sample: Sequence[os.PathLike | str] = (),
                       template: str | None = None, separator: str | None = None) -> dict:
    """The checks above, in order; the report (an :class:`InputError` at the first failure)."""
    from ...checks import check_k
    from .model import UNKNOWN_WINDOW, ServedModel

    if level not in ("sentence", "document"):
        raise ValueError(f"level must be sentence or document, got {level!r}")
    model = ServedModel(name, settings, src_lang=src_lang, tgt_lang=tgt_lang, template=template)
    entry = model.connect(retries=0)  # the check reports an unreachable server at once
    endpoint = model.endpoint
    greeting = model.prompter.messages([], "Good morning.")
    try:
        endpoint.chat(greeting, 4)
    except EndpointError as err:
        raise EndpointError(endpoint.name, f"could not answer a short chat request: {err.what}") from None
    if settings.prompt_logprobs:
        try:
            model.scored_answer(greeting, "Guten Morgen.")
        except EndpointError as err:
            raise EndpointError(endpoint.name, "prompt_logprobs is set, but the server gives no prompt log-probs "
                                               f"for forced scoring: {err.what}") from None
    check_k(Path(name), Path(name), level, k, None)
    context = (k or 1) - 1 if level == "document" else 0
    best, documents, sentences = longest_prompt(model, sample, context)
    if best is not None:
        messages, size, turns, path, number, document = best
        try:
            endpoint.chat(messages, 1)
        except EndpointError as err:
            raise InputError(path, f"document {document}: the prompt of this sentence, with its {turns} previous "
                                   f"sentences as turns, was refused by {endpoint.name}: {err.what}", number) from None
    window = None if model.max_positions == UNKNOWN_WINDOW else model.max_positions
    return {
        "checkpoint": name, "backend": "openai", "level": level, "base_url": settings.base_url,
        "api_key_env": settings.api_key_env, "key_set": endpoint.key_set, "owned_by": entry.get("owned_by"),
        "src": src_lang, "tgt": tgt_lang, "template": str(model.template.path), "chat_template": True,
        "k": k if level == "document" else 1, "max_positions": window, "prompt_logprobs": settings.prompt_logprobs,
        "sample": {"documents": documents, "sentences": sentences,
                   "longest_prompt_estimate": 0 if best is None else best[1]} if sample else None,
    }


def served_cli(parser, args) -> int:
    """docnmt-check-model on a served model (the openai backend's ``check_cli``)."""
    no_fairseq_files(parser, args, "a served model's server holds its tokenizer")
    engine = dict(args.engine_args or {})
    try:
        settings = Settings.of(engine.pop("base_url", None), **engine)
    except ValueError as err:
        parser.error(str(err))
    report = check_served_model(str(args.model), settings, args.level, args.k, args.src_lang, args.tgt_lang,
                                args.sample, getattr(args, "template", None), args.separator)
    return reported(args.output, report, f"{args.model} at {settings.base_url}: served, {report['src']}->"
                    f"{report['tgt']}, chat messages with {Path(report['template']).name}, {args.level}-level"
                    + (f", k={report['k']}" if args.level == "document" else "")
                    + f", context window {report['max_positions'] or 'not reported'}"
                    + (", prompt log-probs" if report["prompt_logprobs"] else "")
                    + (f"; sample: {report['sample']['documents']} documents, the longest prompt at most "
                       f"{report['sample']['longest_prompt_estimate']} tokens" if report["sample"] else ""))

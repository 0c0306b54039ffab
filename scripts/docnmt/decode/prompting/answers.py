"""The rules of a prompted model's answers, the same for every backend that prompts (causal-lm, vllm, openai): which
ids a request may hold (:func:`checked_request`), how many lines its answer should have (:func:`answer_lines`), and
how an answer's text is cut into its sentences and judged complete (:func:`answer_sentences`)."""

from __future__ import annotations

from ..requests import Request
from ...textio import InputError


def checked_request(number: int, request: Request, sep: int, ids: str) -> tuple[list[int], list[int], list[int]]:
    """Request ``number``'s source, prefix and document ids, each below or at ``sep`` as refine's drafts' (a model's
    ``ids``, in words, for the message); an InputError naming the request where the source is empty or an id is not the model's."""
    source, prefix, document = list(request.source), list(request.prefix), list(request.document)
    if not source:
        raise InputError(f"request {number}", "expected source ids, found an empty source")
    drafts = list(getattr(request, "refining", ())) + list(getattr(request, "draft_document", ()))
    bad = [t for t in source + prefix + document + drafts if not 0 <= t <= sep]
    if bad:
        raise InputError(f"request {number}", f"expected {ids} or the sentence separator {sep}, found id {bad[0]}")
    return source, prefix, document


def answer_lines(request: Request, sep: int) -> int:
    """The lines a request's answer should have: its last message's sentences (``sep``: the model's separator id)."""
    sources = 1 + sum(1 for t in request.source if t == sep)
    return sources - sum(1 for t in request.prefix if t == sep)


def answer_sentences(text: str, ended: bool, lines: int) -> tuple[list[str], bool]:
    """An answer's text as sentences and whether it is complete: its non-empty lines, stripped (the answer to one
    sentence: those lines joined by spaces); complete where it ``ended`` with ``lines`` lines."""
    found = [line.strip() for line in text.split("\n") if line.strip()] or [""]
    complete = ended and len(found) == lines
    return ([" ".join(found)] if lines == 1 else found), complete

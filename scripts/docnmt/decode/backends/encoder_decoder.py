"""What the encoder-decoder backends (fairseq's, transformers') share: a request's ids checked against the model's
vocabulary and positions, a request's fit in the encoder's and decoder's positions, a forced target's ids with its
end, and a request's positions in a batch (:func:`docnmt.decode.requests.token_batches`)."""

from __future__ import annotations

from typing import Sequence

from ..requests import Request
from ...textio import InputError


def checked_ids(searcher, where: str, request: Request) -> tuple[list[int], list[int]]:
    """A request's source and prefix ids, checked for ``searcher`` (either backend): the source ends in ``</s>``
    and fits the encoder; neither holds ``<pad>``, an inner ``</s>`` or an id outside the vocabulary. An
    InputError names the request (``where``) and the first bad id."""
    source, prefix = [int(t) for t in request.source], [int(t) for t in request.prefix]
    if not source or source[-1] != searcher.eos:
        raise InputError(where, "expected source ids ending in </s>, found "
                         + (f"last id {source[-1]}" if source else "an empty source"))
    if len(source) > searcher.max_source_positions:
        raise InputError(where, f"source too long: {len(source)} tokens (</s> included), the model's max "
                         f"source positions are {searcher.max_source_positions}")
    for what, ids in (("source", source[:-1]), ("prefix", prefix)):
        bad = [t for t in ids if not 0 <= t < searcher.vocab or t in (searcher.pad, searcher.eos)]
        if bad:
            raise InputError(where, f"expected {what} ids of the {searcher.vocabulary} without <pad> or an inner "
                             f"</s>, found {searcher._describe(bad[0])}")
    return source, prefix


def check_length(model, ids: Sequence[int], what: str) -> None:
    """An InputError naming ``what`` where ``ids`` exceed the model's ``max_positions`` (a model's method)."""
    if len(ids) > model.max_positions:
        raise InputError(
            what, f"expected at most {model.max_positions} tokens (the model's max positions), found {len(ids)}"
        )


def window_fits(model, source: Sequence[int], prefix: Sequence[int], continuation: int = 1, prompt: int = 1,
                document: Sequence[int] = ()) -> bool:
    """An encoder-decoder model's ``fits``: the source fits the encoder's positions, and the decoder's ``prompt``
    tokens, the forced ``prefix`` and ``continuation`` target tokens the decoder's (``model.max_positions`` each).
    It has no prompt to give a source ``document`` in (source-primed is a prompting backend's strategy)."""
    if document:
        raise ValueError(f"a {model.backend} model has no prompt to give the source document in (source-primed)")
    return len(source) <= model.max_positions and prompt + len(prefix) + continuation <= model.max_positions


def checked_target(searcher, number: int, target: Sequence[int], ends: Sequence[int] | None) -> list[int]:
    """A forced-scoring target's ids (no ``<pad>`` or ``</s>``; InputError naming request ``number`` otherwise)
    with its end token appended: ``</s>``, or ``ends[number - 1]`` (``</s>`` or the separator)."""
    target = [int(t) for t in target]
    bad = [t for t in target if not 0 <= t < searcher.vocab or t in (searcher.pad, searcher.eos)]
    if bad:
        raise InputError(f"request {number}", f"expected target ids of the {searcher.vocabulary} without <pad> or "
                         f"</s>, found {searcher._describe(bad[0])}")
    end = searcher.eos if ends is None else int(ends[number - 1])
    if end not in (searcher.eos, searcher.model.sep):
        raise ValueError(f"request {number}: the end token must be </s> or the separator, got {end}")
    return target + [end]


def checked_positions(beam: int, checked: tuple) -> int:
    """A checked request's positions in a batch (:func:`token_batches`): beam x (source + prefix or decoder prompt +
    its token limit), ``checked`` = (source ids, prefix ids, limit) as the encoder-decoder searchers check them."""
    source, prefix, limit = checked
    return beam * (len(source) + len(prefix) + limit)

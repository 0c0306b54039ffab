"""Beam search over an engine's steps, with the semantics of transformers' ``generate(num_beams=...)``: the beam
search of the causal-lm backend, for an engine that gives the next token's log-probs of whole prompts (vLLM), so
that a prompted backend's beam translations are causal-lm's.

Each request keeps ``beam`` live beams (one at the start). A step asks the engine, for every live beam of every
request not done, for the top ``keep`` next tokens and their log-probs, where ``keep`` is ``max(2, 1 + ends) x beam``
(``ends``: the end tokens), as transformers keeps. Of a request's candidates (a live beam's log-prob plus a token's),
the best ``keep``:

- those that end (an end token; the stop text ``stop`` completed, a plain template's end; or the token limit
  reached) and rank among the first ``beam`` are finished hypotheses, scored by their log-prob over their length
  (the answer's tokens, its end included) to the power ``lenpen``; the best ``beam`` finished are kept;
- the best ``beam`` that do not end are the live beams of the next step.

A request is done when no candidate can continue, or when it holds ``beam`` finished hypotheses and its best live
beam's log-prob over the current length, to the power ``lenpen``, is no better than its worst finished one
(transformers' heuristic with ``early_stopping=False``): a search stops when its answers have ended, not at the token
limit, which is what vLLM's own ``LLM.beam_search`` does (it also divides by the prompt's length, and ends beams at
the tokenizer's end token only).

The engine is a function ``step(sequences, keep)``: for each token sequence (a prompt and a beam's tokens), the
``keep`` most probable next tokens as ``(token, log-prob)`` pairs. It sees every step's sequences at once, so an
engine with a prefix cache reads each prompt and the beams' earlier tokens from it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

#: an engine's step: for each sequence, its ``keep`` best next tokens as (token, log-prob)
Step = Callable[[Sequence[Sequence[int]], int], Sequence[Sequence[tuple[int, float]]]]


@dataclass
class Beam:
    """A live beam: its tokens after the prompt, their log-probs, and its text (where a stop text is watched)."""

    tokens: list[int]
    logprobs: list[float]
    logprob: float
    text: str = ""


@dataclass
class Ended:
    """A finished hypothesis: its tokens (its end included), each token's log-prob, and its score."""

    tokens: list[int]
    logprobs: list[float]
    score: float


@dataclass
class _Search:
    prompt: list[int]
    limit: int
    live: list[Beam] = field(default_factory=lambda: [Beam([], [], 0.0)])
    ended: list[Ended] = field(default_factory=list)
    improvable: bool = True

    @property
    def done(self) -> bool:
        """No room for a token, no live beam left, or none that could beat the finished ones."""
        return self.limit < 1 or not self.live or not self.improvable


def keep_for(beam: int, ends: Sequence[int]) -> int:
    """The candidates a step keeps of each request: transformers' ``max(2, 1 + len(ends)) * beam``."""
    return max(2, 1 + len(ends)) * beam


def beam_search(prompts: Sequence[Sequence[int]], limits: Sequence[int], step: Step, beam: int, lenpen: float,
                ends: Sequence[int], stop: str | None = None,
                piece: Callable[[int], str] | None = None) -> list[list[Ended]]:
    """Each prompt's ``beam`` best finished hypotheses, best first, searched to at most its ``limits`` tokens.
    ``stop``: a text that ends an answer where its tokens' texts (``piece``) end with it."""
    if len(prompts) != len(limits):
        raise ValueError(f"expected one token limit per prompt ({len(prompts)}), got {len(limits)}")
    if stop is not None and piece is None:
        raise ValueError("a stop text needs the tokens' texts (piece)")
    keep = keep_for(beam, ends)
    end_set = set(ends)
    searches = [_Search(list(p), int(n)) for p, n in zip(prompts, limits)]
    while running := [s for s in searches if not s.done]:
        sequences = [s.prompt + b.tokens for s in running for b in s.live]
        found = step(sequences, keep)
        if len(found) != len(sequences):
            raise ValueError(f"the engine gave {len(found)} next-token lists for {len(sequences)} sequences")
        at = 0
        for search in running:
            nexts = found[at:at + len(search.live)]
            at += len(search.live)
            _advance(search, nexts, beam, keep, lenpen, end_set, stop, piece)
    return [sorted(s.ended, key=lambda e: -e.score) for s in searches]


def _advance(search: _Search, nexts: Sequence[Sequence[tuple[int, float]]], beam: int, keep: int, lenpen: float,
             ends: set[int], stop: str | None, piece: Callable[[int], str] | None) -> None:
    """One step of one request: its candidates ranked, the finished kept, the next live beams chosen, and whether
    they can still improve on the finished (transformers' ``_beam_search`` step for one batch row)."""
    candidates = sorted(((b.logprob + lp, n, int(token), lp) for n, (b, top) in enumerate(zip(search.live, nexts))
                         for token, lp in top), key=lambda c: (-c[0], c[1], c[2]))[:keep]
    length = len(search.live[0].tokens) + 1  # the candidates' answer length
    live: list[Beam] = []
    ending = []
    for rank, (total, n, token, lp) in enumerate(candidates):
        parent = search.live[n]
        text = parent.text + piece(token) if stop is not None and piece is not None else ""
        ends_here = token in ends or length >= search.limit or (stop is not None and text.endswith(stop))
        if ends_here:
            if rank < beam:
                ending.append(Ended(parent.tokens + [token], parent.logprobs + [lp], total / length ** lenpen))
        elif len(live) < beam:
            live.append(Beam(parent.tokens + [token], parent.logprobs + [lp], total, text))
    if search.improvable and ending:
        search.ended = sorted(search.ended + ending, key=lambda e: -e.score)[:beam]
    search.live = live
    if search.improvable and len(search.ended) == beam:
        search.improvable = bool(live) and live[0].logprob / length ** lenpen > search.ended[-1].score

"""Draft verification: a greedy search given a draft of its output checks the draft in one teacher-forced pass and
searches only from where the model disagrees with it (self-speculative decoding, Zeng et al. 2025, arXiv
2509.21740; prompt lookup, Saxena 2023). Exact under greedy search: the output is the search's own.

A request may carry a draft (``Request.draft``: token ids of a guess at its hypothesis, without the end token):

1. **The pass.** One teacher-forced pass over the draft after the request's prompt (its prefix) gives the model's
   distribution at each draft position and after the draft. The search's own rules apply to it as to any search
   step (the backend's: a banned ``</s>`` at the first step, ``</s>`` alone at the length limit, ``<pad>`` never),
   and the greedy choice at each position is the distribution's argmax.
2. **Accepted.** The longest prefix of the draft whose every token is the greedy choice at its position is what the
   greedy search would have generated: it is accepted without search. The greedy choice after it (at the first
   disagreement, or after the whole draft) is the search's next token too.
3. **The rest.** Where that token ends the hypothesis (``</s>``), the hypothesis is decided. Otherwise the rest of
   the draft is realigned after it (:func:`realigned`: the model replaced a draft token, or skipped a few) and
   verified in the next round, one pass over it after the tokens decided so far, for every drafted request of the
   search at once. A round that accepts none of what is left of a draft ends its drafting; then, or once its
   draft is spent, the greedy search continues after the prompt and the decided tokens (the backend's search with
   them as part of its prefix: they are generated already, so its length limit and its first-step ban of
   ``</s>`` count them). The hypothesis is the decided tokens and the continuation; its log-probability is the
   passes' over the decided tokens plus the continuation's; its score the backend's length normalization of the
   whole.

A draft of garbage or an empty draft costs one pass over it and changes nothing: the first disagreement is at
its first token. Under beam search the longest-prefix rule is not the search's (a beam keeps other hypotheses),
so a searcher verifies only at beam 1 (:func:`verifies`); sampling never.

The searchers count what verification did (:meth:`docnmt.decode.requests.Counted.draft_counters`): the requests verified, the draft tokens, the
accepted ones and the tokens their searches decoded after them (the next token included), which the decode's
sidecar records (``drafts``) and Table 1 shows as the accepted share.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

from .requests import Hypothesis

def verifies(searcher) -> bool:
    """Whether ``searcher`` verifies its requests' drafts: it is on (``verify_drafts``), its beam is 1 and it does
    not sample."""
    return bool(getattr(searcher, "verify_drafts", False)) and searcher.beam == 1 and \
        getattr(searcher, "sampling", None) is None


def drafted(searcher, requests: Sequence, able: bool = True) -> bool:
    """Whether a search of ``requests`` verifies drafts: the searcher does (:func:`verifies`), its model allows it
    (``able``: the backend's own condition) and a request has a draft."""
    return able and verifies(searcher) and any(getattr(r, "draft", None) is not None for r in requests)


def accepted_length(choices: Sequence[int], draft: Sequence[int]) -> int:
    """The longest prefix of ``draft`` whose every token is the greedy choice at its position."""
    k = 0
    while k < len(draft) and k < len(choices) and choices[k] == draft[k]:
        k += 1
    return k


def realigned(proposal: Sequence[int], k: int, chosen: int) -> list[int]:
    """The rest of a draft after the model chose ``chosen`` where the draft had ``proposal[k]``: the draft after the
    next occurrence of ``chosen`` within a few tokens (the model skipped draft tokens), else after ``proposal[k]``
    (the model replaced it: a pronoun of another gender, a word of the other register)."""
    window = proposal[k + 1:k + 1 + REALIGN_WINDOW]
    if chosen in window:
        return list(proposal[k + 2 + window.index(chosen):])
    return list(proposal[k + 1:])


#: How far ahead in the draft the model's chosen token is looked for (:func:`realigned`).
REALIGN_WINDOW = 3


@dataclass
class Drafted:
    """A drafted request under verification: its number, the tokens decided so far (accepted and chosen), their
    log-probability, and what is left of its draft to verify (None: it is decided or continues by search)."""

    number: int
    decided: list[int] = field(default_factory=list)
    lprobs: list[float] = field(default_factory=list)
    proposal: list[int] | None = None
    ended: bool = False


def verified_search(searcher, requests: Sequence, search: Callable) -> list[list[Hypothesis]]:
    """Each request's hypotheses: ``search(requests)`` for those without a draft (or with a contrast); for the others
    (the module docstring) rounds of :meth:`greedy_pass`, each over what is left of each draft after the tokens
    decided so far, then :meth:`continue_search` for those still going once their draft is spent or a round accepted
    none of it. The searcher gives ``draft_limit(request)`` (the draft tokens it reads), ``greedy_pass(requests,
    decided, proposals)`` (per request: the greedy choices at each proposal position and after it, and their
    log-probabilities), ``ended(request, decided)`` (the length of ``decided``, its end token included, where it
    ends the hypothesis or reaches the token limit, else None),
    ``continue_search(requests, decided)`` (per request: the greedy continuation's tokens and log-probability) and
    ``verified(request, tokens, logprob, ended)`` (the hypothesis)."""
    drafted = [n for n, r in enumerate(requests) if getattr(r, "draft", None) is not None and
               getattr(r, "contrast", None) is None]
    results: list[list[Hypothesis] | None] = [None] * len(requests)
    plain = [n for n in range(len(requests)) if n not in set(drafted)]
    if plain:
        for n, found in zip(plain, search([requests[n] for n in plain])):
            results[n] = found
    states = []
    for n in drafted:
        draft = list(requests[n].draft)[:searcher.draft_limit(requests[n])]
        searcher.verified_requests += 1
        searcher.draft_tokens += len(draft)
        states.append(Drafted(n, proposal=draft))
    first = True
    while True:
        going = [s for s in states if not s.ended and s.proposal is not None]
        if not going:
            break
        passes = searcher.greedy_pass([requests[s.number] for s in going], [s.decided for s in going],
                                      [s.proposal for s in going])
        for state, (choices, lprobs) in zip(going, passes):
            k = accepted_length(choices, state.proposal)
            searcher.accepted_tokens += k
            searcher.decoded_tokens += 1
            state.decided += state.proposal[:k] + [int(choices[k])]
            state.lprobs += [float(x) for x in lprobs[:k + 1]]
            length = searcher.ended(requests[state.number], state.decided)
            if length is not None:
                state.decided, state.lprobs, state.ended = state.decided[:length], state.lprobs[:length], True
            elif k == 0 and not first:  # the draft no longer helps: the greedy search goes on alone
                state.proposal = None
            else:
                state.proposal = realigned(state.proposal, k, int(choices[k])) or None
        first = False
    going = [s for s in states if not s.ended]
    if going:
        found = searcher.continue_search([requests[s.number] for s in going], [s.decided for s in going])
        for state, (tokens, logprob, ended) in zip(going, found):
            searcher.decoded_tokens += len(tokens)
            state.decided, state.ended = state.decided + list(tokens), ended
            state.lprobs.append(logprob)
    for state in states:
        results[state.number] = [searcher.verified(requests[state.number], state.decided, sum(state.lprobs),
                                                   state.ended)]
    return results  # type: ignore[return-value]

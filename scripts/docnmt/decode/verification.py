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
3. **The rest.** Where that token ends the hypothesis (``</s>``), the hypothesis is the accepted tokens; otherwise
   the greedy search continues after the prompt, the accepted tokens and that token (the backend's search with
   them as part of its prefix: ``done`` tokens of the hypothesis are generated already, so its length limit and
   its first-step ban of ``</s>`` count them). The hypothesis is the three parts joined; its log-probability is
   the pass's over the accepted tokens and the next one, plus the continuation's; its score the backend's length
   normalization of the whole.

A draft of garbage or an empty draft costs one pass over it and changes nothing: the first disagreement is at
its first token. Under beam search the longest-prefix rule is not the search's (a beam keeps other hypotheses),
so a searcher verifies only at beam 1 (:func:`verifies`); sampling never.

The searchers count what verification did (:meth:`docnmt.decode.requests.Counted.draft_counters`): the requests verified, the draft tokens, the
accepted ones and the tokens their searches decoded after them (the next token included), which the decode's
sidecar records (``drafts``) and Table 1 shows as the accepted share.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from .requests import Hypothesis

def verifies(searcher) -> bool:
    """Whether ``searcher`` verifies its requests' drafts: it is on (``verify_drafts``), its beam is 1 and it does
    not sample."""
    return bool(getattr(searcher, "verify_drafts", False)) and searcher.beam == 1 and \
        getattr(searcher, "sampling", None) is None


def accepted_length(choices: Sequence[int], draft: Sequence[int]) -> int:
    """The longest prefix of ``draft`` whose every token is the greedy choice at its position."""
    k = 0
    while k < len(draft) and k < len(choices) and choices[k] == draft[k]:
        k += 1
    return k


@dataclass
class Continuation:
    """A drafted request whose greedy search goes on: its number, the tokens decided (accepted and the next one),
    their log-probability."""

    number: int
    decided: list[int]
    logprob: float


def verified_search(searcher, requests: Sequence, search: Callable, greedy_pass: Callable,
                    continue_search: Callable, lenpen: float = 1.0) -> list[list[Hypothesis]]:
    """Each request's hypotheses (one, the greedy one, for a drafted request): ``search(requests)`` for those without
    a draft or a contrast; for the others ``greedy_pass(requests, drafts)`` (per request: the greedy choices at each
    draft position and after it, and their log-probabilities) and ``continue_search(requests, decided)`` (per
    request: the greedy hypotheses after its prompt and the ``decided`` tokens). The drafts are cut to the tokens
    the searcher could generate (``searcher.draft_limit(request)``)."""
    drafted = [n for n, r in enumerate(requests) if getattr(r, "draft", None) is not None and
               getattr(r, "contrast", None) is None]
    results: list[list[Hypothesis] | None] = [None] * len(requests)
    plain = [n for n in range(len(requests)) if n not in set(drafted)]
    if plain:
        for n, found in zip(plain, search([requests[n] for n in plain])):
            results[n] = found
    if not drafted:
        return results  # type: ignore[return-value]
    asked = [requests[n] for n in drafted]
    drafts = [list(r.draft)[:searcher.draft_limit(r)] for r in asked]
    going: list[Continuation] = []
    for n, request, draft, (choices, lprobs) in zip(drafted, asked, drafts, greedy_pass(asked, drafts)):
        k = accepted_length(choices, draft)
        searcher.verified_requests += 1
        searcher.draft_tokens += len(draft)
        searcher.accepted_tokens += k
        searcher.decoded_tokens += 1
        decided, logprob = draft[:k] + [int(choices[k])], float(sum(lprobs[:k + 1]))
        if decided[-1] == searcher.eos:  # the greedy search ends here
            tokens = decided[:-1]
            results[n] = [Hypothesis(tokens, logprob / (len(tokens) + 1) ** lenpen, logprob)]
        else:
            going.append(Continuation(n, decided, logprob))
    if going:
        found = continue_search([requests[c.number] for c in going], [c.decided for c in going])
        for c, nbest in zip(going, found):
            best = nbest[0]
            tokens = c.decided + list(best.tokens)
            logprob = c.logprob + best.logprob
            searcher.decoded_tokens += len(best.tokens) + 1
            results[c.number] = [Hypothesis(tokens, logprob / (len(tokens) + 1) ** lenpen, logprob, best.complete)]
    return results  # type: ignore[return-value]

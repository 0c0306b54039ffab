"""Epsilon sampling (Freitag et al., "Epsilon Sampling Rocks", Findings of EMNLP 2023): MBR's sampled candidates.

At every step the tokens whose probability is below ``epsilon`` are removed (the most probable one always
stays), and the next token is drawn from what is left, renormalized. Each request gets ``count`` independent
samples after its forced target context, which is teacher-forced as in the search and never sampled.

Reproducibility: every request is sampled alone, from torch's generator seeded with a number derived from the
seed and the request's token ids (:func:`request_seed`). A request's samples therefore depend only on the seed,
the model and the request, not on the batch or on the order of the requests: parallel doc-trans reaches the
same fixed point as sequential doc-trans, and a second run with the same seed draws the same candidates.

Each backend's searcher draws the samples (``sample(request, count, epsilon)``): fairseq's SequenceGenerator
with the search strategy below (fairseq's own ``Sampling`` with the epsilon cut), and transformers' ``generate``
with ``do_sample=True`` and ``epsilon_cutoff``. A sample's score is its log-probability under the model,
normalized like the search's.
"""

from __future__ import annotations

import hashlib
from typing import Sequence


def request_seed(seed: int, request) -> int:
    """The seed of one request's samples: from the run's seed and the request's source and prefix ids."""
    key = f"{seed}|{','.join(map(str, request.source))}|{','.join(map(str, request.prefix))}"
    return int(hashlib.sha256(key.encode()).hexdigest()[:15], 16)


def fairseq_epsilon_sampling(dictionary, epsilon: float):
    """fairseq's ``Sampling`` search with the epsilon cut applied to each step's log-probabilities."""
    from fairseq.search import Sampling

    class EpsilonSampling(Sampling):
        def step(self, step, lprobs, scores, prev_output_tokens=None, original_batch_idxs=None):
            if epsilon > 0:
                keep = lprobs.exp() >= epsilon
                keep |= lprobs == lprobs.max(dim=-1, keepdim=True).values  # the most probable token stays
                lprobs = lprobs.masked_fill(~keep, float("-inf"))
            return super().step(step, lprobs, scores, prev_output_tokens, original_batch_idxs)

    return EpsilonSampling(dictionary)


class Sampler:
    """A searcher whose :meth:`search` returns ``count`` epsilon samples per request instead of the beam's n-best.

    It wraps a backend's searcher: the model, the cost counters and forced scoring are that searcher's.
    """

    def __init__(self, searcher, count: int, epsilon: float, seed: int):
        if count < 1:
            raise ValueError(f"the sample count must be >= 1, got {count}")
        if not 0.0 <= epsilon < 1.0:
            raise ValueError(f"epsilon must be in [0, 1), got {epsilon}")
        self.searcher, self.count, self.epsilon, self.seed = searcher, count, epsilon, seed

    def __getattr__(self, name):  # model, counters, score_forced, ...: the wrapped searcher's
        return getattr(self.searcher, name)

    def search(self, requests: Sequence) -> list[list]:
        import torch

        out = []
        for request in requests:
            torch.manual_seed(request_seed(self.seed, request))
            out.append(self.searcher.sample(request, self.count, self.epsilon))
        return out

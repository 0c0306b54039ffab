"""Epsilon sampling (Freitag et al., "Epsilon Sampling Rocks", Findings of EMNLP 2023): MBR's sampled candidates.

At every step the tokens whose probability is below ``epsilon`` are removed (the most probable one always
stays), and the next token is drawn from what is left, renormalized. Each request gets ``count`` independent
samples after its forced target context, which is teacher-forced as in the search and never sampled.

Reproducibility: every request is sampled alone, from a torch generator of its own (on the model's device) seeded
with a number derived from the seed and the request's token ids (:func:`request_seed`). A request's samples
therefore depend only on the seed, the model, the device and the request, not on the batch, on the order of the
requests, or on anything else in the process that draws from torch's global generator (another thread training a
model, say): parallel doc-trans reaches the same fixed point as sequential doc-trans, and a second run with the
same seed draws the same candidates.

Each backend's searcher draws the samples (``sample(request, count, epsilon, generator)``): fairseq's
SequenceGenerator with the search strategy below, and transformers' ``generate`` (greedy, with the count of
copies of the request) with :class:`EpsilonDraw` as its last logits processor. Both cut as
transformers' ``epsilon_cutoff`` does and draw like fairseq's ``Sampling`` search, but from the request's
generator. A sample's score is its log-probability under the model, normalized like the search's.
"""

from __future__ import annotations

import hashlib
from typing import Sequence


def request_seed(seed: int, request) -> int:
    """The seed of one request's samples: from the run's seed and the request's source and prefix ids."""
    key = f"{seed}|{','.join(map(str, request.source))}|{','.join(map(str, request.prefix))}"
    return int(hashlib.sha256(key.encode()).hexdigest()[:15], 16)


def epsilon_probabilities(logits, epsilon: float):
    """The distribution a sample is drawn from, over the last dimension of ``logits`` (log-probabilities or raw
    scores): the model's, with every token below ``epsilon`` removed (the most probable one always stays),
    renormalized."""
    import torch

    probs = torch.softmax(logits.float(), dim=-1)
    if epsilon > 0:
        keep = (probs >= epsilon) | (probs == probs.max(dim=-1, keepdim=True).values)
        probs = probs.masked_fill(~keep, 0.0)
        probs = probs / probs.sum(dim=-1, keepdim=True)
    return probs


def fairseq_epsilon_sampling(dictionary, epsilon: float, generator):
    """A fairseq search strategy: at each step, each of the ``beam`` rows draws its next token from
    :func:`epsilon_probabilities` with ``generator`` (at the first step, where every row has the same prefix, the
    ``beam`` draws come from the first row). A row's score is its sum of the model's log-probabilities, as in
    fairseq's ``Sampling``."""
    import torch
    from fairseq.search import Search

    class EpsilonSampling(Search):
        def step(self, step, lprobs, scores, prev_output_tokens=None, original_batch_idxs=None):
            bsz, beam, vocab = lprobs.size()
            if step == 0:
                lprobs = lprobs[:, :1, :].expand(bsz, beam, vocab)
                draws = torch.multinomial(epsilon_probabilities(lprobs[:, 0, :], epsilon), beam, replacement=True,
                                          generator=generator)
            else:
                draws = torch.multinomial(epsilon_probabilities(lprobs.reshape(bsz * beam, vocab), epsilon), 1,
                                          replacement=True, generator=generator)
            indices = draws.view(bsz, beam)
            token_scores = torch.gather(lprobs, 2, indices.unsqueeze(-1)).view(bsz, beam)
            if step == 0:
                return token_scores, indices, indices.new_zeros(bsz, beam)
            beams = torch.arange(beam, device=indices.device).repeat(bsz, 1)
            return token_scores + torch.gather(scores[:, :, step - 1], 1, beams), indices, beams

    return EpsilonSampling(dictionary)


class EpsilonDraw:
    """A transformers logits processor, the last of greedy ``generate``: it draws each row's next token from
    :func:`epsilon_probabilities` of the scores the earlier processors left, with ``generator``, and leaves that
    token alone possible, so that greedy search takes it."""

    def __init__(self, epsilon: float, generator):
        self.epsilon, self.generator = epsilon, generator

    def __call__(self, input_ids, scores):
        import torch

        drawn = torch.multinomial(epsilon_probabilities(scores, self.epsilon), 1, generator=self.generator)
        return torch.full_like(scores, float("-inf")).scatter_(1, drawn, 0.0)


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
        return [self.searcher.sample(request, self.count, self.epsilon, request_seed(self.seed, request))
                for request in requests]


def seeded_generator(device, seed: int):
    """A torch generator on ``device`` seeded with ``seed``: what a torch backend's ``sample`` draws with."""
    import torch

    generator = torch.Generator(device=device)
    generator.manual_seed(seed)
    return generator

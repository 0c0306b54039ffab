"""Epsilon sampling on vLLM (:mod:`docnmt.decode.sampling`): a logits processor of the engine that leaves, in each
request that asks for it (``SamplingParams.extra_args["epsilon"]``), only the tokens whose probability is at least
epsilon (the most probable one always stays), as :func:`docnmt.decode.sampling.epsilon_probabilities` does; the
engine then draws from them with the request's seed. Its log-probs stay the model's (vLLM's raw log-probs)."""

from __future__ import annotations

from vllm.v1.sample.logits_processor import AdapterLogitsProcessor

#: the key of ``SamplingParams.extra_args`` that asks for epsilon sampling
KEY = "epsilon"


def truncate(logits, epsilon: float):
    """``logits`` (one row) with every token below ``epsilon`` probability set to -inf, the most probable kept."""
    import torch

    probs = torch.softmax(logits.float(), dim=-1)
    keep = (probs >= epsilon) | (probs == probs.max())
    return logits.masked_fill(~keep, float("-inf"))


class EpsilonLogitsProcessor(AdapterLogitsProcessor):
    """The engine's epsilon truncation, for the requests whose ``extra_args`` name an epsilon > 0."""

    def is_argmax_invariant(self) -> bool:
        return True  # the most probable token always stays

    def new_req_logits_processor(self, params):
        epsilon = float((params.extra_args or {}).get(KEY) or 0.0)
        if epsilon <= 0:
            return None
        return lambda output_ids, logits: truncate(logits, epsilon)

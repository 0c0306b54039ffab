"""Table 1's columns of a served model (backend openai, :mod:`docnmt.decode.backends.openai`): the tokens its server
reported in each answer's ``usage`` and the requests, per strategy, with a first pass's where a strategy starts from
one, and their price where the task's config gives prices per million tokens (``models.endpoint.prices``)."""

from __future__ import annotations

#: A served model's counters (backend openai: what each response's ``usage`` reported, and the requests) in Table 1.
SERVED_COUNTERS = ("prompt_tokens", "cached_tokens", "completion_tokens", "api_requests")
SERVED_LABELS = {"prompt_tokens": "prompt tokens", "cached_tokens": "cached prompt tokens",
                 "completion_tokens": "completion tokens", "api_requests": "API requests"}
SERVED_NOTE = ("Served models (backend openai): prompt, cached prompt and completion tokens are those the server "
               "reported in each answer's usage (cached: read from its prefix cache, where it reports them: vLLM with "
               "--enable-prompt-tokens-details, hosted APIs); API requests are those answered (the sidecars count "
               "retries apart). Decoder positions are the prompt tokens not cached and the completion tokens, forward "
               "calls the requests. The search is greedy: the API has no beam search. The counts of 2-pass and of "
               "doc-trans in its parallel mode include their sentence-level first pass. A hosted model may change behind its name: each sidecar records the model and the "
               "fingerprints the server reported, and the time.")


#: A served task's prices per million tokens (models.endpoint.prices), in the cost note's order.
PRICES = ("input", "cached_input", "output")


def price_note(task: str, prices: dict) -> str:
    """The note that says at what prices a task's cost column was computed."""
    given = ", ".join(f"{name} {prices[name]}" for name in PRICES if name in prices)
    return f"Cost: at {given} per million tokens (task_settings.{task}.models.endpoint.prices)."


def served_counts(entry: dict) -> dict[str, int]:
    """A served decode's counters (:data:`SERVED_COUNTERS`), with its first pass's where it has one (2-pass)."""
    first = entry.get("first_pass") or {}
    return {c: int(entry[c]) + int(first.get(c) or 0) for c in SERVED_COUNTERS if c in entry}


def price_of(counts: dict[str, int], prices: dict) -> float:
    """What the tokens cost at ``prices`` per million (input, cached_input (default input), output)."""
    cached = counts.get("cached_tokens", 0)
    return ((counts.get("prompt_tokens", 0) - cached) * prices["input"]
            + cached * prices.get("cached_input", prices["input"])
            + counts.get("completion_tokens", 0) * prices["output"]) / 1e6

"""The load options of the backends (:attr:`docnmt.interface.Backend.load_options`): what each one sets and its type,
and how a CLI's ``--engine-args KEY=VALUE,...`` (lm-evaluation-harness's ``--model_args`` form) and the config's
``models.engine_args`` (vLLM's engine) or ``models.endpoint`` (a served model's) give them."""

from __future__ import annotations

#: Every backend's own load options (:attr:`docnmt.interface.Backend.load_options`), with their types and what they set: config
#: ``models.engine_args`` or ``models.endpoint``, CLI ``--engine-args KEY=VALUE,...``.
LOAD_OPTIONS: dict[str, tuple[type, str]] = {
    "tensor_parallel_size": (int, "the GPUs the model is split over (the decode rule asks for as many)"),
    "gpu_memory_utilization": (float, "the share of the GPU's memory the engine reserves (on the CPU: of the RAM; "
                                      "default 0.15 there, vLLM's 0.9 on a GPU)"),
    "max_model_len": (int, "the context window the engine serves, at most the model's"),
    "seed": (int, "the engine's random seed; a served model's sampling seed (sent with each request)"),
    "base_url": (str, "the OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1 (CLI --base-url)"),
    "api_key_env": (str, "the environment variable that holds the endpoint's key (CLI --api-key-env; default "
                         "OPENAI_API_KEY); the key itself is never written anywhere"),
    "max_concurrency": (int, "the most requests in flight at once (default 8)"),
    "timeout": (float, "seconds to wait for one answer before it counts as failed (default 600)"),
    "max_retries": (int, "retries of a request after a rate limit, a server error or a timeout (default 6)"),
    "retry_backoff": (float, "seconds before the first retry, doubled for each next one (default 1)"),
    "temperature": (float, "the served model's sampling temperature (default 0: greedy)"),
    "prompt_logprobs": (bool, "the endpoint gives prompt log-probs (vLLM's prompt_logprobs and /tokenize): "
                              "forced scoring, perplexity and CXMI run (default false)"),
}

#: The load options that say how requests reach a served model, not what comes back: a decode's resume journal holds
#: across them (a preempted job whose server restarted at another address resumes).
TRANSPORT_OPTIONS = ("base_url", "api_key_env", "max_concurrency", "timeout", "max_retries", "retry_backoff")

#: How :func:`parse_load_options` reads a boolean option's value.
BOOLEANS = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}


def parse_load_options(text: str | None, where: str = "--engine-args") -> dict:
    """``KEY=VALUE,...`` as typed load options (:data:`LOAD_OPTIONS`); a ValueError naming ``where`` and the first
    key that is unknown or a value of the wrong type."""
    options: dict = {}
    for item in filter(None, (part.strip() for part in (text or "").split(","))):
        key, equals, value = item.partition("=")
        if not equals or key.strip() not in LOAD_OPTIONS:
            raise ValueError(f"{where}: expected KEY=VALUE with KEY one of {', '.join(LOAD_OPTIONS)}, found {item!r}")
        kind = LOAD_OPTIONS[key.strip()][0]
        try:
            if kind is bool:
                options[key.strip()] = BOOLEANS[value.strip().lower()]
            else:
                options[key.strip()] = kind(value.strip())
        except (ValueError, KeyError):
            expects = {int: "an integer", float: "a number", bool: "true or false"}[kind]
            raise ValueError(f"{where}: {key.strip()} expects {expects}, found {value.strip()!r}") from None
    return options


#: The keys of a served model's ``models.endpoint`` that are not load options: the tables' (prices per million tokens).
ENDPOINT_TABLE_KEYS = ("prices",)


def models_load_options(models: dict) -> dict:
    """The load options a task's ``models:`` block gives its models: ``endpoint`` (a served model's) less its prices,
    or ``engine_args`` (vLLM's engine), or none."""
    if "endpoint" in models:
        return {key: value for key, value in models["endpoint"].items() if key not in ENDPOINT_TABLE_KEYS}
    return dict(models.get("engine_args") or {})

"""An OpenAI-compatible endpoint as the backend ``openai`` reaches it: its settings (:class:`Settings`, the load
options its package declares, :class:`docnmt.decode.backends.openai.Options`), the key read from the environment only, and :class:`Endpoint`,
which sends requests through the ``openai`` client, concurrently up to ``max_concurrency``, and retries a rate limit
(429), a server error (5xx), a timeout or a dropped connection with exponential backoff up to ``max_retries`` times;
then, or at once for any other error (a wrong key, an unknown model, a prompt over the context window), it raises an
:class:`EndpointError` of one line that names the endpoint and the last error.

The key is read from the environment variable ``api_key_env`` when the endpoint is made and kept in the client only:
nothing here writes it, and :meth:`Endpoint.record` (what the sidecar holds) names the variable, never its value.
"""

from __future__ import annotations

import os
import random
import threading
import time
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from ...requests import RequestError
from . import Options

#: what a client sends as its key where the variable is unset: a local server started without a key takes any
NO_KEY = "EMPTY"
#: HTTP statuses that are retried (a rate limit, server errors); timeouts and dropped connections are too
RETRIED = frozenset({408, 409, 429}) | frozenset(range(500, 600))
#: the longest wait between two tries, seconds
MAX_BACKOFF = 60.0


@dataclass(frozen=True)
class Settings(Options):
    """The endpoint's settings: the backend's load options (:class:`docnmt.decode.backends.openai.Options`; config
    ``models.endpoint``, CLI ``--base-url``, ``--api-key-env``, ``--engine-args``), their values checked."""

    base_url: str = ""

    @classmethod
    def of(cls, base_url: str | None, **given) -> "Settings":
        """Settings from load options (None: the default); a ValueError where ``base_url`` is missing or a value
        is out of range."""
        if not base_url:
            raise ValueError("a served model needs its endpoint: --base-url URL (config models.endpoint.base_url)")
        settings = cls(base_url=str(base_url).rstrip("/"), **{k: v for k, v in given.items() if v is not None})
        for name in ("max_concurrency",):
            if getattr(settings, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(settings, name)}")
        for name in ("timeout", "retry_backoff", "max_retries", "temperature"):
            if getattr(settings, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(settings, name)}")
        return settings

    @property
    def root(self) -> str:
        """The server's root (``base_url`` less its ``/v1``), where vLLM serves ``/tokenize``."""
        return self.base_url[:-3] if self.base_url.endswith("/v1") else self.base_url


def prompt_logprobs_of(response) -> list[float]:
    """The log-prob of each prompt token in a response of vLLM's server (its ``prompt_logprobs``, beside the choices
    in a chat completion, in the first choice in a completion; the first token has none, 0 here); empty where there
    are none."""
    found = getattr(response, "prompt_logprobs", None) or (response.model_extra or {}).get("prompt_logprobs")
    if not found and response.choices:
        choice = response.choices[0]
        found = getattr(choice, "prompt_logprobs", None) or (choice.model_extra or {}).get("prompt_logprobs")
    return [0.0 if step is None else float(next(iter(step.values()))["logprob"]) for step in found or []]


class EndpointError(RequestError):
    """A request the endpoint did not answer: one line naming the endpoint, the request and the last error.
    ``transient``: the last error was of a kind that is retried (:func:`retried`: the server may answer later), not
    a refusal."""

    transient = False


def describe(err: BaseException) -> str:
    """An error of the client in one line: its HTTP status and the server's message, or what went wrong."""
    import openai

    if isinstance(err, openai.APIStatusError):
        message = getattr(err, "message", None) or str(err)
        body = err.body if isinstance(err.body, dict) else {"error": err.body}
        inner = body.get("error", body)
        if isinstance(inner, dict):
            message = str(inner.get("message") or message)
        elif isinstance(inner, str) and inner:
            message = inner
        return f"{err.status_code} {message}".replace("\n", " ")
    if isinstance(err, openai.APITimeoutError):
        return "no answer within the timeout"
    if isinstance(err, openai.APIConnectionError):
        cause = err.__cause__ or err.__context__
        return f"unreachable ({type(cause).__name__ if cause else 'connection error'}: {cause or err})".replace("\n", " ")
    return f"{type(err).__name__}: {err}".replace("\n", " ")


def retried(err: BaseException) -> bool:
    """Whether an error is worth another try: a rate limit, a server error, a timeout, a dropped connection."""
    import openai

    if isinstance(err, openai.APIStatusError):
        return err.status_code in RETRIED
    return isinstance(err, (openai.APITimeoutError, openai.APIConnectionError))


def retry_after(err: BaseException) -> float | None:
    """The seconds a 429's or 503's ``Retry-After`` header asks to wait, where it gives them."""
    response = getattr(err, "response", None)
    value = None if response is None else response.headers.get("retry-after")
    try:
        return None if value is None else float(value)
    except ValueError:
        return None


class Endpoint:
    """The client of one endpoint and model (``model``: its name on the server), with the counters of what it sent
    since it was made: ``requests`` (answered), ``retries``, and the tokens of ``usage`` (``prompt_tokens``,
    ``cached_tokens``, ``completion_tokens``)."""

    def __init__(self, settings: Settings, model: str):
        import openai

        self.settings = settings
        self.model = model
        self.key_set = bool(os.environ.get(settings.api_key_env))
        # the client retries nothing itself: each try is counted here, and a test proxy sees each
        self.client = openai.OpenAI(base_url=settings.base_url, api_key=os.environ.get(settings.api_key_env) or NO_KEY,
                                    timeout=settings.timeout, max_retries=0)
        self.lock = threading.Lock()
        self.seen: dict[str, Any] = {}
        self.requests = self.retries = 0
        self.prompt_tokens = self.cached_tokens = self.completion_tokens = 0

    def counts(self) -> dict[str, int]:
        """The counters so far (a searcher reports what they grew by since it began)."""
        with self.lock:
            return {"requests": self.requests, "retries": self.retries, "prompt_tokens": self.prompt_tokens,
                    "cached_tokens": self.cached_tokens, "completion_tokens": self.completion_tokens}

    @property
    def name(self) -> str:
        """How an error names the endpoint."""
        return f"{self.settings.base_url} (model {self.model})"

    def key_hint(self) -> str:
        """Why a key may have been refused, in words (names the variable, never its value)."""
        if self.key_set:
            return f"the key in ${self.settings.api_key_env} was refused"
        return f"${self.settings.api_key_env} is not set: export it with the endpoint's key"

    # ---- one call, retried ---------------------------------------------------------
    def call(self, send: Callable[[], Any], line: int | None = None, retries: int | None = None) -> Any:
        """``send()`` (one request of the client), tried again after a retried error (:func:`retried`) up to
        ``max_retries`` times (or ``retries``), waiting ``retry_backoff`` seconds, doubled each time (or what
        Retry-After asks); an :class:`EndpointError` naming the request's source ``line`` once it gives up or at
        another error."""
        import openai

        limit = self.settings.max_retries if retries is None else retries
        tries = 0
        while True:
            try:
                return send()
            except openai.OpenAIError as err:
                if not retried(err) or tries >= limit:
                    raise self.error(err, tries, line) from None
                wait_s = retry_after(err)
                if wait_s is None:
                    wait_s = self.settings.retry_backoff * 2 ** tries * (1 + 0.1 * random.random())
                tries += 1
                with self.lock:
                    self.retries += 1
                time.sleep(min(wait_s, MAX_BACKOFF))

    def error(self, err: BaseException, tries: int, line: int | None) -> EndpointError:
        import openai

        what = describe(err)
        if isinstance(err, openai.AuthenticationError):
            what += f" ({self.key_hint()})"
        given_up = f"gave up after {tries} retries: " if tries else ""
        error = EndpointError(self.name, f"{given_up}{what}", line)
        error.transient = retried(err)
        return error

    def count(self, usage) -> None:
        """Adds a response's ``usage`` to the counters."""
        if usage is None:
            return
        details = getattr(usage, "prompt_tokens_details", None)
        with self.lock:
            self.requests += 1
            self.prompt_tokens += int(usage.prompt_tokens or 0)
            self.completion_tokens += int(usage.completion_tokens or 0)
            self.cached_tokens += int(getattr(details, "cached_tokens", None) or 0)

    def remember(self, response) -> None:
        """Keeps what the server says of itself: the model it reports and its fingerprint (the sidecar's)."""
        with self.lock:
            self.seen.setdefault("reported_model", getattr(response, "model", None))
            fingerprint = getattr(response, "system_fingerprint", None)
            if fingerprint:
                self.seen.setdefault("system_fingerprints", [])
                if fingerprint not in self.seen["system_fingerprints"]:
                    self.seen["system_fingerprints"].append(fingerprint)

    # ---- the API's calls -------------------------------------------------------------
    def chat(self, messages: list[dict], max_tokens: int, line: int | None = None, **extra) -> tuple[str, str]:
        """The answer to a conversation: (its text, its finish reason), greedy at temperature 0."""
        settings = self.settings

        def send():
            return self.client.chat.completions.create(model=self.model, messages=messages, max_tokens=max_tokens,
                                                       temperature=settings.temperature, seed=settings.seed,
                                                       **({"extra_body": extra} if extra else {}))

        response = self.call(send, line)
        self.count(response.usage)
        self.remember(response)
        choice = response.choices[0]
        return choice.message.content or "", choice.finish_reason or ""

    def chat_logprobs(self, messages: list[dict], line: int | None = None) -> list[float]:
        """The log-prob of each token of a conversation rendered whole (vLLM's ``prompt_logprobs``; the first token
        has none, 0 here): one call that generates one token."""

        def send():
            return self.client.chat.completions.create(
                model=self.model, messages=messages, max_tokens=1, temperature=0.0,
                extra_body={"prompt_logprobs": 0, "add_generation_prompt": False, "continue_final_message": False})

        return self.prompt_logprobs(self.call(send, line), line)

    def prompt_logprobs(self, response, line: int | None) -> list[float]:
        """A response's prompt log-probs (:func:`prompt_logprobs_of`), its usage counted."""
        self.count(response.usage)
        found = prompt_logprobs_of(response)
        if not found:
            raise EndpointError(self.name, "the endpoint gave no prompt log-probs (prompt_logprobs: true needs vLLM's "
                                           "OpenAI-compatible server)", line)
        return found

    def completion_logprobs(self, ids: Sequence[int], line: int | None = None) -> list[float]:
        """The log-prob of each token of a prompt given as token ids (``/v1/completions``, vLLM's
        ``prompt_logprobs``; the first token has none, 0 here): one call that generates one token."""

        def send():
            return self.client.completions.create(model=self.model, prompt=list(ids), max_tokens=1, temperature=0.0,
                                                  extra_body={"prompt_logprobs": 0})

        return self.prompt_logprobs(self.call(send, line), line)

    def tokens(self, line: int | None = None, retries: int | None = None, **body: Any) -> list[int]:
        """The token ids of a conversation (``messages=``, ``add_generation_prompt=``, ``continue_final_message=``)
        or of a text (``prompt=``, ``add_special_tokens=``) as the server's tokenizer gives them (vLLM's
        ``/tokenize``, at the server's root)."""
        answer = self.call(lambda: self.client.post(f"{self.settings.root}/tokenize",
                                                    body={"model": self.model, **body}, cast_to=object), line, retries)
        return [int(i) for i in answer["tokens"]]

    def token_count(self, messages: list[dict], generation_prompt: bool, continue_final: bool = False,
                    line: int | None = None, retries: int | None = None) -> int:
        """The tokens of a conversation as the server renders it (:meth:`tokens`)."""
        return len(self.tokens(line, retries, messages=messages, add_generation_prompt=generation_prompt,
                               continue_final_message=continue_final))

    def models(self, retries: int | None = None) -> list[dict]:
        """The models the server lists (``/v1/models``), each as the server describes it (``retries``: of a
        retried error, default ``max_retries``)."""
        listed = self.call(lambda: self.client.models.list(), retries=retries)
        return [dict(item.model_dump()) for item in listed.data]

    # ---- many at once -------------------------------------------------------------------
    def map(self, work: Callable[[Any], Any], items: Sequence[Any]) -> list[Any]:
        """``work(item)`` for every item, at most ``max_concurrency`` at once (:func:`concurrently`)."""
        return concurrently(work, items, self.settings.max_concurrency)

    def record(self) -> dict:
        """What the sidecar keeps of the endpoint (never the key): its URL, the model's name there and what the
        server reported, the sampling settings and the time."""
        settings = self.settings
        return {"base_url": settings.base_url, "model": self.model, "api_key_env": settings.api_key_env,
                "reported_model": self.seen.get("reported_model"),
                "system_fingerprints": list(self.seen.get("system_fingerprints", [])),
                "temperature": settings.temperature, "seed": settings.seed, "max_concurrency": settings.max_concurrency,
                "max_retries": settings.max_retries, "timeout": settings.timeout,
                "prompt_logprobs": settings.prompt_logprobs,
                "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def concurrently(work: Callable[[Any], Any], items: Sequence[Any], limit: int) -> list[Any]:
    """``work(item)`` for every item, at most ``limit`` at once, the results in order; the first error stops the rest
    (those not yet sent are not sent) and is raised, with the results of the items that were answered before it as
    its ``answered`` (item index -> result: requests paid for, which a resume journal keeps,
    :class:`docnmt.decode.journal.JournaledSearcher`)."""
    if len(items) <= 1 or limit == 1:
        answered: dict[int, Any] = {}
        for index, item in enumerate(items):
            try:
                answered[index] = work(item)
            except Exception as err:
                err.answered = answered  # type: ignore[attr-defined]
                raise
        return [answered[index] for index in range(len(items))]
    with ThreadPoolExecutor(max_workers=min(limit, len(items)), thread_name_prefix="docnmt-openai") as pool:
        futures = [pool.submit(work, item) for item in items]
        _, pending = wait(futures, return_when=FIRST_EXCEPTION)
        for future in pending:  # an error came first: those not yet sent are not sent
            future.cancel()
    # the pool has ended: the requests in flight at the error have come back too
    failed = next((f for f in futures if not f.cancelled() and f.exception() is not None), None)
    if failed is not None:
        error = failed.exception()
        error.answered = {index: future.result() for index, future in enumerate(futures)  # type: ignore
                          if not future.cancelled() and future.exception() is None}
        raise error  # type: ignore[misc]
    return [future.result() for future in futures]

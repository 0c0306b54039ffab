"""The backend ``openai``: a model served behind an OpenAI-compatible endpoint (vllm serve, SGLang, llama.cpp's
server, TGI, a hosted API), prompted with the causal-LM backend's conversations (:mod:`docnmt.decode.prompting`: the
same template, the same turns), sent as chat messages with the template's system message.

The model is a name on the server: there is no local tokenizer. The strategies work on ids, so a served model's ids
are a text's UTF-8 bytes (0-255), with :attr:`ServedModel.sep` (256) between a window's sentences and ``eos`` (257)
ending a target: reversible, the same in every process (a resumed decode's journal reads them back), and never fewer
than the tokens of a byte-level tokenizer. What fits the context window is estimated from them
(:meth:`ServedModel.fits`: the messages' bytes and 8 tokens a message, an upper bound for byte-level BPE
tokenizers and their chat templates' special tokens), against the window the server reports (vLLM's
``max_model_len``; unknown: no limit here, and the server's refusal of a too long prompt is the error). Where the
estimate does not leave room and the server counts tokens (vLLM's ``/tokenize``), its count decides instead.

:class:`ServedSearcher` sends a search call's requests concurrently (:meth:`.endpoint.Endpoint.map`): every sentence
of a one-call strategy at once; in doc-trans, sentence i of every document together, round by round. The API has no
beam search: the searcher is greedy (beam 1) at the endpoint's temperature (default 0). Forced scoring (perplexity,
CXMI) needs prompt log-probs (``prompt_logprobs: true``, vLLM's server): each target's answer is scored as the whole
conversation's prompt log-probs, its tokens told apart with vLLM's ``/tokenize``.

Cost counters: the tokens ``usage`` reports (``prompt_tokens``, ``cached_tokens``, ``completion_tokens``) and the
requests answered and retried; ``decoder_positions`` is the server's own computation (prompt tokens not from its
cache, and completion tokens), ``forward_calls`` the requests.
"""

from __future__ import annotations

import json
from typing import Any, Sequence

from .... import SEP
from ...backend import backend
from ...requests import SERVED_DTYPE, Counted, Hypothesis, Request, Scored
from ....textio import InputError
from ...prompting.answers import answer_lines, answer_sentences, checked_request
from ...prompting.conversation import Prompter, forced_turns, turns
from ...prompting.template import load_template
from .endpoint import Endpoint, EndpointError, Settings

BACKEND = "openai"
#: the ids of a served model's text: its UTF-8 bytes, then these
SEP_ID, EOS_ID, PAD_ID = 256, 257, 258
#: the tokens a chat message costs beyond its text in :meth:`ServedModel.fits`'s estimate (role and turn markers)
MESSAGE_TOKENS = 8
#: the context window where the server reports none: no limit here (the server refuses what exceeds its own)
UNKNOWN_WINDOW = 1 << 30


class ServedModel:
    """A model's name on an endpoint (:class:`.endpoint.Settings`), its prompt from ``template`` between
    ``src_lang`` and ``tgt_lang`` (:mod:`docnmt.decode.prompting.conversation`, always as chat messages)."""

    backend = BACKEND
    device = "endpoint"
    dtype = SERVED_DTYPE

    def __init__(self, name: str, settings: Settings, separator: str = SEP, src_lang: str | None = None,
                 tgt_lang: str | None = None, template: str | None = None):
        if not str(name).strip():
            raise InputError("--model", "expected the model's name on the server, found an empty name")
        self.name = self.checkpoint = str(name)
        self.settings = settings
        self.endpoint = Endpoint(settings, self.name)
        self.template = load_template(template)
        self.prompter = Prompter(None, self.template, src_lang, tgt_lang, chat=True)
        self.src_lang, self.tgt_lang = src_lang, tgt_lang
        self.sep, self.eos, self.pad, self.vocab = SEP_ID, EOS_ID, PAD_ID, SEP_ID
        self.ends = [EOS_ID]
        self.sep_token = separator
        self.max_positions = UNKNOWN_WINDOW
        self.net = self.model = None
        self._counts_tokens: bool | None = None
        self._counted: dict[str, int] = {}

    def connect(self, retries: int | None = None) -> dict:
        """Asks the server for its models (``/v1/models``): an :class:`EndpointError` where it is unreachable,
        refuses the key or serves no model of this name; the server's entry for it (its context window, where
        reported, becomes :attr:`max_positions`). ``retries``: of an unreachable server (default ``max_retries``)."""
        listed = self.endpoint.models(retries)
        entry = next((item for item in listed if item.get("id") == self.name), None)
        if entry is None:
            served = ", ".join(str(item.get("id")) for item in listed) or "none"
            raise EndpointError(self.endpoint.name, f"the server serves no model {self.name!r} (it serves: {served})")
        window = entry.get("max_model_len") or entry.get("context_length") or entry.get("context_window")
        if window:
            self.max_positions = int(window)
        return entry

    # ---- ids: a text's UTF-8 bytes ----------------------------------------------------
    def encode(self, text: str, source: bool = False) -> list[int]:
        """Each sentence's UTF-8 bytes (``<sep>`` between sentences becomes :attr:`sep`); a target ends in ``eos``."""
        ids: list[int] = []
        for i, part in enumerate(text.split(SEP)):
            if i:
                ids.append(self.sep)
            ids += part.strip().encode("utf-8")
        return ids if source else ids + [self.eos]

    def sentences(self, ids: Sequence[int]) -> list[str]:
        """The sentences of ids split at :attr:`sep` (end tokens dropped)."""
        segments: list[bytearray] = [bytearray()]
        for i in ids:
            if i == self.sep:
                segments.append(bytearray())
            elif 0 <= i < 256:
                segments[-1].append(int(i))
        return [bytes(s).decode("utf-8", errors="replace").strip() for s in segments]

    def decode(self, ids: Sequence[int]) -> str:
        return f" {SEP} ".join(self.sentences(ids))

    # ---- conversations -------------------------------------------------------------------
    #: refine's template: a name of the repository's refine templates or a file (None: ``improve``)
    refine_template: str | None = None

    @property
    def refiner(self):
        """refine's prompt (:class:`docnmt.decode.prompting.refinement.Refiner`, as chat messages), loaded once."""
        if getattr(self, "_refiner", None) is None:
            from ...prompting.refinement import Refiner, load_refine_template

            self._refiner = Refiner(None, load_refine_template(self.refine_template), self.src_lang, self.tgt_lang,
                                    chat=True)
        return self._refiner

    def messages(self, source: Sequence[int], prefix: Sequence[int], document: Sequence[int] = (),
                 refining: Sequence[int] = (), draft_document: Sequence[int] = ()) -> list[dict]:
        """A request's chat messages: its source sentences and forced context as a conversation
        (:func:`docnmt.decode.prompting.conversation.turns`), after the source ``document`` where one is given
        (source-primed); or refine's message, with the draft to improve (``refining``)."""
        if refining:
            return self.refiner.messages(self.sentences(source), self.sentences(refining),
                                         self.sentences(document) if document else (),
                                         self.sentences(draft_document) if draft_document else ())
        done, current = turns(self.sentences(source), self.sentences(prefix[:-1]) if prefix else [])
        return self.prompter.messages(done, current, self.sentences(document) if document else ())

    @staticmethod
    def estimate(messages: Sequence[dict]) -> int:
        """The tokens the messages may take at most (:data:`MESSAGE_TOKENS` a message and a byte a token)."""
        return sum(len(m["content"].encode("utf-8")) + MESSAGE_TOKENS for m in messages) + MESSAGE_TOKENS

    def counts_tokens(self) -> bool:
        """Whether the server counts a conversation's tokens (vLLM's ``/tokenize``), asked once with the request
        retries: a server that refuses it (404, ...) does not, for the rest of the run; one that keeps failing for
        a passing reason (429, 5xx, a timeout) raises its :class:`EndpointError`, as a request would, instead of
        switching the run to the estimate (which would change what is truncated under the same journal)."""
        if self._counts_tokens is None:
            try:
                self.endpoint.token_count([{"role": "user", "content": "x"}], True)
                self._counts_tokens = True
            except EndpointError as err:
                if err.transient:
                    raise
                self._counts_tokens = False
        return self._counts_tokens

    def prompt_size(self, messages: Sequence[dict], room: int) -> int:
        """The tokens of a conversation as far as they matter: the :meth:`estimate` where it leaves ``room`` tokens
        in the context window; else the server's count where it gives one (:meth:`counts_tokens`), else the
        estimate."""
        estimate = self.estimate(messages)
        if estimate + room <= self.max_positions or not self.counts_tokens():
            return estimate
        key = json.dumps(list(messages), ensure_ascii=False)
        if key not in self._counted:
            if len(self._counted) > 4096:
                self._counted.clear()
            self._counted[key] = self.endpoint.token_count(list(messages), generation_prompt=True)
        return self._counted[key]

    def fits(self, source: Sequence[int], prefix: Sequence[int], continuation: int = 1,
             document: Sequence[int] = (), **drafts) -> bool:
        """Whether a request's conversation (:meth:`prompt_size`; refine's: ``drafts``) and ``continuation`` answer
        tokens fit the context window the server reported."""
        return self.prompt_size(self.messages(source, prefix, document, **drafts), continuation + 1) + continuation + 1 \
            <= self.max_positions

    def answer_lines(self, request: Request) -> int:
        """The lines the request's answer should have: its last message's sentences."""
        return answer_lines(request, self.sep)

    def hypothesis(self, text: str, finish_reason: str, lines: int = 1) -> Hypothesis:
        """An answer's text as a hypothesis, as :meth:`docnmt.decode.prompting.model.PromptedModel.hypothesis` makes
        it: its non-empty lines its sentences (one sentence's lines joined by spaces); complete where the server
        ended it (finish reason ``stop``) with ``lines`` lines. The API gives no score: 0."""
        found, complete = answer_sentences(text, finish_reason == "stop", lines)
        return Hypothesis(self.encode(f" {SEP} ".join(found), source=True), 0.0, 0.0, complete)

    def request_messages(self, number: int, request: Request) -> list[dict]:
        """Request ``number``'s messages; an InputError naming it where its ids are not a served model's."""
        return self.messages(*checked_request(number, request, self.sep, "UTF-8 bytes"), request.refining,
                             request.draft_document)

    # ---- forced scoring -------------------------------------------------------------------
    def scored_answer(self, messages: list[dict], answer: str, line: int | None = None,
                      ends_turn: bool = True) -> Scored:
        """The log-prob of ``answer`` as the assistant's reply to ``messages``, and of the end of its turn (where
        ``ends_turn``; otherwise of a line break after it, more lines following), as causal-lm scores it: the
        prompt log-probs of the conversation with the reply rendered by the chat template, summed over the reply's
        tokens and its end (:meth:`_ending_turn`); where more lines follow, of the conversation up to the reply's
        start followed by the tokens of the reply's text and its line break (:meth:`_going_on`: a template that
        trims each message, as Llama 3's, would drop that line break)."""
        if not self.settings.prompt_logprobs:
            raise InputError(self.endpoint.name, "forced scoring needs the endpoint's prompt log-probs: set "
                                                 "prompt_logprobs: true (vLLM's server gives them)")
        steps, start, end = (self._ending_turn if ends_turn else self._going_on)(list(messages), answer, line)
        if not start < end <= len(steps):
            raise EndpointError(self.endpoint.name, f"the answer's tokens {start}..{end - 1} are not within the "
                                                    f"conversation's {len(steps)}", line)
        return Scored(float(sum(steps[start:end])), end - start)

    def _ending_turn(self, messages: list[dict], answer: str, line: int | None) -> tuple[list[float], int, int]:
        """The conversation with the reply, rendered whole: its tokens' log-probs, and the reply's span from the
        end of the generation prompt through the token that ends the turn (counted with vLLM's ``/tokenize``)."""
        endpoint = self.endpoint
        whole = messages + [{"role": "assistant", "content": answer}]
        start = endpoint.token_count(messages, generation_prompt=True, line=line)
        stop = endpoint.token_count(whole, generation_prompt=False, continue_final=True, line=line)
        return endpoint.chat_logprobs(whole, line=line), start, stop + 1

    def _going_on(self, messages: list[dict], answer: str, line: int | None) -> tuple[list[float], int, int]:
        """The conversation up to the reply's start (its ids from vLLM's ``/tokenize``), then the ids of the reply's
        text and a line break as the tokenizer splits them, scored as one prompt (``/v1/completions``): the
        log-probs and the reply's span."""
        endpoint = self.endpoint
        prompt = endpoint.tokens(messages=messages, add_generation_prompt=True, line=line)
        reply = endpoint.tokens(prompt=answer + "\n", add_special_tokens=False, line=line)
        return endpoint.completion_logprobs(prompt + reply, line=line), len(prompt), len(prompt) + len(reply)

    def score(self, sources: Sequence[str], targets: Sequence[str], after_last_sep: bool = True,
              batch_size: int = 64) -> list[Scored]:
        """Log-prob of each target's answer given its source, as
        :meth:`docnmt.decode.prompting.model.PromptedModel.forced_pairs` pairs them (with ``after_last_sep`` the
        target's earlier sentences are earlier turns)."""
        pairs = []
        for source, target in zip(sources, targets):
            done, current, answer = forced_turns(source, target, after_last_sep)
            pairs.append((self.prompter.messages(done, current), answer))
        return self.endpoint.map(lambda pair: self.scored_answer(*pair), pairs)

    def served_record(self) -> dict:
        """The sidecar's record of who served the decode (:meth:`.endpoint.Endpoint.record`), with the context
        window the server reported."""
        return {**self.endpoint.record(),
                "context_window": None if self.max_positions == UNKNOWN_WINDOW else self.max_positions}


class ServedSearcher(Counted):
    """Greedy answers of a :class:`ServedModel` (``beam`` must be 1 to search: the API has no beam search), at most
    ``max_new_tokens`` tokens each, a search call's requests sent concurrently. ``batch_size`` and ``max_tokens``
    are the server's to schedule (kept for the interface)."""

    vocabulary = "bytes"

    def __init__(self, model: ServedModel, beam: int = 1, lenpen: float = 1.0, batch_size: int = 64,
                 max_new_tokens: int = 200, max_tokens: int | None = backend(BACKEND).max_tokens):
        self.endpoint = model.endpoint  # before the counters (:meth:`reset_counters`)
        self._setup(model, beam, lenpen, batch_size, max_tokens, max_new_tokens)

    def reset_counters(self) -> None:
        super().reset_counters()
        self.base = self.endpoint.counts()  # the endpoint's counts so far (another searcher of the model's)

    def _counts(self) -> dict[str, int]:
        """What the endpoint counted since :meth:`reset_counters`."""
        return {name: value - self.base[name] for name, value in self.endpoint.counts().items()}

    def _sync(self) -> None:
        """The shared counters from the endpoint's: the server's positions, and one call a request."""
        counts = self._counts()
        self.decoder_positions = counts["prompt_tokens"] - counts["cached_tokens"] + counts["completion_tokens"]
        self.forward_calls = counts["requests"]

    def prompt_counters(self) -> dict:
        self._sync()
        counts = self._counts()
        return {"prompt_tokens": counts["prompt_tokens"], "cached_tokens": counts["cached_tokens"],
                "completion_tokens": counts["completion_tokens"], "api_requests": counts["requests"],
                "retries": counts["retries"]}

    def search(self, requests: Sequence[Request]) -> list[list[Hypothesis]]:
        """The answer to each request's conversation, as a one-hypothesis list; a ValueError for a beam of more than
        one (forced scoring, which searches nothing, takes any)."""
        if self.beam != 1:
            raise ValueError(f"beam {self.beam}: {backend(BACKEND).lacks(['beam_search'])} (the API answers greedily "
                             "or by sampling): use --beam 1")
        work = [(self.model.request_messages(number, request), self.model.answer_lines(request), request.line)
                for number, request in enumerate(requests, start=1)]

        def answer(item) -> list[Hypothesis]:
            messages, lines, line = item
            limit = self.max_new_tokens
            if self.model.max_positions != UNKNOWN_WINDOW:  # the room the prompt leaves in the window
                limit = max(1, min(limit, self.model.max_positions - self.model.prompt_size(messages, limit)))
            text, finish = self.endpoint.chat(messages, limit, line)
            return [self.model.hypothesis(text, finish, lines)]

        results = self.endpoint.map(answer, work)
        self._sync()
        self.batch_done(len(requests))
        return results

    def sample(self, request: Request, count: int, epsilon: float, seed: int) -> list[Hypothesis]:
        raise ValueError(f"{backend(BACKEND).lacks(['sampling'])}: the API samples at a temperature, not with "
                         "epsilon truncation")

    def score_forced(self, requests: Sequence[Request], targets: Sequence[Sequence[int]],
                     ends: Sequence[int] | None = None) -> list[Scored]:
        """Log-prob of each target (a sentence's bytes) as the answer to its request's conversation
        (:meth:`ServedModel.scored_answer`): the sentence, then the end of the turn, or a line break where ``ends``
        gives :attr:`ServedModel.sep` (more lines follow; not the end of the turn)."""
        if len(targets) != len(requests) or (ends is not None and len(ends) != len(requests)):
            raise ValueError(f"expected one target (and end) per request ({len(requests)}), got {len(targets)}")
        items = []
        for number, (request, target) in enumerate(zip(requests, targets), start=1):
            ends_turn = ends is None or int(ends[number - 1]) != self.model.sep
            items.append((self.model.request_messages(number, request), " ".join(self.model.sentences(list(target))),
                          request.line, ends_turn))
        found = self.endpoint.map(lambda item: self.model.scored_answer(*item), items)
        self._sync()
        return found

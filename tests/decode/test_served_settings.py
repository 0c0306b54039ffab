"""The backend openai's settings without a server: the endpoint's load options and their errors, the config's
models.endpoint and each level's model name, what the workflow makes of a served task (its options, beam 1, no model
file as input, MBR and QE skipped, perplexity and CXMI by prompt_logprobs, prices), the served model's byte ids and
conversations, Table 1's counts and price, and a failed request located in its document. tests/decode/test_openai.py
runs them against a real server."""

import copy
from types import SimpleNamespace

import pytest
import yaml

from helpers import REPO

pytestmark = pytest.mark.fast

ENDPOINT = {"base_url": "http://127.0.0.1:8000/v1", "api_key_env": "MY_KEY"}


def raw_config(endpoint=None, **models) -> dict:
    raw = yaml.safe_load((REPO / "config.yaml").read_text(encoding="utf-8"))
    raw["tasks"] = ["served"]
    raw["strategies"] = ["sentence-level", "doc-trans", "doc-trans-beam"]
    raw["mbr"] = {"strategies": ["doc-trans"]}
    raw["task_settings"]["served"] = {
        "src": "en", "tgt": "de", "corpus": {"type": "prepared", "dir": "data/served"},
        "models": {"backend": "openai", "endpoint": dict(ENDPOINT if endpoint is None else endpoint),
                   "sentence": {"model": "my-llm"}, "document": {"model": "my-llm"}, **models}}
    return raw


def validated(raw: dict) -> dict:
    from docnmt.config import validate

    return validate(copy.deepcopy(raw), REPO / "schemas" / "config.schema.yaml")


def test_load_options_read_booleans_strings_and_numbers_and_name_a_bad_value():
    """--engine-args is read by the backend's own options dataclass: its types, and its keys only."""
    from docnmt.decode.backend import backend
    from docnmt.decode.load_options import parse_load_options

    def served(text):
        return parse_load_options(text, backend("openai").options, "openai")

    assert served("base_url=http://h:1/v1,prompt_logprobs=true,max_retries=2,timeout=1.5") == {
        "base_url": "http://h:1/v1", "prompt_logprobs": True, "max_retries": 2, "timeout": 1.5}
    assert served("prompt_logprobs=no") == {"prompt_logprobs": False}
    with pytest.raises(ValueError, match="prompt_logprobs expects true or false, found 'maybe'"):
        served("prompt_logprobs=maybe")
    with pytest.raises(ValueError, match="max_concurrency expects an integer, found 'many'"):
        served("max_concurrency=many")
    with pytest.raises(ValueError, match=r"--engine-args: expected KEY=VALUE with KEY one of base_url, api_key_env, "
                                         r".* \(for openai models\), found 'tensor_parallel_size=2'"):
        served("tensor_parallel_size=2")
    assert parse_load_options("seed=3", backend("vllm").options, "vllm") == {"seed": 3}
    with pytest.raises(ValueError, match="causal-lm models take no load options"):
        parse_load_options("seed=3", None, "causal-lm")


def test_the_endpoints_settings_need_a_url_and_sane_numbers():
    from docnmt.decode.backends.openai.endpoint import Settings

    with pytest.raises(ValueError, match=r"needs its endpoint: --base-url URL"):
        Settings.of(None)
    with pytest.raises(ValueError, match="max_concurrency must be >= 1, got 0"):
        Settings.of("http://h/v1", max_concurrency=0)
    settings = Settings.of("http://h:8000/v1/", timeout=None, max_retries=3)
    assert (settings.base_url, settings.root, settings.timeout, settings.max_retries) == \
        ("http://h:8000/v1", "http://h:8000", 600.0, 3)


@pytest.mark.parametrize("change, message", [
    (lambda r: r["task_settings"]["served"]["models"].pop("endpoint"),
     r"'task_settings.served.models.endpoint': openai models need their endpoint \(base_url, ...\)"),
    (lambda r: r["task_settings"]["served"]["models"].update(backend="causal-lm", sentence={"checkpoint": "m"},
                                                            document={"checkpoint": "m"}),
     r"'task_settings.served.models.endpoint': endpoint is for openai models, not causal-lm models$"),
    (lambda r: r["task_settings"]["served"]["models"].update(sentence={"checkpoint": "my-llm"}),
     r"'task_settings.served.models.sentence': expected model: the model's name on the server for a openai model, "
     r"found checkpoint"),
    (lambda r: r["task_settings"]["served"]["models"].update(engine_args={"seed": 1}),
     r"'task_settings.served.models.engine_args': engine_args is for vllm models, not openai models \(theirs: "
     r"task_settings.served.models.endpoint\)"),
    (lambda r: r["task_settings"]["served"]["models"]["endpoint"].update(tensor_parallel_size=2),
     r"'task_settings.served.models.endpoint': Additional properties are not allowed \('tensor_parallel_size' was "
     r"unexpected\)"),
    (lambda r: r["task_settings"]["served"]["models"]["endpoint"].update(api_key_env="sk-123 456"),
     r"api_key_env"),
    (lambda r: r["task_settings"]["served"]["models"]["endpoint"].update(prices={"input": 1.0}),
     r"'task_settings.served.models.endpoint.prices.output' is missing"),
])
def test_a_served_tasks_config_errors_name_the_key(change, message):
    from docnmt.config import ConfigError

    raw = raw_config()
    change(raw)
    with pytest.raises(ConfigError, match=message):
        validated(raw)


def test_the_workflow_gives_a_served_task_its_endpoint_beam_1_and_no_model_file():
    from docnmt import workflow as wf

    config = validated(raw_config({**ENDPOINT, "prompt_logprobs": True, "max_concurrency": 4,
                                   "prices": {"input": 1.0, "output": 4.0}}))
    options = wf.environments.engine_options(config, "served")
    assert options[:4] == ["--base-url", ENDPOINT["base_url"], "--api-key-env", "MY_KEY"]
    assert options[4] == "--engine-args" and "prompt_logprobs=True" in options[5] and "prices" not in options[5]
    assert wf.decode.search_args(config, "served")[:2] == ["--beam", 1]
    assert wf.decode.model_inputs(config, "served", "document") == {}
    args = wf.decode.model_args(config, "served", {}, level="sentence")
    assert args[:4] == ["--backend", "openai", "--model", "my-llm"]
    assert wf.decode.model_level(SimpleNamespace(system="sentence-level+mbr")) == "sentence"
    assert wf.decode.model_level(SimpleNamespace(system="doc-trans")) == "document"
    assert wf.decode.model_level(SimpleNamespace(level="sentence", system="x")) == "sentence"
    assert "served" in wf.tasks.cxmi_tasks(config)
    entry = wf.tables.task_scores(config, "served")
    assert entry["prices"] == {"input": 1.0, "output": 4.0} and "unscored" not in entry
    assert entry["skipped"] == {
        "doc-trans-beam": "doc-trans-beam needs what openai models lack: openai models have no beam search (an "
                          "n-best list)",
        "doc-trans+mbr": "openai models have no beam search (an n-best list)",
        "doc-trans+cad": "openai models have no context-aware decoding (each step's scores under two prompts)"}
    assert "doc-trans+mbr" not in wf.systems.task_systems(config, "served", "test")
    assert "doc-trans+cad" not in wf.systems.task_systems(config, "served", "test")
    assert not any("prices" in path for path in wf.tables.manifest_files(config))


def test_without_prompt_log_probs_perplexity_and_cxmi_are_left_out_with_the_reason():
    from docnmt import workflow as wf

    config = validated(raw_config())
    assert "served" not in wf.tasks.cxmi_tasks(config)
    entry = wf.tables.task_scores(config, "served")
    why = "openai models have no forced scoring (perplexity, CXMI) without prompt_logprobs: true"
    assert entry["unscored"] == {"perplexity": why, "cxmi": why} and entry["perplexity"] == {}


def test_a_served_models_ids_are_its_texts_bytes_and_its_prompt_causal_lms_messages():
    from docnmt.decode.backends.openai.endpoint import Settings
    from docnmt.decode.backends.openai.model import EOS_ID, SEP_ID, ServedModel
    from docnmt.decode.requests import Request

    model = ServedModel("my-llm", Settings.of("http://127.0.0.1:9/v1"), src_lang="en", tgt_lang="de")
    ids = model.encode("Grüß dich. <sep> Wie geht's?")
    assert ids[-1] == EOS_ID and ids.count(SEP_ID) == 1 and max(i for i in ids if i < 256) > 127
    assert model.decode(ids) == "Grüß dich. <sep> Wie geht's?"
    request = Request(model.encode("She came. <sep> He left.", source=True),
                      model.encode("Sie kam. <sep>", source=False)[:-1])
    messages = model.request_messages(1, request)
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    assert (messages[1]["content"], messages[2]["content"], messages[3]["content"]) == ("She came.", "Sie kam.",
                                                                                         "He left.")
    assert model.answer_lines(request) == 1
    assert model.fits(request.source, request.prefix)  # no window reported: no limit
    model.max_positions = model.estimate(messages) + 1  # the estimate leaves no room for an answer token
    model._counts_tokens = False  # a server without /tokenize: the estimate decides
    assert not model.fits(request.source, request.prefix)
    hyp = model.hypothesis("Er ging.\n", "stop", 1)
    assert (model.decode(hyp.tokens), hyp.complete) == ("Er ging.", True)
    cut = model.hypothesis("Er ging.\nUnd", "length", 1)
    assert (model.decode(cut.tokens), cut.complete) == ("Er ging. Und", False)
    from docnmt.textio import InputError

    with pytest.raises(InputError, match="forced scoring needs the endpoint's prompt log-probs"):
        model.scored_answer(messages, "Er ging.")


def test_table_1_counts_a_first_pass_and_prices_tokens_per_million():
    """The openai backend's cost columns, as its package declares them: counts with the first pass's, the price per
    million tokens, and the note that names the prices' config key."""
    from docnmt.decode.backend import backend
    from docnmt.score.cost_table import price_note

    columns = backend("openai").cost
    entry = {"prompt_tokens": 1000, "cached_tokens": 400, "completion_tokens": 100, "api_requests": 10,
             "first_pass": {"prompt_tokens": 500, "cached_tokens": 0, "completion_tokens": 50, "api_requests": 10}}
    counts = columns.counts(entry)
    assert counts == {"prompt_tokens": 1500, "cached_tokens": 400, "completion_tokens": 150, "api_requests": 20}
    # (1500 - 400) x 2 + 400 x 0.5 + 150 x 8, per million
    assert columns.price(counts, {"input": 2.0, "cached_input": 0.5, "output": 8.0}) == pytest.approx(3600 / 1e6)
    assert columns.price(counts, {"input": 2.0, "output": 8.0}) == pytest.approx(4200 / 1e6)  # cached: input price
    assert price_note("t", columns, {"output": 8.0, "input": 2.0}) == \
        "Cost: at input 2.0, output 8.0 per million tokens (task_settings.t.models.endpoint.prices)."
    assert backend("causal-lm").cost.counts({"tokens_prefilled": 5, "first_pass": {"tokens_prefilled": 9}}) == \
        {"tokens_prefilled": 5}, "a causal LM's sidecar counts its first pass apart"


def test_a_failed_request_is_named_by_its_document_and_sentence():
    from docnmt.decode.documents import group
    from docnmt.decode.requests import RequestError

    docs = group(["a", "b", "c", "d"], ["x", "x", "y", "y"])
    err = RequestError("http://h/v1 (model m)", "gave up after 2 retries: 500 boom", 3)
    assert str(err.located(docs)) == ("http://h/v1 (model m): the request of document y, sentence 2 (source line 4): "
                                      "gave up after 2 retries: 500 boom")
    assert str(RequestError("e", "no line").located(docs)) == "e: no line"


def test_two_searchers_of_one_served_model_count_their_own_tokens():
    """translate's two levels share one model (one endpoint): each searcher counts what was sent since it began."""
    from docnmt.decode.backends import make_searcher
    from docnmt.decode.backends.openai.endpoint import Settings
    from docnmt.decode.backends.openai.model import ServedModel

    model = ServedModel("my-llm", Settings.of("http://127.0.0.1:9/v1"), src_lang="en", tgt_lang="de")
    usage = SimpleNamespace(prompt_tokens=100, completion_tokens=10,
                            prompt_tokens_details=SimpleNamespace(cached_tokens=40))
    first = make_searcher(model, beam=1)
    model.endpoint.count(usage)
    second = make_searcher(model, beam=1)
    model.endpoint.count(usage)
    assert first.prompt_counters() == {"prompt_tokens": 200, "cached_tokens": 80, "completion_tokens": 20,
                                       "api_requests": 2, "retries": 0}
    assert second.prompt_counters()["api_requests"] == 1
    assert (second.decoder_positions, second.forward_calls) == (100 - 40 + 10, 1)


class TokenizeServer:
    """A loopback server of an OpenAI-compatible endpoint's ``POST`` calls: vLLM's ``/tokenize`` (five tokens, in
    vLLM's answer's fields) and ``/v1/chat/completions`` (the user message's first word, upper-cased). It answers with the statuses of
    ``failures`` first, and with a 400 to a message that holds ``refuse``; ``.calls`` counts the requests,
    ``.asked`` the chat requests' last messages."""

    def __init__(self, failures, refuse: str | None = None):
        import http.server
        import json
        import threading

        owner = self
        self.failures, self.calls, self.asked = list(failures), 0, []

        def answer(path: str, request: dict) -> tuple[int, dict]:
            if path.endswith("/tokenize"):
                return 200, {"count": 5, "max_model_len": 512, "tokens": [1, 2, 3, 4, 5]}
            content = request["messages"][-1]["content"]
            owner.asked.append(content)
            if refuse is not None and refuse in content:
                return 400, {"error": {"message": "refused"}}
            return 200, {"id": "x", "object": "chat.completion", "created": 0, "model": request["model"],
                         "choices": [{"index": 0, "finish_reason": "stop",
                                      "message": {"role": "assistant", "content": content.split()[0].upper()}}],
                         "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}}

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 (the http.server name)
                request = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                owner.calls += 1
                status = owner.failures.pop(0) if owner.failures else 200
                found = answer(self.path, request) if status == 200 else (status, {"error": {"message": "failed"}})
                status, body = found[0], json.dumps(found[1])
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body.encode())

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.parametrize("failures, counts, calls", [
    ([503], True, 2),  # one 503: retried, then the server counts
    ([404], False, 1),  # no /tokenize on this server: the estimate, asked no more
])
def test_the_token_count_probe_retries_a_passing_failure_and_remembers_a_refusal(failures, counts, calls):
    """Issue 57, fault 2: the probe ran once without retries and cached any failure, so one 503 switched the run to
    the byte estimate (other truncations, other outputs under the same journal key)."""
    from docnmt.decode.backends.openai.endpoint import Settings
    from docnmt.decode.backends.openai.model import ServedModel

    server = TokenizeServer(failures)
    try:
        model = ServedModel("tiny", Settings.of(server.url, retry_backoff=0.01, max_retries=2), src_lang="en",
                            tgt_lang="de")
        assert model.counts_tokens() is counts
        assert model.counts_tokens() is counts and server.calls == calls
    finally:
        server.close()


def test_a_token_count_probe_that_keeps_failing_stops_the_decode_instead_of_switching_to_the_estimate():
    from docnmt.decode.backends.openai.endpoint import EndpointError, Settings
    from docnmt.decode.backends.openai.model import ServedModel

    server = TokenizeServer([503, 503, 503])
    try:
        model = ServedModel("tiny", Settings.of(server.url, retry_backoff=0.01, max_retries=2), src_lang="en",
                            tgt_lang="de")
        with pytest.raises(EndpointError, match="gave up after 2 retries: 503"):
            model.counts_tokens()
        assert model._counts_tokens is None and server.calls == 3
        assert model.counts_tokens() is True, "asked again, once the server answers"
    finally:
        server.close()


@pytest.mark.parametrize("concurrency", [1, 4])
def test_a_failed_served_request_keeps_the_answered_requests_of_its_chunk_in_the_journal(tmp_path, concurrency):
    """Issue 57, fault 3: Endpoint.map raised before the chunk's journal line was written, so every answered (and
    paid) request of the chunk was asked again on the rerun. Now they are journaled; the rerun asks for the rest."""
    from docnmt.decode.backends.openai.endpoint import EndpointError, Settings
    from docnmt.decode.backends.openai.model import ServedModel, ServedSearcher
    from docnmt.decode.journal import Journal, JournaledSearcher
    from docnmt.decode.requests import Request

    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"]
    key = {"strategy": "sentence-level", "inputs": {}, "settings": {}, "version": "x"}
    journal = tmp_path / "decode.journal"
    server = TokenizeServer([], refuse="delta")
    try:
        model = ServedModel("tiny", Settings.of(server.url, max_concurrency=concurrency, max_retries=0),
                            src_lang="en", tgt_lang="de")
        requests = [Request(model.encode(f"{word} one", source=True), line=n) for n, word in enumerate(words)]
        with pytest.raises(EndpointError, match="400 refused"):
            JournaledSearcher(ServedSearcher(model), Journal(journal, key)).search(requests)
        first = list(server.asked)
        server.asked.clear()
    finally:
        server.close()
    again = TokenizeServer([])
    try:
        model = ServedModel("tiny", Settings.of(again.url, max_concurrency=concurrency), src_lang="en", tgt_lang="de")
        searcher = JournaledSearcher(ServedSearcher(model), Journal(journal, key))
        found = searcher.search(requests)
    finally:
        again.close()
    assert [model.decode(nbest[0].tokens) for nbest in found] == [word.upper() for word in words]
    answered = [content for content in first if "delta" not in content]
    assert answered and not set(again.asked) & set(answered), "no answered request is asked again"
    assert len(answered) + len(again.asked) == len(words)
    assert searcher.resumed["requests"] == len(answered) and searcher.resumed["chunks"] == 0

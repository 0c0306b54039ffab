"""Issue 57, fault 9: forced scoring through the openai backend where more lines follow (a separator end). The
reply's line break is scored as causal-lm scores it (the conversation up to the reply, then the text's tokens as the
tokenizer splits them), also where the chat template trims each message's content (Llama 3's ``| trim``), which
drops a line break at the end of a rendered reply.

The server here is vLLM's rendering and scoring done in this process on a local model folder: its ``/tokenize``
(the tokenizer's chat template, HF's ``continue_final_message`` included) and its prompt log-probs (the model's own,
in float32). tests/decode/test_openai.py runs the same scoring against vLLM's real server."""

from types import SimpleNamespace

import pytest

#: A ChatML template that trims every message's content, as Llama 3's does.
TRIMMING = ("{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] | trim + "
            "'<|im_end|>' + '\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}"
            "{% endif %}")


@pytest.fixture(scope="module")
def trimming_llm(tmp_path_factory):
    """A random tiny Llama whose tokenizer's chat template trims each message."""
    import llmmodel
    from transformers import AutoTokenizer

    from docnmt.decode.backends.causal_lm.tiny import build

    docs, _ = llmmodel.demo_documents(5)
    folder = build(tmp_path_factory.mktemp("trimming") / "model", docs, steps=0, hidden=64, heads=2, layers=1)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    tokenizer.chat_template = TRIMMING
    tokenizer.save_pretrained(folder)
    return folder, docs


def local_server(folder):
    """An endpoint whose server calls are answered here as vLLM's server answers them, on ``folder``'s model."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from docnmt.decode.backends.openai.endpoint import Endpoint, Settings

    tokenizer = AutoTokenizer.from_pretrained(folder)
    net = AutoModelForCausalLM.from_pretrained(folder).eval()

    def logprobs(ids):
        with torch.no_grad():
            logits = net(torch.tensor([ids])).logits[0].float().log_softmax(-1)
        return [0.0] + [float(logits[i - 1, ids[i]]) for i in range(1, len(ids))]

    class LocalServer(Endpoint):
        def rendered(self, messages, generation_prompt, continue_final=False):
            return list(tokenizer.apply_chat_template(messages, add_generation_prompt=generation_prompt,
                                                      continue_final_message=continue_final, tokenize=True,
                                                      return_dict=False))

        def tokens(self, line=None, **body):  # vLLM's /tokenize: a conversation or a text
            if "messages" in body:
                return self.rendered(body["messages"], body.get("add_generation_prompt", True),
                                     body.get("continue_final_message", False))
            return list(tokenizer(body["prompt"], add_special_tokens=body.get("add_special_tokens", True))["input_ids"])

        def token_count(self, messages, generation_prompt, continue_final=False, line=None, retries=None):
            return len(self.rendered(messages, generation_prompt, continue_final))

        def chat_logprobs(self, messages, line=None):
            return logprobs(self.rendered(messages, False))

        def completion_logprobs(self, ids, line=None):
            return logprobs(list(ids))

    return LocalServer(Settings.of("http://127.0.0.1:9/v1", prompt_logprobs=True), "local")


def test_a_separator_ends_forced_score_counts_the_line_break_as_causal_lm_does(trimming_llm):
    import llmmodel

    from docnmt.decode.backends import load_model, make_searcher
    from docnmt.decode.backends.openai.endpoint import Settings
    from docnmt.decode.backends.openai.model import ServedModel

    folder, docs = trimming_llm
    local = load_model("causal-lm", folder, src_lang="en", tgt_lang="de", device="cpu")
    served = ServedModel("local", Settings.of("http://127.0.0.1:9/v1", prompt_logprobs=True), src_lang="en",
                         tgt_lang="de")
    served.endpoint = local_server(folder)

    def scores(model, end_of_turn):
        doc = SimpleNamespace(src=docs[0].src, ref=docs[0].tgt)
        requests, targets = llmmodel.forced_requests(model, doc, context=2)
        end = model.eos if end_of_turn else model.sep
        found = make_searcher(model, beam=1, max_len=20).score_forced(requests, targets, ends=[end] * len(requests))
        return [s.logprob for s in found]

    for end_of_turn in (False, True):
        assert scores(served, end_of_turn) == pytest.approx(scores(local, end_of_turn), abs=1e-4), \
            "end of turn" if end_of_turn else "a line break, more lines following"

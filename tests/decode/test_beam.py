"""The beam search over an engine's steps (docnmt.decode.prompting.beam), which the vllm backend runs: it gives what
transformers' generate(num_beams=...) gives (the causal-lm backend's search), on a tiny random Llama whose steps are
whole forward passes, and ends at an end token, a stop text or the token limit as generate does."""

from __future__ import annotations

import math

import pytest

from docnmt.decode.prompting.beam import beam_search, keep_for


@pytest.fixture(scope="module")
def random_llama():
    """A random Llama of 64 tokens (no training: a search's ranking is all that is compared)."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(3)
    config = LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128)
    return LlamaForCausalLM(config).eval()


def forward_step(net, calls: list):
    """An engine of whole forward passes: each sequence's best next tokens and their log-probs (``calls``: the
    sequences of each step, appended)."""
    import torch

    def step(sequences, keep):
        calls.append(len(sequences))
        found = []
        with torch.no_grad():
            for sequence in sequences:
                logits = net(input_ids=torch.tensor([list(sequence)])).logits[0, -1].float()
                top = torch.log_softmax(logits, dim=-1).topk(keep)
                found.append(list(zip(top.indices.tolist(), top.values.tolist())))
        return found
    return step


def generated(net, prompt, beam, lenpen, ends, limit):
    """transformers' beam search on one prompt: each returned answer (cut after its first end token) and score."""
    import torch

    out = net.generate(input_ids=torch.tensor([prompt]), do_sample=False, num_beams=beam, num_return_sequences=beam,
                       max_new_tokens=limit, length_penalty=lenpen, eos_token_id=list(ends), pad_token_id=ends[0],
                       return_dict_in_generate=True, output_scores=True)
    answers = []
    for sequence, score in zip(out.sequences[:, len(prompt):].tolist(), out.sequences_scores.tolist()):
        cut = next((n + 1 for n, t in enumerate(sequence) if t in ends), len(sequence))
        answers.append((sequence[:cut], score))
    return answers


@pytest.mark.parametrize("beam,lenpen", [(2, 1.0), (4, 1.0), (5, 0.6), (4, 2.0)])
def test_the_engine_steps_search_gives_generates_beams_and_scores(random_llama, beam, lenpen):
    import torch

    prompts = [[5, 9, 17, 3], [40, 2, 2, 8, 11, 30, 7], [1]]
    limits = [12, 9, 14]
    # end tokens that the searches reach within their limits: the 4th and 7th of a greedy answer to each prompt
    greedy = [random_llama.generate(input_ids=torch.tensor([p]), do_sample=False, max_new_tokens=8,
                                    pad_token_id=0)[0, len(p):].tolist() for p in prompts[:2]]
    ends = sorted({answer[n] for answer in greedy for n in (3, 6)})
    calls: list[int] = []
    found = beam_search(prompts, limits, forward_step(random_llama, calls), beam, lenpen, ends)
    ended_early = 0
    for prompt, limit, hyps in zip(prompts, limits, found):
        expected = generated(random_llama, prompt, beam, lenpen, ends, limit)
        assert [h.tokens for h in hyps] == [tokens_ for tokens_, _ in expected]
        assert [h.score for h in hyps] == pytest.approx([score for _, score in expected], abs=1e-4)
        for h in hyps:
            assert h.score == pytest.approx(sum(h.logprobs) / len(h.tokens) ** lenpen, abs=1e-5)
        ended_early += any(h.tokens[-1] in ends for h in hyps)
    assert ended_early, "the end tokens end some answers"
    assert len(calls) <= max(limits) and all(0 < n <= beam * len(prompts) for n in calls)


def test_a_search_stops_when_its_answers_have_ended_not_at_the_limit():
    """A toy engine whose every sequence ends after three tokens with certainty: one step per token, not 200."""
    calls = []

    def step(sequences, keep):
        calls.append(len(sequences))
        return [[(9 if len(s) >= 4 else 1 + len(s), 0.0)] + [(t, -5.0 - t) for t in range(20, 20 + keep - 1)]
                for s in sequences]

    found = beam_search([[0]], [200], step, 3, 1.0, [9])
    assert found[0][0].tokens == [2, 3, 4, 9] and found[0][0].score == 0.0
    assert len(calls) < 10


def test_a_stop_text_and_the_token_limit_end_answers():
    """A plain template's end text ends an answer at the token that completes it; the token limit ends the rest."""
    pieces = {1: "Hallo", 2: "\n", 3: " Welt", 9: "</s>"}

    def step(sequences, keep):
        return [[(2, -0.1), (1, -0.5), (3, -1.0)][:keep] for _ in sequences]

    found = beam_search([[7]], [3], step, 1, 1.0, [9], stop="\n\n", piece=lambda t: pieces[t])
    assert found[0][0].tokens == [2, 2]  # "\n\n" after two steps
    found = beam_search([[7]], [3], step, 1, 1.0, [9])
    assert found[0][0].tokens == [2, 2, 2] and found[0][0].score == pytest.approx(-0.3 / 3)
    with pytest.raises(ValueError, match="piece"):
        beam_search([[7]], [3], step, 1, 1.0, [9], stop="\n\n")


def test_keep_is_transformers_candidates_per_step():
    assert keep_for(12, [2]) == 24 and keep_for(12, [2, 3]) == 36 and keep_for(4, [1, 2, 3]) == 16
    assert math.isclose(keep_for(1, []), 2)


def test_the_vllm_searcher_refuses_a_beam_whose_steps_ask_for_more_log_probs_than_its_engine_gives():
    """Each step asks vLLM for keep_for(beam, ends) log-probs, which the engine caps at MAX_LOGPROBS: a model with
    four end tokens at beam 32 would ask for 160 (the constructor starts nothing: a stand-in model)."""
    from types import SimpleNamespace

    from docnmt.decode.backends.vllm.model import MAX_BEAM, MAX_LOGPROBS, VLLMSearcher

    model = SimpleNamespace(eos=1, pad=0, vocab=100, max_positions=512, llm=None, ends=[1, 2, 3, 4])
    with pytest.raises(ValueError, match=f"beam {MAX_BEAM}: with 4 end tokens a step asks for 160 log-probs, the "
                                         f"engine gives at most {MAX_LOGPROBS}"):
        VLLMSearcher(model, beam=MAX_BEAM)
    assert VLLMSearcher(model, beam=24).beam == 24  # 120 log-probs

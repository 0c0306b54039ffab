"""Draft verification (docnmt.decode.verification): a greedy search given a draft gives the search's own output, byte for
byte, whatever the draft (the output itself, a part of it, garbage, nothing, more than the length limit, ids the
search cannot generate), on fairseq's toy model, the tiny Marian and M2M100 (transformers) and the tiny Llama
(causal-lm); the strategies give their drafts (2-pass its first pass, parallel doc-trans the last round's output, the
overlapping windows the tiling's) on the fake model, and the same outputs on the trained models; and the counters add
up."""

from __future__ import annotations

from dataclasses import replace

import pytest

from docnmt.decode.backends.fairseq.search import Searcher
from docnmt.decode.requests import Request
from docnmt.decode.verification import accepted_length, verifies

from test_search import context_requests


def greedy(model, verify: bool, max_len_b: int = 200) -> Searcher:
    searcher = Searcher(model, beam=1, max_len_b=max_len_b)
    searcher.verify_drafts = verify
    return searcher


def drafts_of(outputs: list[list[int]], vocab: int) -> dict[str, list[list[int]]]:
    """Each kind of draft for each request, from its greedy output."""
    return {
        "its output": outputs,
        "half of it, then a wrong token": [o[:len(o) // 2] + [(o[len(o) // 2] + 1) % vocab if len(o) > 1 else 4]
                                           for o in outputs],
        "garbage": [[4 + (7 * j) % (vocab - 4) for j in range(len(o) + 3)] for o in outputs],
        "empty": [[] for _ in outputs],
        "its output and more": [o + o + o for o in outputs],
        "ids it cannot generate": [o[:2] + [1, 0, 10 ** 6] + o[2:] for o in outputs],
    }


@pytest.mark.parametrize("max_len_b", [200, 3])
def test_a_verified_draft_gives_the_greedy_searchs_own_output(toy, max_len_b):
    root, _, model = toy
    requests, _ = context_requests(root, model)
    plain = greedy(model, False, max_len_b).search(requests)
    outputs = [nbest[0].tokens for nbest in plain]
    for kind, drafts in drafts_of(outputs, model.vocab).items():
        searcher = greedy(model, True, max_len_b)
        found = searcher.search([replace(r, draft=d) for r, d in zip(requests, drafts)])
        assert [nbest[0].tokens for nbest in found] == outputs, kind
        for a, b in zip(found, plain):
            assert len(a) == 1 and a[0].logprob == pytest.approx(b[0].logprob, abs=1e-4), kind
            assert a[0].score == pytest.approx(b[0].score, abs=1e-4), kind
        counters = searcher.draft_counters()
        assert counters["verified_requests"] == len(requests), kind
        # each request keeps its encoder output and its cache from pass to pass and into its continuation
        assert searcher.encoder_positions == sum(len(r.source) for r in requests), f"{kind}: a source encoded again"
        if kind == "its output":  # every draft token accepted, and only the end decided after them
            assert counters["accepted_tokens"] == counters["draft_tokens"] == sum(map(len, outputs))
            assert counters["decoded_tokens"] == len(requests)
        if kind in ("garbage", "empty"):
            assert counters["accepted_tokens"] <= sum(o[:1] == d[:1] for o, d in zip(outputs, drafts))


def test_verification_is_off_under_beam_search_and_for_requests_without_a_draft(toy):
    root, _, model = toy
    requests, _ = context_requests(root, model)
    beam = Searcher(model, beam=4)
    beam.verify_drafts = True
    assert not verifies(beam)
    drafted = [replace(r, draft=[5, 6]) for r in requests[:3]] + list(requests[3:6])
    assert [n[0].tokens for n in beam.search(drafted)] == [n[0].tokens for n in Searcher(model, beam=4).search(
        requests[:6])] and not beam.draft_counters()
    searcher = greedy(model, True)
    found = searcher.search(drafted)  # the requests without a draft are searched as they are, in the same call
    assert [n[0].tokens for n in found] == [n[0].tokens for n in greedy(model, False).search(requests[:6])]
    assert searcher.draft_counters()["verified_requests"] == 3


def test_the_accepted_length_is_the_longest_prefix_of_greedy_choices():
    assert accepted_length([5, 6, 7, 2], [5, 6, 8]) == 2
    assert accepted_length([5, 6, 7, 2], [5, 6, 7]) == 3
    assert accepted_length([9], []) == 0 and accepted_length([5, 2], [6]) == 0


# ---- the strategies' drafts, on the fake model ------------------------------------------------------------------
def test_2_pass_and_parallel_doc_trans_give_their_searches_the_first_pass_and_the_last_rounds_output():
    from fakemodel import FakeModel, RecordingSearcher
    from docnmt.decode.strategies import REGISTRY, Decoder
    from test_strategy_requests import documents, sentence_level_outputs

    first = sentence_level_outputs()
    for strategy, mode in (("2-pass", "sequential"), ("doc-trans", "parallel")):
        searcher = RecordingSearcher(FakeModel())
        searcher.verify_drafts = True
        REGISTRY[strategy](Decoder(searcher, k=3, h=1, doc_trans_mode=mode), documents(first_pass=first))
        model, seen, answers = searcher.model, {}, {}
        for call in searcher.calls:
            for request in call:
                seen.setdefault(request.line, []).append(model.decode(request.draft))
                answers.setdefault(request.line, []).append(model.decode(searcher._answer(request)[0].tokens))
        flat = [s for doc in first for s in doc]
        assert all(drafts[0] == flat[line] for line, drafts in seen.items()), "round 1's draft is the first pass"
        if strategy == "doc-trans":  # a later round's draft is the sentence's output of the round before
            redecoded = [line for line, drafts in seen.items() if len(drafts) > 1]
            assert redecoded and all(seen[line][j] == answers[line][j - 1].split(" <sep> ")[0]
                                     for line in redecoded for j in range(1, len(seen[line])))
        searcher = RecordingSearcher(FakeModel())  # off: no drafts
        REGISTRY[strategy](Decoder(searcher, k=3, h=1, doc_trans_mode=mode), documents(first_pass=first))
        assert all(request.draft is None for call in searcher.calls for request in call)


def test_a_tiling_covers_every_sentence_with_the_fewest_windows_that_reach_furthest():
    from docnmt.decode.overlapping import spans, tiling

    assert tiling(spans(7, 3, keep_last=True)) == [2, 5, 6], "sentences 0-2, 3-5, then 4-6 for the last"
    assert tiling(spans(7, 3, keep_last=False)) == [0, 3, 4], "sentences 0-2, 3-5, then 4-6 for the last"
    assert tiling(spans(2, 3, keep_last=True)) == [1] and tiling(spans(2, 3, keep_last=False)) == [0]
    assert tiling(spans(1, 3, keep_last=True)) == [0] and tiling(spans(0, 3, keep_last=True)) == []
    assert tiling(spans(4, 1, keep_last=True)) == [0, 1, 2, 3], "k=1: every window is the tiling"


@pytest.mark.parametrize("strategy", ["last-sentence", "first-sentence"])
def test_the_overlapping_windows_take_the_tilings_translations_as_drafts(strategy):
    """The tiling's windows first (no draft), then every other window with its sentences' translations from the tiling,
    joined by <sep>, up to the first sentence whose tiling window had another number of segments ("it flies twice");
    the outputs and the recorded context are those of one call without drafts."""
    from fakemodel import FakeModel, RecordingSearcher
    from docnmt.decode.overlapping import spans, tiling
    from docnmt.decode.strategies import REGISTRY, Decoder
    from test_strategy_requests import SOURCES, documents

    keep_last = strategy == "last-sentence"
    found = []
    for verify in (False, True):
        searcher = RecordingSearcher(FakeModel())
        searcher.verify_drafts = verify
        dec = Decoder(searcher, k=3, h=1)
        found.append((REGISTRY[strategy](dec, documents()), dict(dec.stats.generated_context), dec.stats.rounds,
                      dec.stats.sep_mismatch))
    assert found[0][:2] == found[1][:2] and found[0][3] == found[1][3]
    assert (found[0][2], found[1][2]) == (1, 2), "one search call without drafts, two with"
    model = searcher.model
    first_call, second_call = searcher.calls
    firsts = [(n, i) for n, src in enumerate(SOURCES) for i in tiling(spans(len(src), 3, keep_last))]
    assert [r.line for r in first_call] == [sum(map(len, SOURCES[:n])) + i for n, i in firsts]
    assert all(r.draft is None for r in first_call)
    tiled = {}
    for (n, i), request in zip(firsts, first_call):
        start, stop = spans(len(SOURCES[n]), 3, keep_last)[i]
        answer = model.decode(searcher._answer(request)[0].tokens).split(" <sep> ")
        if len(answer) == stop - start:
            for s, segment in zip(range(start, stop), answer):
                tiled.setdefault((n, s), segment)
    line_of = {sum(map(len, SOURCES[:n])) + i: (n, i) for n, src in enumerate(SOURCES) for i in range(len(src))}
    assert len(second_call) == sum(map(len, SOURCES)) - len(firsts)
    for request in second_call:
        n, i = line_of[request.line]
        start, stop = spans(len(SOURCES[n]), 3, keep_last)[i]
        known = []
        for s in range(start, stop):
            if (n, s) not in tiled:
                break
            known.append(tiled[(n, s)])
        assert (model.decode(request.draft) if request.draft is not None else None) == \
            (" <sep> ".join(known) if known else None), (n, i)
    assert any(request.draft is None for request in second_call), "a window of the twice sentence's document"


# ---- causal-lm: the tiny Llama ------------------------------------------------------------------------------------
#: The module's fixtures that train a model (conftest gives their tests the tier ``trains``).
TRAINING_FIXTURES = {"llama_greedy", "marian_greedy"}


@pytest.fixture(scope="module")
def llama_greedy(tiny_llama):
    from docnmt.decode.backends import load_model

    return load_model("causal-lm", tiny_llama, src_lang="en", tgt_lang="de", device="cpu")


def llm_searcher(model, verify: bool):
    from docnmt.decode.backends.causal_lm.model import CausalLMSearcher

    searcher = CausalLMSearcher(model, beam=1, max_new_tokens=40, batch_size=4)
    searcher.verify_drafts = verify
    return searcher


def test_a_causal_lms_verified_drafts_give_its_greedy_answers(llama_greedy):
    """Any draft (the answer, a part, garbage, empty, too long) on single requests, and 2-pass, parallel doc-trans,
    refine (its draft sentence as the answer's draft) and the overlapping windows (the tiling's translations) on
    documents: the answers without verification, byte for byte."""
    import llmmodel
    from docnmt.decode.documents import group
    from docnmt.decode.strategies import REGISTRY, Decoder

    _, docs = llmmodel.demo_documents()
    docs = group([s for d in docs[:3] for s in d.src], [d.docid for d in docs[:3] for _ in d.src])
    model = llama_greedy
    requests = [Request(model.encode(s, source=True), [], line=n) for n, s in enumerate(docs[0].src)]
    plain = llm_searcher(model, False).search(requests)
    outputs = [model.encode(model.decode(nbest[0].tokens))[:-1] for nbest in plain]
    for kind, drafts in drafts_of(outputs, model.vocab).items():
        searcher = llm_searcher(model, True)
        found = searcher.search([replace(r, draft=d) for r, d in zip(requests, drafts)])
        assert [n[0].tokens for n in found] == [n[0].tokens for n in plain], kind
        assert searcher.draft_counters()["verified_requests"] == len(requests), kind
    first = REGISTRY["sentence-level"](Decoder(llm_searcher(model, False), k=3, h=1), docs)
    for doc, hyps in zip(docs, first):
        doc.first_pass = doc.draft = hyps
    for strategy, mode in (("2-pass", "sequential"), ("doc-trans", "parallel"), ("refine", "sequential"),
                           ("last-sentence", "sequential"), ("first-sentence", "sequential")):
        found, counters = [], []
        for verify in (False, True):
            searcher = llm_searcher(model, verify)
            found.append(REGISTRY[strategy](Decoder(searcher, k=3, h=1, doc_trans_mode=mode), docs))
            counters.append(searcher.draft_counters())
        assert found[0] == found[1] and not counters[0], strategy
        # the tiny Llama answers a window of three sentences with one line: no tiling window has a translation for
        # each of its sentences, so the overlapping windows have no drafts (searched in two calls all the same)
        assert bool(counters[1].get("verified_requests")) == (not strategy.endswith("-sentence")), strategy


# ---- transformers: the tiny Marian and M2M100 ----------------------------------------------------------------------
def hf_searcher(model, verify: bool):
    from docnmt.decode.backends.transformers.model import HFSearcher

    searcher = HFSearcher(model, beam=1, max_new_tokens=60, batch_size=16)
    searcher.verify_drafts = verify
    return searcher


@pytest.fixture(scope="module")
def marian_greedy(hf_marian):
    from docnmt.decode.backends.transformers.model import HFModel

    return HFModel(hf_marian, separator="<brk>", device="cpu")


def hf_documents(count: int | None = None):
    import hfmodel
    from docnmt.decode.documents import group

    _, docs = hfmodel.demo_documents()
    docs = docs[:count]
    return group([s for d in docs for s in d.src], [d.docid for d in docs for _ in d.src],
                 [t for d in docs for t in d.tgt])


@pytest.mark.parametrize("name", ["marian", "m2m100"])
def test_a_seq2seq_models_verified_drafts_give_its_greedy_output(name, request):
    """Any draft (the output, a part, garbage, empty, too long, ids it cannot generate) on the demo's test sentences,
    with a target context and without: the greedy search's output, log-prob and score, on Marian and on M2M100 (a
    language token after the start token)."""
    from docnmt.decode.backends.transformers.model import HFModel

    model = HFModel(request.getfixturevalue(f"hf_{name}"), separator="<brk>", device="cpu",
                    **({"src_lang": "en", "tgt_lang": "de"} if name == "m2m100" else {}))
    docs = hf_documents(4)
    requests = [Request(model.encode(s, source=True), [], line=n) for n, s in enumerate(docs[0].src)]
    requests += [Request(model.encode(" <sep> ".join(d.src[i - 1:i + 1]), source=True),
                         model.encode(d.ref[i - 1] + " <sep>")[:-1]) for d in docs[1:] for i in range(1, len(d.src))]
    plain = hf_searcher(model, False).search(requests)
    outputs = [nbest[0].tokens for nbest in plain]
    for kind, drafts in drafts_of(outputs, model.vocab).items():
        searcher = hf_searcher(model, True)
        found = searcher.search([replace(r, draft=d) for r, d in zip(requests, drafts)])
        assert [n[0].tokens for n in found] == outputs, kind
        for a, b in zip(found, plain):
            assert a[0].logprob == pytest.approx(b[0].logprob, abs=1e-4), kind
            assert a[0].score == pytest.approx(b[0].score, abs=1e-4), kind
        counters = searcher.draft_counters()
        assert counters["verified_requests"] == len(requests), kind
        if kind == "its output":
            assert counters["accepted_tokens"] == counters["draft_tokens"] == sum(map(len, outputs))


@pytest.mark.parametrize("setting", [{"no_repeat_ngram_size": 2}, {"repetition_penalty": 1.5},
                                     {"min_new_tokens": 12}, {"bad_words_ids": [[5], [6]]}])
def test_a_seq2seq_models_logits_processors_rule_its_greedy_search_and_its_verification(hf_marian, setting):
    """A generation config that adds a logits processor: the greedy search is still generate(num_beams=1)'s, and a
    verified draft (the output with a wrong token in its middle) gives it, since the pass applies the processors at
    each position."""
    import torch
    from docnmt.decode.backends.transformers.model import HFModel

    model = HFModel(hf_marian, separator="<brk>", device="cpu")
    for key, value in setting.items():
        setattr(model.net.generation_config, key, value)
    sentences = hf_documents(2)[0].src + hf_documents(2)[1].src
    requests = [Request(model.encode(s, source=True)) for s in sentences]
    outputs = [nbest[0].tokens for nbest in hf_searcher(model, False).search(requests)]
    with torch.no_grad():
        generated = model.net.generate(**model.tokenizer(sentences, return_tensors="pt", padding=True), num_beams=1,
                                       do_sample=False, max_new_tokens=60).tolist()
    assert [[t for t in row[1:] if t not in (model.eos, model.pad)] for row in generated] == outputs
    searcher = hf_searcher(model, True)
    drafts = [o[:len(o) // 2] + [7] + o[len(o) // 2:] for o in outputs]
    assert [n[0].tokens for n in searcher.search([replace(r, draft=d) for r, d in zip(requests, drafts)])] == outputs
    assert searcher.draft_counters()["accepted_tokens"] > 0


def test_a_seq2seq_models_strategies_give_the_same_translations_with_their_drafts_verified(marian_greedy):
    """2-pass, parallel doc-trans and the overlapping windows at beam 1 on the tiny Marian: the translations without
    verification, byte for byte, each with drafts verified."""
    from docnmt.decode.strategies import REGISTRY, Decoder

    docs = hf_documents()
    first = REGISTRY["sentence-level"](Decoder(hf_searcher(marian_greedy, False), k=3, h=1), docs)
    for doc, hyps in zip(docs, first):
        doc.first_pass = doc.draft = hyps
    for strategy, mode in (("2-pass", "sequential"), ("doc-trans", "parallel"), ("last-sentence", "sequential"),
                           ("first-sentence", "sequential")):
        found, counters = [], []
        for verify in (False, True):
            searcher = hf_searcher(marian_greedy, verify)
            found.append(REGISTRY[strategy](Decoder(searcher, k=3, h=1, doc_trans_mode=mode), docs))
            counters.append(searcher.draft_counters())
        assert found[0] == found[1] and not counters[0], strategy
        assert counters[1]["verified_requests"] > 0 and counters[1]["accepted_tokens"] > 0, strategy

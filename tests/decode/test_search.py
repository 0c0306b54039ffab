"""docnmt.decode.backends.fairseq.search on a tiny model trained here: fairseq-generate equivalence, the prefilled prefix
cache against fairseq's token-by-token prefix forcing, forced scoring, batching, cost counters,
length limits."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest

from docnmt.decode.backends.fairseq.search import Searcher
from docnmt.decode.requests import Hypothesis, Request
from docnmt.textio import InputError

from toymodel import MAX_POSITIONS, env, train


@pytest.fixture(scope="module")
def learned_model(toy_data):
    """A second, briefly trained model: learned positions, pre-norm, layernorm on the embeddings."""
    from docnmt.decode.backends.fairseq.model import Model

    checkpoint = train(toy_data, "learned", "--max-epoch", "3", "--decoder-learned-pos", "--encoder-learned-pos",
                       "--decoder-normalize-before", "--layernorm-embedding")
    return Model(checkpoint, toy_data / "bin")


def lines(root: Path, name: str) -> list[str]:
    return (root / "txt" / name).read_text(encoding="utf-8").splitlines()


def ids(model, text: str) -> list[int]:
    return [model.dict.index(tok) for tok in text.split()]


def context_requests(root: Path, model) -> tuple[list[Request], list[list[int]]]:
    """Test lines as requests: two-sentence lines get their first target sentence and <sep> as the
    prefix (the target context), one-sentence lines no prefix, and every third one-sentence line
    the first one or two reference tokens. Also returns each reference continuation."""
    requests, continuations = [], []
    for number, (src, tgt) in enumerate(zip(lines(root, "test.en"), lines(root, "test.de"))):
        target = tgt.split()
        cut = target.index("<sep>") + 1 if "<sep>" in target else (1 + number % 2 if number % 3 == 0 else 0)
        requests.append(Request(model.encode(src, source=True), ids(model, " ".join(target[:cut]))))
        continuations.append(ids(model, " ".join(target[cut:])))
    return requests, continuations


def assert_same_nbest(got: list[list[Hypothesis]], expected: list[list[Hypothesis]], what: str) -> None:
    assert len(got) == len(expected)
    for number, (a, b) in enumerate(zip(got, expected)):
        assert [h.tokens for h in a] == [h.tokens for h in b], f"request {number}: {what} found other hypotheses"
        for h, g in zip(a, b):
            assert h.score == pytest.approx(g.score, abs=1e-4), f"request {number}: {what}, score of {h.tokens}"
            assert h.logprob == pytest.approx(g.logprob, abs=1e-4), f"request {number}: {what}, logprob of {h.tokens}"


# ---- empty prefix: exactly fairseq-generate -----------------------------------------------------
def test_empty_prefix_search_equals_fairseq_generate(toy):
    root, checkpoint, model = toy
    beam, batch = 12, 8
    result = subprocess.run(
        [sys.executable, "-m", "fairseq_cli.generate", str(root / "bin"), "--path", str(checkpoint),
         "--gen-subset", "test", "--beam", str(beam), "--lenpen", "1", "--max-len-a", "0", "--max-len-b", "200",
         "--batch-size", str(batch), "--required-batch-size-multiple", "1", "--cpu"],
        capture_output=True, text=True, env=env(),
    )
    assert result.returncode == 0, result.stderr[-3000:]
    generated = {}
    for line in result.stdout.splitlines():
        if line.startswith("H-"):
            number, score, text = line.split("\t")
            assert int(number[2:]) not in generated, f"two H- lines for {number}"
            generated[int(number[2:])] = (float(score), text)
    sources = lines(root, "test.en")
    assert sorted(generated) == list(range(len(sources))), "fairseq-generate: one hypothesis per source line"

    searcher = Searcher(model, beam=beam, lenpen=1.0, max_len_a=0, max_len_b=200, batch_size=batch)
    nbest = searcher.search([Request(model.encode(s, source=True)) for s in sources])
    for number, hyps in enumerate(nbest):
        assert len(hyps) == beam, "nbest = beam hypotheses per request"
        assert [h.score for h in hyps] == sorted((h.score for h in hyps), reverse=True), "best first"
        fairseq_score, fairseq_text = generated[number]
        assert " ".join(model.dict[t] for t in hyps[0].tokens) == fairseq_text, f"line {number}: other best hypothesis"
        assert hyps[0].score / math.log(2) == pytest.approx(fairseq_score, abs=1e-4), (
            f"line {number}: fairseq prints the normalized score in base 2")
        assert hyps[0].logprob / (len(hyps[0].tokens) + 1) == pytest.approx(hyps[0].score, abs=1e-5), (
            "lenpen 1: score = logprob / (tokens + </s>)")


# ---- prefixes: cache == naive forcing == forced scoring -----------------------------------------
def test_prefilled_cache_equals_naive_prefix_forcing_with_mixed_prefix_lengths(toy):
    root, _, model = toy
    requests, _ = context_requests(root, model)
    assert len({len(r.prefix) for r in requests}) >= 4, "one batch mixes several prefix lengths, 0 included"
    searcher = Searcher(model, beam=12, batch_size=len(requests))
    assert_same_nbest(searcher.search(requests), searcher.search_naive_prefix(requests), "the cached path")


def test_score_forced_equals_model_score_after_the_prefix(toy):
    root, _, model = toy
    requests, continuations = context_requests(root, model)
    searcher = Searcher(model, batch_size=len(requests))
    forced = searcher.score_forced(requests, continuations)
    decode = lambda tokens: " ".join(model.dict[t] for t in tokens)  # noqa: E731
    # the prefix ends in <sep> (or is empty): after_last_sep scores exactly the continuation and </s>
    full = model.score([decode(r.source[:-1]) for r in requests],
                       [decode(list(r.prefix) + c) for r, c in zip(requests, continuations)], after_last_sep=True)
    for number, (mine, reference) in enumerate(zip(forced, full)):
        if requests[number].prefix and requests[number].prefix[-1] != model.sep:
            continue  # a prefix inside a sentence: Model.score has no way to skip it
        assert mine.tokens == reference.tokens
        assert mine.logprob == pytest.approx(reference.logprob, abs=1e-4), f"request {number}: cache + one pass"
    assert sum(1 for r in requests if r.prefix and r.prefix[-1] == model.sep) >= 3, "several real target contexts"


def test_forced_passes_batch_rows_of_like_decoder_width_so_a_long_row_pads_no_short_ones(toy):
    """A first pass that repeated itself to the token limit gives a long prefix or output (2-pass, verified drafts):
    its forced pass goes with rows at least half as wide, the widest first, and the scores stay the same."""
    from docnmt.decode.backends.fairseq.prefix_cache import forced_passes

    root, _, model = toy
    requests, continuations = context_requests(root, model)
    t3 = model.dict.index("t3")
    requests.insert(3, Request(requests[3].source, [t3] * 30))  # the toy's positions: 64
    continuations.insert(3, [t3] * 25)
    searcher = Searcher(model, batch_size=len(requests))
    checked = searcher._check(requests)
    outputs = [c + [model.eos] for c in continuations]
    width = [len(prefix) + len(output) for (_, prefix, _), output in zip(checked, outputs)]
    batches = [batch for batch, _, _ in forced_passes(searcher, checked, outputs)]
    assert sorted(i for batch in batches for i in batch) == list(range(len(requests)))
    assert batches[0] == [3], "the long row alone: every other row is less than half as wide"
    for batch in batches:
        assert all(2 * width[i] > width[batch[0]] for i in batch)
        assert [width[i] for i in batch] == sorted((width[i] for i in batch), reverse=True)
    one_at_a_time = [Searcher(model, batch_size=1).score_forced([r], [c])[0] for r, c in zip(requests, continuations)]
    for mine, alone in zip(searcher.score_forced(requests, continuations), one_at_a_time):
        assert mine.tokens == alone.tokens and mine.logprob == pytest.approx(alone.logprob, abs=1e-4)


def test_hypotheses_are_only_the_continuation_after_the_prefix(toy):
    root, _, model = toy
    requests, _ = context_requests(root, model)
    searcher = Searcher(model, beam=4, batch_size=len(requests))
    nbest = searcher.search(requests)
    # scoring each hypothesis *after* the prefix gives back its log-prob: the prefix is not in it
    forced = searcher.score_forced([r for r, hyps in zip(requests, nbest) for _ in hyps],
                                   [h.tokens for hyps in nbest for h in hyps])
    found = [h for hyps in nbest for h in hyps]
    for h, scored in zip(found, forced):
        assert scored.tokens == len(h.tokens) + 1
        assert scored.logprob == pytest.approx(h.logprob, abs=1e-4)
    # a prefix that fills the decoder up to the last two positions leaves room for one token and </s>
    t3 = model.dict.index("t3")
    long = [Request(model.encode("s1 s2 s3", source=True), [t3] * (MAX_POSITIONS - 2))]
    for hyps in (searcher.search(long), searcher.search_naive_prefix(long)):
        assert all(len(h.tokens) <= 1 for h in hyps[0]), "no prefix token in the output, at most one generated"
    assert_same_nbest(searcher.search(long), searcher.search_naive_prefix(long), "at the length limit")


def test_batching_does_not_change_the_output(toy):
    root, _, model = toy
    requests, _ = context_requests(root, model)
    batched = Searcher(model, beam=12, batch_size=len(requests)).search(requests)
    single = Searcher(model, beam=12, batch_size=1)
    one_at_a_time = [single.search([r])[0] for r in requests]
    assert_same_nbest(batched, one_at_a_time, "one request at a time")
    assert_same_nbest(Searcher(model, beam=12, batch_size=5).search(requests), batched, "batches of 5 (order restored)")


def test_a_batch_that_runs_out_of_memory_is_split_in_two_until_it_fits(toy, monkeypatch):
    """torch.OutOfMemoryError injected into every batch of more than 3 requests: the searcher splits each in two
    (Counted.searched_in_halves), counts the splits, and gives the n-best lists of the unsplit search."""
    import torch

    root, _, model = toy
    requests, _ = context_requests(root, model)
    expected = Searcher(model, beam=4, batch_size=len(requests)).search(requests)
    searcher = Searcher(model, beam=4, batch_size=len(requests))
    search_batch = Searcher._search_batch

    def short_of_memory(self, batch, naive, *args):
        if len(batch) > 3:
            raise torch.OutOfMemoryError("CUDA out of memory")
        return search_batch(self, batch, naive, *args)

    monkeypatch.setattr(Searcher, "_search_batch", short_of_memory)
    assert_same_nbest(searcher.search(requests), expected, "split batches")
    assert searcher.oom_splits >= len(requests) // 4 > 0


def test_max_len_limits_the_continuation_on_both_paths(toy):
    root, _, model = toy
    requests, _ = context_requests(root, model)
    searcher = Searcher(model, beam=6, max_len_a=0, max_len_b=2, batch_size=len(requests))
    cached = searcher.search(requests)
    assert all(len(h.tokens) <= 2 for hyps in cached for h in hyps), "at most max_len_b tokens before </s>"
    assert_same_nbest(cached, searcher.search_naive_prefix(requests), "with max_len_b=2")


# ---- shared prefix (cascade attention) == the prefix cache repeated to the beams ----------------
def ragged_requests(root: Path, model) -> list[Request]:
    """Test sources with forced contexts of ragged lengths, 0 (no context) to 40 tokens, taken from the
    reference text (a context need not be the source's; the search must not care)."""
    pool = " <sep> ".join(lines(root, "test.de")).split()
    requests = []
    for number, src in enumerate(lines(root, "test.en")):
        length = [0, 1, 3, 0, 7, 12, 25, 40][number % 8]
        requests.append(Request(model.encode(src, source=True), ids(model, " ".join(pool[number:number + length]))))
    return requests


def assert_same_search(got, expected, what: str, tolerance: float = 1e-5) -> None:
    """Same hypotheses in the same order, scores (length-normalized) within ``tolerance``; log-probs
    (sums over up to 200 tokens, e.g. -66 for a degenerate one) within ``tolerance`` relative."""
    assert len(got) == len(expected)
    for number, (a, b) in enumerate(zip(got, expected)):
        assert [h.tokens for h in a] == [h.tokens for h in b], f"request {number}: {what} found other hypotheses"
        assert max(abs(h.score - g.score) for h, g in zip(a, b)) <= tolerance, f"request {number}: {what}, scores"
        for h, g in zip(a, b):
            assert abs(h.logprob - g.logprob) <= tolerance * max(1.0, abs(g.logprob)), f"request {number}: {what}, logprob"


@pytest.mark.parametrize("batch_size", [24, 5])
def test_shared_prefix_equals_the_repeated_cache_with_ragged_contexts(toy, batch_size, monkeypatch):
    import docnmt.decode.backends.fairseq.prefix_cache as prefix_cache

    root, _, model = toy
    requests = ragged_requests(root, model)
    assert {len(r.prefix) for r in requests} == {0, 1, 3, 7, 12, 25, 40}
    followed = []
    follow = prefix_cache.SharedPrefix.follow

    def spy(self):
        before = self.count
        follow(self)
        if self.count != before:
            followed.append((before, self.count))

    monkeypatch.setattr(prefix_cache.SharedPrefix, "follow", spy)
    shared = Searcher(model, beam=12, batch_size=batch_size)
    repeated = Searcher(model, beam=12, batch_size=batch_size, shared_prefix=False)
    shared.track_cache = repeated.track_cache = True
    got = shared.search(requests)
    assert followed, "finished requests were dropped from the batch and the context followed them"
    assert_same_search(got, repeated.search(requests), "the shared prefix against the repeated cache")
    assert shared.decoder_positions == repeated.decoder_positions
    assert shared.cache_bytes_peak < repeated.cache_bytes_peak / 2, (
        f"the context is held once per request: {shared.cache_bytes_peak} against {repeated.cache_bytes_peak} bytes")
    assert_same_nbest(got, shared.search_naive_prefix(requests), "the shared prefix against naive forcing")


def test_shared_prefix_equals_the_repeated_cache_on_the_context_requests(toy):
    root, _, model = toy
    requests, _ = context_requests(root, model)
    for beam in (1, 5):
        assert_same_search(Searcher(model, beam=beam, batch_size=7).search(requests),
                           Searcher(model, beam=beam, batch_size=7, shared_prefix=False).search(requests),
                           f"beam {beam}")


# ---- cost counters --------------------------------------------------------------------------------
def test_decoder_positions_count_the_prefix_once_cached_and_beam_times_naive(toy):
    root, _, model = toy
    requests, _ = context_requests(root, model)
    beam = 12
    searcher = Searcher(model, beam=beam, batch_size=len(requests))
    prefix_total = sum(len(r.prefix) for r in requests)

    searcher.search(requests)
    cached = searcher.decoder_positions
    assert searcher.encoder_positions == sum(len(r.source) for r in requests)
    searcher.reset_counters()
    assert (searcher.forward_calls, searcher.decoder_positions, searcher.encoder_positions) == (0, 0, 0)
    searcher.search_naive_prefix(requests)
    naive = searcher.decoder_positions
    # the continuation steps are the same on both paths; the prefix costs L positions once per
    # request on the cached path and beam * L on the naive one
    assert naive - cached == (beam - 1) * prefix_total, f"cached {cached}, naive {naive}, prefixes {prefix_total}"

    # one request: every generator step computes `beam` positions; the prefill is one call of L positions
    request = next(r for r in requests if len(r.prefix) > 2)
    searcher.reset_counters()
    searcher.search([request])
    steps = searcher.forward_calls - 1
    assert searcher.decoder_positions == len(request.prefix) + beam * steps
    searcher.reset_counters()
    searcher.search_naive_prefix([request])
    assert searcher.forward_calls == len(request.prefix) + steps, "naive: one call per forced prefix token more"
    assert searcher.decoder_positions == beam * (len(request.prefix) + steps)
    searcher.reset_counters()
    searcher.search([Request(request.source)])
    assert searcher.decoder_positions == beam * searcher.forward_calls, "no prefix: no prefill pass"


# ---- limits and odd inputs --------------------------------------------------------------------------
def test_too_long_source_or_prefix_is_an_input_error(toy):
    _, _, model = toy
    searcher = Searcher(model, beam=2)
    t3, s3 = model.dict.index("t3"), model.src_dict.index("s3")
    source = model.encode("s1 s2", source=True)
    with pytest.raises(InputError, match=r"request 2: source too long: 65 tokens .* max source positions are 64"):
        searcher.search([Request(source), Request([s3] * MAX_POSITIONS + [model.eos])])
    with pytest.raises(InputError, match=r"request 1: prefix too long: 63 tokens, at most 62 fit"):
        searcher.search_naive_prefix([Request(source, [t3] * (MAX_POSITIONS - 1))])
    with pytest.raises(InputError, match=r"prefix and target too long: 65 tokens"):
        searcher.score_forced([Request(source, [t3] * 60)], [[t3] * 4])
    with pytest.raises(InputError, match=r"expected source ids ending in </s>"):
        searcher.search([Request(source[:-1])])
    with pytest.raises(InputError, match=r"prefix ids .* found id 2 \(</s>\)"):
        searcher.search([Request(source, [t3, model.eos])])


def test_empty_source_is_searched_like_any_other(toy):
    _, _, model = toy
    searcher = Searcher(model, beam=5)
    empty = [Request([model.eos]), Request([model.eos], ids(model, "t1 t2 <sep>"))]
    nbest = searcher.search(empty)
    assert [len(hyps) for hyps in nbest] == [5, 5]
    assert all(math.isfinite(h.score) and h.logprob < 0 for hyps in nbest for h in hyps)
    assert_same_nbest(nbest, searcher.search_naive_prefix(empty), "an empty source")


def test_search_leaves_the_model_as_it_was(toy):
    _, _, model = toy
    decoder = model.model.decoder
    positions = decoder.embed_positions
    before = model.score(["s1 s2"], ["t2 t1"])[0].logprob
    Searcher(model, beam=3).search([Request(model.encode("s1 s2", source=True), ids(model, "t5 <sep>"))])
    assert decoder.embed_positions is positions, "the per-row position wrapper is removed after the search"
    assert all("forward" not in layer.self_attn.__dict__ for layer in decoder.layers), "the cascade attention is removed"
    assert all(layer.encoder_attn.beam_size == 1 for layer in decoder.layers), "beamable encoder attention is reset"
    assert model.score(["s1 s2"], ["t2 t1"])[0].logprob == pytest.approx(before, abs=1e-6)


# ---- other architectures ----------------------------------------------------------------------------
def test_learned_positions_and_prenorm_cache_equals_naive(toy, learned_model):
    root, _, _ = toy
    model = learned_model
    requests, continuations = context_requests(root, model)
    searcher = Searcher(model, beam=4, batch_size=len(requests))
    cached = searcher.search(requests)
    assert_same_nbest(cached, searcher.search_naive_prefix(requests), "learned positions")
    repeated = Searcher(model, beam=4, batch_size=len(requests), shared_prefix=False).search(requests)
    assert_same_search(cached, repeated, "learned positions, the shared prefix against the repeated cache")
    forced = searcher.score_forced(requests, [hyps[0].tokens for hyps in cached])
    for hyps, scored in zip(cached, forced):
        assert scored.logprob == pytest.approx(hyps[0].logprob, abs=1e-3), "cache + one pass, learned positions"


# ---- what the search keeps (issue 60: its cost) ------------------------------------------------------
@pytest.mark.parametrize("which", ["toy", "learned"])
def test_the_prefill_computes_the_last_layers_keys_alone_and_caches_what_the_whole_layer_would(toy, learned_model, which,
                                                                                              monkeypatch):
    """The prefill stops at the last layer's self-attention keys and values; they are bit for bit those of the
    whole teacher-forced pass (post-norm and pre-norm), so the search and forced scoring read the same cache."""
    import torch

    from docnmt.decode.backends.fairseq import prefix_cache

    root, _, model = toy
    model = learned_model if which == "learned" else model
    requests, _ = context_requests(root, model)
    searcher = Searcher(model, beam=4)
    checked = searcher._check(requests)
    prefixes = [prefix for _, prefix, _ in checked]
    assert any(prefixes) and not all(prefixes), "the requests mix prefixes of several lengths with none"
    whole = prefix_cache.decode_after_cache

    def without_keys_only(*args, keys_only=False, **kwargs):
        return whole(*args, **kwargs)

    with torch.no_grad():
        _, encoder_out = searcher._encode([source for source, _, _ in checked])
        cut = prefix_cache.prefill(searcher, prefixes, encoder_out)
        monkeypatch.setattr(prefix_cache, "decode_after_cache", without_keys_only)
        full = prefix_cache.prefill(searcher, prefixes, encoder_out)
    assert len(cut) == len(full) == len(model.model.decoder.layers)
    for layer, (a, b) in enumerate(zip(cut, full)):
        for name, x, y in zip(("keys", "values", "padding"), a, b):
            assert torch.equal(x, y), f"layer {layer}: the prefill's {name} differ from the whole pass's"


def test_the_encoder_output_stays_one_per_request_while_requests_finish(toy, monkeypatch):
    """The beamable encoder attention reads the source at step 0 only: the search never copies the encoder output
    to the beams, and keeps the remaining requests' rows when finished ones are dropped. Its n-best lists are those
    of the naive path, which keeps fairseq's copy per beam."""
    root, _, model = toy
    requests, _ = context_requests(root, model)
    decoder = model.model.decoder
    seen = []
    forward = type(decoder).forward

    def recording(self, tokens, encoder_out=None, incremental_state=None, **kwargs):
        seen.append((tokens.size(0), encoder_out["encoder_out"][0].size(1)))
        return forward(self, tokens, encoder_out=encoder_out, incremental_state=incremental_state, **kwargs)

    searcher = Searcher(model, beam=4, batch_size=len(requests))
    monkeypatch.setattr(type(decoder), "forward", recording)
    cached = searcher.search(requests)
    monkeypatch.undo()
    assert seen and all(rows == 4 * sources for rows, sources in seen), "one encoder row per request, 4 beams each"
    assert len({rows for rows, _ in seen}) > 1, "requests finished at different steps and were dropped"
    assert_same_nbest(cached, searcher.search_naive_prefix(requests), "the encoder output kept once per request")

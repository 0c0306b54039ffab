"""The search strategies on the trained demo models: the paper's invariants and edge cases with a real search.

These read make demo's models (``demo_models``), not the mechanics demo's: their equalities on long documents need
its 100 test documents (joined into documents of about 100 sentences). tests/decode/test_strategy_requests.py checks
the strategies' logic on a model that needs no training."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import REAL_SAMPLES, tool_env
from docnmt.corpora.corpus import read_docids
from docnmt.decode.documents import group
from docnmt.decode.strategies import REGISTRY, Decoder, strategies_for, take_over_round_one
from docnmt.textio import InputError, read_lines

pytestmark = pytest.mark.workflow

BEAM = 4


@pytest.fixture(scope="module")
def demo(demo_models):
    from docnmt.decode.backends.fairseq.model import Model

    w = demo_models
    return {
        "workdir": w,
        "src": read_lines(w / "data/demo/bpe/test.en"),
        "ref": read_lines(w / "data/demo/bpe/test.de"),
        "ids": read_docids(w / "data/demo/corpus/test.docids"),
        "doc": Model(w / "results/demo/models/document/checkpoint_best.pt", w / "data/demo/bin/document"),
        "sent": Model(w / "results/demo/models/sentence/checkpoint_best.pt", w / "data/demo/bin/sentence"),
    }


def documents(demo, n_docs=12, ref=True, first_pass=None):
    docs = group(demo["src"], demo["ids"], demo["ref"] if ref else None, first_pass)
    return docs[:n_docs] if n_docs else docs


def decode(demo, strategy, docs, k=3, h=12, beam=BEAM, mode="sequential", max_rounds=None, switch_share=None):
    from docnmt.decode.backends.fairseq.search import Searcher

    model = demo["sent"] if strategy == "sentence-level" else demo["doc"]
    searcher = Searcher(model, beam=beam)
    more = {} if switch_share is None else {"switch_share": switch_share}
    dec = Decoder(searcher, k=k, h=h, doc_trans_mode=mode, max_rounds=max_rounds, **more)
    out = REGISTRY[strategy](dec, docs)
    assert [len(o) for o in out] == [len(d) for d in docs], f"{strategy}: one hypothesis per sentence"
    return out, dec, searcher


def test_doc_trans_beam_with_h1_equals_doc_trans(demo):
    docs = documents(demo)
    assert decode(demo, "doc-trans-beam", docs, h=1)[0] == decode(demo, "doc-trans", docs)[0]


def test_with_k1_last_first_and_no_context_agree(demo):
    docs = documents(demo)
    outputs = {s: decode(demo, s, docs, k=1)[0] for s in ("last-sentence", "first-sentence", "no-context")}
    assert outputs["last-sentence"] == outputs["no-context"] == outputs["first-sentence"]


def fairseq_generate(w: Path) -> dict[int, str]:
    """fairseq-generate's hypotheses of the demo's sentence model on the test set, by line."""
    result = subprocess.run(
        [sys.executable, "-m", "fairseq_cli.generate", str(w / "data/demo/bin/sentence"),
         "--path", str(w / "results/demo/models/sentence/checkpoint_best.pt"), "--gen-subset", "test",
         "--beam", str(BEAM), "--lenpen", "1", "--max-len-a", "0", "--max-len-b", "200", "--batch-size", "64",
         "--required-batch-size-multiple", "1", "--cpu"],
        capture_output=True, text=True, env=tool_env(), check=True,
    )
    generated = {}
    for line in result.stdout.splitlines():
        match = re.match(r"^H-(\d+)\t(\S+)\t(.*)$", line)
        if match:
            generated[int(match.group(1))] = match.group(3)
    return generated


def test_sentence_level_equals_fairseq_generate(demo, tmp_path):
    """The decode CLI's sentence-level hypotheses are fairseq-generate's, line by line."""
    from docnmt.decode import cli as decode_cli

    w = demo["workdir"]
    decode_cli.main([
        "--strategy", "sentence-level", "--model", str(w / "results/demo/models/sentence/checkpoint_best.pt"),
        "--data", str(w / "data/demo/bin/sentence"), "--src", str(w / "data/demo/bpe/test.en"),
        "--docids", str(w / "data/demo/corpus/test.docids"), "--beam", str(BEAM), "--tgt-lang", "de",
        "--output-bpe", str(tmp_path / "h.bpe"), "--output", str(tmp_path / "h.txt"), "--sidecar", str(tmp_path / "h.json"),
    ])
    generated = fairseq_generate(w)
    ours = (tmp_path / "h.bpe").read_text(encoding="utf-8").splitlines()
    assert len(generated) == len(ours) == len(demo["src"]), "one hypothesis per source line, from both"
    differ = [i for i in range(len(ours)) if ours[i] != generated[i]]
    assert not differ, f"{len(differ)} lines differ, e.g. line {differ[0] + 1}: {ours[differ[0]]!r} vs {generated[differ[0]]!r}"
    sidecar = json.loads((tmp_path / "h.json").read_text())
    assert sidecar["sentences"] == sidecar["hypotheses"] == len(demo["src"])


def test_forced_prefix_never_appears_in_the_output(demo):
    docs = documents(demo)
    out = decode(demo, "cheating", docs)[0]
    for doc, hyps in zip(docs, out):
        for i, hyp in enumerate(hyps):
            assert "<sep>" not in hyp
            if i > 0 and doc.src[i] != doc.src[i - 1]:
                context = doc.ref[max(0, i - 2):i]
                assert not hyp.startswith(" ".join(context) + " "), f"{doc.docid}:{i + 1} repeats its forced context"
                assert not hyp.startswith(context[-1] + " "), f"{doc.docid}:{i + 1} repeats its forced context"


def test_cheating_really_uses_the_reference(demo):
    docs = documents(demo, n_docs=30)
    original = decode(demo, "cheating", docs)[0]
    others = [r for d in docs[::-1] for r in d.ref]
    for doc in docs:  # another reference: the sentences of other documents as target context
        doc.ref, others = others[:len(doc)], others[len(doc):]
    changed = decode(demo, "cheating", docs)[0]
    differ = sum(a != b for x, y in zip(original, changed) for a, b in zip(x, y))
    assert differ > 0, "changing the reference context must change some output"


def test_full_segment_covers_every_sentence_once_including_a_short_last_window(demo):
    docs = [d for d in documents(demo, n_docs=40) if len(d) % 3 != 0][:8]
    assert docs, "need documents whose length is not a multiple of k"
    out, dec, searcher = decode(demo, "full-segment", docs)
    windows = sum((len(d) + 2) // 3 for d in docs)
    assert dec.stats.requests == windows, "one request per non-overlapping window, the last one shorter"
    assert [len(o) for o in out] == [len(d) for d in docs]


def test_short_documents_a_one_sentence_document_and_an_empty_line(demo):
    docs = documents(demo, n_docs=3)
    docs[0].src, docs[0].ref, docs[0].lines = docs[0].src[:1], docs[0].ref[:1], docs[0].lines[:1]
    docs[1].src, docs[1].ref, docs[1].lines = docs[1].src[:2], docs[1].ref[:2], docs[1].lines[:2]
    docs[2].src[1] = ""
    first_pass = decode(demo, "sentence-level", docs)[0]
    for doc, hyps in zip(docs, first_pass):
        doc.first_pass = hyps
    for strategy in strategies_for("fairseq"):
        decode(demo, strategy, docs)  # asserts one hypothesis per sentence
    sequential = decode(demo, "doc-trans", docs)[0]
    assert decode(demo, "doc-trans", docs, mode="parallel")[0] == sequential


def test_a_source_line_longer_than_max_positions_is_a_clear_error(demo):
    docs = documents(demo, n_docs=1)
    docs[0].src[0] = " ".join(["Haus"] * 2000)
    for strategy in ("no-context", "doc-trans"):
        with pytest.raises(InputError, match="max positions"):
            decode(demo, strategy, docs)


def test_context_that_does_not_fit_is_truncated_and_counted(demo):
    docs = documents(demo, n_docs=1)
    limit = demo["doc"].max_positions
    docs[0].src[0] = " ".join(["Haus"] * (limit - 3))
    for strategy in ("last-sentence", "first-sentence", "full-segment", "doc-trans"):
        out, dec, _ = decode(demo, strategy, docs)
        assert dec.stats.context_truncated >= 1, f"{strategy}: the long sentence's windows must be truncated and counted"


def test_first_sentence_truncation_drops_right_context_not_the_sentence(demo):
    from docnmt.decode.backends.fairseq.search import Searcher

    dec = Decoder(Searcher(demo["doc"], beam=BEAM), k=3, h=12)
    limit = demo["doc"].max_positions
    long_right = " ".join(["Haus"] * (limit - 2))
    request = dec.request(["Hallo Tom .", long_right], (), 0, drop_newest=True)
    assert request.source == demo["doc"].encode("Hallo Tom .", source=True)
    assert dec.stats.context_truncated == 1


# ---- doc-trans by fixed-point iteration; 2-pass and cheating in one pass ------------------------
def with_first_pass(demo, docs, beam=BEAM):
    """``docs`` with the sentence-level model's hypotheses as their first pass. The search is deterministic for the
    same documents in the same batches, so the module decodes each set of documents once (nine tests ask for the
    whole test set's)."""
    key = ("first pass", beam, tuple((d.docid, tuple(d.lines)) for d in docs))
    if key not in demo:
        demo[key] = decode(demo, "sentence-level", docs, beam=beam)[0]
    for doc, hyps in zip(docs, demo[key]):
        doc.first_pass = list(hyps)
    return docs


def long_documents(docs, size):
    """Consecutive documents joined into documents of at least ``size`` sentences (bench/decode's --long-docs)."""
    from docnmt.decode.documents import Document

    out = []
    for d in docs:
        if not out or len(out[-1]) >= size:
            out.append(Document(f"long-{len(out) + 1}", [], [], [], None if d.first_pass is None else []))
        out[-1].lines += d.lines
        out[-1].src += d.src
        out[-1].ref += d.ref
        if d.first_pass is not None:
            out[-1].first_pass += d.first_pass
    return out


def differing(a, b):
    return [(n, i) for n, (x, y) in enumerate(zip(a, b)) for i, (u, v) in enumerate(zip(x, y)) if u != v]


@pytest.mark.parametrize("k", [1, 2, 3])
def test_parallel_doc_trans_equals_sequential_on_every_demo_sentence(demo, k):
    """The whole demo test set (100 documents): the fixed point is the sequential output on every sentence."""
    docs = with_first_pass(demo, documents(demo, n_docs=0))
    assert max(map(len, docs)) >= 8
    sequential, seq_dec, _ = decode(demo, "doc-trans", docs, k=k)
    parallel, dec, _ = decode(demo, "doc-trans", docs, k=k, mode="parallel")
    assert not differing(parallel, sequential), f"k={k}: sentences that differ {differing(parallel, sequential)[:5]}"
    assert dec.stats.converged is True and dec.stats.unconverged == 0
    n = sum(map(len, docs))
    assert dec.stats.redecoded[0] == n, "round 1 decodes every sentence"
    assert all(r < n for r in dec.stats.redecoded[1:]), "later rounds only the sentences whose context changed"
    assert dec.stats.rounds == len(dec.stats.redecoded) <= max(map(len, docs))
    if k == 1:
        assert dec.stats.rounds == 1, "without target context one round is the fixed point"
    assert seq_dec.stats.rounds == max(map(len, docs)), "sequential: one round per position"
    assert (dec.stats.sep_mismatch, dec.stats.context_truncated) == (seq_dec.stats.sep_mismatch,
                                                                     seq_dec.stats.context_truncated)


@pytest.mark.parametrize("k", [2, 3])
def test_parallel_doc_trans_equals_sequential_on_long_documents(demo, k):
    """The demo test set joined into documents of about 100 sentences (bench/decode --long-docs 100)."""
    docs = long_documents(with_first_pass(demo, documents(demo, n_docs=0)), 100)
    assert len(docs) >= 5 and max(map(len, docs)) >= 100
    sequential = decode(demo, "doc-trans", docs, k=k)[0]
    parallel, dec, _ = decode(demo, "doc-trans", docs, k=k, mode="parallel")
    assert not differing(parallel, sequential), differing(parallel, sequential)[:5]
    # far fewer rounds than the sequential run's positions (measured with k=3: 12 rounds for documents of ~100)
    assert dec.stats.converged and dec.stats.rounds <= max(map(len, docs)) // 4, dec.stats.redecoded


def test_a_bad_first_pass_still_reaches_the_sequential_result_and_a_round_limit_reports_it(demo):
    """The fixed point does not depend on where it starts: contexts from other documents' references
    need more rounds; a round limit that stops short is reported, never silent."""
    docs = documents(demo, n_docs=15)
    others = [r for d in docs[::-1] for r in d.ref]
    for doc in docs:
        doc.first_pass, others = others[:len(doc)], others[len(doc):]
    sequential = decode(demo, "doc-trans", docs)[0]
    parallel, dec, _ = decode(demo, "doc-trans", docs, mode="parallel")
    assert parallel == sequential and dec.stats.converged
    assert dec.stats.rounds >= 3, f"a wrong start needs several rounds, got {dec.stats.redecoded}"
    stopped, short, _ = decode(demo, "doc-trans", docs, mode="parallel", max_rounds=1)
    assert short.stats.converged is False and short.stats.rounds == 1
    assert short.stats.unconverged > 0
    wrong = differing(stopped, sequential)
    assert len(wrong) <= short.stats.unconverged, "every differing sentence is counted as unconverged"
    two_pass = decode(demo, "2-pass", docs)[0]
    assert stopped == two_pass, "round 1 is 2-pass"


@pytest.mark.parametrize("k", [2, 3])
def test_finishing_sequentially_reaches_the_same_fixed_point_in_at_most_the_sequential_rounds(demo, k):
    """Where outputs keep changing (here: a first pass from other documents' references), the iteration
    switches to one stale sentence per document and round; forced at once (switch_share 0) or never
    (infinite), it ends at the sequential output, and after the switch it never decodes more sentences,
    nor needs more rounds, than sequential doc-trans."""
    docs = long_documents(with_first_pass(demo, documents(demo, n_docs=0)), 40)
    others = [r for d in docs[::-1] for r in d.ref]
    for doc in docs:
        doc.first_pass, others = others[:len(doc)], others[len(doc):]
    sequential, seq_dec, _ = decode(demo, "doc-trans", docs, k=k)
    n = sum(map(len, docs))
    for share in (0.0, float("inf")):
        parallel, dec, _ = decode(demo, "doc-trans", docs, k=k, mode="parallel", switch_share=share)
        assert not differing(parallel, sequential), (share, differing(parallel, sequential)[:5])
        assert dec.stats.converged and dec.stats.redecoded[0] == n
        assert (dec.stats.sep_mismatch, dec.stats.context_truncated) == (seq_dec.stats.sep_mismatch,
                                                                         seq_dec.stats.context_truncated)
        if share == 0.0:
            assert dec.stats.sequential_from_round == 2, "the first chance to switch is round 2"
            after = dec.stats.redecoded[1:]
            assert all(r <= len(docs) for r in after), "one sentence per document and round"
            assert sum(after) <= n - len(docs), "never more than sequential (whose sentence 1 round 1 decoded)"
            assert dec.stats.rounds <= seq_dec.stats.rounds
        else:
            assert dec.stats.sequential_from_round is None
    default, dec, _ = decode(demo, "doc-trans", docs, k=k, mode="parallel")
    assert default == sequential and dec.stats.converged


def test_round_one_taken_over_from_two_pass_gives_the_same_iteration(demo):
    """2-pass's hypotheses and <sep> mismatches as round 1: the same fixed point, rounds, redecodes and
    accounting, without searching round 1 again (also where the iteration finishes sequentially)."""
    from docnmt.decode.backends.fairseq.search import Searcher

    docs = long_documents(with_first_pass(demo, documents(demo, n_docs=0)), 40)
    two = Decoder(Searcher(demo["doc"], beam=BEAM), k=3, h=12)
    two_out = REGISTRY["2-pass"](two, docs)
    assert len(two.stats.sep_mismatch_lines) == two.stats.sep_mismatch
    for share in (0.75, 0.0):
        plain, dec, searcher = decode(demo, "doc-trans", docs, mode="parallel", switch_share=share)
        take_over_round_one(docs, [h for hyps in two_out for h in hyps], two.stats.sep_mismatch_lines)
        reused, rdec, rsearcher = decode(demo, "doc-trans", docs, mode="parallel", switch_share=share)
        for d in docs:
            d.round_one = d.round_one_mismatch = None
        assert reused == plain and rdec.stats.round_one_reused and not dec.stats.round_one_reused
        assert rdec.stats.redecoded == dec.stats.redecoded and rdec.stats.rounds == dec.stats.rounds - 1
        assert rdec.stats.sequential_from_round == dec.stats.sequential_from_round
        assert (rdec.stats.sep_mismatch, rdec.stats.context_truncated) == (dec.stats.sep_mismatch,
                                                                           dec.stats.context_truncated)
        assert rsearcher.decoder_positions < searcher.decoder_positions


def test_parallel_doc_trans_from_its_own_guess_equals_sequential_and_costs_less_than_a_first_pass(demo):
    """Without a first pass, parallel doc-trans guesses round 1's contexts with the document model at beam 1 (each
    sentence without context, one search call, counted in requests and ``guessed``): the same result as sequential
    on the long documents, where the guess and its rounds compute fewer decoder positions than the sentence-level
    first pass and its rounds do."""
    from docnmt.decode.backends.fairseq.search import Searcher

    plain = long_documents(documents(demo, n_docs=0), 100)
    sequential = decode(demo, "doc-trans", plain)[0]
    searcher, guess = Searcher(demo["doc"], beam=BEAM), Searcher(demo["doc"], beam=1)
    dec = Decoder(searcher, k=3, h=12, doc_trans_mode="parallel", guess_searcher=guess)
    guessed = REGISTRY["doc-trans"](dec, plain)
    assert not differing(guessed, sequential), differing(guessed, sequential)[:5]
    lines = sum(map(len, plain))
    assert dec.stats.guessed == lines and dec.stats.converged and dec.stats.redecoded[0] == lines
    assert dec.stats.requests == lines + sum(dec.stats.redecoded)
    assert guess.decoder_positions * 2 < decode(demo, "no-context", plain)[2].decoder_positions, "greedy: one row"
    first, _, first_searcher = decode(demo, "sentence-level", plain)
    from_first_pass = long_documents(with_first_pass(demo, documents(demo, n_docs=0)), 100)
    _, _, rounds = decode(demo, "doc-trans", from_first_pass, mode="parallel")
    assert (guess.decoder_positions + searcher.decoder_positions
            < first_searcher.decoder_positions + rounds.decoder_positions)


def test_every_request_searched_gives_the_shared_translations(demo):
    """``share_repeated=False`` (bench/decode's default, as the paper's Table 1 counts cost) searches a repeated
    sentence again and gets what sharing gave it, at the positions of every sentence."""
    from docnmt.decode.backends.fairseq.search import Searcher

    docs = documents(demo, n_docs=0)
    shared, dec, searcher = decode(demo, "sentence-level", docs)
    each = Searcher(demo["sent"], beam=BEAM)
    every = Decoder(each, k=3, h=12, share_repeated=False)
    assert REGISTRY["sentence-level"](every, docs) == shared
    assert dec.stats.repeated_requests > 100 and every.stats.repeated_requests == 0
    assert each.decoder_positions > searcher.decoder_positions * 1.3


def test_parallel_doc_trans_needs_a_first_pass_and_a_valid_mode(demo):
    from docnmt.decode.backends.fairseq.search import Searcher

    with pytest.raises(ValueError, match=r"first pass\) or a guess searcher"):
        decode(demo, "doc-trans", documents(demo, n_docs=2), mode="parallel")
    with pytest.raises(ValueError, match="doc_trans_mode"):
        Decoder(Searcher(demo["doc"], beam=BEAM), k=3, h=12, doc_trans_mode="jacobi")
    with pytest.raises(ValueError, match="max_rounds"):
        Decoder(Searcher(demo["doc"], beam=BEAM), k=3, h=12, max_rounds=0)


@pytest.mark.parametrize("strategy", ["2-pass", "cheating"])
def test_two_pass_and_cheating_in_one_pass_give_the_position_by_position_output(demo, strategy):
    from docnmt.decode import strategies
    from docnmt.decode.documents import previous
    from docnmt.decode.backends.fairseq.search import Searcher

    docs = with_first_pass(demo, documents(demo, n_docs=0))
    one_pass, dec, _ = decode(demo, strategy, docs)
    assert dec.stats.rounds == 1
    old = Decoder(Searcher(demo["doc"], beam=BEAM), k=3, h=12)
    context = (lambda d, i, own: previous(d.first_pass, i, 3)) if strategy == "2-pass" else \
        (lambda d, i, own: previous(d.ref, i, 3))
    by_position = strategies._context_search(old, docs, context)
    assert not differing(one_pass, by_position), differing(one_pass, by_position)[:5]
    assert old.stats.rounds == max(map(len, docs))


class _Calls:
    """A searcher's search calls (their request counts), the searcher otherwise itself."""

    def __init__(self, searcher, batches_requests: bool):
        self.searcher, self.batches_requests, self.calls = searcher, batches_requests, []

    def __getattr__(self, name):
        return getattr(self.searcher, name)

    def search(self, requests):
        self.calls.append(len(requests))
        return self.searcher.search(requests)


def test_sequential_doc_trans_keeps_the_batches_full_and_gives_the_position_by_position_output(demo):
    """A searcher that batches by ``batch_size`` gets the ready sentences of that many documents at a time (the
    documents with the most sentences left first), so 100 documents of 3 to 8 sentences take as many search calls as
    their sentences fill, not one or more per position; the translations are those of one call per position. (The
    searcher sees a call's distinct requests: Decoder.search searches identical ones once.)"""
    from docnmt.decode.backends.fairseq.search import Searcher

    docs = documents(demo, n_docs=0)
    size = 32
    runs = {}
    for pipelined in (True, False):
        counted = _Calls(Searcher(demo["doc"], beam=BEAM, batch_size=size), batches_requests=pipelined)
        dec = Decoder(counted, k=3, h=12)
        runs[pipelined] = REGISTRY["doc-trans"](dec, docs), counted.calls, dec.stats
    (full, calls, stats), (by_position, position_calls, position_stats) = runs[True], runs[False]
    assert not differing(full, by_position), differing(full, by_position)[:5]
    sentences = sum(map(len, docs))
    # a call's identical requests (a repeated sentence in the same context) are searched once (Decoder.search)
    assert sum(calls) + stats.repeated_requests == sum(position_calls) + position_stats.repeated_requests == sentences
    assert max(calls) == size
    assert len(docs) >= position_calls[0] > size, "position by position: every document's first sentence at once"
    assert len(calls) == -(-sentences // size) < sum(-(-n // size) for n in position_calls), (calls, position_calls)
    assert stats.rounds == position_stats.rounds == max(map(len, docs)), "the dependent rounds: the longest document"
    assert stats.requests == position_stats.requests == sentences


def test_decode_cli_records_rounds_and_convergence(demo, tmp_path, capsys):
    from docnmt.decode import cli as decode_cli

    w = demo["workdir"]
    common = ["--data", str(w / "data/demo/bin/document"), "--src", str(w / "data/demo/bpe/test.en"),
              "--docids", str(w / "data/demo/corpus/test.docids"), "--beam", str(BEAM), "--tgt-lang", "de",
              "--model", str(w / "results/demo/models/document/checkpoint_best.pt")]

    def run(name, *extra):
        decode_cli.main(common + ["--output-bpe", str(tmp_path / f"{name}.bpe"), "--output", str(tmp_path / f"{name}.txt"),
                                  "--sidecar", str(tmp_path / f"{name}.json"), *extra])
        return (tmp_path / f"{name}.bpe").read_text(), json.loads((tmp_path / f"{name}.json").read_text())

    # any first pass will do (the fixed point is the same); no-context's misses the context, so it takes rounds
    _, first_car = run("first", "--strategy", "no-context")
    seq, seq_car = run("seq", "--strategy", "doc-trans")  # sequential: the CLI's default (no first pass needed)
    par, par_car = run("par", "--strategy", "doc-trans", "--doc-trans-mode", "parallel",
                       "--first-pass", str(tmp_path / "first.bpe"))
    assert par == seq
    assert seq_car["doc_trans_mode"] == "sequential" and "converged" not in seq_car
    assert par_car["doc_trans_mode"] == "parallel" and par_car["converged"] is True and par_car["unconverged"] == 0
    assert "sequential_from_round" in par_car, "the sidecar says whether the iteration finished sequentially"
    assert par_car["rounds"] == len(par_car["redecoded_per_round"]) and par_car["redecoded_per_round"][0] == len(demo["src"])
    ids = read_docids(w / "data/demo/corpus/test.docids")
    assert first_car["rounds"] == 1 and seq_car["rounds"] == max(ids.count(d) for d in set(ids))
    assert par_car["rounds"] > 1
    _, cut_car = run("cut", "--strategy", "doc-trans", "--doc-trans-mode", "parallel",
                     "--first-pass", str(tmp_path / "first.bpe"), "--max-rounds", "1")
    assert cut_car["converged"] is False and cut_car["unconverged"] > 0 and cut_car["max_rounds"] == 1
    with pytest.raises(SystemExit):  # parallel without a first pass is a usage error
        run("none", "--strategy", "doc-trans", "--doc-trans-mode", "parallel")

    # 2-pass's output taken over as round 1: the same output, one search round fewer, checked against its sidecar
    first = ["--first-pass", str(tmp_path / "first.bpe")]
    two, two_car = run("two", "--strategy", "2-pass", *first)
    assert two_car["sep_mismatch_lines"] is not None and len(two_car["sep_mismatch_lines"]) == two_car["sep_mismatch"]
    reuse = ["--round-one", str(tmp_path / "two.bpe"), "--round-one-sidecar", str(tmp_path / "two.json")]
    reused, reused_car = run("reused", "--strategy", "doc-trans", "--doc-trans-mode", "parallel", *first, *reuse)
    assert reused == par and reused_car["round_one_reused"] is True and par_car["round_one_reused"] is False
    assert reused_car["redecoded_per_round"] == par_car["redecoded_per_round"]
    assert reused_car["rounds"] == par_car["rounds"] - 1
    assert (reused_car["sep_mismatch"], reused_car["context_truncated"]) == (par_car["sep_mismatch"],
                                                                            par_car["context_truncated"])
    assert reused_car["decoder_positions"] < par_car["decoder_positions"]
    assert reused_car["round_one"]["decoder_positions"] == two_car["decoder_positions"]
    # a 2-pass from another beam (or model, first pass, ...) is not this iteration's round 1: an error naming it
    bad = json.loads((tmp_path / "two.json").read_text())
    bad["beam"] = BEAM + 1
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    with pytest.raises(SystemExit):
        run("bad", "--strategy", "doc-trans", "--doc-trans-mode", "parallel", *first,
            "--round-one", str(tmp_path / "two.bpe"), "--round-one-sidecar", str(tmp_path / "bad.json"))
    assert not (tmp_path / "bad.bpe").exists()
    (tmp_path / "broken.json").write_text("{")
    with pytest.raises(SystemExit):  # not JSON: an error naming the sidecar
        run("broken", "--strategy", "doc-trans", "--doc-trans-mode", "parallel", *first,
            "--round-one", str(tmp_path / "two.bpe"), "--round-one-sidecar", str(tmp_path / "broken.json"))
    assert f"{tmp_path / 'broken.json'}: expected the JSON of a 2-pass decode sidecar" in capsys.readouterr().err
    assert not (tmp_path / "broken.bpe").exists()
    (tmp_path / "other-first.bpe").write_text((tmp_path / "seq.bpe").read_text())
    with pytest.raises(SystemExit):  # another first pass
        run("bad2", "--strategy", "doc-trans", "--doc-trans-mode", "parallel", "--first-pass",
            str(tmp_path / "other-first.bpe"), *reuse)
    with pytest.raises(SystemExit):  # round one only for parallel doc-trans
        run("bad3", "--strategy", "doc-trans", *first, *reuse)
    old = {k: v for k, v in json.loads((tmp_path / "two.json").read_text()).items()
           if k not in ("first_pass_sha256", "sep_mismatch_lines")}
    (tmp_path / "old.json").write_text(json.dumps(old))  # a 2-pass sidecar of an older version: round 1 searched here
    searched, searched_car = run("old", "--strategy", "doc-trans", "--doc-trans-mode", "parallel", *first,
                                 "--round-one", str(tmp_path / "two.bpe"), "--round-one-sidecar", str(tmp_path / "old.json"))
    assert searched == par and searched_car["round_one_reused"] is False and "round_one" not in searched_car


def test_the_decoding_pages_mbr_command_runs_as_written_and_selects_as_the_python_api(demo, tmp_path):
    """docs/decoding.md's MBR command ("MBR selection", by hand), as written, through a shell with the console
    scripts on PATH, in a folder where `doc/checkpoint_best.pt` and `doc-bin` are the demo's document-level model and
    `test.bpe.en`, `test.docids` its first two test documents: its output is the Python API's doc-trans with MBR
    (chrF over the beam's 12 best), and the sidecar records the settings and one selection per sentence."""
    from helpers import REPO, shell_commands

    from docnmt.decode import mbr
    from docnmt.decode.backends.fairseq.search import Searcher
    from docnmt.decode.selection import Selector

    (command,) = shell_commands(REPO / "docs/decoding.md", "## MBR selection")
    assert command.startswith("docnmt-decode --strategy doc-trans") and "--mbr-count 12" in command, command
    w, docs = demo["workdir"], documents(demo, 2, ref=False)
    (tmp_path / "doc").mkdir()
    (tmp_path / "doc/checkpoint_best.pt").symlink_to(w / "results/demo/models/document/checkpoint_best.pt")
    (tmp_path / "doc-bin").symlink_to(w / "data/demo/bin/document", target_is_directory=True)
    (tmp_path / "test.bpe.en").write_text("".join(s + "\n" for d in docs for s in d.src), encoding="utf-8")
    (tmp_path / "test.docids").write_text("".join(d.docid + "\n" for d in docs for _ in d.src), encoding="utf-8")
    result = subprocess.run(command, shell=True, cwd=tmp_path, env=tool_env(), capture_output=True, text=True,
                            timeout=600)
    assert result.returncode == 0, f"{command}\n{result.stdout[-2000:]}\n{result.stderr[-3000:]}"
    sentences = sum(len(d) for d in docs)
    sidecar = json.loads((tmp_path / "hyp.json").read_text())
    record = sidecar["mbr"]
    assert (record["count"], record["utility"], record["candidates"]) == (12, "chrf", "beam"), record
    assert record["selections"] == sentences and 0 < record["utility_evaluations"] <= 144 * sentences, record
    selector = Selector(mbr.Settings(count=12, utility="chrf"))
    expected = REGISTRY["doc-trans"](Decoder(Searcher(demo["doc"], beam=12), k=3, h=12, mbr=selector), docs)
    assert read_lines(tmp_path / "hyp.bpe") == [s for d in expected for s in d]
    assert len(read_lines(tmp_path / "hyp.txt")) == sentences


def test_batch_composition_moves_scores_in_the_last_bits_and_can_flip_a_near_tie(demo):
    """Why parallel and sequential doc-trans could differ at all: the same request searched alone or
    next to a longer one (more padding) gets the same hypotheses with scores that differ in the last
    bits. A crafted near-tie, the length penalty set between the two batches' tie points of two
    hypotheses of different lengths, turns that into a different best hypothesis."""
    import math

    from docnmt.decode.backends.fairseq.search import Searcher

    docs = documents(demo, n_docs=0)
    build = Decoder(Searcher(demo["doc"], beam=BEAM), k=3, h=12)
    windows = [(d, i) for d in docs for i in range(1, len(d))]
    requests = [build.request(_window_of(d, i), d.ref[max(0, i - 2):i]) for d, i in windows]
    companion = max(requests, key=lambda r: (len(r.source), len(r.prefix)))
    searcher = Searcher(demo["doc"], beam=BEAM)
    moved, flips = 0, []
    for request in requests[:40]:
        alone, batched = searcher.search([request])[0], searcher.search([request, companion])[0]
        assert [h.tokens for h in alone] == [h.tokens for h in batched], "the same hypotheses in both batches"
        assert all(abs(a.score - b.score) < 1e-4 for a, b in zip(alone, batched))
        moved += any(a.score != b.score for a, b in zip(alone, batched))
        # two hypotheses of different lengths: the length penalty at which they tie, per batch
        for x in range(len(alone)):
            for y in range(x + 1, len(alone)):
                lx, ly = len(alone[x].tokens) + 1, len(alone[y].tokens) + 1
                if lx == ly:
                    continue
                ties = [math.log(hs[x].logprob / hs[y].logprob) / math.log(lx / ly) for hs in (alone, batched)]
                if ties[0] != ties[1] and 0 < ties[0] < 3:
                    flips.append((abs(ties[0] - ties[1]), sum(ties) / 2, x, y, alone, batched))
    assert moved > 0, "some scores move with the batch composition (no bitwise batch invariance)"
    assert flips, "two hypotheses whose tie point moves with the batch"
    # The crafted near-tie: with the length penalty between the two batches' tie points, the length-normalized
    # scores (logprob / length**lenpen, as the search ranks its finished hypotheses) order the pair differently in
    # the two batches. (Whether a full search at that length penalty then flips depends on float32 rounding of
    # the final scores: on the 100-update demo model it did, on the 300-update one not among 200 candidates.)
    _, lenpen, x, y, alone, batched = max(flips, key=lambda f: f[0])
    order = [(hs[x].logprob / (len(hs[x].tokens) + 1) ** lenpen) > (hs[y].logprob / (len(hs[y].tokens) + 1) ** lenpen)
             for hs in (alone, batched)]
    assert order[0] != order[1], "at a crafted near-tie the better hypothesis depends on the batch"


def _window_of(doc, i, k=3):
    return doc.src[max(0, i - k + 1):i + 1]


# ---- half precision ---------------------------------------------------------------------------------
def _half_models(demo, dtype):
    """The demo models in ``dtype`` on CPU; skipped where torch's CPU kernels lack that dtype."""
    from docnmt.decode.backends.fairseq.model import Model
    from docnmt.decode.backends.fairseq.search import Searcher
    from docnmt.decode.requests import Request

    w = demo["workdir"]
    models = {
        "doc": Model(w / "results/demo/models/document/checkpoint_best.pt", w / "data/demo/bin/document", "cpu", dtype),
        "sent": Model(w / "results/demo/models/sentence/checkpoint_best.pt", w / "data/demo/bin/sentence", "cpu", dtype),
    }
    probe = models["doc"].encode("Hallo .", source=True)
    try:
        Searcher(models["doc"], beam=2).search([Request(probe, models["doc"].encode("Hallo .")[:-1])])
    except (RuntimeError, NotImplementedError) as err:
        pytest.skip(f"torch {__import__('torch').__version__} cannot run the search in {dtype} on CPU: {err}")
    return models


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_half_precision_decodes_every_strategy_like_fp32(demo, dtype):
    """Every strategy in half precision: one hypothesis per line, finite scores, >= 90% of the
    top hypotheses equal to the fp32 ones."""
    import math

    from docnmt.decode.backends.fairseq.search import Searcher

    class Recording(Searcher):
        scores: list[float] = []

        def search(self, requests):
            nbest = super().search(requests)
            self.scores.extend(h.score for hyps in nbest for h in hyps)
            return nbest

    half = _half_models(demo, dtype)
    assert next(half["doc"].model.parameters()).dtype == getattr(__import__("torch"), dtype)
    docs = documents(demo, n_docs=5)
    outputs = {}
    for name, models in (("fp32", {"doc": demo["doc"], "sent": demo["sent"]}), (dtype, half)):
        first_pass = None
        outputs[name] = {}
        for strategy in ["sentence-level", *[s for s in strategies_for("fairseq") if s != "sentence-level"]]:
            searcher = Recording(models["sent" if strategy == "sentence-level" else "doc"], beam=BEAM)
            searcher.scores = []
            batch = documents(demo, n_docs=5, first_pass=first_pass)
            out = REGISTRY[strategy](Decoder(searcher, k=3, h=2), batch)
            assert [len(o) for o in out] == [len(d) for d in docs], f"{name} {strategy}: one hypothesis per line"
            assert searcher.scores and all(math.isfinite(s) for s in searcher.scores), f"{name} {strategy}: NaN/inf score"
            outputs[name][strategy] = [h for o in out for h in o]
            if strategy == "sentence-level":
                first_pass = [""] * len(demo["src"])
                for doc, hyps in zip(docs, out):
                    for line, hyp in zip(doc.lines, hyps):
                        first_pass[line] = hyp
    for strategy, reference in outputs["fp32"].items():
        same = sum(a == b for a, b in zip(outputs[dtype][strategy], reference)) / len(reference)
        assert same >= 0.9, f"{dtype} {strategy}: only {same:.0%} of the top hypotheses equal fp32's"


def test_decode_cli_dtype_and_device_in_the_sidecar(demo, tmp_path):
    from docnmt.decode import cli as decode_cli

    w = demo["workdir"]
    src, ids = demo["src"][:20], demo["ids"][:20]
    (tmp_path / "src").write_text("".join(s + "\n" for s in src), encoding="utf-8")
    (tmp_path / "ids").write_text("".join(i + "\n" for i in ids), encoding="utf-8")
    for dtype, expected in (("float32", "float32"), ("bf16", "bfloat16")):
        out = tmp_path / dtype
        decode_cli.main([
            "--strategy", "doc-trans", "--model", str(w / "results/demo/models/document/checkpoint_best.pt"),
            "--data", str(w / "data/demo/bin/document"), "--src", str(tmp_path / "src"), "--docids", str(tmp_path / "ids"),
            "--beam", "2", "--tgt-lang", "de", "--device", "cpu", "--dtype", dtype,
            "--output-bpe", f"{out}.bpe", "--output", f"{out}.txt", "--sidecar", f"{out}.json",
        ])
        sidecar = json.loads(Path(f"{out}.json").read_text())
        assert (sidecar["device"], sidecar["dtype"]) == ("cpu", expected)
        assert f"|dtype:{expected}|" in sidecar["signature"]
        assert len(Path(f"{out}.bpe").read_text(encoding="utf-8").splitlines()) == 20


@pytest.mark.skipif(not (REAL_SAMPLES / "iwslt17-ted-test-en-de").is_dir(), reason="../shared/real-samples is absent")
def test_parallel_doc_trans_equals_sequential_on_real_ted_talks(demo, tmp_path):
    """Real long documents: the two shortest IWSLT17 tst2017 talks (real TED text, read from the unmodified
    archives), through the demo's tokenizer and BPE codes and decoded by the demo models. They translate such
    text badly, so their outputs keep changing with their context (as on bench/ted-real): the iteration finishes
    sequentially, with and without 2-pass's round 1, and gives sequential doc-trans's output on every sentence."""
    from docnmt.corpora.mteval import iwslt_xml
    from docnmt.decode.backends.fairseq.search import Searcher
    from docnmt.decode.documents import Document
    from docnmt.preprocess import bpe
    from docnmt.preprocess.tokenize import tokenize
    from realformat import extract

    samples = REAL_SAMPLES / "iwslt17-ted-test-en-de"
    en, de = extract(samples / "en-de.tgz", tmp_path / "en"), extract(samples / "de-en.tgz", tmp_path / "de")
    talks = iwslt_xml(en / "en-de/IWSLT17.TED.tst2017.en-de.en.xml", de / "de-en/IWSLT17.TED.tst2017.de-en.de.xml")
    talks = sorted(talks, key=lambda t: len(t.src))[:2]
    codes = bpe.load(demo["workdir"] / "data/demo/bpe/codes")
    docs, line = [], 0
    for talk in talks:
        src = [bpe.apply(codes, tokenize(s, "en")) for s in talk.src]
        docs.append(Document(talk.docid, list(range(line, line + len(src))), src))
        line += len(src)
    assert min(map(len, docs)) >= 28
    first = decode(demo, "sentence-level", docs)[0]
    for d, hyps in zip(docs, first):
        d.first_pass = hyps
    sequential = decode(demo, "doc-trans", docs)[0]
    parallel, dec, _ = decode(demo, "doc-trans", docs, mode="parallel")
    assert not differing(parallel, sequential), differing(parallel, sequential)[:5]
    assert dec.stats.converged and dec.stats.sequential_from_round, dec.stats.redecoded
    two = Decoder(Searcher(demo["doc"], beam=BEAM), k=3, h=12)
    take_over_round_one(docs, [h for hyps in REGISTRY["2-pass"](two, docs) for h in hyps], two.stats.sep_mismatch_lines)
    reused, rdec, _ = decode(demo, "doc-trans", docs, mode="parallel")
    assert reused == sequential and rdec.stats.round_one_reused and rdec.stats.redecoded == dec.stats.redecoded


def test_last_sentence_records_the_target_context_each_kept_translation_followed(demo):
    """The segments each last-sentence window generated before the kept one (docnmt.score.cxmi conditions on
    them), recorded per line: the window searched again gives those segments, then the kept translation."""
    from docnmt.decode.backends.fairseq.search import Searcher
    from docnmt.decode.documents import window
    from docnmt.preprocess.windows import split

    docs = documents(demo, n_docs=4)
    out, dec, _ = decode(demo, "last-sentence", docs)
    recorded = dec.stats.generated_context
    assert sorted(recorded) == sorted(line for d in docs for line in d.lines)
    searcher = Searcher(demo["doc"], beam=BEAM)
    with_context = 0
    for doc, hyps in zip(docs, out):
        for i in range(len(doc)):
            request = dec.build(window(doc, i - 2, i + 1))[0]
            segments = split(dec.text(searcher.search([request])[0][0]))
            assert recorded[doc.lines[i]] == segments[:-1] and hyps[i] == segments[-1], (doc.docid, i)
            with_context += bool(recorded[doc.lines[i]])
    assert recorded[docs[0].lines[0]] == [] and with_context >= 8


# ---- the decode CLI's search options, on the toy model (tests/toymodel.py) ----------------------------------------
#: Three documents of the toy task's words (s_n -> t_n, reversed), of 3, 2 and 3 sentences.
TOY_DOCS = [["s3 s7 s11", "s1 s2", "s5 s9 s4 s8"], ["s6 s10", "s12 s0 s13"],
            ["s2 s2 s14", "s15 s16 s17 s18", "s19 s20"]]


def toy_decode(toy, tmp_path, name, *extra):
    """The decode CLI's doc-trans of TOY_DOCS with the toy model (k 2, beam 2, at most 20 tokens a hypothesis, and
    ``extra``), on the device of the toy's Model (the default): its BPE hypotheses and its sidecar."""
    from docnmt.decode import cli as decode_cli

    root, checkpoint, _ = toy
    (tmp_path / "toy.src").write_text("".join(s + "\n" for doc in TOY_DOCS for s in doc), encoding="utf-8")
    (tmp_path / "toy.docids").write_text("".join(f"d{n}\n" for n, doc in enumerate(TOY_DOCS) for _ in doc),
                                         encoding="utf-8")
    assert decode_cli.main(["--strategy", "doc-trans", "--model", str(checkpoint), "--data", str(root / "bin"),
                            "--src", str(tmp_path / "toy.src"), "--docids", str(tmp_path / "toy.docids"),
                            "--k", "2", "--beam", "2", "--max-len-b", "20", "--tgt-lang", "de",
                            "--output-bpe", str(tmp_path / f"{name}.bpe"), "--output", str(tmp_path / f"{name}.txt"),
                            "--sidecar", str(tmp_path / f"{name}.json"), *extra]) == 0
    return read_lines(tmp_path / f"{name}.bpe"), json.loads((tmp_path / f"{name}.json").read_text())


def toy_api(toy, k, **settings):
    """doc-trans of TOY_DOCS through the Python API (make_searcher with ``settings``, beam 2, 20 tokens): the
    hypotheses in line order and the searcher (its counters)."""
    from docnmt.decode.backends import make_searcher

    searcher = make_searcher(toy[2], beam=2, max_len=20, **settings)
    docs = group([s for doc in TOY_DOCS for s in doc], [f"d{n}" for n, doc in enumerate(TOY_DOCS) for _ in doc])
    out = REGISTRY["doc-trans"](Decoder(searcher, k=k, h=12), docs)
    return [hyp for doc in out for hyp in doc], searcher


def test_decode_cli_context_document_lenpen_and_batch_size_reach_the_search(toy, tmp_path):
    """--context document: every earlier sentence of the document is context (k becomes the longest document's 3,
    recorded as context_k and in the signature); --lenpen 5; --batch-size 2. The hypotheses and the cost counters
    are the Python API's with k=3, lenpen 5 and batches of 2 requests: those batches take more forward calls than
    one batch a position, lenpen 5 and the window context of k=2 give other hypotheses, and the window context
    prefills fewer positions."""
    hyps, sidecar = toy_decode(toy, tmp_path, "doc", "--context", "document", "--lenpen", "5", "--batch-size", "2")
    assert (sidecar["context"], sidecar["context_k"], sidecar["k"], sidecar["lenpen"]) == ("document", 3, 2, 5.0)
    assert "|lenpen:5.0|k:2|context:document|" in sidecar["signature"]
    expected, searcher = toy_api(toy, 3, lenpen=5.0, batch_size=2)
    assert hyps == expected
    assert (sidecar["forward_calls"], sidecar["decoder_positions"]) == (searcher.forward_calls,
                                                                        searcher.decoder_positions)
    one_batch = toy_api(toy, 3, lenpen=5.0)[1]
    assert sidecar["forward_calls"] > one_batch.forward_calls, "three documents: batches of 2 and 1 a position"
    assert toy_api(toy, 3, lenpen=1.0, batch_size=2)[0] != hyps, "lenpen 5 prefers longer hypotheses"
    window, windowed = toy_api(toy, 2, lenpen=5.0, batch_size=2)
    assert window != hyps and windowed.decoder_positions < sidecar["decoder_positions"]


def test_decode_cli_max_tokens_splits_the_batches(toy, tmp_path):
    """--max-tokens 50: a request takes beam 2 x (source + context + 20 tokens), more than 25 positions, so each
    batch holds one request: the forward calls of the Python API with the same limit, more than the default's
    (a position of every document in one batch), and the same hypotheses."""
    hyps, sidecar = toy_decode(toy, tmp_path, "limited", "--max-tokens", "50")
    expected, searcher = toy_api(toy, 2, max_tokens=50)
    assert hyps == expected and sidecar["forward_calls"] == searcher.forward_calls
    default = toy_api(toy, 2)
    assert default[0] == hyps and sidecar["forward_calls"] > default[1].forward_calls
    # one request a batch: as many forward calls as batches of one request
    assert sidecar["forward_calls"] == toy_api(toy, 2, batch_size=1)[1].forward_calls


def test_only_lines_decodes_the_examples_sentences_alone_as_a_whole_decode_does(demo, tmp_path):
    """--only-lines (a ctxpro set's example sentences, here ContraPro's): sentence-level and no-context search only
    those lines, each to what a decode of every line gives it; the other lines stay empty; a strategy that
    translates with context refuses it."""
    from docnmt.decode import cli as decode_cli
    from docnmt.textio import selected_lines

    w = demo["workdir"]
    examples = w / "data/demo/contrapro/contrapro.examples.jsonl"
    src = w / "data/demo/bpe/contrapro.en"
    keep = selected_lines(examples, len(read_lines(src)))
    assert 0 < len(keep) < len(read_lines(src))
    for strategy, level in (("sentence-level", "sentence"), ("no-context", "document")):
        common = ["--strategy", strategy, "--model", str(w / f"results/demo/models/{level}/checkpoint_best.pt"),
                  "--data", str(w / f"data/demo/bin/{level}"), "--src", str(src), "--docids",
                  str(w / "data/demo/contrapro/contrapro.docids"), "--beam", str(BEAM), "--tgt-lang", "de",
                  "--no-journal"]
        outputs = {}
        for name, extra in (("all", []), ("only", ["--only-lines", str(examples)])):
            decode_cli.main(common + extra + ["--output-bpe", str(tmp_path / f"{name}.bpe"), "--output",
                                              str(tmp_path / f"{name}.txt"), "--sidecar", str(tmp_path / f"{name}.json")])
            outputs[name] = read_lines(tmp_path / f"{name}.txt")
        assert [outputs["only"][i] for i in keep] == [outputs["all"][i] for i in keep]
        assert not any(outputs["only"][i] for i in set(range(len(outputs["all"]))) - set(keep))
        sidecar = json.loads((tmp_path / "only.json").read_text())
        assert sidecar["requests"] == sidecar["only_lines"]["lines"] == len(keep)
    refused = subprocess.run([sys.executable, "-m", "docnmt.decode.cli", *common[:1], "doc-trans", *common[2:],
                              "--only-lines", str(examples), "--output-bpe", str(tmp_path / "x.bpe"), "--output",
                              str(tmp_path / "x.txt"), "--sidecar", str(tmp_path / "x.json")],
                             capture_output=True, text=True, env=tool_env())
    assert refused.returncode == 2 and "--only-lines: doc-trans translates a sentence with its context" in refused.stderr


@pytest.mark.parametrize("strategy, mode", [("2-pass", "sequential"), ("doc-trans", "parallel"),
                                            ("last-sentence", "sequential"), ("first-sentence", "sequential")])
def test_verified_drafts_give_the_greedy_decodes_own_translations(demo, strategy, mode):
    """Draft verification (docnmt.decode.verification) at beam 1: 2-pass verifies its first pass, parallel doc-trans
    each sentence's last output, last- and first-sentence each window not in the tiling its sentences' translations
    from the tiling (docnmt.decode.overlapping); the translations are those decoded without, byte for byte, and most
    of the draft tokens are accepted."""
    from docnmt.decode.backends.fairseq.search import Searcher
    from docnmt.decode.overlapping import spans, tiling

    docs = documents(demo, ref=False)
    for doc, hyps in zip(docs, decode(demo, "sentence-level", docs, beam=1)[0]):
        doc.first_pass = hyps
    outputs, counters = [], []
    for verify in (False, True):
        searcher = Searcher(demo["doc"], beam=1)
        searcher.verify_drafts = verify
        outputs.append(REGISTRY[strategy](Decoder(searcher, k=3, h=1, doc_trans_mode=mode), docs))
        counters.append(searcher.draft_counters())
    assert outputs[0] == outputs[1] and not counters[0]
    sentences = sum(map(len, docs))
    tiled = sum(len(tiling(spans(len(d), 3, strategy == "last-sentence"))) for d in docs)
    if strategy.endswith("-sentence"):  # the windows outside the tiling; a tiling window's <sep> mismatch leaves one
        assert (sentences - tiled) * 0.9 <= counters[1]["verified_requests"] <= sentences - tiled  # without a draft
    else:
        assert counters[1]["verified_requests"] >= sentences
    assert counters[1]["accepted_tokens"] > counters[1]["draft_tokens"] / 2

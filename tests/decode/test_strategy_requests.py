"""The strategies' logic on a model that needs no training (tests/fakemodel.py): for every strategy, the source window
and the target context each request carries, the segment it keeps, parallel doc-trans's stale sets against
sequential doc-trans, and the resume journal's reuse rules. Each expectation is the paper's definition written out
here with :func:`fakemodel.translate`, not the package's code."""

import pytest

from fakemodel import FakeModel, RecordingSearcher, segments, translate
from docnmt.decode.documents import Document
from docnmt.decode.strategies import REGISTRY, Decoder, STRATEGIES, take_over_round_one

K = 3
#: Two documents: the pronoun ``it`` agrees with the first word of the target sentence before it, so each sentence's
#: translation shows its target context; ``twice`` makes a two-segment output, ``maybe`` a second hypothesis that
#: pays off one sentence later (tests/fakemodel.py).
SOURCES = [["the dog sleeps", "it is tired", "a cat runs", "it sees it", "mice hide"],
           ["one bird sings", "it flies twice", "it lands"]]
REFERENCES = [["DER HUND", "ER IST", "EINE KATZE", "SIE SIEHT", "MÄUSE"], ["EIN VOGEL", "ER FLIEGT", "ER LANDET"]]


def documents(sources=SOURCES, references=REFERENCES, first_pass=None) -> list[Document]:
    docs, line = [], 0
    for n, src in enumerate(sources):
        lines = list(range(line, line + len(src)))
        line += len(src)
        docs.append(Document(f"doc{n}", lines, list(src), None if references is None else list(references[n]),
                             None if first_pass is None else list(first_pass[n])))
    return docs


def sentence_level_outputs(sources=SOURCES) -> list[list[str]]:
    return [[translate(s, None) for s in src] for src in sources]


def run(strategy, docs, k=K, h=12, beam=1, max_positions=1024, **settings):
    """(outputs, decoder, searcher) of ``strategy`` on ``docs`` with the fake model."""
    searcher = RecordingSearcher(FakeModel(max_positions), beam=beam)
    dec = Decoder(searcher, k=k, h=h, **settings)
    out = REGISTRY[strategy](dec, docs)
    assert [len(o) for o in out] == [len(d) for d in docs], f"{strategy}: one hypothesis per sentence"
    return out, dec, searcher


def all_requests(searcher) -> list[tuple]:
    return [view for call in range(len(searcher.calls)) for view in searcher.views(call)]


def test_sentence_level_and_no_context_ask_for_each_sentence_alone():
    for strategy in ("sentence-level", "no-context"):
        out, dec, searcher = run(strategy, documents())
        assert len(searcher.calls) == 1, "every sentence of every document in one search call"
        assert searcher.views() == [((s,), ()) for src in SOURCES for s in src]
        assert dec.stats.requests == 8 and dec.stats.rounds == 1
        if strategy == "no-context":  # the document model's first segment
            assert out == sentence_level_outputs() and dec.stats.sep_mismatch == 1
        else:  # the sentence model's whole output: a sentence-level model has no segments to keep
            twice = translate(SOURCES[1][1], None)
            assert out[1][1] == f"{twice} <sep> {twice}" and out[0] == sentence_level_outputs()[0]


def test_sentence_level_decodes_with_the_sentence_model_when_it_is_given():
    document_searcher = RecordingSearcher(FakeModel())
    sentence_searcher = RecordingSearcher(FakeModel())
    dec = Decoder(document_searcher, k=K, h=1, sentence_searcher=sentence_searcher)
    REGISTRY["sentence-level"](dec, documents())
    assert not document_searcher.calls and len(sentence_searcher.calls) == 1


def test_full_segment_translates_non_overlapping_windows_and_maps_a_mismatch_back():
    out, dec, searcher = run("full-segment", documents())
    assert searcher.views() == [(tuple(SOURCES[0][0:3]), ()), (tuple(SOURCES[0][3:5]), ()),
                                (tuple(SOURCES[1][0:3]), ())]
    assert out[0] == segments(SOURCES[0][0:3]) + segments(SOURCES[0][3:5])
    # "it flies twice": the window's output has four segments for three sentences, mapped back to three, whole
    assert dec.stats.sep_mismatch == 1 and dec.stats.realigned_documents == {1}
    assert len(out[1]) == 3 and " ".join(out[1]) == " ".join(segments(SOURCES[1]))


def test_last_sentence_keeps_the_last_segment_and_records_the_context_it_generated():
    out, dec, searcher = run("last-sentence", documents())
    for n, src in enumerate(SOURCES):
        for i in range(len(src)):
            window = src[max(0, i - K + 1):i + 1]
            assert ((tuple(window), ())) in searcher.views()
            hypothesis = segments(window)  # "it flies twice" is two segments: the last is kept
            assert out[n][i] == hypothesis[-1], (n, i)
            assert dec.stats.generated_context[documents()[n].lines[i]] == hypothesis[:-1]
    assert dec.stats.sep_mismatch == 2, "the two windows holding the twice sentence"


def test_first_sentence_keeps_the_first_segment_of_a_window_of_right_context():
    out, _, searcher = run("first-sentence", documents())
    assert searcher.views()[:2] == [(tuple(SOURCES[0][0:3]), ()), (tuple(SOURCES[0][1:4]), ())]
    assert searcher.views()[4] == ((SOURCES[0][4],), ()), "the last sentence's window is itself alone"
    assert out == sentence_level_outputs()


@pytest.mark.parametrize("strategy", ["2-pass", "cheating"])
def test_two_pass_and_cheating_force_the_first_pass_or_the_reference_as_context(strategy):
    first = [[f"FP{n}{i} {s.upper()}" for i, s in enumerate(src)] for n, src in enumerate(SOURCES)]
    context = first if strategy == "2-pass" else REFERENCES
    out, dec, searcher = run(strategy, documents(first_pass=first))
    assert len(searcher.calls) == 1
    expected_requests, expected = [], []
    for n, src in enumerate(SOURCES):
        for i in range(len(src)):
            start = max(0, i - K + 1)
            expected_requests.append((tuple(src[start:i + 1]), tuple(context[n][start:i])))
            expected.append(translate(src[i], context[n][i - 1] if i else None))
    assert searcher.views() == expected_requests
    assert [s for o in out for s in o] == expected, "the continuation's first segment, never the forced prefix"
    assert dec.stats.sep_mismatch == 1 and dec.stats.sep_mismatch_lines == [6], "the twice sentence's line"


def sequential_doc_trans(sources=SOURCES):
    """Sequential doc-trans by its definition: each sentence after the model's own translation of the one before;
    and the requests it asks."""
    out, requests = [], set()
    for src in sources:
        own = []
        for i, sentence in enumerate(src):
            start = max(0, i - K + 1)
            requests.add((tuple(src[start:i + 1]), tuple(own[start:i])))
            own.append(translate(sentence, own[-1] if own else None))
        out.append(own)
    return out, requests


def test_sequential_doc_trans_forces_its_own_earlier_output_position_by_position():
    out, dec, searcher = run("doc-trans", documents())
    expected, requests = sequential_doc_trans()
    assert out == expected and set(all_requests(searcher)) == requests
    assert len(searcher.calls) == 5 and dec.stats.rounds == 5, "one call per position, the longest document's five"
    assert [len(call) for call in searcher.calls] == [2, 2, 2, 1, 1]


def rounds_of(searcher, docs) -> list[set]:
    """Each search call's sentences as (document, position), from the requests' lines."""
    where = {line: (n, i) for n, d in enumerate(docs) for i, line in enumerate(d.lines)}
    return [{where[request.line] for request in call} for call in searcher.calls]


@pytest.mark.parametrize("switch_share", [1.0, 0.0])
def test_parallel_doc_trans_decodes_exactly_the_stale_sentences_and_reaches_the_sequential_output(switch_share):
    """Round 1 decodes every sentence with the first pass as context; each later round exactly the sentences whose
    request (window and forced prefix) differs from the one they were last decoded with (switch_share 1.0: in
    parallel throughout), or only the first such sentence of each document (0.0: finishing sequentially)."""
    first = sentence_level_outputs()
    docs = documents(first_pass=first)
    out, dec, searcher = run("doc-trans", docs, doc_trans_mode="parallel", switch_share=switch_share)
    expected, _ = sequential_doc_trans()
    assert out == expected and dec.stats.converged
    current = [list(f) for f in first]
    last_request = {}
    rounds = rounds_of(searcher, docs)
    assert rounds[0] == {(n, i) for n, src in enumerate(SOURCES) for i in range(len(src))}
    for number, (call, decoded) in enumerate(zip(searcher.calls, rounds)):
        stale = set()
        for n, src in enumerate(SOURCES):
            for i in range(len(src)):
                start = max(0, i - K + 1)
                request = (tuple(src[start:i + 1]), tuple(current[n][start:i]))
                if last_request.get((n, i)) != request:
                    stale.add((n, i))
        if number and switch_share == 0.0:
            stale = {min(p for p in stale if p[0] == n) for n in {p[0] for p in stale}}
        assert decoded == stale, f"round {number + 1}"
        for request, view in zip(call, searcher.views(number)):
            n, i = next((n, i) for n, d in enumerate(docs) for i, line in enumerate(d.lines) if line == request.line)
            last_request[(n, i)] = view
            current[n][i] = translate(SOURCES[n][i], view[1][-1] if view[1] else None)
    assert dec.stats.redecoded == [len(r) for r in rounds]
    assert (dec.stats.sequential_from_round is None) == (switch_share == 1.0)
    assert len(rounds) <= max(map(len, SOURCES)) + 1


def test_parallel_doc_trans_takes_two_pass_over_as_round_one():
    first = sentence_level_outputs()
    two_pass, two_pass_dec, _ = run("2-pass", documents(first_pass=first))
    docs = documents(first_pass=first)
    take_over_round_one(docs, [s for o in two_pass for s in o], two_pass_dec.stats.sep_mismatch_lines)
    out, dec, searcher = run("doc-trans", docs, doc_trans_mode="parallel")
    fresh, fresh_dec, fresh_searcher = run("doc-trans", documents(first_pass=first), doc_trans_mode="parallel")
    assert out == fresh == sequential_doc_trans()[0]
    assert dec.stats.round_one_reused, "round 1 is not searched"
    assert [searcher.views(n) for n in range(len(searcher.calls))] == \
        [fresh_searcher.views(n) for n in range(1, len(fresh_searcher.calls))]
    assert dec.stats.redecoded == fresh_dec.stats.redecoded


def test_a_round_limit_counts_the_sentences_not_guaranteed_to_be_sequential():
    docs = documents(first_pass=sentence_level_outputs())
    out, dec, searcher = run("doc-trans", docs, doc_trans_mode="parallel", max_rounds=1)
    assert len(searcher.calls) == 1 and dec.stats.converged is False
    expected, _ = sequential_doc_trans()
    # after round 1 (2-pass) sentence 0 of each document is final; the first stale context is at sentence 2
    assert dec.stats.unconverged == sum(len(src) - 2 for src in SOURCES)
    assert [o[:2] for o in out] == [e[:2] for e in expected]


def test_doc_trans_beam_with_h1_is_doc_trans_and_with_h2_finds_the_better_document():
    sources = [["the dog sleeps", "it maybe waits", "it sees it", "mice hide"]]
    docs = documents(sources, None)
    one, _, _ = run("doc-trans-beam", docs, h=1, beam=2)
    assert one == sequential_doc_trans(sources)[0]
    two, dec, searcher = run("doc-trans-beam", documents(sources, None), h=2, beam=2)
    # the second hypothesis of "it maybe waits" (IT/?) scores -1.5 against -1, and gives the next sentence 1 more
    kept = [translate(sources[0][0], None)]
    kept.append(translate(sources[0][1], kept[0], unresolved=True))
    kept.append(translate(sources[0][2], kept[1]))
    kept.append(translate(sources[0][3], kept[2]))
    assert two == [kept] and two != one
    # position 3: each of the two kept candidates' contexts is one request, with the window of the sentence
    contexts = {view[1] for view in searcher.views(2)}
    assert len(searcher.calls[2]) == 2 and all(view[0] == tuple(sources[0][0:3]) for view in searcher.views(2))
    assert (kept[0], kept[1]) in contexts and dec.stats.rounds == 4


def test_source_primed_gives_the_whole_source_document_before_each_request():
    out, _, searcher = run("source-primed", documents())
    assert out == sequential_doc_trans()[0]
    model = searcher.model
    for call in searcher.calls:
        for request in call:
            doc = next(src for n, src in enumerate(SOURCES) if request.line in documents()[n].lines)
            assert model.sentences(request.document) == doc


def test_context_that_does_not_fit_drops_the_oldest_sentences_and_first_sentence_the_newest():
    # max_positions 7: "a cat runs <sep> it sees it </s>" (8 ids) does not fit, one sentence with </s> does
    out, dec, searcher = run("last-sentence", documents(), max_positions=7)
    windows = [view[0] for view in searcher.views()]
    assert ("a cat runs", "it sees it") not in windows and ("it sees it",) in windows
    assert dec.stats.context_truncated > 0
    _, first_dec, first_searcher = run("first-sentence", documents(), max_positions=7)
    assert all(view[0][0] == s for view, s in zip(first_searcher.views(), [s for src in SOURCES for s in src])), \
        "the sentence itself stays; its right context goes"
    assert first_dec.stats.context_truncated > 0


def test_every_registered_strategy_is_run_here():
    """A strategy added to the registry needs its requests checked in this module (refine's: test_refine_requests)."""
    checked = {"sentence-level", "no-context", "full-segment", "last-sentence", "first-sentence", "2-pass",
               "doc-trans", "doc-trans-beam", "cheating", "source-primed", "refine"}
    assert set(STRATEGIES) == checked


# ---- the resume journal ------------------------------------------------------------------------------------------
def journaled_run(strategy, path, key, fail_after=None, first_pass=None, **settings):
    from docnmt.decode.journal import Journal, JournaledSearcher

    searcher = RecordingSearcher(FakeModel(), fail_after=fail_after)
    dec = Decoder(JournaledSearcher(searcher, Journal(path, key)), k=K, h=1, **settings)
    return REGISTRY[strategy](dec, documents(first_pass=first_pass)), dec, searcher


KEY = {"strategy": "doc-trans", "inputs": {}, "settings": {"beam": 1}, "version": "test"}


def test_a_killed_decode_resumes_with_the_chunks_not_journaled_and_gives_the_same_output(tmp_path, monkeypatch):
    from docnmt.decode import journal

    monkeypatch.setattr(journal, "CHUNK", 1)  # one request a chunk: a kill within a search call
    whole, _, whole_searcher = journaled_run("doc-trans", tmp_path / "whole.journal", KEY)
    with pytest.raises(KeyboardInterrupt):
        journaled_run("doc-trans", tmp_path / "cut.journal", KEY, fail_after=5)
    resumed, dec, searcher = journaled_run("doc-trans", tmp_path / "cut.journal", KEY)
    assert resumed == whole
    searched = [r for call in searcher.calls for r in call]
    assert searched == [r for call in whole_searcher.calls[5:] for r in call], "only what the journal lacks"
    assert dec.searcher.resumed["requests"] == 5 and dec.searcher.resumed["chunks"] == 5


def test_a_journal_is_reused_only_for_the_same_requests_and_key(tmp_path, monkeypatch, capsys):
    from docnmt.decode import journal

    monkeypatch.setattr(journal, "CHUNK", 2)
    first = sentence_level_outputs()
    path = tmp_path / "2-pass.journal"
    with pytest.raises(KeyboardInterrupt):
        journaled_run("2-pass", path, KEY, fail_after=3, first_pass=first)
    # another first pass: the same key here (the workflow keys its checksum), other requests, so nothing reused
    other = [[s + " X" for s in o] for o in first]
    _, dec, searcher = journaled_run("2-pass", path, KEY, first_pass=other)
    assert sum(map(len, searcher.calls)) == 8 and dec.searcher.resumed["requests"] == 0
    # the same requests under another key: the journal is replaced, and every request searched again
    _, dec, searcher = journaled_run("2-pass", path, {**KEY, "settings": {"beam": 4}}, first_pass=other)
    assert "starting afresh" in capsys.readouterr().out and sum(map(len, searcher.calls)) == 8


def test_identical_requests_of_one_search_call_are_searched_once_and_share_the_hypotheses():
    """A repeated sentence (sentence-level), and a ctxpro set's example documents that are prefixes of one another
    (doc-trans, doc-trans-beam): each distinct request is searched once, every copy gets its hypotheses, and the
    output is that of searching each copy."""
    repeated = [["the dog sleeps", "it is tired"], ["the dog sleeps", "it is tired", "a cat runs"],
                ["the dog sleeps"]]
    out, dec, searcher = run("sentence-level", documents(repeated, None))
    assert [len(call) for call in searcher.calls] == [3] and dec.stats.repeated_requests == 3
    assert out == [[translate(s, None) for s in src] for src in repeated] and dec.stats.requests == 6
    longest = sequential_doc_trans([repeated[1]])[0][0]
    for strategy in ("doc-trans", "doc-trans-beam"):
        out, dec, searcher = run(strategy, documents(repeated, None), h=2, beam=2)
        assert out == [longest[:len(src)] for src in repeated], strategy
        assert dec.stats.repeated_requests > 0, strategy
        if strategy == "doc-trans":
            assert [len(call) for call in searcher.calls] == [1, 1, 1], "one distinct request a position"
            assert dec.stats.repeated_requests == 3

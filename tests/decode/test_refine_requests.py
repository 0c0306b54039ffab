"""refine's logic on the model that needs no training (tests/fakemodel.py, whose refinement makes each draft
sentence's ``IT/x`` agree with the draft sentence before it): what each request carries, the output of each unit and
round, and the draft kept where an answer is empty or cannot be read. Expectations are written out with
:func:`fakemodel.improve`, not the package's code."""

import pytest

from fakemodel import FakeModel, RecordingSearcher, improve
from docnmt.decode.documents import Document, group
from docnmt.decode.strategies import REGISTRY, Decoder

SOURCES = [["the dog sleeps", "it is tired", "a cat runs", "it sees it"], ["one bird sings", "it flies"]]
#: a draft whose pronouns agree with nothing: refine makes them agree with the draft sentence before
DRAFTS = [["DER HUND", "IT/? IST", "EINE KATZE", "IT/? SIEHT IT/?"], ["EIN VOGEL", "IT/? FLIEGT"]]


def documents(drafts=DRAFTS) -> list[Document]:
    src = [s for doc in SOURCES for s in doc]
    docids = [f"doc{n}" for n, doc in enumerate(SOURCES) for _ in doc]
    return group(src, docids, draft=[d for doc in drafts for d in doc])


def run(docs, **settings):
    searcher = RecordingSearcher(FakeModel())
    dec = Decoder(searcher, k=3, h=1, **settings)
    out = REGISTRY["refine"](dec, docs)
    assert [len(o) for o in out] == [len(d) for d in docs], "one line per sentence"
    return out, dec, searcher


def by_sentence(drafts) -> list[list[str]]:
    """The sentence unit's expected output: each sentence improved after the draft sentence before it."""
    return [[improve([d[i]], d[i - 1] if i else None)[0] for i in range(len(d))] for d in drafts]


def test_each_sentence_is_refined_with_the_source_document_and_the_whole_draft_in_view():
    out, dec, searcher = run(documents())
    assert out == by_sentence(DRAFTS) == [["DER HUND", "IT/DER IST", "EINE KATZE", "IT/EINE SIEHT IT/EINE"],
                                          ["EIN VOGEL", "IT/EIN FLIEGT"]]
    model = searcher.model
    assert len(searcher.calls) == 1 and dec.stats.rounds == 1 and dec.stats.requests == 6
    for request in searcher.calls[0]:
        n = 0 if request.line < 4 else 1
        i = request.line - (0 if n == 0 else 4)
        assert model.sentences(request.source) == [SOURCES[n][i]]
        assert model.sentences(request.refining) == [DRAFTS[n][i]]
        assert model.sentences(request.document) == SOURCES[n]
        assert model.sentences(request.draft_document) == DRAFTS[n]
        assert request.prefix == []
    assert dec.stats.kept_draft == 0


def test_the_document_unit_refines_the_whole_draft_in_one_request():
    out, dec, searcher = run(documents(), refine_unit="document")
    assert out == [improve(d, None) for d in DRAFTS]
    assert [searcher.model.sentences(r.source) for r in searcher.calls[0]] == SOURCES
    assert all(not r.document and not r.draft_document for r in searcher.calls[0])


def test_each_round_refines_the_last_rounds_output():
    drafts = [["DER HUND", "IT/? IST", "IT/? SCHLÄFT"], ["A"]]
    docs = group(["the dog", "it is", "it sleeps", "a"], ["d", "d", "d", "e"], draft=[s for d in drafts for s in d])
    one, _, _ = run(docs)
    two, dec, searcher = run(docs, refine_rounds=2)
    assert one == by_sentence(drafts) and two == by_sentence(one)
    assert len(searcher.calls) == 2 and dec.stats.rounds == 2
    assert [searcher.model.sentences(r.draft_document) for r in searcher.calls[1]][0] == one[0]


def test_an_empty_or_unreadable_answer_keeps_the_draft_and_is_counted():
    drafts = [["DER HUND", "EMPTY", "EINE KATZE", "IT/? SPLIT"], ["EIN VOGEL", "IT/? FLIEGT"]]
    out, dec, _ = run(documents(drafts))
    # EMPTY: no answer; SPLIT: two lines for one sentence (not complete): both keep their draft
    assert out[0] == ["DER HUND", "EMPTY", "EINE KATZE", "IT/? SPLIT"] and out[1] == by_sentence(drafts[1:])[0]
    assert dec.stats.kept_draft == 2 and dec.stats.kept_draft_lines == [1, 3]


def test_the_document_units_answer_of_another_line_count_is_realigned_and_drops_nothing():
    drafts = [["DER HUND", "IT/? SPLIT", "EINE KATZE", "IT/? SIEHT"], ["EIN VOGEL", "EMPTY"]]
    out, dec, _ = run(documents(drafts), refine_unit="document")
    answer = improve(drafts[0], None)  # five lines for four sentences
    assert len(answer) == 5 and " ".join(out[0]).split() == " ".join(answer).split()
    assert dec.stats.realigned_documents == {0, 1}
    # doc1: one line for two sentences, mapped back with an empty piece, where the draft is kept (counted)
    assert out[1] == ["EIN VOGEL", "EMPTY"] and dec.stats.kept_draft == 1 and dec.stats.kept_draft_lines == [5]


def test_an_empty_answer_to_a_whole_document_keeps_every_sentences_draft():
    drafts = [["EMPTY"] * 4, ["EIN VOGEL", "IT/? FLIEGT"]]
    out, dec, _ = run(documents(drafts), refine_unit="document")
    assert out[0] == drafts[0] and dec.stats.kept_draft == 4


def test_refine_needs_its_draft_and_known_settings():
    with pytest.raises(ValueError, match="draft"):
        run(group(["a"], ["d"]))
    with pytest.raises(ValueError, match="unit"):
        run(documents(), refine_unit="paragraph")
    with pytest.raises(ValueError, match="refine_rounds"):
        run(documents(), refine_rounds=0)


def test_a_prompt_that_does_not_fit_is_an_error_naming_the_line():
    from docnmt.textio import InputError

    searcher = RecordingSearcher(FakeModel(max_positions=12))
    dec = Decoder(searcher, k=3, h=1, source_name="test.en")
    with pytest.raises(InputError, match=r"test\.en:1: .*context window"):
        REGISTRY["refine"](dec, documents())

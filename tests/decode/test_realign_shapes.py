"""docnmt.decode.realign on every shape a whole document's translation (an LLM's answer, a refinement) comes back
in: fewer pieces than sentences, as many, more, and empty pieces. Whatever the shape, the output has one line per
sentence, in order, and holds every word of the answer, none dropped, none repeated."""

import pytest
from hypothesis import given, settings, strategies as st

from docnmt.decode.realign import realign

SOURCES = ["It is green.", "I like it.", "Do you see it?", "Yes.", "Thank you, Sir."]
GUIDE = ["Sie ist grün.", "Ich mag sie.", "Siehst du sie?", "Ja.", "Danke, mein Herr."]


def words(lines):
    return " ".join(lines).split()


@pytest.mark.parametrize("answer, expected", [
    # as many pieces as sentences: kept as they are, an empty piece included
    (["Sie ist grün.", "Ich mag sie.", "", "Ja.", "Danke, mein Herr."],
     ["Sie ist grün.", "Ich mag sie.", "", "Ja.", "Danke, mein Herr."]),
    # fewer: two sentences on one line, split back at the sentence end
    (["Sie ist grün. Ich mag sie.", "Siehst du sie?", "Ja.", "Danke, mein Herr."], GUIDE),
    # fewer: the whole document on one line
    ([" ".join(GUIDE)], GUIDE),
    # more: a sentence over two lines, joined again
    (["Sie ist grün.", "Ich mag sie.", "Siehst du", "sie?", "Ja.", "Danke, mein Herr."], GUIDE),
    # more, with empty pieces between: they carry no words and take no sentence
    (["", "Sie ist grün.", "", "Ich mag sie.", "Siehst du sie?", "", "Ja.", "Danke, mein Herr.", ""], GUIDE),
])
def test_each_shape_comes_back_as_one_line_per_sentence(answer, expected):
    assert realign(SOURCES, answer, GUIDE) == expected


def test_an_empty_answer_leaves_every_sentence_empty():
    assert realign(SOURCES, ["", " "], GUIDE) == [""] * len(SOURCES)
    assert realign(SOURCES, [], None) == [""] * len(SOURCES)


piece = st.text(alphabet=st.sampled_from("abcäß .?!;:\"')"), max_size=30)


@settings(max_examples=300, deadline=None)
@given(answer=st.lists(piece, max_size=14), with_guide=st.booleans(), n=st.integers(1, len(SOURCES)))
def test_no_word_of_the_answer_is_ever_dropped_or_repeated(answer, with_guide, n):
    sources = SOURCES[:n]
    out = realign(sources, answer, GUIDE[:n] if with_guide else None)
    assert len(out) == n
    assert words(out) == words(answer)

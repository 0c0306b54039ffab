"""A window's output mapped back to its sentences (docnmt.decode.realign) on crafted outputs: merged lines, split
lines, missing lines; and full-segment's use of it, with its count in the sidecar's record."""

from __future__ import annotations

import pytest

from docnmt import SEP
from docnmt.decode.documents import Document
from docnmt.decode.realign import chrf, realign, units
from docnmt.decode.strategies import REGISTRY, Decoder
from docnmt.decode.requests import Counted, Hypothesis

SOURCES = ["I saw the cat in the garden.", "It was black.", "Then it ran away very quickly."]
GUIDE = ["Ich sah die Katze im Garten.", "Sie war schwarz.", "Dann rannte sie sehr schnell weg."]
ANSWER = ["Ich sah die Katze im Garten.", "Sie war schwarz.", "Dann lief sie sehr schnell davon."]


@pytest.mark.parametrize("hypothesis, reference", [
    ("Hallo Welt", "Hallo Welt!"), ("Das ist gut.", "Das ist nicht gut."), ("a", "b"), ("", "leer"),
    ("Er sagte: ja.", "Sie sagte nein"), (ANSWER[2], GUIDE[2]),
])
def test_chrf_is_sacrebleus_sentence_chrf(hypothesis, reference):
    from sacrebleu.metrics import CHRF

    assert chrf(hypothesis, reference) == pytest.approx(CHRF().sentence_score(hypothesis, [reference]).score, abs=1e-9)


def test_units_split_after_sentence_ends_and_closing_quotes():
    assert units(['Er sagte: "Komm." Dann ging er.', "", " Ende! "]) == \
        ["Er sagte:", '"Komm."', "Dann ging er.", "Ende!"]


@pytest.mark.parametrize("guide", [GUIDE, None], ids=["first pass", "lengths"])
def test_merged_lines_are_split_back_into_their_sentences(guide):
    merged = [f"{ANSWER[0]} {ANSWER[1]}", ANSWER[2]]
    assert realign(SOURCES, merged, guide) == ANSWER
    assert realign(SOURCES, [" ".join(ANSWER)], guide) == ANSWER


@pytest.mark.parametrize("guide", [GUIDE, None], ids=["first pass", "lengths"])
def test_a_sentence_split_over_two_lines_is_joined_again(guide):
    split_lines = [ANSWER[0], "Sie war", "schwarz.", ANSWER[2]]
    assert realign(SOURCES, split_lines, guide) == ANSWER


def test_a_missing_line_leaves_that_sentence_empty_where_the_guide_says_which():
    assert realign(SOURCES, [ANSWER[0], ANSWER[2]], GUIDE) == [ANSWER[0], "", ANSWER[2]]
    assert realign(SOURCES, [ANSWER[1], ANSWER[2]], GUIDE) == ["", ANSWER[1], ANSWER[2]]


def test_the_guide_decides_where_lengths_alone_cannot():
    """Two short middle sentences and one answer line missing: the first pass says which one is there."""
    sources = ["We met at noon.", "Yes.", "No.", "They left at five in the evening."]
    guide = ["Wir trafen uns mittags.", "Ja.", "Nein.", "Sie gingen um fünf Uhr abends."]
    answer = ["Wir trafen uns um zwölf.", "Nein.", "Sie gingen um fünf Uhr am Abend."]
    assert realign(sources, answer, guide) == [answer[0], "", "Nein.", answer[2]]


def test_an_output_with_the_right_count_is_kept_as_it_is_and_a_wrong_guide_is_refused():
    odd = ["eins. zwei.", "", "drei"]  # the count matches: nothing is moved, not even an empty line
    assert realign(SOURCES, odd, GUIDE) == odd
    with pytest.raises(ValueError, match="guide of 3 sentences"):
        realign(SOURCES, ["x"], GUIDE[:2])
    assert realign(SOURCES, [], GUIDE) == ["", "", ""]


def test_a_whole_documents_answer_is_aligned_in_a_moment():
    import time

    sentences = [f"Satz Nummer {i} handelt von {'etwas ' * (i % 7)}Wichtigem." for i in range(200)]
    merged = [f"{sentences[i]} {sentences[i + 1]}" if i % 10 == 0 else sentences[i] for i in range(200) if i % 10 != 1]
    start = time.perf_counter()
    assert realign([s.replace("Satz", "Sentence") for s in sentences], merged, sentences) == sentences
    assert time.perf_counter() - start < 30  # a bound against a quadratic blow-up, not a timing goal


class ScriptedModel:
    """Words as ids; ``<sep>`` its own id: enough of a model for the strategies' bookkeeping."""

    backend, template, max_positions = "scripted", None, 1000

    def __init__(self):
        self.words: dict[str, int] = {SEP: 0}
        self.sep = 0

    def encode(self, text, source=True):
        return [self.words.setdefault(word, len(self.words)) for word in text.split()]

    def decode(self, ids):
        names = {i: w for w, i in self.words.items()}
        return " ".join(names[i] for i in ids)

    def fits(self, source, prefix, continuation=1, document=()):
        return True


class ScriptedSearcher(Counted):
    """Answers each window with the output given for its first source sentence."""

    def __init__(self, answers):
        self.model, self.beam, self.answers = ScriptedModel(), 1, answers
        self.reset_counters()

    def search(self, requests):
        first = [self.model.decode(r.source).split(f" {SEP} ")[0] for r in requests]
        return [[Hypothesis(self.model.encode(f" {SEP} ".join(self.answers[f])), 0.0, 0.0)] for f in first]


def test_full_segment_maps_each_mismatched_window_back_and_counts_its_documents():
    second = ["A dog barked.", "We ran."]
    answers = {SOURCES[0]: [" ".join(ANSWER[:2]), ANSWER[2]],  # merged lines
               second[0]: ["Ein Hund bellte.", "Wir rannten."]}  # as many lines as sentences
    docs = [Document("a", [0, 1, 2], list(SOURCES), first_pass=list(GUIDE)),
            Document("b", [3, 4], list(second), first_pass=["Ein Hund bellte.", "Wir liefen."])]
    decoder = Decoder(ScriptedSearcher(answers), k=3, h=1)
    assert REGISTRY["full-segment"](decoder, docs) == [ANSWER, answers[second[0]]]
    assert decoder.stats.realigned_documents == {0} and decoder.stats.sep_mismatch == 1

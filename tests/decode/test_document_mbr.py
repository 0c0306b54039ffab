"""Document-level MBR by optimal transport (docnmt.decode.document_mbr): MBR-OT's utility on hand-made documents
whose transport cost is known in closed form, its edge cases, a split sentence, and the selection's ties."""

import math

import numpy as np
import pytest

from docnmt.decode import document_mbr as dm


def table_similarity(table: dict):
    """A sentence utility given as a table of pairs (unlisted pairs: 1 when equal, else 0)."""
    def similarity(hyp, ref):
        return np.array([[table.get((h, r), 1.0 if h == r else 0.0) for r in ref] for h in hyp])
    return similarity


def test_identical_documents_score_one_without_a_transport():
    assert dm.document_utility(["a", "b"], ["a", "b"], table_similarity({}), "assign") == 1.0
    assert dm.document_utility(["a", "b"], ["a", "b"], lambda h, r: 1 / 0, "sinkhorn") == 1.0


def test_assign_is_the_mean_cost_of_the_best_assignment():
    """Utilities 0.8 and 0.6 on the diagonal, 0.7 and 0.1 across: the assignment keeps the diagonal (costs 0.2 +
    0.4 < 0.3 + 0.9), so U = 1 - 0.3."""
    sim = table_similarity({("h1", "r1"): 0.8, ("h2", "r2"): 0.6, ("h1", "r2"): 0.7, ("h2", "r1"): 0.1})
    assert dm.document_utility(["h1", "h2"], ["r1", "r2"], sim, "assign") == pytest.approx(0.7)
    # rectangular: three sentences against two, the two cheapest disjoint pairs, their mean (weights do not enter)
    sim3 = table_similarity({("h1", "r1"): 0.9, ("h2", "r2"): 0.5, ("h3", "r2"): 0.7})
    assert dm.document_utility(["h1", "h2", "h3"], ["r1", "r2"], sim3, "assign") == pytest.approx(1 - (0.1 + 0.3) / 2)


def test_sinkhorn_is_pots_entropic_cost_and_near_the_exact_transport():
    """Uniform masses of 1/2 on a 2 x 2 cost [[0, 1], [1, 0]]: the exact transport costs 0; Sinkhorn at 0.1 moves a
    share e^-10 / (1 + e^-10) of each mass across, so its cost is that share (closed form of the 2 x 2 case)."""
    sim = table_similarity({})
    utility = dm.document_utility(["a", "b"], ["b", "a"], sim, "sinkhorn")
    across = math.exp(-10) / (1 + math.exp(-10))
    assert 1 - utility == pytest.approx(across, abs=1e-9)
    assert dm.document_utility(["a", "b"], ["b", "a"], sim, "assign") == 1.0


def test_length_weights_move_the_mass_of_the_long_sentence():
    """One long sentence matched perfectly and one short one not at all: by length the matched one carries 9/10 of
    the mass, so the exact transport costs 1/10 (POT's exact solver; Sinkhorn at 0.1, POT's own value, within 0.005 of
    it), uniformly 1/2."""
    import ot

    hyp, ref = ["x" * 9, "y"], ["x" * 9, "z"]
    sim = table_similarity({})
    a = dm.sentence_weights(hyp, "length")
    assert a.tolist() == [0.9, 0.1]
    cost = np.array([[0.0, 1.0], [1.0, 1.0]])
    assert ot.emd2(a, a, cost) == pytest.approx(0.1)
    by_length = dm.document_utility(hyp, ref, sim, "sinkhorn", "length")
    assert by_length == pytest.approx(1 - ot.sinkhorn2(a, a, cost, 0.1)) and by_length == pytest.approx(0.9, abs=5e-3)
    assert dm.document_utility(hyp, ref, sim, "sinkhorn", "uniform") == pytest.approx(0.5, abs=5e-3)
    assert dm.sentence_weights(["", ""], "length").tolist() == [0.5, 0.5], "no lengths: uniform"


def test_a_document_with_more_than_twice_the_sentences_is_cut_to_twice():
    assert dm.cut_to_threshold(list("abcde"), ["x", "y"]) == (list("abcd"), ["x", "y"])
    assert dm.cut_to_threshold(["x"], list("abc")) == (["x"], list("ab"))
    assert dm.cut_to_threshold(list("abcd"), ["x", "y"]) == (list("abcd"), ["x", "y"]), "twice is not cut"
    seen = []

    def similarity(hyp, ref):
        seen.append((list(hyp), list(ref)))
        return np.zeros((len(hyp), len(ref)))
    assert dm.document_utility(list("abcde"), ["x", "y"], similarity, "assign") == 0.0
    assert seen == [(list("abcd"), ["x", "y"])]
    assert dm.document_utility([], ["x"], similarity, "assign") == 0.0


def test_a_split_sentence_is_preferred_by_transport_where_line_by_line_is_not():
    """The pseudo-reference has two sentences; one candidate splits the second into two, another keeps two
    sentences but says something else in the second. Transport (sinkhorn, sentence chrF) ranks the split one
    higher; comparing line by line (the i-th sentence with the i-th, a missing one scoring 0) ranks it lower."""
    ref = ["I bought a lamp yesterday.", "It was very expensive, but I like it a lot."]
    split = ["I bought a lamp yesterday.", "It was very expensive,", "but I like it a lot."]
    other = ["I bought a lamp yesterday.", "The weather is nice in Frankfurt today."]
    sim = dm.PooledChrf([ref, split, other])
    by_transport = {name: dm.document_utility(c, ref, sim, "sinkhorn") for name, c in (("split", split),
                                                                                         ("other", other))}
    assert by_transport["split"] > by_transport["other"]

    def line_by_line(cand):
        scores = sim(cand, ref)
        return sum(scores[i, i] for i in range(min(len(cand), len(ref)))) / max(len(cand), len(ref))
    assert line_by_line(split) < line_by_line(other)


def test_pooled_chrf_is_sacrebleus_sentence_chrf_on_every_pair_and_edge_case():
    """Every ordered pair, empty and one-character sentences (orders without n-grams), repeated characters (counts
    above 1), punctuation and whitespace: equal to sacrebleu's CHRF().sentence_score / 100."""
    from sacrebleu.metrics import CHRF

    sentences = ["Sie war sehr teuer.", "Er war sehr teuer.", "Ich habe gestern eine Lampe gekauft.", "", "a", "ab c",
                 "aaaa aaa", "Ähm ... ja!", "  Er   war  ", "Kommst du mit?", "Kommen Sie mit?"]
    sim = dm.PooledChrf([sentences[:5], sentences[5:]])
    chrf = CHRF()
    for h in sentences:
        for r in sentences:
            assert sim([h], [r])[0, 0] == pytest.approx(chrf.sentence_score(h, [r]).score / 100, abs=1e-12), (h, r)


def test_select_takes_the_mean_against_all_itself_included_and_the_first_on_a_tie():
    """Three candidates, two the same: the repeated one gathers utility 1 twice; the expected utilities are the
    row means of the utility matrix, computed directly here."""
    a, b = ["I like it."], ["I like him."]
    candidates = [b, a, a]
    sim = dm.PooledChrf(candidates)
    u = dm.document_utility(b, a, sim, "sinkhorn")
    v = dm.document_utility(a, b, sim, "sinkhorn")
    chosen = dm.select(candidates, sim, "sinkhorn")
    assert chosen.expected == pytest.approx([(1 + 2 * u) / 3, (v + 2) / 3, (v + 2) / 3])
    assert chosen.chosen == 1 and chosen.transports == 2
    tie = dm.select([a, b], table_similarity({}), "assign")
    assert tie.expected == [0.5, 0.5] and tie.chosen == 0, "the first on a tie"
    with pytest.raises(ValueError, match="solver must be one of assign, sinkhorn"):
        dm.select([a], sim, "emd")
    with pytest.raises(ValueError, match="weights must be one of uniform, length"):
        dm.select([a], sim, weights="tokens")

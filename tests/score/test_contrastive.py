"""ContraPro contrastive accuracy on a hand-built mini set with known answers (a tie counts as wrong)."""

from types import SimpleNamespace

from docnmt.score.contrastive import accuracy_table, build_inputs, decisions


def test_correct_only_when_strictly_better_than_every_contrastive():
    correct = [-1.0, -2.0, -3.0, -1.5, -4.0]
    contrastive = [[-2.0, -3.0], [-1.0, -5.0], [-3.0, -4.0], [-1.5000001], [-4.0, -4.0]]
    assert decisions(correct, contrastive) == [True, False, False, True, False]  # ties (3rd, 5th) are wrong


def test_accuracy_by_antecedent_distance_and_reference_pronoun():
    examples = [SimpleNamespace(ante_distance=d, ref_pronoun=p) for d, p in
                [(0, "er"), (1, "Sie"), (1, "sie"), (2, "es"), (3, "er"), (7, "es"), (None, "es")]]
    flags = [True, True, False, True, False, True, False]
    table = accuracy_table(examples, flags)
    assert table["overall"] == {"correct": 4, "total": 7, "accuracy": 4 / 7}
    assert table["by_ante_distance"]["1"] == {"correct": 1, "total": 2, "accuracy": 0.5}
    assert table["by_ante_distance"][">3"]["total"] == 1 and table["by_ante_distance"]["unknown"]["total"] == 1
    assert list(table["by_ante_distance"]) == ["0", "1", "2", "3", ">3", "unknown"]
    assert table["by_ref_pronoun"]["sie"]["total"] == 2  # Sie and sie: one pronoun, lowercased
    assert table["by_ref_pronoun"]["es"] == {"correct": 2, "total": 3, "accuracy": 2 / 3}


def test_document_level_inputs_carry_the_left_context_and_score_each_candidate():
    src = ["A .", "B .", "C .", "D ."]
    tgt = ["a .", "b .", "c .", "d ."]
    example = SimpleNamespace(line=2, left=2)
    sources, targets, owners = build_inputs([example], src, tgt, [["c .", "x ."]], "document", 3)
    assert sources == ["A . <sep> B . <sep> C .", "A . <sep> B . <sep> C ."]
    assert targets == ["a . <sep> b . <sep> c .", "a . <sep> b . <sep> x ."]
    assert owners == [0, 0]
    sources, targets, _ = build_inputs([example], src, tgt, [["c .", "x ."]], "sentence", 3)
    assert sources == ["C .", "C ."] and targets == ["c .", "x ."]

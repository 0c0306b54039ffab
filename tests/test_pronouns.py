"""Pronoun gender and formality F1 (the paper's German extension of BlonDe): every rule, by hand-counted cases."""

import json

import pytest

from conftest import REAL_SAMPLES
from docnmt import pronouns
from docnmt.pronouns import score, sentence_counts
from docnmt.textio import write_lines


def T(text):
    """A tagged German sentence from 'word/TAG' items (untagged words get NN)."""
    out = []
    for item in text.split():
        word, _, tag = item.partition("/")
        out.append((word, tag or "NN"))
    return out


def test_gender_counts_only_where_the_source_has_it_its_or_itself():
    hyp, ref = T("Er/PPER passt ./$."), T("Er/PPER passt ./$.")
    assert sentence_counts("It fits.", hyp, ref)["gender"]["masculine"] == (1, 1, 1)
    assert sentence_counts("Its colour fits.", hyp, ref)["gender"]["masculine"] == (1, 1, 1)
    assert "gender" not in sentence_counts("He fits.", hyp, ref)
    assert "gender" not in sentence_counts("Italy is nice.", hyp, ref)  # a word, not 'it'


def test_lowercasing_and_the_three_gender_classes():
    hyp = T("Er/PPER mag ihn/PPER und es/PPER ,/$, sie/PPER mag ihre/PPOSAT Farbe")
    ref = T("er/PPER mag ihm/PPER und es/PPER ,/$, Sie/PPER mag ihrem/PPOSAT Hund")
    counts = sentence_counts("It likes it.", hyp, ref)["gender"]
    assert counts["masculine"] == (2, 2, 2)
    assert counts["feminine"] == (2, 2, 2)
    assert counts["neuter"] == (1, 1, 1)


def test_only_tokens_tagged_as_pronouns_count():
    # 'sie' as a pronoun counts; 'es' tagged as an expletive/other and 'Ihr' as a noun do not.
    hyp = T("sie/PPER sieht es/PTKVZ")
    ref = T("sie/PPER sieht es/PPER")
    counts = sentence_counts("It sees it.", hyp, ref)["gender"]
    assert counts["feminine"] == (1, 1, 1)
    assert counts["neuter"] == (0, 1, 0)


def test_feminine_is_skipped_where_the_source_has_you_or_they():
    hyp, ref = T("Sie/PPER haben es/PPER"), T("Sie/PPER haben es/PPER")
    assert "feminine" in sentence_counts("It has it.", hyp, ref)["gender"]
    for source in ("Do you have it?", "They have it.", "I gave them it.", "Their cat has it."):
        counts = sentence_counts(source, hyp, ref)["gender"]
        assert "feminine" not in counts, source
        assert counts["neuter"] == (1, 1, 1)


def test_formality_counts_only_where_the_source_has_you_and_is_case_sensitive_for_formal():
    hyp = T("Kommst du/PPER mit deinem/PPOSAT Auto ?/$.")
    ref = T("Kommen Sie/PPER mit Ihrem/PPOSAT Auto ?/$.")
    counts = sentence_counts("Are you coming with your car?", hyp, ref)["formality"]
    assert counts["informal"] == (2, 0, 0)
    assert counts["formal"] == (0, 2, 0)
    assert "formality" not in sentence_counts("Is he coming with his car?", hyp, ref)
    # lowercase sie/ihr are third person: never formal
    lower = sentence_counts("Are you coming?", T("kommt sie/PPER mit ihr/PPER"), T("kommt sie/PPER"))
    assert lower["formality"]["formal"] == (0, 0, 0)


def test_formal_is_skipped_where_the_source_has_they_it_or_she():
    hyp, ref = T("Sie/PPER sehen Sie/PPER"), T("Sie/PPER sehen Sie/PPER")
    assert sentence_counts("You see you.", hyp, ref)["formality"]["formal"] == (2, 2, 2)
    for source in ("They see you.", "You see it.", "She sees you.", "You see her."):
        counts = sentence_counts(source, hyp, ref)["formality"]
        assert "formal" not in counts and "informal" in counts, source


def test_micro_average_with_blonde_weights_and_per_class_scores():
    sources = ["It is here.", "It is here.", "I see it."]
    hyps = [T("Er/PPER ist hier"), T("Sie/PPER ist hier"), T("Ich sehe es/PPER")]
    refs = [T("Er/PPER ist hier"), T("Er/PPER ist hier"), T("Ich sehe ihn/PPER")]
    result = score(sources, hyps, refs, min_examples=1)["gender"]
    masc, fem, neut = (result["classes"][c] for c in ("masculine", "feminine", "neuter"))
    assert (masc["hyp"], masc["ref"], masc["match"]) == (1, 3, 1)
    assert (fem["hyp"], fem["ref"], fem["match"]) == (1, 0, 0)
    assert (neut["hyp"], neut["ref"], neut["match"]) == (1, 0, 0)
    assert masc["precision"] == 1.0 and masc["recall"] == pytest.approx(1 / 3) and masc["f1"] == pytest.approx(0.5)
    # weights 0.5/0.5/0: P = 0.5*1 / (0.5*1 + 0.5*1) = 0.5, R = 0.5*1 / (0.5*3) = 1/3; neuter does not count
    assert result["precision"] == pytest.approx(0.5)
    assert result["recall"] == pytest.approx(1 / 3)
    assert result["f1"] == pytest.approx(2 * 0.5 * (1 / 3) / (0.5 + 1 / 3))


def test_the_reporting_threshold_needs_every_class():
    sources = ["It is here."] * 3
    hyps = refs = [T("Er/PPER ist hier"), T("Sie/PPER ist hier"), T("Es/PPER ist hier")]
    assert score(sources, hyps, refs, min_examples=1)["gender"]["reported"] is True
    two_of_each = score(sources * 2, hyps * 2, refs * 2, min_examples=2)["gender"]
    assert two_of_each["reported"] is True and two_of_each["examples"] == {"masculine": 2, "feminine": 2, "neuter": 2}
    missing_neuter = score(sources[:2] * 5, hyps[:2] * 5, refs[:2] * 5, min_examples=2)["gender"]
    assert missing_neuter["reported"] is False and missing_neuter["examples"]["neuter"] == 0
    assert score(sources, hyps, refs, min_examples=1)["formality"]["reported"] is False  # no 'you' at all


def test_spacy_adapter_reads_stts_tags_from_a_pipeline():
    spacy = pytest.importorskip("spacy")
    from spacy.language import Language

    stts = {"Er": "PPER", "sie": "PPER", "ihren": "PPOSAT"}

    @Language.component("docnmt_test_tags")
    def tags(doc):
        for token in doc:
            token.tag_ = stts.get(token.text, "NN")
        return doc

    nlp = spacy.blank("de")
    nlp.add_pipe("docnmt_test_tags")
    tagger = pronouns.SpacyTagger(nlp, "spacy test pipeline")
    assert tagger.tag(["Er mag sie."]) == [[("Er", "PPER"), ("mag", "NN"), ("sie", "PPER"), (".", "NN")]]


def test_auto_uses_spacy_de_core_news_sm_where_installed_else_hanta():
    tagger = pronouns.load_tagger("auto")
    if pronouns.spacy_model_installed():
        assert tagger.name.startswith("spacy de_core_news_sm")
    else:
        assert tagger.name.startswith("HanTa ") and "morphmodel_ger.pgz" in tagger.name


def test_hanta_tags_german_pronouns_as_stts():
    tagger = pronouns.HanTaTagger()
    (tagged,) = tagger.tag(["Ich habe sie gestern in Ihrem Büro gesehen."])
    tags = dict(tagged)
    assert tags["sie"] == "PPER" and tags["Ihrem"] == "PPOSAT" and tags["Büro"] == "NN"
    assert tagger.tag([""]) == [[]]


@pytest.mark.skipif(not (REAL_SAMPLES / "iwslt17-ted-test-en-de").is_dir(), reason="../shared/real-samples is absent")
def test_real_ted_text_reference_against_itself_and_against_a_shifted_reference(tmp_path):
    """On genuine IWSLT17 TED En-De: the reference scores F1 1 against itself; real counts, the tagger named."""
    from realformat import real_ted_en_de

    src, ref = real_ted_en_de(REAL_SAMPLES / "iwslt17-ted-test-en-de", tmp_path)
    write_lines(tmp_path / "src.en", src)
    write_lines(tmp_path / "ref.de", ref)
    write_lines(tmp_path / "shifted.de", ref[1:] + ref[:1])
    out = tmp_path / "pronouns.json"
    pronouns.main(["--source", str(tmp_path / "src.en"), "--reference", str(tmp_path / "ref.de"),
                   "--system", f"reference={tmp_path / 'ref.de'}", "--system", f"shifted={tmp_path / 'shifted.de'}",
                   "--tagger", "hanta", "--output", str(out)])
    result = json.loads(out.read_text())
    assert result["tagger"].startswith("HanTa")
    gender = result["systems"]["reference"]["gender"]
    assert gender["f1"] == pytest.approx(1.0)
    # TED talks have real 'it' sentences with er/sie/es in the reference, and 'you' sentences
    assert gender["examples"]["neuter"] >= 20 and gender["examples"]["masculine"] >= 5
    assert sum(result["systems"]["reference"]["formality"]["examples"].values()) >= 20
    assert result["systems"]["shifted"]["gender"]["f1"] < 0.8

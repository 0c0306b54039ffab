"""Pronoun gender and formality F1 as the paper's German BlonDe fork computes it: every rule, by hand-counted cases.

The fork is christian3141/BlonDe@bdb4eeff; ``docnmt.score.pronouns`` names the rules. The ``DIFFERENCES`` cases each show
one change from the rules this module had before (written from a description of the fork): the old number, which
the replaced code gave, and the new one, the fork's.
"""

import json
import math
import subprocess
import sys

import pytest

from helpers import REAL_SAMPLES
from docnmt.score import pronouns
from docnmt.score.pronouns import RULES, score, sentence_counts
from docnmt.textio import write_lines


def T(text):
    """A tagged German sentence from 'word/TAG' items (untagged words get NN)."""
    out = []
    for item in text.split():
        word, _, tag = item.partition("/")
        out.append((word, tag or "NN"))
    return out


def E(text):
    """A tagged English source sentence from 'word/TAG' items (untagged words get NN)."""
    return T(text)


STRICT = "capitalized-formal"


# ---- source checks ---------------------------------------------------------------
def test_gender_counts_only_where_the_source_has_it_its_or_itself():
    hyp, ref = T("er/PPER passt ./$."), T("er/PPER passt ./$.")
    for source in ("It fits.", "Its colour fits.", "It did so itself.", "it's fine."):
        assert sentence_counts(source, hyp, ref)["gender"]["masculine"] == (1, 1, 1), source
    for source in ("He fits.", "Italy is nice.", "This fits."):
        assert "gender" not in sentence_counts(source, hyp, ref), source


def test_feminine_is_dropped_where_the_source_has_a_you_or_they_form():
    hyp, ref = T("sie/PPER haben es/PPER"), T("sie/PPER haben es/PPER")
    assert sentence_counts("It has it.", hyp, ref)["gender"]["feminine"] == (1, 1, 1)
    for source in ("Do you have it?", "It is your turn.", "It is yours.", "Do it yourself.", "They have it.",
                   "I gave them it.", "Their cat has it.", "It is theirs.", "They did it themselves."):
        counts = sentence_counts(source, hyp, ref)["gender"]
        assert "feminine" not in counts and counts["neuter"] == (1, 1, 1), source
    # she/her do not drop feminine (they are the 3rd person singular the feminine class is about)
    assert "feminine" in sentence_counts("She said it was hers.", hyp, ref)["gender"]


def test_formality_counts_only_where_the_source_has_a_you_form():
    hyp, ref = T("kommst du/PPER mit deinem/PPOSAT auto"), T("kommen sie/PPER mit ihrem/PPOSAT auto")
    for source in ("Are you coming?", "Is your car here?", "It is yours.", "Do it yourself."):
        assert "formality" in sentence_counts(source, hyp, ref), source
    for source in ("Is he coming with his car?", "Enjoy yourselves.", "Thank u."):
        assert "formality" not in sentence_counts(source, hyp, ref), source


def test_formal_is_dropped_where_the_source_has_a_they_it_or_she_form():
    hyp, ref = T("sie/PPER sehen sie/PPER"), T("sie/PPER sehen sie/PPER")
    assert sentence_counts("You see you.", hyp, ref)["formality"]["formal"] == (2, 2, 2)
    for source in ("They see you.", "You see them.", "You see it.", "You see its door.", "She sees you.",
                   "You see her.", "You see hers.", "You see herself.", "You see theirs."):
        counts = sentence_counts(source, hyp, ref)["formality"]
        assert "formal" not in counts and counts["informal"] == (0, 0, 0), source


def test_only_source_tokens_tagged_prp_prp_dollar_wp_or_wp_dollar_are_checked():
    hyp, ref = T("er/PPER läuft"), T("er/PPER läuft")
    assert "gender" in sentence_counts(E("it/PRP runs"), hyp, ref)
    assert "gender" in sentence_counts(E("its/PRP$ engine runs"), hyp, ref)
    assert "gender" not in sentence_counts(E("the it/NNP department runs"), hyp, ref)
    # a you-form tagged otherwise does not drop feminine
    fem_hyp, fem_ref = T("sie/PPER läuft"), T("sie/PPER läuft")
    assert "feminine" in sentence_counts(E("it/PRP runs you/XX"), fem_hyp, fem_ref)["gender"]
    assert "feminine" not in sentence_counts(E("it/PRP runs you/PRP"), fem_hyp, fem_ref)["gender"]
    # word matching (no English tagger): every word is a candidate
    assert pronouns.source_pronouns("The IT department, its staff.") == {"the", "it", "department", "its", "staff"}


# ---- German forms and tags ---------------------------------------------------------------
def test_the_gender_forms_lowercased():
    hyp = T("Er/PPER mag ihn/PPER und ES/PPER ,/$, sie/PPER mag ihre/PPOSAT ihrer/PPOSAT ihres/PPOSS ihrem/PPOSAT ihr/PPOSAT")
    ref = T("er/PPER gibt ihm/PPER es/PPER ,/$, Sie/PPER gibt ihren/PPOSAT sein/PPOSAT")
    counts = sentence_counts("It likes it.", hyp, ref)["gender"]
    assert counts["masculine"] == (2, 2, 2)
    assert counts["feminine"] == (6, 1, 1)  # ihren is no feminine form
    assert counts["neuter"] == (1, 1, 1)


def test_the_formal_and_informal_forms_lowercased():
    hyp = T("sie/PPER ihr/PPOSAT ihrer/PPOSAT ihnen/PPER ihre/PPOSAT ihres/PPOSS Ihrem/PPOSAT ihren/PPOSAT")
    ref = T("du/PPER dir/PPER dich/PRF dein/PPOSAT deine/PPOSAT deiner/PPOSAT deines/PPOSAT deinem/PPOSAT "
            "deinen/PPOSAT deins/PPOSS euch/PPER")
    counts = sentence_counts("You and your friend.", hyp, ref)["formality"]
    assert counts["formal"] == (6, 0, 0)
    assert counts["informal"] == (0, 9, 0)  # deins and euch are not in the list


def test_the_thirteen_stts_pronoun_tags_count_and_no_other():
    tags = ["PDAT", "PDS", "PIAT", "PIS", "PPER", "PPOSAT", "PPOSS", "PRELAT", "PRELS", "PRF", "PWAT", "PWAV", "PWS"]
    assert pronouns.GERMAN_PRONOUN_TAGS == frozenset(tags)
    hyp = T(" ".join(f"es/{tag}" for tag in tags) + " es/PTKVZ es/NN es/ART")
    counts = sentence_counts("It is.", hyp, T("es/PPER"))["gender"]
    assert counts["neuter"] == (13, 1, 1)


# ---- scores ---------------------------------------------------------------
def test_min_matches_per_sentence_summed_and_weighted_per_category():
    sources = ["It is here.", "It is here.", "I see it.", "I see it."]
    hyps = [T("er/PPER ist hier"), T("sie/PPER ist hier"), T("ich sehe es/PPER"), T("er/PPER sieht ihn/PPER")]
    refs = [T("er/PPER ist hier"), T("er/PPER ist hier"), T("ich sehe ihn/PPER"), T("ich sehe ihn/PPER")]
    result = score(sources, hyps, refs, min_examples=1)["gender"]
    masc, fem, neut = (result["classes"][c] for c in ("masculine", "feminine", "neuter"))
    # masculine: per sentence min(1,1) + min(0,1) + min(0,1) + min(2,1) = 2; hyp 1+0+0+2 = 3; ref 4
    assert (masc["hyp"], masc["ref"], masc["match"]) == (3, 4, 2)
    assert (fem["hyp"], fem["ref"], fem["match"]) == (1, 0, 0)
    assert (neut["hyp"], neut["ref"], neut["match"]) == (1, 0, 0)
    # weights 0.5/0.5/0: R = 0.5*2 / (0.5*4) = 0.5, P = 0.5*2 / (0.5*3 + 0.5*1) = 0.5, F1 = 0.5
    assert result["recall"] == pytest.approx(0.5) and result["precision"] == pytest.approx(0.5)
    assert result["f1"] == pytest.approx(0.5)
    assert masc["recall"] == pytest.approx(0.5) and masc["precision"] == pytest.approx(2 / 3)
    assert masc["f1"] == pytest.approx(2 * 0.5 * (2 / 3) / (0.5 + 2 / 3))
    # per class: feminine has no reference example: R NaN, so F1 NaN (None)
    assert fem["recall"] is None and fem["precision"] == 0.0 and fem["f1"] is None
    formality = score(["You are.", "Your car."], [T("du/PPER bist"), T("ihr/PPOSAT auto")],
                      [T("du/PPER bist"), T("dein/PPOSAT auto")], min_examples=1)["formality"]
    # informal 1/1 matched, ref 2; formal hyp 1 unmatched: R = 0.5*1 / (0.5*2) = 0.5, P = 0.5 / (0.5*2) = 0.5
    assert formality["recall"] == pytest.approx(0.5) and formality["precision"] == pytest.approx(0.5)
    assert formality["f1"] == pytest.approx(0.5)


def test_zero_denominators_follow_the_forks_safe_devide_and_compute_f1():
    nan = math.nan
    assert math.isnan(pronouns.safe_divide(1, 0)) and pronouns.safe_divide(1, 4) == 0.25
    assert math.isnan(pronouns.fork_f1(0.0, 0.0))  # 0/0
    assert math.isnan(pronouns.fork_f1(nan, 0.0))  # R is NaN: F1 = R
    assert pronouns.fork_f1(0.0, nan) == 0.0 and pronouns.fork_f1(0.5, nan) == 0.5  # P is NaN: F1 = R
    src = ["It is here."]
    # no match at all, both sides have examples: R = P = 0, F1 NaN
    no_match = score(src, [T("er/PPER")], [T("sie/PPER")], 1)["gender"]
    assert (no_match["recall"], no_match["precision"], no_match["f1"]) == (0.0, 0.0, None)
    # references but an empty hypothesis: R = 0, P NaN, F1 = R = 0
    empty_hyp = score(src, [T("ist hier")], [T("er/PPER")], 1)["gender"]
    assert (empty_hyp["recall"], empty_hyp["precision"], empty_hyp["f1"]) == (0.0, None, 0.0)
    # no weighted reference example (neuter weighs 0): R NaN, F1 NaN
    neuter_only = score(src, [T("er/PPER")], [T("es/PPER")], 1)["gender"]
    assert (neuter_only["recall"], neuter_only["precision"], neuter_only["f1"]) == (None, 0.0, None)
    # nothing anywhere
    nothing = score(["Hello."], [T("hallo")], [T("hallo")], 1)["formality"]
    assert nothing == {**nothing, "recall": None, "precision": None, "f1": None}


def test_the_reporting_threshold_needs_every_class():
    sources = ["It is here."] * 3
    hyps = refs = [T("er/PPER ist hier"), T("sie/PPER ist hier"), T("es/PPER ist hier")]
    assert score(sources, hyps, refs, min_examples=1)["gender"]["reported"] is True
    two_of_each = score(sources * 2, hyps * 2, refs * 2, min_examples=2)["gender"]
    assert two_of_each["reported"] is True and two_of_each["examples"] == {"masculine": 2, "feminine": 2, "neuter": 2}
    missing_neuter = score(sources[:2] * 5, hyps[:2] * 5, refs[:2] * 5, min_examples=2)["gender"]
    assert missing_neuter["reported"] is False and missing_neuter["examples"]["neuter"] == 0
    assert score(sources, hyps, refs, min_examples=1)["formality"]["reported"] is False  # no 'you' at all


# ---- the differences from the rules this module had before ---------------------------------------------------
#: (what changed, source, hypothesis, reference, (category, class or None, field), old value, new value)
DIFFERENCES = [
    ("a lowercase 'ihr' is formal", "Is this your car?", "ist das ihr/PPOSAT auto", "ist das Ihr/PPOSAT auto",
     ("formality", "formal", "hyp"), 0, 1),
    ("a lowercase 'sie' is formal", "Are you coming?", "kommt sie/PPER", "kommt Sie/PPER",
     ("formality", "formal", "match"), 0, 1),
    ("'Ihrem' and 'Ihren' are not formal", "Do you like your car?", "mögen Sie/PPER Ihren/PPOSAT wagen",
     "mögen Sie/PPER Ihren/PPOSAT wagen", ("formality", "formal", "ref"), 2, 1),
    ("13 STTS pronoun tags, not 4", "It works.", "es/PIS geht", "es/PPER geht", ("gender", "neuter", "hyp"), 0, 1),
    ("'yourselves' is no you-form: formality does not count", "Enjoy yourselves!", "amüsieren Sie/PPER sich/PRF",
     "amüsieren Sie/PPER sich/PRF", ("formality", "formal", "ref"), 1, 0),
    ("'yourselves' is no you-form: feminine is not dropped", "It is for yourselves.", "sie/PPER ist für euch",
     "sie/PPER ist für euch", ("gender", "feminine", "ref"), 0, 1),
    ("'themself' is no they-form: feminine is not dropped", "Someone hid it themself.",
     "jemand hat sie/PPER selbst versteckt", "jemand hat sie/PPER selbst versteckt", ("gender", "feminine", "ref"), 0, 1),
    ("'themself' is no they-form: formal is not dropped", "Did you meet someone who cooked themself?",
     "haben Sie/PPER jemanden getroffen", "haben Sie/PPER jemanden getroffen", ("formality", "formal", "ref"), 0, 1),
    ("F1 without a single match is NaN, not 0", "It is here.", "er/PPER ist hier", "sie/PPER ist hier",
     ("gender", None, "f1"), 0.0, None),
    ("precision without hypothesis examples is NaN, not 0", "It is here.", "ist hier", "er/PPER ist hier",
     ("gender", None, "precision"), 0.0, None),
    ("class F1 without reference examples is NaN, not 0", "It is here.", "es/PPER ist hier", "er/PPER ist hier",
     ("gender", "neuter", "f1"), 0.0, None),
]


@pytest.mark.parametrize("what, source, hyp, ref, where, old, new", DIFFERENCES, ids=[d[0] for d in DIFFERENCES])
def test_each_difference_from_the_old_rules(what, source, hyp, ref, where, old, new):
    category, cls, field = where
    entry = score([source], [T(hyp)], [T(ref)], min_examples=1)[category]
    value = entry[field] if cls is None else entry["classes"][cls][field]
    assert value == new, f"{what}: expected {new} (the fork's), found {value} (the old rules gave {old})"
    assert value != old


def test_the_english_tag_filter_differs_from_the_old_word_matching():
    """Old: any word 'it' made gender count (1 masculine reference); new: only a PRP/PRP$/WP/WP$ token (0)."""
    src, hyp, ref = E("the it/NNP department is here"), T("er/PPER ist hier"), T("er/PPER ist hier")
    assert score([src], [hyp], [ref], 1)["gender"]["examples"]["masculine"] == 0
    assert score(["the IT department is here"], [hyp], [ref], 1)["gender"]["examples"]["masculine"] == 1  # words


def test_capitalized_formal_keeps_the_old_formal_rule_and_else_the_forks():
    cases = {  # source, hyp, ref: formal (hyp, ref, match) under capitalized-formal, then blonde-de
        ("Is this your car?", "ist das ihr/PPOSAT auto", "ist das Ihr/PPOSAT auto"): ((0, 1, 0), (1, 1, 1)),
        ("Do you like your car?", "mögen Sie/PPER Ihren/PPOSAT wagen", "mögen Sie/PPER Ihrem/PPOSAT wagen"):
            ((2, 2, 2), (1, 1, 1)),
        ("Are you coming?", "kommt sie/PPER", "kommt Sie/PPER"): ((0, 1, 0), (1, 1, 1)),
    }
    for (source, hyp, ref), (strict, fork) in cases.items():
        assert sentence_counts(source, T(hyp), T(ref), STRICT)["formality"]["formal"] == strict, source
        assert sentence_counts(source, T(hyp), T(ref))["formality"]["formal"] == fork, source
    # everything else is the fork's: 13 tags, word lists, NaN
    assert sentence_counts("It works.", T("es/PIS"), T("es/PPER"), STRICT)["gender"]["neuter"] == (1, 1, 1)
    assert "formality" not in sentence_counts("Enjoy yourselves!", T("Sie/PPER"), T("Sie/PPER"), STRICT)
    assert score(["It is."], [T("er/PPER")], [T("sie/PPER")], 1, STRICT)["gender"]["f1"] is None
    assert not RULES[STRICT].as_paper and RULES["blonde-de"].as_paper


# ---- taggers and lowercasing ---------------------------------------------------------------
class RecordingTagger:
    """Tags every token PPER and remembers what it was given."""

    def __init__(self, name="recording", paper=False):
        self.name, self.paper, self.seen = name, paper, []

    def tag(self, lines):
        lines = list(lines)
        self.seen += lines
        return [[(w, "PPER") for w in line.split()] for line in lines]


class Data:
    def __init__(self, source, reference, systems):
        self.source, self.reference, self.systems = source, reference, systems


def test_blonde_de_lowercases_source_reference_and_hypotheses_before_tagging():
    german, english = RecordingTagger(), RecordingTagger()
    data = Data(["Do YOU know It?"], ["Kennen Sie Es?"], {"a": ["Kennst Du Es?"], "b": ["Kennst Du Es?"]})
    sources, refs, systems = pronouns.tag_inputs(data, german, english, RULES["blonde-de"])
    assert english.seen == ["do you know it?"]
    assert german.seen == ["kennen sie es?", "kennst du es?"]  # identical outputs are tagged once
    assert systems["a"] is systems["b"]
    strict_german = RecordingTagger()
    pronouns.tag_inputs(data, strict_german, RecordingTagger(), RULES[STRICT])
    assert strict_german.seen == ["Kennen Sie Es?", "Kennst Du Es?"]  # case kept for the capitalized formal rule


def spacy_pipeline(lang, tags):
    spacy = pytest.importorskip("spacy")
    from spacy.language import Language

    name = f"docnmt_test_tags_{lang}_{len(Language.factories)}"  # one component per table

    @Language.component(name)
    def _tags(doc):
        for token in doc:
            token.tag_ = tags.get(token.text, "NN")
        return doc

    nlp = spacy.blank(lang)
    nlp.add_pipe(name)
    return nlp


def test_spacy_adapter_reads_tags_from_a_pipeline():
    nlp = spacy_pipeline("de", {"Er": "PPER", "sie": "PPER", "ihren": "PPOSAT"})
    tagger = pronouns.SpacyTagger(nlp, "spacy test pipeline")
    assert tagger.tag(["Er mag sie."]) == [[("Er", "PPER"), ("mag", "NN"), ("sie", "PPER"), (".", "NN")]]
    assert not tagger.paper


def test_auto_uses_the_spacy_models_where_installed_else_hanta_and_word_matching():
    german, english = pronouns.load_tagger("auto"), pronouns.load_source_tagger("auto")
    if pronouns.spacy_model_installed("de_core_news_sm"):
        assert german.name.startswith("spacy de_core_news_sm") and german.paper
    else:
        assert german.name.startswith("HanTa ") and "morphmodel_ger.pgz" in german.name and not german.paper
    if pronouns.spacy_model_installed("en_core_web_sm"):
        assert english.name.startswith("spacy en_core_web_sm") and english.paper
    else:
        assert english.name.startswith("word matching") and not english.paper
    with pytest.raises(ValueError, match="expected auto, spacy or words"):
        pronouns.load_source_tagger("hanta")


def test_the_model_check_is_spacys_own_without_importing_spacy():
    """``auto`` decides by spaCy's test (spacy.util.is_package) in every scoring process, without the 2 CPU-s of
    importing spaCy (and torch through thinc) where HanTa then tags."""
    code = (
        "import json, sys\n"
        "from docnmt.score.pronouns import spacy_model_installed\n"
        "names = ['de_core_news_sm', 'en_core_web_sm', 'thinc', 'spacy-legacy', 'no_such_package_xyz']\n"
        "ours = [spacy_model_installed(n) for n in names]\n"
        "imported = sorted(m for m in ('spacy', 'thinc', 'torch') if m in sys.modules)\n"
        "import spacy.util\n"
        "print(json.dumps([ours, [spacy.util.is_package(n) for n in names], imported]))\n"
    )
    ours, spacys, imported = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                                       check=True).stdout)
    assert ours == spacys and ours[2:] == [True, True, False]
    assert imported == []


def test_hanta_tags_lowercased_german_pronouns_as_stts():
    tagger = pronouns.HanTaTagger()
    (tagged,) = tagger.tag(["ich habe sie gestern in ihrem büro gesehen , es war ihres ."])
    tags = dict(tagged)
    assert tags["sie"] == "PPER" and tags["ihrem"] == "PPOSAT" and tags["es"] == "PPER"
    assert tags["ihres"] in pronouns.GERMAN_PRONOUN_TAGS
    assert tagger.tag([""]) == [[]]


def test_setup_note_says_as_the_paper_only_when_rules_and_both_taggers_are_the_papers():
    de, en = RecordingTagger("spacy de_core_news_sm", True), RecordingTagger("spacy en_core_web_sm", True)
    as_paper, note = pronouns.setup_note(RULES["blonde-de"], de, en)
    assert as_paper and note.endswith("; as the paper") and "spacy de_core_news_sm" in note and "blonde-de" in note
    for rules, german, english, reason in (
            (RULES[STRICT], de, en, "capitalized-formal is stricter than the paper"),
            (RULES["blonde-de"], RecordingTagger("HanTa x"), en, "German tagger not spaCy de_core_news_sm"),
            (RULES["blonde-de"], de, pronouns.WordMatcher(), "English source not tagged by spaCy en_core_web_sm")):
        as_paper, note = pronouns.setup_note(rules, german, english)
        assert not as_paper and "differs from the paper" in note and reason in note and "as the paper" not in note


def test_cli_writes_rules_taggers_and_nan_as_null(tmp_path, monkeypatch, capsys):
    write_lines(tmp_path / "src.en", ["It is red.", "Are you coming?"])
    write_lines(tmp_path / "ref.de", ["Er ist rot.", "Kommen Sie?"])
    write_lines(tmp_path / "hyp.de", ["Sie ist rot.", "Kommst du?"])
    de = spacy_pipeline("de", {"er": "PPER", "sie": "PPER", "du": "PPER", "Sie": "PPER"})
    en = spacy_pipeline("en", {"it": "PRP", "you": "PRP"})
    monkeypatch.setattr(pronouns, "load_tagger", lambda choice: pronouns.SpacyTagger(de, "test de", paper=True))
    monkeypatch.setattr(pronouns, "load_source_tagger", lambda choice: pronouns.SpacyTagger(en, "test en", paper=True))
    out = tmp_path / "pronouns.json"
    args = ["--source", str(tmp_path / "src.en"), "--reference", str(tmp_path / "ref.de"),
            "--system", f"sys={tmp_path / 'hyp.de'}", "--min-examples", "1", "--output", str(out)]
    assert pronouns.main(args) == 0
    result = json.loads(out.read_text())
    assert result["rules"] == "blonde-de" and result["as_paper"] is True
    assert result["taggers"] == {"german": "test de", "english": "test en"}
    gender = result["systems"]["sys"]["gender"]
    assert gender["f1"] is None and gender["examples"] == {"masculine": 1, "feminine": 0, "neuter": 0}
    formality = result["systems"]["sys"]["formality"]
    assert formality["examples"] == {"formal": 1, "informal": 0} and formality["f1"] is None
    assert "gender F1 nan" in capsys.readouterr().out
    capsys.readouterr()
    assert pronouns.main(["--show-taggers", "--rules", STRICT]) == 0  # prints, scores nothing
    assert "rule set capitalized-formal; German tagger" in capsys.readouterr().out
    assert pronouns.main(args + ["--rules", STRICT]) == 0
    strict = json.loads(out.read_text())
    assert strict["rules"] == STRICT and strict["as_paper"] is False and "differs from the paper" in strict["setup"]


@pytest.mark.skipif(not (REAL_SAMPLES / "iwslt17-ted-test-en-de").is_dir(), reason="../shared/real-samples is absent")
def test_real_ted_text_reference_against_itself_and_against_a_shifted_reference(tmp_path):
    """On genuine IWSLT17 TED En-De (tst2017): the reference scores F1 1 against itself; real counts, taggers named."""
    from realformat import real_ted_en_de

    src, ref = real_ted_en_de(REAL_SAMPLES / "iwslt17-ted-test-en-de", tmp_path)
    write_lines(tmp_path / "src.en", src)
    write_lines(tmp_path / "ref.de", ref)
    write_lines(tmp_path / "shifted.de", ref[1:] + ref[:1])
    out = tmp_path / "pronouns.json"
    pronouns.main(["--source", str(tmp_path / "src.en"), "--reference", str(tmp_path / "ref.de"),
                   "--system", f"reference={tmp_path / 'ref.de'}", "--system", f"shifted={tmp_path / 'shifted.de'}",
                   "--tagger", "hanta", "--source-tagger", "words", "--output", str(out)])
    result = json.loads(out.read_text())
    assert result["taggers"]["german"].startswith("HanTa") and result["taggers"]["english"].startswith("word matching")
    assert result["as_paper"] is False
    reference = result["systems"]["reference"]
    assert reference["gender"]["f1"] == pytest.approx(1.0) and reference["formality"]["f1"] == pytest.approx(1.0)
    # measured (HanTa 1.2.1 on lowercased text, word-matched source): 24/26/169 and 116 formal, 8 informal
    assert reference["gender"]["examples"]["neuter"] >= 100 and reference["gender"]["examples"]["masculine"] >= 10
    assert reference["formality"]["examples"]["formal"] >= 100 and reference["formality"]["examples"]["informal"] >= 5
    assert result["systems"]["shifted"]["gender"]["f1"] < 0.5

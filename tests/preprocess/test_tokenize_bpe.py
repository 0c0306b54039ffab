"""Moses normalization and tokenization equal to sacremoses (the reference, equal to
tokenizer.perl -a -no-escape on the real TED sample), the round trip, and BPE equal
to subword-nmt that keeps <sep> whole."""

import io
import random

import pytest

from helpers import REAL_SAMPLES
from docnmt.preprocess import bpe, tokenize

REAL_TED = REAL_SAMPLES / "iwslt17-ted-test-en-de"

SENTENCES = {
    "en": [
        "The lamp, which I bought yesterday, was expensive.",
        "Don't you think it's a well-known problem?",
        "He said: \"It costs $5.50 (or 4,99 EUR).\"",
    ],
    "de": [
        "Die Lampe, die ich gestern gekauft habe, war teuer.",
        "Brauchst du Hilfe? Ich habe es dir doch gesagt!",
        "Er sagte: \"Das kostet 5,50 Euro - oder nicht?\"",
    ],
}


@pytest.mark.parametrize("lang", ["en", "de"])
def test_detokenize_inverts_tokenize(lang):
    for sentence in SENTENCES[lang]:
        tok = tokenize.tokenize(sentence, lang)
        assert tok != sentence, "tokenization must split punctuation"
        assert tokenize.detokenize(tok, lang) == sentence, f"round trip changed {sentence!r} via {tok!r}"


def reference_chain(lang):
    """The chain docnmt.preprocess.tokenize replaced: sacremoses normalization and tokenization."""
    from sacremoses import MosesPunctNormalizer, MosesTokenizer

    normalizer, tokenizer = MosesPunctNormalizer(lang=lang), MosesTokenizer(lang=lang)
    return lambda line: tokenizer.tokenize(normalizer.normalize(line), aggressive_dash_splits=True, escape=False,
                                           return_str=True)


def equal_fraction(lines, lang):
    reference = reference_chain(lang)
    different = [line for line in lines if tokenize.tokenize(line, lang) != reference(line)]
    return 1 - len(different) / len(lines), different


@pytest.fixture(scope="module")
def real_ted(tmp_path_factory):
    if not REAL_TED.is_dir():
        pytest.skip("../shared/real-samples is absent")
    from realformat import real_ted_en_de

    text = {"en": [], "de": []}
    for year in (2016, 2017):
        en, de = real_ted_en_de(REAL_TED, tmp_path_factory.mktemp(f"ted{year}"), year)
        text["en"] += en
        text["de"] += de
    return text


@pytest.fixture(scope="module")
def demo_text(tmp_path_factory):
    from docnmt.corpora import demo

    out = tmp_path_factory.mktemp("demo")
    demo.main(["--outdir", str(out), "--train-docs", "300", "--valid-docs", "1", "--test-docs", "1"])
    return {lang: (out / f"train.{lang}").read_text(encoding="utf-8").splitlines() for lang in ("en", "de")}


def test_normalize_equals_sacremoses_on_random_punctuation():
    from sacremoses import MosesPunctNormalizer

    alphabet = list("ab Z9 .,:;!?()%\"'`-\r<") + ["\u00a0", "„", "“", "”", "–", "—", "´", "‘", "’", "‚", "…", "«",
                                                   "»", "º", "nº", "cm", "ºC", "  ", "''", "´´", ".\""]
    rng = random.Random(15)
    for lang in ("en", "de", "fr", "it", "cs"):
        reference = MosesPunctNormalizer(lang=lang)
        for _ in range(3000):
            line = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 20)))
            assert tokenize.normalize(line, lang) == reference.normalize(line), (lang, line)


@pytest.mark.parametrize("lang", ["en", "de"])
def test_tokenize_equals_the_reference_on_the_real_ted_sample(real_ted, lang):
    lines = [line for line in real_ted[lang] if line.strip()]
    assert len(lines) > 2000
    fraction, different = equal_fraction(lines, lang)
    assert fraction >= 0.999, different[:5]


@pytest.mark.parametrize("lang", ["en", "de"])
def test_tokenize_equals_the_reference_on_the_demo_text(demo_text, lang):
    fraction, different = equal_fraction(demo_text[lang], lang)
    assert fraction >= 0.999, different[:5]


#: Lines of the kinds where the C++ tokenizer differs from tokenizer.perl (docs/preprocessing.md, "Tokenization").
KNOWN_DIFFERENCES = {
    "en": ["Confirmed by Bloomberg.com.", "It is multi-, not mono-lingual.", 'A "-based" word.', "I was goin'",
           "'Cause I said so.", "rock'n'roll", "a\u00adb", "Cafe\u0301 au lait", "`quote`", "文字", "Hey-"],
    "de": ["Ich hab's gesagt.", "im 21. Jahrhundert", "Es war 49.", "die 'Modern Love'-Kolumne", "Mega-",
           "z.B. bei www.google.de.", "Œu\u00adv\u00adre.", "Rock'n'Roll", "12:30."],
    "it": ["E' vero", "l'8 marzo", "sull'80%"],
}


@pytest.mark.parametrize("lang", sorted(KNOWN_DIFFERENCES))
def test_lines_the_cpp_tokenizer_gets_wrong_are_tokenized_by_the_reference(lang):
    reference = reference_chain(lang)
    for line in KNOWN_DIFFERENCES[lang]:
        normalized = tokenize.normalize(line, lang)
        assert " ".join(tokenize._fast(lang).tokenize(normalized)) != reference(line), f"no longer a difference: {line}"
        assert tokenize.needs_reference(normalized, lang), line
        assert tokenize.tokenize(line, lang) == reference(line), line


def test_plain_lines_take_the_cpp_tokenizer():
    for lang, line in (("en", "I don't know, do you?"), ("de", "Das kostet 5,50 Euro (oder nicht)."),
                       ("it", "C'è un'altra cosa, l'ha detto all'amico."), ("fr", "C'est l'été, aujourd'hui.")):
        assert not tokenize.needs_reference(tokenize.normalize(line, lang), lang)
        assert tokenize.tokenize(line, lang) == reference_chain(lang)(line)


@pytest.mark.parametrize("lang", ["en", "de"])
def test_detokenize_restores_the_normalized_demo_text(demo_text, lang):
    for line in demo_text[lang]:
        assert tokenize.detokenize(tokenize.tokenize(line, lang), lang) == tokenize.normalize(line, lang), line


def test_tokenize_splits_hyphens_aggressively():
    assert "@-@" in tokenize.tokenize("a well-known fact", "en")


def test_tokenize_cli_keeps_line_count_and_empty_lines(tmp_path):
    (tmp_path / "raw").write_text("Hello, world!\n\nBye.\n", encoding="utf-8")
    tokenize.main(["tok", "--lang", "en", "--input", str(tmp_path / "raw"), "--output", str(tmp_path / "tok")])
    assert (tmp_path / "tok").read_text(encoding="utf-8").split("\n") == ["Hello , world !", "", "Bye .", ""]


@pytest.fixture(scope="module")
def codes(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("bpe")
    text = "".join(f"the translation of sentences number {i} is interesting\n" for i in range(50))
    (tmp / "train.en").write_text(text, encoding="utf-8")
    (tmp / "train.de").write_text(text.replace("the", "die"), encoding="utf-8")
    bpe.learn([tmp / "train.en", tmp / "train.de"], tmp / "codes", merges=30)
    return tmp / "codes"


def test_bpe_keeps_sep_untouched(codes):
    model = bpe.load(codes)
    encoded = bpe.apply(model, "interesting translation <sep> the sentences <sep> untranslatable")
    assert encoded.split().count("<sep>") == 2, encoded
    assert "<@@" not in encoded and "sep@@" not in encoded
    assert bpe.remove_bpe(encoded) == "interesting translation <sep> the sentences <sep> untranslatable"


def test_bpe_splits_rare_words(codes):
    encoded = bpe.apply(bpe.load(codes), "untranslatable")
    assert "@@" in encoded


def test_bpe_apply_equals_subword_nmt(codes):
    rng = random.Random(15)
    words = ["interesting", "translation", "untranslatable", "sentences", "x", "<sep>", "a<sep>b", "<sep>s", "sep@@",
             "die", "the</w>", "@@", "ü", "number"]
    reference, model = bpe.load(codes), bpe.load(codes)
    for _ in range(500):
        line = " ".join(rng.choice(words) + rng.choice(["", "s", "ing", "e"]) for _ in range(rng.randint(1, 8)))
        line = rng.choice(["", " ", "  "]) + line + rng.choice(["", " ", "\r"]) if rng.random() < 0.2 else line
        expected = reference.process_line(line).rstrip("\n") if line.strip() else ""
        assert bpe.apply(model, line) == expected, line


def test_bpe_learn_streams_and_equals_learning_on_the_joined_text(tmp_path):
    from subword_nmt.learn_bpe import learn_bpe

    rng = random.Random(7)
    for lang in ("en", "de"):
        (tmp_path / f"train.{lang}").write_text("".join(
            " ".join(rng.choice(["talk", "talks", "talked", "walk", "walking", "die", "das", "Haus", "Häuser"])
                     for _ in range(rng.randint(1, 9))) + "\n" for _ in range(300)), encoding="utf-8")
    bpe.learn([tmp_path / "train.en", tmp_path / "train.de"], tmp_path / "codes", merges=40)
    joined, expected = io.StringIO(), io.StringIO()
    for lang in ("en", "de"):
        joined.write((tmp_path / f"train.{lang}").read_text(encoding="utf-8"))
    joined.seek(0)
    learn_bpe(joined, expected, 40, min_frequency=2)
    assert (tmp_path / "codes").read_text(encoding="utf-8") == expected.getvalue()


def test_bpe_learn_rejects_an_empty_training_file(tmp_path):
    (tmp_path / "empty").write_text("", encoding="utf-8")
    with pytest.raises(Exception) as err:
        bpe.learn([tmp_path / "empty"], tmp_path / "codes", merges=10)
    assert "empty" in str(err.value)
    assert not (tmp_path / "codes").exists()


def test_bpe_sample_is_evenly_spread_and_exact_in_size():
    mask = list(bpe.sample_mask(10, 4))
    assert sum(mask) == 4 and mask == [False, False, True, False, True, False, False, True, False, True]
    assert all(bpe.sample_mask(5, None)) and all(bpe.sample_mask(5, 9))


def test_bpe_learn_on_a_sample_equals_learning_on_those_lines(tmp_path):
    from subword_nmt.learn_bpe import learn_bpe

    words = ["talk", "talks", "walked", "walking", "Haus", "Häuser", "lamp", "lamps"]
    (tmp_path / "a").write_text("".join(f"{words[i % 8]} {words[(i * 3) % 8]}\n" for i in range(60)), encoding="utf-8")
    (tmp_path / "b").write_text("".join(f"{words[(i * 5) % 8]}\n" for i in range(40)), encoding="utf-8")
    used = bpe.learn([tmp_path / "a", tmp_path / "b"], tmp_path / "codes", merges=20, sample_lines=25)
    assert used == 25
    lines = ((tmp_path / "a").read_text(encoding="utf-8") + (tmp_path / "b").read_text(encoding="utf-8")).splitlines(True)
    chosen = [line for line, keep in zip(lines, bpe.sample_mask(100, 25)) if keep]
    expected = io.StringIO()
    learn_bpe(io.StringIO("".join(chosen)), expected, 20, min_frequency=2)
    assert (tmp_path / "codes").read_text(encoding="utf-8") == expected.getvalue()
    bpe.main(["learn", "--merges", "20", "--sample-lines", "0", "--input", str(tmp_path / "a"), str(tmp_path / "b"),
              "--codes", str(tmp_path / "all")])
    assert (tmp_path / "all").read_text(encoding="utf-8") != expected.getvalue()

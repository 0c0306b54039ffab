"""Moses tokenization round trip, and BPE that keeps <sep> whole."""

import pytest

from docnmt import bpe, tokenize

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


def test_bpe_learn_rejects_an_empty_training_file(tmp_path):
    (tmp_path / "empty").write_text("", encoding="utf-8")
    with pytest.raises(Exception) as err:
        bpe.learn([tmp_path / "empty"], tmp_path / "codes", merges=10)
    assert "empty" in str(err.value)
    assert not (tmp_path / "codes").exists()

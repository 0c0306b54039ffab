"""Tests for docnmt.corpora.demo: the synthetic, context-dependent En->De demo corpus."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from docnmt.corpora import demo, demo_templates, demo_vocabulary

SPLITS = ("train", "valid", "test")
SPLIT_FILES = [f"{split}.{ext}" for split in SPLITS for ext in ("en", "de", "docids")]
ALL_FILES = SPLIT_FILES + ["test.subsets", "contrapro.json", "ctxpro.demo.test.json", "ctxpro.demo.test"]

IT_RE = re.compile(r"\b(it|its|itself)\b", re.IGNORECASE)
YOU_RE = re.compile(r"\b(you|your|yours|yourself)\b", re.IGNORECASE)
# Anything that reveals the register: a greeting, a title, or a name.
CUE_RE = re.compile(
    r"\b(hi|hello|hey|dear|good morning|good afternoon|good evening|excuse me|mr|mrs|ms|dr|"
    + "|".join(name for name, _ in demo_vocabulary.FIRST_NAMES)
    + "|"
    + "|".join(demo_vocabulary.SURNAMES)
    + r")\b",
    re.IGNORECASE,
)
DE_INFORMAL = {"du", "dich", "dir", "dein", "deine", "deinen", "deinem", "deiner"}
DE_FORMAL = {"Sie", "Ihnen", "Ihr", "Ihre", "Ihren", "Ihrem", "Ihrer"}
CONTRAPRO_KEYS = {
    "document id", "segment id", "src segment", "ref segment", "src pronoun", "ref pronoun",
    "ante distance", "intrasegmental", "src ante phrase", "ref ante phrase", "src ante head",
    "ref ante head", "ref ante head gender", "corpus", "errors",
}


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text)


def _read(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    assert text.endswith("\n") and "\r" not in text, f"{path.name}: expected '\\n' line ends and a final newline"
    return text[:-1].split("\n")


@pytest.fixture(scope="module")
def corpus_dir(tmp_path_factory) -> Path:
    """The corpus of the default CLI arguments."""
    outdir = tmp_path_factory.mktemp("demo")
    assert demo.main(["--outdir", str(outdir)]) == 0
    return outdir


@pytest.fixture(scope="module")
def docs():
    """The documents of the default arguments, with the generator's annotations."""
    return demo.generate(demo.DEFAULT_SEED, demo.DEFAULT_DOCS, demo.DEFAULT_MIN_SENTS, demo.DEFAULT_MAX_SENTS)


@pytest.fixture(scope="module")
def contrapro(corpus_dir) -> list[dict]:
    return json.loads((corpus_dir / "contrapro.json").read_text(encoding="utf-8"))


def _split_docs(corpus_dir: Path, split: str) -> dict[str, list[tuple[str, str]]]:
    """{docid: [(en, de), ...]} of one split, read back from the files."""
    en, de, ids = (_read(corpus_dir / f"{split}.{ext}") for ext in ("en", "de", "docids"))
    result: dict[str, list[tuple[str, str]]] = {}
    for docid, s, t in zip(ids, en, de):
        result.setdefault(docid, []).append((s, t))
    return result


# --- determinism -------------------------------------------------------------


def test_same_seed_gives_byte_identical_files_and_another_seed_different_ones(tmp_path):
    args = ["--train-docs", "50", "--valid-docs", "5", "--test-docs", "20"]
    for name, seed in (("a", "7"), ("b", "7"), ("c", "8")):
        assert demo.main(["--outdir", str(tmp_path / name), "--seed", seed, *args]) == 0
    for file in ALL_FILES:
        a, b = (tmp_path / "a" / file).read_bytes(), (tmp_path / "b" / file).read_bytes()
        assert a == b, f"{file}: two runs with the same seed and arguments must give byte-identical files"
    differing = [f for f in ALL_FILES if (tmp_path / "a" / f).read_bytes() != (tmp_path / "c" / f).read_bytes()]
    assert set(SPLIT_FILES) - {f for f in SPLIT_FILES if f.endswith(".docids")} <= set(differing), (
        f"a different seed must give different text in every split; only {differing} differ"
    )


def test_output_does_not_depend_on_the_hash_seed(tmp_path):
    outputs = []
    for hash_seed in ("1", "2"):
        outdir = tmp_path / hash_seed
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        subprocess.run(
            [sys.executable, "-m", "docnmt.corpora.demo", "--outdir", str(outdir), "--train-docs", "20",
             "--valid-docs", "3", "--test-docs", "10"],
            check=True, env=env, capture_output=True,
        )
        outputs.append({f: (outdir / f).read_bytes() for f in ALL_FILES})
    assert outputs[0] == outputs[1], "the corpus must not depend on PYTHONHASHSEED (no hash(), no set order)"


def test_changing_the_test_size_leaves_train_and_valid_unchanged():
    small = demo.generate(5, {"train": 30, "valid": 5, "test": 10}, 3, 8)
    large = demo.generate(5, {"train": 30, "valid": 5, "test": 40}, 3, 8)
    for split in ("train", "valid"):
        assert [d.src + d.tgt for d in small[split]] == [d.src + d.tgt for d in large[split]], (
            f"each split must come from its own random stream: changing --test-docs changed {split}"
        )
    assert [d.tgt for d in large["test"][:10]] == [d.tgt for d in small["test"]], (
        "a larger split should extend the smaller one document by document"
    )


# --- file format ---------------------------------------------------------------


def test_split_files_are_line_aligned_with_contiguous_disjoint_documents(corpus_dir):
    owner: dict[str, str] = {}
    for split in SPLITS:
        en, de, ids = (_read(corpus_dir / f"{split}.{ext}") for ext in ("en", "de", "docids"))
        assert len(en) == len(de) == len(ids), (
            f"{split}: .en/.de/.docids must be line-aligned, found {len(en)}/{len(de)}/{len(ids)} lines"
        )
        blocks = [d for i, d in enumerate(ids) if i == 0 or ids[i - 1] != d]
        assert len(blocks) == len(set(blocks)), f"{split}: the sentences of a document must be consecutive"
        for docid in blocks:
            assert re.fullmatch(rf"demo-{split}-\d{{5}}", docid), f"{split}: unexpected document id {docid!r}"
            assert docid not in owner, f"document {docid} appears in both {owner[docid]} and {split}"
            owner[docid] = split
        sizes = Counter(ids)
        assert min(sizes.values()) >= demo.DEFAULT_MIN_SENTS and max(sizes.values()) <= demo.DEFAULT_MAX_SENTS, (
            f"{split}: documents must have {demo.DEFAULT_MIN_SENTS}..{demo.DEFAULT_MAX_SENTS} sentences"
        )
    assert Counter(owner.values()) == Counter(demo.DEFAULT_DOCS), "each split must hold its number of documents"


def test_no_line_is_empty_or_contains_the_separator(corpus_dir):
    for file in SPLIT_FILES:
        for number, line in enumerate(_read(corpus_dir / file), start=1):
            assert line.strip(), f"{file}:{number}: empty line"
            assert "<sep>" not in line, f"{file}:{number}: raw text must not contain <sep>"
            assert line == line.strip(), f"{file}:{number}: stray whitespace around {line!r}"


def test_a_failed_write_leaves_no_partial_output(tmp_path):
    docs = demo.generate(1, {"train": 3, "test": 2}, 3, 4)
    bad = demo_templates.Document("demo-test-99999", None, [demo_templates.Sentence("A <sep> B.", "A <sep> B.", "distractor")])
    docs["test"].append(bad)
    with pytest.raises(ValueError, match="<sep>"):
        demo.write_corpus(tmp_path, docs)
    assert list(tmp_path.iterdir()) == [], "no output (and no temporary file) may remain after a failed write"


def test_an_interrupted_write_leaves_no_temporary_files(tmp_path, monkeypatch):
    docs = demo.generate(1, {"test": 2}, 3, 4)

    def failing_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(demo.os, "replace", failing_replace)
    with pytest.raises(OSError, match="disk full"):
        demo.write_corpus(tmp_path, docs, demo.build_contrapro(docs["test"]))
    assert list(tmp_path.iterdir()) == [], "temporary files must be removed when writing fails"


# --- the context dependency is real --------------------------------------------


def test_it_sentences_do_not_contain_their_antecedent_noun(corpus_dir):
    nouns = {n.en for n in demo_vocabulary.ALL_TRANSLATIONS}
    en = _read(corpus_dir / "test.en")
    it_sentences = [s for s in en if IT_RE.search(s)]
    without_noun = [s for s in it_sentences if not nouns & {w.lower() for w in _words(s)}]
    assert len(it_sentences) >= 50, f"expected many 'it' sentences in the test split, found {len(it_sentences)}"
    share = len(without_noun) / len(it_sentences)
    assert share >= 0.9, (
        f"only {share:.0%} of the 'it' sentences lack every inventory noun; the gender of the pronoun "
        "must be recoverable only from the context"
    )


def test_it_only_occurs_in_pronoun_sentences(docs):
    for split, split_docs in docs.items():
        for doc in split_docs:
            for sentence in doc.sentences:
                if sentence.kind != "pronoun":
                    assert not IT_RE.search(sentence.en), (
                        f"{doc.docid}: 'it' outside a pronoun sentence (expletive or stray): {sentence.en!r}"
                    )
                else:
                    assert len(IT_RE.findall(sentence.en)) == 1, f"{doc.docid}: one 'it' per pronoun sentence"


def test_inventory_nouns_only_occur_in_introductions(docs):
    nouns_en = {n.en for n in demo_vocabulary.ALL_TRANSLATIONS}
    nouns_de = {n.de for n in demo_vocabulary.ALL_TRANSLATIONS}
    for doc in docs["train"] + docs["test"]:
        for sentence in doc.sentences:
            found = (nouns_en & {w.lower() for w in _words(sentence.en)}) | (nouns_de & set(_words(sentence.de)))
            if sentence.kind == "intro":
                assert len(found) == 2, f"{doc.docid}: an introduction names exactly one noun: {sentence.en!r}"
            else:
                assert not found, (
                    f"{doc.docid}: {sorted(found)} in a {sentence.kind} sentence would compete with the antecedent"
                )


def test_you_sentences_carry_no_register_cue(corpus_dir):
    en = _read(corpus_dir / "test.en")
    you_sentences = [s for s in en if YOU_RE.search(s)]
    assert len(you_sentences) >= 50, f"expected many 'you' sentences in the test split, found {len(you_sentences)}"
    share = sum(not CUE_RE.search(s) for s in you_sentences) / len(you_sentences)
    assert share >= 0.9, (
        f"only {share:.0%} of the 'you' sentences lack a greeting, name or title; the register must be "
        "recoverable only from earlier sentences"
    )


def test_each_register_document_states_its_cue_before_the_first_you(corpus_dir):
    for docid, sentences in _split_docs(corpus_dir, "test").items():
        you_at = [i for i, (s, _) in enumerate(sentences) if YOU_RE.search(s)]
        if you_at:
            cue_at = [i for i, (s, _) in enumerate(sentences) if CUE_RE.search(s) and re.search(
                r"\b(hi|hello|hey|dear|good morning|good afternoon|excuse me|thanks)\b", s, re.IGNORECASE)]
            assert cue_at and cue_at[0] <= you_at[0] and cue_at[0] <= 1, (
                f"{docid}: the register cue must come early (sentence 1 or 2) and before the first 'you'"
            )


def test_german_pronoun_agrees_with_the_antecedent_gender(docs):
    for split in ("train", "test"):
        for doc in docs[split]:
            for index, sentence in enumerate(doc.sentences):
                use = sentence.pronoun
                if use is None:
                    continue
                intro = doc.sentences[index - use.ante_distance]
                assert intro.kind == "intro" and use.noun.de in _words(intro.de), (
                    f"{doc.docid}: the antecedent {use.noun.de!r} must be in sentence {index - use.ante_distance + 1}"
                )
                assert use.noun.en not in _words(sentence.en.lower()), f"{doc.docid}: antecedent in pronoun sentence"
                if use.case in ("nom", "acc", "dat"):
                    expected = demo_vocabulary.PERSONAL[use.case][use.noun.gender]
                    assert expected in _words(sentence.de.lower()), (
                        f"{doc.docid}: {use.noun.de!r} ({use.noun.gender}) needs {expected!r} in {sentence.de!r}"
                    )
                for between in doc.sentences[index - use.ante_distance + 1:index]:
                    assert between.kind != "intro", f"{doc.docid}: another antecedent between noun and pronoun"


def _chains(doc):
    """(introduction, [pronoun sentences]) of every noun chain of a document."""
    chains = []
    for index, sentence in enumerate(doc.sentences):
        if sentence.kind == "intro":
            chains.append((sentence, []))
        elif sentence.pronoun is not None:
            assert doc.sentences[index - sentence.pronoun.ante_distance] is chains[-1][0]
            chains[-1][1].append(sentence)
    return chains


TRANSLATIONS = {first.en: {first.de: first, second.de: second} for first, second in demo_vocabulary.AMBIGUOUS_NOUNS}


def test_both_translations_of_every_ambiguous_noun_occur_in_training_and_in_test(docs):
    for split in ("train", "test"):
        chosen = Counter((p[0].pronoun.noun.en, p[0].pronoun.noun.de) for d in docs[split] for _, p in _chains(d)
                         if p and p[0].pronoun.noun.ambiguous)
        first = sum(chosen[(a.en, a.de)] for a, _ in demo_vocabulary.AMBIGUOUS_NOUNS)
        assert 0.35 <= first / sum(chosen.values()) <= 0.65, f"{split}: a fair coin per chain: {chosen}"
        if split == "train":  # the model learns every translation
            missing = [(en, de) for en, forms in TRANSLATIONS.items() for de in forms if chosen[(en, de)] < 5]
            assert not missing, f"train: translations chosen fewer than 5 times: {missing}"
        else:  # the test set's ~20 ambiguous chains: both translations of several nouns
            both = [en for en, forms in TRANSLATIONS.items() if all(chosen[(en, de)] for de in forms)]
            assert len(both) >= 3, f"test: nouns seen with both translations: {both}"
    share = sum(bool(s.subsets) for d in docs["train"] for s in d.sentences) / sum(
        s.pronoun is not None for d in docs["train"] for s in d.sentences)
    assert 0.25 <= share <= 0.42, f"{share:.0%} of the train pronouns have an ambiguous antecedent; about a third"


def test_a_document_never_mixes_the_two_translations_of_a_noun(docs):
    for split in ("train", "test"):
        for doc in docs[split]:
            words = set(_words(" ".join(doc.tgt)))
            for en, forms in TRANSLATIONS.items():
                assert len(words & set(forms)) <= 1, f"{doc.docid}: both {sorted(forms)} for {en!r}"


def test_every_pronoun_agrees_with_the_translation_the_reference_chose(docs):
    checked = 0
    for split in ("train", "test"):
        for doc in docs[split]:
            for intro, pronouns in _chains(doc):
                for sentence in pronouns:
                    noun = sentence.pronoun.noun
                    if not noun.ambiguous:
                        continue
                    other = next(t for de, t in TRANSLATIONS[noun.en].items() if de != noun.de)
                    intro_words = _words(intro.de)
                    assert noun.de in intro_words and other.de not in intro_words, (doc.docid, intro.de)
                    assert sentence.pronoun.ref_pronoun == dict(sentence.pronoun.de_forms)[noun.gender]
                    assert sentence.de == sentence.pronoun.variant(noun.gender)
                    if sentence.pronoun.case in ("nom", "acc", "dat"):
                        assert demo_vocabulary.PERSONAL[sentence.pronoun.case][noun.gender] in _words(sentence.de.lower())
                    checked += 1
    assert checked >= 500, f"only {checked} pronouns with an ambiguous antecedent"


def test_the_subsets_file_marks_exactly_the_pronoun_sentences_with_an_ambiguous_antecedent(corpus_dir, docs):
    lines = _read(corpus_dir / "test.subsets")
    expected = [demo_vocabulary.AMBIGUOUS_SUBSET if s.pronoun is not None and s.pronoun.noun.ambiguous else ""
                for d in docs["test"] for s in d.sentences]
    assert lines == expected and expected.count(demo_vocabulary.AMBIGUOUS_SUBSET) >= 25
    assert not (corpus_dir / "train.subsets").exists() and not (corpus_dir / "valid.subsets").exists()


def test_german_register_is_consistent_within_a_document(docs):
    for doc in docs["train"] + docs["test"]:
        for sentence in doc.sentences:
            if not YOU_RE.search(sentence.en):
                continue
            words = set(_words(sentence.de))
            informal = bool({w.lower() for w in words} & DE_INFORMAL)
            formal = bool(words & DE_FORMAL)
            assert doc.register in demo_vocabulary.REGISTERS, f"{doc.docid}: 'you' in a document without a register"
            assert (informal, formal) == (doc.register == "informal", doc.register == "formal"), (
                f"{doc.docid} ({doc.register}): German {sentence.de!r} does not use the document's register"
            )


# --- balance -------------------------------------------------------------------


def test_noun_inventory_is_large_and_gender_balanced():
    genders = Counter(n.gender for n in demo_vocabulary.NOUNS)
    assert len(demo_vocabulary.NOUNS) >= 40, f"expected at least 40 nouns, found {len(demo_vocabulary.NOUNS)}"
    assert all(genders[g] >= 12 for g in demo_vocabulary.GENDERS), f"each gender needs at least 12 nouns: {dict(genders)}"
    everything = demo_vocabulary.ALL_TRANSLATIONS
    assert len({n.de for n in everything}) == len(everything), "a German noun translates two English nouns"
    assert len({n.en for n in everything}) == len(demo_vocabulary.NOUNS) + len(demo_vocabulary.AMBIGUOUS_NOUNS), "duplicate noun"


def test_about_a_third_of_the_nouns_have_two_translations_of_different_gender():
    n_ambiguous, n_all = len(demo_vocabulary.AMBIGUOUS_NOUNS), len(demo_vocabulary.AMBIGUOUS_NOUNS) + len(demo_vocabulary.NOUNS)
    assert 0.25 <= n_ambiguous / n_all <= 0.4, f"{n_ambiguous} of {n_all} nouns are ambiguous"
    pairs = Counter()
    for first, second in demo_vocabulary.AMBIGUOUS_NOUNS:
        assert first.en == second.en and first.de != second.de and first.gender != second.gender, (first, second)
        assert first.ambiguous and second.ambiguous
        pairs[frozenset((first.gender, second.gender))] += 1
    assert len(pairs) == 3 and len(set(pairs.values())) == 1, f"each pair of genders equally often: {dict(pairs)}"
    assert not any(n.ambiguous for n in demo_vocabulary.NOUNS)


def test_template_inventories_are_varied():
    sizes = {
        "pronoun": len(demo_templates.PRONOUN_TEMPLATES), "intro": len(demo_templates.INTRO_TEMPLATES),
        "you": len(demo_templates.YOU_TEMPLATES), "distractor": len(demo_templates.DISTRACTORS),
    }
    minimum = {"pronoun": 15, "intro": 10, "you": 10, "distractor": 15}
    assert all(sizes[k] >= minimum[k] for k in sizes), f"too few templates: {sizes}, need {minimum}"
    cases = {t.case for t in demo_templates.PRONOUN_TEMPLATES}
    assert cases == {"nom", "acc", "dat", "poss"}, f"pronoun templates must span all cases, found {cases}"


def test_pronoun_targets_are_balanced_over_genders(docs):
    counts = Counter(
        s.pronoun.noun.gender for split in ("train", "test") for d in docs[split] for s in d.sentences if s.pronoun
    )
    assert set(counts) == set(demo_vocabulary.GENDERS), f"every gender must occur as a pronoun target: {dict(counts)}"
    ratio = max(counts.values()) / min(counts.values())
    assert ratio <= 1.5, f"pronoun targets per gender are unbalanced (ratio {ratio:.2f}): {dict(counts)}"


def test_both_registers_occur_in_a_fair_share_of_you_documents(corpus_dir):
    registers = Counter()
    for split in ("train", "test"):
        for docid, sentences in _split_docs(corpus_dir, split).items():
            if any(YOU_RE.search(s) for s, _ in sentences):
                words = {w.lower() for _, t in sentences for w in _words(t)}
                registers["informal" if words & DE_INFORMAL else "formal"] += 1
    total = sum(registers.values())
    for register in demo_vocabulary.REGISTERS:
        assert registers[register] >= 0.3 * total, (
            f"{register} documents are {registers[register]} of {total} documents with 'you'; need >= 30%"
        )


def test_vocabulary_is_small(docs):
    for lang in ("en", "de"):
        types = {w for split in docs.values() for d in split for s in d.sentences for w in _words(getattr(s, lang))}
        assert len(types) <= 600, f"{lang}: {len(types)} word types; keep the vocabulary small for a tiny model"


# --- contrapro -------------------------------------------------------------------


def test_contrapro_examples_have_the_contrapro_schema(contrapro):
    assert len(contrapro) >= 50, f"expected many contrastive examples, found {len(contrapro)}"
    for example in contrapro:
        assert set(example) == CONTRAPRO_KEYS, f"keys differ from ContraPro's: {set(example) ^ CONTRAPRO_KEYS}"
        assert isinstance(example["segment id"], int) and example["segment id"] >= 1
        assert isinstance(example["ante distance"], int) and example["ante distance"] in (1, 2)
        assert example["intrasegmental"] is (example["ante distance"] == 0)
        assert example["corpus"] == "demo"
        assert example["src pronoun"] == "it"
        assert example["ref ante head gender"] in ("Masc", "Fem", "Neut")


def test_contrapro_segments_point_into_the_test_documents(corpus_dir, contrapro):
    test_docs = _split_docs(corpus_dir, "test")
    for example in contrapro:
        sentences = test_docs.get(example["document id"])
        assert sentences is not None, f"{example['document id']} is not a test document"
        en, de = sentences[example["segment id"] - 1]
        assert (en, de) == (example["src segment"], example["ref segment"]), (
            f"{example['document id']}:{example['segment id']} does not hold the example's segments"
        )
        ante_en, ante_de = sentences[example["segment id"] - 1 - example["ante distance"]]
        assert example["src ante phrase"] in ante_en and example["ref ante phrase"] in ante_de, (
            "the antecedent phrase must be in the sentence 'ante distance' before the pronoun"
        )
        assert example["src ante head"] not in _words(en.lower()), "the antecedent must not be in the segment"


def test_contrapro_errors_differ_only_in_the_pronoun(contrapro):
    for example in contrapro:
        ref = example["ref segment"].split()
        errors = example["errors"]
        genders = {e["replacement gender"] for e in errors} | {example["ref ante head gender"]}
        assert len(errors) == 2 and genders == {"Masc", "Fem", "Neut"}, (
            "each example needs exactly two errors, one per other gender"
        )
        for error in errors:
            contrastive = error["contrastive"].split()
            diff = [i for i, (a, b) in enumerate(zip(ref, contrastive)) if a != b]
            assert len(contrastive) == len(ref) and len(diff) == 1, (
                f"{error['contrastive']!r} must differ from {example['ref segment']!r} in one word"
            )
            old, new = (words[diff[0]].strip(".,!?").lower() for words in (ref, contrastive))
            assert (old, new) == (example["ref pronoun"], error["replacement"]), (
                f"the differing word must be the pronoun: {old!r} -> {new!r}"
            )


def test_contrapro_covers_document_starts_and_ends(corpus_dir, contrapro):
    lengths = {docid: len(s) for docid, s in _split_docs(corpus_dir, "test").items()}
    assert any(e["segment id"] <= 2 for e in contrapro), "expected examples at the start of a document"
    assert any(e["segment id"] == lengths[e["document id"]] for e in contrapro), (
        "expected examples in the last sentence of a document"
    )
    assert {e["ante distance"] for e in contrapro} == {1, 2}, "expected antecedents 1 and 2 sentences back"


def test_contrapro_examples_limit(tmp_path):
    assert demo.main(["--outdir", str(tmp_path), "--train-docs", "5", "--test-docs", "40",
                      "--contrapro-examples", "7"]) == 0
    examples = json.loads((tmp_path / "contrapro.json").read_text(encoding="utf-8"))
    assert len(examples) == 7, f"--contrapro-examples 7 must keep 7 examples, found {len(examples)}"
    everything = demo.build_contrapro(demo.generate(demo.DEFAULT_SEED, {"test": 40}, 3, 8)["test"])
    assert all(e in everything for e in examples), "the kept examples must be a subset of all examples"


# --- CLI -------------------------------------------------------------------------


def test_cli_writes_all_expected_files(tmp_path, capsys):
    outdir = tmp_path / "new" / "dir"
    assert demo.main(["--outdir", str(outdir), "--train-docs", "10", "--valid-docs", "2", "--test-docs", "5"]) == 0
    assert sorted(p.name for p in outdir.iterdir()) == sorted(ALL_FILES), "unexpected or missing output files"
    assert len(set(_read(outdir / "test.docids"))) == 5
    assert "test: " in capsys.readouterr().out, "the CLI should report the sizes it generated"


@pytest.mark.parametrize(
    "args, message",
    [
        (["--min-sents", "0"], "argument --min-sents: expected a whole number of at least 1, got '0'"),
        (["--min-sents", "5", "--max-sents", "4"], "must be at least --min-sents"),
        (["--test-docs", "0"], "argument --test-docs: expected a whole number of at least 1, got '0'"),
        (["--contrapro-examples", "0"], "argument --contrapro-examples: expected a whole number of at least 1, got '0'"),
        (["--seed", "x"], "argument --seed: expected a whole number, got 'x'"),
    ],
)
def test_cli_rejects_bad_arguments(tmp_path, capsys, args, message):
    with pytest.raises(SystemExit) as exit_info:
        demo.main(["--outdir", str(tmp_path / "out"), *args])
    assert exit_info.value.code != 0, "a bad argument must exit non-zero"
    assert message in capsys.readouterr().err, f"expected the message {message!r} on stderr"
    assert not (tmp_path / "out").exists(), "nothing may be written after a bad argument"


def test_generate_rejects_bad_sizes():
    with pytest.raises(ValueError, match="min_sents"):
        demo.generate(1, {"test": 1}, 0, 3)
    with pytest.raises(ValueError, match="max_sents"):
        demo.generate(1, {"test": 1}, 4, 3)


def test_the_demos_ctxpro_set_has_ctxpros_german_rules_and_forms_that_the_context_decides(tmp_path):
    """The demo's test documents as a ctxpro set: every example's reference passes ctxpro's check and the sentence
    with the other gender's pronoun or the other register fails it; each inputs line is the example's document up
    to its sentence; docnmt.corpora.ctxpro reads the pair as the workflow does, with the md5 config.yaml gives it."""
    import yaml

    from helpers import REPO
    from docnmt.corpora import ctxpro
    from docnmt.corpora.demo_ctxpro import CTXPRO_NAME, build_ctxpro
    from docnmt.score.ctxpro import passes

    docs = demo.generate()["test"]
    examples, inputs = build_ctxpro(docs)
    rules = {e["rule"] for e in examples}
    gender = {f"{case}.{g}.SING" for case in ("NOM", "ACC", "DAT") for g in ("MASC", "FEM", "NEUT")}
    formality = {f"{case}.{r}" for case in ("NOM", "ACC", "DAT", "POSS") for r in ("INFORM.SING", "FORM+PLUR")}
    assert rules <= gender | formality and rules & gender and rules & formality
    by_doc = {doc.docid: doc for doc in docs}
    for example, line in zip(examples, inputs, strict=True):
        doc = by_doc[example["document id"]]
        sentence = doc.sentences[example["segment id"]]
        assert line.split("<eos> ") == doc.src[:example["segment id"] + 1]
        assert passes(example["ref segment"], example["expected"]), example
        if example["phenomenon"] == "gender":
            others = [sentence.pronoun.variant(g) for g in ("m", "f", "n")
                      if sentence.pronoun.variant(g).lower() != example["ref segment"].lower()]
        else:
            template = sentence.you
            others = [template.formal if doc.register == "informal" else template.informal]
        for other in others:  # (masculine and neuter share the dative ihm: that variant is the reference itself)
            assert not passes(other, example["expected"]), (example, other)
    demo.main(["--outdir", str(tmp_path)])
    configured = yaml.safe_load((REPO / "config.yaml").read_text())["ctxpro"]["sets"][CTXPRO_NAME]
    report = ctxpro.prepare(CTXPRO_NAME, tmp_path / "ctxpro.demo.test.json", tmp_path / "ctxpro.demo.test",
                            configured["md5"], "en", "de", tmp_path / "out", "ctxpro-demo-test")
    assert report["examples"] == len(examples) and report["context_sentences"] == sum(l.count("<eos> ") for l in inputs)

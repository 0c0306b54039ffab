"""The synthetic, context-dependent English->German demo task.

The demo trains tiny transformers on two CPU cores in minutes, so its data
must be small *and* must contain phenomena that a sentence-level model cannot
translate correctly while a document-level model can. This module generates
seeded, deterministic documents of natural-looking raw (detokenized) text in
the common document format (see :mod:`docnmt.corpora.corpus`), built from a small
vocabulary (a few hundred word types per language) and two phenomena:

1. **Pronoun gender (it -> er / sie / es).** English ``it`` has one form; its
   German translation takes the grammatical gender of the antecedent's German
   noun (``der Tisch`` -> ``er``, ``die Lampe`` -> ``sie``, ``das Buch`` ->
   ``es``) and the case of its own clause (nominative er/sie/es, accusative
   ihn/sie/es, dative ihm/ihr/ihm; possessive ``its`` -> sein-/ihr- plus the
   ending of the possessed noun). A document introduces a noun from a
   gender-balanced inventory (:data:`NOUNS`) in one sentence ("I bought a
   lamp yesterday.") and one or two sentences later refers to it *only* by a
   pronoun ("It was very expensive." -> "Sie war sehr teuer."). The noun never
   occurs in the pronoun sentence, so the gender is recoverable only from the
   preceding context. Between antecedent and pronoun there is at most one
   filler sentence, drawn from fillers that offer no competing singular
   antecedent.

   About a third of the chains (:data:`P_AMBIGUOUS`) introduce an *ambiguous*
   noun (:data:`AMBIGUOUS_NOUNS`): one with two common German translations of
   different gender (``car`` -> ``der Wagen`` / ``das Auto``). The reference
   picks one by a fair coin, in training data and test data alike, so the
   pronoun's gender follows the *reference's* earlier choice, which no model
   can infer from the source. A strategy whose context is its own earlier
   translation gets such a pronoun right only where its own choice of noun
   matched the reference's; one that sees the reference (cheating) always
   can. Those pronoun sentences form the evaluation subset
   ``ambiguous-antecedent`` (``test.subsets``).

2. **Register (you -> du / Sie).** English ``you`` does not mark formality;
   German does (du/dich/dir/dein... and 2nd person singular verbs, versus
   Sie/Ihnen/Ihr... and 3rd person plural verbs: "Do you need help?" ->
   "Brauchst du Hilfe?" / "Brauchen Sie Hilfe?"). Some documents open with a
   cue sentence that fixes the register, a greeting with a first name
   ("Hi Tom!" -> "Hallo Tom!") or with a title and surname ("Good morning,
   Mr. Weber." -> "Guten Morgen, Herr Weber."). Later sentences address the
   reader with ``you`` but carry no cue themselves (no greeting, name or
   title), so the register is recoverable only from the document.

Other sentences are distractors (weather, time, people with names) that
contain no ``it`` and no noun of the inventory. The English expletive ``it``
("It is raining") never occurs, so every English ``it``/``its`` is anaphoric.
Sentence templates are varied (pronoun sentences in all cases, introduction
sentences with indefinite, definite and possessive articles and optional
adjectives, all correctly inflected in German).

The test documents also yield a contrastive test set in the schema of
ContraPro (Müller et al., 2018; ``contrapro.json``): for each nominative or
accusative ``it`` the reference sentence is paired with the two contrastive
sentences that use the pronoun of the other two genders. Dative and
possessive pronouns are not used there because two of their three gender
forms coincide (ihm/ihm, sein/sein), so a contrastive variant would equal the
reference. In the contrapro fields, ``src pronoun``, ``ref pronoun`` and
``replacement`` are lower-cased; ``contrastive`` keeps the sentence's casing.

Determinism: every document has its own ``random.Random`` seeded from a
SHA-256 of (seed, split, document index), so the same arguments give
byte-identical files, and changing the size of one split changes no other
split (nor the documents already generated in that split).

CLI::

    python -m docnmt.corpora.demo --outdir DIR [--seed 1234] [--train-docs 1200]
        [--valid-docs 40] [--test-docs 100] [--min-sents 3] [--max-sents 8]
        [--contrapro-examples N]

writes ``DIR/{train,valid,test}.{en,de,docids}``, ``DIR/test.subsets`` (per
line the evaluation subsets of the sentence: ``ambiguous-antecedent`` or
nothing) and ``DIR/contrapro.json``, all atomically (temporary files in DIR,
renamed only when all are complete).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import string
import sys
import time
from pathlib import Path
from typing import Mapping, Sequence

from ..manual import argument_parser
from ..textio import atomic_outputs, file_digest
from .demo_ctxpro import CTXPRO_INPUTS, CTXPRO_JSON, CTXPRO_NAME, build_ctxpro
from .demo_templates import (
    CASE_WEIGHTS, CUE_TEMPLATES, DISTRACTORS, INTRO_TEMPLATES, PRONOUN_TEMPLATES, YOU_TEMPLATES, Document, PronounUse,
    Sentence,
)
from .demo_vocabulary import (
    AMBIGUOUS_NOUNS, AMBIGUOUS_SUBSET, ATTRIBUTIVE, CITIES, COLORS, CONTRASTS, DAYS, DEFINITE, EXCESSIVE,
    FIRST_NAMES, GENDERS, GENDER_NAMES, HOURS, INDEFINITE, MIXED_ADJ, NOUNS, Noun, PERSONAL, POSSESSIVE_STEM,
    PREDICATIVE, PRICES, REGISTERS, SURNAMES, TITLES, WEAK_ADJ, ein_ending,
)
from ..option_ranges import POSITIVE_INT, SEED

DEFAULT_SEED = 1234
DEFAULT_DOCS = {"train": 1200, "valid": 40, "test": 100}
DEFAULT_MIN_SENTS = 3
DEFAULT_MAX_SENTS = 8
SPLITS = ("train", "valid", "test")
SRC, TGT = "en", "de"
SEP = "<sep>"  # the document-level separator token; never part of raw text

# Document shape (probabilities per document / per block).
P_REGISTER = 0.6  # the document has a register cue and "you" sentences
P_LEADING_DISTRACTOR = 0.15  # the cue is the second sentence, not the first
P_CHAIN = 0.55  # the next block is a noun introduction + pronoun chain
P_GAP = 0.35  # one filler sentence between antecedent and pronoun (distance 2)
P_SECOND_PRONOUN = 0.25  # a second pronoun sentence right after the first
P_YOU_FILLER = 0.4  # in a register document, a filler is a "you" sentence
P_AMBIGUOUS = 1 / 3  # a chain's antecedent is an ambiguous noun (two German translations)


# --------------------------------------------------------------------------
# Documents
# --------------------------------------------------------------------------


def _derived_seed(*parts) -> int:
    """A 64-bit seed from the parts, stable across runs and Python versions (no hash())."""
    text = "docnmt.demo/" + "/".join(str(p) for p in parts)
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


_PRONOUN_MARK = "\x00"


def _slot_names(*templates: str) -> list[str]:
    names: list[str] = []
    for template in templates:
        for _, name, _, _ in string.Formatter().parse(template):
            if name and name not in names:
                names.append(name)
    return names


def _fill_slots(rng: random.Random, names: Sequence[str]) -> tuple[dict, dict]:
    """Choose a value for every slot in ``names``; return (English values, German values)."""
    en: dict[str, str] = {}
    de: dict[str, str] = {}
    wanted = set(names)
    if wanted & {"name", "his", "sein", "name2"}:
        people = rng.sample(FIRST_NAMES, 2)
        (name, gender), (name2, _) = people
        en["name"] = de["name"] = name
        en["name2"] = de["name2"] = name2
        en["his"] = "his" if gender == "m" else "her"
        de["sein"] = POSSESSIVE_STEM[gender]
        en["_name_gender"] = gender
    if "adj" in wanted:
        en["adj"], de["adj"] = rng.choice(PREDICATIVE)
    if "too" in wanted:
        en["too"], de["too"] = rng.choice(EXCESSIVE)
    if wanted & {"but1", "but2"}:
        (a_en, a_de), (b_en, b_de) = rng.choice(CONTRASTS)
        en["but1"], de["but1"], en["but2"], de["but2"] = a_en, a_de, b_en, b_de
    for slot, values in (("color", COLORS), ("time", HOURS), ("day", DAYS), ("city", CITIES)):
        if slot in wanted:
            en[slot], de[slot] = rng.choice(values)
    if "price" in wanted:
        en["price"] = de["price"] = rng.choice(PRICES)
    if "F" in wanted:
        name, gender = rng.choice(FIRST_NAMES)
        en["F"] = de["F"] = name
        de["dear"] = "Lieber" if gender == "m" else "Liebe"
    if "T" in wanted:
        title_en, title_de, gender = rng.choice(TITLES)
        surname = rng.choice(SURNAMES)
        en["T"] = f"{title_en} {surname}"
        de["T"] = f"{title_de} {surname}"
        de["dear"] = "Sehr geehrter" if gender == "m" else "Sehr geehrte"
    return en, de


def _noun_phrase(rng: random.Random, noun: Noun, det: str, case: str, possessor: str | None) -> tuple[str, str]:
    """An English and a German noun phrase for ``noun`` (with an optional adjective)."""
    adj_en, adj_de = rng.choice(ATTRIBUTIVE) if rng.random() < 0.4 else ("", "")
    g = noun.gender
    if det == "indef":
        first = (adj_en or noun.en)[0]
        art_en = "an" if first in "aeiou" else "a"
        art_de = INDEFINITE[case][g]
        ending = MIXED_ADJ[case][g]
    elif det == "def":
        art_en = "the"
        art_de = DEFINITE[case][g]
        ending = WEAK_ADJ[case][g]
    else:  # a possessive: his / her
        assert possessor in GENDERS
        art_en = "his" if possessor == "m" else "her"
        art_de = POSSESSIVE_STEM[possessor] + ein_ending(case, g)
        ending = MIXED_ADJ[case][g]
    en = " ".join(w for w in (art_en, adj_en, noun.en) if w)
    de = " ".join(w for w in (art_de, adj_de + ending if adj_de else "", noun.de) if w)
    return en, de


def _weighted_choice(rng: random.Random, items: Sequence, weights: Sequence[float]):
    return rng.choices(items, weights=weights, k=1)[0]


def _pick(rng: random.Random, candidates: Sequence, used: set):
    """A random template, preferring one not yet used in the document; marks it used."""
    fresh = [t for t in candidates if t not in used]
    template = rng.choice(fresh or list(candidates))
    used.add(template)
    return template


def _realize(rng: random.Random, en: str, de: str) -> tuple[str, str]:
    values_en, values_de = _fill_slots(rng, _slot_names(en, de))
    return _cap(en.format(**values_en)), _cap(de.format(**values_de))


def _intro_sentence(rng: random.Random, noun: Noun, used: set) -> tuple[Sentence, str, str]:
    template = _pick(rng, INTRO_TEMPLATES, used)
    values_en, values_de = _fill_slots(rng, _slot_names(template.en, template.de))
    possessor = {"his": "m", "her": "f", "name": values_en.get("_name_gender")}.get(template.det)
    np_en, np_de = _noun_phrase(rng, noun, template.det, template.case, possessor)
    values_en["np"], values_de["np"] = np_en, np_de
    en = _cap(template.en.format(**values_en))
    de = _cap(template.de.format(**values_de))
    # The phrase as it stands in the sentence (capitalized when sentence-initial).
    if template.en.startswith("{np}"):
        np_en, np_de = _cap(np_en), _cap(np_de)
    return Sentence(en, de, "intro"), np_en, np_de


def _pronoun_sentence(rng: random.Random, noun: Noun, distance: int, src_ante: str, ref_ante: str,
                      gap_safe_only: bool, used: set) -> Sentence:
    case = _weighted_choice(rng, list(CASE_WEIGHTS), list(CASE_WEIGHTS.values()))
    candidates = [t for t in PRONOUN_TEMPLATES if t.case == case and (t.gap_safe or not gap_safe_only)]
    if not candidates:  # no gap-safe template of this case: fall back to nominative
        candidates = [t for t in PRONOUN_TEMPLATES if t.case == "nom" and t.gap_safe]
    template = _pick(rng, candidates, used)
    values_en, values_de = _fill_slots(rng, _slot_names(template.en, template.de))
    values_de["P"] = _PRONOUN_MARK
    en = _cap(template.en.format(**values_en))
    prefix, suffix = template.de.format(**values_de).split(_PRONOUN_MARK)
    if template.case == "poss":
        p_case, p_gender = template.possessed
        forms = {g: POSSESSIVE_STEM[g] + ein_ending(p_case, p_gender) for g in GENDERS}
    else:
        forms = dict(PERSONAL[template.case])
    if not prefix:
        forms = {g: _cap(f) for g, f in forms.items()}
    else:
        prefix = _cap(prefix)
    use = PronounUse(
        case=template.case,
        noun=noun,
        ante_distance=distance,
        src_pronoun="its" if template.case == "poss" else "it",
        de_forms=tuple((g, forms[g]) for g in GENDERS),
        de_prefix=prefix,
        de_suffix=suffix,
        src_ante_phrase=src_ante,
        ref_ante_phrase=ref_ante,
    )
    return Sentence(en, use.variant(noun.gender), "pronoun", use)


def _you_sentence(rng: random.Random, register: str, used: set, gap_safe_only: bool = False) -> Sentence:
    template = _pick(rng, [t for t in YOU_TEMPLATES if t.gap_safe or not gap_safe_only], used)
    de = template.informal if register == "informal" else template.formal
    en, de = _realize(rng, template.en, de)
    return Sentence(en, de, "you", you=template)


def _distractor(rng: random.Random, used: set, gap_safe_only: bool = False) -> Sentence:
    template = _pick(rng, [t for t in DISTRACTORS if t.gap_safe or not gap_safe_only], used)
    en, de = _realize(rng, template.en, template.de)
    return Sentence(en, de, "distractor")


def _cue(rng: random.Random, register: str) -> Sentence:
    templates = [t for t in CUE_TEMPLATES if t.register == register]
    template = _weighted_choice(rng, templates, [t.weight for t in templates])
    en, de = _realize(rng, template.en, template.de)
    return Sentence(en, de, "cue")


def _plan(rng: random.Random, n: int, register: str | None) -> list[str]:
    """The sequence of sentence roles of a document of ``n`` sentences.

    Roles: C cue, Y "you", D distractor, F filler (distractor or "you"),
    G gap filler (no competing antecedent), I introduction, P pronoun,
    S gap-safe pronoun (followed by a second pronoun).
    """
    head: list[str] = []
    blocks: list[list[str]] = []
    budget = n
    if register:
        if n >= 4 and rng.random() < P_LEADING_DISTRACTOR:
            head.append("D")
        head.append("C")
        blocks.append(["Y"])
        budget -= len(head) + 1
    while budget > 0:
        if budget >= 2 and rng.random() < P_CHAIN:
            if budget >= 3 and rng.random() < P_GAP:
                block = ["I", "G", "P"]
            elif budget >= 3 and rng.random() < P_SECOND_PRONOUN:
                block = ["I", "S", "P"]
            else:
                block = ["I", "P"]
        else:
            block = ["F"]
        blocks.append(block)
        budget -= len(block)
    rng.shuffle(blocks)
    return head + [role for block in blocks for role in block]


def generate_document(rng: random.Random, docid: str, min_sents: int, max_sents: int,
                      gender_offset: int = 0) -> Document:
    """One document of ``min_sents``..``max_sents`` sentences drawn with ``rng``.

    A chain's antecedent is an ambiguous noun with probability
    :data:`P_AMBIGUOUS`; the reference then uses one of its two German
    translations, chosen by a fair coin (and, as every chain has its own noun,
    the document uses that translation throughout). Otherwise the antecedent of
    the document's ``k``-th unambiguous chain has gender
    ``GENDERS[(gender_offset + k) % 3]``; :func:`generate` passes the document
    index, so the genders are balanced within every split, even a small one.
    """
    n = rng.randint(min_sents, max_sents)
    register = rng.choice(REGISTERS) if n >= 2 and rng.random() < P_REGISTER else None
    doc = Document(docid, register)
    nouns = list(NOUNS)
    rng.shuffle(nouns)  # the chains of a document use distinct nouns
    ambiguous = list(AMBIGUOUS_NOUNS)
    rng.shuffle(ambiguous)
    chains = 0
    noun = None
    intro_index = -1
    src_ante = ref_ante = ""
    used: set = set()  # templates already in the document (avoid repeating a sentence)
    for index, role in enumerate(_plan(rng, n, register)):
        if role == "C":
            sentence = _cue(rng, register)
        elif role == "Y":
            sentence = _you_sentence(rng, register, used)
        elif role == "D":
            sentence = _distractor(rng, used)
        elif role in ("F", "G"):
            safe = role == "G"
            if register and rng.random() < P_YOU_FILLER:
                sentence = _you_sentence(rng, register, used, gap_safe_only=safe)
            else:
                sentence = _distractor(rng, used, gap_safe_only=safe)
        elif role == "I":
            if rng.random() < P_AMBIGUOUS:
                # the reference's translation: a fair coin, independent of everything in the source
                noun = rng.choice(ambiguous.pop())
            else:
                gender = GENDERS[(gender_offset + chains) % len(GENDERS)]
                noun = next(x for x in nouns if x.gender == gender)
                nouns.remove(noun)
                chains += 1
            intro_index = index
            sentence, src_ante, ref_ante = _intro_sentence(rng, noun, used)
        elif role in ("P", "S"):
            assert noun is not None
            sentence = _pronoun_sentence(rng, noun, index - intro_index, src_ante, ref_ante,
                                         gap_safe_only=role == "S", used=used)
        else:  # pragma: no cover - _plan emits only the roles above
            raise AssertionError(role)
        doc.sentences.append(sentence)
    return doc


def _check_sizes(n_docs_per_split: Mapping[str, int], min_sents: int, max_sents: int) -> None:
    if min_sents < 1:
        raise ValueError(f"min_sents must be at least 1, got {min_sents}")
    if max_sents < min_sents:
        raise ValueError(f"max_sents ({max_sents}) must be at least min_sents ({min_sents})")
    for split, n in n_docs_per_split.items():
        if not re.fullmatch(r"[A-Za-z0-9_]+", split):
            raise ValueError(f"split names must be alphanumeric, got {split!r}")
        if n < 0:
            raise ValueError(f"the number of {split} documents must not be negative, got {n}")


def generate(seed: int = DEFAULT_SEED, n_docs_per_split: Mapping[str, int] | None = None,
             min_sents: int = DEFAULT_MIN_SENTS, max_sents: int = DEFAULT_MAX_SENTS) -> dict[str, list[Document]]:
    """Generate the documents of every split: ``{split: [Document, ...]}``.

    Document ``i`` of split ``s`` depends only on (seed, s, i, min_sents,
    max_sents), so splits are independent streams and a larger split extends
    a smaller one. Document ids are ``demo-{split}-{i:05d}``.
    """
    n_docs_per_split = dict(DEFAULT_DOCS if n_docs_per_split is None else n_docs_per_split)
    _check_sizes(n_docs_per_split, min_sents, max_sents)
    result: dict[str, list[Document]] = {}
    for split, n_docs in n_docs_per_split.items():
        docs = []
        for i in range(n_docs):
            rng = random.Random(_derived_seed(seed, split, i))
            docs.append(generate_document(rng, f"demo-{split}-{i:05d}", min_sents, max_sents, gender_offset=i))
        result[split] = docs
    return result


# --------------------------------------------------------------------------
# ContraPro
# --------------------------------------------------------------------------


def build_contrapro(test_docs: Sequence[Document], max_examples: int | None = None,
                    seed: int = DEFAULT_SEED) -> list[dict]:
    """Contrastive pronoun examples (ContraPro schema) for the test documents.

    One example per nominative or accusative ``it``, with two errors: the
    sentence with the pronoun of each other gender in the same case. With
    ``max_examples`` a seeded subset of at most that many is kept, in
    document order.
    """
    examples = []
    for doc in test_docs:
        for index, sentence in enumerate(doc.sentences):
            use = sentence.pronoun
            if use is None or use.case not in ("nom", "acc"):
                continue
            forms = dict(use.de_forms)
            gender = use.noun.gender
            examples.append({
                "document id": doc.docid,
                "segment id": index + 1,
                "src segment": sentence.en,
                "ref segment": sentence.de,
                "src pronoun": use.src_pronoun,
                "ref pronoun": forms[gender].lower(),
                "ante distance": use.ante_distance,
                "intrasegmental": use.ante_distance == 0,
                "src ante phrase": use.src_ante_phrase,
                "ref ante phrase": use.ref_ante_phrase,
                "src ante head": use.noun.en,
                "ref ante head": use.noun.de,
                "ref ante head gender": GENDER_NAMES[gender],
                "corpus": "demo",
                "errors": [
                    {
                        "contrastive": use.variant(other),
                        "replacement": forms[other].lower(),
                        "replacement gender": GENDER_NAMES[other],
                    }
                    for other in GENDERS
                    if other != gender
                ],
            })
    if max_examples is not None and len(examples) > max_examples:
        rng = random.Random(_derived_seed(seed, "contrapro"))
        keep = sorted(rng.sample(range(len(examples)), max_examples))
        examples = [examples[i] for i in keep]
    return examples


# --------------------------------------------------------------------------
# Output
# --------------------------------------------------------------------------


def _write_all_atomically(files: Mapping[Path, str]) -> None:
    """Write every file atomically; all appear together or none does."""
    with atomic_outputs(list(files)) as handles:
        for handle, text in zip(handles, files.values()):
            handle.write(text)


def _check_line(text: str, where: str) -> None:
    if not text.strip():
        raise ValueError(f"{where}: empty sentence")
    if SEP in text or "\n" in text or "\r" in text:
        raise ValueError(f"{where}: a sentence must not contain {SEP!r} or a line break: {text!r}")


def write_corpus(outdir: os.PathLike | str, docs_by_split: Mapping[str, Sequence[Document]],
                 contrapro: Sequence[dict] | None = None, subset_splits: Sequence[str] = ("test",),
                 ctxpro: tuple[list[dict], list[str]] | None = None) -> dict[str, Path]:
    """Write ``{split}.en``, ``{split}.de``, ``{split}.docids`` for every split
    (and ``contrapro.json`` when ``contrapro`` is given, the ctxpro set's JSON and inputs when ``ctxpro`` is:
    :func:`build_ctxpro`) into ``outdir``, and
    ``{split}.subsets`` for the splits in ``subset_splits``: per line, the
    names of the evaluation subsets the sentence belongs to, separated by
    spaces (an empty line: none), read by the scorers' ``--subsets``.

    Every sentence is checked (non-empty, no ``<sep>``, no line break) before
    anything is written; the files are then written atomically (temporary
    files in ``outdir``, renamed when all are complete). Returns ``{name: path}``.
    """
    outdir = Path(outdir)
    files: dict[Path, str] = {}
    for split, docs in docs_by_split.items():
        en, de, ids = [], [], []
        for doc in docs:
            for number, sentence in enumerate(doc.sentences, start=1):
                _check_line(sentence.en, f"{doc.docid} sentence {number} ({SRC})")
                _check_line(sentence.de, f"{doc.docid} sentence {number} ({TGT})")
                en.append(sentence.en)
                de.append(sentence.de)
                ids.append(doc.docid)
        for ext, lines in ((SRC, en), (TGT, de), ("docids", ids)):
            files[outdir / f"{split}.{ext}"] = "".join(line + "\n" for line in lines)
        if split in subset_splits:
            files[outdir / f"{split}.subsets"] = "".join(
                " ".join(sentence.subsets) + "\n" for doc in docs for sentence in doc.sentences)
    if contrapro is not None:
        files[outdir / "contrapro.json"] = json.dumps(list(contrapro), ensure_ascii=False, indent=1) + "\n"
    if ctxpro is not None:
        examples, inputs = ctxpro
        files[outdir / CTXPRO_JSON] = json.dumps(examples, ensure_ascii=False, indent=1) + "\n"
        files[outdir / CTXPRO_INPUTS] = "".join(line + "\n" for line in inputs)
    _write_all_atomically(files)
    return {path.name: path for path in files}


# --------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    parser = argument_parser(
        "docnmt.corpora.demo",
        "Generate the synthetic En-De demo corpus (pronoun gender and du/Sie depend on context).")
    parser.add_argument("--outdir", required=True, type=Path, help="output folder")
    parser.add_argument("--seed", type=SEED, default=DEFAULT_SEED, help="random seed (default: %(default)s)")
    for split in SPLITS:
        parser.add_argument(f"--{split}-docs", type=POSITIVE_INT, default=DEFAULT_DOCS[split],
                            help=f"{split} documents (default: %(default)s)")
    parser.add_argument("--min-sents", type=POSITIVE_INT, default=DEFAULT_MIN_SENTS,
                        help="fewest sentences per document (default: %(default)s)")
    parser.add_argument("--max-sents", type=POSITIVE_INT, default=DEFAULT_MAX_SENTS,
                        help="most sentences per document (default: %(default)s)")
    parser.add_argument("--contrapro-examples", type=POSITIVE_INT, default=None,
                        help="keep at most N contrastive examples (default: all from the test documents)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Command line entry point; bad arguments exit with status 2 and a message."""
    parser = _parser()
    args = parser.parse_args(argv)  # each number's range is its option's type (docnmt.option_ranges)
    if args.max_sents < args.min_sents:
        parser.error(f"--max-sents ({args.max_sents}) must be at least --min-sents ({args.min_sents})")

    start = time.perf_counter()
    sizes = {split: getattr(args, f"{split}_docs") for split in SPLITS}
    docs = generate(args.seed, sizes, args.min_sents, args.max_sents)
    contrapro = build_contrapro(docs["test"], args.contrapro_examples, args.seed)
    ctxpro = build_ctxpro(docs["test"])
    write_corpus(args.outdir, docs, contrapro, ctxpro=ctxpro)
    seconds = time.perf_counter() - start
    for split in SPLITS:
        n_sents = sum(len(d) for d in docs[split])
        print(f"{args.outdir}/{split}: {n_sents} sentences in {len(docs[split])} documents")
    print(f"{args.outdir}/contrapro.json: {len(contrapro)} examples")
    digest = file_digest(args.outdir / CTXPRO_JSON, algorithm="md5")
    print(f"{args.outdir}/{CTXPRO_JSON}: the ctxpro set {CTXPRO_NAME}, {len(ctxpro[0])} examples, md5 {digest}")
    marked = sum(bool(s.subsets) for d in docs["test"] for s in d.sentences)
    print(f"{args.outdir}/test.subsets: {marked} sentences in {AMBIGUOUS_SUBSET}")
    print(f"generated in {seconds:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

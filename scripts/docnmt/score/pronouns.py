"""Pronoun gender and formality F1 for English->German, as the paper's German BlonDe fork computes it.

Herold & Ney (2023, section 4.1 and Table 4) extend BlonDe (Jiang et al.,
2022) to German references in the fork christian3141/BlonDe (commit
bdb4eeff: ``blonde/__init__.py``, ``processing.py``, ``BlonDe.py``,
``dBlonDe.py``, ``utils.py``, ``blonde_cli/score.py``). This module
re-implements that fork's behaviour as its CLI runs it::

    blonde -r REF -s SYS --language german --source SRC --source-language english

Rule set ``blonde-de`` (the default, the paper's):

- **Lowercasing.** The CLI's ``--lowercase`` is ``type=bool, default=True``,
  so it is always on: source, reference and hypothesis are lowercased
  *before* tagging and before matching.
- **Tokens.** Each line is one sentence; the tagger tokenizes it. A German
  token counts only where its STTS tag is one of the fork's 13 pronoun tags
  (:data:`GERMAN_PRONOUN_TAGS`). An English source token counts only where
  en_core_web_sm tags it PRP, PRP$, WP or WP$.
- **Source checks, per sentence** (English word lists: it = it/its/itself;
  you = you/your/yours/yourself; they = they/them/their/theirs/themselves;
  she = she/her/hers/herself):

  - gender counts only where the source has an it-form; feminine is dropped
    where the source also has a you- or a they-form;
  - formality counts only where the source has a you-form; formal is dropped
    where the source also has a they-, it- or she-form.

  A dropped class, or a category that does not count, contributes 0 to the
  hypothesis and the reference of that sentence.
- **German forms** (lowercased): masculine er, ihm, ihn; feminine sie, ihr,
  ihre, ihrer, ihres, ihrem; neuter es; formal sie, ihr, ihrer, ihnen, ihre,
  ihres (so *ihrem* and *ihren* are never formal, and a lowercase *ihr*
  is); informal du, dir, dich, dein, deine, deiner, deines, deinem, deinen.
- **Scores.** Per sentence and class ``match = min(hyp, ref)``; summed over
  the corpus and weighted per category (gender: masculine 0.5, feminine 0.5,
  neuter 0; formality: 0.5 each): ``R = Σ w·match / Σ w·ref``,
  ``P = Σ w·match / Σ w·hyp``. Zero denominators follow the fork's
  ``safe_devide`` and ``compute_F1``: R (P) is NaN where the weighted
  reference (hypothesis) count is 0; F1 = 2RP/(R+P), which is NaN where R = P
  = 0 (not a single match); where R or P is NaN, F1 is R (so F1 is NaN
  without reference examples, and 0 with references but an empty
  hypothesis). NaN is written as JSON ``null``; the tables show ``nan``.
  The fork reports only the category score; every class's P/R/F1 (same
  rules, unweighted) is written as well.

Rule set ``capitalized-formal`` (stricter, *not* the paper's): everything as
above, except that the German text is tagged in its original case and the
formal class counts only the capitalized forms Sie, Ihnen, Ihr, Ihre, Ihrem,
Ihren, Ihrer, Ihres: a lowercase *sie* or *ihr* is 3rd person. The output
says that it differs from the paper.

This project's reporting rule (the paper's): a test set reports a category
only where every class has at least ``min_examples`` (100) reference
occurrences; otherwise the table cell is "-" and the counts are written out.

Taggers: German, spaCy ``de_core_news_sm`` where it is installed (the
paper's; ``make models``), otherwise HanTa's ``morphmodel_ger.pgz`` (shipped
with its pip package, offline; STTS tags). English source, spaCy
``en_core_web_sm`` where installed (the paper's), otherwise word matching
(every token is a candidate, no tag filter). The output names both taggers
and the rule set, and says "as the paper" only when all three are the
paper's.

CLI::

    python -m docnmt.score.pronouns --source test.en --reference test.de \
        --system sentence-level=sl.txt --system doc-trans=dt.txt ... \
        [--select contrapro.examples.jsonl] [--subsets test.subsets] [--tagger auto|spacy|hanta] \
        [--source-tagger auto|spacy|words] [--rules blonde-de|capitalized-formal] \
        [--min-examples 100] --output pronouns.json
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from .evalset import add_arguments, add_subsets_argument, load_args
from ..textio import atomic_outputs, atomic_write, cli_errors
from ..manual import argument_parser
from .metric import Metric
from ..option_ranges import NONNEGATIVE_INT

#: The fork's German pronoun tags (STTS), blonde/__init__.py PRONOUN_TAGS_GERMAN.
GERMAN_PRONOUN_TAGS = frozenset({"PDAT", "PDS", "PIAT", "PIS", "PPER", "PPOSAT", "PPOSS", "PRELAT", "PRELS", "PRF",
                                 "PWAT", "PWAV", "PWS"})
#: The fork's English pronoun tags (Penn Treebank), PRONOUN_TAGS_ENGLISH.
ENGLISH_PRONOUN_TAGS = frozenset({"PRP", "PRP$", "WP", "WP$"})

IT_FORMS = frozenset({"it", "its", "itself"})
YOU_FORMS = frozenset({"you", "your", "yours", "yourself"})
THEY_FORMS = frozenset({"they", "them", "their", "theirs", "themselves"})
SHE_FORMS = frozenset({"she", "her", "hers", "herself"})

FORK = "christian3141/BlonDe@bdb4eeff"


@dataclass(frozen=True)
class PronounClass:
    forms: frozenset
    weight: float
    dropped_if_source_has: frozenset = frozenset()
    case_sensitive: bool = False  # match the token as written (else lowercased)


@dataclass(frozen=True)
class Category:
    requires: frozenset  # the source must contain one of these
    classes: dict


@dataclass(frozen=True)
class RuleSet:
    name: str
    description: str
    as_paper: bool
    lowercase_german: bool  # lowercase reference and hypotheses before tagging
    categories: dict


GENDER = Category(
    requires=IT_FORMS,
    classes={
        "masculine": PronounClass(frozenset({"er", "ihm", "ihn"}), 0.5),
        "feminine": PronounClass(frozenset({"sie", "ihr", "ihre", "ihrer", "ihres", "ihrem"}), 0.5,
                                 YOU_FORMS | THEY_FORMS),
        "neuter": PronounClass(frozenset({"es"}), 0.0),
    },
)
INFORMAL = PronounClass(frozenset({"du", "dir", "dich", "dein", "deine", "deiner", "deines", "deinem", "deinen"}), 0.5)
FORMAL_DROPPED_IF = THEY_FORMS | IT_FORMS | SHE_FORMS

RULES = {
    "blonde-de": RuleSet(
        name="blonde-de",
        description=f"the paper's German BlonDe fork ({FORK}) as its CLI runs it (lowercased; formal = "
                    "sie/ihr/ihrer/ihnen/ihre/ihres)",
        as_paper=True,
        lowercase_german=True,
        categories={
            "gender": GENDER,
            "formality": Category(YOU_FORMS, {
                "formal": PronounClass(frozenset({"sie", "ihr", "ihrer", "ihnen", "ihre", "ihres"}), 0.5,
                                       FORMAL_DROPPED_IF),
                "informal": INFORMAL,
            }),
        },
    ),
    "capitalized-formal": RuleSet(
        name="capitalized-formal",
        description="stricter than the paper (formal only capitalized Sie/Ihnen/Ihr/Ihre/Ihrem/Ihren/Ihrer/Ihres, "
                    f"German tagged in its original case; otherwise as {FORK})",
        as_paper=False,
        lowercase_german=False,
        categories={
            "gender": GENDER,
            "formality": Category(YOU_FORMS, {
                "formal": PronounClass(frozenset({"Sie", "Ihnen", "Ihr", "Ihre", "Ihrem", "Ihren", "Ihrer", "Ihres"}),
                                       0.5, FORMAL_DROPPED_IF, case_sensitive=True),
                "informal": INFORMAL,
            }),
        },
    ),
}
DEFAULT_RULES = "blonde-de"

Tagged = Sequence[tuple[str, str]]
#: An English source sentence: raw text (word matching) or (token, tag) pairs from a tagger;
#: a tag of None means "untagged" (word matching: every token is a candidate).
Source = str | Sequence[tuple[str, str | None]]


# ---- counting ------------------------------------------------------------------
WORD = re.compile(r"[^\W\d_]+")


def match_words(sentence: str) -> list[tuple[str, None]]:
    """Word matching, the fallback without an English tagger: lowercased words, untagged (``it's`` gives ``it``)."""
    return [(w, None) for w in WORD.findall(sentence.lower())]


def source_pronouns(source: Source) -> set[str]:
    """The lowercased English tokens of a source sentence that the source checks look at."""
    tagged = match_words(source) if isinstance(source, str) else source
    return {token.lower() for token, tag in tagged if tag is None or tag in ENGLISH_PRONOUN_TAGS}


def count(tagged: Tagged, cls: PronounClass) -> int:
    """Pronoun tokens of one class in a tagged German sentence."""
    return sum(1 for token, tag in tagged
               if tag in GERMAN_PRONOUN_TAGS and (token if cls.case_sensitive else token.lower()) in cls.forms)


def sentence_counts(source: Source, hyp: Tagged, ref: Tagged, rules: RuleSet | str = DEFAULT_RULES) -> dict:
    """``{category: {class: (hyp, ref, match)}}`` of one aligned sentence (the classes that count only)."""
    rules = RULES[rules] if isinstance(rules, str) else rules
    words = source_pronouns(source)
    out = {}
    for name, category in rules.categories.items():
        if not words & category.requires:
            continue
        out[name] = {}
        for cls_name, cls in category.classes.items():
            if words & cls.dropped_if_source_has:
                continue
            h, r = count(hyp, cls), count(ref, cls)
            out[name][cls_name] = (h, r, min(h, r))
    return out


def safe_divide(a: float, b: float) -> float:
    """The fork's ``safe_devide``: NaN where the denominator is 0."""
    return a / b if b else math.nan


def fork_f1(recall: float, precision: float) -> float:
    """The fork's ``compute_F1``: 2RP/(R+P), NaN where R = P = 0; R where either is NaN."""
    if not math.isnan(recall) and not math.isnan(precision):
        return safe_divide(2 * recall * precision, recall + precision)
    return recall


def _prf(match: float, hyp: float, ref: float) -> dict:
    """P/R/F1 as the fork computes them; NaN becomes None (JSON null)."""
    recall, precision = safe_divide(match, ref), safe_divide(match, hyp)
    values = {"precision": precision, "recall": recall, "f1": fork_f1(recall, precision)}
    return {k: None if math.isnan(v) else v for k, v in values.items()}


def score(sources: Sequence[Source], hyps: Sequence[Tagged], refs: Sequence[Tagged], min_examples: int = 100,
          rules: RuleSet | str = DEFAULT_RULES) -> dict:
    """Corpus P/R/F1 per category (the fork's score) and per class, with counts and the reporting rule."""
    rules = RULES[rules] if isinstance(rules, str) else rules
    counts = [sentence_counts(source, hyp, ref, rules) for source, hyp, ref in zip(sources, hyps, refs, strict=True)]
    return score_counts(counts, min_examples, rules)


def score_counts(counts: Sequence[dict], min_examples: int = 100, rules: RuleSet | str = DEFAULT_RULES) -> dict:
    """:func:`score` of sentences already counted (:func:`sentence_counts` of each)."""
    rules = RULES[rules] if isinstance(rules, str) else rules
    totals = {c: {k: [0, 0, 0] for k in cat.classes} for c, cat in rules.categories.items()}
    for sentence in counts:
        for category, classes in sentence.items():
            for cls_name, triple in classes.items():
                for i, value in enumerate(triple):
                    totals[category][cls_name][i] += value
    result = {}
    for category, classes in totals.items():
        weights = {k: rules.categories[category].classes[k].weight for k in classes}
        weighted = [sum(weights[k] * classes[k][i] for k in classes) for i in range(3)]
        entry = _prf(weighted[2], weighted[0], weighted[1])
        entry["classes"] = {k: {"hyp": h, "ref": r, "match": m, "weight": weights[k], **_prf(m, h, r)}
                            for k, (h, r, m) in classes.items()}
        entry["examples"] = {k: classes[k][1] for k in classes}
        entry["reported"] = all(classes[k][1] >= min_examples for k in classes)
        result[category] = entry
    return result


# ---- taggers -------------------------------------------------------------------
PAPER_MODELS = {"de": "de_core_news_sm", "en": "en_core_web_sm"}


class SpacyTagger:
    """Tags from a spaCy pipeline (``token.tag_``: STTS for German, Penn Treebank for English)."""

    def __init__(self, nlp, name: str, paper: bool = False):
        self.nlp = nlp
        self.name = name
        self.paper = paper  # the paper's model (de_core_news_sm / en_core_web_sm)

    @classmethod
    def load(cls, model: str) -> "SpacyTagger":
        import spacy

        nlp = spacy.load(model, exclude=["parser", "ner", "lemmatizer"])
        return cls(nlp, f"spacy {model} {nlp.meta.get('version', '?')} (spaCy {spacy.__version__})",
                   paper=model in PAPER_MODELS.values())

    def tag(self, lines: Iterable[str]) -> list[list[tuple[str, str]]]:
        return [[(t.text, t.tag_) for t in doc] for doc in self.nlp.pipe(list(lines))]


class HanTaTagger:
    """STTS tags from HanTa's German model, shipped with the pip package (offline)."""

    TOKEN = re.compile(r"\w+|[^\w\s]")
    paper = False

    def __init__(self):
        from importlib.metadata import version

        from HanTa import HanoverTagger

        self.tagger = HanoverTagger.HanoverTagger("morphmodel_ger.pgz")
        self.name = f"HanTa {version('HanTa')} morphmodel_ger.pgz"

    def tag(self, lines: Iterable[str]) -> list[list[tuple[str, str]]]:
        out = []
        for line in lines:
            tokens = self.TOKEN.findall(line)
            tagged = self.tagger.tag_sent(tokens, taglevel=1) if tokens else []
            out.append([(word, tag) for word, _lemma, tag in tagged])
        return out


class WordMatcher:
    """No English tagger: every word is a candidate for the source checks (the fork needs a PRP/WP tag)."""

    name = "word matching (no English tagger)"
    paper = False

    def tag(self, lines: Iterable[str]) -> list[list[tuple[str, None]]]:
        return [match_words(line) for line in lines]


def spacy_model_installed(model: str = "de_core_news_sm") -> bool:
    """Whether spaCy and its pipeline package ``model`` are installed: spaCy's own test (``spacy.util.is_package``,
    the package's metadata), without importing spaCy, which imports torch (2 CPU-s a scoring process)."""
    from importlib.metadata import PackageNotFoundError, distribution
    from importlib.util import find_spec

    if find_spec("spacy") is None:
        return False
    try:
        distribution(model)
    except PackageNotFoundError:
        return False
    return True


def load_tagger(choice: str = "auto"):
    """German: ``auto`` is spaCy de_core_news_sm where installed, else HanTa."""
    if choice == "spacy" or (choice == "auto" and spacy_model_installed(PAPER_MODELS["de"])):
        return SpacyTagger.load(PAPER_MODELS["de"])
    if choice in ("hanta", "auto"):
        return HanTaTagger()
    raise ValueError(f"unknown German tagger {choice!r}: expected auto, spacy or hanta")


def load_source_tagger(choice: str = "auto"):
    """English source: ``auto`` is spaCy en_core_web_sm where installed, else word matching."""
    if choice == "spacy" or (choice == "auto" and spacy_model_installed(PAPER_MODELS["en"])):
        return SpacyTagger.load(PAPER_MODELS["en"])
    if choice in ("words", "auto"):
        return WordMatcher()
    raise ValueError(f"unknown English tagger {choice!r}: expected auto, spacy or words")


def setup_note(rules: RuleSet, german, english) -> tuple[bool, str]:
    """Whether rule set and taggers are all the paper's, and one line naming them."""
    differs = []
    if not rules.as_paper:
        differs.append(f"{rules.name} is {rules.description}")
    if not german.paper:
        differs.append(f"German tagger not spaCy {PAPER_MODELS['de']}")
    if not english.paper:
        differs.append(f"English source not tagged by spaCy {PAPER_MODELS['en']}")
    head = f"rule set {rules.name}; German tagger {german.name}; English source tagger {english.name}"
    return not differs, head + ("; as the paper" if not differs else "; differs from the paper: " + "; ".join(differs))


def tag_inputs(data, german, english, rules: RuleSet):
    """Tagged source, reference and systems (identical system outputs are tagged once)."""
    def german_lines(lines):
        return [line.lower() for line in lines] if rules.lowercase_german else list(lines)

    sources = english.tag([line.lower() for line in data.source])
    refs = german.tag(german_lines(data.reference))
    cache: dict[tuple[str, ...], list] = {}
    systems = {}
    for name, hyps in data.systems.items():
        key = tuple(hyps)
        if key not in cache:
            cache[key] = german.tag(german_lines(hyps))
        systems[name] = cache[key]
    return sources, refs, systems


def _setup_arguments(parser) -> None:
    parser.add_argument("--tagger", default="auto", choices=["auto", "spacy", "hanta"],
                        help="German tagger: auto = spaCy de_core_news_sm where installed, else HanTa")
    parser.add_argument("--source-tagger", default="auto", choices=["auto", "spacy", "words"],
                        help="English source tagger: auto = spaCy en_core_web_sm where installed, else word matching")
    parser.add_argument("--rules", default=DEFAULT_RULES, choices=sorted(RULES),
                        help=f"rule set: {DEFAULT_RULES} (the paper's fork) or capitalized-formal (stricter)")


@cli_errors
def main(argv=None) -> int:
    description = __doc__.split("\n\n")[0]
    show = argument_parser("docnmt.score.pronouns", None, add_help=False, allow_abbrev=False)
    show.add_argument("--show-taggers", action="store_true")
    _setup_arguments(show)
    shown, _ = show.parse_known_args(argv)
    if shown.show_taggers:  # what a score would use (make models ends with it); nothing is scored
        _, note = setup_note(RULES[shown.rules], load_tagger(shown.tagger), load_source_tagger(shown.source_tagger))
        print(f"pronoun F1: {note}")
        return 0
    parser = argument_parser("docnmt.score.pronouns", description)
    add_arguments(parser, "detokenized German hypotheses")
    add_subsets_argument(parser)
    _setup_arguments(parser)
    parser.add_argument("--min-examples", type=NONNEGATIVE_INT, default=100,
                        help="report a category only where every class has this many reference occurrences")
    parser.add_argument("--output", required=True, type=Path)
    parser.add_argument("--sentences", type=Path,
                        help="also write each system's counts per sentence (JSON lines: system, taggers, rules and "
                             "per sentence {category: {class: [hypothesis, reference, match]}}; the comparison "
                             "page's)")
    parser.add_argument("--show-taggers", action="store_true",
                        help="print the rule set and the taggers a score would use, and score nothing")
    args = parser.parse_args(argv)

    data = load_args(args)
    rules = RULES[args.rules]
    german, english = load_tagger(args.tagger), load_source_tagger(args.source_tagger)
    as_paper, note = setup_note(rules, german, english)
    sources, refs, systems = tag_inputs(data, german, english, rules)
    result = {
        "rules": rules.name,
        "rules_description": rules.description,
        "taggers": {"german": german.name, "english": english.name},
        "as_paper": as_paper,
        "setup": note,
        "min_examples": args.min_examples,
        "sentences": len(data.reference),
        "selected_by": str(args.select) if args.select else None,
    }
    # each sentence counted once: the scores of the whole set and of each subset, and the --sentences file
    counts = {name: [sentence_counts(source, hyp, ref, rules) for source, hyp, ref in zip(sources, tagged, refs)]
              for name, tagged in systems.items()}
    result["systems"] = {name: score_counts(counted, args.min_examples, rules) for name, counted in counts.items()}
    if data.subsets:  # each subset scored on its own: {"subsets": {name: {"sentences": n, "systems": {...}}}}
        result["subsets"] = {
            subset: {"sentences": len(data.subsets[subset]), "systems": {
                name: score_counts(data.subset(subset, counted), args.min_examples, rules)
                for name, counted in counts.items()}}
            for subset in data.subsets}
    outputs = [args.output] + ([args.sentences] if args.sentences else [])
    with atomic_outputs(outputs) as handles:
        json.dump(result, handles[0], indent=1)
        handles[0].write("\n")
        if args.sentences:
            for name, counted in counts.items():
                handles[1].write(json.dumps({"system": name, "taggers": result["taggers"], "rules": rules.name,
                                             "lines": data.lines, "counts": counted}, ensure_ascii=False) + "\n")
    print(f"pronoun F1: {note}")
    for name, scores in result["systems"].items():
        print(name + ": " + ", ".join(
            f"{c} F1 " + ("nan" if s["f1"] is None else f"{s['f1'] * 100:.1f}")
            + ("" if s["reported"] else f" (not reported: examples {s['examples']})")
            for c, s in scores.items()))
    return 0


#: Its declaration in the metric seam (docnmt.score.metric): a rule of its own.
METRIC = Metric(
    name="pronoun_f1", module=__name__, order=4, rule=False, table="pronoun_f1",
    summary="pronoun gender and formality F1 (the paper's German BlonDe fork), per class too",
    columns=lambda config: ["gender F1", "formality F1"], environment="main", unit="sentence",
    needs=("source", "reference"), higher_is_better=True,
    signature="the rule set, the target tagger and the source tagger (each score names its tagger)",
    evalsets="all")


if __name__ == "__main__":
    main()

"""Pronoun gender and formality F1 for English->German: the paper's German extension of BlonDe.

Herold & Ney (2023, section 4.1 and Table 3) extend BlonDe (Jiang et al.,
2022) to German references (fork christian3141/BlonDe). This module
re-implements the behaviour of that extension as the paper and this
project's issue describe it; the fork itself was not available to us, so
the rules below are the specification, each one tested.

Sentences are aligned: source (English), hypothesis and reference (German),
line by line. In each sentence, for each class, BlonDe counts the class's
pronoun tokens in the hypothesis (``hyp``) and in the reference (``ref``);
``match = min(hyp, ref)``. Only German tokens tagged as STTS pronouns count
(:data:`PRONOUN_TAGS`: PPER, PPOSAT, PPOSS, PRF), so that the article
*die*, or *es* in another function, is not a pronoun here.

Gender (source must contain it/its/itself):

- masculine: er, ihm, ihn
- feminine: sie, ihr, ihre, ihrer, ihres, ihrem -- skipped in a sentence
  whose source also has a 2nd-person pronoun (German *Sie*) or
  they/them/their (German *sie*, plural)
- neuter: es

German tokens are lowercased before matching (sentence-initial *Er*).

Formality (source must contain you/your/yours/yourself/yourselves):

- informal: du, dich, dir, dein, deine, deinem, deinen, deiner, deines
  (lowercased before matching)
- formal: Sie, Ihnen, Ihr, Ihre, Ihrem, Ihren, Ihrer, Ihres (capitalized
  only: lowercase *sie*/*ihr* are 3rd person) -- skipped in a sentence
  whose source also has a they, it or she form (a sentence-initial *Sie*
  could be one of them)

Scores are micro-averaged over all sentences: per class
``P = Σmatch / Σhyp``, ``R = Σmatch / Σref``, ``F1 = 2PR / (P + R)``. The
category score weights the classes as BlonDe does (gender: masculine 0.5,
feminine 0.5, neuter 0; formality: 0.5 each):
``P = Σ w·match / Σ w·hyp`` and likewise R. The extension reports only the
category score; here every class's P/R/F1 is reported as well.

The paper's rule: a test set reports a category only where every class has
at least ``min_examples`` (100) reference occurrences; otherwise the table
cell is "-" and the counts are written out.

Tagger: spaCy's ``de_core_news_sm`` where it is installed (what the paper
used), otherwise HanTa's ``morphmodel_ger.pgz`` (shipped with the pip
package, offline; STTS tags). The output names the tagger used.

CLI::

    python -m docnmt.pronouns --source test.en --reference test.de \
        --system sentence-level=sl.txt --system doc-trans=dt.txt ... \
        [--select contrapro.examples.jsonl] [--subsets test.subsets] [--tagger auto|spacy|hanta] \
        [--min-examples 100] --output pronouns.json
"""

from __future__ import annotations

import argparse
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

from .evalset import add_arguments, add_subsets_argument, load_args
from .textio import atomic_write, cli_errors

#: STTS tags of pronouns that carry gender or formality.
PRONOUN_TAGS = frozenset({"PPER", "PPOSAT", "PPOSS", "PRF"})

IT_FORMS = frozenset({"it", "its", "itself"})
YOU_FORMS = frozenset({"you", "your", "yours", "yourself", "yourselves"})
THEY_FORMS = frozenset({"they", "them", "their", "theirs", "themselves", "themself"})
SHE_FORMS = frozenset({"she", "her", "hers", "herself"})


@dataclass(frozen=True)
class PronounClass:
    forms: frozenset
    lowercase: bool  # lowercase German tokens before matching
    weight: float
    skip_if_source_has: frozenset = frozenset()


@dataclass(frozen=True)
class Category:
    requires: frozenset  # the source must contain one of these
    classes: dict = field(default_factory=dict)


CATEGORIES = {
    "gender": Category(
        requires=IT_FORMS,
        classes={
            "masculine": PronounClass(frozenset({"er", "ihm", "ihn"}), True, 0.5),
            "feminine": PronounClass(frozenset({"sie", "ihr", "ihre", "ihrer", "ihres", "ihrem"}), True, 0.5,
                                     YOU_FORMS | THEY_FORMS),
            "neuter": PronounClass(frozenset({"es"}), True, 0.0),
        },
    ),
    "formality": Category(
        requires=YOU_FORMS,
        classes={
            "informal": PronounClass(frozenset({"du", "dich", "dir", "dein", "deine", "deinem", "deinen", "deiner",
                                                "deines"}), True, 0.5),
            "formal": PronounClass(frozenset({"Sie", "Ihnen", "Ihr", "Ihre", "Ihrem", "Ihren", "Ihrer", "Ihres"}),
                                   False, 0.5, THEY_FORMS | IT_FORMS | SHE_FORMS),
        },
    ),
}

Tagged = Sequence[tuple[str, str]]


def source_words(sentence: str) -> set[str]:
    """Lowercased English words of a source sentence (``it's`` gives ``it``)."""
    return set(re.findall(r"[^\W\d_]+", sentence.lower()))


def count(tagged: Tagged, cls: PronounClass) -> int:
    """Pronoun tokens of one class in a tagged German sentence."""
    return sum(1 for token, tag in tagged
               if tag in PRONOUN_TAGS and (token.lower() if cls.lowercase else token) in cls.forms)


def sentence_counts(source: str, hyp: Tagged, ref: Tagged) -> dict:
    """``{category: {class: (hyp, ref, match)}}`` of one aligned sentence (classes that apply only)."""
    words = source_words(source)
    out = {}
    for name, category in CATEGORIES.items():
        if not words & category.requires:
            continue
        out[name] = {}
        for cls_name, cls in category.classes.items():
            if words & cls.skip_if_source_has:
                continue
            h, r = count(hyp, cls), count(ref, cls)
            out[name][cls_name] = (h, r, min(h, r))
    return out


def _prf(match: float, hyp: float, ref: float) -> dict:
    precision = match / hyp if hyp else 0.0
    recall = match / ref if ref else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1}


def score(sources: Sequence[str], hyps: Sequence[Tagged], refs: Sequence[Tagged], min_examples: int = 100) -> dict:
    """Micro-averaged P/R/F1 per category and per class, with counts and the reporting rule."""
    totals = {c: {k: [0, 0, 0] for k in cat.classes} for c, cat in CATEGORIES.items()}
    for source, hyp, ref in zip(sources, hyps, refs, strict=True):
        for category, classes in sentence_counts(source, hyp, ref).items():
            for cls_name, triple in classes.items():
                for i, value in enumerate(triple):
                    totals[category][cls_name][i] += value
    result = {}
    for category, classes in totals.items():
        weights = {k: CATEGORIES[category].classes[k].weight for k in classes}
        weighted = [sum(weights[k] * classes[k][i] for k in classes) for i in range(3)]
        entry = _prf(weighted[2], weighted[0], weighted[1])
        entry["classes"] = {k: {"hyp": h, "ref": r, "match": m, "weight": weights[k], **_prf(m, h, r)}
                            for k, (h, r, m) in classes.items()}
        entry["examples"] = {k: classes[k][1] for k in classes}
        entry["reported"] = all(classes[k][1] >= min_examples for k in classes)
        result[category] = entry
    return result


# ---- taggers -------------------------------------------------------------------
class SpacyTagger:
    """STTS tags from a spaCy German pipeline (``token.tag_``)."""

    def __init__(self, nlp, name: str):
        self.nlp = nlp
        self.name = name

    @classmethod
    def load(cls, model: str = "de_core_news_sm") -> "SpacyTagger":
        import spacy

        nlp = spacy.load(model, exclude=["parser", "ner", "lemmatizer"])
        return cls(nlp, f"spacy {model} {nlp.meta.get('version', '?')} (spaCy {spacy.__version__})")

    def tag(self, lines: Iterable[str]) -> list[list[tuple[str, str]]]:
        return [[(t.text, t.tag_) for t in doc] for doc in self.nlp.pipe(list(lines))]


class HanTaTagger:
    """STTS tags from HanTa's German model, shipped with the pip package (offline)."""

    TOKEN = re.compile(r"\w+|[^\w\s]")

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


def spacy_model_installed(model: str = "de_core_news_sm") -> bool:
    try:
        import spacy.util
    except ImportError:
        return False
    return bool(spacy.util.is_package(model))


def load_tagger(choice: str = "auto"):
    """``auto``: spaCy de_core_news_sm where installed, else HanTa."""
    if choice == "spacy" or (choice == "auto" and spacy_model_installed()):
        return SpacyTagger.load()
    if choice in ("hanta", "auto"):
        return HanTaTagger()
    raise ValueError(f"unknown tagger {choice!r}: expected auto, spacy or hanta")


@cli_errors
def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m docnmt.pronouns", description=__doc__.split("\n\n")[0])
    add_arguments(parser, "detokenized German hypotheses")
    add_subsets_argument(parser)
    parser.add_argument("--tagger", default="auto", choices=["auto", "spacy", "hanta"])
    parser.add_argument("--min-examples", type=int, default=100,
                        help="report a category only where every class has this many reference occurrences")
    parser.add_argument("--output", required=True, type=Path)
    args = parser.parse_args(argv)

    data = load_args(args)
    tagger = load_tagger(args.tagger)
    refs = tagger.tag(data.reference)
    result = {
        "tagger": tagger.name,
        "min_examples": args.min_examples,
        "sentences": len(data.reference),
        "selected_by": str(args.select) if args.select else None,
        "systems": {},
    }
    tagged_cache: dict[tuple[str, ...], list] = {}
    for name, hyps in data.systems.items():
        key = tuple(hyps)
        if key not in tagged_cache:
            tagged_cache[key] = tagger.tag(hyps)
        result["systems"][name] = score(data.source, tagged_cache[key], refs, args.min_examples)
    if data.subsets:  # each subset scored on its own: {"subsets": {name: {"sentences": n, "systems": {...}}}}
        result["subsets"] = {
            subset: {"sentences": len(data.subsets[subset]), "systems": {
                name: score(data.subset(subset, data.source), data.subset(subset, tagged_cache[tuple(hyps)]),
                            data.subset(subset, refs), args.min_examples)
                for name, hyps in data.systems.items()}}
            for subset in data.subsets}
    with atomic_write(args.output) as handle:
        json.dump(result, handle, indent=1)
        handle.write("\n")
    print(f"tagger: {tagger.name}")
    for name, scores in result["systems"].items():
        print(name + ": " + ", ".join(
            f"{c} F1 {s['f1'] * 100:.1f}" + ("" if s["reported"] else f" (not reported: examples {s['examples']})")
            for c, s in scores.items()))
    return 0


if __name__ == "__main__":
    main()

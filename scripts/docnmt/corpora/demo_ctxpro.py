"""The demo's test documents as a ctxpro set (:mod:`docnmt.corpora.ctxpro`), written by its generator
(:mod:`docnmt.corpora.demo`) beside its corpus: ``ctxpro.demo.test.json`` (ctxpro's fields, German forms and rules)
and ``ctxpro.demo.test`` (its inputs: per example, its document up to its sentence, joined by ``<eos> ``)."""

from __future__ import annotations

import string
from typing import Sequence

from .demo_templates import Document


#: The demo's ctxpro set (docnmt.corpora.ctxpro): its name, and its files in the corpus folder.
CTXPRO_NAME = "en-de/demo/test"
CTXPRO_JSON = "ctxpro.demo.test.json"
CTXPRO_INPUTS = "ctxpro.demo.test"
#: ctxpro's German rules: the case of the German pronoun, and its gender or register (data/rules/de/ of ctxpro).
CTXPRO_GENDER = {"m": "MASC", "f": "FEM", "n": "NEUT"}
#: The informal addressee forms by ctxpro's case (dein-: a possessive, which ctxpro's rules do not have).
INFORMAL_CASE = {"du": "NOM", "dich": "ACC", "dir": "DAT"}


def _you_form(template, register: str) -> tuple[str, str]:
    """(ctxpro's rule, the expected German form) of a "you" sentence: the informal version's first addressee
    word gives the case (du NOM, dich ACC, dir DAT, dein- POSS), the register the form (formal: Sie for NOM and
    ACC, Ihnen for DAT, the formal version's first Ihr- word for POSS)."""
    words = [w.strip(string.punctuation) for w in template.informal.split()]
    first = next(w for w in words if w.lower() in INFORMAL_CASE or w.lower().startswith("dein"))
    case = INFORMAL_CASE.get(first.lower(), "POSS")
    if register == "informal":
        return f"{case}.INFORM.SING", first.lower()
    if case == "POSS":
        formal = next(w.strip(string.punctuation) for w in template.formal.split() if w.startswith("Ihr"))
    else:
        formal = {"NOM": "Sie", "ACC": "Sie", "DAT": "Ihnen"}[case]
    return f"{case}.FORM+PLUR", formal.lower()


def build_ctxpro(test_docs: Sequence[Document]) -> tuple[list[dict], list[str]]:
    """The demo's test documents as a ctxpro set: its examples (ctxpro's fields) and its inputs (per example, its
    preceding sentences and its own, joined by ``<eos> ``).

    Two phenomena, with ctxpro's German rules: gender, one example per nominative, accusative and dative ``it``
    (``NOM.FEM.SING`` -> ``sie``; possessives are not among ctxpro's rules), and formality, one per "you"
    sentence (``NOM.INFORM.SING`` -> ``du``, ``DAT.FORM+PLUR`` -> ``ihnen``; the demo's possessive ``your`` as
    ``POSS.INFORM.SING`` -> ``deine`` ...). The context of a pronoun decides its gender, the document's cue (or
    an earlier "you" sentence) its register."""
    examples, inputs = [], []
    for doc in test_docs:
        for index, sentence in enumerate(doc.sentences):
            use = sentence.pronoun
            if use is not None and use.case in ("nom", "acc", "dat"):
                rule = f"{use.case.upper()}.{CTXPRO_GENDER[use.noun.gender]}.SING"
                expected, phenomenon = use.ref_pronoun.lower(), "gender"
                extra = {"src pronoun": use.src_pronoun, "ante distance": use.ante_distance,
                         "ref ante phrase": use.ref_ante_phrase}
            elif sentence.you is not None and doc.register is not None:
                rule, expected = _you_form(sentence.you, doc.register)
                phenomenon, extra = "formality", {"register": doc.register}
            else:
                continue
            examples.append({"src segment": sentence.en, "ref segment": sentence.de, "expected": expected,
                             "rule": rule, "phenomenon": phenomenon, "document id": doc.docid,
                             "segment id": index, **extra})
            inputs.append("<eos> ".join(s.en for s in doc.sentences[:index + 1]))
    return examples, inputs

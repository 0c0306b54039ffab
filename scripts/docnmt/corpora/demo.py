"""The synthetic, context-dependent English->German demo task.

The demo trains tiny transformers on two CPU cores in minutes, so its data
must be small *and* must contain phenomena that a sentence-level model cannot
translate correctly while a document-level model can. This module generates
seeded, deterministic documents of natural-looking raw (detokenized) text in
the common document format (see :mod:`docnmt.corpus`), built from a small
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

    python -m docnmt.demo --outdir DIR [--seed 1234] [--train-docs 1200]
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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

from .textio import atomic_outputs

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

GENDERS = ("m", "f", "n")
#: Gender names as used in ContraPro's ``ref ante head gender`` / ``replacement gender``.
GENDER_NAMES = {"m": "Masc", "f": "Fem", "n": "Neut"}
REGISTERS = ("informal", "formal")


# --------------------------------------------------------------------------
# Vocabulary
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Noun:
    """A concrete noun as one document uses it: English singular, German singular and German gender.

    ``ambiguous``: the English noun has a second common German translation of
    another gender (:data:`AMBIGUOUS_NOUNS`); this is the one the reference chose.
    """

    en: str
    de: str
    gender: str  # "m", "f" or "n"
    ambiguous: bool = False


#: The unambiguous antecedent inventory: one German translation each (15
#: masculine, 12 feminine, 14 neuter), none of which changes form in the
#: nominative, accusative or dative singular.
NOUNS: tuple[Noun, ...] = tuple(
    Noun(en, de, g)
    for g, pairs in (
        ("m", [
            ("table", "Tisch"), ("chair", "Stuhl"), ("cupboard", "Schrank"),
            ("computer", "Computer"), ("suitcase", "Koffer"), ("key", "Schlüssel"),
            ("carpet", "Teppich"), ("coat", "Mantel"), ("hat", "Hut"),
            ("backpack", "Rucksack"), ("fridge", "Kühlschrank"), ("mirror", "Spiegel"),
            ("umbrella", "Regenschirm"), ("printer", "Drucker"), ("sweater", "Pullover"),
        ]),
        ("f", [
            ("lamp", "Lampe"), ("watch", "Uhr"),
            ("jacket", "Jacke"), ("vase", "Vase"),
            ("bottle", "Flasche"), ("blanket", "Decke"),
            ("candle", "Kerze"), ("guitar", "Gitarre"), ("plant", "Pflanze"),
            ("bowl", "Schüssel"), ("pan", "Pfanne"), ("keyboard", "Tastatur"),
        ]),
        ("n", [
            ("book", "Buch"), ("bicycle", "Fahrrad"), ("phone", "Handy"),
            ("bed", "Bett"), ("picture", "Bild"),
            ("radio", "Radio"), ("knife", "Messer"), ("glass", "Glas"),
            ("pillow", "Kissen"), ("shirt", "Hemd"), ("dress", "Kleid"),
            ("towel", "Handtuch"), ("shelf", "Regal"), ("notebook", "Heft"),
        ]),
    )
    for en, de in pairs
)

#: Ambiguous antecedents: English nouns with two common German translations of
#: different gender (five per pair of genders), e.g. *car*: *der Wagen* / *das
#: Auto*. A document's reference picks one of the two at random (a fair coin
#: per chain); nothing in the source tells which, so a later *it* -> er/sie/es
#: can follow the reference only by seeing the reference's earlier sentence.
AMBIGUOUS_NOUNS: tuple[tuple[Noun, Noun], ...] = tuple(
    (Noun(en, de1, g1, True), Noun(en, de2, g2, True))
    for (g1, g2), triples in (
        (("m", "f"), [
            ("bag", "Beutel", "Tasche"), ("cup", "Becher", "Tasse"), ("camera", "Fotoapparat", "Kamera"),
            ("tie", "Schlips", "Krawatte"), ("box", "Karton", "Kiste"),
        ]),
        (("m", "n"), [
            ("car", "Wagen", "Auto"), ("television", "Fernseher", "Fernsehgerät"), ("laptop", "Laptop", "Notebook"),
            ("bracelet", "Armreif", "Armband"), ("scarf", "Schal", "Halstuch"),
        ]),
        (("f", "n"), [
            ("sofa", "Couch", "Sofa"), ("magazine", "Zeitschrift", "Magazin"), ("ticket", "Karte", "Ticket"),
            ("rope", "Leine", "Seil"), ("lantern", "Laterne", "Windlicht"),
        ]),
    )
    for en, de1, de2 in triples
)

#: Every German translation an antecedent can have (each ambiguous noun twice).
ALL_TRANSLATIONS: tuple[Noun, ...] = NOUNS + tuple(t for pair in AMBIGUOUS_NOUNS for t in pair)

#: The subset marker of a pronoun sentence whose antecedent is ambiguous (see ``{split}.subsets``).
AMBIGUOUS_SUBSET = "ambiguous-antecedent"

# German articles and pronouns by case and gender.
DEFINITE = {
    "nom": {"m": "der", "f": "die", "n": "das"},
    "acc": {"m": "den", "f": "die", "n": "das"},
    "dat": {"m": "dem", "f": "der", "n": "dem"},
}
INDEFINITE = {
    "nom": {"m": "ein", "f": "eine", "n": "ein"},
    "acc": {"m": "einen", "f": "eine", "n": "ein"},
    "dat": {"m": "einem", "f": "einer", "n": "einem"},
}
#: Adjective endings after ein-words (ein, mein, sein, ihr): mixed declension.
MIXED_ADJ = {
    "nom": {"m": "er", "f": "e", "n": "es"},
    "acc": {"m": "en", "f": "e", "n": "es"},
    "dat": {"m": "en", "f": "en", "n": "en"},
}
#: Adjective endings after the definite article: weak declension.
WEAK_ADJ = {
    "nom": {"m": "e", "f": "e", "n": "e"},
    "acc": {"m": "en", "f": "e", "n": "e"},
    "dat": {"m": "en", "f": "en", "n": "en"},
}
#: Personal pronouns referring to a noun of each gender (3rd person singular).
PERSONAL = {
    "nom": {"m": "er", "f": "sie", "n": "es"},
    "acc": {"m": "ihn", "f": "sie", "n": "es"},
    "dat": {"m": "ihm", "f": "ihr", "n": "ihm"},
}
#: Possessive stem by the possessor's gender ("its" -> sein-/ihr-).
POSSESSIVE_STEM = {"m": "sein", "f": "ihr", "n": "sein"}


def _ein_ending(case: str, gender: str) -> str:
    """The ending of an ein-word (ein, mein, sein, ihr): '', 'e', 'en', 'em' or 'er'."""
    return INDEFINITE[case][gender][3:]


#: Attributive adjectives for introductions: (English, German stem).
ATTRIBUTIVE = (
    ("new", "neu"), ("old", "alt"), ("small", "klein"), ("big", "groß"),
    ("beautiful", "schön"), ("cheap", "billig"), ("red", "rot"), ("blue", "blau"),
    ("black", "schwarz"), ("white", "weiß"), ("green", "grün"), ("modern", "modern"),
)
#: Predicative adjectives (uninflected in German) after "very".
PREDICATIVE = (
    ("expensive", "teuer"), ("cheap", "billig"), ("heavy", "schwer"), ("light", "leicht"),
    ("practical", "praktisch"), ("beautiful", "schön"), ("old", "alt"),
    ("useful", "nützlich"), ("dirty", "schmutzig"), ("small", "klein"), ("big", "groß"),
    ("ugly", "hässlich"), ("modern", "modern"),
)
#: Predicative adjectives after "too".
EXCESSIVE = (
    ("expensive", "teuer"), ("heavy", "schwer"), ("old", "alt"), ("dirty", "schmutzig"),
    ("small", "klein"), ("big", "groß"), ("modern", "modern"),
)
#: Adjective pairs for "X but Y" (a drawback and an advantage, or vice versa).
CONTRASTS = (
    (("old", "alt"), ("useful", "nützlich")), (("cheap", "billig"), ("practical", "praktisch")),
    (("small", "klein"), ("practical", "praktisch")), (("heavy", "schwer"), ("beautiful", "schön")),
    (("expensive", "teuer"), ("beautiful", "schön")), (("old", "alt"), ("beautiful", "schön")),
    (("ugly", "hässlich"), ("useful", "nützlich")), (("light", "leicht"), ("expensive", "teuer")),
    (("big", "groß"), ("cheap", "billig")), (("modern", "modern"), ("expensive", "teuer")),
)
COLORS = (("red", "rot"), ("blue", "blau"), ("black", "schwarz"), ("white", "weiß"),
          ("green", "grün"), ("gray", "grau"))
PRICES = ("10", "15", "20", "25", "30", "40", "50", "80", "100", "120")
HOURS = (("six", "sechs"), ("seven", "sieben"), ("eight", "acht"), ("nine", "neun"),
         ("ten", "zehn"), ("eleven", "elf"))
DAYS = (("Monday", "Montag"), ("Tuesday", "Dienstag"), ("Wednesday", "Mittwoch"),
        ("Thursday", "Donnerstag"), ("Friday", "Freitag"), ("Saturday", "Samstag"),
        ("Sunday", "Sonntag"))
CITIES = (("Berlin", "Berlin"), ("Hamburg", "Hamburg"), ("Munich", "München"),
          ("Vienna", "Wien"), ("Cologne", "Köln"), ("Zurich", "Zürich"), ("Frankfurt", "Frankfurt"))
#: First names (used in informal cues and anywhere else) with their gender.
FIRST_NAMES = (("Tom", "m"), ("Peter", "m"), ("Paul", "m"), ("Max", "m"), ("Jonas", "m"),
               ("Felix", "m"), ("Anna", "f"), ("Maria", "f"), ("Lisa", "f"), ("Julia", "f"),
               ("Sarah", "f"), ("Laura", "f"))
#: Surnames (used only in formal cues, with a title).
SURNAMES = ("Weber", "Schmidt", "Becker", "Fischer", "Wagner", "Hoffmann", "Schulz",
            "Keller", "Richter", "Neumann")
#: English title -> (German title, gender).
TITLES = (("Mr.", "Herr", "m"), ("Mrs.", "Frau", "f"), ("Ms.", "Frau", "f"))


# --------------------------------------------------------------------------
# Templates
# --------------------------------------------------------------------------
# Slots: {np} the introduced noun phrase; {P} (German only) the pronoun;
# {name}/{name2} first names, {his} his/her of {name} with German {sein}
# (sein/ihr stem); {adj} after "very", {too} after "too", {but1}/{but2} a
# contrasting pair of predicative adjectives; {price}, {color},
# {time}, {day}, {city}; in cues {F} a first name with {dear} Lieber/Liebe,
# {T} a title + surname with {dear} Sehr geehrter/Sehr geehrte.


@dataclass(frozen=True)
class IntroTemplate:
    """A sentence introducing the antecedent noun phrase ``{np}``."""

    en: str
    de: str
    det: str  # "indef", "def", "his", "her" (fixed possessor) or "name" (possessor {name})
    case: str  # German case of {np}


@dataclass(frozen=True)
class PronounTemplate:
    """A sentence referring to the antecedent only by ``it``/``its`` (German ``{P}``)."""

    en: str
    de: str
    case: str  # "nom", "acc", "dat" or "poss"
    gap_safe: bool  # offers no other singular antecedent (may precede a 2nd pronoun)
    possessed: tuple[str, str] | None = None  # for "poss": (case, gender) of the possessed noun


@dataclass(frozen=True)
class YouTemplate:
    """A sentence with English ``you``; German informal and formal versions; no cue."""

    en: str
    informal: str
    formal: str
    gap_safe: bool


@dataclass(frozen=True)
class Distractor:
    """A sentence without ``it``, ``you`` or an inventory noun."""

    en: str
    de: str
    gap_safe: bool


@dataclass(frozen=True)
class CueTemplate:
    """A greeting that sets the document's register."""

    en: str
    de: str
    register: str
    weight: float = 1.0


INTRO_TEMPLATES: tuple[IntroTemplate, ...] = (
    IntroTemplate("I bought {np} yesterday.", "Ich habe gestern {np} gekauft.", "indef", "acc"),
    IntroTemplate("My sister gave me {np} for my birthday.",
                  "Meine Schwester hat mir {np} zum Geburtstag geschenkt.", "indef", "acc"),
    IntroTemplate("We have {np} in the kitchen.", "Wir haben {np} in der Küche.", "indef", "acc"),
    IntroTemplate("{name} found {np} in the attic.", "{name} hat {np} auf dem Dachboden gefunden.", "indef", "acc"),
    IntroTemplate("{np} in the hall belongs to my brother.", "{np} im Flur gehört meinem Bruder.", "def", "nom"),
    IntroTemplate("Yesterday I saw {np} in a shop.", "Gestern habe ich in einem Laden {np} gesehen.", "indef", "acc"),
    IntroTemplate("My neighbor is selling {np}.", "Mein Nachbar verkauft {np}.", "his", "acc"),
    IntroTemplate("{name} forgot {np} at the station.", "{name} hat {np} am Bahnhof vergessen.", "name", "acc"),
    IntroTemplate("We ordered {np} online.", "Wir haben online {np} bestellt.", "indef", "acc"),
    IntroTemplate("I am looking for {np} for my room.", "Ich suche {np} für mein Zimmer.", "indef", "acc"),
    IntroTemplate("{name} showed me {np}.", "{name} hat mir {np} gezeigt.", "name", "acc"),
    IntroTemplate("{np} arrived this morning.", "{np} ist heute Morgen angekommen.", "def", "nom"),
    IntroTemplate("My mother is very happy with {np}.", "Meine Mutter ist sehr zufrieden mit {np}.", "her", "dat"),
    IntroTemplate("I got {np} from my grandmother.", "Ich habe {np} von meiner Großmutter bekommen.", "indef", "acc"),
    IntroTemplate("My father repaired {np} today.", "Mein Vater hat heute {np} repariert.", "def", "acc"),
    IntroTemplate("We talked about {np} for a long time.", "Wir haben lange über {np} gesprochen.", "def", "acc"),
)

PRONOUN_TEMPLATES: tuple[PronounTemplate, ...] = (
    # nominative: er / sie / es
    PronounTemplate("It was very {adj}.", "{P} war sehr {adj}.", "nom", True),
    PronounTemplate("It is {but1} but {but2}.", "{P} ist {but1}, aber {but2}.", "nom", True),
    PronounTemplate("Unfortunately, it is already broken.", "Leider ist {P} schon kaputt.", "nom", True),
    PronounTemplate("It fits perfectly in our living room.", "{P} passt perfekt in unser Wohnzimmer.", "nom", False),
    PronounTemplate("I think it is too {too}.", "Ich glaube, {P} ist zu {too}.", "nom", True),
    PronounTemplate("It cost {price} euros.", "{P} hat {price} Euro gekostet.", "nom", True),
    PronounTemplate("Now it is in the living room.", "Jetzt ist {P} im Wohnzimmer.", "nom", False),
    PronounTemplate("Maybe it was a gift from {name}.", "Vielleicht war {P} ein Geschenk von {name}.", "nom", False),
    # accusative: ihn / sie / es
    PronounTemplate("I really like it.", "Ich mag {P} wirklich.", "acc", True),
    PronounTemplate("{name} wants to borrow it tomorrow.", "{name} möchte {P} morgen ausleihen.", "acc", True),
    PronounTemplate("We will bring it back next week.", "Wir bringen {P} nächste Woche zurück.", "acc", True),
    PronounTemplate("{name} cleaned it carefully.", "{name} hat {P} sorgfältig geputzt.", "acc", True),
    PronounTemplate("Can we repair it?", "Können wir {P} reparieren?", "acc", True),
    PronounTemplate("I have to sell it again.", "Ich muss {P} wieder verkaufen.", "acc", True),
    PronounTemplate("I cannot live without it anymore.", "Ich kann nicht mehr ohne {P} leben.", "acc", True),
    PronounTemplate("I bought it for {price} euros.", "Ich habe {P} für {price} Euro gekauft.", "acc", True),
    PronounTemplate("{name} found it very {adj}.", "{name} fand {P} sehr {adj}.", "acc", True),
    # dative: ihm / ihr / ihm
    PronounTemplate("Water does not harm it.", "Wasser schadet {P} nicht.", "dat", True),
    PronounTemplate("Something is missing from it.", "{P} fehlt etwas.", "dat", True),
    PronounTemplate("We gave it a new place by the door.",
                    "Wir haben {P} einen neuen Platz neben der Tür gegeben.", "dat", False),
    # possessive its: sein- / ihr- + ending of the possessed noun
    PronounTemplate("Its color is {color}.", "{P} Farbe ist {color}.", "poss", False, ("nom", "f")),
    PronounTemplate("Its price was too high.", "{P} Preis war zu hoch.", "poss", False, ("nom", "m")),
    PronounTemplate("I do not like its shape.", "Ich mag {P} Form nicht.", "poss", False, ("acc", "f")),
)
#: Relative frequency of the pronoun cases (dative and possessive sparingly).
CASE_WEIGHTS = {"nom": 0.45, "acc": 0.4, "dat": 0.08, "poss": 0.07}

YOU_TEMPLATES: tuple[YouTemplate, ...] = (
    YouTemplate("Do you need help?", "Brauchst du Hilfe?", "Brauchen Sie Hilfe?", True),
    YouTemplate("Can you call me tomorrow?", "Kannst du mich morgen anrufen?", "Können Sie mich morgen anrufen?", True),
    YouTemplate("I will send you the documents tonight.", "Ich schicke dir heute Abend die Unterlagen.",
                "Ich schicke Ihnen heute Abend die Unterlagen.", True),
    YouTemplate("Many thanks for your help.", "Vielen Dank für deine Hilfe.", "Vielen Dank für Ihre Hilfe.", True),
    YouTemplate("Where do you live now?", "Wo wohnst du jetzt?", "Wo wohnen Sie jetzt?", True),
    YouTemplate("Did you get my message?", "Hast du meine Nachricht bekommen?",
                "Haben Sie meine Nachricht bekommen?", False),
    YouTemplate("I saw your brother in {city}.", "Ich habe deinen Bruder in {city} gesehen.",
                "Ich habe Ihren Bruder in {city} gesehen.", False),
    YouTemplate("Your train leaves at {time}.", "Dein Zug fährt um {time} ab.", "Ihr Zug fährt um {time} ab.", False),
    YouTemplate("Are you coming to the meeting on {day}?", "Kommst du am {day} zum Treffen?",
                "Kommen Sie am {day} zum Treffen?", False),
    YouTemplate("I am happy to see you.", "Ich freue mich, dich zu sehen.", "Ich freue mich, Sie zu sehen.", True),
    YouTemplate("Please give my regards to your family.", "Bitte grüß deine Familie von mir.",
                "Bitte grüßen Sie Ihre Familie von mir.", False),
    YouTemplate("What do you think?", "Was denkst du?", "Was denken Sie?", True),
    YouTemplate("I can help you with the move.", "Ich kann dir beim Umzug helfen.",
                "Ich kann Ihnen beim Umzug helfen.", False),
    YouTemplate("Have you already eaten?", "Hast du schon gegessen?", "Haben Sie schon gegessen?", True),
    YouTemplate("Please wait for me in your office.", "Bitte warte in deinem Büro auf mich.",
                "Bitte warten Sie in Ihrem Büro auf mich.", False),
    YouTemplate("You look tired today.", "Du siehst heute müde aus.", "Sie sehen heute müde aus.", True),
    YouTemplate("I will visit you next week.", "Ich besuche dich nächste Woche.",
                "Ich besuche Sie nächste Woche.", True),
    YouTemplate("Is your daughter still in {city}?", "Ist deine Tochter noch in {city}?",
                "Ist Ihre Tochter noch in {city}?", False),
    YouTemplate("Can I ask you something?", "Kann ich dich etwas fragen?", "Kann ich Sie etwas fragen?", True),
    YouTemplate("Your idea is very good.", "Deine Idee ist sehr gut.", "Ihre Idee ist sehr gut.", False),
)

DISTRACTORS: tuple[Distractor, ...] = (
    Distractor("The weather was nice yesterday.", "Das Wetter war gestern schön.", False),
    Distractor("The sun was shining all day.", "Die Sonne hat den ganzen Tag geschienen.", False),
    Distractor("{name} is visiting {his} parents this weekend.",
               "{name} besucht an diesem Wochenende {sein}e Eltern.", True),
    Distractor("We met at {time} in the café.", "Wir haben uns um {time} im Café getroffen.", False),
    Distractor("My brother works in {city}.", "Mein Bruder arbeitet in {city}.", False),
    Distractor("The train was late again.", "Der Zug hatte wieder Verspätung.", False),
    Distractor("{name} and {name2} went to the cinema.", "{name} und {name2} sind ins Kino gegangen.", False),
    Distractor("The days are getting shorter.", "Die Tage werden kürzer.", True),
    Distractor("I was at home all evening.", "Ich war den ganzen Abend zu Hause.", False),
    Distractor("The shop closes at {time}.", "Der Laden schließt um {time}.", False),
    Distractor("My parents live in {city}.", "Meine Eltern wohnen in {city}.", False),
    Distractor("{name} has a new job.", "{name} hat eine neue Stelle.", False),
    Distractor("We are going to the sea in summer.", "Im Sommer fahren wir ans Meer.", False),
    Distractor("The children are playing in the garden.", "Die Kinder spielen im Garten.", False),
    Distractor("{name} called me on {day}.", "{name} hat mich am {day} angerufen.", True),
    Distractor("Last winter we had a lot of snow.", "Letzten Winter hatten wir viel Schnee.", False),
    Distractor("The bus was full this morning.", "Der Bus war heute Morgen voll.", False),
    Distractor("I slept badly last night.", "Ich habe letzte Nacht schlecht geschlafen.", True),
    Distractor("{name} is cooking dinner tonight.", "{name} kocht heute Abend das Abendessen.", False),
    Distractor("The meeting starts at {time}.", "Das Treffen beginnt um {time}.", False),
    Distractor("My parents were very happy.", "Meine Eltern waren sehr glücklich.", True),
    Distractor("{name} and {name2} laughed a lot.", "{name} und {name2} haben viel gelacht.", True),
    Distractor("My brother was surprised.", "Mein Bruder war überrascht.", True),
)

CUE_TEMPLATES: tuple[CueTemplate, ...] = (
    # informal: a first name
    CueTemplate("Hi {F}!", "Hallo {F}!", "informal"),
    CueTemplate("Hello {F}!", "Hallo {F}!", "informal"),
    CueTemplate("Dear {F}, many thanks for the letter.", "{dear} {F}, vielen Dank für den Brief.", "informal"),
    CueTemplate("Hey {F}, long time no see!", "Hey {F}, lange nicht gesehen!", "informal"),
    CueTemplate("Good morning, {F}!", "Guten Morgen, {F}!", "informal"),
    CueTemplate("Thanks for the photos, {F}!", "Danke für die Fotos, {F}!", "informal"),
    CueTemplate("Hi {F}, how are you?", "Hallo {F}, wie geht es dir?", "informal", 0.3),
    # formal: a title and a surname
    CueTemplate("Good morning, {T}.", "Guten Morgen, {T}.", "formal"),
    CueTemplate("Hello {T}!", "Hallo {T}!", "formal"),
    CueTemplate("Dear {T}, many thanks for the letter.", "{dear} {T}, vielen Dank für den Brief.", "formal"),
    CueTemplate("Good afternoon, {T}.", "Guten Tag, {T}.", "formal"),
    CueTemplate("Hello {T}, welcome to our office.", "Hallo {T}, willkommen in unserem Büro.", "formal"),
    CueTemplate("Excuse me, {T}.", "Entschuldigung, {T}.", "formal"),
    CueTemplate("Good morning, {T}, how are you?", "Guten Morgen, {T}, wie geht es Ihnen?", "formal", 0.3),
)


# --------------------------------------------------------------------------
# Documents
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class PronounUse:
    """The anaphoric ``it``/``its`` of a pronoun sentence and its antecedent."""

    case: str  # "nom", "acc", "dat" or "poss"
    noun: Noun
    ante_distance: int  # sentences back to the introduction (1 or 2)
    src_pronoun: str  # "it" or "its"
    de_forms: tuple[tuple[str, str], ...]  # (gender, form as it would appear in the sentence)
    de_prefix: str  # German sentence before the pronoun
    de_suffix: str  # German sentence after the pronoun
    src_ante_phrase: str
    ref_ante_phrase: str

    @property
    def ref_pronoun(self) -> str:
        """The German pronoun as it appears in the sentence."""
        return dict(self.de_forms)[self.noun.gender]

    def variant(self, gender: str) -> str:
        """The German sentence with the pronoun of ``gender``."""
        return self.de_prefix + dict(self.de_forms)[gender] + self.de_suffix


@dataclass(frozen=True)
class Sentence:
    """One aligned sentence pair and what the generator put into it."""

    en: str
    de: str
    kind: str  # "cue", "you", "intro", "pronoun" or "distractor"
    pronoun: PronounUse | None = None

    @property
    def subsets(self) -> tuple[str, ...]:
        """The evaluation subsets the sentence belongs to (written to ``{split}.subsets``)."""
        return (AMBIGUOUS_SUBSET,) if self.pronoun is not None and self.pronoun.noun.ambiguous else ()


@dataclass
class Document:
    """A generated document; ``src``/``tgt``/``docid`` as in :class:`docnmt.corpus.Document`."""

    docid: str
    register: str | None  # "informal", "formal", or None (no "you" in the document)
    sentences: list[Sentence] = field(default_factory=list)

    @property
    def src(self) -> list[str]:
        return [s.en for s in self.sentences]

    @property
    def tgt(self) -> list[str]:
        return [s.de for s in self.sentences]

    def __len__(self) -> int:
        return len(self.sentences)


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
        art_de = POSSESSIVE_STEM[possessor] + _ein_ending(case, g)
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
        forms = {g: POSSESSIVE_STEM[g] + _ein_ending(p_case, p_gender) for g in GENDERS}
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
    return Sentence(en, de, "you")


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
                 contrapro: Sequence[dict] | None = None, subset_splits: Sequence[str] = ("test",)) -> dict[str, Path]:
    """Write ``{split}.en``, ``{split}.de``, ``{split}.docids`` for every split
    (and ``contrapro.json`` when ``contrapro`` is given) into ``outdir``, and
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
    _write_all_atomically(files)
    return {path.name: path for path in files}


# --------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m docnmt.demo",
        description="Generate the synthetic En-De demo corpus (pronoun gender and du/Sie depend on context).",
    )
    parser.add_argument("--outdir", required=True, type=Path, help="output folder")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="random seed (default: %(default)s)")
    for split in SPLITS:
        parser.add_argument(f"--{split}-docs", type=int, default=DEFAULT_DOCS[split],
                            help=f"{split} documents (default: %(default)s)")
    parser.add_argument("--min-sents", type=int, default=DEFAULT_MIN_SENTS,
                        help="fewest sentences per document (default: %(default)s)")
    parser.add_argument("--max-sents", type=int, default=DEFAULT_MAX_SENTS,
                        help="most sentences per document (default: %(default)s)")
    parser.add_argument("--contrapro-examples", type=int, default=None,
                        help="keep at most N contrastive examples (default: all from the test documents)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Command line entry point; bad arguments exit with status 2 and a message."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.min_sents < 1:
        parser.error(f"--min-sents must be at least 1, got {args.min_sents}")
    if args.max_sents < args.min_sents:
        parser.error(f"--max-sents ({args.max_sents}) must be at least --min-sents ({args.min_sents})")
    for split in SPLITS:
        n = getattr(args, f"{split}_docs")
        if n < 1:
            parser.error(f"--{split}-docs must be at least 1, got {n}")
    if args.contrapro_examples is not None and args.contrapro_examples < 1:
        parser.error(f"--contrapro-examples must be at least 1, got {args.contrapro_examples}")

    start = time.perf_counter()
    sizes = {split: getattr(args, f"{split}_docs") for split in SPLITS}
    docs = generate(args.seed, sizes, args.min_sents, args.max_sents)
    contrapro = build_contrapro(docs["test"], args.contrapro_examples, args.seed)
    write_corpus(args.outdir, docs, contrapro)
    seconds = time.perf_counter() - start
    for split in SPLITS:
        n_sents = sum(len(d) for d in docs[split])
        print(f"{args.outdir}/{split}: {n_sents} sentences in {len(docs[split])} documents")
    print(f"{args.outdir}/contrapro.json: {len(contrapro)} examples")
    marked = sum(bool(s.subsets) for d in docs["test"] for s in d.sentences)
    print(f"{args.outdir}/test.subsets: {marked} sentences in {AMBIGUOUS_SUBSET}")
    print(f"generated in {seconds:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

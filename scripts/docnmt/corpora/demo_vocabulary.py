"""The demo task's vocabulary: nouns with their German genders, German articles, adjectives, names.

What :mod:`docnmt.corpora.demo` fills its templates (:mod:`docnmt.corpora.demo_templates`) with.
"""

from __future__ import annotations

from dataclasses import dataclass

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


def ein_ending(case: str, gender: str) -> str:
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

"""The demo task's sentence templates (noun introductions, pronoun sentences, "you" sentences,
distractors, cues) and the sentences and documents made from them.

Their slots are filled by :mod:`docnmt.corpora.demo` from :mod:`docnmt.corpora.demo_vocabulary`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .demo_vocabulary import AMBIGUOUS_SUBSET, Noun

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
# Generated sentences and documents
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
    #: a "you" sentence's template: its informal and formal German (the register's form, ctxpro's rule)
    you: "YouTemplate | None" = None

    @property
    def subsets(self) -> tuple[str, ...]:
        """The evaluation subsets the sentence belongs to (written to ``{split}.subsets``)."""
        return (AMBIGUOUS_SUBSET,) if self.pronoun is not None and self.pronoun.noun.ambiguous else ()


@dataclass
class Document:
    """A generated document; ``src``/``tgt``/``docid`` as in :class:`docnmt.corpora.corpus.Document`."""

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

"""The demo LLM's refinement drafts (docnmt.corpora.demo_drafts) against what the demo's generator put into each
sentence: a pronoun sentence's draft is its own sentence with another gender's pronoun, a "you" sentence's is its
template in the other register, and every other sentence has none."""

import random
import re

from docnmt.corpora.demo import generate
from docnmt.corpora.demo_drafts import FORMS, template_pattern, draft, wrong


def sentences():
    docs = generate(seed=7, n_docs_per_split={"train": 60})["train"]
    return [s for doc in docs for s in doc.sentences]


def test_each_pronoun_gets_another_gender_and_each_you_the_other_register():
    rng = random.Random(1)
    seen = {"pronoun": 0, "you": 0}
    for sentence in sentences():
        found = wrong(sentence.de, rng)
        if sentence.kind == "pronoun" and sentence.pronoun.case in FORMS:
            use = sentence.pronoun
            others = {use.variant(g) for g in FORMS[use.case] if FORMS[use.case][g] != FORMS[use.case][use.noun.gender]}
            assert found in others, (sentence.de, found)
            seen["pronoun"] += 1
        elif sentence.kind == "you":
            template = sentence.you
            mine, other = ((template.informal, template.formal) if template_pattern(template.informal).match(sentence.de)
                           else (template.formal, template.informal))
            # the other register's template, with the same slot values
            match = template_pattern(mine).match(sentence.de)
            assert found == re.sub(r"\{(\w+)\}", lambda m: match.group(m.group(1)), other), (sentence.de, found)
            seen["you"] += 1
        elif sentence.kind in ("intro", "distractor", "cue"):
            assert found is None, (sentence.kind, sentence.de, found)
    assert seen["pronoun"] > 50 and seen["you"] > 20


def test_a_draft_has_an_error_in_about_its_share_of_the_sentences_that_can_have_one():
    rng = random.Random(3)
    all_sentences = [s.de for s in sentences()]
    drafted = draft(all_sentences, rng, share=0.5)
    can = [wrong(s, random.Random(0)) is not None for s in all_sentences]
    changed = [d != s for d, s in zip(drafted, all_sentences)]
    assert not any(c and not ok for c, ok in zip(changed, can)), "only the sentences that can have an error change"
    share = sum(changed) / sum(can)
    assert 0.4 < share < 0.6 and draft(all_sentences, random.Random(3), share=0.0) == all_sentences

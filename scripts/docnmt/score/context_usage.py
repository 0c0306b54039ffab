"""Which sentences need context: the highest-P-CXMI sentences, and every strategy's quality on them.

Stage: scoring. Workflow rule: ``context_usage`` (``rules/score.smk``), after ``cxmi``.

From the per-sentence P-CXMI of the reference (:mod:`docnmt.score.cxmi`,
``--sentences``) this writes:

- ``top``: the ``--top`` sentences with the highest P-CXMI (ties in line
  order), each with its source, reference, context (the k-1 previous source
  and reference sentences of its document, the context that P-CXMI was
  measured with) and the translations of the ``--show`` strategies;
- ``split``: per strategy, SacreBLEU BLEU and (German targets, ``--pronouns``)
  the pronoun gender and formality F1 of :mod:`docnmt.score.pronouns`, on the
  highest-P-CXMI ``--share`` of the scored sentences (at least one) and on
  the rest. A strategy that uses context well gains most on the first part.

Raw (detokenized) text throughout; on ContraPro only the example lines
(``--select``), as for every other score.

CLI::

    python -m docnmt.score.context_usage --sentences cxmi.tsv --source test.en --reference test.de \\
        --docids test.docids --system doc-trans=decode/test/doc-trans.txt ... --pronouns --output usage.json
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

from ..manual import argument_parser
from ..preprocess.windows import window_bounds
from ..textio import InputError, atomic_write, cli_errors
from .evalset import add_arguments, load_args, read_documents
from .pronouns import _setup_arguments
from .sentence_file import read_sentences
from ..option_ranges import NONNEGATIVE_INT, POSITIVE_INT, SHARE

#: The strategies whose translations the top sentences show unless told otherwise (the issue's three:
#: the baseline, the paper's recommended strategy, and the reference as context).
SHOW = ("sentence-level", "doc-trans", "cheating")


def ranked(rows: list[dict]) -> list[int]:
    """The 0-based lines of ``rows``, highest P-CXMI first (ties in line order)."""
    return [r["line"] - 1 for r in sorted(rows, key=lambda r: (-r["p_cxmi"], r["line"]))]


def top_lines(rows: list[dict], share: float) -> list[int]:
    """The 0-based lines of the highest-P-CXMI ``share`` of ``rows`` (at least one; ties in line order)."""
    if not 0 < share <= 1:
        raise ValueError(f"share must be in (0, 1], got {share}")
    return ranked(rows)[:max(1, math.ceil(len(rows) * share))]


@dataclass
class PronounSetup:
    """The pronoun metric's taggers, rule set and reporting rule (:mod:`docnmt.score.pronouns`)."""

    german: object
    english: object
    rules: object
    min_examples: int


def split_scores(data, top: set[int], pronouns: PronounSetup | None = None) -> dict:
    """Per system: BLEU (and pronoun F1) on the ``top`` lines and on the rest of the evaluation set."""
    from .pronouns import score, tag_inputs
    from .sacrebleu_metrics import corpus_scores

    parts = {"top": [i for i, line in enumerate(data.lines) if line in top],
             "rest": [i for i, line in enumerate(data.lines) if line not in top]}
    tagged = None if pronouns is None else tag_inputs(data, pronouns.german, pronouns.english, pronouns.rules)
    out = {}
    for name, hyps in data.systems.items():
        out[name] = {}
        for part, positions in parts.items():
            entry = {"sentences": len(positions)}
            if positions:
                bleu = corpus_scores([hyps[i] for i in positions], [data.reference[i] for i in positions])["BLEU"]
                entry["BLEU"] = bleu["score"]
            if tagged is not None and positions:
                sources, refs, systems = tagged
                pick = lambda items: [items[i] for i in positions]  # noqa: E731
                result = score(pick(sources), pick(systems[name]), pick(refs), pronouns.min_examples, pronouns.rules)
                for category, value in result.items():
                    entry[f"{category}_f1"] = value["f1"]
                    entry[f"{category}_examples"] = sum(value["examples"].values())
                    entry[f"{category}_reported"] = value["reported"]
            out[name][part] = entry
    return out


def top_sentences(data, rows_by_line: dict[int, dict], lines: list[int], docids: list[str], full_source: list[str],
                  full_reference: list[str], k: int, show: list[str]) -> list[dict]:
    """The top sentences with their context (the same document's k-1 previous lines) and translations."""
    position = {line: i for i, line in enumerate(data.lines)}
    bounds = window_bounds(docids, k)
    out = []
    for rank, line in enumerate(lines, start=1):
        first = bounds[line][0]
        row = rows_by_line[line]
        out.append({
            "rank": rank, "line": line + 1, "docid": row["docid"], "position": row["position"],
            "p_cxmi": row["p_cxmi"],
            "context_source": full_source[first:line], "context_reference": full_reference[first:line],
            "source": full_source[line], "reference": full_reference[line],
            "translations": {name: data.systems[name][position[line]] for name in show if name in data.systems},
        })
    return out


@cli_errors
def main(argv=None) -> int:
    from ..textio import read_lines

    parser = argument_parser("docnmt.score.context_usage", __doc__.split("\n\n")[0])
    parser.add_argument("--sentences", required=True, type=Path, help="per-sentence P-CXMI (docnmt.score.cxmi)")
    add_arguments(parser)
    parser.add_argument("--docids", required=True, type=Path)
    parser.add_argument("--k", type=POSITIVE_INT, default=3, help="sentences per window: the context shown is the k-1 previous")
    parser.add_argument("--top", type=POSITIVE_INT, default=20, help="how many of the highest-P-CXMI sentences to show")
    parser.add_argument("--share", type=SHARE, default=0.1, help="the highest-P-CXMI share scored against the rest")
    parser.add_argument("--show", default=",".join(SHOW), help="comma-separated strategies whose translations to show")
    parser.add_argument("--pronouns", action="store_true", help="also pronoun F1 (German targets)")
    _setup_arguments(parser)
    parser.add_argument("--min-examples", type=NONNEGATIVE_INT, default=100,
                        help="a pronoun F1 counts as reported where every class has this many reference examples")
    parser.add_argument("--output", required=True, type=Path)
    args = parser.parse_args(argv)
    if not 0 < args.share <= 1:
        parser.error(f"--share must be in (0, 1], got {args.share}")

    data = load_args(args)
    full_source, docids = read_documents(args.source, args.docids)
    full_reference = read_lines(args.reference)
    rows = read_sentences(args.sentences)
    rows_by_line = {r["line"] - 1: r for r in rows}
    if sorted(rows_by_line) != sorted(data.lines):
        raise InputError(args.sentences, f"expected P-CXMI for the {len(data.lines)} scored lines of {args.source}, "
                                         f"found {len(rows_by_line)} lines that differ")
    top = top_lines(rows, args.share)
    setup, note = None, None
    if args.pronouns:
        from .pronouns import RULES, load_source_tagger, load_tagger, setup_note

        rules = RULES[args.rules]
        german, english = load_tagger(args.tagger), load_source_tagger(args.source_tagger)
        _, note = setup_note(rules, german, english)
        setup = PronounSetup(german, english, rules, args.min_examples)
    show = [s for s in args.show.split(",") if s]
    result = {
        "share": args.share,
        "top_sentences": len(top),
        "rest_sentences": len(rows) - len(top),
        "threshold": min(rows_by_line[line]["p_cxmi"] for line in top),
        "pronoun_setup": note,
        "min_examples": args.min_examples if args.pronouns else None,
        "top": top_sentences(data, rows_by_line, ranked(rows)[:args.top], docids,
                             full_source, full_reference, args.k, show),
        "split": split_scores(data, set(top), setup),
    }
    with atomic_write(args.output) as handle:
        json.dump(result, handle, indent=1, ensure_ascii=False)
        handle.write("\n")
    print(f"highest-P-CXMI {args.share:.0%}: {len(top)} sentences (P-CXMI >= {result['threshold']:.3f}); rest "
          f"{result['rest_sentences']}")
    for name, parts in result["split"].items():
        print(f"{name}: BLEU top {parts['top'].get('BLEU', float('nan')):.1f}, rest "
              f"{parts['rest'].get('BLEU', float('nan')):.1f}")
    return 0


if __name__ == "__main__":
    main()

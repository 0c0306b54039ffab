"""docnmt-compare: one self-contained HTML page that shows what each strategy (or any system) did, document by
document, with every metric recomputed, and the paired test redone, on the segments a filter leaves; optionally
the same data as a Marot file.

    docnmt-compare --source test.en --reference test.de --docids test.docids \\
        --system baseline=sl.de --system doc-trans=dt.de [--scores DIR] [--spans comet.error_spans.jsonl] \\
        --output compare.html [--marot compare.marot.tsv]

A system's decode sidecar beside its file (``NAME.json``, as the workflow's decodes write) names its strategy, so
the page shows the target context each sentence was decoded with. ``--scores`` names a folder of the workflow's score
files: the segment scores of COMET, MetricX and GEMBA, XCOMET's error spans and the pronoun scorer's per-sentence
counts are read from there where present. Bad input is one line naming the file (and line); nothing is written.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ...manual import argument_parser
from ...option_ranges import POSITIVE_INT, SEED
from ...textio import InputError, atomic_outputs, cli_errors
from ..evalset import parse_systems
from . import collect, marot, page, randomization


def _set_systems(items: list[str]) -> dict[str, dict[str, Path]]:
    out: dict[str, dict[str, Path]] = {}
    for item in items:
        name, sep, rest = item.partition(":")
        if not sep or not name:
            raise InputError(item, "expected a set's system as SET:NAME=PATH")
        for system, path in parse_systems([rest], f"system of {name}").items():
            if system in out.setdefault(name, {}):
                raise InputError(path, f"system {system!r} of set {name!r} is given twice")
            out[name][system] = path
    return out


def parser():
    p = argument_parser("docnmt.score.compare.cli", __doc__.split("\n\n")[0])
    p.add_argument("--source", required=True, type=Path, help="raw source, one sentence per line")
    p.add_argument("--reference", required=True, type=Path, help="raw reference, line-aligned with the source")
    p.add_argument("--docids", required=True, type=Path, help="the document id of each line")
    p.add_argument("--system", action="append", required=True, metavar="NAME=PATH",
                   help="one system's detokenized translation, line-aligned (repeatable; the first is the default "
                        "baseline)")
    p.add_argument("--baseline", help="the system every other is compared with (default: the first)")
    p.add_argument("--scores", type=Path, help="a folder of the workflow's score files for this test set")
    p.add_argument("--spans", action="append", default=[], type=Path,
                   help="error spans in XCOMET's format (comet.error_spans.jsonl; repeatable)")
    p.add_argument("--pronouns", type=Path,
                   help="the pronoun scorer's per-sentence counts (default: pronouns.sentences.jsonl of --scores)")
    p.add_argument("--context-set", action="append", default=[], metavar="NAME=EXAMPLES",
                   help="a ContraPro or ctxpro set's examples.jsonl (repeatable)")
    p.add_argument("--context-source", action="append", default=[], metavar="NAME=PATH",
                   help="that set's source lines (the context shown before each example)")
    p.add_argument("--context-system", action="append", default=[], metavar="NAME:SYSTEM=PATH",
                   help="a system's translation of that set, line-aligned with its source (repeatable)")
    p.add_argument("--title", default="docnmt-compare", help="the page's title (the workflow: the task)")
    p.add_argument("--trials", type=POSITIVE_INT, default=randomization.TRIALS,
                   help="trials of the paired approximate randomization (default %(default)s)")
    p.add_argument("--seed", type=SEED, default=randomization.SEED, help="its seed (default %(default)s)")
    p.add_argument("--output", required=True, type=Path, help="the page (HTML)")
    p.add_argument("--marot", type=Path, help="also write the data as a Marot file (TSV)")
    return p


@cli_errors
def main(argv=None) -> int:
    args = parser().parse_args(argv)
    inputs = collect.Inputs(
        source=args.source, reference=args.reference, docids=args.docids,
        systems=parse_systems(args.system), baseline=args.baseline, scores=args.scores, spans=args.spans,
        pronouns=args.pronouns, context_sets=parse_systems(args.context_set, "context set"),
        context_sources=parse_systems(args.context_source, "context source"),
        context_systems=_set_systems(args.context_system), title=args.title)
    if args.baseline is not None and args.baseline not in inputs.systems:
        raise InputError(args.baseline, f"--baseline: not one of the systems ({', '.join(inputs.systems)})")
    for name in [*inputs.context_sources, *inputs.context_systems]:
        if name not in inputs.context_sets:
            raise InputError(name, "no --context-set of this name was given")
    if args.scores is not None and not args.scores.is_dir():
        raise InputError(args.scores, "expected a folder of score files")
    data = page.page_data(inputs, trials=args.trials, seed=args.seed)
    html = page.render(data)
    outputs = [args.output] + ([args.marot] if args.marot else [])
    with atomic_outputs(outputs) as handles:
        handles[0].write(html)
        if args.marot:
            handles[1].write(marot.text(data))
    size = args.output.stat().st_size
    print(f"{args.output}: {len(data['systems'])} systems, {len(data['source'])} sentences in "
          f"{len(data['documents'])} documents, {len(data['metrics'])} metrics, {len(data['spans'])} error spans, "
          f"{len(data['tests'])} examples of context; {size / 1e6:.2f} MB")
    for note in marot.notes(data) if args.marot else []:
        print(f"{args.marot}: {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

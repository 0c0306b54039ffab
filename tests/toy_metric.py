"""A metric of one's own, as docs/architecture.md ("The metric seam") says to write one: this module and one line
in a config's ``metrics.modules``, nothing else. It scores each hypothesis by its length in characters against its
reference's (100 for the same length), and follows the seam's score-file protocol (docnmt.score.metric), with
paired bootstrap tests of the mean segment score."""

from __future__ import annotations

import argparse

from docnmt.score.evalset import add_seam_arguments, load_args, write_score_file
from docnmt.score.metric import Metric
from docnmt.score.significance import ALPHA, mean_bootstrap_tests
from docnmt.textio import cli_errors

COLUMN = "LenRatio"


def ratio(hypothesis: str, reference: str) -> float:
    return 100.0 * len(hypothesis) / max(len(reference), 1)


@cli_errors
def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="toy_metric", description="Hypothesis length against the reference's")
    add_seam_arguments(parser, docids="the document id of each line (the seam passes it; unused)")
    args = parser.parse_args(argv)
    data = load_args(args)
    segments = {name: [ratio(h, r) for h, r in zip(hyps, data.reference)] for name, hyps in data.systems.items()}
    signature = f"{COLUMN}|chars|sentences:{len(data.reference)}"
    result = {"columns": [COLUMN], "signatures": {COLUMN: signature}, "alpha": ALPHA,
              "paired_bootstrap": mean_bootstrap_tests({COLUMN: segments}, args.baseline, args.bootstrap_samples),
              "systems": {n: {COLUMN: {"score": sum(s) / len(s), "signature": signature}} for n, s in segments.items()}}
    write_score_file(args.output, result)
    return 0


METRIC = Metric(name="toy_length", module=__name__, summary="hypothesis length against the reference's",
                columns=lambda config: [COLUMN], environment="main", unit="sentence", needs=("reference",),
                higher_is_better=True, signature="the column and the sentence count", evalsets="all",
                note=f"{COLUMN}: a test's metric of its own (tests/toy_metric.py): characters against the reference's.")


if __name__ == "__main__":
    raise SystemExit(main())

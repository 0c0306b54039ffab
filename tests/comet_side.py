"""comet-score's own code for several command lines in one process of unbabel-comet's environment (.venv-comet):
the reference scores of tests/score/test_comet.py, each exactly as the ``comet-score`` command computes them
(``comet.cli.score.score_command``, with its arguments as the command line), without a new process and a new
import of unbabel-comet for each (about 10 s each here). One test still runs the ``comet-score`` console script
itself and compares it with this.

Usage (in .venv-comet): python tests/comet_side.py JOBS.json, where JOBS.json is a list of comet-score argument
lists, each with its own ``--to_json``.
"""

import json
import sys


def main() -> int:
    from comet.cli.score import score_command

    with open(sys.argv[1], encoding="utf-8") as handle:
        jobs = json.load(handle)
    for args in jobs:
        sys.argv = ["comet-score", *map(str, args)]
        score_command()
    return 0


if __name__ == "__main__":
    sys.exit(main())

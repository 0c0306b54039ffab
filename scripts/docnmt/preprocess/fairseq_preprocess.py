"""``fairseq-preprocess``, with fairseq imported by :func:`docnmt.startup.import_fairseq`.

That import leaves out the scikit-learn and scipy.stats imports of two fairseq components the
workflow never runs (1.7 s of CPU a process); the binarization is fairseq's own.

Usage: ``python -m docnmt.preprocess.fairseq_preprocess <fairseq-preprocess arguments>`` (what
:mod:`docnmt.preprocess.binarize` runs).
"""

from __future__ import annotations

import sys


def main() -> None:
    from ..startup import import_fairseq

    if {"-h", "--help"} & set(sys.argv[1:]):
        from ..manual import epilog

        print(f"python -m docnmt.preprocess.fairseq_preprocess: fairseq-preprocess; its options follow.\n"
              f"{epilog('docnmt.preprocess.fairseq_preprocess')}\n")
    import_fairseq()
    from fairseq_cli.preprocess import cli_main

    cli_main()


if __name__ == "__main__":
    main()

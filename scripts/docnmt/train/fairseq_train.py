"""``fairseq-train`` with atomic checkpoint copies.

fairseq saves a checkpoint atomically once (``checkpoint_N_M.pt`` or the
first name in its list) and then *copies* it to ``checkpoint_last.pt`` and
``checkpoint_best.pt`` with a plain ``shutil.copyfile``. A job killed during
that copy (preemption, walltime) leaves a truncated ``checkpoint_last.pt``,
and the rerun cannot resume. Here every such copy goes to a temporary file
that is renamed into place, so ``checkpoint_last.pt`` is always either the
previous complete checkpoint or the new complete one.

Usage: ``python -m docnmt.train.fairseq_train <fairseq-train arguments>`` (what
:mod:`docnmt.train.cli` runs).
"""

from __future__ import annotations

import os
import shutil


def atomic_copy(src_path: str, dst_path: str, overwrite: bool = False) -> bool:
    if os.path.exists(dst_path) and not overwrite:
        return False
    tmp = f"{dst_path}.{os.getpid()}.copy-tmp"
    try:
        shutil.copyfile(src_path, tmp)
        os.replace(tmp, dst_path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return True


def patch() -> None:
    from ..startup import import_fairseq

    import_fairseq()
    from fairseq.file_io import PathManager

    PathManager.copy = staticmethod(atomic_copy)


def main() -> None:
    import logging
    import sys

    # fairseq_cli.train configures logging when imported, but an earlier
    # fairseq import may already have done so; set its format here, first.
    logging.basicConfig(
        format="%(asctime)s | %(levelname)s | %(name)s | %(message)s",
        datefmt="%Y-%m-%d %H:%M:%S",
        level=os.environ.get("LOGLEVEL", "INFO").upper(),
        stream=sys.stdout,
        force=True,
    )
    if {"-h", "--help"} & set(sys.argv[1:]):
        from ..manual import epilog

        print(f"python -m docnmt.train.fairseq_train: fairseq-train with atomic checkpoint copies; fairseq-train's "
              f"options follow.\n{epilog('docnmt.train.fairseq_train')}\n")
    patch()
    from fairseq_cli.train import cli_main

    from ..startup import freeze_heap

    freeze_heap(None)  # this module is always the program
    cli_main()


if __name__ == "__main__":
    main()

"""A test's hold on a job (tests/train/test_resume.py): with ``DOCNMT_TEST_HOLD=NAME=MARKER`` in the environment,
a process that renames or replaces a file into a path ending in NAME (fairseq putting ``checkpoint_last.pt`` in
place) then creates MARKER and waits there, so the test kills it at that point and not at a time it guesses. This
folder goes first on the job's PYTHONPATH, so Python imports this module at startup; without the variable it does
nothing."""

import os

_hold = os.environ.get("DOCNMT_TEST_HOLD")
if _hold:
    _name, _, _marker = _hold.partition("=")

    def _holding(move):
        def moved(src, dst, *args, **kwargs):
            result = move(src, dst, *args, **kwargs)
            if os.fspath(dst).endswith(_name):
                with open(_marker, "w", encoding="utf-8") as handle:
                    handle.write(f"{os.getpid()}\n")
                import time

                while True:
                    time.sleep(60)
            return result

        return moved

    os.replace = _holding(os.replace)
    os.rename = _holding(os.rename)

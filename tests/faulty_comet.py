"""``python -m docnmt.score.comet serve`` with a fault, for tests/score/test_comet.py: run as
``python tests/faulty_comet.py MODE -m docnmt.score.comet serve ...`` (what a fake Python of a COMET environment file
runs). MODE: ``print`` prints to stdout before every answer (as a chatty library would), ``die`` exits with status 3
at the second request, ``hang`` never answers the second request; each writes a line to stderr first."""

import os
import sys
import time

from docnmt.score import comet

mode = sys.argv[1]
assert sys.argv[2:4] == ["-m", "docnmt.score.comet"], sys.argv
predict = comet.predict
calls = 0


def faulty(*args, **kwargs):
    global calls
    calls += 1
    if mode == "print":
        print("a library's progress bar on stdout", flush=True)
        os.write(1, b"and a line written to file descriptor 1\n")
    elif calls == 2:
        print(f"faulty scorer: {mode} at request {calls}", file=sys.stderr, flush=True)
        if mode == "die":
            os._exit(3)
        time.sleep(3600)
    return predict(*args, **kwargs)


comet.predict = faulty
sys.exit(comet.main(sys.argv[4:]))

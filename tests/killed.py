"""The decode CLI, killed at a point the test chooses: ``python tests/killed.py CHUNK AFTER ARGS...`` runs
``docnmt.decode.cli`` with ARGS and the journal's chunk size CHUNK (docnmt.decode.journal), and sends itself SIGKILL
right after the journal has synced its AFTER-th chunk (tests/decode/test_decode_resume.py). ARGS that begin with
``translate`` run ``docnmt-translate`` (docnmt.decode.translate) with the rest instead."""

import os
import signal
import sys

from docnmt.decode import journal
from docnmt.decode import cli, translate

journal.CHUNK = int(sys.argv[1])
after = int(sys.argv[2])
append = journal.Journal.append


def append_then_die(self, *args, **kwargs):
    append(self, *args, **kwargs)
    if self.appended >= after:
        os.kill(os.getpid(), signal.SIGKILL)


journal.Journal.append = append_then_die
arguments = sys.argv[3:]
if arguments[:1] == ["translate"]:
    sys.exit(translate.main(arguments[1:]))
sys.exit(cli.main(arguments))

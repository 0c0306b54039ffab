"""The mechanics demo's floor: its models are trained for 80 updates only (.test/config_mechanics.yaml), enough for
the tests that read it (equalities, files and tables), as long as its hypotheses end: a model that had not learned to
stop would fill every hypothesis up to the length limit, and the tests of lengths, scores and tables would read
noise. Its findings are not asserted: those are make demo's (tests/score/test_scoring_workflow.py)."""

import json

import pytest

from docnmt import layout
from docnmt.textio import read_lines

pytestmark = pytest.mark.workflow


@pytest.mark.parametrize("strategy", ["sentence-level", "doc-trans"])
def test_the_mechanics_demos_hypotheses_end_before_the_length_limit(mechanics_demo, strategy):
    sources = read_lines(mechanics_demo / "data/demo/bpe/test.en")
    hyps = read_lines(mechanics_demo / layout.decode_file("demo", "test", strategy, "bpe"))
    sidecar = json.loads((mechanics_demo / layout.decode_file("demo", "test", strategy, "json")).read_text())
    assert len(hyps) == len(sources) == sidecar["sentences"]
    limit = sidecar["max_len_b"]
    lengths = [len(h.split()) for h in hyps]
    assert all(0 < n < limit for n in lengths), [(n, h) for n, h in zip(lengths, hyps) if not 0 < n < limit][:3]
    # a hypothesis about as long as its source: the model stops, whatever it says before
    ratio = sum(lengths) / sum(len(s.split()) for s in sources)
    assert 0.5 < ratio < 3, ratio

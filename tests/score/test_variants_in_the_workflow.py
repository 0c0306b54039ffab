"""The variants of issue 85 through a finished workflow run (the mechanics demo, .test/config_mechanics.yaml):
doc-trans+cad at alpha 1 with its sweep to 0, pooled+docmbr over doc-trans and sentence-level by the tiny
COMET, Sinkhorn and length weights: their decodes' sidecars, the sweep's scores, ContraPro's CAD row at every alpha, the
CAD decode of the ctxpro set, the plot, and the tables' rows."""

import json

import pytest

from docnmt import layout

pytestmark = pytest.mark.workflow


def sidecar(workdir, system):
    return json.loads((workdir / layout.decode_file("demo", "test", system, "json")).read_text(encoding="utf-8"))


def test_cad_and_its_sweep_reach_the_decodes_the_scores_and_the_plot(mechanics_demo):
    w = mechanics_demo
    assert sidecar(w, "doc-trans+cad")["cad"] == {"alpha": 1.0}
    assert sidecar(w, "doc-trans+cad-0")["cad"] == {"alpha": 0.0}
    # alpha 0 is doc-trans's own search, byte for byte (parallel doc-trans takes 2-pass's round 1 where it can;
    # the CAD decode searches it: the same translations)
    assert (w / layout.decode_file("demo", "test", "doc-trans+cad-0", "bpe")).read_text() == \
        (w / layout.decode_file("demo", "test", "doc-trans", "bpe")).read_text()
    scores = json.loads((w / layout.score_file("demo", "test", "bleu_ter")).read_text())["systems"]
    pronouns = json.loads((w / layout.score_file("demo", "test", "pronouns")).read_text())["systems"]
    for system in ("doc-trans+cad", "doc-trans+cad-0"):
        assert system in scores and system in pronouns
    contrapro = json.loads((w / layout.score_file("demo", "contrapro", "accuracy.document")).read_text())
    assert [e["alpha"] for e in contrapro["cad"]] == [1.0, 0.0]
    assert contrapro["cad"][1]["overall"] == contrapro["overall"], "alpha 0 ranks as the plain scores"
    assert (w / layout.combined_plot("demo", "cad")).is_file()
    table = (w / layout.combined_table("demo", "quality", "md")).read_text()
    assert "| doc-trans, CAD |" in table and "CAD (0)" not in table, "the sweep's points are not rows"
    assert "document-level, CAD (alpha 1.0)" in (w / layout.combined_table("demo", "contrapro_accuracy", "md")).read_text()
    # ctxpro's accuracy reads translations: the CAD system is decoded on its set and has a row; the selections not
    ctxpro = json.loads((w / layout.score_file("demo", "ctxpro-demo-test", "ctxpro")).read_text())["systems"]
    assert "doc-trans+cad" in ctxpro and "doc-trans+cad-0" not in ctxpro and "pooled+docmbr" not in ctxpro
    rows = [line.split(" | ")[0] for line in
            (w / layout.combined_table("demo", "ctxpro_accuracy", "md")).read_text().splitlines() if line.startswith("| ")]
    assert "| doc-trans, CAD" in rows and "| pooled, document MBR" not in rows


def test_pooled_docmbr_takes_its_settings_and_its_wins_table(mechanics_demo):
    w = mechanics_demo
    record = sidecar(w, "pooled+docmbr")
    assert record["docmbr"]["strategies"] == ["doc-trans", "sentence-level"]
    assert (record["docmbr"]["utility"], record["docmbr"]["solver"], record["docmbr"]["weights"]) == (
        "comet:tiny-da", "sinkhorn", "length")
    assert record["docmbr"]["metric"]["forward_passes"] > 0 and "model:tiny-da" in record["docmbr"]["metric"]["signature"]
    assert sum(record["wins"].values()) == record["documents"]
    wins = (w / layout.combined_table("demo", "docmbr_wins", "md")).read_text()
    assert "| doc-trans |" in wins and "utility comet:tiny-da, solver sinkhorn, weights length" in wins
    assert "| pooled, document MBR |" in (w / layout.combined_table("demo", "quality", "md")).read_text()

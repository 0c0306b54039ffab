"""The fairseq log parser (on a captured real log of the demo training) and the plot."""

from pathlib import Path

import pytest

from docnmt.train import curves
from docnmt.textio import InputError

LOG = Path(__file__).parent / "data" / "fairseq_train_demo_document.log"


def test_real_log_gives_one_train_and_one_valid_row_per_epoch():
    rows = curves.parse_log(LOG)
    train = [r for r in rows if r["kind"] == "train"]
    valid = [r for r in rows if r["kind"] == "valid"]
    assert len(train) == 25, "the captured run trained 25 epochs"
    assert len(valid) >= 25, "at least one validation per epoch (more with save-interval-updates)"
    assert train[0]["epoch"] == 1 and train[0]["num_updates"] == 18 and train[0]["ppl"] == pytest.approx(658.6)
    assert train[-1]["num_updates"] == 450
    assert all(a["num_updates"] <= b["num_updates"] for a, b in zip(rows, rows[1:]))


def test_valid_perplexity_falls_in_the_real_log():
    valid = [r for r in curves.parse_log(LOG) if r["kind"] == "valid"]
    assert valid[-1]["ppl"] < valid[0]["ppl"] / 10


def test_train_inner_lines_are_parsed():
    row = curves.parse_line(
        "2026-11-25 22:19:40 | INFO | train_inner | epoch 003:     14 / 18 loss=7.1, nll_loss=6.8, ppl=111.2, "
        "wps=9000, ups=1.3, wpb=7000, bsz=360, num_updates=50, lr=0.0005, gnorm=1.2, train_wall=10, wall=35"
    )
    assert row == {"kind": "train_inner", "epoch": 3, "num_updates": 50, "loss": 7.1, "nll_loss": 6.8, "ppl": 111.2,
                   "lr": 0.0005, "wall": 35.0}


def test_a_resumed_log_keeps_the_last_line_per_update(tmp_path):
    lines = LOG.read_text().splitlines()
    log = tmp_path / "resumed.log"
    log.write_text("\n".join(lines + lines) + "\n")
    assert curves.parse_log(log) == curves.parse_log(LOG)


def test_a_log_without_training_lines_is_an_error(tmp_path):
    (tmp_path / "x.log").write_text("nothing here\n")
    with pytest.raises(InputError, match="found none"):
        curves.parse_log(tmp_path / "x.log")


def test_csv_round_trip_and_plot(tmp_path):
    rows = curves.parse_log(LOG)
    curves.write_csv(rows, tmp_path / "c.csv")
    back = curves.read_csv(tmp_path / "c.csv")
    assert len(back) == len(rows) and back[0]["kind"] == rows[0]["kind"]
    curves.main(["plot", "--csv", str(tmp_path / "c.csv"), "--label", "document", "--output", str(tmp_path / "p.png")])
    assert (tmp_path / "p.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_best_checkpoint_validation_is_marked_in_the_csv_and_plot(tmp_path):
    rows = curves.parse_log(LOG)
    valid = [r for r in rows if r["kind"] == "valid"]
    best = min(valid, key=lambda r: r["nll_loss"])["num_updates"]
    curves.write_csv(rows, tmp_path / "c.csv", best_updates=best)
    marked = [r for r in curves.read_csv(tmp_path / "c.csv") if r["best_checkpoint"]]
    assert [(r["kind"], r["num_updates"]) for r in marked] == [("valid", best)]
    curves.main(["plot", "--csv", str(tmp_path / "c.csv"), "--label", "document", "--output", str(tmp_path / "p.png")])
    assert (tmp_path / "p.png").read_bytes()[:4] == b"\x89PNG"


def test_a_best_checkpoint_without_its_validation_in_the_log_is_an_error(tmp_path):
    with pytest.raises(InputError, match="expected a validation at update 7"):
        curves.write_csv(curves.parse_log(LOG), tmp_path / "c.csv", best_updates=7)
    assert not (tmp_path / "c.csv").exists()

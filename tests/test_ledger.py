"""The option ledger (docnmt.ledger): what a finished CLI run and a finished workflow run record, and what they
leave out (defaults, refused command lines)."""

import pytest

from docnmt import ledger


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.setenv(ledger.ENV, str(tmp_path / "ledger"))
    yield tmp_path / "ledger"
    ledger.settle(False)


def test_a_finished_run_records_the_options_given_other_values_than_their_defaults(folder):
    from docnmt.decode import translate
    from docnmt.manual import argument_parser

    translate.parse_arguments(["--input", "in.txt", "--output", "out.txt", "--k=2", "--sep", "<x>", "--beam", "12",
                               "--lenpen", "0.5"])
    ledger.settle(True)
    parser = argument_parser("docnmt.score.sacrebleu_metrics", "test")
    parser.add_argument("--baseline", action="append", default=[])  # an appending option, given once
    parser.add_argument("--flag", action="store_true")
    parser.parse_args(["--baseline", "a"])
    ledger.settle(True)
    records = ledger.read(folder)
    assert [r["keys"] for r in records] == [["--input", "--k", "--lenpen", "--output", "--separator"], ["--baseline"]]
    assert records[0]["name"] == "docnmt.decode.translate", "--beam 12 is its default: not recorded"


def test_a_refused_or_failed_run_records_nothing(folder, capsys):
    from docnmt.decode import translate

    with pytest.raises(SystemExit):
        translate.main(["--input", "missing.txt", "--output", "out.txt", "--k", "2"])
    assert not folder.exists() or not ledger.read(folder)


def test_nothing_is_recorded_without_the_variable(tmp_path, monkeypatch):
    from docnmt.decode import translate

    monkeypatch.delenv(ledger.ENV, raising=False)
    translate.parse_arguments(["--input", "in.txt", "--output", "out.txt", "--k", "2"])
    ledger.settle(True)
    assert not list(tmp_path.iterdir())


def test_config_keys_are_named_by_their_schema_paths_down_to_the_keys_that_changed():
    from docnmt.config import changed_keys, load_workflow

    config = load_workflow()
    config["beam"] = 2
    config["task_settings"]["demo"]["corpus"]["train_docs"] = 5
    config["task_settings"]["mine"] = {"src": "en", "corpus": {"type": "prepared", "dir": "x"}}
    config["training"]["presets"]["demo"]["lr"] = 0.1
    keys = changed_keys(config)
    assert keys == {"beam", "task_settings", "task_settings.<task>", "task_settings.<task>.corpus",
                    "task_settings.<task>.corpus.train_docs", "task_settings.<task>.src",
                    "task_settings.<task>.corpus.type", "task_settings.<task>.corpus.dir", "training",
                    "training.presets"}

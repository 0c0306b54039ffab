"""Numeric options checked where they are parsed (docnmt.option_ranges): every CLI's parser, walked in this process,
refuses each declared option's values just outside its range, ``nan`` and the infinities, and a refused value is one
usage line naming the option, exit status 2, before anything loads."""

from __future__ import annotations

import argparse
import importlib
import inspect
import re
import sys
from unittest import mock

import pytest

from docnmt.manual import clis
from docnmt.option_ranges import EPSILON, FINITE, POSITIVE, POSITIVE_INT, SEED, Range


class _Built(Exception):
    """Raised where a CLI's parser is asked to parse: its arguments are all declared by then."""


def parser_of(module: str) -> argparse.ArgumentParser:
    """The outermost parser ``python -m MODULE``'s main builds, caught as it starts to parse (nothing runs)."""

    def parse_known_args(self, args=None, namespace=None):
        raise _Built(self)

    main = importlib.import_module(module).main
    takes_argv = bool(inspect.signature(main).parameters)  # a wrapper of another tool's CLI reads sys.argv
    with mock.patch.object(argparse.ArgumentParser, "parse_known_args", parse_known_args), \
            mock.patch.object(sys, "argv", [module]):
        try:
            main([]) if takes_argv else main()
        except _Built as built:
            return built.args[0]
    raise AssertionError(f"python -m {module}: main returned without parsing its command line")


def actions(parser: argparse.ArgumentParser, commands=()):
    """(the subcommands that reach it, the action) for every option of PARSER and of its subcommands."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from actions(sub, (*commands, name))
        else:
            yield commands, action


def ranged_options(parser: argparse.ArgumentParser):
    """(option, its Range) for every option of PARSER (and of its subcommands) whose type declares a range."""
    for _, action in actions(parser):
        if isinstance(action.type, Range):
            yield action.option_strings[0] if action.option_strings else action.dest, action.type


@pytest.mark.parametrize("module", sorted(clis()))
def test_every_numeric_option_declares_its_range(module):
    bare = [f"{' '.join(commands)} {action.option_strings[0] if action.option_strings else action.dest}".strip()
            for commands, action in actions(parser_of(module)) if action.type in (int, float)]
    assert not bare, f"python -m {module}: numeric options without a declared range (docnmt.option_ranges): {bare}"


@pytest.mark.parametrize("module", sorted(clis()))
def test_every_ranged_option_refuses_the_values_just_outside_its_range_in_one_usage_line(module, capsys):
    parser = parser_of(module)
    for commands, action in actions(parser):
        if not (isinstance(action.type, Range) and action.option_strings):
            continue
        option = action.option_strings[0]
        for value in action.type.outside():
            with pytest.raises(SystemExit) as exited:
                parser.parse_args([*commands, f"{option}={value}"])
            err = capsys.readouterr().err.strip().splitlines()
            assert exited.value.code == 2 and err[-1].endswith(
                f"error: argument {'/'.join(action.option_strings)}: expected {action.type.describe()}, got "
                f"{value!r}"), (module, commands, option, value, err)


def test_the_search_options_every_decoding_cli_shares_declare_their_range():
    options = dict(ranged_options(parser_of("docnmt.decode.translate")))
    assert {name: options.get(name) for name in ("--beam", "--lenpen", "--k", "--h", "--batch-size", "--max-tokens",
                                                  "--max-len-b")} == {
        "--beam": POSITIVE_INT, "--lenpen": FINITE, "--k": POSITIVE_INT, "--h": POSITIVE_INT,
        "--batch-size": POSITIVE_INT, "--max-tokens": POSITIVE_INT, "--max-len-b": POSITIVE_INT}
    decode = dict(ranged_options(parser_of("docnmt.decode.cli")))  # the workflow's decode CLI shares them
    assert {name: decode.get(name) for name in ("--beam", "--lenpen", "--k", "--h")} == \
        {name: options[name] for name in ("--beam", "--lenpen", "--k", "--h")}


@pytest.mark.parametrize("argv, line", [
    (["--beam", "0"], "argument --beam: expected a whole number of at least 1, got '0'"),
    (["--beam", "-3"], "argument --beam: expected a whole number of at least 1, got '-3'"),
    (["--lenpen", "nan"], "argument --lenpen: expected a finite number, got 'nan'"),
    (["--h", "2.5"], "argument --h: expected a whole number of at least 1, got '2.5'"),
])
def test_docnmt_translate_refuses_an_out_of_range_number_in_one_usage_line(argv, line, capsys):
    from docnmt.decode.translate import main

    with mock.patch("docnmt.decode.backends.model_from_args", side_effect=AssertionError("a model was loaded")):
        with pytest.raises(SystemExit) as exited:
            main(argv)
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines()[-1].endswith(f": error: {line}"), err


def test_a_range_in_words_and_its_values_outside():
    assert EPSILON.describe() == "a finite number from 0 to 1 (not 1)" and EPSILON.outside()[:2] == [repr(-1e-6), "1.0"]
    assert EPSILON("0") == 0.0 and SEED("-5") == -5
    assert POSITIVE_INT.describe() == "a whole number of at least 1" and POSITIVE_INT.outside() == ["0", "1.5"]
    assert POSITIVE.describe() == "a finite number above 0" and POSITIVE.outside() == ["0.0", "nan", "inf", "-inf"]
    unit = Range(float, low=0, high=1)
    assert unit.describe() == "a finite number from 0 to 1" and unit("1") == 1.0 and unit("0") == 0.0
    assert unit.outside() == [repr(-1e-6), repr(1 + 1e-6), "nan", "inf", "-inf"]
    assert POSITIVE_INT("7") == 7 and FINITE("-0.5") == -0.5


def test_the_walk_finds_the_declared_options_of_the_decoding_and_scoring_clis():
    found = {module for module in clis() if any(ranged_options(parser_of(module)))}
    assert {"docnmt.decode.cli", "docnmt.decode.translate", "docnmt.score.cxmi", "docnmt.score.metricx",
            "docnmt.score.contrastive", "docnmt.score.perplexity", "docnmt.preprocess.bpe", "docnmt.train.cli",
            "docnmt.corpora.download", "docnmt.score.gemba"} <= found, found


# ---- the config's numeric keys ----------------------------------------------------------------------------------
@pytest.fixture
def config() -> dict:
    """The shipped config.yaml, unvalidated."""
    import yaml

    from docnmt.config import WORKFLOW_CONFIG

    return yaml.safe_load(WORKFLOW_CONFIG.read_text(encoding="utf-8"))


def numeric_keys(node: dict, path: tuple = ()):
    """(dotted key, the value just below its minimum or above its maximum) of every bounded numeric key of the
    schema's top-level properties (the metrics' declared blocks too) and of a task's (under task_settings.demo),
    depth first."""
    kinds = node.get("type") if isinstance(node.get("type"), list) else [node.get("type")]
    if {"integer", "number"} & set(kinds):
        step = 1 if "number" not in kinds else 0.001
        if "minimum" in node:
            yield path, node["minimum"] - step
        if "exclusiveMinimum" in node:
            yield path, node["exclusiveMinimum"]
        if "maximum" in node:
            yield path, node["maximum"] + step
        if "exclusiveMaximum" in node:
            yield path, node["exclusiveMaximum"]
    for name, child in (node.get("properties") or {}).items():
        yield from numeric_keys(child, (*path, name))


def with_value(config: dict, path: tuple, value) -> dict:
    import copy

    config = copy.deepcopy(config)
    target = config
    for part in path[:-1]:
        target = target.setdefault(part, {})
    target[path[-1]] = value
    return config


def schema_numeric_keys():
    import yaml

    from docnmt.config import SCHEMA, with_backends, with_metrics

    schema = with_metrics(with_backends(yaml.safe_load(SCHEMA.read_text(encoding="utf-8"))))
    yield from numeric_keys(schema)
    for path, value in numeric_keys(schema["$defs"]["task"]):
        yield ("task_settings", "demo", *path), value


def test_every_bounded_numeric_config_key_refuses_the_value_just_outside_and_nan(config):
    from docnmt.config import ConfigError, validate

    checked = 0
    for path, value in schema_numeric_keys():
        key = ".".join(map(str, path))
        for bad in (value, float("nan")):
            with pytest.raises(ConfigError, match=rf"config key '{re.escape(key)}'"):
                validate(with_value(config, path, bad))
            checked += 1
    assert checked >= 2 * 25, checked
    with pytest.raises(ConfigError, match=r"config key 'beam': expected a finite number, found inf"):
        validate(with_value(config, ("beam",), float("inf")))


def test_a_seed_takes_any_whole_number_but_not_nan(config):
    from docnmt.config import ConfigError, validate

    assert validate(with_value(config, ("mbr", "seed"), -7))["mbr"]["seed"] == -7
    with pytest.raises(ConfigError, match=r"config key 'mbr.seed': expected a finite number, found nan"):
        validate(with_value(config, ("mbr", "seed"), float("nan")))

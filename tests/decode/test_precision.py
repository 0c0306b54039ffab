"""float32 search and forced scoring on every device unless asked otherwise (the paper's, fairseq's default)."""

import argparse

import pytest

from docnmt.decode import requests as search
from docnmt.decode import arguments


@pytest.mark.parametrize("device", ["cpu", "cuda", "cuda:1"])
def test_the_default_dtype_is_float32_on_every_device(device):
    assert search.resolve_dtype(None, device) == "float32"
    assert search.resolve_dtype("fp16", device) == "float16" and search.resolve_dtype("bf16", device) == "bfloat16"


def test_an_unknown_dtype_is_an_error():
    with pytest.raises(ValueError, match="unknown dtype 'auto'"):
        search.resolve_dtype("auto", "cuda")


def test_every_scoring_cli_defaults_to_float32_and_accepts_half_precision():
    parser = argparse.ArgumentParser()
    arguments.add_scoring_model_arguments(parser)
    args = parser.parse_args(["--model", "m.pt", "--data", "bin", "--level", "document"])
    assert args.dtype == "float32"
    assert parser.parse_args(["--model", "m.pt", "--data", "bin", "--level", "document", "--dtype", "float16"]).dtype \
        == "float16"


def test_the_hypothesis_length_defaults_to_fairseqs_200_and_must_allow_a_token(capsys):
    parser = argparse.ArgumentParser()
    arguments.add_search_arguments(parser)
    assert parser.parse_args([]).max_len_b == 200 and parser.parse_args(["--max-len-b", "24"]).max_len_b == 24
    for bad in ("0", "-3", "ten"):
        with pytest.raises(SystemExit):
            parser.parse_args(["--max-len-b", bad])
        assert f"argument --max-len-b: expected a whole number of at least 1, got '{bad}'" in capsys.readouterr().err


@pytest.mark.parametrize("module", ["docnmt.decode.cli", "docnmt.score.perplexity", "docnmt.score.contrastive"])
def test_the_clis_say_float32_in_their_help(module):
    import subprocess
    import sys

    from helpers import REPO, tool_env

    out = subprocess.run([sys.executable, "-m", module, "--help"], capture_output=True, text=True, env=tool_env(),
                         cwd=REPO, check=True).stdout
    assert "--dtype" in out and "default float32 on every device" in " ".join(out.split())

"""A backend: vllm task in the workflow: its model rules (check_model, the decodes, perplexity, CXMI) run in vLLM's
environment (docnmt.workflow.environments: .venv-vllm before PATH, envs/vllm.yaml with --sdm conda), pass
models.engine_args as --engine-args, and ask for tensor_parallel_size GPUs; a missing environment stops the workflow
at once and names make vllm. Dry runs and the package's functions: nothing here starts an engine
(tests/decode/test_vllm.py does)."""

import copy

import pytest
import yaml

from helpers import REPO, run_snakemake

pytestmark = pytest.mark.fast

TP2 = {"task_settings": {"demo-vllm": {"models": {"engine_args": {"tensor_parallel_size": 2,
                                                                   "gpu_memory_utilization": 0.15}}}}}


@pytest.fixture(scope="module")
def config():
    from docnmt.config import validate

    raw = yaml.safe_load((REPO / "config.yaml").read_text(encoding="utf-8"))
    raw["tasks"] = ["demo-vllm"]
    raw["task_settings"]["demo-vllm"]["models"]["engine_args"] = {"tensor_parallel_size": 2}
    return validate(raw, REPO / "schemas" / "config.schema.yaml")


def test_the_task_asks_for_its_engine_options_environment_and_gpus(config):
    from docnmt import workflow as wf

    assert wf.environments.engine_options(config, "demo-vllm") == ["--engine-args", "tensor_parallel_size=2"]
    assert wf.environments.gpus(config, "demo-vllm") == 2 and wf.environments.gpus(config, "demo") == 1
    assert wf.environments.conda_env(config, "demo-vllm", "../envs/models.yaml") == "../envs/vllm.yaml"
    assert wf.environments.conda_env(config, "demo", "../envs/models.yaml") == "../envs/models.yaml"
    assert wf.environments.env_path(config, "demo-vllm", "/a checkout", conda=False) == "/a checkout/.venv-vllm/bin:"
    assert wf.environments.env_path(config, "demo-vllm", "/a checkout", conda=True) == ""
    assert wf.environments.env_path(config, "demo", "/a checkout", conda=False) == ""


def test_a_missing_environment_names_make_vllm(config, tmp_path):
    from docnmt import workflow as wf
    from docnmt.config import ConfigError

    with pytest.raises(ConfigError, match=r"'task_settings.demo-vllm.models.backend': vllm models run in "
                                          r"\.venv-vllm, which is not there: run `make vllm`"):
        wf.environments.check(config, str(tmp_path), conda=False)
    wf.environments.check(config, str(tmp_path), conda=True)  # --sdm conda builds envs/vllm.yaml


def test_unknown_engine_args_are_refused_by_the_schema(config):
    from docnmt.config import ConfigError, validate

    raw = yaml.safe_load((REPO / "config.yaml").read_text(encoding="utf-8"))
    raw["task_settings"]["demo-vllm"]["models"]["engine_args"] = {"tensor_parallel": 2}
    with pytest.raises(ConfigError, match="engine_args"):
        validate(copy.deepcopy(raw), REPO / "schemas" / "config.schema.yaml")


@pytest.mark.full  # needs .venv-vllm, which make test-full makes
def test_a_tensor_parallel_task_dry_runs_with_two_gpus_on_its_model_rules(tmp_path):
    if not (REPO / ".venv-vllm" / "bin" / "python").exists():
        pytest.skip("no .venv-vllm: `make vllm` makes it (make test-full does)")
    (tmp_path / "tp2.yaml").write_text(yaml.safe_dump(TP2), encoding="utf-8")  # keys sorted
    (tmp_path / "results/demo-llm/model").mkdir(parents=True)  # the model folder make demo-llm trains
    result = run_snakemake(tmp_path, "-n", "-p", "--configfile", str(REPO / "config.yaml"), str(tmp_path / "tp2.yaml"),
                           "--config", "tasks=[demo-vllm]", "strategies=[sentence-level,doc-trans]")
    out = result.stdout + result.stderr
    jobs = out.split("\nrule ")
    model_rules = [job for job in jobs if job.startswith(("decode_", "perplexity", "cxmi"))]
    assert len(model_rules) >= 4 and all("gpu=2" in job for job in model_rules)
    assert out.count(".venv-vllm/bin:") >= len(model_rules)
    assert "--engine-args gpu_memory_utilization=0.15,tensor_parallel_size=2" in out
    assert all("gpu=" not in job for job in jobs if job.startswith(("bleu", "scores", "tables", "pronoun")))


@pytest.mark.full  # needs .venv-vllm, which make test-full makes
def test_the_manuals_two_gpu_block_dry_runs_with_two_gpus_on_its_model_rules(tmp_path):
    """docs/own-models.md's vLLM config block as written (its model folders and corpus made empty here): the decodes,
    perplexity and CXMI ask for 2 GPUs, the Slurm profile's --gpus. It needs two GPUs and an 8B model to run, so
    the option audit lists it as an exception; this dry run is what runs here."""
    import re

    if not (REPO / ".venv-vllm" / "bin" / "python").exists():
        pytest.skip("no .venv-vllm: `make vllm` makes it (make test-full does)")
    page = (REPO / "docs/own-models.md").read_text(encoding="utf-8")
    (block,) = [b for b in re.findall(r"^```yaml\n(.*?)^```", page, re.S | re.M) if "tensor_parallel_size: 2" in b]
    (tmp_path / "mine.yaml").write_text(block, encoding="utf-8")
    (tmp_path / "models/Llama-3.1-8B-Instruct").mkdir(parents=True)
    corpus = tmp_path / "data/mine/corpus"
    corpus.mkdir(parents=True)
    for name in ("test.en", "test.de"):
        (corpus / name).write_text("A sentence .\n", encoding="utf-8")
    (corpus / "test.docids").write_text("d1\n", encoding="utf-8")
    result = run_snakemake(tmp_path, "-n", "--configfile", str(REPO / "config.yaml"), str(tmp_path / "mine.yaml"),
                           "--config", "tasks=[mine-vllm]", "strategies=[sentence-level,doc-trans]")
    jobs = (result.stdout + result.stderr).split("\nrule ")
    model_rules = [job for job in jobs if job.startswith(("decode_", "perplexity", "cxmi"))]
    assert len(model_rules) >= 4 and all("gpu=2" in job for job in model_rules)


def test_speculative_ngram_goes_to_the_vllm_tasks_decodes_and_is_refused_where_no_task_has_it():
    """decode.speculative: ngram: --speculative ngram in the vllm task's search options, not in a fairseq task's of
    the same config; a ConfigError naming the key where no configured task's backend has it, or with MBR's epsilon
    sampling (vLLM runs no logits processor under speculative decoding)."""
    from docnmt.config import ConfigError, validate
    from docnmt.workflow.decode import search_args

    schema = REPO / "schemas" / "config.schema.yaml"
    raw = yaml.safe_load((REPO / "config.yaml").read_text(encoding="utf-8"))
    raw["tasks"] = ["demo-vllm", "demo"]
    raw["decode"] = {"speculative": "ngram"}
    both = validate(copy.deepcopy(raw), schema)
    assert search_args(both, "demo-vllm")[-2:] == ["--speculative", "ngram"]
    assert "--speculative" not in search_args(both, "demo")
    raw["tasks"] = ["demo"]
    with pytest.raises(ConfigError, match=r"^config key 'decode.speculative': ngram is for vllm tasks; the configured "
                                          r"tasks' models are fairseq"):
        validate(copy.deepcopy(raw), schema)
    raw["tasks"] = ["demo-vllm"]
    raw["mbr"] = {"strategies": ["doc-trans"], "candidates": "sampling"}
    with pytest.raises(ConfigError, match=r"^config key 'decode.speculative': ngram cannot run with mbr.candidates "
                                          r"sampling \(task demo-vllm"):
        validate(copy.deepcopy(raw), schema)
    raw["decode"] = {}
    assert "--speculative" not in search_args(validate(copy.deepcopy(raw), schema), "demo-vllm")

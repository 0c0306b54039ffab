"""The backends' registry (docnmt.decode.backend): each entry's module has the entry points, no code outside the
registry compares a backend's name, and a backend added with one entry goes through the loaders, the checks, the
CLIs' --backend and the config's validation."""

import re
import sys
import types
from pathlib import Path

import pytest

from helpers import REPO
from docnmt.decode import backend as interface, requests as search
from docnmt.decode import backends
from docnmt.decode.backend import REGISTRY, Backend

ENTRY_POINTS = ("load", "check", "searcher", "check_cli")
#: A comparison of a string with a backend's name: ``x == "fairseq"``, ``"transformers" != x``, ``x in ("fairseq", ...``.
NAMES = "|".join(map(re.escape, REGISTRY))
COMPARISON = re.compile(rf"""(==|!=)\s*["']({NAMES})["']|["']({NAMES})["']\s*(==|!=)|\bin\s*[(\[{{]\s*["']({NAMES})["']""")


@pytest.mark.parametrize("name", list(REGISTRY))
def test_every_registered_backend_has_its_entry_points_and_a_description(name):
    described = REGISTRY[name]
    assert described.name == name and described.text in ("bpe", "plain") and described.summary
    module = described.functions()
    for entry in ENTRY_POINTS:
        assert callable(getattr(module, entry, None)), f"{described.module} has no {entry}()"


def test_no_backend_name_is_compared_outside_the_registry():
    sources = [*(REPO / "scripts" / "docnmt").rglob("*.py"), *(REPO / "rules").glob("*.smk"), REPO / "Snakefile",
               *(path for path in (REPO / "bench").iterdir() if path.is_file() and path.suffix in ("", ".py"))]
    found = []
    for path in sources:
        if path == Path(interface.__file__):
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if COMPARISON.search(line.split("#")[0]):
                found.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    assert not found, "ask the backend's description (docnmt.decode.backend) instead:\n" + "\n".join(found)


def test_the_schemas_backends_and_load_options_are_the_registrys():
    """The schema file names no backend and no load option: validation takes the registry's names, and each options
    block's keys, types, defaults and descriptions from the backends' options dataclasses."""
    import dataclasses

    import yaml

    from docnmt.config import with_backends
    from docnmt.decode.load_options import specs

    raw = yaml.safe_load((REPO / "schemas/config.schema.yaml").read_text(encoding="utf-8"))
    assert "enum" not in raw["$defs"]["models"]["properties"]["backend"]
    schema = with_backends(raw)["$defs"]["models"]["properties"]
    assert schema["backend"]["enum"] == list(REGISTRY)
    for described in REGISTRY.values():
        for name, spec in specs(described.options).items():
            entry = schema[described.options_key]["properties"][name]
            assert entry["description"] == spec.help and entry.get("default") == spec.default
            assert entry["type"] == {int: "integer", float: "number", str: "string", bool: "boolean"}[spec.kind]
    assert [f.name for f in dataclasses.fields(REGISTRY["vllm"].options)] == \
        list(schema["engine_args"]["properties"])
    assert schema["endpoint"]["required"] == ["base_url"] and "prices" in schema["endpoint"]["properties"]


def test_an_unknown_backend_is_an_error_listing_the_registered_ones():
    with pytest.raises(ValueError, match=re.escape(f"unknown backend 'onnx', expected one of {', '.join(REGISTRY)}")):
        interface.backend("onnx")


@pytest.fixture
def echo_backend(monkeypatch):
    """A backend added the documented way: a module with the entry points and one registry entry. Its model
    'translates' by echoing the source ids; it reads plain text and needs no data folder."""
    module = types.ModuleType("echo_backend")
    calls = []

    class EchoModel:
        backend, sep, eos, pad = "echo", None, 2, 1

        def __init__(self, folder):
            self.folder = folder

    class EchoSearcher(search.Counted):
        eos, pad, vocab, max_source_positions, max_target_positions = 2, 1, 10, 64, 64

        def __init__(self, model, beam):
            self.model, self.beam = model, beam
            self.reset_counters()

        def score_forced(self, requests, targets, ends=None):
            return [search.Scored(0.0, len(t) + 1) for t in targets]

        def sample(self, request, count, epsilon, seed):
            return [list(request)] * count

        def search(self, requests):
            self.batch_done(len(requests))
            return [[list(r)] for r in requests]

    module.load = lambda model, data, **options: calls.append(("load", model, data, options)) or EchoModel(model)
    module.check = lambda model, data, level, *rest: calls.append(("check", model, level)) or {"backend": "echo"}
    module.searcher = lambda model, beam, lenpen, batch_size, max_len, max_tokens, cache_bytes: EchoSearcher(model, beam)
    module.check_cli = lambda parser, args: calls.append(("check_cli", args.model)) or 0
    monkeypatch.setitem(sys.modules, "echo_backend", module)
    monkeypatch.setitem(REGISTRY, "echo", Backend(
        name="echo", summary="a folder whose model repeats its source", text="plain", needs_data=False,
        language_codes=False, contrapro_in_workflow=False, module="echo_backend", note="echo"))
    return calls


def test_a_backend_added_with_one_registry_entry_loads_checks_and_searches(echo_backend, tmp_path):
    model = backends.load_model("echo", tmp_path / "model", separator="<brk>")
    assert backends.check("echo", tmp_path / "model", None, "document") == {"backend": "echo"}
    searcher = backends.make_searcher(model, beam=3)
    assert model.backend == "echo" and model.folder == tmp_path / "model"
    assert isinstance(searcher, interface.SearcherLike) and searcher.beam == 3
    batches = []
    searcher.on_batch = batches.append  # the progress hook docnmt-translate uses
    assert searcher.search([[5, 6]]) == [[[5, 6]]] and batches == [1]
    assert [call[0] for call in echo_backend] == ["load", "check"]
    assert echo_backend[0][3]["separator"] == "<brk>"


def test_a_backend_added_with_one_registry_entry_is_a_choice_of_the_clis_and_the_config(echo_backend, tmp_path,
                                                                                        capsys):
    from docnmt import config as config_module
    from docnmt.decode import checks

    assert checks.main(["--backend", "echo", "--model", str(tmp_path / "model"), "--level", "sentence"]) == 0
    assert echo_backend[-1] == ("check_cli", tmp_path / "model")
    task = {"src": "en", "tgt": "de", "corpus": {"type": "prepared", "dir": str(tmp_path)},
            "models": {"backend": "echo", "k": 3, "separator": "<brk>", "document": {"checkpoint": "m"}}}
    config_module._check_models("mine", task)
    assert task["models"]["tokenize"] == "none", "plain text: no Moses before the model's own tokenizer"
    import yaml

    from docnmt.config import validate

    config = yaml.safe_load((REPO / "config.yaml").read_text(encoding="utf-8"))
    config["tasks"] = ["mine"]
    config["task_settings"]["mine"] = {**task, "models": dict(task["models"])}
    config["task_settings"]["mine"]["models"].pop("tokenize")
    assert validate(config)["task_settings"]["mine"]["models"]["backend"] == "echo", "the schema takes it"
    task["models"]["document"]["data"] = "bin"
    with pytest.raises(config_module.ConfigError, match="a data folder is for fairseq models; a echo model is a "
                                                        "folder whose model repeats its source"):
        config_module._check_models("mine", task)


class Unread:
    """A loaded model of backend ``backend`` whose every other attribute is None: a searcher that refuses its settings
    reads nothing of it first."""

    def __init__(self, backend: str):
        self.backend = backend

    def __getattr__(self, name):
        return None


@pytest.mark.parametrize("name", list(REGISTRY))
@pytest.mark.parametrize("setting", ["beam", "batch_size"])
def test_every_backends_searcher_refuses_a_beam_or_a_batch_size_below_one_before_reading_its_model(name, setting):
    settings = {"beam": 1, "batch_size": 1, setting: 0}
    with pytest.raises(ValueError, match=rf"must be >= 1, got (.*, )?{setting}=0\b"):
        backends.make_searcher(Unread(name), **settings)


def test_batches_are_limited_in_positions_as_well_as_in_requests():
    sizes = [100, 100, 100, 400, 50, 50, 900, 10]
    batches = list(search.token_batches(range(len(sizes)), sizes.__getitem__, max_tokens=400, max_requests=3))
    # padded to its largest request: 3 x 100 fits; 400 alone; 50+50 fit, 900 is alone although over the limit
    assert batches == [[0, 1, 2], [3], [4, 5], [6], [7]]
    assert list(search.token_batches(range(8), sizes.__getitem__, max_tokens=None, max_requests=3)) == \
        [[0, 1, 2], [3, 4, 5], [6, 7]]
    assert list(search.token_batches(range(4), lambda i: 1, max_requests=64,
                                        together=lambda first, i: first // 2 == i // 2)) == [[0, 1], [2, 3]]


def test_the_default_position_limit_binds_on_whole_documents_not_on_sentence_windows():
    """A request's positions are beam x (source + prefix + the token limit): the paper's k=3 windows of news
    sentences (about 30 tokens each) fill the 64 requests of a batch at beam 12; windows of 40 such sentences
    give batches of a few requests."""
    def batch_sizes(tokens: int) -> list[int]:
        return [len(b) for b in search.token_batches(range(128), lambda i: 12 * (tokens + 200), max_requests=64)]

    assert batch_sizes(3 * 30 + 2 * 30) == [64, 64]
    assert set(batch_sizes(40 * 30 + 39 * 30)[:-1]) == {12}


def test_a_backend_without_beam_search_or_forced_scoring_is_not_asked_for_them(monkeypatch):
    """The description's capabilities decide: doc-trans-beam (an n-best list) is skipped for a backend without beam
    search, with the reason the tables' notes print, and CXMI for one without forced scoring."""
    from docnmt import workflow as wf
    from docnmt.decode.strategy_registry import not_for_backend, strategies_for

    monkeypatch.setitem(REGISTRY, "greedy-only", Backend(
        name="greedy-only", summary="an engine that only answers greedily", text="plain", needs_data=False,
        language_codes=False, contrapro_in_workflow=False, module="echo_backend", beam_search=False,
        forced_scoring=False, sampling=False))
    why = not_for_backend("doc-trans-beam", "greedy-only")
    assert why == "doc-trans-beam needs what greedy-only models lack: greedy-only models have no beam search (an " \
                  "n-best list)"
    assert "doc-trans-beam" not in strategies_for("greedy-only") and "doc-trans" in strategies_for("greedy-only")
    assert not_for_backend("doc-trans-beam", "vllm") is None and not_for_backend("source-primed", "vllm") is None
    assert REGISTRY["greedy-only"].lacks(["forced_scoring", "sampling"]) == (
        "greedy-only models have no forced scoring (perplexity, CXMI) and no sampling (MBR's epsilon samples)")
    config = {"tasks": ["mine"], "task_settings": {"mine": {"models": {"backend": "greedy-only",
                                                                       "document": {"checkpoint": "m"}}}}}
    assert wf.tasks.cxmi_tasks(config) == []
    config["task_settings"]["mine"]["models"]["backend"] = "vllm"
    assert wf.tasks.cxmi_tasks(config) == ["mine"]


def test_a_backend_without_forced_scoring_gets_no_perplexity_and_the_table_says_why(monkeypatch, tmp_path):
    """The tables' manifest asks for no perplexity of a task whose backend cannot score forced targets, and Table 2
    shows "-" for it with the reason in its notes."""
    import yaml

    from docnmt import workflow as wf
    from docnmt.config import validate
    from docnmt.score.tables import perplexity_table

    monkeypatch.setitem(REGISTRY, "greedy-only", Backend(
        name="greedy-only", summary="an engine that only answers greedily", text="plain", needs_data=False,
        language_codes=False, contrapro_in_workflow=False, module="echo_backend", forced_scoring=False))
    raw = yaml.safe_load((REPO / "config.yaml").read_text(encoding="utf-8"))
    raw["tasks"] = ["demo-vllm"]
    config = validate(raw, REPO / "schemas" / "config.schema.yaml")
    config["task_settings"]["demo-vllm"]["models"]["backend"] = "greedy-only"
    entry = wf.tables.task_scores(config, "demo-vllm")
    assert entry["perplexity"] == {} and "cxmi" not in entry
    table = perplexity_table({"strategies": ["sentence-level"], "tasks": {"demo-vllm": {**entry, "sidecars": {}}}})
    assert all(row[-1] == "-" for row in table.rows)
    assert ('demo-vllm: not scored ("-"), and no CXMI or context-usage tables: greedy-only models have no forced '
            'scoring (perplexity, CXMI)') in table.notes
    # the reasons are not inputs of the tables' rule
    files = wf.tables.manifest_files(config, ["demo-vllm"])
    assert files and all(f.startswith("results/") for f in files), files

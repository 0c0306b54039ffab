"""The package mirrors the workflow: one subpackage per rule file, dependencies one way, small modules.

Read from the source (imports via ast, rule shell commands via regex): nothing is run; only the registries' finders
(which backend packages and metric modules they find) are asked.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

from packagegraph import LAYERS, PACKAGE, STAGES, WORKFLOW, internal_imports, modules, runtime_imports, stage_of

REPO = PACKAGE.parents[1]

#: Most lines a module may have, a class and a function (its decorators left out, its docstring counted). An
#: exception would be named here (``module``, ``module.Class`` or ``module.function``) with its reason; there is none.
MAX_MODULE_LINES = 600
MAX_CLASS_LINES = 200
MAX_FUNCTION_LINES = 80
EXCEPTIONS: dict[str, str] = {}


def test_one_subpackage_per_rule_file():
    rule_files = {p.stem for p in (REPO / "rules").glob("*.smk")} - {"common"}
    assert rule_files == set(STAGES)
    for stage in STAGES:
        assert (PACKAGE / stage / "__init__.py").is_file(), f"docnmt.{stage} is not a package"


def found_by_a_registry(name: str) -> bool:
    """A module the registries find by walking the package, described by its own declaration (a backend package's
    ``Backend``, a metric module's ``Metric``), which no list has to name: every module of a backend package under
    decode/backends/, and every module of score/ that declares ``METRIC``."""
    packages, metric_modules = _registries_finds()
    parts = name.split(".")
    return (parts[:2] == ["decode", "backends"] and len(parts) > 2 and parts[2] in packages) or \
        f"docnmt.{name}" in metric_modules


@functools.lru_cache(maxsize=1)
def _registries_finds() -> tuple[tuple[str, ...], tuple[str, ...]]:
    from docnmt.decode.backend import builtin
    from docnmt.score.metric import builtin_modules

    return builtin(), builtin_modules()


def test_each_subpackage_docstring_names_its_modules_and_clis():
    for stage in LAYERS:
        doc = ast.get_docstring(ast.parse((PACKAGE / stage / "__init__.py").read_text(encoding="utf-8")))
        rule_file = "rules/" if stage == WORKFLOW else f"rules/{stage}.smk"
        assert doc and rule_file in doc, f"docnmt.{stage}: the docstring names its rule file ({rule_file})"
        for name, path in modules().items():
            if stage_of(name) == stage and name != stage and not found_by_a_registry(name):
                module = name.split(".")[-1]
                assert re.search(rf"\b{module}\b", doc), f"docnmt.{stage}'s docstring does not name {module}"
                if 'if __name__ == "__main__"' in path.read_text(encoding="utf-8"):
                    clis = doc[doc.rindex("CLI"):]
                    assert re.search(rf"\b{module}\b", clis), f"docnmt.{stage}'s docstring does not name the CLI {module}"


def test_subpackages_import_only_earlier_stages_and_top_level_helpers():
    order = {stage: index for index, stage in enumerate(LAYERS)}
    bad = []
    for name, path in modules().items():
        here = stage_of(name)
        for target, line in internal_imports(name):
            there = stage_of(target)
            if there is None:
                continue  # a top-level helper (config, textio, tablefmt, seams, the package itself)
            if here is None:
                bad.append(f"{path}:{line}: the top-level module docnmt.{name} imports docnmt.{target} of a stage")
            elif order[there] > order[here]:
                bad.append(f"{path}:{line}: docnmt.{name} ({here}) imports docnmt.{target} of the later stage {there}")
    assert not bad, "\n".join(bad)


#: The one module whose run-time references may run from the top level into a stage: the declared seam.
SEAM_MODULE = "seams"
#: Run-time arrows that run up, each with its reason (none may be added without one).
UPWARD_EXCEPTIONS = {
    ("decode.metric_client", "score.comet"): "MBR's COMET utility is scored by the COMET metric's own server "
                                               "(`comet serve`), started in unbabel-comet's environment",
}


def _runs_up(here: str | None, there: str | None) -> bool:
    order = {stage: index for index, stage in enumerate(LAYERS)}
    return there is not None and (here is None or order[there] > order[here])


def test_no_run_time_arrow_runs_up_but_through_the_declared_seam():
    """What ``import`` statements do not show: ``import_module`` calls, ``-m`` commands of a subprocess and the seam
    table's entries. A top-level module reaches a stage only through :mod:`docnmt.seams`, and a stage no later one."""
    bad, seen = [], set()
    for name, path in modules().items():
        for target, line, how in runtime_imports(name):
            if name == SEAM_MODULE and how == "seam":
                continue
            seen.add((name, target))
            if _runs_up(stage_of(name), stage_of(target)) and (name, target) not in UPWARD_EXCEPTIONS:
                bad.append(f"{path}:{line}: docnmt.{name} reaches docnmt.{target} at run time ({how}), which runs up")
    assert not bad, "\n".join(bad)
    assert set(UPWARD_EXCEPTIONS) <= seen, f"exceptions no longer needed: {set(UPWARD_EXCEPTIONS) - seen}"


def test_the_seam_table_names_modules_and_objects_that_exist_and_is_used_by_the_top_level_only():
    import ast as syntax

    from docnmt.seams import SEAMS

    known = modules()
    for entry, target in SEAMS.items():
        module, _, obj = target.partition(":")
        name = module.removeprefix("docnmt.")
        assert name in known, f"seam {entry!r}: no module {module}"
        tree = syntax.parse(known[name].read_text(encoding="utf-8"))
        defined = {n.name for n in tree.body if isinstance(n, (syntax.FunctionDef, syntax.ClassDef))} | {
            t.id for n in tree.body if isinstance(n, (syntax.Assign, syntax.AnnAssign))
            for t in (n.targets if isinstance(n, syntax.Assign) else [n.target]) if isinstance(t, syntax.Name)}
        assert obj in defined, f"seam {entry!r}: {module} defines no {obj}"
    users = {name for name in known for target, _ in internal_imports(name) if target == SEAM_MODULE}
    assert users and all(stage_of(user) is None for user in users), users


def test_the_runtime_reader_finds_each_kind_of_reference(tmp_path, monkeypatch):
    import packagegraph

    (tmp_path / "docnmt" / "decode").mkdir(parents=True)
    (tmp_path / "docnmt" / "decode" / "__init__.py").write_text("")
    (tmp_path / "docnmt" / "__init__.py").write_text("")
    (tmp_path / "docnmt" / "top.py").write_text(
        "import importlib, subprocess, sys\n"
        "importlib.import_module('docnmt.decode')\n"
        "importlib.import_module(f'docnmt.decode.{sys.argv[1]}')\n"
        "subprocess.run([sys.executable, '-m', 'docnmt.decode'])\n"
        "SEAMS = {'x': 'docnmt.decode:thing'}\n")
    monkeypatch.setattr(packagegraph, "PACKAGE", tmp_path / "docnmt")
    assert sorted((t, how) for t, _, how in packagegraph.runtime_imports("top")) == [
        ("decode", "-m"), ("decode", "import_module"), ("decode", "import_module"), ("decode", "seam")]


def test_no_import_cycles():
    graph = {name: {t for t, _ in internal_imports(name) if t != name} for name in modules()}
    # a package's __init__ is imported before its modules: an import of it is no edge back
    graph = {name: {t for t in targets if not (name.startswith(t + ".") or t == "")} for name, targets in graph.items()}
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(name):
        state[name] = 1
        stack.append(name)
        for target in sorted(graph[name]):
            if state.get(target) == 1:
                cycle = stack[stack.index(target):] + [target]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if target not in state:
                visit(target)
        stack.pop()
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name)


def test_each_rule_file_calls_only_clis_of_its_own_subpackage():
    known = modules()
    calls = 0
    for smk in sorted((REPO / "rules").glob("*.smk")):
        for number, line in enumerate(smk.read_text(encoding="utf-8").splitlines(), start=1):
            for module in re.findall(r"python -m docnmt\.([\w.]+)", line):
                calls += 1
                assert module in known, f"{smk.name}:{number}: docnmt.{module} is no module"
                assert stage_of(module) == smk.stem, f"{smk.name}:{number}: calls docnmt.{module}, not of docnmt.{smk.stem}"
                assert 'if __name__ == "__main__"' in known[module].read_text(encoding="utf-8"), module
    assert calls >= 20


def test_no_module_and_no_class_over_the_limits():
    too_long = []
    for name, path in modules().items():
        text = path.read_text(encoding="utf-8")
        lines = len(text.splitlines())
        if lines > MAX_MODULE_LINES and name not in EXCEPTIONS:
            too_long.append(f"{path}: {lines} lines (at most {MAX_MODULE_LINES})")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ClassDef):
                length = node.end_lineno - node.lineno + 1
                if length > MAX_CLASS_LINES and f"{name}.{node.name}" not in EXCEPTIONS:
                    too_long.append(f"{path}:{node.lineno}: class {node.name} has {length} lines (at most {MAX_CLASS_LINES})")
    assert not too_long, "\n".join(too_long)


def test_no_function_over_the_limit():
    too_long = []
    for name, path in modules().items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                if length > MAX_FUNCTION_LINES and f"{name}.{node.name}" not in EXCEPTIONS:
                    too_long.append(f"{path}:{node.lineno}: {node.name} has {length} lines (at most "
                                    f"{MAX_FUNCTION_LINES})")
    assert not too_long, "\n".join(too_long)


def test_tests_mirror_the_subpackages():
    tests = Path(__file__).resolve().parent
    for stage in LAYERS:
        assert list((tests / stage).glob("test_*.py")), f"tests/{stage}/ has no tests"
    names = [p.name for p in tests.rglob("test_*.py")]
    assert len(names) == len(set(names)), "two test files with one name (pytest's rootdir-relative imports need unique ones)"

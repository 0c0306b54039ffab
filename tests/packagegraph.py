"""The docnmt package read from its source (ast): its modules and what each imports.

Used by the structure test (tests/test_structure.py) and the environment test
(tests/test_envs.py). A module is named by its dotted path inside the package:
``"textio"``, ``"corpora.corpus"``; a package by its folder (``"corpora"``,
``""`` for docnmt itself), which stands for its ``__init__.py``.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "scripts" / "docnmt"

#: The subpackages in workflow order: one per rule file (rules/{stage}.smk).
STAGES = ("corpora", "preprocess", "train", "decode", "score")
#: The rules' logic (input functions, parameters, targets): after every stage, whose registries it reads.
WORKFLOW = "workflow"
#: The subpackages in import order: a subpackage imports only earlier ones and the top-level modules.
LAYERS = STAGES + (WORKFLOW,)


def modules() -> dict[str, Path]:
    """Every module and package of docnmt by name."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _is_package(name: str) -> bool:
    return modules()[name].name == "__init__.py"


def _resolve(name: str, parts: list[str], known: dict) -> str | None:
    dotted = ".".join(p for p in parts if p)
    return dotted if dotted in known else None


def internal_imports(name: str) -> list[tuple[str, int]]:
    """The docnmt modules ``name`` imports (anywhere in the file, function bodies too), with line numbers."""
    known = modules()
    tree = ast.parse(known[name].read_text(encoding="utf-8"))
    package = name.split(".") if _is_package(name) else name.split(".")[:-1]
    package = [p for p in package if p]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - (node.level - 1)] if node.level > 1 else list(package)
            elif node.module and node.module.split(".")[0] == "docnmt":
                base = []
            else:
                continue
            module = node.module.split(".") if node.module else []
            if not node.level:
                module = module[1:]  # drop "docnmt"
            target = _resolve(name, base + module, known)
            for alias in node.names:
                sub = _resolve(name, base + module + [alias.name], known)
                found.append((sub if sub is not None else target, node.lineno))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "docnmt":
                    found.append((_resolve(name, parts[1:], known), node.lineno))
    for target, line in found:
        assert target is not None, f"{known[name]}:{line}: an import of docnmt that names no module of the package"
    return found


def third_party_imports(name: str, seen: set | None = None) -> set[str]:
    """Top-level third-party imports of ``name`` and of the docnmt modules it imports, transitively."""
    seen = set() if seen is None else seen
    if name in seen:
        return set()
    seen.add(name)
    out = set()
    for node in ast.walk(ast.parse(modules()[name].read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level:
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module]
            for imported in names:
                top = imported.split(".")[0]
                if top not in sys.stdlib_module_names and top != "docnmt":
                    out.add(top)
    for target, _ in internal_imports(name):
        out |= third_party_imports(target, seen)
    return out


def stage_of(name: str) -> str | None:
    """The subpackage (a stage, or workflow) a module belongs to; None for the top-level helpers."""
    first = name.split(".")[0]
    return first if first in LAYERS else None


def _static_prefix(node) -> str | None:
    """The text of a string constant, or of an f-string up to its first replacement field; None for anything else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        text = ""
        for part in node.values:
            if not (isinstance(part, ast.Constant) and isinstance(part.value, str)):
                break
            text += part.value
        return text
    return None


def _module_named(text: str, known: dict) -> str | None:
    """The docnmt module a dotted name (or its static prefix) names: the longest known module it starts with."""
    parts = [p for p in text.split(":")[0].split(".") if p]
    if not parts or parts[0] != "docnmt":
        return None
    for end in range(len(parts), 0, -1):
        name = ".".join(parts[1:end])
        if name in known:
            return name
    return None


def runtime_imports(name: str) -> list[tuple[str, int, str]]:
    """The docnmt modules ``name`` reaches at run time, which ``import`` statements do not show: the argument of an
    ``importlib.import_module``/``import_module`` call (a string, or an f-string's text before its first field),
    the module after ``"-m"`` in a command's list or tuple (a subprocess), and each ``module:object`` value of a
    ``SEAMS`` table. Each as (module, line, how)."""
    known = modules()
    found = []
    for node in ast.walk(ast.parse(known[name].read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if called == "import_module" and node.args:
                text = _static_prefix(node.args[0])
                target = _module_named(text, known) if text else None
                if target is not None:
                    found.append((target, node.lineno, "import_module"))
        elif isinstance(node, (ast.List, ast.Tuple)):
            items = [_static_prefix(item) for item in node.elts]
            for item, following in zip(items, items[1:]):
                target = _module_named(following, known) if item == "-m" and following else None
                if target is not None:
                    found.append((target, node.lineno, "-m"))
        elif isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "SEAMS" for t in node.targets):
            for value in getattr(node.value, "values", []):
                text = _static_prefix(value)
                target = _module_named(text, known) if text else None
                if target is not None:
                    found.append((target, value.lineno, "seam"))
    return found

"""The README and the manual in docs/ against the code: links and paths exist, every CLI, command and make target
they name exists and answers --help (called as a user calls it: the console script, or `python -m`, with the
installed package and nothing added to the path), the configuration page equals the schema, every CLI's help
names its stage and rules, every console-script command the pages show parses as written (make test's dry run
of them), and every "see README, 'X'" in the code names a heading that exists (the README's offline commands run
as written in tests/test_any_path.py, its own-model commands in tests/test_external_models.py: make test-full)."""

from __future__ import annotations

import re
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

import pytest

from docnmt.score import metric as registry

from helpers import REPO, block_commands, tool_env
from docnmt.config import schema_keys, schema_markdown
from docnmt.manual import COMMANDS, STAGES, clis, command

CLIS = clis()

PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
#: Backticked names that are repository paths when they start like this.
PATH_START = re.compile(r"^(?:rules|scripts|envs|schemas|profiles|bench|tests|docs|report|\.ci)/")
TOP_FILES = {"Snakefile", "Makefile", "config.yaml", "requirements.txt", "requirements-base.txt",
             "requirements-models.txt", "README.md"}


def text(page: Path) -> str:
    return page.read_text(encoding="utf-8")


def slug(heading: str) -> str:
    """GitHub's anchor of a Markdown heading."""
    heading = re.sub(r"[`*_]", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", heading).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    inside, found = False, set()
    for line in text(page).splitlines():
        if line.startswith("```"):
            inside = not inside
        elif not inside and line.startswith("#"):
            found.add(slug(line.lstrip("#")))
    return found


#: A duration in prose: seconds, minutes or hours, or m:ss.
DURATION = re.compile(r"\b\d+(?:[.,]\d+)?\s?(?:minutes?|min|hours?|seconds?|s|ms)\b|\b\d{1,2}:\d\d\b")
#: The durations a page may state outside docs/benchmarks.md: settings and budgets, not measurements.
SETTINGS = {
    "README.md": ["96 hours"],  # the Slurm profile's limit of a training
    "cluster.md": ["300 s"],  # Slurm's MinJobAge
    "development.md": ["2 minutes", "20 minutes", "45 minutes", "60 s"],  # the tiers' budgets, the setup warning
    "scoring.md": ["30 s", "10 s"],  # make models' network timeout, the COMET scorer's grace to exit
}


def test_measured_times_are_quoted_from_the_benchmarks_page_only():
    """How long something takes is stated once, in docs/benchmarks.md with its date and machine; the README, the
    other pages (outside their code blocks) and `make help` link there, and state only settings and budgets."""
    found = []
    for page in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        if page.name == "benchmarks.md":
            continue
        allowed = list(SETTINGS.get(page.name, []))
        in_block = False
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), start=1):
            if line.startswith("```"):
                in_block = not in_block
                continue
            for match in ([] if in_block else DURATION.finditer(line)):
                if match.group(0) in allowed:
                    allowed.remove(match.group(0))
                else:
                    found.append(f"{page.name}:{number}: {match.group(0)}")
    helps = [line for line in (REPO / "Makefile").read_text(encoding="utf-8").splitlines() if "## " in line]
    found += [f"Makefile: {m.group(0)}" for line in helps for m in DURATION.finditer(line.split("## ", 1)[1])]
    assert not found, "times belong in docs/benchmarks.md (link there): " + ", ".join(found)
    assert "## The commands' times" in (REPO / "docs" / "benchmarks.md").read_text(encoding="utf-8")


def test_the_readme_is_short_and_its_first_commands_cover_the_paper_own_corpus_and_cluster():
    lines = text(REPO / "README.md").splitlines()
    assert len(lines) <= 200, f"README.md has {len(lines)} lines"
    first_screen = "\n".join(lines[:60])
    for needed in ("make demo", "make test", "--config 'tasks=[news,ted,os]'", "--profile profiles/slurm",
                   "--sdm conda", "--configfile mine.yaml"):
        assert needed in first_screen, f"the README's first screen lacks {needed!r}"
    assert "Before the ambiguous antecedents" not in "\n".join(text(p) for p in PAGES), "history belongs to git"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_relative_link_and_anchor_exists(page):
    for target in re.findall(r"\]\(([^)\s]+)\)", text(page)):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        assert resolved.exists(), f"{page.name}: link to {target} (no {resolved})"
        if anchor and resolved.suffix == ".md":
            assert anchor in anchors(resolved), f"{page.name}: link to {target}: no heading with that anchor"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_repository_path_named_exists(page):
    named = set(re.findall(r"`([^`\s]+)`", text(page)))  # in backticks, and bare in prose and commands
    named |= set(re.findall(r"(?<![\w/.{}-])((?:rules|scripts|envs|schemas|profiles|bench|tests|docs|report|\.ci)"
                            r"/[\w./{}<>*-]*[\w/])", text(page)))
    paths = {n.rstrip(".,:;") for n in named if PATH_START.match(n) or n in TOP_FILES}
    paths = {p for p in paths if not re.search(r"[{}<>*…]|\.\.\.", p)}
    missing = sorted(p for p in paths if not (REPO / p).exists())
    assert not missing, f"{page.name} names paths that do not exist: {missing}"
    assert paths, f"{page.name} names no repository path at all"


def named_modules() -> set[str]:
    return {m for page in PAGES for m in re.findall(r"python -m (docnmt(?:\.[a-z_][a-z0-9_]*)+)(?![\w.])", text(page))}


def named_commands() -> set[str]:
    """The ``docnmt-...`` commands the pages name (docnmt-search is the project's name)."""
    return {c for page in PAGES for c in re.findall(r"(?<![\w./-])(docnmt-[a-z][a-z-]*[a-z])(?![\w-])", text(page))
            } - {"docnmt-search"}


def bash_blocks(page: Path) -> list[str]:
    return re.findall(r"^```bash\n(.*?)^```", text(page), re.S | re.M)


@lru_cache(maxsize=None)
def help_text(module: str) -> str:
    """``python -m MODULE --help``, in this process: the module's ``main(["--help"])`` (a new process per CLI cost
    a second or more of imports each; the console scripts' own start is checked once, by
    :func:`test_a_console_script_answers_help_as_a_user_types_it`)."""
    import contextlib
    import importlib
    import io

    import inspect
    from unittest import mock

    main = importlib.import_module(module).main
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as stopped:
        if inspect.signature(main).parameters:
            main(["--help"])
        else:  # a wrapper that hands its command line on to the tool it wraps (fairseq-train) reads sys.argv
            with mock.patch.object(sys, "argv", [module, "--help"]):
                main()
    assert stopped.value.code in (0, None), f"python -m {module} --help exited {stopped.value.code}"
    assert f"python -m {module}" in out.getvalue().splitlines()[0], out.getvalue()[:200]
    return out.getvalue()


def test_a_console_script_answers_help_as_a_user_types_it():
    """A console script as a user runs it: from a folder outside the checkout, with nothing added to the path, named
    as it was typed; the same help as ``python -m`` gives in process."""
    for name in ("docnmt-translate", "docnmt-bleu-ter"):
        env = {k: v for k, v in tool_env().items() if k != "PYTHONPATH"}
        result = subprocess.run([str(Path(sys.executable).parent / name), "--help"], capture_output=True, text=True,
                                env=env, cwd=Path(sys.prefix), timeout=300)
        assert result.returncode == 0, f"{name} --help failed:\n{result.stderr[-2000:]}"
        assert result.stdout.splitlines()[0].startswith(f"usage: {name} "), result.stdout[:200]
        module = COMMANDS[name]
        # the same options and texts; only the usage lines name the program another way
        options = result.stdout.split("\n\n", 1)[1]
        assert options == help_text(module).split("\n\n", 1)[1], f"{name}: another help than python -m {module}'s"


def test_every_cli_the_docs_name_exists_in_the_map_and_every_module_they_name_exists():
    named = named_modules()
    assert len(named) >= 5
    unknown = sorted(named - set(CLIS))
    assert not unknown, f"the docs name CLIs that do not exist: {unknown}"
    modules = {m for page in PAGES for m in re.findall(r"`(docnmt(?:\.\w+)+)", text(page))}
    missing = sorted(m for m in modules if not _module_exists(m))
    assert not missing, f"the docs name modules that do not exist: {missing}"


def cli_modules() -> list[str]:
    found = []
    for path in sorted((REPO / "scripts" / "docnmt").rglob("*.py")):
        if re.search(r"^def main\(", path.read_text(encoding="utf-8"), re.M):
            found.append(".".join(path.relative_to(REPO / "scripts").with_suffix("").parts))
    return found


def test_every_cli_of_the_package_is_in_the_map():
    assert sorted(CLIS) == cli_modules()


@pytest.mark.parametrize("module", sorted(CLIS))
def test_every_cli_answers_help_with_its_stage_rules_and_manual_page(module):
    stage, rules = CLIS[module]
    shown = " ".join(help_text(module).split())
    assert f"Stage: {stage};" in shown, shown[-300:]
    assert f"Manual: {STAGES[stage][0]}." in shown
    if command(module):
        assert f"Command: {command(module)} (or python -m {module})." in shown
    for rule in rules:
        assert rule in shown, f"python -m {module} --help does not name its rule {rule}"
    assert (REPO / STAGES[stage][0]).exists()


def test_every_command_the_docs_name_exists_and_their_code_blocks_use_the_commands():
    named = named_commands()
    assert {"docnmt-translate", "docnmt-check-model", "docnmt-check-config", "docnmt-check-corpus"} <= named
    assert not named - set(COMMANDS), f"the docs name commands that do not exist: {sorted(named - set(COMMANDS))}"
    for page in PAGES:
        for block in bash_blocks(page):
            for module in re.findall(r"python -m (docnmt(?:\.\w+)+)", block):
                assert not command(module), f"{page.name}: a code block runs python -m {module}; show {command(module)}"


def test_every_reference_to_a_heading_names_one_that_exists():
    """"see README, 'X'", "docs/decoding.md, 'X'", "(README: "X")" in the code, config, Makefile and tests."""
    headings = {page.relative_to(REPO).as_posix(): {h.lower() for h in re.findall(r"^#+ (.+?)\s*$", re.sub(
        r"^```.*?^```", "", text(page), flags=re.S | re.M), re.M)} for page in PAGES}
    pattern = re.compile(r"\b(README|docs/[\w-]+\.md)(?:\.md)?(?:, |: | )(?:section )?(?:\"([^\"\n]+)\"|'([^'\n]+)'|“([^”\n]+)”)")
    listed = subprocess.run(["git", "-C", str(REPO), "ls-files", "--cached", "--others", "--exclude-standard"],
                            capture_output=True, text=True, check=True).stdout.split()
    found = 0
    for name in listed:
        path = REPO / name
        if path.suffix == ".md" or not path.is_file() or path.stat().st_size > 2_000_000 or "/data/" in name \
                or path == Path(__file__).resolve():
            continue
        try:
            source = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        source = re.sub(r"[\"']\s*\n\s*[\"']", "", source)  # one Python string over several lines
        for page, *quoted in pattern.findall(source):
            page, heading = "README.md" if page == "README" else page, "".join(quoted)
            found += 1
            assert page in headings, f"{name} refers to {page}, which does not exist"
            assert heading.lower() in headings[page], f"{name} refers to {page}, {heading!r}: no such heading"
    assert found >= 3, "the pattern no longer finds the code's references to the manual"


def rule_blocks() -> dict[str, set[str]]:
    """Rule name (a pattern where the name is computed) -> the docnmt CLIs its shell command calls."""
    blocks: dict[str, set[str]] = {}
    for smk in sorted((REPO / "rules").glob("*.smk")):
        source = smk.read_text(encoding="utf-8")
        for part in re.split(r"\n(?=rule \w|checkpoint \w|    rule:|for )", source):
            name = re.match(r"(?:rule|checkpoint) (\w+)", part)
            if name:
                pattern = name.group(1)
            else:
                computed = re.search(r"name:\s*\n\s*(f?\"[^\"]+\"|\w+\(\w+\))", part)
                if not computed:
                    continue
                pattern = computed.group(1)
                pattern = "decode_\\w+" if pattern.startswith("strategy_rule_name") else \
                    re.sub(r"\{[^}]+\}", "\\\\w+", pattern.lstrip("f").strip('"'))
            modules = set(re.findall(r"python -m (docnmt(?:\.\w+)+)", part))
            if modules:
                blocks[pattern] = modules
    # the metric seam's rules: one per declared metric, named as it, calling its module (docnmt.score.registry)
    blocks.update({m.name: {m.module} for m in registry.metrics().values() if m.rule})
    # the pooled variants' rules: one per declared pooled variant, named by it, calling its module
    from docnmt.decode.variants import variants

    blocks.update({v.rule: {v.module} for v in variants().values() if v.pooled})
    return blocks


def test_the_cli_map_matches_the_rules_both_ways():
    from docnmt.decode.strategies import STRATEGIES

    every = f"strategies=[{','.join(STRATEGIES)}]"  # the default config has the paper's nine
    listed = subprocess.run([sys.executable, "-m", "snakemake", "--list-rules", "--config", "tasks=[news,ted,os,demo]",
                             every],
                            capture_output=True, text=True, cwd=REPO, env=tool_env(), timeout=300)
    assert listed.returncode == 0, listed.stderr[-2000:]
    rules = set(listed.stdout.split())
    called_by: dict[str, set[str]] = {m: set() for m in CLIS}
    for pattern, modules in rule_blocks().items():
        matching = {r for r in rules if re.fullmatch(pattern, r)}
        if pattern == "decode_\\w+":
            matching.discard("check_model")
        assert matching, f"no rule matches {pattern}"
        for module in modules:
            assert module in CLIS, f"rule {pattern} calls {module}, which the map lacks"
            called_by[module] |= matching
    for module, (_, mapped) in CLIS.items():
        assert set(mapped) == called_by[module], f"{module}: map says {sorted(mapped)}, rules say " \
                                                  f"{sorted(called_by[module])}"


def test_every_make_target_named_exists_and_make_help_lists_every_target():
    makefile = text(REPO / "Makefile")
    targets = set(re.findall(r"^([a-z][a-z-]*):", makefile, re.M))
    named = {t for page in PAGES for t in re.findall(r"(?<![\w-])make ([a-z][a-z-]*)", text(page))}
    assert {"demo", "test"} <= named
    assert not named - targets, f"the docs name make targets that do not exist: {sorted(named - targets)}"
    phony = set(re.search(r"^\.PHONY: (.*)$", makefile, re.M).group(1).split())
    shown = subprocess.run(["make", "--no-print-directory", "help"], capture_output=True, text=True, cwd=REPO,
                           check=True).stdout
    listed = {line.split()[0] for line in shown.splitlines() if line.strip()}
    assert listed == phony, f"make help lists {sorted(listed)}, .PHONY has {sorted(phony)}"
    assert all(len(line.split(None, 1)) == 2 for line in shown.splitlines() if line.strip()), "one line each"


def test_the_configuration_page_is_the_schema():
    page = text(REPO / "docs/configuration.md")
    block = re.search(r"<!-- generated: python -m docnmt.config --markdown -->\n(.*?)<!-- end generated -->", page,
                      re.S)
    assert block, "docs/configuration.md lacks its generated table"
    assert block.group(1) == schema_markdown(), "docs/configuration.md is stale: regenerate it with " \
                                                "python -m docnmt.config --markdown"
    keys = {path for path, *_ in schema_keys()}
    on_page = set(re.findall(r"^\| `([^`]+)` \|", block.group(1), re.M))
    assert on_page == keys
    for path, _, _, description in schema_keys():
        assert description, f"schema key {path} has no description"


def test_every_key_of_config_yaml_is_on_the_configuration_page():
    import yaml

    keys = {path for path, *_ in schema_keys()}

    def walk(node, path):
        if not isinstance(node, dict):
            return
        for key, value in node.items():
            full = f"{path}.{key}" if path else key
            generic = re.sub(r"^(task_settings|sources|training\.presets|training\.runtime_minutes|ctxpro\.sets)\.[^.]+",
                             lambda m: m.group(1) + {"task_settings": ".<task>", "sources": ".<source>",
                                                     "ctxpro.sets": ".<name>"}.get(m.group(1), ".<preset>"), full)
            if full.startswith(("training.presets.", "training.runtime_minutes.")) or ".members." in full:
                continue  # fairseq options, per-preset limits, archive members by role: free-form by design
            assert generic in keys or full in keys, f"config.yaml key {full} is not on the configuration page"
            walk(value, full)

    walk(yaml.safe_load(text(REPO / "config.yaml")), "")


# The README's offline commands (the demo's data stage and a dry run of the paper's DAG) run as written, after
# the README's activation line, from a checkout whose path has a space, quotes, `$` and a non-ASCII letter:
# tests/test_any_path.py (readme_data_run).


def test_the_strategy_registry_names_the_decode_rules_of_the_cli_map_and_the_slurm_profile():
    """The rule names of the decode CLI in the map (manual.clis) and in the Slurm profile's set-resources are the
    registry's, each strategy's rule once (the rules themselves are made from the registry, rules/decode.smk)."""
    import yaml

    from docnmt.decode.strategies import STRATEGIES

    rules = [info.rule for info in STRATEGIES.values()]
    assert clis()["docnmt.decode.cli"][1] == rules
    profile = yaml.safe_load((REPO / "profiles/slurm/config.yaml").read_text(encoding="utf-8"))
    decode = sorted(name for name in profile["set-resources"] if name.startswith("decode_"))
    assert decode == sorted(rules), "profiles/slurm/config.yaml: one set-resources entry per strategy's decode rule"
    # the rules declare their gpu count (a vLLM task's: tensor_parallel_size); the profile must not override it
    assert all(profile["set-resources"][rule] == {"cpus_per_task": 2} for rule in rules)
    gpu_metrics = [m.name for m in registry.metrics().values() if m.rule and m.gpu]
    assert gpu_metrics and all("gpu" not in profile["set-resources"][name] for name in gpu_metrics)


def test_the_generated_parts_of_the_docs_and_the_slurm_profile_are_the_registries():
    """docs/architecture.md's tables of backends and metrics and the Slurm profile's resources of the registries'
    rules are as python -m docnmt.workflow.registry_tables writes them."""
    from docnmt.workflow.registry_tables import COMMAND, stale

    assert stale() == {}, f"stale: {', '.join(stale())}; regenerate with {COMMAND}"


def _module_exists(name: str) -> bool:
    """A module of the package, or a name one of its modules defines (``docnmt.decode.backend.REGISTRY``)."""
    package = REPO / "scripts"
    path = package / name.replace(".", "/")
    if path.with_suffix(".py").exists() or (path / "__init__.py").exists():
        return True
    module, _, attribute = name.rpartition(".")
    source = package / module.replace(".", "/")
    source = source.with_suffix(".py") if source.with_suffix(".py").exists() else source / "__init__.py"
    return source.exists() and re.search(rf"^(?:def|class) {re.escape(attribute)}\b|^{re.escape(attribute)}"
                                         rf"(?:: [^=]+)? = ", source.read_text(encoding="utf-8"), re.M) is not None


def test_the_architecture_page_names_modules_that_exist_and_every_subpackage():
    page = text(REPO / "docs/architecture.md")
    named = set(re.findall(r"docnmt(?:\.[A-Za-z_][A-Za-z0-9_]*)+", page))
    missing = sorted(name for name in named if not _module_exists(name))
    assert not missing, f"docs/architecture.md names modules that do not exist: {missing}"
    subpackages = {".".join(p.parent.relative_to(REPO / "scripts").parts)
                   for p in (REPO / "scripts/docnmt").rglob("__init__.py")} - {"docnmt"}
    assert not subpackages - named, f"docs/architecture.md leaves out {sorted(subpackages - named)}"


def test_the_development_page_lists_every_module_of_the_package():
    """Its package table names each module of a subpackage (`corpus`, `prompting.template`, ...) in that subpackage's
    row, and each top-level module in the row of `docnmt`; a backend package and a metric module are the registries'
    (test_structure.found_by_a_registry), described by their declarations."""
    from test_structure import found_by_a_registry

    page = text(REPO / "docs/development.md")
    rows = {m.group(1): m.group(2) for m in re.finditer(r"^\| `(docnmt(?:\.\w+)?)`[^|]*\|[^|]*\| (.*) \|$", page,
                                                         re.M)}
    missing = []
    for path in sorted((REPO / "scripts/docnmt").rglob("*.py")):
        parts = path.relative_to(REPO / "scripts").with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if len(parts) < 2:
            continue
        row = ".".join(parts[:2]) if len(parts) > 2 or (REPO / "scripts" / "/".join(parts)).is_dir() else "docnmt"
        name = ".".join(parts[2:]) if row != "docnmt" else parts[1]
        if row == ".".join(parts) or found_by_a_registry(".".join(parts[1:])):  # the subpackage; a registry's find
            continue
        if f"`{name}`" not in rows.get(row, "") and f"`{name.rsplit('.', 1)[-1]}`" not in rows.get(row, ""):
            missing.append(".".join(parts))
    assert not missing, f"docs/development.md's package table leaves out {missing}"


class _Parsed(Exception):
    """Raised where a CLI's command line has been parsed, before the CLI does anything with it."""


def parse_only(module: str, argv: list[str]):
    """``python -m MODULE ARGV``'s command line as its own ``main`` parses it, in this process, stopped right after
    the outermost parse (a dry run of the command): (the namespace, the words left over); a word its parser refuses
    raises SystemExit, as the command does."""
    import argparse
    import importlib
    from unittest import mock

    real = argparse.ArgumentParser.parse_known_args
    depth = 0

    def parse_known_args(self, args=None, namespace=None):
        nonlocal depth
        depth += 1
        try:
            parsed = real(self, args, namespace)
        finally:
            depth -= 1
        if depth == 0:
            raise _Parsed(parsed)
        return parsed

    main = importlib.import_module(module).main
    with mock.patch.object(argparse.ArgumentParser, "parse_known_args", parse_known_args):
        try:
            main(argv)
        except _Parsed as parsed:
            return parsed.args[0]
    raise AssertionError(f"python -m {module} {argv}: main returned without parsing its command line")


def documented_commands() -> list[tuple[str, list[str]]]:
    """Every console-script command of the README's and the manual's bash blocks and of the README's inline code,
    as written: (page, its words), continuation lines joined, comments cut, each part of a line joined by && || ;
    or | on its own, leading VAR=value assignments dropped."""
    import shlex

    found = []
    for page in PAGES:
        prose = re.sub(r"^```.*?^```", "", text(page), flags=re.S | re.M)
        # the README names whole commands inline too (its own corpus's two checks); the manual's inline code is
        # a command's name and an option or two
        inline = re.findall(r"`(docnmt-[\w-]+ [^`\n]*)`", prose) if page.name == "README.md" else []
        for block in bash_blocks(page) + inline:
            for line in block_commands(block):
                for part in re.split(r"\s*(?:&&|\|\||;|\|)\s*", line):
                    words = shlex.split(part)
                    while words and re.match(r"^[A-Z_]+=", words[0]):
                        words = words[1:]
                    if words and words[0] in COMMANDS:
                        found.append((page.relative_to(REPO).as_posix(), words))
    return found


def test_every_documented_command_parses_as_written():
    """make test's dry run of each console-script command the pages show (the full tier runs the blocks for real:
    docs/development.md, "Tests"): its CLI's own parser takes every option and value as written, with none left
    over, in this process."""
    commands = documented_commands()
    assert len(commands) >= 15, commands
    assert {"docnmt-translate", "docnmt-check-model", "docnmt-check-corpus", "docnmt-check-config"} <= \
        {words[0] for _, words in commands}
    for page, words in commands:
        try:
            _, extra = parse_only(COMMANDS[words[0]], words[1:])
        except SystemExit as refused:
            raise AssertionError(f"{page}: {' '.join(words)}: refused by its parser (exit {refused.code})") from None
        assert not extra, f"{page}: {' '.join(words)}: words its parser does not know: {extra}"


def test_a_documented_command_with_a_wrong_option_is_refused_by_the_dry_run(capsys):
    """The dry run above catches a page whose command lost an option of the CLI (a rename, a typo: left over) or
    shows a value the option refuses (exit 2, as the command)."""
    page, words = next((page, words) for page, words in documented_commands() if words[0] == "docnmt-translate")
    namespace, extra = parse_only(COMMANDS["docnmt-translate"], words[1:])
    assert namespace.document_model and not extra
    assert parse_only(COMMANDS["docnmt-translate"], words[1:] + ["--no-such-option", "1"])[1] == \
        ["--no-such-option", "1"]
    with pytest.raises(SystemExit) as refused:
        parse_only(COMMANDS["docnmt-translate"], words[1:] + ["--strategy", "no-such-strategy"])
    assert refused.value.code == 2 and "no-such-strategy" in capsys.readouterr().err


def test_the_registry_tables_cli_names_a_stale_file_rewrites_only_its_parts_and_names_a_missing_marker(tmp_path,
                                                                                                      capsys):
    from docnmt.workflow.registry_tables import main

    for name in ("docs/architecture.md", "profiles/slurm/config.yaml"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text((REPO / name).read_text(encoding="utf-8"), encoding="utf-8")
    page = tmp_path / "docs/architecture.md"
    page.write_text(page.read_text().replace("| `vllm` |", "| `vllm-old` |"))
    assert main(["--check", "--checkout", str(tmp_path)]) == 1
    assert capsys.readouterr().err == ("docs/architecture.md: stale; regenerate it with "
                                       "python -m docnmt.workflow.registry_tables\n")
    assert main(["--checkout", str(tmp_path)]) == 0
    assert page.read_text() == (REPO / "docs/architecture.md").read_text()
    assert main(["--check", "--checkout", str(tmp_path)]) == 0
    page.write_text(page.read_text().replace("<!-- generated: python -m docnmt.workflow.registry_tables: metrics -->\n",
                                             ""))
    assert main(["--checkout", str(tmp_path)]) == 2
    assert f"error: {page}: the generated part 'metrics' needs its markers" in capsys.readouterr().err

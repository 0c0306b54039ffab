"""A built-in backend, a built-in metric and a built-in variant are each one new package or module and nothing else:
in a copy of the tree (a git repository of this checkout's files), a toy backend package under
docnmt/decode/backends/, a toy metric module under docnmt/score/ and a toy variant module under docnmt/decode/ are
found by walking the package, run through docnmt-translate, the rules (a dry run lists the metric's rule and the
variant's decode) and Table 3, and `git status` shows only the three new files."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from helpers import REPO, tool_env

from toy_backend_source import DOCS, LEXICON, TOY_INIT, TOY_MODEL, translated

#: What the copy holds: the package and what the workflow reads from the checkout.
COPIED = ("scripts", "schemas", "rules", "envs", "profiles", "config.yaml", "Snakefile", "pyproject.toml")
BACKEND = "scripts/docnmt/decode/backends/toy_builtin/"
METRIC = "scripts/docnmt/score/toy_length.py"
VARIANT = "scripts/docnmt/decode/toy_variant.py"
#: The toy variant: doc-trans decoded in batches of 8 (the same translations), as the system doc-trans+small-batch.
TOY_VARIANT = '''"""A toy variant: doc-trans in batches of eight requests."""
from docnmt.decode.variants import Variant

VARIANT = Variant(kind="small-batch", suffix="+small-batch", label="small batches", block="", order=50,
                  describe="doc-trans in batches of eight requests",
                  strategies=lambda config: [s for s in ("doc-trans",) if s in config["strategies"]],
                  options=lambda config, system: ["--batch-size", "8"])
'''

#: A copy of the tree, its package's commands and a workflow dry run there: make test's, not make test-fast's.
pytestmark = pytest.mark.workflow


def git(folder: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=folder, check=True, capture_output=True, text=True).stdout


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    """The copy, committed, then the toy backend package and the toy metric module added, uncommitted."""
    root = tmp_path_factory.mktemp("a copy of the tree") / "checkout"
    root.mkdir()
    tracked = git(REPO, "ls-files", "-co", "--exclude-standard", *COPIED).splitlines()
    for name in tracked:
        if (REPO / name).is_file():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, root / name)
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "copy")
    package = root / BACKEND
    package.mkdir()
    init = textwrap.dedent(TOY_INIT).replace('name="toy"', 'name="toy", order=50')
    (package / "__init__.py").write_text(init, encoding="utf-8")
    (package / "model.py").write_text(textwrap.dedent(TOY_MODEL), encoding="utf-8")
    toy_metric = (REPO / "tests" / "toy_metric.py").read_text(encoding="utf-8")
    (root / METRIC).write_text(toy_metric.replace('name="toy_length",', 'name="toy_length", order=50,'),
                               encoding="utf-8")
    (root / VARIANT).write_text(TOY_VARIANT, encoding="utf-8")
    return root


def run(tree: Path, *args: str, **kwargs) -> subprocess.CompletedProcess:
    """A command with the copy's package first on the path (before the checkout's editable install)."""
    env = tool_env()
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(tree / "scripts"), env.get("PYTHONPATH")]))
    return subprocess.run(list(args), cwd=kwargs.pop("cwd", tree), env=env, capture_output=True, text=True,
                          timeout=600, **kwargs)


def test_git_status_shows_only_the_new_package_and_the_new_modules(tree):
    assert sorted(git(tree, "status", "--porcelain", "--untracked-files=normal").splitlines()) == sorted([
        f"?? {METRIC}", f"?? {BACKEND}", f"?? {VARIANT}"])


def test_the_registries_find_them_by_walking_the_package(tree):
    program = ("import docnmt\nfrom docnmt.decode.backend import REGISTRY, builtin\n"
               "from docnmt.score.metric import metrics\nfrom docnmt.config import with_backends, SCHEMA\n"
               "import yaml\nschema = with_backends(yaml.safe_load(SCHEMA.read_text()))\n"
               "print(docnmt.__file__)\nprint(' '.join(builtin()))\nprint(' '.join(REGISTRY))\n"
               "print(' '.join(metrics()))\nprint(' '.join(schema['$defs']['models']['properties']['backend']['enum']))\n"
               "from docnmt.decode.variants import variants, label\nprint(' '.join(variants()))\n"
               "print(label('doc-trans+small-batch'))")
    result = run(tree, sys.executable, "-c", program)
    assert result.returncode == 0, result.stderr
    file, packages, backends, metrics, enum, variants, label = result.stdout.splitlines()
    assert variants.split() == ["mbr", "qe", "cad", "docmbr", "small-batch"] and label == "doc-trans, small batches"
    assert file.startswith(str(tree)), file
    assert "toy_builtin" in packages.split()
    assert backends.split() == ["fairseq", "transformers", "causal-lm", "vllm", "openai", "toy"]  # by their order
    assert metrics.split()[:4] == ["bleu_ter", "comet", "metricx", "gemba"] and "toy_length" in metrics.split()
    assert "toy" in enum.split()


def test_docnmt_translate_runs_the_built_in_toy_backend(tree, tmp_path):
    (tmp_path / "lexicon").mkdir()
    (tmp_path / "lexicon/lexicon.tsv").write_text("".join(f"{k}\t{v}\n" for k, v in LEXICON.items()), encoding="utf-8")
    source = tmp_path / "docs.txt"
    source.write_text("\n\n".join("\n".join(d) for d in DOCS) + "\n", encoding="utf-8")
    out = tmp_path / "doc-trans.de"
    result = run(tree, sys.executable, "-m", "docnmt.decode.translate", "--backend", "toy", "--strategy", "doc-trans",
                 "--input", str(source), "--sentence-model", str(tmp_path / "lexicon"), "--document-model",
                 str(tmp_path / "lexicon"), "--src-lang", "en", "--tgt-lang", "de", "--beam", "1", "--output", str(out))
    assert result.returncode == 0, result.stderr
    assert out.read_text(encoding="utf-8") == "\n\n".join("\n".join(translated(s) for s in d) for d in DOCS) + "\n"


def test_the_workflow_makes_the_metrics_rule_and_table_3_shows_its_column(tree, tmp_path):
    dry = run(tree, sys.executable, "-m", "snakemake", "-n", "-p", "--directory", str(tmp_path / "work"),
              "--config", "tasks=[demo]")
    assert dry.returncode == 0, dry.stderr[-3000:]
    assert "rule toy_length:" in dry.stdout and "python -m docnmt.score.toy_length" in dry.stdout
    # the variant's system, made by doc-trans's decode rule with its options, and scored as every system
    decode = dry.stdout[dry.stdout.index("results/demo/decode/test/doc-trans+small-batch.txt") - 3000:]
    assert re.search(r"docnmt.decode.cli --strategy doc-trans --batch-size 8 .*doc-trans\+small-batch\.txt", decode)
    assert "--system doc-trans+small-batch=results/demo/decode/test/doc-trans+small-batch.txt" in dry.stdout
    files = {}
    for ext, lines in (("en", [s for d in DOCS for s in d]), ("de", [translated(s) for d in DOCS for s in d])):
        files[ext] = tmp_path / f"test.{ext}"
        files[ext].write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    systems = ["--system", f"sentence-level={files['de']}", "--system", f"doc-trans={files['de']}"]
    scores = {}
    for module in ("sacrebleu_metrics", "toy_length"):
        scores[module] = tmp_path / f"{module}.json"
        result = run(tree, sys.executable, "-m", f"docnmt.score.{module}", "--source", str(files["en"]), "--reference",
                     str(files["de"]), *systems, "--baseline", "sentence-level", "--bootstrap-samples", "20",
                     "--output", str(scores[module]))
        assert result.returncode == 0, result.stderr
    manifest = {"strategies": ["sentence-level", "doc-trans"],
                "tasks": {"demo": {"bleu_ter": {"test": str(scores["sacrebleu_metrics"])},
                                   "toy_length": {"test": str(scores["toy_length"])}}}}
    program = ("import json, sys\nfrom docnmt.score.tables import quality_table\n"
               "print(json.dumps(quality_table(json.loads(sys.argv[1])).header))")
    result = run(tree, sys.executable, "-c", program, json.dumps(manifest))
    assert result.returncode == 0, result.stderr
    assert "demo test LenRatio" in json.loads(result.stdout) and "demo test BLEU" in json.loads(result.stdout)

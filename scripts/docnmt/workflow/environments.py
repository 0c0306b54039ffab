"""Where the rules run whose code has an environment of its own (:class:`docnmt.installation.Environment`), and on
how many GPUs a task's model rules run.

An environment of its own is declared by a backend (:attr:`docnmt.decode.backend.Backend.environment`: vLLM's
``.venv-vllm``, ``make vllm``; ``envs/vllm.yaml`` with ``--sdm conda``) or by a metric
(:attr:`docnmt.score.metric.Metric.environment`: unbabel-comet's ``.venv-comet``). Its rules put
:func:`environment_path` before PATH. The rules that load a task's model (check_model, the decodes, perplexity,
CXMI) run in its backend's (:func:`env_path`, :func:`conda_env`), and take the GPUs a decode takes
(:meth:`docnmt.decode.backend.Backend.gpus`: ``models.engine_args.tensor_parallel_size``)."""

from __future__ import annotations

import os

from docnmt.config import ConfigError
from docnmt.decode.backend import backend
from docnmt.installation import Environment
from docnmt.decode.load_options import flagged_options

from .tasks import engine_args, model_backend

#: The start of the command of a rule that runs in an environment of its own (a task's backend's, vLLM's
#: .venv-vllm; unbabel-comet's .venv-comet for a metric): its folder first on PATH, or nothing (params.path empty).
PATH_PREFIX = 'export PATH={params.path:q}"$PATH"; '


def in_environment(command: str) -> str:
    """A rule's shell command run in its environment: :data:`PATH_PREFIX`, then the command."""
    return PATH_PREFIX + command


def environment(config: dict, task: str) -> Environment | None:
    """The environment of the task's backend (None: the project's)."""
    return backend(model_backend(config, task)).environment


def engine_options(config: dict, task: str) -> list[str]:
    """``--engine-args KEY=VALUE,...`` of the task's load options, or nothing; a served model's endpoint and key
    variable as ``--base-url`` and ``--api-key-env`` (a list; the rule quotes each)."""
    given = engine_args(config, task)
    named = [arg for key, spec in flagged_options().items() if key in given
             for arg in (spec.cli_flag, str(given.pop(key)))]
    return named + (["--engine-args", ",".join(f"{key}={value}" for key, value in given.items())] if given else [])


def gpus(config: dict, task: str) -> int:
    """The GPUs one of the task's decodes asks for (the rules' ``gpu`` resource)."""
    return backend(model_backend(config, task)).gpus(engine_args(config, task))


def conda_env(config: dict, task: str, default: str) -> str:
    """The conda environment file (relative to rules/) of the task's model rules: its backend's, else ``default``."""
    env = environment(config, task)
    return env.conda if env is not None else default


def configured_python(config: dict, env: Environment, basedir: str) -> str:
    """The Python of an environment of its own: the one its config key names (:attr:`Environment.python_key`), else
    its venv's in the checkout ``basedir``."""
    value = config
    for key in env.python_key.split(".") if env.python_key else ():
        value = value.get(key) if isinstance(value, dict) else None
    return value if isinstance(value, str) and value else os.path.join(basedir, env.python)


def environment_path(config: dict, env: Environment | None, basedir: str, conda: bool) -> str:
    """What a rule that runs in ``env`` puts before PATH: the folder of its Python and ':', or nothing (the project's
    environment, or --sdm conda, whose conda file provides python). A ConfigError where that Python is missing,
    naming its config key (else its make target)."""
    if env is None or conda:
        return ""
    python = configured_python(config, env, basedir)
    if not os.path.exists(python):
        make = f"run `{env.make}` (it creates {env.venv})"
        if env.python_key:
            raise ConfigError(f"config key '{env.python_key}': {python} not found; {make}, or set {env.python_key} "
                              f"to the Python of an environment with {env.requirements} and this package")
        raise ConfigError(f"{python} not found: {make}, or use --sdm conda ({env.conda.removeprefix('../')})")
    return os.path.dirname(os.path.abspath(python)) + ":"


def env_path(config: dict, task: str, basedir: str, conda: bool) -> str:
    """What a model rule puts before PATH: the folder of the backend environment's Python in the checkout
    ``basedir`` and ':', or nothing (the project's environment, or --sdm conda)."""
    env = environment(config, task)
    if env is None or conda:
        return ""
    return os.path.dirname(configured_python(config, env, basedir)) + ":"


def check(config: dict, basedir: str, conda: bool) -> None:
    """A ConfigError naming the task and the make target where a configured task's backend environment is missing
    (not with --sdm conda, which builds it)."""
    if conda:
        return
    for task in config["tasks"]:
        env = environment(config, task)
        if env is not None and not os.path.exists(os.path.join(basedir, env.python)):
            raise ConfigError(f"config key 'task_settings.{task}.models.backend': {model_backend(config, task)} "
                              f"models run in {env.venv}, which is not there: run `{env.make}` (it installs "
                              f"{env.requirements}), or use --sdm conda ({env.conda.removeprefix('../')})")

"""What every rule that loads a task's model shares (the decode rules, check_model, perplexity, cxmi), written once:
its params (the environment put first on PATH, the model's options, k, the separator, the precision), its conda
environment and its GPUs.

``rules/common.smk`` binds the params and the GPUs to the config and the checkout as ``MODEL_PARAMS`` and
``model_gpus``; a rule writes ``params: **MODEL_PARAMS, ...``, ``conda: wf.model_rules.model_conda(config, ENV)``,
and its command as ``in_environment("python -m ...")`` (:func:`docnmt.workflow.environments.in_environment`, which
puts ``params.path`` first on PATH).
"""

from __future__ import annotations

from .decode import model_args, model_level, search_dtype
from .environments import conda_env, env_path, gpus
from .tasks import task_k, task_separator

#: The threads of a decode rule (rules/decode.smk): Slurm gets them as --cpus-per-task (the profile's
#: resources, docnmt.workflow.registry_tables).
DECODE_THREADS = 2


def model_params(config: dict, basedir: str, conda_deployment: bool) -> dict:
    """The params of a rule that loads the task's model, as functions of the job's wildcards (and inputs): path,
    model (the model options of a docnmt CLI), k, separator and dtype (decode.dtype)."""
    return {
        "path": lambda w: env_path(config, w.task, basedir, conda_deployment),
        "model": lambda w, input: model_args(config, w.task, input, level=model_level(w)),
        "k": lambda w: task_k(config, w.task),
        "separator": lambda w: task_separator(config, w.task),
        "dtype": search_dtype(config),
    }


def model_conda(config: dict, default: str):
    """The conda directive of a rule that loads the task's model: its backend's env file, else ``default``."""
    return lambda w: conda_env(config, w.task, default)


def model_gpus(config: dict):
    """The GPUs a rule that loads the task's model asks for (models.engine_args.tensor_parallel_size, or 1)."""
    return lambda w: gpus(config, w.task)

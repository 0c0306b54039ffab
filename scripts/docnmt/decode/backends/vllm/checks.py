"""The vllm backend's checks of a model folder, before any decode and without starting the engine: those of a causal
LM's folder (:mod:`docnmt.decode.prompting.checks`: its config and tokenizer, the template, the sample's prompts
within the context window, here ``max_model_len`` where it is smaller), and, where vLLM would run on the CPU (no
CUDA GPU here), an attention head size its CPU build runs. Each failure is one line naming the folder or the
file."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

from ....textio import InputError
from ...checks import no_fairseq_files, reported
from ...prompting.checks import HOLDS_ITS_TOKENIZER, check_prompted_folder, prompt_summary


def cpu_here() -> bool:
    """Whether vLLM would run on the CPU here: no CUDA GPU."""
    import torch

    return not torch.cuda.is_available()


def check_architecture(folder: Path, config) -> None:
    """An InputError naming the config where vLLM has no implementation of the model's architecture (its
    ``architectures``, as vLLM's model registry knows them); where vLLM is not installed (the check run from the
    project's .venv), the decode's own start tells."""
    import importlib.util

    if importlib.util.find_spec("vllm") is None:
        return
    from vllm.model_executor.models import ModelRegistry

    given = list(getattr(config, "architectures", None) or [])
    if given and not set(given) & set(ModelRegistry.get_supported_archs()):
        raise InputError(folder / "config.json", f"architecture {', '.join(given)}: vLLM {vllm_version()} has no "
                                                 "implementation of it (use --backend causal-lm)")


def vllm_version() -> str:
    import vllm

    return str(vllm.__version__)


def check_config(folder: Path, config) -> None:
    """The checks of a config that vLLM needs beyond causal-lm's: its architecture, its head size."""
    check_architecture(folder, config)
    check_head_size(folder, config)


def check_head_size(folder: Path, config) -> None:
    """An InputError naming the config where vLLM's CPU build cannot run the model's head size (on the CPU only)."""
    from .model import CPU_HEAD_SIZES, head_size

    if cpu_here() and head_size(config) not in CPU_HEAD_SIZES:
        raise InputError(folder / "config.json", f"attention head size {head_size(config)}: vLLM's CPU build runs "
                                                 f"head sizes {', '.join(map(str, CPU_HEAD_SIZES))} (no GPU here)")


def check_vllm_model(folder: os.PathLike | str, level: str, k: int | None = None, src_lang: str | None = None,
                     tgt_lang: str | None = None, sample: Sequence[os.PathLike | str] = (),
                     template: str | None = None, max_model_len: int | None = None) -> dict:
    """The checks above; the report (an :class:`InputError` at the first failure)."""
    from ...prompting.model import load_config
    from .model import head_size

    report = check_prompted_folder(folder, level, k, src_lang, tgt_lang, sample, template, backend="vllm",
                                   max_positions=max_model_len, config_check=check_config)
    report["head_size"] = head_size(load_config(Path(folder)))
    report["device"] = "cpu" if cpu_here() else "cuda"
    return report


def vllm_cli(parser, args) -> int:
    """docnmt-check-model on a causal LM's folder for vLLM (the vllm backend's ``check_cli``)."""
    no_fairseq_files(parser, args, HOLDS_ITS_TOKENIZER)
    report = check_vllm_model(args.model, args.level, args.k, args.src_lang, args.tgt_lang, args.sample,
                              getattr(args, "template", None), (args.engine_args or {}).get("max_model_len"))
    return reported(args.output, report, f"{args.model}: {report['model_type']} (causal LM) for vLLM on the "
                    f"{report['device']}, head size {report['head_size']}, context window {report['max_positions']}, "
                    + prompt_summary(report, args.level))

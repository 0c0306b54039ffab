"""Training one model (sentence- or document-level) with fairseq-train: GPU-ready and resumable.

The paper trains two systems per task on the same joined dictionary: a
sentence-level transformer and a document-level one on k-sentence windows
joined by ``<sep>`` (Herold & Ney 2023, appendix): "trained until the
validation perplexity does no longer improve and the best checkpoint is
selected using validation perplexity as well". So both early stopping
(``--patience`` validations without a new best) and ``checkpoint_best.pt``
follow fairseq's validation ``nll_loss`` (``--best-checkpoint-metric
nll_loss``; the perplexity is ``2 ** nll_loss``, so the two orders agree),
not the label-smoothed ``loss``, which fairseq uses by default and which can
choose another checkpoint (label smoothing 0.2 on NEWS/TED). When training
ends, a sidecar next to the published checkpoint (``checkpoint_best.json``)
records the metric, the update and the validation perplexity of the chosen
checkpoint, and the learning curve marks that validation.

Resume. fairseq writes ``checkpoint_last.pt`` atomically into ``--save-dir``
(a folder that is *not* a Snakemake output, so no rerun or
``--rerun-incomplete`` deletes it) and restores from it on start: a killed
job that reruns continues with the same update count and optimizer state.
Before resuming, the last checkpoint is loaded once; a corrupt one is an
error that names it. Only when training ends is ``checkpoint_best.pt``
published to the rule's output (an atomic hard link or copy), so a partial
result is never presented as one.

Devices. CUDA with ``--fp16`` when a GPU is visible, ``--cpu`` otherwise.
``CUDA_VISIBLE_DEVICES`` set by a scheduler is respected, never overwritten.

CLI::

    python -m docnmt.train.cli --data DIR --save-dir DIR --output checkpoint_best.pt \
        --dropout 0.3 --label-smoothing 0.2 --src en --tgt de [--gpus 1] [--patience 5] \
        [--history fairseq.log] [--curve curve.csv] [--sidecar checkpoint_best.json] \
        -- --arch transformer --share-all-embeddings ... (the preset)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from ..textio import InputError, atomic_write, cli_errors
from ..manual import argument_parser
from ..option_ranges import FRACTION, NONNEGATIVE_INT, POSITIVE_INT, SEED

#: fairseq's validation statistic that selects the best checkpoint and drives early stopping: the
#: validation perplexity's log (``ppl = 2 ** nll_loss``), as the paper selects by validation perplexity.
BEST_CHECKPOINT_METRIC = "nll_loss"
SELECTED_BY = "validation perplexity (fairseq --best-checkpoint-metric nll_loss: ppl = 2 ** nll_loss, lower is better)"

def options_to_args(options: dict) -> list[str]:
    """fairseq command-line arguments from a mapping of option names to values.

    ``True`` is a bare flag, ``False``/``None`` leaves the option out. Used for
    the architecture/optimizer presets of config.yaml (``training.presets``).
    """
    args: list[str] = []
    for key, value in options.items():
        if value is True:
            args.append(f"--{key}")
        elif value is False or value is None:
            continue
        else:
            args += [f"--{key}", str(value)]
    return args


def check_data(data: Path, src: str, tgt: str) -> dict:
    """The binarized folder must hold non-empty train/valid splits and one joined dictionary."""
    manifest_path = data / "manifest.json"
    if not manifest_path.exists():
        raise InputError(manifest_path, "binarized data not found (expected the output of the binarize rule)")
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    for split in ("train", "valid"):
        for lang in (src, tgt):
            for ext in ("bin", "idx"):
                path = data / f"{split}.{src}-{tgt}.{lang}.{ext}"
                if not path.exists() or path.stat().st_size == 0:
                    raise InputError(path, f"expected a non-empty binarized {split} split, found it missing or empty")
        if manifest.get("examples", {}).get(split, 0) < 1:
            raise InputError(manifest_path, f"expected at least one {split} example, found {manifest.get('examples')}")
    dict_src, dict_tgt = data / f"dict.{src}.txt", data / f"dict.{tgt}.txt"
    for path in (dict_src, dict_tgt):
        if not path.exists():
            raise InputError(path, "dictionary not found")
    if dict_src.read_bytes() != dict_tgt.read_bytes():
        raise InputError(
            dict_tgt, f"expected the same joined dictionary as {dict_src} (embeddings are shared), found a different one"
        )
    return manifest


def visible_gpus() -> int:
    import torch

    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def check_resume(save_dir: Path) -> int | None:
    """Load ``checkpoint_last.pt`` if present; return its update count. A corrupt file is an error."""
    last = save_dir / "checkpoint_last.pt"
    if not last.exists():
        return None
    import torch

    try:
        state = torch.load(last, map_location="cpu", weights_only=False)
        updates = int(state["optimizer_history"][-1]["num_updates"])
    except Exception as err:  # noqa: BLE001 - any failure to read means we cannot resume from it
        raise InputError(
            last,
            f"cannot resume: expected a fairseq checkpoint, could not load it ({type(err).__name__}: {err}); "
            "delete it to restart training from scratch",
        ) from None
    metric = _checkpoint_metric(state)
    if metric is not None and metric != BEST_CHECKPOINT_METRIC:
        raise InputError(
            last,
            f"cannot resume: this training selected its best checkpoint by validation {metric!r}, expected "
            f"{BEST_CHECKPOINT_METRIC!r} (the validation perplexity); its best value would be compared across the two "
            f"metrics. Delete {save_dir} to restart training from scratch",
        )
    return updates


def _checkpoint_metric(state: dict) -> str | None:
    """The ``--best-checkpoint-metric`` a fairseq checkpoint was trained with (None if it does not say)."""
    cfg = state.get("cfg") or {}
    try:
        return cfg["checkpoint"]["best_checkpoint_metric"]
    except (KeyError, TypeError):
        return getattr(state.get("args"), "best_checkpoint_metric", None)


def fairseq_command(args, gpus: int) -> list[str]:
    """The preset's options (after ``--``) first; the ones this module enforces last, so they win."""
    options = {
            "source-lang": args.src,
            "target-lang": args.tgt,
            "dropout": args.dropout,
            "criterion": "label_smoothed_cross_entropy",
            "label-smoothing": args.label_smoothing,
            "patience": args.patience,
            "best-checkpoint-metric": BEST_CHECKPOINT_METRIC,
            "save-dir": str(args.save_dir),
            "required-batch-size-multiple": 1,  # fairseq issue 5036: never drop a partial batch
            "no-epoch-checkpoints": True,
            "log-format": "simple",
            "log-interval": args.log_interval,
            "seed": args.seed,
            # on the CPU the batches are loaded in the training process: a loader process gives the same batches
            # (the same weights) but competes for the cores the model trains on (about 5% more CPU in 60 updates of
            # the demo's training alone; no difference measurable within the whole demo)
            "num-workers": args.workers if gpus else 0,
    }
    if gpus:
        options["fp16"] = True
        options["distributed-world-size"] = gpus
    else:
        options["cpu"] = True
    return [sys.executable, "-m", "docnmt.train.fairseq_train", str(args.data), *args.fairseq_args, *options_to_args(options)]


def run_logged(command: list[str], env: dict, history: Path | None) -> int:
    """Run ``command``, copying its output to stdout and appending it to ``history``."""
    handle = open(history, "a", encoding="utf-8") if history else None
    try:
        with subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as proc:
            for line in proc.stdout:
                sys.stdout.write(line)
                if handle:
                    handle.write(line)
                    handle.flush()
            return proc.wait()
    finally:
        if handle:
            handle.close()


def best_checkpoint_info(best: Path) -> dict:
    """What selected ``checkpoint_best.pt``: its update, epoch and validation metric (from the checkpoint)."""
    import torch

    try:
        state = torch.load(best, map_location="cpu", weights_only=False)
        extra = state.get("extra_state") or {}
        updates = int(state["optimizer_history"][-1]["num_updates"])
    except Exception as err:  # noqa: BLE001 - any failure to read it means it is not a usable checkpoint
        raise InputError(best, f"expected a fairseq checkpoint, could not load it ({type(err).__name__}: {err})") from None
    metric = _checkpoint_metric(state)
    value = extra.get("val_loss")
    epoch = (extra.get("train_iterator") or {}).get("epoch")
    return {
        "best_checkpoint_metric": metric,
        "num_updates": updates,
        "epoch": epoch,
        "valid_nll_loss": None if value is None else float(value),
        # fairseq's perplexity of a base-2 nll_loss; only meaningful when nll_loss chose the checkpoint
        "valid_ppl": None if value is None or metric != "nll_loss" else float(2 ** float(value)),
    }


def write_sidecar(path: Path, info: dict, args, device: str) -> None:
    """The model's sidecar: which metric chose the published checkpoint, and where that checkpoint stands."""
    record = {
        "checkpoint": str(args.output),
        "selected_by": SELECTED_BY if info["best_checkpoint_metric"] == BEST_CHECKPOINT_METRIC
        else f"fairseq --best-checkpoint-metric {info['best_checkpoint_metric']}",
        **info,
        "patience": args.patience,
        "label_smoothing": args.label_smoothing,
        "dropout": args.dropout,
        "device": device,
    }
    with atomic_write(path) as handle:
        json.dump(record, handle, indent=1)
        handle.write("\n")


def publish(best: Path, output: Path) -> None:
    """Atomically expose the best checkpoint at ``output`` (hard link where possible)."""
    if not best.exists():
        raise InputError(best, "training ended without a best checkpoint")
    output.parent.mkdir(parents=True, exist_ok=True)
    tmp = output.with_name(f".{output.name}.{os.getpid()}.tmp")
    try:
        os.link(best, tmp)
    except OSError:
        shutil.copyfile(best, tmp)
    os.replace(tmp, output)


@cli_errors
def main(argv=None) -> int:
    parser = argument_parser("docnmt.train.cli", __doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, type=Path, help="binarized data folder (with manifest.json)")
    parser.add_argument("--save-dir", required=True, type=Path, help="checkpoint folder (kept across reruns)")
    parser.add_argument("--output", required=True, type=Path, help="where the best checkpoint is published")
    parser.add_argument("--src", required=True)
    parser.add_argument("--tgt", required=True)
    parser.add_argument("--dropout", type=FRACTION, required=True)
    parser.add_argument("--label-smoothing", type=FRACTION, required=True)
    parser.add_argument("--patience", type=POSITIVE_INT, default=5, help="validations without improvement before stopping")
    parser.add_argument("--gpus", type=NONNEGATIVE_INT, default=1, help="GPUs to use when CUDA is available")
    parser.add_argument("--workers", type=NONNEGATIVE_INT, default=1,
                        help="data loader processes on a GPU (on the CPU none: the training process loads the batches)")
    parser.add_argument("--seed", type=SEED, default=1)
    parser.add_argument("--log-interval", type=POSITIVE_INT, default=50)
    parser.add_argument("--history", type=Path, required=True, help="append fairseq's output here too (kept across resumes)")
    parser.add_argument("--curve", type=Path, help="write the learning curve (CSV, from the whole history) here")
    parser.add_argument("--sidecar", type=Path, help="write the model's sidecar (JSON: the metric that chose the "
                        "best checkpoint, its update and validation perplexity) here")
    parser.add_argument(
        "fairseq_args", nargs=argparse.REMAINDER,
        help="after --: the architecture/optimizer preset as fairseq-train arguments (config.yaml training.presets)",
    )
    args = parser.parse_args(argv)
    if args.fairseq_args and args.fairseq_args[0] == "--":
        args.fairseq_args = args.fairseq_args[1:]

    check_data(args.data, args.src, args.tgt)
    available = visible_gpus()
    gpus = min(args.gpus, available) if available else 0
    if available and args.gpus > available:
        raise InputError(
            "config", f"training.gpus asks for {args.gpus} GPUs, but only {available} are visible "
            f"(CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES', 'unset')})"
        )
    args.save_dir.mkdir(parents=True, exist_ok=True)
    resumed = check_resume(args.save_dir)
    device = f"{gpus} GPU(s), fp16" if gpus else "CPU"
    print(f"device: {device}; best checkpoint and early stopping by {SELECTED_BY}; "
          + (f"resuming from update {resumed}" if resumed is not None else "starting from scratch"), flush=True)
    command = fairseq_command(args, gpus)
    print("running:", " ".join(command), flush=True)
    env = dict(os.environ, TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD="1", PYTHONUNBUFFERED="1")
    returncode = run_logged(command, env, args.history)
    if returncode != 0:
        raise SystemExit(f"fairseq-train failed with exit code {returncode}; checkpoints kept in {args.save_dir}")
    best = args.save_dir / "checkpoint_best.pt"
    if not best.exists():
        raise InputError(best, "training ended without a best checkpoint")
    info = best_checkpoint_info(best)
    if args.curve:
        from .curves import parse_log, write_csv

        write_csv(parse_log(args.history), args.curve, best_updates=info["num_updates"])
    if args.sidecar:
        write_sidecar(args.sidecar, info, args, device)
    publish(best, args.output)
    ppl = f", validation perplexity {info['valid_ppl']:.3f}" if info["valid_ppl"] is not None else ""
    print(f"best checkpoint: update {info['num_updates']}{ppl}; selected by "
          f"{SELECTED_BY if info['best_checkpoint_metric'] == BEST_CHECKPOINT_METRIC else info['best_checkpoint_metric']}")
    print(f"best checkpoint -> {args.output}")
    return 0


if __name__ == "__main__":
    main()

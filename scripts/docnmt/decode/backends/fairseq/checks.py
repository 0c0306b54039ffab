"""The fairseq backend's checks of a model trained elsewhere, before any decode: each failure is one line naming the
file (:func:`check_model`; ``docnmt-check-model``, :mod:`docnmt.decode.checks`).

A researcher's own fairseq concatenation model comes with its own dictionary,
BPE codes and separator token. Before the workflow spends hours decoding with
it, :func:`check_model` verifies what would otherwise fail late or, worse,
silently:

- the checkpoint loads (``torch.load``; a fairseq checkpoint has ``model`` and
  ``cfg`` or ``args``);
- its architecture is one the search can run: a fairseq encoder-decoder
  transformer (:data:`SUPPORTED_MODEL`: every ``--arch`` that fairseq
  registers for its ``transformer`` model, e.g. ``transformer``,
  ``transformer_iwslt_de_en``, ``transformer_wmt_en_de``,
  ``transformer_vaswani_wmt_en_de_big``);
- the data folder has the source and target dictionaries the checkpoint
  names (``dict.{src}.txt``, ``dict.{tgt}.txt``), and each has as many
  entries as the checkpoint's embedding matrix has rows;
- a document-level model's dictionaries hold its separator token;
- ``k`` is given for a document-level model (at least 2) and does not
  contradict the training data, where the data folder has its binarized
  ``train`` split, or else the folder the checkpoint records it was trained
  on (fairseq's ``task.data``; the checkpoint records no k, only token
  positions): a k-window holds at most k-1 separators, so more separators
  per training example than k-1 means a larger k, and a k larger than the
  largest window of the training data (one more than the most separators in
  an example, on either side) is more context than the model ever saw;
- BPE codes fit the dictionary: a sample of words segmented with the codes
  gives units the dictionary knows; the share of unknown units is reported,
  and above ``max_unknown`` it is an error.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Sequence

from .... import SEP
from ....startup import import_fairseq
from ....textio import InputError, read_lines
from ...checks import MAX_UNKNOWN, check_k, reported

os.environ.setdefault("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")

#: The fairseq model (``--arch`` family) whose decoder the search drives.
SUPPORTED_MODEL = "transformer"
#: Tokens compared with the separator at once when its occurrences in a binarized split are counted.
CHUNK = 1 << 24


def _lookup(obj, key: str):
    """``obj[key]`` or ``obj.key``: checkpoint sections are dicts, omegaconf configs or argparse namespaces."""
    if obj is None:
        return None
    if isinstance(obj, argparse.Namespace):
        return getattr(obj, key, None)
    try:
        return obj[key]
    except (KeyError, TypeError, AttributeError):
        return getattr(obj, key, None)


def _cfg_get(state: dict, section: str, key: str):
    """A setting from a checkpoint's ``cfg`` (fairseq >= 0.10) or ``args`` (older), None if absent."""
    value = _lookup(_lookup(state.get("cfg"), section), key)
    return value if value is not None else _lookup(state.get("args"), key)


def load_checkpoint(path: Path) -> dict:
    import torch

    if not path.exists():
        raise InputError(path, "model checkpoint not found")
    try:
        state = torch.load(path, map_location="cpu", weights_only=False)
    except Exception as err:  # noqa: BLE001 - any failure means fairseq cannot load it either
        raise InputError(path, f"expected a fairseq checkpoint, could not load it ({type(err).__name__}: {err})") from None
    if not isinstance(state, dict) or "model" not in state or ("cfg" not in state and "args" not in state):
        raise InputError(path, "expected a fairseq checkpoint (a dict with 'model' and 'cfg' or 'args'), found "
                               f"{type(state).__name__}{' with keys ' + ', '.join(map(str, state)) if isinstance(state, dict) else ''}")
    return state


def check_architecture(path: Path, state: dict) -> str:
    import_fairseq()
    from fairseq.models import ARCH_MODEL_NAME_REGISTRY

    arch = _cfg_get(state, "model", "_name") or _cfg_get(state, "model", "arch")
    family = ARCH_MODEL_NAME_REGISTRY.get(arch)
    if family != SUPPORTED_MODEL:
        archs = sorted(a for a, m in ARCH_MODEL_NAME_REGISTRY.items() if m == SUPPORTED_MODEL)
        raise InputError(path, f"architecture {arch!r} ({family or 'not a fairseq architecture'}) is not supported: the "
                               f"search runs fairseq encoder-decoder transformers, --arch one of {', '.join(archs)}")
    return arch


def load_dictionary(path: Path):
    import_fairseq()
    from fairseq.data import Dictionary

    if not path.exists():
        raise InputError(path, "dictionary not found (the data folder must hold the model's dict.SRC.txt and dict.TGT.txt)")
    try:
        return Dictionary.load(str(path))
    except Exception as err:  # noqa: BLE001
        raise InputError(path, f"expected a fairseq dictionary ('token count' per line), could not read it ({err})") from None


def check_embeddings(checkpoint: Path, state: dict, dictionary, dict_path: Path, side: str) -> int:
    key = f"{side}.embed_tokens.weight"
    weight = state["model"].get(key)
    if weight is None:
        raise InputError(checkpoint, f"expected the {side}'s embedding matrix ({key}) in the checkpoint, found none")
    rows = int(weight.shape[0])
    if rows != len(dictionary):
        raise InputError(dict_path, f"has {len(dictionary)} entries (with fairseq's 4 special symbols), but the "
                                    f"checkpoint's {side} embeddings ({checkpoint}) have {rows} rows: not the dictionary "
                                    "this model was trained with")
    return rows


#: Tokens compared with the separator at once when its occurrences in a binarized split are counted.
def _separators_by_example(prefix: str, index: int):
    """The separators in each example of a binarized split (fairseq's mmap format), None where it cannot be read."""
    import numpy as np
    from fairseq.data import indexed_dataset

    if not Path(f"{prefix}.idx").exists():
        return None
    try:
        dataset = indexed_dataset.MMapIndexedDataset(prefix)
        tokens = np.frombuffer(dataset._bin_buffer, dtype=dataset._index.dtype)
        ends = np.cumsum(dataset._index.sizes, dtype=np.int64)
    except Exception:  # noqa: BLE001 - another dataset implementation: no estimate
        return None
    tokens = tokens[:int(ends[-1]) if len(ends) else 0]
    counts = np.zeros(len(ends), dtype=np.int64)
    for start in range(0, len(tokens), CHUNK):
        hits = np.flatnonzero(tokens[start:start + CHUNK] == index) + start
        counts += np.bincount(np.searchsorted(ends, hits, side="right"), minlength=len(ends))
    return counts


def training_windows(data: Path, src: str, tgt: str, dictionaries: dict, separator: str) -> dict | None:
    """What the binarized ``train`` split in ``data`` says about the windows the model was trained on, where the
    folder has it (else None): separators per target example (``mean``), and the largest window in sentences on
    either side (``largest``: one more than the most separators in an example), the k it was trained with.

    Counted in the data itself, not from the dictionary's counts: a joined dictionary counts both sides.
    """
    counts = {}
    for lang in (src, tgt):
        dictionary = dictionaries[lang]
        if separator in dictionary.indices:
            counts[lang] = _separators_by_example(str(data / f"train.{src}-{tgt}.{lang}"), dictionary.index(separator))
    if counts.get(tgt) is None or not len(counts[tgt]):
        return None
    largest = max(int(c.max()) for c in counts.values() if c is not None and len(c)) + 1
    return {"split": str(data / f"train.{src}-{tgt}"), "mean": float(counts[tgt].mean()), "largest": largest}


def recorded_training_data(state: dict, data: Path) -> Path | None:
    """The data folder that the checkpoint records it was trained on (fairseq's ``task.data``; the first of a
    colon-separated list), where it is another folder than ``data`` and exists here."""
    recorded = _cfg_get(state, "task", "data")
    if not isinstance(recorded, str) or not recorded:
        return None
    folder = Path(recorded.split(os.pathsep)[0]).expanduser()
    if not folder.is_dir() or (data.is_dir() and folder.resolve() == data.resolve()):
        return None
    return folder


def check_k_trained(checkpoint: Path, level: str, k: int | None, windows: dict | None) -> None:
    """A k larger than the largest window of the model's training data: the model never saw that much context."""
    if level == "document" and windows is not None and k is not None and k > windows["largest"]:
        largest = windows["largest"]
        raise InputError(checkpoint, f"k={k} is larger than the model was trained with: its training data "
                                     f"({windows['split']}.*) has windows of at most {largest} sentences "
                                     f"({largest - 1} separators in an example); set k to {largest}")


def check_codes(codes: Path, sample: Sequence[Path], dictionary, dict_path: Path, max_unknown: float,
                max_lines: int = 2000, tokenize=None) -> dict:
    """Segment a sample of text with ``codes`` (after ``tokenize``, if given); the share of units the dictionary
    lacks."""
    from ....preprocess import bpe

    handle = bpe.load(codes)
    units = unknown = 0
    examples: dict[str, int] = {}
    for path in sample:
        for line in read_lines(path)[:max_lines]:
            for unit in bpe.apply(handle, tokenize(line) if tokenize else line).split():
                units += 1
                if unit not in dictionary.indices:
                    unknown += 1
                    examples[unit] = examples.get(unit, 0) + 1
    share = unknown / units if units else 0.0
    first = sorted(examples, key=lambda u: -examples[u])[:10]
    report = {"codes": str(codes), "units": units, "unknown": unknown, "unknown_share": round(share, 4),
              "unknown_first": first}
    if share > max_unknown:
        raise InputError(codes, f"{share:.1%} of the BPE units of the sample ({unknown} of {units}, e.g. "
                                f"{', '.join(first[:5])}) are not in {dict_path}: these codes do not "
                                f"fit the model's dictionary (at most {max_unknown:.0%} expected)")
    return report


def languages(checkpoint: Path, state: dict, data: Path) -> tuple[str, str]:
    """The source and target language: from the checkpoint, else as fairseq infers them (``train.SRC-TGT.*``)."""
    src, tgt = _cfg_get(state, "task", "source_lang"), _cfg_get(state, "task", "target_lang")
    if not src or not tgt:
        from fairseq.data.data_utils import infer_language_pair

        src, tgt = infer_language_pair(str(data))
    if not src or not tgt:
        raise InputError(checkpoint, "expected the checkpoint to name its source and target language (fairseq-train "
                                     f"--source-lang/--target-lang), or {data} to hold train.SRC-TGT.* files, found "
                                     "neither")
    return src, tgt


def trained_windows(state: dict, data: Path, src: str, tgt: str, dictionaries: dict, separator: str) -> dict | None:
    """:func:`training_windows` of the data folder's ``train`` split, else of the folder the checkpoint records it
    was trained on (with that folder's dictionaries, where it has them)."""
    windows = training_windows(data, src, tgt, dictionaries, separator)
    recorded = recorded_training_data(state, data) if windows is None else None
    if recorded is None:
        return windows
    own = {lang: recorded / f"dict.{lang}.txt" for lang in (src, tgt)}
    if all(path.exists() for path in own.values()):
        dictionaries = {lang: load_dictionary(path) for lang, path in own.items()}
    return training_windows(recorded, src, tgt, dictionaries, separator)


def check_model(checkpoint: os.PathLike | str, data: os.PathLike | str, level: str, separator: str = SEP,
                k: int | None = None, codes: os.PathLike | str | None = None,
                sample: Sequence[os.PathLike | str] = (), max_unknown: float = MAX_UNKNOWN, tokenize=None) -> dict:
    """Every check above, in order; the report of what was found (an :class:`InputError` at the first failure)."""
    checkpoint, data = Path(checkpoint), Path(data)
    if level not in ("sentence", "document"):
        raise ValueError(f"level must be sentence or document, got {level!r}")
    state = load_checkpoint(checkpoint)
    arch = check_architecture(checkpoint, state)
    src, tgt = languages(checkpoint, state, data)
    dicts = {}
    for side, lang in (("encoder", src), ("decoder", tgt)):
        path = data / f"dict.{lang}.txt"
        dictionary = load_dictionary(path)
        check_embeddings(checkpoint, state, dictionary, path, side)
        if level == "document" and separator not in dictionary.indices:
            raise InputError(path, f"expected the separator token {separator!r} of the document-level model, found "
                                   "none: set the separator to the token the model was trained with")
        dicts[side] = (path, dictionary)
    tgt_path, tgt_dict = dicts["decoder"]
    windows = trained_windows(state, data, src, tgt, {src: dicts["encoder"][1], tgt: tgt_dict}, separator)
    per_example = windows["mean"] if windows else None
    check_k(data, tgt_path, level, k, per_example)
    check_k_trained(checkpoint, level, k, windows)
    report = {
        "checkpoint": str(checkpoint), "backend": "fairseq", "level": level, "arch": arch, "src": src, "tgt": tgt,
        "dictionaries": {side: {"path": str(p), "entries": len(d)} for side, (p, d) in dicts.items()},
        "separator": separator if level == "document" else None,
        "separator_in_dictionary": separator in tgt_dict.indices,
        "k": k if level == "document" else 1,
        "separators_per_training_example": None if per_example is None else round(per_example, 3),
        "training_windows": None if windows is None else {"split": windows["split"], "largest": windows["largest"]},
        "max_positions": [_cfg_get(state, "task", "max_source_positions"),
                          _cfg_get(state, "task", "max_target_positions")],
    }
    if codes is not None:
        report["bpe"] = check_codes(Path(codes), [Path(p) for p in sample], tgt_dict, tgt_path, max_unknown,
                                    tokenize=tokenize)
    return report


def fairseq_cli(parser, args) -> int:
    """docnmt-check-model on a fairseq checkpoint and its data folder (the fairseq backend's ``check_cli``)."""
    if args.data is None:
        parser.error("--data (the fairseq model's data folder) is required, or --backend transformers")
    if args.codes is not None and not args.sample:
        parser.error("--codes needs --sample (tokenized text to segment)")
    tokenize = None
    if args.sample_tokenize == "moses":
        from ....preprocess.tokenize import tokenize as moses

        tokenize = lambda line: moses(line, args.sample_lang) if line.strip() else ""  # noqa: E731
    report = check_model(args.model, args.data, args.level, args.separator, args.k, args.codes, args.sample,
                         args.max_unknown, tokenize)
    bpe = report.get("bpe")
    return reported(args.output, report, f"{args.model}: {report['arch']}, {report['src']}->{report['tgt']}, "
                    f"{args.level}-level"
                    + (f", separator {report['separator']!r}, k={report['k']}" if args.level == "document" else "")
                    + (f"; BPE: {bpe['unknown_share']:.1%} of {bpe['units']} sample units not in the dictionary"
                       if bpe else ""))

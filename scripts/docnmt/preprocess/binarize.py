"""fairseq binarization with the joined dictionary, verified and atomic.

Runs ``fairseq-preprocess`` with ``--srcdict``/``--tgtdict`` set to the one
joined dictionary (so the sentence- and document-level data share token ids)
into a temporary folder, checks that every split has exactly as many
examples as its text file has lines, writes ``manifest.json`` with those
counts, and only then moves the folder into place.

CLI::

    python -m docnmt.preprocess.binarize --src en --tgt de --trainpref P --validpref P --testpref P \
        --dict dict.txt --destdir DIR [--workers N]
"""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
import sys
from pathlib import Path

from ..textio import DiskFullError, InputError, atomic_write, cli_errors
from ..manual import argument_parser
from ..option_ranges import POSITIVE_INT

SPLITS = ("train", "valid", "test")
#: How a full disk shows in fairseq-preprocess's output (OSError messages of errno ENOSPC/EDQUOT).
DISK_FULL_MESSAGES = ("No space left on device", "Disk quota exceeded")


def run_logged(command: list[str]) -> tuple[int, bool]:
    """Run ``command`` with its output passed on to stderr; return its exit code and whether it hit a full disk."""
    disk_full = False
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace") as proc:
        for line in proc.stdout:
            sys.stderr.write(line)
            disk_full = disk_full or any(m in line for m in DISK_FULL_MESSAGES)
    sys.stderr.flush()
    return proc.returncode, disk_full


def count_lines(path: Path) -> int:
    if not path.exists():
        raise InputError(path, "file not found")
    with open(path, "rb") as handle:
        return sum(1 for _ in handle)


#: The first bytes of a fairseq mmap dataset's index (``MMapIndexedDataset``'s ``.idx``, format version 1).
MMAP_INDEX_MAGIC = b"MMIDIDX\x00\x00"


def binarized_sizes(prefix: Path) -> int:
    """Number of examples in a fairseq mmap dataset (``prefix.idx``/``.bin``), read from its index without
    importing fairseq (3 s of CPU a process). The index, as fairseq 0.12 writes it: the magic, version 1 (uint64),
    a dtype code (uint8), the number of examples (uint64), then an int32 size and an int64 pointer per example,
    which the file's length is checked against."""
    index, data = Path(f"{prefix}.idx"), Path(f"{prefix}.bin")
    if not index.exists() or not data.exists():
        raise InputError(index, "fairseq-preprocess wrote no dataset")
    with open(index, "rb") as handle:
        header = handle.read(26)
    if len(header) < 26 or header[:9] != MMAP_INDEX_MAGIC or struct.unpack("<Q", header[9:17])[0] != 1:
        raise InputError(index, "expected a fairseq mmap dataset index (MMIDIDX, version 1)")
    (examples,) = struct.unpack("<Q", header[18:26])
    if index.stat().st_size != 26 + 12 * examples:
        raise InputError(index, f"expected {26 + 12 * examples} bytes for {examples} examples, found "
                                f"{index.stat().st_size}")
    return examples


def binarize(src: str, tgt: str, prefixes: dict[str, Path], dictionary: Path, destdir: Path, workers: int) -> dict:
    expected = {}
    for split, prefix in prefixes.items():
        n_src = count_lines(Path(f"{prefix}.{src}"))
        n_tgt = count_lines(Path(f"{prefix}.{tgt}"))
        if n_src != n_tgt:
            raise InputError(f"{prefix}.{tgt}", f"expected {n_src} lines to match {prefix}.{src}, found {n_tgt}")
        if n_src == 0:
            raise InputError(f"{prefix}.{src}", f"the {split} split is empty")
        expected[split] = n_src
    if not dictionary.exists():
        raise InputError(dictionary, "dictionary not found")
    tmp = destdir.with_name(destdir.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    command = [
        sys.executable, "-m", "docnmt.preprocess.fairseq_preprocess", "--source-lang", src, "--target-lang", tgt,
        "--srcdict", str(dictionary), "--tgtdict", str(dictionary),
        "--destdir", str(tmp), "--workers", str(workers), "--dataset-impl", "mmap",
    ]
    for split, prefix in prefixes.items():
        command += [f"--{split}pref", str(prefix)]
    print("running:", " ".join(command), flush=True)
    try:
        returncode, disk_full = run_logged(command)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if returncode != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        if disk_full:
            raise DiskFullError(destdir)
        raise SystemExit(f"fairseq-preprocess failed with exit code {returncode}")
    try:
        for split, n in expected.items():
            for lang in (src, tgt):
                got = binarized_sizes(tmp / f"{split}.{src}-{tgt}.{lang}")
                if got != n:
                    raise InputError(
                        f"{prefixes[split]}.{lang}", f"fairseq binarized {got} examples, expected one per line ({n})"
                    )
        manifest = {"src": src, "tgt": tgt, "dictionary": str(dictionary), "examples": expected}
        with atomic_write(tmp / "manifest.json") as handle:
            json.dump(manifest, handle, indent=1)
            handle.write("\n")
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    shutil.rmtree(destdir, ignore_errors=True)
    tmp.rename(destdir)
    return manifest


@cli_errors
def main(argv=None) -> int:
    parser = argument_parser("docnmt.preprocess.binarize", __doc__.split("\n\n")[0])
    parser.add_argument("--src", required=True)
    parser.add_argument("--tgt", required=True)
    for split in SPLITS:
        parser.add_argument(f"--{split}pref", required=True, type=Path, help=f"{split} text prefix (PREFIX.SRC, PREFIX.TGT)")
    parser.add_argument("--dict", required=True, type=Path, help="the joined dictionary")
    parser.add_argument("--destdir", required=True, type=Path)
    parser.add_argument("--workers", type=POSITIVE_INT, default=1)
    args = parser.parse_args(argv)
    prefixes = {split: getattr(args, f"{split}pref") for split in SPLITS}
    manifest = binarize(args.src, args.tgt, prefixes, args.dict, args.destdir, args.workers)
    print(f"binarized {manifest['examples']} -> {args.destdir}")
    return 0


if __name__ == "__main__":
    main()

"""Check a corpus folder in the common document format before the workflow reads it.

A folder of a user's own corpus (``corpus: {type: prepared, dir: ...}``)
holds, per split, ``{split}.{src}``, ``{split}.{tgt}`` and ``{split}.docids``
(:mod:`docnmt.corpora.corpus`). This checks every split it finds, or those
given with ``--splits``, exactly as the workflow's ``check_corpus`` rule does,
and prints each split's sentences and documents. The first problem is one
error line naming the file and line, and the exit status is 1::

    docnmt-check-corpus /data/mine/corpus --src en --tgt fr
    docnmt-check-corpus /data/mine/corpus --src en --tgt fr --splits test   # a task with models: needs only test
"""

from __future__ import annotations

from pathlib import Path

from ..manual import argument_parser
from ..textio import InputError, cli_errors
from .corpus import iter_split

#: The splits of a prepared corpus, in the order they are checked.
SPLITS = ("train", "valid", "test")


def split_files(folder: Path, split: str, src: str, tgt: str) -> tuple[Path, Path, Path]:
    return folder / f"{split}.{src}", folder / f"{split}.{tgt}", folder / f"{split}.docids"


def check_folder(folder: Path, src: str, tgt: str, splits=None) -> dict[str, dict]:
    """{split: {"sentences": n, "documents": n}} of every split checked; raise :class:`InputError` naming the file.

    ``splits`` None: every split of :data:`SPLITS` with at least one of its three files present (a split with
    only some of them is an error naming the missing one); at least one is required.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError(folder, "expected a corpus folder (per split {split}.SRC, {split}.TGT, {split}.docids), "
                                 "found no such folder")
    required = splits is not None
    if splits is None:
        splits = [s for s in SPLITS if any(p.exists() for p in split_files(folder, s, src, tgt))]
        if not splits:
            raise InputError(folder, f"expected at least one split ({', '.join(f'{s}.{src}' for s in SPLITS)}, "
                                     f"with .{tgt} and .docids), found none")
    stats = {}
    for split in splits:
        files = split_files(folder, split, src, tgt)
        for path in files:
            if not path.exists():
                why = "the split is named with --splits" if required else "the split's other files exist"
                raise InputError(path, f"expected this file of split {split!r} ({why}), found none")
        docs = iter_split(*files)  # streamed: memory holds one document
        counted = {"sentences": 0, "documents": 0}
        for doc in docs:
            counted["sentences"] += len(doc)
            counted["documents"] += 1
        stats[split] = counted
    return stats


@cli_errors
def main(argv=None) -> int:
    parser = argument_parser("docnmt.corpora.check", __doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="the corpus folder")
    parser.add_argument("--src", required=True, help="source language code (the files' extension)")
    parser.add_argument("--tgt", required=True, help="target language code")
    parser.add_argument("--splits", nargs="+", choices=SPLITS,
                        help="the splits that must be there (default: every split found)")
    args = parser.parse_args(argv)
    stats = check_folder(args.folder, args.src, args.tgt, args.splits)
    for split, counted in stats.items():
        print(f"{split}: {counted['sentences']} sentences in {counted['documents']} documents")
    print(f"{args.folder}: valid ({', '.join(stats)})")
    return 0


if __name__ == "__main__":
    main()

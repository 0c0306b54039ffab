"""Reading the files a score is computed on: hypotheses, references, sources, selected lines.

Every scorer (BLEU/TER, pronoun F1, perplexity) reads its inputs through
:func:`load`, so that the same bad input gets the same clear error
everywhere: a missing or empty hypothesis file, a hypothesis file with the
wrong line count, a source and reference that do not line up. Each error
names the file (:class:`~docnmt.textio.InputError`).

On ContraPro the decoded mini-documents hold context sentences too; only the
example sentences are scored. ``select`` is then ``contrapro.examples.jsonl``,
whose ``line`` fields (0-based) name the lines to keep.

An evaluation set may also come with a ``subsets`` file, line-aligned with the
source: per line the names of the subsets the sentence belongs to, separated
by spaces (an empty line: none). A scorer that takes ``--subsets`` scores each
named subset on its own too (the demo's ``test.subsets`` marks the pronoun
sentences whose antecedent has two German translations).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..corpora.corpus import read_docids
from ..option_ranges import POSITIVE_INT
# parse_systems: the scorers' NAME=PATH arguments (textio.parse_named); selected_lines: the scorers' too
from ..textio import InputError, atomic_write, parse_named as parse_systems, read_lines, selected_lines  # noqa: F401


@dataclass
class EvalSet:
    """Line-aligned source, reference and system outputs, restricted to the scored lines."""

    source: list[str]
    reference: list[str]
    systems: dict[str, list[str]]
    lines: list[int]  # 0-based line numbers of the scored lines in the full files
    #: subset name -> positions (in the lists above) of its scored lines, in file order
    subsets: dict[str, list[int]] = field(default_factory=dict)

    def subset(self, name: str, items: list) -> list:
        """The entries of ``items`` (aligned with the scored lines) that belong to subset ``name``."""
        return [items[i] for i in self.subsets[name]]


def add_arguments(parser, what: str = "detokenized hypotheses") -> None:
    """The input arguments shared by the scorers of raw text (BLEU/TER, pronoun F1)."""
    parser.add_argument("--source", required=True, type=Path, help="raw source, one sentence per line")
    parser.add_argument("--reference", required=True, type=Path, help="raw reference, line-aligned with the source")
    parser.add_argument("--system", action="append", default=[], required=True, metavar="NAME=PATH",
                        help=f"{what} of one system (repeatable)")
    parser.add_argument("--select", type=Path, help="JSON lines with a 'line' field: score only those lines (ContraPro)")


def add_seam_arguments(parser, docids: str | None = None, docids_required: bool = False) -> None:
    """The options of the metric seam's protocol (:mod:`docnmt.score.metric`) that a metric's CLI takes, declared
    once: the evaluation set (:func:`add_arguments`), ``--baseline``, ``--bootstrap-samples``, ``--output``, and
    ``--docids`` where ``docids`` says what the metric does with it (``docids_required``: it cannot score without
    them). The CLI adds its own options after them."""
    add_arguments(parser)
    parser.add_argument("--baseline", action="append", default=[],
                        help="paired bootstrap of every system against this one (repeatable; skipped if absent)")
    parser.add_argument("--bootstrap-samples", type=POSITIVE_INT, default=1000)
    if docids is not None:
        parser.add_argument("--docids", type=Path, required=docids_required, help=docids)
    parser.add_argument("--output", required=True, type=Path, help="the score file (JSON)")


def write_score_file(path: os.PathLike | str, result: dict) -> None:
    """A metric's score file (the seam's JSON object), written whole or not at all."""
    with atomic_write(path) as handle:
        json.dump(result, handle, indent=1)
        handle.write("\n")


def add_subsets_argument(parser) -> None:
    parser.add_argument("--subsets", type=Path,
                        help="per source line, the names of the subsets it belongs to (space-separated; an empty "
                             "line: none); each subset is also scored on its own")


def load_args(args) -> "EvalSet":
    return load(args.source, args.reference, parse_systems(args.system), args.select, getattr(args, "subsets", None))


SUBSET_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


def read_subsets(path: os.PathLike | str, n_lines: int, against: os.PathLike | str) -> dict[str, list[int]]:
    """``{name: [0-based line, ...]}`` from a subsets file with one line per line of ``against``."""
    path = Path(path)
    names = read_lines(path)
    if len(names) != n_lines:
        raise InputError(path, f"expected {n_lines} lines (one per line of {against}), found {len(names)}")
    subsets: dict[str, list[int]] = {}
    for line, text in enumerate(names):
        for name in text.split():
            if not SUBSET_NAME.fullmatch(name):
                raise InputError(path, f"expected subset names of letters, digits, '_', '.' or '-', found {name!r}",
                                 line + 1)
            members = subsets.setdefault(name, [])
            if not members or members[-1] != line:
                members.append(line)
    return subsets


def read_documents(source: os.PathLike | str, docids: os.PathLike | str) -> tuple[list[str], list[str]]:
    """A source file and its document ids: the source must not be empty, and each line has one id."""
    lines = read_lines(source)
    if not lines:
        raise InputError(source, "expected source sentences, found an empty file")
    ids = read_docids(docids)
    if len(ids) != len(lines):
        raise InputError(docids, f"expected one document id per line of {source} ({len(lines)}), found {len(ids)}")
    return lines, ids


def read_system(path: os.PathLike | str, n_lines: int, against: os.PathLike | str) -> list[str]:
    """A hypothesis file: it must exist, be non-empty and have one line per reference line."""
    path = Path(path)
    if path.exists() and path.stat().st_size == 0:
        raise InputError(path, f"expected {n_lines} hypotheses (one per line of {against}), found an empty file")
    hyps = read_lines(path)
    if len(hyps) != n_lines:
        raise InputError(path, f"expected {n_lines} hypotheses (one per line of {against}), found {len(hyps)} lines")
    return hyps


def load(source: os.PathLike | str, reference: os.PathLike | str, systems: dict[str, Path],
         select: os.PathLike | str | None = None, subsets: os.PathLike | str | None = None) -> EvalSet:
    """Read and check everything; keep the selected lines (and the subsets among them)."""
    src = read_lines(source)
    ref = read_lines(reference)
    if not ref:
        raise InputError(reference, "expected reference sentences, found an empty file")
    if len(src) != len(ref):
        raise InputError(reference, f"expected one reference line per line of {source} ({len(src)}), found {len(ref)}")
    hyps = {name: read_system(path, len(ref), reference) for name, path in systems.items()}
    members = read_subsets(subsets, len(src), source) if subsets is not None else {}
    lines = selected_lines(select, len(ref))
    position = {line: i for i, line in enumerate(lines)}
    return EvalSet(
        source=[src[i] for i in lines],
        reference=[ref[i] for i in lines],
        systems={name: [h[i] for i in lines] for name, h in hyps.items()},
        lines=lines,
        subsets={name: [position[line] for line in m if line in position] for name, m in members.items()},
    )

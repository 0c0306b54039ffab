"""Reading the files a score is computed on: hypotheses, references, sources, selected lines.

Every scorer (BLEU/TER, pronoun F1, perplexity) reads its inputs through
:func:`load`, so that the same bad input gets the same clear error
everywhere: a missing or empty hypothesis file, a hypothesis file with the
wrong line count, a source and reference that do not line up. Each error
names the file (:class:`~docnmt.textio.InputError`).

On ContraPro the decoded mini-documents hold context sentences too; only the
example sentences are scored. ``select`` is then ``contrapro.examples.jsonl``,
whose ``line`` fields (0-based) name the lines to keep.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from .textio import InputError, read_lines


@dataclass
class EvalSet:
    """Line-aligned source, reference and system outputs, restricted to the scored lines."""

    source: list[str]
    reference: list[str]
    systems: dict[str, list[str]]
    lines: list[int]  # 0-based line numbers of the scored lines in the full files


def add_arguments(parser, what: str = "detokenized hypotheses") -> None:
    """The input arguments shared by the scorers of raw text (BLEU/TER, pronoun F1)."""
    parser.add_argument("--source", required=True, type=Path, help="raw source, one sentence per line")
    parser.add_argument("--reference", required=True, type=Path, help="raw reference, line-aligned with the source")
    parser.add_argument("--system", action="append", default=[], required=True, metavar="NAME=PATH",
                        help=f"{what} of one system (repeatable)")
    parser.add_argument("--select", type=Path, help="JSON lines with a 'line' field: score only those lines (ContraPro)")


def load_args(args) -> "EvalSet":
    return load(args.source, args.reference, parse_systems(args.system), args.select)


def parse_systems(items: list[str]) -> dict[str, Path]:
    """``NAME=PATH`` arguments, in order; a name may appear once."""
    systems: dict[str, Path] = {}
    for item in items:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise InputError(item, "expected a system as NAME=PATH")
        if name in systems:
            raise InputError(path, f"system {name!r} is given twice")
        systems[name] = Path(path)
    return systems


def selected_lines(select: os.PathLike | str | None, n_lines: int) -> list[int]:
    """All lines, or the ``line`` of every JSON object of ``select`` (one per line)."""
    if select is None:
        return list(range(n_lines))
    lines = []
    for number, text in enumerate(read_lines(select), start=1):
        if not text.strip():
            continue
        try:
            line = json.loads(text)["line"]
        except (ValueError, KeyError, TypeError):
            raise InputError(select, "expected a JSON object with a 'line' field", number) from None
        if not isinstance(line, int) or not 0 <= line < n_lines:
            raise InputError(select, f"expected a line number in 0..{n_lines - 1}, found {line!r}", number)
        lines.append(line)
    if not lines:
        raise InputError(select, "expected at least one selected line, found none")
    return lines


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
         select: os.PathLike | str | None = None) -> EvalSet:
    """Read and check everything; keep the selected lines."""
    src = read_lines(source)
    ref = read_lines(reference)
    if not ref:
        raise InputError(reference, "expected reference sentences, found an empty file")
    if len(src) != len(ref):
        raise InputError(reference, f"expected one reference line per line of {source} ({len(src)}), found {len(ref)}")
    hyps = {name: read_system(path, len(ref), reference) for name, path in systems.items()}
    lines = selected_lines(select, len(ref))
    return EvalSet(
        source=[src[i] for i in lines],
        reference=[ref[i] for i in lines],
        systems={name: [h[i] for i in lines] for name, h in hyps.items()},
        lines=lines,
    )

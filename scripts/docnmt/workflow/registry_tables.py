"""The parts of the docs and of the Slurm profile that list what the registries hold, written from the declarations:
the backends, the metrics and the variants (``docs/architecture.md``), and the Slurm profile's resources of the rules that the
registries make (``profiles/slurm/config.yaml``: a decode rule per strategy, the rule of every seam metric that
runs on a GPU).

Each part sits between two marker lines in its file, which name it. ``python -m docnmt.workflow.registry_tables``
rewrites every part that is stale; ``--check`` only says which are (exit 1), as ``tests/test_docs.py`` does. A new
backend, strategy or metric changes no line of these files by hand::

    python -m docnmt.workflow.registry_tables            # rewrite the stale parts
    python -m docnmt.workflow.registry_tables --check    # exit 1 naming each stale part
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from docnmt.decode.backend import CAPABILITIES, REGISTRY
from docnmt.decode.strategies import STRATEGIES
from docnmt.manual import argument_parser
from docnmt.score.metric import Metric, metrics
from docnmt.textio import atomic_write, cli_errors

from .model_rules import DECODE_THREADS

#: The checkout (scripts/docnmt/workflow/ is three folders down).
CHECKOUT = Path(__file__).resolve().parents[3]
#: What generates the parts: their marker lines name it.
COMMAND = "python -m docnmt.workflow.registry_tables"


@dataclass(frozen=True)
class Part:
    """One generated part: its file (relative to the checkout), its name in the markers, its text, and the comment
    syntax of the file (the markers are comments)."""

    path: str
    name: str
    text: Callable[[], str]
    begin: str = "<!-- generated: {command}: {name} -->"
    end: str = "<!-- end generated -->"
    indent: str = ""

    def markers(self) -> tuple[str, str]:
        return (self.indent + self.begin.format(command=COMMAND, name=self.name), self.indent + self.end)


def _higher(metric: Metric) -> str:
    if isinstance(metric.higher_is_better, dict):
        lower = [column for column, better in metric.higher_is_better.items() if not better]
        return "yes, " + ", ".join(f"{column}: no" for column in lower)
    return "yes" if metric.higher_is_better else "no"


def environment_name(environment) -> str:
    """A metric's or a backend's environment in words: a shared one's name, or an own one's venv."""
    if environment is None:
        return "main"
    return environment if isinstance(environment, str) else f"own: `{environment.venv}`"


def metrics_table() -> str:
    """The table of metrics: one row per declared metric of the package, in the registry's order."""
    lines = ["| metric | rule | environment | unit | needs | higher is better | table |",
             "|---|---|---|---|---|---|---|"]
    for m in metrics().values():
        lines.append(f"| `{m.name}` | {'the seam' + chr(39) + 's' if m.rule else 'its own'} | "
                     f"{environment_name(m.environment)} | {m.unit} | {', '.join(m.needs)} | {_higher(m)} | "
                     f"{'Table 3' if m.table == 'quality' else m.table} |")
    return "\n".join(lines) + "\n"


def backends_table() -> str:
    """The table of backends: one row per registered backend, in their order, with what each can do."""
    capabilities = list(CAPABILITIES)
    lines = ["| backend | package | environment | served | " + " | ".join(c.replace("_", " ") for c in capabilities)
             + " |", "|---" * (4 + len(capabilities)) + "|"]
    for b in REGISTRY.values():
        can = ["yes" if getattr(b, c) is True else "no" if getattr(b, c) is False else "depends" for c in capabilities]
        lines.append(f"| `{b.name}` | `{b.module}` | {environment_name(b.environment)} | "
                     f"{'yes' if b.served else 'no'} | " + " | ".join(can) + " |")
    return "\n".join(lines) + "\n"


def variants_table() -> str:
    """The table of variants: one row per declared variant, in the registry's order."""
    from docnmt.decode.variants import variants

    lines = ["| variant | system | table row | config block | rule | module | what it is |", "|---|---|---|---|---|---|---|"]
    for v in variants().values():
        system = f"`{v.system()}`" if v.pooled else f"`{v.system('STRATEGY')}`" + (
            f", `{v.system('STRATEGY', 'N')}` (a point of a plot)" if v.point else "")
        row = v.label if v.pooled else f"STRATEGY, {v.label}"
        row = f"pooled, {v.label}" if v.pooled else row
        rule = f"`{v.rule}`" if v.pooled else "the strategy's decode rule"
        lines.append(f"| `{v.kind}` | {system} | {row} | `{v.block}` | {rule} | `{v.module or 'docnmt.decode.cli'}` | "
                     f"{v.describe} |")
    return "\n".join(lines) + "\n"


def slurm_resources() -> str:
    """The Slurm profile's set-resources of the rules the registries make: each strategy's decode rule (its
    threads as --cpus-per-task) and each seam metric's rule that runs on a GPU (its threads; a line to name the
    GPU partition)."""
    lines = []
    for metric in metrics().values():
        if metric.rule and metric.gpu:
            lines += [f"  {metric.name}:", f"    cpus_per_task: {metric.threads}                    "
                      f"# the rule's threads; its gpu count is the rule's", '    # slurm_partition: "gpu"']
    for number, info in enumerate(STRATEGIES.values()):
        comment = '   # the rule\'s threads; add slurm_partition: "gpu" as above' if number == 0 else ""
        lines.append(f"  {info.rule}: {{cpus_per_task: {DECODE_THREADS}}}{comment}")
    return "\n".join(lines) + "\n"


PARTS = (
    Part("docs/architecture.md", "backends", backends_table),
    Part("docs/architecture.md", "metrics", metrics_table),
    Part("docs/architecture.md", "variants", variants_table),
    Part("profiles/slurm/config.yaml", "rules", slurm_resources, begin="# generated: {command}: {name}",
         end="# end generated", indent="  "),
)


def replaced(text: str, part: Part, where: str) -> str:
    """``text`` with the part between its markers written anew: a ValueError naming the file where a marker is
    missing."""
    begin, end = part.markers()
    pattern = re.compile(re.escape(begin) + r"\n(.*?)^" + re.escape(end) + "$", re.S | re.M)
    found = pattern.search(text)
    if found is None:
        raise ValueError(f"{where}: the generated part {part.name!r} needs its markers, a line {begin!r} and "
                         f"later a line {end!r}")
    return text[:found.start(1)] + part.text() + text[found.end(1):]


def stale(checkout: Path = CHECKOUT) -> dict[str, str]:
    """The files whose generated parts differ from the registries': path -> the text it should have."""
    texts: dict[str, str] = {}
    for part in PARTS:
        path = checkout / part.path
        current = texts.get(part.path, path.read_text(encoding="utf-8"))
        texts[part.path] = replaced(current, part, str(path))
    return {name: text for name, text in texts.items()
            if text != (checkout / name).read_text(encoding="utf-8")}


@cli_errors
def main(argv=None) -> int:
    parser = argument_parser("docnmt.workflow.registry_tables",
                             "Write the parts of the docs and of the Slurm profile that list the registries' backends, "
                             "metrics and strategies, from their declarations.")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 naming each stale file")
    parser.add_argument("--checkout", type=Path, default=CHECKOUT, help="the checkout whose files to write")
    args = parser.parse_args(argv)
    try:
        outdated = stale(args.checkout)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    for name, text in outdated.items():
        if args.check:
            print(f"{name}: stale; regenerate it with {COMMAND}", file=sys.stderr)
        else:
            with atomic_write(args.checkout / name) as out:
                out.write(text)
            print(f"{name}: written")
    return 1 if args.check and outdated else 0


if __name__ == "__main__":
    sys.exit(main())

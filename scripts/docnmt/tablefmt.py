"""A result table, rendered as Markdown, CSV and LaTeX (booktabs).

Shared by the stages that write tables: the data statistics
(:mod:`docnmt.corpora.stats`) and the paper's result tables
(:mod:`docnmt.score.tables`).
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field


#: A cell with no value.
DASH = "-"


def number(value, digits: int = 1, scale: float = 1.0) -> str:
    """A table cell of a number: ``value`` x ``scale`` to ``digits`` places, :data:`DASH` for None."""
    return DASH if value is None else f"{value * scale:.{digits}f}"


@dataclass
class Table:
    name: str
    title: str
    header: list[str]
    rows: list[list[str]]
    notes: list[str] = field(default_factory=list)

    def markdown(self) -> str:
        lines = [f"**{self.title}**", "", "| " + " | ".join(self.header) + " |",
                 "|" + "|".join(["---"] + ["---:"] * (len(self.header) - 1)) + "|"]
        # a "|" inside a cell (a sentence of the context tables) would end the cell
        lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in self.rows]
        if self.notes:
            lines += [""] + [f"- {note}" for note in self.notes]
        return "\n".join(lines) + "\n"

    def csv(self) -> str:
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(self.header)
        writer.writerows(self.rows)
        return out.getvalue()

    def latex(self) -> str:
        def esc(text: str) -> str:
            for a, b in (("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("_", r"\_"), ("#", r"\#"),
                         ("†", r"$^\dagger$"), ("*", r"$^*$")):
                text = text.replace(a, b)
            return text

        lines = [r"\begin{table}[t]", r"\centering", r"\begin{tabular}{l" + "r" * (len(self.header) - 1) + "}",
                 r"\toprule", " & ".join(esc(h) for h in self.header) + r" \\", r"\midrule"]
        lines += [" & ".join(esc(c) for c in row) + r" \\" for row in self.rows]
        lines += [r"\bottomrule", r"\end{tabular}", r"\caption{" + esc(self.title) + "}",
                  r"\label{tab:" + self.name.replace("_", "-") + "}", r"\end{table}"]
        return "\n".join(lines) + "\n"

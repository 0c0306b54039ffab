"""Numeric command-line options with their range: one declaration (the type with its bounds) that every CLI taking
the option shares, checked where argparse parses it.

A value out of range, ``nan`` or an infinity is one usage line naming the option (argparse's ``argument --beam:
...``, exit status 2), before anything loads, instead of a traceback from deep inside a search.
:meth:`Range.outside` gives the values just outside a range, for the test that walks every CLI's parser.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Range:
    """An argparse type: a whole number (``kind`` int) or a finite real (float) within ``low``..``high``
    (None: unbounded; ``low_open``, ``high_open``: that bound itself excluded)."""

    kind: type
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False

    def describe(self) -> str:
        """What the option takes, in words: ``a whole number of at least 1``."""
        what = "a whole number" if self.kind is int else "a finite number"
        if self.low is not None and self.high is not None:
            excluded = [_show(bound) for bound, open_ in ((self.low, self.low_open), (self.high, self.high_open))
                        if open_]
            return f"{what} from {_show(self.low)} to {_show(self.high)}" + (
                f" (not {' nor '.join(excluded)})" if excluded else "")
        if self.low is not None:
            return f"{what} {'above' if self.low_open else 'of at least'} {_show(self.low)}"
        if self.high is not None:
            return f"{what} {'below' if self.high_open else 'of at most'} {_show(self.high)}"
        return what

    def __call__(self, text: str):
        try:
            value = int(text) if self.kind is int else float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {self.describe()}, got {text!r}") from None
        if self.kind is float and not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"expected {self.describe()}, got {text!r}")
        too_low = self.low is not None and (value <= self.low if self.low_open else value < self.low)
        too_high = self.high is not None and (value >= self.high if self.high_open else value > self.high)
        if too_low or too_high:
            raise argparse.ArgumentTypeError(f"expected {self.describe()}, got {text!r}")
        return value

    def outside(self) -> list[str]:
        """Values just outside the range (and, for a real, ``nan`` and ``inf``): each must be refused."""
        step = 1 if self.kind is int else 1e-6
        values = []
        if self.low is not None:
            values.append(self.low if self.low_open else self.low - step)
        if self.high is not None:
            values.append(self.high if self.high_open else self.high + step)
        shown = [str(int(v)) if self.kind is int else repr(float(v)) for v in values]
        return shown + (["nan", "inf", "-inf"] if self.kind is float else ["1.5"])


def _show(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


#: The ranges the CLIs share.
POSITIVE_INT = Range(int, low=1)
NONNEGATIVE_INT = Range(int, low=0)
#: a seed: any whole number
SEED = Range(int)
FINITE = Range(float)
POSITIVE = Range(float, low=0, low_open=True)
NONNEGATIVE = Range(float, low=0)
#: a share or a probability, 0 and 1 included (dropout, label smoothing, the largest share of unknown units)
FRACTION = Range(float, low=0, high=1)
#: a share of which none is meaningless (context usage's highest-P-CXMI share)
SHARE = Range(float, low=0, high=1, low_open=True)
#: epsilon sampling's epsilon: 0 (plain sampling) up to, not including, 1 (as the schema's mbr.epsilon)
EPSILON = Range(float, low=0, high=1, high_open=True)

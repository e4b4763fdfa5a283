"""How the tools draw many methods in one plot: a colour and a line style each, a floor for zeros.

Matplotlib's ``tab10`` has ten colours and there are twelve methods: every method gets a
(colour, line style, marker) that no other method in the same plot shares, so two lines
of the same colour still differ by their dashes. A value of exactly zero has no place on
a log axis: it is drawn at a floor, and the plot says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

LINE_STYLES = ("-", "--", "-.", ":")
MARKERS = "os^vD<>pPX*h"
# Where an exact zero is drawn on a log axis of relative errors or drifts: below the
# round-off of any double-precision result (≈1e-16), so it cannot be mistaken for one.
ZERO_FLOOR = 1e-17


def method_styles(names: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Matplotlib keyword arguments per name: colour ``tab10`` i mod 10, line style i mod 4
    and marker i mod 12, so that no two of up to 20 names look the same."""
    import matplotlib

    colours = matplotlib.colormaps["tab10"]
    return {
        name: {
            "color": colours(i % 10),
            "ls": LINE_STYLES[i % len(LINE_STYLES)],
            "marker": MARKERS[i % len(MARKERS)],
        }
        for i, name in enumerate(names)
    }


def floored(values: Sequence[float] | np.ndarray) -> tuple[np.ndarray, str]:
    """``values`` with exact zeros raised to :data:`ZERO_FLOOR`, and which of them were
    zero: ``"all"``, ``"some"`` or ``""``."""
    values = np.asarray(values, dtype=float)
    zero = values == 0.0
    which = "all" if np.all(zero) else "some" if np.any(zero) else ""
    return np.where(zero, ZERO_FLOOR, values), which


def floor_note(zeros: dict[str, str], what: str) -> str:
    """The note under a plot that drew zeros at the floor; ``zeros`` maps each name to
    ``"all"`` or ``"some"`` (as :func:`floored` says)."""
    parts = [
        f"{', '.join(n for n, w in zeros.items() if w == which)}: {what} exactly 0 {when}"
        for which, when in (("all", "throughout"), ("some", "at some points"))
        if which in zeros.values()
    ]
    return f"{'; '.join(parts)} (drawn at {ZERO_FLOOR:g})" if parts else ""

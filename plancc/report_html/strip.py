"""The forward as a strip of its layers, coloured by kind, with each layer's warm issues."""

from __future__ import annotations

from dataclasses import dataclass

from plancc import ir
from plancc.report_html.layout import SMALL, X0, X1, Tick, text_width


@dataclass(frozen=True)
class Cell:
    index: int
    kind: str
    kind_index: int
    x: float
    w: float
    letter: str
    issues: int


@dataclass(frozen=True)
class Strip:
    cells: tuple[Cell, ...]
    ticks: tuple[Tick, ...]
    show_letters: bool  # cells wide enough for each kind's mark
    show_issues: bool  # cells wide enough to write each layer's warm issues under it


def strip(plan: ir.Plan) -> Strip | None:
    if plan.forward is None:
        return None
    kinds = list(plan.layers)
    letters = _letters(kinds)
    n = len(plan.forward.kinds)
    w = min(28.0, (X1 - X0) / max(n, 1))
    cells = []
    for i, kind in enumerate(plan.forward.kinds):
        layer = plan.layers[kind]
        last = i == n - 1  # the last layer issues no cross-layer warm
        issues = sum(len(w.entries) for w in layer.warms if not (last and w.next_layer))
        cells.append(Cell(i, kind, kinds.index(kind), X0 + i * w, w, letters[kind], issues))
    room = max(30, text_width(str(n - 1), SMALL) + 6)  # between two layer numbers
    steps = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 10**4, 10**5)
    every = next((k for k in steps if k * w >= room), n)
    ticks = tuple(Tick(X0 + i * w, str(i)) for i in range(0, n, every))
    letters_fit = max(text_width(c.letter) for c in cells) + 2 <= w if cells else False
    issues_fit = max(text_width(str(c.issues), SMALL) for c in cells) + 2 <= w if cells else False
    return Strip(tuple(cells), ticks, letters_fit, issues_fit)


def _letters(kinds: list[str]) -> dict[str, str]:
    """Each kind's mark in the strip: its first letter, or its number when that is shared."""
    first = [k[:1].upper() for k in kinds]
    marks = zip(kinds, first, strict=True)
    return {k: f if first.count(f) == 1 else str(i + 1) for i, (k, f) in enumerate(marks)}

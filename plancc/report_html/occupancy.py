"""The L2 a layer kind's warms hold at each stage, against L2 capacity and the budget."""

from __future__ import annotations

from dataclasses import dataclass

from plancc import ir
from plancc.report_html import fmt
from plancc.report_html.facts import LayerFacts
from plancc.report_html.layout import X0, X1, Badge, Column, text_width


@dataclass(frozen=True)
class Stack:
    x: float
    y: float
    w: float
    h: float
    warm: int
    title: str


@dataclass(frozen=True)
class Level:
    y: float
    label: str
    kind: str  # "capacity" or "budget"


@dataclass(frozen=True)
class Occupancy:
    columns: tuple[Column, ...]
    top: float
    bottom: float
    stacks: tuple[Stack, ...]
    levels: tuple[Level, ...]
    axis: tuple[tuple[float, str], ...]  # (y, label) on the gutter
    peak: tuple[float, float, str] | None  # x, y, text
    badges: tuple[Badge, ...]
    height: float


def occupancy(lf: LayerFacts, cols: tuple[Column, ...], plan: ir.Plan) -> Occupancy:
    capacity = plan.platform.l2_bytes if plan.platform is not None else None
    budget = int(capacity * plan.l2_fraction) if capacity else None
    marked = [e for e in lf.marked if e.figure == "occupancy"]
    top = 52.0 if marked else 28.0  # room above the peak for its badges
    bottom = top + 160
    scale_max = max(capacity or 0, lf.peak.bytes, 1) * 1.12

    def y_of(n: float) -> float:
        return bottom - (bottom - top) * n / scale_max

    stacks = []
    for c, row in zip(cols, lf.held, strict=True):
        base = 0
        for i, n in enumerate(row):
            if n:
                name = lf.warms[i].warm.name
                stacks.append(
                    Stack(
                        c.x + 2,
                        y_of(base + n),
                        c.w - 4,
                        y_of(base) - y_of(base + n),
                        i,
                        f"{c.stage.name}: {name} holds {fmt.mb(n)}",
                    )
                )
                base += n
    levels = []
    axis = [(bottom, "0")]
    if capacity:
        levels.append(Level(y_of(capacity), f"L2 capacity {fmt.mib(capacity)}", "capacity"))
        levels.append(
            Level(
                y_of(budget or 0),
                f"budget {fmt.fraction(plan.l2_fraction)} × L2 = {fmt.mib(budget or 0)}",
                "budget",
            )
        )
        axis += [(y_of(capacity / 2), fmt.mib(capacity // 2)), (y_of(capacity), fmt.mib(capacity))]
    peak = None
    badges = []
    if lf.peak.stage is not None:
        c = cols[lf.peak.stage]
        share = f" = {fmt.share(lf.peak.bytes, capacity, plan)}× L2" if capacity else ""
        names = " + ".join(w.name for w in lf.peak.warms)
        text = f"peak {fmt.mb(lf.peak.bytes)}{share} at {c.stage.name} ({names})"
        x = min(max(c.cx - text_width(text) / 2, X0), X1 - text_width(text))
        peak = (max(x, 0.0), y_of(lf.peak.bytes) - 8, text)
        widths = [text_width(e.label) + 10 for e in marked]
        bx = min(max(c.cx - (sum(widths) + 4 * len(marked)) / 2, X0), X1 - sum(widths))
        for e, w in zip(marked, widths, strict=True):
            badges.append(Badge(e, bx, peak[1] - 28, w))
            bx += w + 4
    return Occupancy(
        cols,
        top,
        bottom,
        tuple(stacks),
        tuple(levels),
        tuple(axis),
        peak,
        tuple(badges),
        bottom + 34,
    )

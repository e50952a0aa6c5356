"""The L2 a layer kind's warms hold at each step, against L2 capacity and the budget.

The peak is named in a band above the plot, with its badges, and a leader marks its
stack: a label inside the plot would sit on the capacity and budget lines' own labels
whenever the peak comes near one (the Pro plan's 134.2 MB peak under its 144 MiB
budget)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from plancc import ir
from plancc.report_html import fmt
from plancc.report_html.facts import LayerFacts
from plancc.report_html.layout import (
    BADGE,
    LINE,
    SMALL,
    WIDTH,
    X0,
    X1,
    Badge,
    Column,
    Grid,
    Step,
    Tick,
    badge,
    text_width,
    wrap,
)


@dataclass(frozen=True)
class Stack:
    x: float
    y: float
    w: float
    h: float
    warm: int  # -1: what streams through L2 beside the warms held
    title: str
    cut: bool = False  # taller than the plot: drawn to its top


@dataclass(frozen=True)
class Level:
    y: float
    label: str
    kind: str  # "capacity" or "budget"


@dataclass(frozen=True)
class Peak:
    lines: tuple[tuple[float, float, str], ...]  # x, baseline, text
    text: str
    x: float  # its stack's centre
    top: float  # the top of its stack
    leader: float  # where the leader from its text starts


@dataclass(frozen=True)
class Occupancy:
    columns: tuple[Column, ...]
    top: float
    bottom: float
    stacks: tuple[Stack, ...]
    levels: tuple[Level, ...]
    axis: tuple[tuple[float, str], ...]  # (y, label) on the gutter
    steps: tuple[Tick, ...]  # under the plot: the stage numbers of each step, where they fit
    peak: Peak | None
    badges: tuple[Badge, ...]
    height: float


def occupancy(lf: LayerFacts, grid: Grid, plan: ir.Plan) -> Occupancy:
    capacity = plan.platform.l2_bytes if plan.platform is not None else None
    budget = int(capacity * plan.l2_fraction) if capacity else None
    marked = [e for e in lf.marked if e.figure == "occupancy"]
    cols = grid.columns
    # The band: rows of badges, then the peak's lines.
    badges = []
    y = 6.0
    text = ""
    lines: list[tuple[float, float, str]] = []
    if lf.peak.stage is not None:
        c = cols[lf.peak.stage]
        share = f" = {fmt.share(lf.peak.bytes, capacity, plan)}× L2" if capacity else ""
        names = " + ".join(w.name for w in lf.peak.warms)
        text = f"peak {fmt.mb(lf.peak.bytes)}{share} at {c.stage.name} ({names})"
        widths = [badge(e, 0, 0).w for e in marked]
        total = sum(widths) + 4 * (len(widths) - 1)
        x = min(max(c.cx - total / 2, X0), X1 - total) if total <= X1 - X0 else X0
        for e, w in zip(marked, widths, strict=True):
            if x + w > X1:
                x, y = X0, y + BADGE + 4
            badges.append(badge(e, x, y))
            x += w + 4
        if marked:
            y += BADGE + 4
        wrapped = wrap(text, X1 - X0)
        block = max(text_width(t) for t in wrapped)
        x = min(max(c.cx - block / 2, X0), X1 - block)
        for line in wrapped:
            y += LINE
            lines.append((x, y - 3, line))
    top = y + 8
    bottom = top + 160
    tallest = max(
        (max(sum(lf.held[i]) for i in s.stages) + _streams(lf, s.stages) for s in grid.steps),
        default=0,
    )
    # What streams may be many times L2 (the MoE's 427.8 MB): drawn up to twice L2, cut.
    cut = max(2 * capacity, lf.peak.bytes) if capacity else None
    shown = max(lf.peak.bytes, tallest if cut is None else min(tallest, cut))
    scale_max = max(capacity or 0, shown, 1) * 1.12

    def y_of(n: float) -> float:
        return bottom - (bottom - top) * (n if cut is None else min(n, cut)) / scale_max

    stacks = []
    for step in grid.steps:
        stacks += _column(lf, grid, step, y_of, cut)
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
    if lf.peak.stage is not None:
        c = cols[lf.peak.stage]
        peak = Peak(tuple(lines), text, c.cx, y_of(lf.peak.bytes), lines[-1][1] + 4)
    return Occupancy(
        cols, top, bottom, tuple(stacks), tuple(levels), tuple(axis), _numbers(grid), peak,
        tuple(badges), bottom + 34,
    )  # fmt: skip


def _streams(lf: LayerFacts, stages: tuple[int, ...]) -> int:
    return sum(lf.streamed[i] for i in stages)


def _column(
    lf: LayerFacts, grid: Grid, step: Step, y_of: Callable[[float], float], cut: int | None
) -> list[Stack]:
    """One step's stack: each warm's bytes held (of stages beside each other, the one that
    holds the most), then what every stage of the step streams through L2 beside them,
    cut above ``cut``."""
    cols = grid.columns
    held = max(step.stages, key=lambda i: (sum(lf.held[i]), -i))
    x, w = step.x + 2 * step.inset, step.w - 4 * step.inset
    out = []
    base = 0
    for i, n in enumerate(lf.held[held]):
        if n:
            name = lf.warms[i].warm.name
            title = f"{cols[held].stage.name}: {name} holds {fmt.mb(n)}"
            out.append(Stack(x, y_of(base + n), w, y_of(base) - y_of(base + n), i, title))
            base += n
    streams = _streams(lf, step.stages)
    if streams:
        names = [cols[i].stage.name for i in step.stages if lf.streamed[i]]
        title = f"{' + '.join(names)}: {fmt.mb(streams)} streams through L2 beside the warms"
        h = y_of(base) - y_of(base + streams)
        over = cut is not None and base + streams > cut
        out.append(Stack(x, y_of(base + streams), w, h, -1, title, over))
    return out


def _numbers(grid: Grid) -> tuple[Tick, ...]:
    """Each step's stage numbers under its column (``4,5`` where stages run beside each
    other), left out where they would touch the previous ones or leave the figure."""
    out: list[Tick] = []
    right = float(X0 - 20)
    for step in grid.steps:
        text = ",".join(str(i + 1) for i in step.stages)
        w = text_width(text, SMALL)
        left = step.cx - w / 2
        if left >= right + 6 and left + w <= WIDTH - 2:
            out.append(Tick(step.cx, text))
            right = left + w
    return tuple(out)

"""The geometry every figure of the report shares: SVG units, a column per stage, badges.

All figures of a layer kind use one x geometry (a column per stage), so the
timeline and the L2 occupancy line up when read top to bottom. Text widths
are estimated from the monospace font the figures use (0.6 em per character),
so layout needs no browser and the bytes are the same everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from itertools import accumulate

from plancc import ir
from plancc.report_html import fmt
from plancc.report_html.facts import Entry, LayerFacts
from plancc.rules.timeline import decimal

WIDTH = 1160  # the SVG viewBox width: fits a 1280 px window with the page's margins
X0 = 112  # the plot's left edge; the gutter left of it names the rows
X1 = 1092  # its right edge; the margin right of it takes the last rotated stage label
CHAR = 6.6  # px per character of 11 px monospace
SMALL_CHAR = 5.45  # px per character of 9 px monospace (the tensor names under a stage)
MAX_READS = 5  # lines of tensor names under a stage
LABEL_ANGLE = 50  # degrees the stage labels are turned (counter-clockwise)
MIN_COLUMN = 18.0  # a stage narrower than this is widened (a timed layout's smallest stage)
MAX_LABEL = 24  # characters of a name shown on a figure; the full name is in its <title>
LANE = 74  # height of a warm's lane
MEASURED = 15  # and of the line a measurement adds to it
STAGE = 56  # height of a stage's box
BRACKET = 20  # height of a row of diagnostic brackets over the stages


def duration(stage: ir.Stage) -> Fraction:
    """A stage's duration as the plan wrote it (``36.8``), not its nearest binary float."""
    return decimal(stage.duration_us) if stage.duration_us is not None else Fraction(0)


def clip(name: str) -> str:
    return name if len(name) <= MAX_LABEL else name[: MAX_LABEL - 1] + "…"


def text_width(text: str) -> float:
    return len(text) * CHAR


@dataclass(frozen=True)
class Column:
    stage: ir.Stage
    x: float
    w: float
    t0: Fraction | None  # start time (µs) in a timed layout
    lines: tuple[str, ...]  # in its box: bytes read, "SDMA", "streams" and their bytes
    names: tuple[str, ...]  # under its box: the tensors it reads, cut to the column's width
    reads: str  # every tensor read with its bytes
    title: str  # the tooltip: all of the above
    anchor: bool  # a warm is issued when it finishes

    @property
    def cx(self) -> float:
        return self.x + self.w / 2

    @property
    def end(self) -> float:
        return self.x + self.w

    @property
    def roomy(self) -> bool:
        """Wide enough for the text inside the box."""
        return self.w >= 50


@dataclass(frozen=True)
class Badge:
    entry: Entry
    x: float
    y: float
    w: float


@dataclass(frozen=True)
class Tick:
    x: float
    text: str


def columns(lf: LayerFacts, plan: ir.Plan) -> tuple[Column, ...]:
    stages = lf.layer.stages
    n = max(1, len(stages))
    span = X1 - X0
    if lf.timed:
        durations = [duration(s) for s in stages]
        widths = _timed_widths([float(d) for d in durations], span)
        starts: list[Fraction | None] = list([Fraction(0), *accumulate(durations)][: len(stages)])
    else:
        widths = [span / n for _ in stages]
        starts = [None for _ in stages]
    out = []
    x = float(X0)
    for stage, w, t0 in zip(stages, widths, starts, strict=True):
        tensors = [plan.tensors[t] for t in dict.fromkeys(stage.reads) if t in plan.tensors]
        static = sum(t.bytes or 0 for t in tensors)
        dynamic = [t.name for t in tensors if not t.static]
        lines = [fmt.mb(static)] if static else (["dynamic"] if dynamic else [])
        lines += ["SDMA"] if stage.sdma else []
        lines += ["streams", fmt.mb(stage.streams)] if stage.streams else []
        parts = [
            f"{t.name} {fmt.mb(t.bytes) if t.bytes is not None else 'dynamic'}" for t in tensors
        ]
        reads = ", ".join(parts) if parts else "no tensor"
        title = f"stage {stage.index + 1} {stage.name}: reads {reads}"
        title += "; uses SDMA" if stage.sdma else ""
        title += f"; streams {fmt.mb(stage.streams)}" if stage.streams else ""
        if stage.duration_us is not None:
            title += f"; {fmt.num(stage.duration_us)} µs"
        anchor = any(w.anchor == stage.index for w in lf.layer.warms)
        names = _fit([t.name for t in tensors], w)
        out.append(Column(stage, x, w, t0, tuple(lines[:3]), names, reads, title, anchor))
        x += w
    return tuple(out)


def _fit(names: list[str], width: float) -> tuple[str, ...]:
    """Tensor names for a column ``width`` wide in the 9 px font: at most MAX_READS lines,
    each cut with an ellipsis to fit; none when not even four characters fit."""
    room = int((width - 6) // SMALL_CHAR)
    if room < 4:
        return ()
    cut = [n if len(n) <= room else n[: room - 1] + "…" for n in names]
    if len(cut) > MAX_READS:
        cut = [*cut[: MAX_READS - 1], f"+{len(cut) - MAX_READS + 1} more"]
    return tuple(cut)


def _timed_widths(durations: list[float], span: float) -> list[float]:
    """Widths proportional to duration, except that no stage is narrower than MIN_COLUMN:
    the short ones are widened and the rest share what is left, in proportion."""
    n = len(durations)
    if n * MIN_COLUMN >= span or sum(durations) == 0:
        return [span / n] * n
    fixed: set[int] = set()
    while True:
        rest = span - len(fixed) * MIN_COLUMN
        total = sum(d for i, d in enumerate(durations) if i not in fixed)
        widths = [MIN_COLUMN if i in fixed else rest * d / total for i, d in enumerate(durations)]
        narrow = {i for i, w in enumerate(widths) if w < MIN_COLUMN} - fixed
        if not narrow:
            return widths
        fixed |= narrow


def x_at(cols: tuple[Column, ...], t: Fraction) -> tuple[float, bool]:
    """x of time ``t`` (µs from the layer's start) in a timed layout, and whether it lies
    past the layer's end (then the right edge)."""
    for c in cols:
        d = duration(c.stage)
        if c.t0 is not None and d and c.t0 <= t < c.t0 + d:
            return c.x + float((t - c.t0) / d) * c.w, False
    last = cols[-1]
    return last.end, t > (last.t0 or 0) + duration(last.stage)

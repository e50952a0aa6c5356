"""The geometry every figure of the report shares: SVG units, a column per step, text widths.

All figures of a layer kind use one x geometry, so the timeline and the L2
occupancy line up when read top to bottom: a column per step of the layer's
schedule (``ir.Layer.schedule``), and a stage in the column of the step it
starts at, in its lane's row. A plan without `deps` has one stage per step and
one row: a column per stage, in list order.

Every text inside a figure is set in the monospace figure font, so its width
is known without a browser (``EM`` per px of size) and layout gives the same
bytes everywhere; the browser test measures that no two labels collide.
"""

from __future__ import annotations

import heapq
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from itertools import accumulate

from plancc import ir
from plancc.facts.timeline import decimal
from plancc.report_html import fmt
from plancc.report_html.facts import Entry, LayerFacts
from plancc.tables.engines import ENGINES

WIDTH = 1160  # the SVG viewBox width: fits a 1280 px window with the page's margins
X0 = 112  # the plot's left edge; the gutter left of it names the rows
X1 = 1092  # its right edge; the margin right of it takes the last rotated stage label
# The advance of the figure fonts per px of size: DejaVu Sans Mono and Menlo 0.602,
# Consolas 0.55; rounded up, so that an estimate is never short.
EM = 0.61
FONT = 11  # px: the figures' text
SMALL = 10  # px: the lines inside a stage's box, time and stage numbers
TINY = 9  # px: the tensor names under a stage
LINE = 14  # px between the baselines of two lines of FONT (its em box is 12.8 px tall)
MAX_READS = 5  # lines of tensor names under a stage
LABEL_ANGLE = 50  # degrees the stage labels are turned (counter-clockwise)
# Turned labels closer than this (x between their starts) would touch: 13 px of em box
# measured across the turned baseline, 13 / sin(50°) = 17 px.
LABEL_PITCH = 18.0
MIN_COLUMN = 18.0  # a step narrower than this is widened (a timed layout's shortest step)
MAX_LABEL = 24  # characters of a name shown on a figure; the full name is in its <title>
STAGE = 56  # height of a stage's box
BRACKET = 20  # height of a row of diagnostic brackets over the stages
BADGE = 15  # height of a badge


def duration(stage: ir.Stage) -> Fraction:
    """A stage's duration as the plan wrote it (``36.8``), not its nearest binary float."""
    return decimal(stage.duration_us) if stage.duration_us is not None else Fraction(0)


def text_width(text: str, size: float = FONT) -> float:
    return len(text) * size * EM


def clip(name: str, most: int = MAX_LABEL) -> str:
    """``name`` in at most ``most`` characters: its start and its end around an ellipsis,
    as names that share a long prefix differ at their end."""
    if len(name) <= most:
        return name
    if most < 2:
        return "…"[:most]
    head = (most - 1) // 2
    return name[:head] + "…" + name[len(name) - (most - 1 - head) :]


def distinct(names: Sequence[str], most: Sequence[int]) -> list[str]:  # noqa: C901 (cuts names where they differ: a few small cases)
    """Each name clipped to its ``most`` characters, and where two would read the same
    (``deepseek_v4…tmul_kernel`` for each of 2,000 stages), cut so as to show where those
    names differ: what they share at the start gives way first."""
    out = [clip(n, m) for n, m in zip(names, most, strict=True)]
    alike: dict[str, list[int]] = {}
    for i, label in enumerate(out):
        if label != names[i]:
            alike.setdefault(label, []).append(i)
    for members in alike.values():
        if len(members) < 2:
            continue
        # The start all of them share: the one the first and the last in order share.
        first, last = min(names[i] for i in members), max(names[i] for i in members)
        shared = next(
            (k for k, (a, b) in enumerate(zip(first, last, strict=False)) if a != b), len(first)
        )
        for i in members:
            rest, m = names[i][shared:], most[i]
            if len(rest) + 2 <= m:
                out[i] = names[i][: m - 1 - len(rest)] + "…" + rest
            elif m >= 2:
                out[i] = "…" + clip(rest, m - 1)
    # What still reads the same (cut too short to show a difference): any cut not taken.
    taken = Counter(out)
    for i, (name, m) in enumerate(zip(names, most, strict=True)):
        if taken[out[i]] < 2 or len(name) <= m or m < 2:
            continue
        for head in range(m - 1, -1, -1):
            tried = name[:head] + "…" + name[len(name) - (m - 1 - head) :]
            if tried not in taken:
                taken[out[i]] -= 1
                out[i] = tried
                taken[tried] += 1
                break
    return out


def wrap(text: str, width: float, size: float = FONT) -> tuple[str, ...]:
    """``text`` in lines no wider than ``width``, broken at spaces (a longer word is cut)."""
    room = max(1, int(width // (size * EM)))
    lines: list[str] = []
    line = ""
    for given in text.split(" "):
        word = given
        while len(word) > room:
            if line:
                lines.append(line)
                line = ""
            lines.append(word[:room])
            word = word[room:]
        if not line:
            line = word
        elif len(line) + 1 + len(word) <= room:
            line += " " + word
        else:
            lines.append(line)
            line = word
    lines.append(line)
    return tuple(lines)


@dataclass(frozen=True)
class Step:
    """A column: the stages that start at one step of the schedule."""

    index: int
    x: float
    w: float
    t0: Fraction | None  # start time (µs) in a timed layout
    length: Fraction  # its longest stage's duration: how long the step lasts, drawn
    stages: tuple[int, ...]

    @property
    def cx(self) -> float:
        return self.x + self.w / 2

    @property
    def end(self) -> float:
        return self.x + self.w

    @property
    def inset(self) -> float:
        """The gap each side of a box drawn in the column: 1 px, less in a narrow one."""
        return min(1.0, self.w / 4)


@dataclass(frozen=True)
class Column:
    """A stage: drawn in its step's column, in its lane's row."""

    stage: ir.Stage
    step: Step
    row: int  # its lane in the schedule: 0 unless stages beside it start at its step
    label: str  # its turned name on the figure, "" where there is no room for one
    number: bool  # room for its number in its box
    lines: tuple[str, ...]  # in its box: bytes read, "SDMA", "streams" and their bytes
    names: tuple[str, ...]  # under its box: the tensors it reads, cut to the column's width
    reads: str  # every tensor read with its bytes
    title: str  # the tooltip: all of the above
    anchor: bool  # a warm is issued when it finishes

    @property
    def x(self) -> float:
        return self.step.x

    @property
    def w(self) -> float:
        return self.step.w

    @property
    def cx(self) -> float:
        return self.step.cx

    @property
    def end(self) -> float:
        return self.step.end

    @property
    def roomy(self) -> bool:
        """Wide enough for the text inside the box: its lines and ``12 anchor``."""
        first = f"{self.stage.number} anchor" if self.anchor else ""
        return max(len(line) for line in (*self.lines, first)) * SMALL * EM + 6 <= self.w


@dataclass(frozen=True)
class Grid:
    steps: tuple[Step, ...]
    columns: tuple[Column, ...]  # one per stage, in list order
    rows: int  # lanes: the most stages that start at one step

    @property
    def linear(self) -> bool:
        return len(self.steps) == len(self.columns)


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


def badge(entry: Entry, x: float, y: float) -> Badge:
    return Badge(entry, x, y, text_width(entry.label) + 10)


def grid(lf: LayerFacts, plan: ir.Plan) -> Grid:
    layer = lf.layer
    stages = layer.stages
    steps = _steps(layer, lf.timed)
    schedule = layer.schedule
    step_of = {i: st for st in steps for i in st.stages}
    rows = [schedule.lanes[i] for i in range(len(stages))]
    # The turned labels, row by row: one where the last one left room, each cut to what
    # is left of the figure's width on its right.
    across = FONT * EM * math.cos(math.radians(LABEL_ANGLE))  # x per character of a label
    shown: list[int] = []
    last: dict[int, float] = {}
    for i in sorted(range(len(stages)), key=lambda i: (rows[i], step_of[i].index)):
        cx = step_of[i].cx
        if cx - last.get(rows[i], -math.inf) >= LABEL_PITCH:
            shown.append(i)
            last[rows[i]] = cx
    most = [min(MAX_LABEL, int((WIDTH - 6 - step_of[i].cx) / across)) for i in shown]
    labels = dict(zip(shown, distinct([stages[i].name for i in shown], most), strict=True))
    anchors = {a for w in layer.warms for a in w.anchors}  # every stage of a join
    out = []
    for stage, row in zip(stages, rows, strict=True):
        step = step_of[stage.index]
        tensors = [plan.tensors[t] for t in dict.fromkeys(stage.reads) if t in plan.tensors]
        # A stage that reads part of a weight (`share`) streams that part of it.
        static = sum(stage.read_bytes(t) for t in tensors if t.static)
        dynamic = [t.name for t in tensors if not t.static]
        lines = [fmt.mb(static)] if static else (["dynamic"] if dynamic else [])
        lines += ["SDMA"] if stage.sdma else []
        lines += ["streams", fmt.mb(stage.streams)] if stage.streams else []
        parts = [_read(stage, t) for t in tensors]
        reads = ", ".join(parts) if parts else "no tensor"
        title = f"stage {stage.number} {stage.name}: reads {reads}"
        title += "; uses SDMA" if stage.sdma else ""
        if stage.collective is not None:
            title += f"; a collective ({ENGINES[stage.collective].label})"
        title += f"; streams {fmt.mb(stage.streams)}" if stage.streams else ""
        if stage.duration_us is not None:
            title += f"; {fmt.num(stage.duration_us)} µs"
        if stage.deps is not None:
            waits = ", ".join(stages[d].name for d in stage.deps)
            title += f"; waits for {waits}" if waits else "; starts at layer entry"
        anchor = stage.index in anchors
        number = text_width(f"{stage.number}", SMALL) + 6 <= step.w
        names = _fit([t.name for t in tensors], step.w)
        label = labels.get(stage.index, "")
        out.append(
            Column(stage, step, row, label, number, tuple(lines[:3]), names, reads, title, anchor)
        )
    return Grid(steps, tuple(out), max(rows, default=0) + 1)


def _steps(layer: ir.Layer, timed: bool) -> tuple[Step, ...]:
    """The schedule's steps as columns: equal widths, or to scale where every stage has a
    duration (a step as long as its longest stage)."""
    start = layer.schedule.start
    members: list[list[int]] = [[] for _ in range(max(start, default=-1) + 1)]
    for i, step in enumerate(start):
        members[step].append(i)
    n = max(1, len(members))
    span = X1 - X0
    lengths = [max(duration(layer.stages[i]) for i in m) for m in members]
    if timed:
        widths = _timed_widths([float(d) for d in lengths], span)
        starts: list[Fraction | None] = list([Fraction(0), *accumulate(lengths)][: len(lengths)])
    else:
        widths = [span / n for _ in members]
        starts = [None for _ in members]
    out = []
    x = float(X0)
    for k, (m, w, t0, length) in enumerate(zip(members, widths, starts, lengths, strict=True)):
        out.append(Step(k, x, w, t0, length, tuple(m)))
        x += w
    return tuple(out)


def _fit(names: list[str], width: float) -> tuple[str, ...]:
    """Tensor names for a column ``width`` wide in the TINY font: at most MAX_READS lines,
    each cut with an ellipsis to fit; none when not even four characters fit."""
    room = int((width - 6) // (TINY * EM))
    if room < 4:
        return ()
    cut = [n if len(n) <= room else n[: room - 1] + "…" for n in names]
    if len(cut) > MAX_READS:
        cut = [*cut[: MAX_READS - 1], f"+{len(cut) - MAX_READS + 1} more"]
    return tuple(cut)


def _timed_widths(durations: list[float], span: float) -> list[float]:
    """Widths proportional to duration, except that no step is narrower than MIN_COLUMN:
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


def x_at(steps: tuple[Step, ...], t: Fraction) -> tuple[float, bool]:
    """x of time ``t`` (µs from the layer's start) in a timed layout, and whether it lies
    past the layer's end (then the right edge)."""
    for s in steps:
        if s.t0 is not None and s.length and s.t0 <= t < s.t0 + s.length:
            return s.x + float((t - s.t0) / s.length) * s.w, False
    last = steps[-1]
    return last.end, t > (last.t0 or 0) + last.length


def spread(items: Sequence[tuple[float, float]], gap: float = 4) -> list[int]:
    """Rows for intervals (left, right) given by their left ends: each in the first row
    where it comes no closer than ``gap`` to the one before it (heaps of the busy and the
    free rows, so that 10,000 brackets at one stage do not cost 10,000² steps)."""
    busy: list[tuple[float, int]] = []  # (right end + gap, row)
    free: list[int] = []
    out = []
    for left, right in items:
        while busy and busy[0][0] <= left:
            heapq.heappush(free, heapq.heappop(busy)[1])
        row = heapq.heappop(free) if free else len(busy) + len(free)
        heapq.heappush(busy, (right + gap, row))
        out.append(row)
    return out


def _read(stage: ir.Stage, t: ir.Tensor) -> str:
    """``wo 52.4 MB``, ``w_gate 62.9 MB (6/17 of 178.3 MB)``, ``k_cache dynamic``."""
    if t.bytes is None:
        return f"{t.name} dynamic"
    share = dict(stage.shares).get(t.name)
    if share is None:
        return f"{t.name} {fmt.mb(t.bytes)}"
    return f"{t.name} {fmt.mb(stage.read_bytes(t))} ({share} of {fmt.mb(t.bytes)})"

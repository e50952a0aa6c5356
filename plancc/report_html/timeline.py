"""The timeline of a layer kind: its stages by step of the schedule (stages that run beside
each other in parallel rows), each warm from its anchor's finish to its last consumer,
and, where every stage has a duration, the warm's estimated landing.

Every text is given its place here, top to bottom, each in a room of its own: the
browser test checks that no two labels collide."""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from plancc.report_html import fmt
from plancc.report_html.facts import Entry, LayerFacts, WarmFacts
from plancc.report_html.layout import (
    BADGE,
    BRACKET,
    LABEL_ANGLE,
    LINE,
    MAX_LABEL,
    MIN_COLUMN,
    SMALL,
    STAGE,
    WIDTH,
    X0,
    X1,
    Badge,
    Column,
    Grid,
    Tick,
    badge,
    clip,
    distinct,
    spread,
    text_width,
    wrap,
    x_at,
)
from plancc.report_html.measure import Measure
from plancc.text import fmt_percent


@dataclass(frozen=True)
class Text:
    x: float
    y: float  # its baseline
    text: str


@dataclass(frozen=True)
class Row:
    """A lane of the schedule: the stages drawn at one height."""

    label_y: float  # where its turned stage labels start
    stage_y: float  # the top of its boxes
    reads_y: float  # the top of the tensor names under them
    gutter: str  # "stages", or the lane's number where stages run beside each other


@dataclass(frozen=True)
class Bracket:
    entry: Entry
    x: float
    w: float
    y: float
    badge: Badge


@dataclass(frozen=True)
class Segment:
    x: float
    w: float
    tensor: str
    until_us: float  # when the tensor has landed, µs after the layer's start


@dataclass(frozen=True)
class Lane:
    facts: WarmFacts
    y: float  # its top
    name: str  # the warm's name on the figure
    summary: str
    badges: tuple[Badge, ...]
    bar: tuple[float, float] | None  # x from the anchor's finish to the last consumer's
    bar_y: float
    order: Text | None  # the tensors in issue order, written in the bar when it fits
    marks: tuple[float, ...]  # x of each consumer's start
    consumers: tuple[Text, ...]  # "1 wo_a, 2 wo_b": the tensors each mark is the consumer of
    landing: tuple[Segment, ...]  # the estimated transfer, tensor by tensor
    landing_y: float
    deadline: float | None  # x of the first consumer's start, in a timed layout
    clipped: bool  # the estimated transfer runs past the layer's end
    note: str  # the landing arithmetic, or why there is none (the warms table's cell)
    lines: tuple[Text, ...]  # the note as drawn, in lines
    measured: str  # with --measure: the achieved bandwidth beside the estimate ("" without)
    measured_lines: tuple[Text, ...]
    bottom: float
    # "out": a cross-layer warm, its bar running on into the next layer; "in": one of the
    # kind before, its bar coming in at the entry; "": a warm of this layer alone.
    cross: str = ""
    guarded: bool = False  # issued only while its guards hold: drawn dashed


@dataclass(frozen=True)
class Timeline:
    grid: Grid
    rows: tuple[Row, ...]
    brackets: tuple[Bracket, ...]
    lanes: tuple[Lane, ...]
    ticks: tuple[Tick, ...]
    height: float
    scale_note: str

    @property
    def columns(self) -> tuple[Column, ...]:
        return self.grid.columns


def timeline(lf: LayerFacts, grid: Grid, measure: Measure | None) -> Timeline:
    cols = grid.columns
    sine = math.sin(math.radians(LABEL_ANGLE))
    rows = []
    y = 0.0
    for r in range(grid.rows):
        mine = [c for c in cols if c.row == r]
        longest = max((len(c.label) for c in mine), default=0)
        band = round(text_width("x" * longest) * sine + 14)
        stage_y = y + band + 4
        reads_y = stage_y + STAGE + 3
        gutter = "stages" if grid.rows == 1 else f"lane {r + 1}"
        rows.append(Row(y + band - 2, stage_y, reads_y, gutter))
        y = reads_y + 11 * max((len(c.names) for c in mine), default=0) + 8
    placed = []
    # A bracket over its stages, its badge centred on it: the two take room together.
    spans = []
    for e in lf.marked:
        if e.figure != "timeline" or not e.stages:
            continue
        x = min(cols[s].x for s in e.stages) + 1
        w = max(cols[s].end for s in e.stages) - x - 1
        b = badge(e, 0, 0)
        bx = min(max(x + w / 2 - b.w / 2, X0), X1 - b.w)
        spans.append((min(x, bx), e.number, max(x + w, bx + b.w), x, w, bx, e))
    spans.sort(key=lambda s: s[:2])
    levels = spread([(left, right) for left, _, right, *_ in spans])
    for (*_, x, w, bx, e), level in zip(spans, levels, strict=True):
        top = y + level * BRACKET
        placed.append(Bracket(e, x, w, top, badge(e, bx, top + 3)))
    y += (max(levels) + 1) * BRACKET + 8 if levels else 0
    lanes = []
    names = distinct([wf.warm.name for wf in lf.warms], [MAX_LABEL] * len(lf.warms))
    found: dict[int, list[Entry]] = {}  # a warm's diagnostics about no stage: its badges
    for e in lf.marked:
        if e.figure == "timeline" and e.warm is not None and not e.stages:
            found.setdefault(e.warm, []).append(e)
    for wf, name in zip(lf.warms, names, strict=True):
        badges = sorted(found.get(wf.index, ()), key=lambda e: e.number)
        lanes.append(_lane(lf, wf, grid, measure, name=name, found=badges, y=y + 3))
        y = lanes[-1].bottom + 8
    ticks = _ticks(grid) if lf.timed else ()
    if lf.timed:
        note = f"to scale: widths from duration_us, none narrower than {MIN_COLUMN:g} px"
    else:
        note = "not to scale: equal widths, as not every stage has duration_us"
    height = y + (22 if ticks else 0) + (0 if lanes else 24)
    return Timeline(grid, tuple(rows), tuple(placed), tuple(lanes), ticks, height, note)


def _ticks(grid: Grid) -> tuple[Tick, ...]:
    """A time label at each step's start where it does not crowd the previous one."""
    out: list[Tick] = []
    for s in grid.steps:
        if s.t0 is None:
            continue
        text = f"{fmt.num(float(s.t0))} µs"
        if not out or s.x - out[-1].x >= text_width(out[-1].text, SMALL) + 8:
            out.append(Tick(s.x, text))
    if out and out[-1].x + text_width(out[-1].text, SMALL) > WIDTH - 2:
        out.pop()
    return tuple(out)


def _lane(  # noqa: C901, PLR0912, PLR0915 (one warm's lane: bar, brackets, badges and sentences, placed in order)
    lf: LayerFacts,
    wf: WarmFacts,
    grid: Grid,
    measure: Measure | None,
    *,
    name: str,
    found: list[Entry],
    y: float,
) -> Lane:
    cols = grid.columns
    warm = wf.warm
    coming = wf.coming_from is not None
    summary = (
        f"{len(warm.entries)} tensor{'s' if len(warm.entries) != 1 else ''}, {fmt.mb(wf.bytes)}"
    )
    if coming:
        summary = f"from {clip(wf.coming_from or '')}, the layer before · " + summary
    elif warm.anchor is None:
        summary += " · its `after` names no stage: not placed"
    else:
        after = " + ".join(clip(cols[a].stage.name) for a in warm.anchors)  # a join's all
        summary = f"after {after} · " + summary
    if warm.next_layer and not coming:
        summary += " · for the next layer"
    if warm.guards:
        summary += " · when " + " and ".join(str(g) for g in warm.guards)
    # Its badges on the title's line, at the right, when they fit there; else in rows of
    # their own under it.
    widths = [badge(m, 0, 0).w for m in found]
    title_end = X0 + text_width(name + summary) + 8
    badges = []
    bar_y = y + 18
    if title_end + 12 + sum(widths) + 4 * len(widths) <= X1:
        x = X1 - sum(widths) - 4 * (len(widths) - 1)
        for m, w in zip(found, widths, strict=True):
            badges.append(badge(m, x, y))
            x += w + 4
    else:
        x = X0
        top = y + 17
        for m, w in zip(found, widths, strict=True):
            if x + w > X1:
                x, top = X0, top + BADGE + 4
            badges.append(badge(m, x, top))
            x += w + 4
        bar_y = top + BADGE + 4
    # ``live`` counts steps of the schedule, not stages: the bar ends with the step at
    # which its last consumer starts.
    bar = None
    start, end = warm.live
    if coming and start <= end < len(grid.steps):  # held from the entry
        bar = (grid.steps[0].x, grid.steps[end].end)
    elif warm.anchor is not None and start <= end < len(grid.steps):
        bar = (cols[warm.anchor].end, grid.steps[end].end)
    elif warm.next_layer and warm.anchor is not None:  # anchored on the last step: at the edge
        bar = (cols[warm.anchor].end, cols[warm.anchor].end)
    numbered: dict[str, int] = {}  # a tensor's number: its first item's (a prefix may be two)
    for i, e in enumerate(warm.entries, start=1):
        numbered.setdefault(e.tensor.name, i)
    order_text = " → ".join(
        f"{i} {clip(e.tensor.name)}{'' if e.rows is None else f' {e.rows}'}"
        for i, e in enumerate(warm.entries, start=1)
    )
    order = None
    if bar is not None and text_width(order_text) + 12 <= bar[1] - bar[0]:
        order = Text(bar[0] + 6, bar_y + 11.5, order_text)
    # A mark at each consumer's start; what it consumes beside it, in rows where two
    # would touch.
    # A cross-layer warm's consumers are the next layer's: marked in that kind's figure.
    landing = wf.landing if not warm.next_layer or coming else None
    marks: list[float] = []
    consumers: list[Text] = []
    below = bar_y + 20
    readers = wf.consumers_here if coming else (landing.consumers if landing else None)
    if readers is not None:
        by_stage: dict[int, list[str]] = {}
        for tensor, stage in readers.items():
            by_stage.setdefault(stage.index, []).append(f"{numbered[tensor]} {clip(tensor)}")
        found_at = sorted(((cols[i].x, ", ".join(n)) for i, n in by_stage.items()))
        marks = [x for x, _ in found_at]
        boxes = []
        for x, text in found_at:
            w = text_width(text)
            boxes.append((min(x + 6, WIDTH - 4 - w), w, text))
        boxes.sort()  # by where they start: one kept inside the figure may start earlier
        levels = spread([(left, left + w) for left, w, _ in boxes], gap=8)
        for (left, _, text), level in zip(boxes, levels, strict=True):
            consumers.append(Text(left, bar_y + 29 + level * LINE, text))
        below = max(t.y for t in consumers) + 6
    segments: list[Segment] = []
    deadline = None
    clipped = False
    note = _cross_note(wf, cols) if warm.next_layer else _note(wf, cols)
    if (
        landing is not None
        and landing.first is not None
        and lf.timed
        and landing.rate is not None
        and warm.anchor is not None
    ):
        step = cols[warm.anchor].step
        t = (step.t0 or Fraction(0)) + step.length
        start_x = step.end
        sent = 0
        for entry in wf.static_entries:
            sent += entry.bytes
            done = t + _transfer_us(landing.rate, sent)
            end_x, past = x_at(grid.steps, done)
            segments.append(
                Segment(start_x, max(end_x - start_x, 0.0), entry.tensor.name, float(done))
            )
            clipped = clipped or past
            start_x = end_x
        deadline = cols[landing.first.index].x
    landing_y = below
    if segments:
        below += 9
    lines = []
    for text in wrap(note, X1 - X0):
        below += LINE
        lines.append(Text(X0, below, text))
    measured = _measured(measure, wf)
    measured_lines = []
    for text in wrap(measured, X1 - X0) if measured else ():
        below += LINE
        measured_lines.append(Text(X0, below, text))
    return Lane(
        wf, y, name, summary, tuple(badges), bar, bar_y, order, tuple(marks), tuple(consumers),
        tuple(segments), landing_y, deadline, clipped, note, tuple(lines), measured,
        tuple(measured_lines), below + 5, ("in" if coming else "out") if warm.next_layer else "",
        bool(warm.guards),
    )  # fmt: skip


def _cross_note(wf: WarmFacts, cols: tuple[Column, ...]) -> str:
    """A cross-layer warm's sentence: where it comes from or goes, and PC107's verdict on
    its crossing (the two layer kinds joined: the next layer's stages are ``next.*``)."""
    if wf.coming_from is not None:
        return (
            f"Issued by the layer before ({wf.coming_from}) for this one: held from the entry "
            "to its last consumer here."
        )
    judged = wf.landing
    if judged is None or judged.crossing is None or judged.first is None:
        return "For the next layer: no static tensor of the warm is read there."
    c = judged.crossing
    first = c.stage(judged.first.index).name
    kind = f"{c.target.name} and the other kinds after it" if c.several else c.target.name
    head = f"For the next layer ({kind}): its first consumer there is {first}"
    if judged.window_us is None or judged.rate is None or judged.share is None:
        if judged.lands is False:
            return f"{head}, right after the anchor: cannot land (PC107)."
        return f"{head}; no landing estimate: not every stage before it has duration_us."
    verdict = "lands in time" if judged.lands else "cannot land (PC107)"
    return (
        f"{head}; PC107 estimate: in the {fmt.num(float(judged.window_us))} µs before it, "
        f"{fmt.num(judged.rate / 1e9)} GB/s lands {fmt_percent(judged.share)} of "
        f"{fmt.mb(judged.bytes)}: {verdict}."
    )


def _measured(measure: Measure | None, wf: WarmFacts) -> str:
    """The measurement of a warm, on its own line under the estimate."""
    achieved = measure.achieved.get(wf.warm.name) if measure is not None else None
    if achieved is None:
        return ""
    text = f"Measured: {fmt.num(achieved.gbps)} GB/s"
    rate = wf.landing.rate if wf.landing is not None else None
    if rate:
        text += f", {fmt.num(round(100 * achieved.gbps * 1e9 / rate))} % of the estimate's rate"
    text += "."
    if achieved.landed is not None:
        consumer, before, of = achieved.landed
        text += f" Landed before {consumer} in {before} of {of} layers measured."
    return text


def _transfer_us(rate: int, nbytes: int) -> Fraction:
    """How long the platform's SDMA rate (B/s) takes to move ``nbytes``: the warm drawn
    tensor by tensor."""
    return Fraction(nbytes * 1_000_000, rate)


def _note(wf: WarmFacts, cols: tuple[Column, ...]) -> str:
    warm, landing = wf.warm, wf.landing
    if warm.anchor is None:
        return "No landing estimate: the warm has no anchor stage."
    if landing is None or landing.first is None:
        return "No landing estimate: no static tensor of the warm is read after its anchor."
    first = landing.first.name
    anchor = cols[warm.anchor].stage.name  # of a join, the last to finish: the window opens
    if landing.window_us is None or landing.rate is None or landing.share is None:
        if not landing.lands:
            return f"Cannot land: its first consumer {first} runs right after {anchor} (PC107)."
        if landing.rate is None:
            return "No landing estimate: the platform has no SDMA rate."
        return f"No landing estimate: not every stage between {anchor} and {first} has duration_us."
    total = _transfer_us(landing.rate, landing.bytes)
    verdict = "lands in time" if landing.lands else "cannot land (PC107)"
    return (
        f"PC107 estimate: in the {fmt.num(float(landing.window_us))} µs before {first}, "
        f"{fmt.num(landing.rate / 1e9)} GB/s lands {fmt.mb(int(landing.landed or 0))} = "
        f"{fmt_percent(landing.share)} of {fmt.mb(landing.bytes)}; all of it after "
        f"{fmt.num(float(total), 1)} µs: {verdict}."
    )

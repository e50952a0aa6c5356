"""The timeline of a layer kind: its stages in order, each warm from its anchor to its last
consumer, and, where every stage has a duration, the warm's estimated landing."""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from plancc.report_html import fmt
from plancc.report_html.facts import Entry, LayerFacts, WarmFacts
from plancc.report_html.layout import (
    BRACKET,
    LABEL_ANGLE,
    LANE,
    MEASURED,
    MIN_COLUMN,
    STAGE,
    X0,
    X1,
    Badge,
    Column,
    Tick,
    clip,
    duration,
    text_width,
    x_at,
)
from plancc.report_html.measure import Measure


@dataclass(frozen=True)
class Bracket:
    entry: Entry
    x: float
    w: float
    y: float
    badge: Badge


@dataclass(frozen=True)
class Consumer:
    x: float
    text: str  # "1 wo_a, 2 wo_b": the tensors this stage is the consumer of, by issue number


@dataclass(frozen=True)
class Segment:
    x: float
    w: float
    tensor: str
    until_us: float  # when the tensor has landed, µs after the layer's start


@dataclass(frozen=True)
class Lane:
    facts: WarmFacts
    y: float
    summary: str
    bar: tuple[float, float] | None  # x from the anchor's end to the last consumer's end
    order: str  # the tensors in issue order, written in the bar when it fits
    consumers: tuple[Consumer, ...]
    landing: tuple[Segment, ...]  # the estimated transfer, tensor by tensor
    deadline: float | None  # x of the first consumer's start, in a timed layout
    note: str  # the landing arithmetic, or why there is none
    measured: str  # with --measure: the achieved bandwidth beside the estimate ("" without)
    badges: tuple[Badge, ...]
    clipped: bool  # the estimated transfer runs past the layer's end


@dataclass(frozen=True)
class Timeline:
    columns: tuple[Column, ...]
    label_band: float
    stage_y: float
    reads_y: float  # top of the tensor names under the stages
    brackets: tuple[Bracket, ...]
    lanes: tuple[Lane, ...]
    ticks: tuple[Tick, ...]
    height: float
    scale_note: str


def timeline(lf: LayerFacts, cols: tuple[Column, ...], measure: Measure | None) -> Timeline:
    longest = max((len(clip(c.stage.name)) for c in cols), default=4)
    band = round(text_width("x" * longest) * math.sin(math.radians(LABEL_ANGLE)) + 14)
    stage_y = band + 4.0
    rows = _pack([e for e in lf.marked if e.figure == "timeline" and e.stages])
    reads_y = stage_y + STAGE + 3
    y = reads_y + 11 * max((len(c.names) for c in cols), default=0) + 8
    placed = []
    for row, items in enumerate(rows):
        for e in items:
            first, last = cols[min(e.stages)], cols[max(e.stages)]
            x, w = first.x + 1, last.end - first.x - 2
            bw = text_width(e.label) + 10
            bx = min(max(x + w / 2 - bw / 2, X0), X1 - bw)
            top = y + row * BRACKET
            placed.append(Bracket(e, x, w, top, Badge(e, bx, top + 3, bw)))
    y += len(rows) * BRACKET + 8
    lanes = []
    for wf in lf.warms:
        lanes.append(_lane(lf, wf, cols, measure, y))
        y += LANE + (MEASURED if lanes[-1].measured else 0)
    ticks = _ticks(cols) if lf.timed else ()
    if lf.timed:
        note = f"to scale: widths from duration_us, none narrower than {MIN_COLUMN:g} px"
    else:
        note = "not to scale: equal widths, as not every stage has duration_us"

    height = y + (24 if ticks else 4) + (0 if lanes else 24)
    return Timeline(cols, band, stage_y, reads_y, tuple(placed), tuple(lanes), ticks, height, note)


def _pack(entries: list[Entry]) -> list[list[Entry]]:
    """Brackets in rows, first fit, so that no two in a row overlap."""
    rows: list[list[Entry]] = []
    for e in sorted(entries, key=lambda e: (min(e.stages), e.number)):
        for row in rows:
            if all(max(o.stages) < min(e.stages) for o in row):
                row.append(e)
                break
        else:
            rows.append([e])
    return rows


def _ticks(cols: tuple[Column, ...]) -> tuple[Tick, ...]:
    """A time label at each stage's start where it does not crowd the previous one."""
    out: list[Tick] = []
    for c in cols:
        if c.t0 is None:
            continue
        text = f"{fmt.num(float(c.t0))} µs"
        if not out or c.x - out[-1].x >= text_width(out[-1].text) + 8:
            out.append(Tick(c.x, text))
    return tuple(out)


def _lane(
    lf: LayerFacts, wf: WarmFacts, cols: tuple[Column, ...], measure: Measure | None, y: float
) -> Lane:
    warm = wf.warm
    summary = (
        f"{len(warm.entries)} tensor{'s' if len(warm.entries) != 1 else ''}, {fmt.mb(wf.bytes)}"
    )
    if warm.anchor is None:
        summary += " · its `after` names no stage: not placed"
    else:
        summary = f"after {cols[warm.anchor].stage.name} · " + summary
    bar = None
    start, end = warm.live
    if warm.anchor is not None and start <= end < len(cols):
        bar = (cols[warm.anchor].end, cols[end].end)
    numbered = {e.tensor.name: i for i, e in enumerate(warm.entries, start=1)}
    order = " → ".join(
        f"{i} {clip(e.tensor.name)}" for e, i in zip(warm.entries, numbered.values(), strict=True)
    )
    if bar is not None and text_width(order) + 12 > bar[1] - bar[0]:
        order = ""
    consumers = []
    landing = wf.landing
    if landing is not None:
        by_stage: dict[int, list[str]] = {}
        for name, stage in landing.consumers.items():
            by_stage.setdefault(stage.index, []).append(f"{numbered[name]} {clip(name)}")
        consumers = [Consumer(cols[i].x, ", ".join(names)) for i, names in sorted(by_stage.items())]
    segments: list[Segment] = []
    deadline = None
    clipped = False
    note = _note(wf, cols)
    if landing is not None and lf.timed and landing.rate is not None and warm.anchor is not None:
        anchor = cols[warm.anchor]
        t = (anchor.t0 or Fraction(0)) + duration(anchor.stage)
        start_x = anchor.end
        sent = 0
        for e in wf.static_entries:
            sent += e.tensor.bytes or 0
            done = t + (landing.transfer_us(sent) or Fraction(0))
            end_x, past = x_at(cols, done)
            segments.append(Segment(start_x, max(end_x - start_x, 0.0), e.tensor.name, float(done)))
            clipped = clipped or past
            start_x = end_x
        deadline = cols[landing.first.index].x
    measured = _measured(measure, wf)
    badges = []
    right = float(X1)
    for m in sorted(
        (e for e in lf.marked if e.figure == "timeline" and e.warm == wf.index and not e.stages),
        key=lambda e: -e.number,
    ):
        w = text_width(m.label) + 10
        right -= w
        badges.append(Badge(m, right, y + 1, w))
        right -= 4
    return Lane(
        wf, y, summary, bar, order, tuple(consumers), tuple(segments), deadline, note, measured,
        tuple(reversed(badges)), clipped,
    )  # fmt: skip


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


def _note(wf: WarmFacts, cols: tuple[Column, ...]) -> str:
    warm, landing = wf.warm, wf.landing
    if warm.anchor is None:
        return "No landing estimate: the warm has no anchor stage."
    if landing is None:
        return "No landing estimate: no static tensor of the warm is read after its anchor."
    first = landing.first.name
    anchor = cols[warm.anchor].stage.name
    if landing.window_us is None or landing.rate is None or landing.share is None:
        if landing.fires:
            return f"Cannot land: its first consumer {first} runs right after {anchor} (PC107)."
        if landing.rate is None:
            return "No landing estimate: the platform has no SDMA rate."
        return f"No landing estimate: not every stage between {anchor} and {first} has duration_us."
    total = landing.transfer_us(landing.bytes) or Fraction(0)
    verdict = "cannot land (PC107)" if landing.fires else "lands in time"
    return (
        f"PC107 estimate: in the {fmt.num(float(landing.window_us))} µs before {first}, "
        f"{fmt.num(landing.rate / 1e9)} GB/s lands {fmt.mb(int(landing.landed or 0))} = "
        f"{fmt.percent(landing.share)} of {fmt.mb(landing.bytes)}; all of it after "
        f"{fmt.num(float(total), 1)} µs: {verdict}."
    )

"""What the report draws, before any geometry: per layer kind its warms' landings, the L2
held at each stage, and where each diagnostic belongs.

Every number comes from plancc's own stages: liveness from the resolved plan
(``ir.Warm.live``), each warm's consumers and landing and each layer kind's L2 peak from
the check's facts (``plancc.facts``: PC107's arithmetic on the schedule), and a
diagnostic's warm and stages from the rule ``Finding`` that raised it, as the check hands
them on. Nothing here re-derives a rule, or runs one again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from plancc import ir
from plancc.api import PlanResult
from plancc.check import lookup
from plancc.diagnostics import Diagnostic, Pos
from plancc.facts import Facts
from plancc.facts.analysis import Analysis
from plancc.facts.analysis import WarmFacts as Judged
from plancc.facts.crossing import incoming
from plancc.facts.liveness import Peak
from plancc.rules import Finding

# Rules about the L2 held at once: drawn on the occupancy figure, at the peak.
OCCUPANCY_CODES = frozenset({"PC030", "PC032"})


@dataclass(frozen=True)
class Entry:
    """One diagnostic of the page's list, and where the figures mark it."""

    number: int  # 1-based: markers on the figures say it, the list is ordered by it
    diagnostic: Diagnostic
    status: str  # "error", "warning" or "allowed"
    reason: str | None  # why an allowed warning is accepted
    explain: str  # `plancc explain` text
    layer: str | None = None  # the layer kind whose figures mark it
    warm: int | None = None  # index of the warm in its layer kind
    stages: tuple[int, ...] = ()
    figure: str | None = None  # "timeline" or "occupancy"; None: listed only

    @property
    def label(self) -> str:
        return f"{self.diagnostic.code} {self.status}"


def _landings(analysis: Analysis) -> dict[str, Judged]:
    """By name of each warm PC107 judges (anchored, in a complete layer kind, with a
    static tensor read after its anchor; a cross-layer warm on its first crossing), the
    check's analysis of it."""
    return {
        w.warm.name: w
        for layer in analysis.layers.values()
        for w in layer.warms.values()
        if w.landing is not None and w.first is not None and w.bytes
    }


@dataclass(frozen=True)
class WarmFacts:
    warm: ir.Warm
    index: int  # in its layer kind: its colour and lane
    # The check's analysis of it (PC107's landing, its consumers); None: no static tensor
    # read after the anchor. A cross-layer warm's is of its first crossing: its
    # consumers are the next layer's (``Judged.crossing``).
    landing: Judged | None
    # A cross-layer warm of the layer kind before, drawn where this kind holds it: from
    # the entry (``warm.live`` in this kind's steps) to its last consumer here.
    coming_from: str | None = None
    # Such a warm's consumers here (static tensor -> stage), as the check placed it on
    # that crossing (``Facts.placed``).
    consumers_here: Mapping[str, ir.Stage] = field(default_factory=dict)

    @property
    def static_entries(self) -> tuple[ir.WarmEntry, ...]:
        return tuple(e for e in self.warm.entries if e.tensor.static)

    @property
    def bytes(self) -> int:
        return sum(e.bytes for e in self.static_entries)


@dataclass(frozen=True)
class LayerFacts:
    layer: ir.Layer
    warms: tuple[WarmFacts, ...]
    # held[stage][warm index] = bytes that warm adds at that stage: each distinct
    # tensor counts once, for the first warm (in plan order) holding it, so a
    # stage's sum is exactly what liveness sums.
    held: tuple[tuple[int, ...], ...]
    peak: Peak
    # streamed[stage] = the bytes it pushes through L2 beside the warms held: its
    # `streams` (KV, activations) and its share of each weight it reads that no warm
    # alive then holds.
    streamed: tuple[int, ...]
    timed: bool  # every stage has duration_us: widths are to scale
    entries: tuple[Entry, ...] = field(default=())

    @property
    def marked(self) -> tuple[Entry, ...]:
        return tuple(e for e in self.entries if e.figure is not None)


@dataclass(frozen=True)
class PlanFacts:
    result: PlanResult
    layers: tuple[LayerFacts, ...]
    entries: tuple[Entry, ...]

    @property
    def plan(self) -> ir.Plan | None:
        return self.result.plan

    @property
    def errors(self) -> int:
        return sum(e.status == "error" for e in self.entries)

    @property
    def warnings(self) -> int:
        return sum(e.status == "warning" for e in self.entries)

    @property
    def notices(self) -> int:
        return sum(e.status == "notice" for e in self.entries)

    @property
    def allowed(self) -> int:
        return sum(e.status == "allowed" for e in self.entries)


def facts(result: PlanResult) -> PlanFacts:
    plan = result.plan
    entries = _entries(result)
    if plan is None:
        return PlanFacts(result, (), tuple(entries))
    checked = result.facts
    assert checked is not None  # checked with its plan
    est = _landings(checked.analysis)
    layers = []
    for layer in plan.layers.values():
        warms = [WarmFacts(w, i, est.get(w.name)) for i, w in enumerate(layer.warms)]
        found = checked.kind_peaks.get(layer.name)
        before = found.before if found is not None else None
        coming = incoming(plan, layer, plan.layers[before]) if before is not None else ()
        warms += [  # the cross-layer warms of the kind before it, at the peak's side
            WarmFacts(w, len(warms) + k, None, before, _consumers_here(checked, w, layer))
            for k, w in enumerate(coming)
        ]
        mine = tuple(e for e in entries if e.layer == layer.name)
        judged = checked.analysis.layers.get(layer.name)
        # A kind the rules did not judge (a schema error spoiled a stage) is drawn in steps.
        timed = judged is not None and judged.timed
        peak = checked.peaks[layer.name]  # also a kind not judged: it is drawn
        held = _held(layer, [wf.warm for wf in warms], len(layer.warms))
        streamed = _streamed(plan, layer)
        layers.append(LayerFacts(layer, tuple(warms), held, peak, streamed, timed, mine))
    return PlanFacts(result, tuple(layers), tuple(entries))


def _consumers_here(checked: Facts, warm: ir.Warm, layer: ir.Layer) -> dict[str, ir.Stage]:
    """A cross-layer warm's consumers in ``layer``, the kind after the one issuing it: those
    of its crossing into ``layer``, each stage as the plan states it."""
    for p in checked.placed:
        c = p.crossing
        if c is not None and c.original.name == warm.name and c.target.name == layer.name:
            return {t: c.stage(s.index) for t, s in p.consumers.items()}
    return {}


def _held(layer: ir.Layer, warms: list[ir.Warm], own: int) -> tuple[tuple[int, ...], ...]:
    """Per stage, the bytes each warm (its own ``own`` first, then those of the kind
    before) adds: each region (a tensor, a prefix's rows; a cross-layer warm's are the
    next layer's copies) counts once, for the first warm holding it, as liveness sums."""
    out = []
    for stage in range(len(layer.stages)):
        seen: set[tuple[bool, tuple[str, int, int]]] = set()
        row = []
        for k, warm in enumerate(warms):
            n = 0
            if warm.alive_at(layer.schedule.start[stage]):
                for e in warm.entries:
                    key = (warm.next_layer and k < own, e.key)
                    if key not in seen:
                        seen.add(key)
                        n += e.bytes
            row.append(n)
        out.append(tuple(row))
    return tuple(out)


def _streamed(plan: ir.Plan, layer: ir.Layer) -> tuple[int, ...]:
    out = []
    for stage in layer.stages:
        step = layer.schedule.start[stage.index]
        held = {e.tensor.name for w in layer.warms if w.alive_at(step) for e in w.entries}
        weights = (
            stage.read_bytes(t)
            for name in dict.fromkeys(stage.reads)
            if name not in held and (t := plan.tensors.get(name)) is not None and t.static
        )
        out.append(stage.streams + sum(weights))
    return tuple(out)


# -- where each diagnostic belongs ----------------------------------------------------------


def _entries(result: PlanResult) -> list[Entry]:
    listed: list[tuple[Diagnostic, str | None]] = [(d, None) for d in result.diagnostics]
    listed += [(a.diagnostic, a.reason) for a in result.allowed]
    listed.sort(key=lambda pair: pair[0].sort_key)
    found = result.findings
    out = []
    for number, (d, reason) in enumerate(listed, start=1):
        code = lookup(d.code)
        status = "allowed" if reason is not None else d.severity.value
        entry = Entry(number, d, status, reason, code.doc if code else "")
        if result.plan is not None:
            entry = _place(entry, result.plan, found.get(d))
        out.append(entry)
    return out


def _place(entry: Entry, plan: ir.Plan, finding: Finding | None) -> Entry:
    d = entry.diagnostic
    pos = Pos(d.line, d.col)
    warm = finding.warm if finding is not None else None
    stages = finding.stages if finding is not None else ()
    layer = None
    if warm is None:
        warm, layer, stages = _by_position(plan, pos, stages)
    if warm is not None:
        layer = plan.layers.get(warm.layer)
    if layer is None:
        return entry
    if warm is not None and warm.next_layer:  # its crossing's: the next layer's are not drawn
        stages = tuple(s for s in stages if s < len(layer.stages))
    # By name: a finding on a cross-layer warm carries its copy placed on a crossing.
    index = next((i for i, w in enumerate(layer.warms) if warm and w.name == warm.name), None)
    if d.code in OCCUPANCY_CODES and stages:
        figure = "occupancy"
    elif stages or index is not None:
        figure = "timeline"
    else:
        figure = None  # about the layer kind as a whole: listed under its heading
    return Entry(
        entry.number,
        d,
        entry.status,
        entry.reason,
        entry.explain,
        layer.name,
        index,
        stages,
        figure,
    )


def _by_position(
    plan: ir.Plan, pos: Pos, stages: tuple[int, ...]
) -> tuple[ir.Warm | None, ir.Layer | None, tuple[int, ...]]:
    """The warm, else the stage a position lies in (a stage spans the lines up to the next)."""
    for layer in plan.layers.values():
        for warm in layer.warms:
            spots = {warm.name_pos, warm.after_pos, warm.tensors_pos, *warm.allow.values()}
            spots |= {e.pos for e in warm.entries}
            if pos in spots or pos.line in {p.line for p in spots}:
                return warm, layer, stages
        lines = [s.pos.line if s.pos is not None else 0 for s in layer.stages]
        for i, stage in enumerate(layer.stages):
            end = lines[i + 1] if i + 1 < len(lines) else lines[i] + 1
            if lines[i] <= pos.line < end:
                return None, layer, stages or (stage.index,)
    return None, None, stages

"""One candidate judged by the real check: the rules run on the plan with the layer
kind holding that one warm, its declared warms set aside.

The candidate is made a warm as resolve makes one (its entries, its live interval),
the plan is copied with its layer kind alone holding it, and every registered rule
runs on the copy: what the rules say about the copy is what `validate` would say
about the plan with that warm. Nothing is worked out here that a rule works out;
the numbers a rank needs are read from the copy's facts (``plancc.facts``: its placed
warms), which are built on the base plan's timeline of the layer kind, handed in.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from fractions import Fraction
from types import MappingProxyType
from typing import Any

from plancc import ir
from plancc.codes import Severity
from plancc.diagnostics import Pos
from plancc.facts import facts_of
from plancc.facts.liveness import join_gate, live_interval, readers
from plancc.facts.timeline import Timeline
from plancc.rules import discover
from plancc.suggest.candidates import Candidate

PREFIX = "prefetch_"


@dataclass(frozen=True)
class Judged:
    """A rule's finding on the candidate: its code, severity, message and numbers."""

    code: str
    severity: Severity
    message: str
    data: Mapping[str, Any]


@dataclass(frozen=True)
class Evaluation:
    candidate: Candidate
    bytes: int
    findings: tuple[Judged, ...]
    # PC104's bytes: the layer's own weights read between the anchor and the first
    # consumer, outside the groups the warm touches, whether or not PC104 fires.
    streamed: int
    landed: int  # the bytes estimated to land before the first consumer (PC107's window)
    window_us: Fraction | None  # that window, when every stage in it has a duration
    window_steps: int  # the same window in steps
    first: str | None = None  # the first consumer: the warm must land before it starts

    @property
    def codes(self) -> tuple[str, ...]:
        return tuple(sorted({f.code for f in self.findings}))

    @property
    def infeasible(self) -> bool:
        return any(f.severity is Severity.ERROR for f in self.findings)

    def fired(self, code: str) -> int:
        return sum(f.code == code for f in self.findings)

    def total(self, code: str, key: str) -> int:
        """The sum of one number over the findings of ``code`` (PC103's missing bytes)."""
        return sum(int(f.data.get(key) or 0) for f in self.findings if f.code == code)


def warm_name(kind: str, tensors: tuple[str, ...]) -> str:
    return f"{PREFIX}{tensors[0]}_{kind}"


def evaluate(plan: ir.Plan, c: Candidate, line: Timeline) -> Evaluation:
    """``line``: the plan's timeline of the candidate's layer kind, which the copy shares
    (the same stages, tensors and platform)."""
    layer = plan.layers[c.kind]
    if c.none:
        return Evaluation(c, 0, (), 0, 0, None, 0)
    warms = tuple(_warm(plan, layer, anchor, tensors) for anchor, tensors in c.parts)
    variant = _alone(plan, layer, warms)
    facts = facts_of(variant, {layer.name: line})
    findings = tuple(
        Judged(r.id, r.severity, f.message, f.data or {})
        for r in discover()
        for f in r.check(variant, facts)
    )
    streamed = landed = steps = 0
    window: Fraction | None = None
    first: tuple[int, str] | None = None  # the first consumer of any of its warms
    for p in facts.placed:  # a split's scopes: their sums, the most streamed beside one
        if p.first is None:
            continue
        line, landing = p.line, p.landing
        assert landing is not None  # it has a first consumer
        lo, hi = line.window(p.at, p.first.index)
        steps = max(steps, hi - lo)
        if landing.window_us is not None:
            window = max(window or Fraction(0), landing.window_us)
        if landing.landed is not None:
            landed += min(int(landing.landed), p.bytes)
        elif not landing.fires:
            landed += p.bytes  # no estimate: a warm that can land counts as landed
        assert p.streamed is not None  # it has a first consumer
        streamed = max(streamed, p.streamed[0])
        if first is None or line.rank[p.first.index] < first[0]:
            first = (line.rank[p.first.index], p.first.name)
    nbytes = sum(plan.tensors[t].bytes or 0 for t in c.tensors)
    name = None if first is None else first[1]
    return Evaluation(c, nbytes, findings, streamed, landed, window, steps, name)


def _by_name(layer: ir.Layer, name: str) -> ir.Stage:
    return next(s for s in layer.stages if s.name == name)


def _warm(
    plan: ir.Plan, layer: ir.Layer, anchor: tuple[str, ...], tensors: tuple[str, ...]
) -> ir.Warm:
    """The candidate as resolve makes a warm: its entries and its live interval."""
    gates = [_by_name(layer, a) for a in anchor]
    anchors = tuple(s.index for s in gates)
    gate = join_gate(layer.schedule, gates)  # of a join, the stage it waits for, as resolve's
    assert gate is not None  # a candidate has an anchor
    at = gate.index
    here = layer.stages[at].pos or Pos(1, 1)

    def locate(*_: object) -> Pos:
        return here

    entries = tuple(ir.WarmEntry(plan.tensors[t], plan.tensors[t].flat, locate) for t in tensors)
    held = {e.tensor.name for e in entries if e.tensor.static}
    live = live_interval(layer.schedule, anchors, held, readers(layer.stages))
    name = warm_name(layer.name, tensors)
    allow: Mapping[str, Pos] = MappingProxyType({})
    return ir.Warm(name, name, layer.name, at, entries, live, allow, None, locate, anchors=anchors)


def _alone(plan: ir.Plan, layer: ir.Layer, warms: tuple[ir.Warm, ...]) -> ir.Plan:
    """The plan with this layer kind alone, holding only ``warms``."""
    only = replace(layer, warms=warms)
    return replace(plan, layers=MappingProxyType({layer.name: only}), declared_warms=len(warms))

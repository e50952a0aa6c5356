"""One candidate judged by the real check: ``plancc.check.check`` on the plan with the
layer kind holding that candidate alone, its declared warms set aside.

The candidate is made a warm by resolve's own ``make_warm`` (its anchor, of a join the
stage it waits for, and its live interval); a declared warm keeps its `allow` and its
`reason`, and `lint.ignore` applies, as they do to `validate`: what the check says about
the copy is what `validate` would say about the plan with that warm. Nothing is worked
out here that a rule works out: the numbers a rank needs are the rules' own analysis
(``placed``: PC104's and PC106's bytes, PC107's landing).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from types import MappingProxyType
from typing import Any

from plancc import fixes, ir
from plancc.check import check
from plancc.codes import Severity
from plancc.diagnostics import Diagnostic, Pos
from plancc.facts.placed import Placed
from plancc.resolve.layers import make_warm, prefix_entry
from plancc.suggest.candidates import Candidate, GuardSpec, Part, Setting, warm_path

PREFIX = "prefetch_"


@dataclass(frozen=True)
class Judged:
    """A finding of the check on the candidate: its code, severity, message and numbers."""

    code: str
    severity: Severity
    message: str
    data: Mapping[str, Any]
    fix: fixes.Fix | None = None
    allowed: str | None = None  # silenced: the `reason` of the `allow`, or "lint.ignore"
    at: str = ""  # the params' values it was found at, when not the run's (``CTX=4096``)
    where: tuple[int, int] = (0, 0)  # its line and column: a finding at other values is
    # the same finding when its code and place are (as `validate` reports it once)

    @property
    def signature(self) -> tuple[object, ...]:
        """What tells two findings apart: the numbers a rule judged, else its words."""
        if self.data:
            return (self.code, self.allowed is not None, self.at, _frozen(self.data))
        return (self.code, self.allowed is not None, self.at, self.message)


def _frozen(value: Any) -> Any:
    if isinstance(value, Mapping):
        return tuple(sorted((k, _frozen(v)) for k, v in value.items()))
    if isinstance(value, list | tuple):
        return tuple(_frozen(v) for v in value)
    return value


@dataclass(frozen=True)
class Stream:
    """A stage that pushes bytes through L2 while a warm is in flight, as a reason says it."""

    stage: str
    streams: bool  # it has `streams` (KV, activations), not only weights
    reads: tuple[str, ...]  # the dynamic tensors it reads: what its `streams` are of


@dataclass(frozen=True)
class Evaluation:
    candidate: Candidate
    bytes: int
    findings: tuple[Judged, ...]  # as `validate` would show them
    allowed: tuple[Judged, ...] = ()  # silenced by the warm's `allow` or `lint.ignore`
    # PC104's bytes: the layer's own weights read between the anchor and the first
    # consumer, outside the groups the warm touches, whether or not PC104 fires.
    streamed: int = 0
    # PC106's bytes: what streams through L2 from the anchor to the last consumer (the
    # `streams` of the stages in between, the weights they read that it does not hold).
    pushed: int = 0
    pushers: tuple[Stream, ...] = ()  # the first three stages pushing them
    pushing: int = 0  # how many stages push them
    landed: int = 0  # the bytes estimated to land before the first consumer (PC107's window)
    window_us: Fraction | None = None  # that window, when every stage in it has a duration
    window_steps: int = 0  # the same window in steps
    first: str | None = None  # the first consumer: the warm must land before it
    gates: tuple[str, ...] = ()  # each warm's anchor: of a join, the stage it waits for
    l2: int | None = None
    # The guards under which it is a gain, where a param's range holds values at which it
    # is not (``plancc.suggest.ranges``): each a candidate of its own.
    guarded: tuple[GuardSpec, ...] = ()

    @property
    def codes(self) -> tuple[str, ...]:
        return tuple(sorted({f.code for f in self.findings}))

    @property
    def allowed_codes(self) -> tuple[str, ...]:
        return tuple(sorted({f.code for f in self.allowed}))

    @property
    def infeasible(self) -> bool:
        return any(f.severity is Severity.ERROR for f in self.findings)

    def fired(self, code: str) -> int:
        return sum(f.code == code for f in self.findings)

    def total(self, code: str, key: str) -> int:
        """The sum of one number over the shown findings of ``code``."""
        return sum(int(f.data.get(key) or 0) for f in self.findings if f.code == code)

    @property
    def signature(self) -> tuple[object, ...]:
        """Its findings, shown and allowed, in an order of their own."""
        return tuple(sorted((f.signature for f in (*self.findings, *self.allowed)), key=repr))


def warm_name(kind: str, tensors: tuple[str, ...], i: int = 0) -> str:
    return f"{PREFIX}{tensors[0]}_{kind}" + (f"_{i}" if i else "")


def evaluate(s: Setting, c: Candidate) -> Evaluation:
    """``c`` judged by the check; the layer kind's timeline is shared by every candidate of
    the kind (the same stages, tensors and platform)."""
    plan, layer = s.plan, s.layer
    l2 = plan.platform.l2_bytes if plan.platform is not None else None
    if c.none:
        return Evaluation(c, 0, (), l2=l2)
    warms = tuple(_warm(s, c, i) for i in range(len(c.parts)))
    world = s.here
    nexts = world.next_kinds(layer.name) if any(w.next_layer for w in warms) else ()
    variant = _alone(plan, layer, warms, nexts)
    # Its allow entries are the warms' own; the kinds' timelines are the base plan's, and
    # so is a cross-layer candidate's kind joined with each next one.
    lines = {layer.name: s.line, **{k: world.line(k) for k in nexts}}
    joined = {(layer.name, k): world.joined(layer.name, k) for k in nexts}
    checked = check(variant, judged=False, timelines=lines, joined=joined)
    at = plan.at_values if s.away else ""
    shown = tuple(_judged(d, at=at) for d in checked.diagnostics)
    allowed = tuple(_judged(a.diagnostic, a.reason, at) for a in checked.allowed)
    nbytes = sum(e.bytes for w in warms for e in w.entries)
    facts = _facts(checked.facts.placed)
    gates = tuple(layer.stages[w.anchor].name for w in warms if w.anchor is not None)
    return Evaluation(c, nbytes, shown, allowed, gates=gates, l2=l2, **facts)


def _judged(d: Diagnostic, reason: str | None = None, at: str = "") -> Judged:
    message = d.message + (f" at {at}" if at else "")  # as `validate` says it
    return Judged(d.code, d.severity, message, d.data or {}, d.fix, reason, at, (d.line, d.col))


def _facts(found: Sequence[Placed]) -> dict[str, Any]:
    """The rules' numbers of the candidate's warms: of a split's scopes their sums, the
    most streamed beside one; of a cross-layer warm, placed once per next layer kind, its
    worst crossing (the least landed, the shortest window)."""
    out: dict[str, Any] = {"streamed": 0, "pushed": 0, "landed": 0, "window_steps": 0}
    window: Fraction | None = None
    first: tuple[int, str] | None = None
    landed: dict[str, int] = {}  # per warm: the least it lands over its crossings
    steps: dict[str, int] = {}
    windows: dict[str, Fraction] = {}
    for p in found:
        if p.first is None or p.last is None:
            continue
        line, landing = p.line, p.landing
        assert landing is not None  # it has a first consumer
        assert p.streamed is not None
        name = p.warm.name
        lo, hi = line.window(p.at, p.first.index)
        steps[name] = min(steps.get(name, hi - lo), hi - lo)
        if landing.window_us is not None:
            windows[name] = min(windows.get(name, landing.window_us), landing.window_us)
        if landing.landed is not None:
            lands = min(int(landing.landed), p.bytes)
        else:  # no estimate: a warm that can land counts as landed
            lands = 0 if landing.fires else p.bytes
        landed[name] = min(landed.get(name, lands), lands)
        out["streamed"] = max(out["streamed"], p.streamed[0])
        if p.pushed > out["pushed"] or "pushers" not in out:
            count, shown = p.pushing
            out |= {"pushed": p.pushed, "pushing": count, "pushers": _streams(p, shown)}
        if first is None or line.rank[p.first.index] < first[0]:
            first = (line.rank[p.first.index], p.first.name)
    out["landed"] = sum(landed.values())
    out["window_steps"] = max(steps.values(), default=0)
    window = max(windows.values(), default=None)
    out["window_us"] = window
    out["first"] = None if first is None else first[1]
    return out


def _streams(p: Placed, shown: tuple[int, ...]) -> tuple[Stream, ...]:
    line = p.line
    out = []
    for i in shown:
        stage = line.stages[i]
        weights = {t.name for t in line.weights[i]}
        dynamic = tuple(n for n in dict.fromkeys(stage.reads) if n not in weights)
        out.append(Stream(stage.name, bool(stage.streams), dynamic))
    return tuple(out)


def _warm(s: Setting, c: Candidate, i: int) -> ir.Warm:
    """The candidate's i-th warm as resolve makes a warm: at the path its findings' fixes
    address (``warm_path``); a declared warm with its `allow`, `reason` and entries (a
    prefix's rows, a `flat` of its own), as resolved at these values."""
    plan, layer = s.plan, s.layer
    part = c.parts[i]
    gates = [s.stage[a] for a in part.anchor]
    here = max(gates, key=lambda s: s.index).pos or Pos(1, 1)

    def locate(*_: object) -> Pos:
        return here

    declared = _declared(layer, c, i)
    if declared is not None:
        entries, guards = declared.entries, declared.guards
        if tuple((g.param, g.op, g.bound) for g in guards) != part.guards:  # a guard added
            guards = (*guards, *(_guard(plan, g, locate) for g in part.guards[len(guards) :]))
    else:
        entries = tuple(_entry(plan, part, j, locate) for j in range(len(part.tensors)))
        guards = tuple(_guard(plan, g, locate) for g in part.guards)
    name = declared.name if declared else warm_name(layer.name, part.tensors, i)
    return make_warm(
        layer.schedule,
        gates,
        entries,
        s.line.readers,
        name=name,
        name_hint=declared.name_hint if declared else name,
        layer=layer.name,
        allow=declared.allow if declared else MappingProxyType({}),
        reason=declared.reason if declared else None,
        locate=locate,
        path=warm_path(layer.name, i),
        listed=len(part.tensors),
        next_layer=part.next_layer,
        guards=guards,
    )


def _declared(layer: ir.Layer, c: Candidate, i: int) -> ir.Warm | None:
    """The declared warm the candidate's i-th part is, in this layer kind (a plan resolved
    at other values has its own copy of it)."""
    if i >= len(c.warms):
        return None
    name = c.warms[i].name
    return next((w for w in layer.warms if w.name == name), None)


def _entry(plan: ir.Plan, part: Part, j: int, locate: ir.Locate) -> ir.WarmEntry:
    tensor = plan.tensors[part.tensors[j]]
    rows = part.range_of(j)
    if rows is None:
        return ir.WarmEntry(tensor, tensor.flat, locate, j)
    return prefix_entry(tensor, rows[0], rows[1], locate, j)


def _guard(plan: ir.Plan, g: GuardSpec, locate: ir.Locate) -> ir.Guard:
    param, op, bound = g
    variable = next(p.variable for p in plan.params if p.name == param)
    return ir.Guard(param, op, bound, str(bound), variable, locate)


def _alone(
    plan: ir.Plan, layer: ir.Layer, warms: tuple[ir.Warm, ...], nexts: tuple[str, ...] = ()
) -> ir.Plan:
    """The plan with this layer kind alone, holding only ``warms``: its silences are their
    `allow` entries (no other warm's, which would silence nothing here), its tensors
    theirs (the plan's own views were checked by `validate`: a plan with an error gets no
    suggestion). What is worked out from the layer kind's stages alone, its schedule and
    timeline, is the layer kind's: a check of a candidate costs its own warm, not the
    layer kind's size. ``nexts``: the kinds a cross-layer warm crosses into, there
    without their warms, so that the rules judge it across each boundary."""
    only = replace(layer, warms=warms)
    only.__dict__["schedule"] = layer.schedule  # a cached_property: the same stages
    layers = {layer.name: only}
    for k in nexts:
        if k not in layers:
            target = plan.layers[k]
            layers[k] = replace(target, warms=())
            layers[k].__dict__["schedule"] = target.schedule
    held = {e.tensor.name: e.tensor for w in warms for e in w.entries}
    return replace(
        plan,
        tensors=MappingProxyType(held),
        layers=MappingProxyType(layers),
        declared_warms=len(warms),
        silences=(),
    )

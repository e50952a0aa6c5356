"""Cross-layer warms (`next_layer: true`): a warm issued in one layer kind that warms the
tensors the next layer of the forward reads.

The rules judge such a warm on its **crossing**: its layer kind A and a next layer kind
B joined into one layer kind, A's stages then B's, B's first stages waiting for A's
last, so that every rule sees what streams on both sides of the boundary. In the
joined kind B's stages are named ``next.<stage>`` and their groups ``next.<group>``;
A's reads of a tensor B reads too are A's own copy, named ``this.<tensor>``, so that
the warm's tensors are B's copies alone. A warm is judged on every pair of layer kinds
the forward has it cross (without a forward, or for a kind it does not use, the next
layer is another of the same kind); the last layer of the forward issues none.

In A's own layer kind a cross-layer warm holds L2 from its anchor to the end (its
consumers are the next layer's): ``ir.Warm.live``. In B it holds L2 from the entry to
its last consumer there: ``incoming`` gives it those steps, for the L2 peak.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType

from plancc import ir
from plancc.facts.liveness import Peak, layer_peak, live_interval, readers

NEXT = "next."  # B's stages and groups in a joined kind
THIS = "this."  # A's copy of a tensor B reads too


def successors(plan: ir.Plan, kind: str) -> tuple[str, ...]:
    """The layer kinds that follow ``kind`` in the forward, in the order they first do;
    without a forward, or for a kind the forward does not use, ``kind`` itself."""
    if plan.forward is None or kind not in plan.forward.kinds:
        return (kind,)
    kinds = plan.forward.kinds
    return tuple(dict.fromkeys(b for a, b in itertools.pairwise(kinds) if a == kind))


def predecessors(plan: ir.Plan, kind: str) -> tuple[str, ...]:
    """The layer kinds the forward runs right before ``kind`` (``kind`` itself without a
    forward, or for a kind it does not use)."""
    if plan.forward is None or kind not in plan.forward.kinds:
        return (kind,)
    kinds = plan.forward.kinds
    return tuple(dict.fromkeys(a for a, b in itertools.pairwise(kinds) if b == kind))


def issues(plan: ir.Plan, warm: ir.Warm) -> int | None:
    """How many times one forward issues ``warm``: once per layer of its kind, but for
    a cross-layer warm not in the forward's last layer. None without a forward."""
    if plan.forward is None:
        return None
    kinds = plan.forward.kinds
    count = sum(k == warm.layer for k in kinds)
    if warm.next_layer and kinds and kinds[-1] == warm.layer:
        count -= 1
    return count


@dataclass(frozen=True)
class Crossing:
    """A cross-layer warm of layer kind ``source`` against a next layer of kind
    ``target``: the two joined (``joined``), the warm placed in it (``warm``)."""

    original: ir.Warm  # the warm as the plan states it, in ``source``
    source: ir.Layer
    target: ir.Layer
    joined: ir.Layer  # source's stages, then target's (from index ``offset``)
    warm: ir.Warm  # the warm in ``joined``: live from its anchor to its last consumer
    tensors: Mapping[str, ir.Tensor]  # the joined kind's tensors, ``this.`` copies too

    @property
    def offset(self) -> int:
        """The index in ``joined`` of the target's first stage."""
        return len(self.source.stages)

    several: bool = False  # the forward has its layer kind followed by more than one kind

    @property
    def on(self) -> str:
        """What a finding on it adds to its message: the pair of layer kinds, when the
        warm crosses into more than one kind (each crossing is judged alone)."""
        return f" ('{self.source.name}'→'{self.target.name}')" if self.several else ""

    @property
    def label(self) -> str:
        """``csa → hca``: the pair of layer kinds, as a message names it."""
        return f"{self.source.name} → {self.target.name}"

    def readers(self) -> tuple[ir.Stage, ...]:
        """The next layer's stages that read the warm's tensors, in step order (start,
        then name), as the plan states them: its consumers, and those that read again."""
        held = {e.tensor.name for e in self.warm.entries if e.tensor.static}
        start = self.joined.schedule.start
        found = [s for s in self.joined.stages[self.offset :] if held & set(s.reads)]
        found.sort(key=lambda s: (start[s.index], s.name))
        return tuple(self.stage(s.index) for s in found)

    def stage(self, index: int) -> ir.Stage:
        """The joined kind's stage ``index``, as the plan states it (in its own kind)."""
        if index < self.offset:
            return self.source.stages[index]
        return self.target.stages[index - self.offset]


def crossings(plan: ir.Plan) -> Iterator[Crossing]:
    """Every anchored cross-layer warm of a complete layer kind against every complete
    layer kind that follows it, in plan order, then forward order."""
    joined: dict[tuple[str, str], tuple[ir.Layer, Mapping[str, ir.Tensor]]] = {}
    for layer in plan.layers.values():
        if not layer.complete:
            continue
        for warm in layer.warms:
            if not warm.next_layer or warm.anchor is None:
                continue
            after = successors(plan, layer.name)
            for kind in after:
                target = plan.layers.get(kind)
                if target is None or not target.complete:
                    continue
                key = (layer.name, kind)
                if key not in joined:
                    joined[key] = join(plan, layer, target)
                both, tensors = joined[key]
                placed = _placed(both, warm)
                yield Crossing(warm, layer, target, both, placed, tensors, len(after) > 1)


def join(plan: ir.Plan, a: ir.Layer, b: ir.Layer) -> tuple[ir.Layer, Mapping[str, ir.Tensor]]:
    """Layer kind ``a`` then ``b`` as one layer kind, and its tensors (``plan.tensors``
    and the ``this.`` copies of those both read). The warms are ``a``'s (cross-layer ones
    placed later, by ``_placed``): where others anchor, for the fixes that move one."""
    shared = {t for s in b.stages for t in s.reads} & {t for s in a.stages for t in s.reads}
    tensors = dict(plan.tensors)
    for name in shared:
        tensor = plan.tensors.get(name)
        if tensor is not None:
            tensors[THIS + name] = replace(tensor, name=THIS + name)
    offset = len(a.stages)
    waited = {d for waits in a.schedule.deps for d in waits}
    sinks = tuple(i for i in range(offset) if i not in waited)  # a's last stages
    stages = [
        replace(
            s,
            reads=tuple(THIS + t if t in shared else t for t in s.reads),
            shares=tuple((THIS + t if t in shared else t, f) for t, f in s.shares),
        )
        for s in a.stages
    ]
    for s in b.stages:
        if s.deps is None:
            deps = sinks if s.index == 0 else None
        else:
            deps = tuple(offset + d for d in s.deps) if s.deps else sinks
        stages.append(
            replace(
                s,
                name=NEXT + s.name,
                index=offset + s.index,
                group=None if s.group is None else NEXT + s.group,
                task=None if s.task is None else NEXT + s.task,
                deps=deps,
            )
        )
    layer = ir.Layer(f"{a.name} → {b.name}", tuple(stages), a.warms, a.complete and b.complete)
    return layer, MappingProxyType(tensors)


def _placed(joined: ir.Layer, warm: ir.Warm) -> ir.Warm:
    """The cross-layer warm in the joined kind: alive from its anchor's finish through
    its last consumer in the next layer."""
    held = {e.tensor.name for e in warm.entries if e.tensor.static}
    live = live_interval(joined.schedule, warm.anchors, held, readers(joined.stages))
    return replace(warm, live=live)


def incoming(plan: ir.Plan, layer: ir.Layer, before: ir.Layer) -> tuple[ir.Warm, ...]:
    """The cross-layer warms of ``before`` as ``layer`` holds them when it follows it:
    from its entry through the last of its stages that reads their tensors."""
    if not any(w.next_layer for w in before.warms):
        return ()
    read_by = readers(layer.stages)
    out = []
    for w in before.warms:
        if not w.next_layer or w.anchor is None:
            continue
        held = {e.tensor.name for e in w.entries if e.tensor.static}
        last = [layer.schedule.start[r] for t in held for r in read_by.get(t, ())]
        out.append(replace(w, live=(0, max(last, default=layer.schedule.steps - 1))))
    return tuple(out)


@dataclass(frozen=True)
class KindPeak:
    """A layer kind's L2 peak over the layers it is in: after the kind before it that
    sends it the most (``before``; None when none sends it a warm)."""

    peak: Peak
    before: str | None


def kind_peak(plan: ir.Plan, layer: ir.Layer) -> KindPeak:
    """The most L2 the warms hold during one step of ``layer``: its own, and the
    cross-layer warms the kind before it issued (for every kind the forward runs before
    it, the largest)."""
    best = KindPeak(layer_peak(layer), None)
    for kind in predecessors(plan, layer.name):
        before = plan.layers.get(kind)
        if before is None or not before.complete:
            continue
        coming = incoming(plan, layer, before)
        if coming:
            peak = layer_peak(layer, coming)
            if peak.bytes > best.peak.bytes:
                best = KindPeak(peak, kind)
    return best


def grown_crossing(plan: ir.Plan, c: Crossing, extra: Sequence[ir.WarmEntry]) -> int:
    """The L2 peak of the two layer kinds of ``c`` with ``extra`` added to its warm: in the
    kind that issues it (alive from its anchor to the end) and in the next one (from the
    entry to its last consumer)."""
    grown = replace(c.original, entries=(*c.original.entries, *extra))
    source = replace(c.source, warms=tuple(grown if w is c.original else w for w in c.source.warms))
    before = layer_peak(source).bytes
    return max(before, layer_peak(c.target, incoming(plan, c.target, source)).bytes)

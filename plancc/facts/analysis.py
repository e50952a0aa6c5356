"""The analysis the rules judged by, as the check hands it on: per warm its consumers,
landing and live steps, per layer kind its L2 peak.

Every value is made of what the rules judge by (``placed``, ``timeline``, ``liveness``), as
``plancc.facts.facts_of`` worked it out once for the check: the editor's hover, `plancc
report`, the manifest and `plancc suggest` read these, never a re-derivation. It defines
no rule.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from types import MappingProxyType

from plancc import ir
from plancc.facts.crossing import Crossing
from plancc.facts.liveness import Peak
from plancc.facts.placed import Placed
from plancc.facts.timeline import Landing, Timeline


@dataclass(frozen=True)
class WarmFacts:
    """One anchored warm of a complete layer kind, as the placement rules see it."""

    warm: ir.Warm
    anchor: ir.Stage
    # Static tensor -> its consumer (the first stage running after the anchor that reads
    # it), in the order the consumers start on the schedule (ties: tensor listing order).
    consumers: Mapping[str, ir.Stage]
    first: ir.Stage | None  # the consumer that starts first: the warm must land before it
    last: ir.Stage | None  # the consumer that starts last: the warm is alive until then
    landing: Landing | None  # PC107's arithmetic to the first consumer; None without one
    bytes: int  # the static entries' bytes
    rate: int | None  # the platform's single-stream SDMA rate, B/s
    # Every stage running after the anchor (all of a join's) that reads one of its static
    # tensors, in step order: the consumers, and the stages that read a tensor again.
    readers: tuple[ir.Stage, ...] = ()
    # A cross-layer warm's first crossing: its stages are the joined kind's (``next.``
    # for the next layer's; ``Crossing.stage`` gives each as the plan states it).
    crossing: Crossing | None = None

    @property
    def live(self) -> tuple[int, int]:
        """The first and last step it holds L2 (``ir.Warm.live``)."""
        return self.warm.live

    @property
    def window_us(self) -> Fraction | None:
        """The window before the first consumer, when every stage in it has a duration."""
        return None if self.landing is None else self.landing.window_us

    @property
    def landed(self) -> Fraction | None:
        """The estimated bytes landed in that window."""
        return None if self.landing is None else self.landing.landed

    @property
    def share(self) -> Fraction | None:
        """The estimated share of its bytes landed before the first consumer, at most 1."""
        landed = self.landed
        if landed is None or self.bytes == 0:
            return None
        return min(Fraction(1), landed / self.bytes)

    @property
    def lands(self) -> bool | None:
        """Whether PC107 finds that it lands; None when it has no consumer."""
        return None if self.landing is None else not self.landing.fires


@dataclass(frozen=True)
class LayerFacts:
    layer: ir.Layer
    warms: Mapping[str, WarmFacts]  # by warm name: its anchored warms, in listing order
    peak: Peak  # the most L2 its warms hold during one step (PC030, PC032)
    timed: bool  # every stage has a duration: the rules judge its windows in time

    def live_stages(self, warm: ir.Warm) -> tuple[ir.Stage, ...]:
        """The stages during whose step ``warm`` holds L2, in step order."""
        sched = self.layer.schedule
        return tuple(self.layer.stages[i] for i in sched.order() if warm.alive_at(sched.start[i]))


@dataclass(frozen=True)
class Analysis:
    """Per complete layer kind, its facts; layer kinds a schema error left incomplete are
    not judged and have none."""

    layers: Mapping[str, LayerFacts]

    def warm(self, layer: str, name: str) -> WarmFacts | None:
        facts = self.layers.get(layer)
        return None if facts is None else facts.warms.get(name)


def analyse(
    plan: ir.Plan,
    placed: Sequence[Placed],
    timelines: Mapping[str, Timeline],
    peaks: Mapping[str, Peak],
) -> Analysis:
    """The facts of every complete layer kind (``timelines`` holds those), from the placed
    warms and the L2 peaks."""
    rate = plan.platform.sdma_bytes_per_s if plan.platform is not None else None
    by_layer: dict[str, dict[str, WarmFacts]] = {}
    for p in placed:  # a cross-layer warm: on its first crossing
        by_layer.setdefault(p.kind, {}).setdefault(p.warm.name, _warm_facts(p, rate))
    layers = {
        name: LayerFacts(
            plan.layers[name],
            MappingProxyType(by_layer.get(name, {})),
            peaks[name],
            line.times is not None,
        )
        for name, line in timelines.items()
    }
    return Analysis(MappingProxyType(layers))


def _warm_facts(p: Placed, rate: int | None) -> WarmFacts:
    line = p.line
    rank = line.rank
    ordered = sorted(p.consumers.items(), key=lambda item: rank[item[1].index])
    anchors = p.warm.anchors or (p.at,)
    read = {
        r
        for e in p.entries
        for r in line.readers.get(e.tensor.name, ())
        if all(line.runs_before(a, r) for a in anchors)
    }
    return WarmFacts(
        p.warm,
        p.anchor,
        MappingProxyType(dict(ordered)),
        p.first,
        p.last,
        p.landing,
        p.bytes,
        rate,
        tuple(p.layer.stages[r] for r in sorted(read, key=lambda r: rank[r])),
        p.crossing,
    )

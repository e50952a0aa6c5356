"""Each anchored warm seen against its layer kind: what the placement rules read.

PC040 and PC101-PC107 (``anchors``, ``placement``, ``later_anchor``) each walk every
anchored warm with its static entries and each one's consumer, the first stage after
the anchor that reads it.
``placed`` works that list out once per plan. It defines no rule: the rules keep
the order of their own modules.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from plancc import ir
from plancc.records import fast_init, lazy
from plancc.rules import anchored
from plancc.rules.timeline import Timeline, once_per_plan, timeline


@fast_init
@dataclass(frozen=True)
class Placed:
    """One warm seen against its layer kind: its static tensors and their consumers."""

    layer: ir.Layer
    warm: ir.Warm
    at: int  # the anchor's index
    line: Timeline  # its layer kind's, shared by every rule of the check
    entries: tuple[ir.WarmEntry, ...]  # the static entries, in issue order
    consumers: dict[str, ir.Stage]  # tensor -> its consumer (static tensors that have one)

    @property
    def anchor(self) -> ir.Stage:
        return self.layer.stages[self.at]

    @lazy
    def first(self) -> ir.Stage | None:
        return min(self.consumers.values(), key=lambda s: s.index, default=None)

    @lazy
    def last(self) -> ir.Stage | None:
        return max(self.consumers.values(), key=lambda s: s.index, default=None)

    @property
    def bytes(self) -> int:
        """The static entries' bytes: the warm's (a dynamic tensor counts for none)."""
        return self.warm.bytes

    def between(self, end: int) -> tuple[ir.Stage, ...]:
        """The stages strictly between the anchor and stage index ``end``."""
        return self.layer.stages[self.at + 1 : end]


def placed(plan: ir.Plan) -> list[Placed]:
    """Each anchored warm with its first consumers, worked out once per plan: PC040 and
    PC101 to PC107 read the same list."""
    return once_per_plan(plan, "placed", plan.layers, lambda: list(_each_placed(plan)))


def _each_placed(plan: ir.Plan) -> Iterator[Placed]:
    line: Timeline | None = None
    for layer, warm, at in anchored(plan):
        entries = tuple(e for e in warm.entries if e.tensor.static)
        if line is None or line.stages is not layer.stages:  # the next layer kind's
            line = timeline(plan, layer)  # each consumer in O(log n), not a scan per warm
        consumers: dict[str, ir.Stage] = {}
        for e in entries:
            c = line.consumer(e.tensor.name, at)
            if c is not None:
                consumers[e.tensor.name] = layer.stages[c]
        yield Placed(layer, warm, at, line, entries, consumers)

"""Each anchored warm seen against its layer kind: what the placement rules read.

PC040 and PC101-PC107 (``anchors``, ``placement``, ``later_anchor``) each walk every
anchored warm with its static entries and each one's consumer, the first stage
running after the anchor that reads it (the earliest to start; of one step, the
one whose name comes first). ``each_placed`` works that list out, once per check
(``plancc.facts.facts_of``). It defines no rule: the rules keep the order of their
own modules.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from types import MappingProxyType

from plancc import fixes, ir
from plancc.facts.crossing import Crossing, Joins, crossings
from plancc.facts.timeline import Group, Landing, Timeline
from plancc.tables.thresholds import kept


@dataclass(frozen=True)
class Placed:
    """One warm seen against its layer kind: its static tensors and their consumers."""

    layer: ir.Layer
    warm: ir.Warm
    at: int  # the anchor's index: of a join's, the one that finishes last
    line: Timeline  # its layer kind's, shared by every rule of the check (``Facts``)
    entries: tuple[ir.WarmEntry, ...]  # the static entries, in issue order
    consumers: dict[str, ir.Stage]  # tensor -> its consumer (static tensors that have one)
    # A cross-layer warm's crossing (``layer`` is then the joined kind); None for a warm of
    # one layer kind.
    crossing: Crossing | None = None

    @property
    def anchorable(self) -> int:
        """The stages a fix may anchor the warm on are those before this index: its own
        layer kind's (a cross-layer warm's anchor stays in the layer that issues it)."""
        return self.crossing.offset if self.crossing is not None else len(self.layer.stages)

    @property
    def on(self) -> str:
        """What a finding on it adds to its message (``Crossing.on``): empty but for a
        cross-layer warm that crosses into more than one layer kind."""
        return self.crossing.on if self.crossing is not None else ""

    @property
    def kind(self) -> str:
        """The layer kind whose warm it is (for a crossing, the one that issues it)."""
        return self.warm.layer

    @property
    def anchor(self) -> ir.Stage:
        return self.layer.stages[self.at]

    @property
    def anchors(self) -> tuple[int, ...]:
        """Every anchor stage: the one, or a join's."""
        return self.warm.anchors

    def after(self, stage: int) -> bool:
        """Whether ``stage`` runs after the anchor: after every anchor stage of a join."""
        return all(self.line.runs_before(a, stage) for a in self.warm.anchors)

    @cached_property
    def first(self) -> ir.Stage | None:
        """The consumer that starts first of those reading a tensor that holds a share of the
        warm's bytes that is not negligible (``tables.thresholds``): the warm must land
        before it. A 256 B vector read right after the anchor rides along with the 100 MB
        the warm is for, as PC103 lets it; when no such tensor has a consumer, of them all."""
        sizes = {e.tensor.name: e.tensor.bytes or 0 for e in self.entries}
        matter = set(kept(sizes)) or set(sizes)
        firsts = [s for t, s in self.consumers.items() if t in matter] or self.consumers.values()
        return min(firsts, key=lambda s: self.line.rank[s.index], default=None)

    @cached_property
    def last(self) -> ir.Stage | None:
        """The consumer that starts last."""
        return max(self.consumers.values(), key=lambda s: self.line.rank[s.index], default=None)

    @cached_property
    def landing(self) -> Landing | None:
        """PC107's arithmetic from the anchor to the first consumer; None without one."""
        if self.first is None:
            return None
        return self.line.landing(self.at, self.first.index, self.bytes)

    @cached_property
    def groups(self) -> set[Group]:
        """The consumer groups the warm touches (PC103, PC104)."""
        return {s.consumer_group for s in self.consumers.values()}

    @cached_property
    def streamed(self) -> tuple[int, int, list[int]] | None:
        """PC104's weights streamed between the anchor and the first consumer, outside
        the touched groups: (bytes, stages, the first three); None without a consumer."""
        if self.first is None:
            return None
        return self.line.streamed(self.at, self.first.index, self.groups, self.anchors)

    @cached_property
    def pushed(self) -> int:
        """PC106's bytes: what the stages from the anchor to the last consumer push through
        L2 (``pushed_bytes``), whether or not PC106 fires (`suggest` ranks by them); 0
        without a consumer."""
        return 0 if self.last is None else pushed_bytes(self, self.at, self.last.index)

    @cached_property
    def pushing(self) -> tuple[int, tuple[int, ...]]:
        """The stages pushing ``pushed``: how many, and the first three (``pushers``)."""
        if self.last is None:
            return 0, ()
        count, shown = pushers(self, *self.line.window(self.at, self.last.index))
        return count, tuple(shown)

    @property
    def bytes(self) -> int:
        """The static entries' bytes: the warm's (a dynamic tensor counts for none)."""
        return self.warm.bytes


def consumer_order(p: Placed, added: Sequence[ir.Tensor] = ()) -> tuple[int, ...]:
    """The items of the warm's `tensors` (its own, then ``added`` appended after them)
    whose tensor has a consumer, in the order their consumers start: a ``Reorder``'s
    argument, which puts them in the places they hold and leaves every other item be."""
    line = p.line
    step = {name: line.start[s.index] for name, s in p.consumers.items()}
    keyed = [(step[e.tensor.name], e.index) for e in p.entries if e.tensor.name in step]
    for k, t in enumerate(added):
        c = line.consumer(t.name, p.anchors)
        if c is not None:
            keyed.append((line.start[c], p.warm.listed + k))
    keyed.sort(key=lambda pair: pair[0])  # stable: one step keeps the listing order
    return tuple(index for _, index in keyed)


def warm_path(p: Placed, *under: str | int) -> fixes.Path:
    return (*p.warm.path, *under)


def anchor_fix(p: Placed, stage: ir.Stage) -> fixes.Fix | None:
    """Anchor the warm at ``stage``: unsafe, as every anchor move (it moves the warm in
    time). None for a join: which of its anchors to keep is the author's choice."""
    if p.warm.join:
        return None
    title = f"anchor at '{stage.name}'"
    return fixes.replace(warm_path(p, "after"), stage.name, title, fixes.Safety.UNSAFE)


def anchored(plan: ir.Plan) -> Iterator[tuple[ir.Layer, ir.Warm, int]]:
    """The warms that stage-order rules can judge, with their anchor's index.

    A warm whose `after` names no stage (PC010) has no place in time; a layer
    kind with a stage replaced after a schema error, or an error in a stage's
    `deps` or `reads`, has no reliable order; a warm with an item of `tensors` in
    error does not warm what the plan says. Each is left to its error rather than
    guessed at.
    """
    for layer in plan.layers.values():
        if layer.complete:
            for warm in layer.warms:
                if warm.anchor is not None and warm.complete:
                    yield layer, warm, warm.anchor


def each_placed(
    plan: ir.Plan, timelines: Mapping[str, Timeline], built: Joins = MappingProxyType({})
) -> Iterator[Placed]:
    """Each anchored warm with its consumers, on its layer kind's timeline (``timelines``:
    every complete layer kind's): PC040 and PC101 to PC107 read the same list. ``built``:
    pairs of layer kinds joined already, with their timelines (``crossing.Joined``)."""
    for layer, warm, at in anchored(plan):
        if warm.next_layer:
            continue  # judged on its crossings, below
        yield _place(layer, warm, at, timelines[layer.name])
    lines: dict[str, Timeline] = {}  # the joined kinds' timelines, each built once
    for c in crossings(plan, built):
        joined = c.joined
        if joined.name not in lines:
            given = built.get((c.source.name, c.target.name))
            fits = given is not None and given.fits(c.source, c.target)
            lines[joined.name] = given.line if given and fits else Timeline(plan, joined, c.tensors)
        yield _place(joined, c.warm, at=c.warm.anchor or 0, line=lines[joined.name], crossing=c)


def _place(
    layer: ir.Layer, warm: ir.Warm, at: int, line: Timeline, crossing: Crossing | None = None
) -> Placed:
    entries = tuple(e for e in warm.entries if e.tensor.static)
    consumers: dict[str, ir.Stage] = {}
    for e in entries:
        c = line.consumer(e.tensor.name, warm.anchors)
        if c is not None:
            consumers[e.tensor.name] = layer.stages[c]
    return Placed(layer, warm, at, line, entries, consumers, crossing)


def pushers(p: Placed, lo: int, hi: int) -> tuple[int, list[int]]:
    """How many stages starting at a step in [lo, hi) push bytes through L2 (`streams`, or
    weights the warm does not hold), and the first three: a bisection, and a look at the
    warm's own readers, not a scan of the window (PC106 stays linear)."""
    line = p.line
    held = held_bytes(p)

    def pushes(i: int) -> bool:  # of a prefix's tensor, it pushes the rows not held
        s = line.stages[i]
        return bool(s.streams) or any(
            t.name not in held or s.read_bytes(t) > held[t.name] for t in line.weights[i]
        )

    first = bisect.bisect_left(line.pushing_steps, lo)
    count = bisect.bisect_left(line.pushing_steps, hi) - first
    own = {r for t in held for r in line.readers.get(t, ()) if lo <= line.start[r] < hi}
    count -= sum(not pushes(r) for r in own)  # they read only the warm's tensors
    shown: list[int] = []
    for i in itertools.islice(line.pushing, first, None):  # no copy of the tail
        if len(shown) == 3 or line.start[i] >= hi:
            break
        if pushes(i):
            shown.append(i)
    return count, shown


def pushed_bytes(p: Placed, at: int, last: int) -> int:
    """The bytes the stages between stage ``at`` and stage ``last`` (the warm's last
    consumer) push through L2: their `streams`, and the weights they read that the warm
    does not hold."""
    line = p.line
    lo, hi = line.window(at, last)
    if hi <= lo:
        return 0
    pushed = line.streamed_before[hi] - line.streamed_before[lo]
    pushed += line.weighed_before[hi] - line.weighed_before[lo]
    tensors = {e.tensor.name: e.tensor for e in p.entries}
    for name, nbytes in held_bytes(p).items():  # in L2 already: not pushed
        readers = line.readers.get(name, ())
        steps = [line.start[r] for r in readers]
        within = readers[bisect.bisect_left(steps, lo) : bisect.bisect_left(steps, hi)]
        # Each reader its share; of a prefix only its rows are held, the rest is pushed.
        pushed -= sum(min(line.stages[r].read_bytes(tensors[name]), nbytes) for r in within)
    return pushed


def held_bytes(p: Placed) -> dict[str, int]:
    """Tensor -> the bytes the warm holds of it: all of it, or a prefix's rows."""
    held: dict[str, int] = {}
    for e in p.entries:
        held[e.tensor.name] = held.get(e.tensor.name, 0) + e.bytes
    return held

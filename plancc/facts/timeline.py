"""A layer kind's stages on its schedule, indexed once for the rules.

The rules ask, per warm: which stage first reads a tensor after the anchor, what
the stages between two stages push through L2, and whether a warm lands in the
window before its first consumer. "Between A and C" is every stage whose step
lies from A's finish up to C's start (docs/plan-format.md, "The schedule"), so
sums over steps answer it: ``Timeline`` keeps the stages in step order with
prefix sums per step, and each answer is a bisection, not a scan of the layer.

Where a rule must name one of several stages of a step, it takes the one whose name
comes first: step order is (start, name), never the list order, so that no finding
depends on which valid order the stages are listed in.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property

from plancc import ir
from plancc.tables.thresholds import LANDS

Group = tuple[str, str]


def decimal(x: float) -> Fraction:
    """The value the plan wrote (``36.8``), not its nearest binary float."""
    return Fraction(repr(x)) if isinstance(x, float) else Fraction(x)


@dataclass(frozen=True)
class Landing:
    """Whether a warm of ``bytes`` anchored at one stage lands before its first consumer."""

    fires: bool  # PC107 would fire
    window_us: Fraction | None  # the window's duration, when every stage in it has one
    landed: Fraction | None  # the estimated bytes landed in that window


def _prefix(values: Sequence[int]) -> list[int]:
    out = [0]
    for v in values:
        out.append(out[-1] + v)
    return out


class Timeline:
    """One complete layer kind, indexed for the placement rules."""

    def __init__(
        self, plan: ir.Plan, layer: ir.Layer, tensors: Mapping[str, ir.Tensor] | None = None
    ) -> None:
        # The SDMA rate, not the plan: `plancc suggest` hands one timeline to hundreds
        # of copies of the plan, and none of them need be kept alive by it. ``tensors``:
        # a joined kind's (``facts.crossing``), which has copies of its own.
        self.rate = plan.platform.sdma_bytes_per_s if plan.platform is not None else None
        self.stages = stages = layer.stages
        self.schedule = sched = layer.schedule
        self.start = start = sched.start
        # Every stage in step order, and each stage's place in it.
        self.order = sorted(range(len(stages)), key=lambda i: (start[i], stages[i].name))
        self.rank = [0] * len(stages)
        for k, i in enumerate(self.order):
            self.rank[i] = k
        self.readers: dict[str, list[int]] = {}  # tensor -> the stages reading it, step order
        self.weights: list[list[ir.Tensor]] = [[] for _ in stages]  # static tensors read
        steps = sched.steps
        weighed, streamed, busy, unmeasured = ([0] * steps for _ in range(4))
        step_us: list[Fraction | int] = [0] * steps  # a step lasts as long as its longest stage
        for i in self.order:
            s, k = stages[i], start[i]
            for name in dict.fromkeys(s.reads):
                self.readers.setdefault(name, []).append(i)
                t = (plan.tensors if tensors is None else tensors).get(name)
                if t is not None and t.static:
                    self.weights[i].append(t)
                    weighed[k] += s.read_bytes(t)  # its share of a tensor it reads part of
            streamed[k] += s.streams
            busy[k] += bool(s.streams or s.sdma or s.collective)
            if s.duration_us is None:
                unmeasured[k] += 1
            else:
                step_us[k] = max(step_us[k], decimal(s.duration_us))
        # Sums over the steps before step k: weight bytes (each stage's static reads),
        # `streams` bytes, stages pushing other bytes, using SDMA or a collective, stages
        # without a duration, and durations. The duration sums stay int 0 until a duration
        # is met.
        self.weighed_before = _prefix(weighed)
        self.streamed_before = _prefix(streamed)
        self.busy_before = _prefix(busy)
        self.unmeasured_before = _prefix(unmeasured)
        self.duration_before: list[Fraction | int] = [0]
        for d in step_us:
            self.duration_before.append(self.duration_before[-1] + d)
        # The duration sums as floats, to bisect without Fraction's slow comparisons.
        self.duration_floats = [float(d) for d in self.duration_before]
        # The last step at or before step k with a stage lacking a duration; -1 when none.
        self.last_unmeasured: list[int] = []
        last = -1
        for k in range(steps):
            last = k if unmeasured[k] else last
            self.last_unmeasured.append(last)
        self.step_of = [start[i] for i in self.order]  # the order's steps, to bisect
        # The stages a warm must not be alive across (PC105): `sdma: true`, or a collective.
        self.contending = [i for i in self.order if stages[i].sdma or stages[i].collective]
        # The stages that read weights, in step order, and per consumer group the steps
        # of its own and the sums of their weight bytes: PC104's bytes in a window are
        # a few bisections, not a scan of it.
        self.streaming = [i for i in self.order if self.weights[i]]
        self.streaming_steps = [start[i] for i in self.streaming]
        self.group_steps: dict[Group, list[int]] = {}
        self.group_bytes: dict[Group, list[int]] = {}
        for i in self.streaming:
            group = stages[i].consumer_group
            self.group_steps.setdefault(group, []).append(start[i])
            sums = self.group_bytes.setdefault(group, [0])
            sums.append(sums[-1] + sum(stages[i].read_bytes(t) for t in self.weights[i]))
        self._anchors()
        self.times = _timed(layer) if not any(unmeasured) else None

    def _anchors(self) -> None:
        stages, start = self.stages, self.start
        # The stages that push bytes through L2 (`streams` or weights), for PC106, and
        # those with a task (where a warm may anchor), in step order with their steps.
        self.pushing = [i for i in self.order if stages[i].streams or self.weights[i]]
        self.pushing_steps = [start[i] for i in self.pushing]
        self.tasked = [i for i in self.order if stages[i].task]
        self.tasked_steps = [start[i] for i in self.tasked]
        # Candidate anchors (PC104): stages that read weights and have a task.
        self.candidates = [i for i in self.tasked if self.weights[i]]
        self.candidate_steps = [start[i] for i in self.candidates]

    @cached_property
    def groups(self) -> dict[Group, list[ir.Stage]]:
        """Consumer group -> the stages in it, in step order (PC103)."""
        out: dict[Group, list[ir.Stage]] = {}
        for i in self.order:
            s = self.stages[i]
            out.setdefault(s.consumer_group, []).append(s)
        return out

    def runs_before(self, a: int, b: int) -> bool:
        return self.schedule.runs_before(a, b)

    def window(self, a: int, c: int) -> tuple[int, int]:
        """The steps from stage a's finish up to stage c's start (empty when lo >= hi)."""
        return self.start[a] + 1, self.start[c]

    def span(self, lo: int, hi: int) -> list[int]:
        """The stages starting at a step in [lo, hi), in step order."""
        steps = self.step_of
        return self.order[bisect.bisect_left(steps, lo) : bisect.bisect_left(steps, hi)]

    def between(self, a: int, c: int) -> list[int]:
        """The stages between stage a and stage c, in step order."""
        return self.span(*self.window(a, c))

    def outlasting(self, a: int) -> list[int]:
        """The stages starting at stage a's step that read weights and, both with a
        `duration_us`, run longer than a (timed: finish later): still running, and
        streaming, when a finishes. In step order; none when a has no duration."""
        own = self.stages[a].duration_us
        if own is None:
            return []
        step = self.start[a]
        k = bisect.bisect_left(self.streaming_steps, step)
        out: list[int] = []
        for i in itertools.islice(self.streaming, k, None):
            if self.start[i] != step:
                break
            d = self.stages[i].duration_us
            if self.times is not None:
                if self.times[1][i] > self.times[1][a]:
                    out.append(i)
            elif d is not None and decimal(d) > decimal(own):
                out.append(i)
        return out

    def streamed(
        self, a: int, c: int, groups: set[Group], anchors: Sequence[int] = ()
    ) -> tuple[int, int, list[int]]:
        """The weight bytes read by the stages between stage a and stage c outside
        ``groups``: (bytes, how many stages, the first three of them). A stage beside a
        at its step that runs longer (``outlasting``; not one of a join's ``anchors``)
        streams while the warm is in flight too. In a timed layer kind, "between" is in
        time: every stage running after a's finish and before c's start, which takes in
        those beside a."""
        if self.times is not None:
            return self._streamed_in_time(a, c, groups, anchors)
        beside = [
            i
            for i in self.outlasting(a)
            if i not in anchors and self.stages[i].consumer_group not in groups
        ]
        extra = sum(self.stages[i].read_bytes(t) for i in beside for t in self.weights[i])
        total, count, shown = self._streamed_by_step(a, c, groups)
        return total + extra, count + len(beside), (beside + shown)[:3]

    def _streamed_by_step(self, a: int, c: int, groups: set[Group]) -> tuple[int, int, list[int]]:
        lo, hi = self.window(a, c)
        if hi <= lo:
            return 0, 0, []
        total = self.weighed_before[hi] - self.weighed_before[lo]
        first = bisect.bisect_left(self.streaming_steps, lo)
        count = bisect.bisect_left(self.streaming_steps, hi) - first
        for g in groups:
            steps = self.group_steps.get(g)
            if steps is None:
                continue  # a group that reads no weights
            j, k = bisect.bisect_left(steps, lo), bisect.bisect_left(steps, hi)
            total -= self.group_bytes[g][k] - self.group_bytes[g][j]
            count -= k - j
        shown: list[int] = []
        for i in itertools.islice(self.streaming, first, None):  # no copy of the tail
            if len(shown) == 3 or self.start[i] >= hi:
                break
            if self.stages[i].consumer_group not in groups:
                shown.append(i)
        return total, count, shown

    def _streamed_in_time(
        self, a: int, c: int, groups: set[Group], anchors: Sequence[int]
    ) -> tuple[int, int, list[int]]:
        assert self.times is not None
        begin, end = self.times
        lo, hi = end[a], begin[c]
        found = [
            i
            for i in self.streaming
            if i not in (a, c)
            and i not in anchors
            and begin[i] < hi
            and end[i] > lo
            and self.stages[i].consumer_group not in groups
        ]
        total = sum(self.stages[i].read_bytes(t) for i in found for t in self.weights[i])
        return total, len(found), found[:3]

    def consumer(self, tensor: str, anchors: Sequence[int]) -> int | None:
        """The first stage running after every one of ``anchors`` (one, or a join's) that
        reads ``tensor``."""
        for r in self.readers.get(tensor, ()):
            if all(self.runs_before(a, r) for a in anchors):
                return r
        return None

    def landing(self, anchor: int, first: int, warm_bytes: int) -> Landing:
        """PC107's arithmetic for a warm of ``warm_bytes`` anchored at ``anchor``: the window
        is the steps from the anchor's finish to the first consumer's start, each as long as
        its longest stage, estimated when every stage in it has `duration_us`."""
        if self.times is not None and self.rate is not None:  # a timed layer kind
            window = max(Fraction(0), self.times[0][first] - self.times[1][anchor])
            landed = window * self.rate / 1_000_000
            return Landing(landed < LANDS * warm_bytes, window, landed)
        lo, hi = self.window(anchor, first)
        measured = hi > lo and self.unmeasured_before[hi] == self.unmeasured_before[lo]
        if measured and self.rate is not None:
            window = Fraction(self.duration_before[hi] - self.duration_before[lo])
            landed = window * self.rate / 1_000_000
            return Landing(landed < LANDS * warm_bytes, window, landed)
        return Landing(hi <= lo, None, None)

    def latest_landing(self, first: int, warm_bytes: int) -> int:
        """The last step from which an anchor starting there lands a warm of ``warm_bytes``
        before stage ``first`` (PC107 would not fire), -1 when none; an anchor starting
        earlier lands too: an earlier anchor has a longer window, or an unmeasured stage in
        it."""
        at = self.start[first]
        bound = at - 2  # an anchor right before the consumer never leaves a window
        rate = self.rate
        if bound < 0 or rate is None or warm_bytes == 0:
            return bound
        unmeasured = self.last_unmeasured[at - 1]  # anchors before it: not estimated
        if unmeasured > bound:  # the step before the consumer has no duration: no estimate
            return bound
        need = LANDS * Fraction(warm_bytes * 1_000_000, rate)  # the window that lands enough
        # Anchored at step c (c >= unmeasured), the window is before[at] - before[c + 1].
        target = self.duration_before[at] - need
        k = bisect_exact(self.duration_before, self.duration_floats, target) - 1
        best = min(k - 1, bound)
        if best >= max(unmeasured, 0):
            return best
        return max(min(unmeasured - 1, bound), -1)


def _timed(layer: ir.Layer) -> tuple[list[Fraction], list[Fraction]]:
    """When every stage has `duration_us`: each stage's start and finish in µs, a stage
    starting when its slowest dep finishes (docs/suggest.md, "A timed schedule")."""
    begin: list[Fraction] = []
    end: list[Fraction] = []
    seen: dict[int, Fraction] = {}  # by waits object (shared: plancc.schedule's SHARED)
    for waits, s in zip(layer.schedule.deps, layer.stages, strict=True):
        got = seen.get(id(waits))
        if got is None:
            got = seen[id(waits)] = max((end[d] for d in waits), default=Fraction(0))
        begin.append(got)
        end.append(begin[-1] + decimal(s.duration_us or 0))
    return begin, end


def bisect_exact(exact: Sequence[Fraction | int], floats: Sequence[float], target: Fraction) -> int:
    """``bisect.bisect_right(exact, target)``, with ``floats`` the same sorted values as
    floats. Rounding to float keeps order, so only the values whose float equals
    target's can fall on either side of it: only they are compared exactly."""
    near = float(target)
    lo = bisect.bisect_left(floats, near)
    hi = bisect.bisect_right(floats, near)
    return bisect.bisect_right(exact, target, lo, hi)

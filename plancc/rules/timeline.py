"""A layer kind's stages indexed once, so that anchor questions cost O(log n) per warm.

PC104 asks, for every warm, "which is the last stage between the anchor and
the first consumer that could anchor it instead?" and PC107 "how long is the
window before the first consumer?". Scanning the stages per warm made a layer
of 1,000 warms at one anchor take seconds; ``Timeline`` answers both from
prefix sums, sorted index lists and jump pointers built once per layer kind.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TypeVar

from plancc import ir

Group = tuple[str, str]


def decimal(x: float) -> Fraction:
    """The value the plan wrote (``36.8``), not its nearest binary float."""
    return Fraction(repr(x)) if isinstance(x, float) else Fraction(x)


@dataclass(frozen=True)
class Landing:
    """Whether a warm of ``bytes`` anchored at one stage lands before its first consumer."""

    fires: bool  # PC107 would fire
    window_us: Fraction | None  # the summed durations, when every stage in between has one
    landed: Fraction | None  # the estimated bytes landed in that window


class Timeline:
    """One complete layer kind, indexed for the anchor rules."""

    def __init__(self, plan: ir.Plan, layer: ir.Layer) -> None:  # noqa: C901, PLR0912, PLR0915 (the layer kind indexed in one pass over its stages)
        # The SDMA rate, not the plan: what ``once_per_plan`` keeps on the plan never
        # refers back to it, so a plan dropped is freed at once.
        self.rate = plan.platform.sdma_bytes_per_s if plan.platform is not None else None
        self.stages = stages = layer.stages
        tensors = plan.tensors
        # One pass over the stages fills every per-stage index (a layer kind of 10,000
        # stages is built in each check, so the passes are not one per index).
        self.readers: dict[str, list[int]] = {}  # tensor -> the stages reading it, in order
        self.weights: list[list[ir.Tensor]] = []  # per stage: the static tensors it reads
        self.streaming: list[int] = []  # the stages that read weights
        self.sdma: list[int] = []  # the `sdma: true` stages (PC105)
        self.streams_at: list[int] = []  # the stages with `streams` (PC106)
        # Prefix sums over stages [0, i): weight bytes, `streams` bytes and durations.
        # The duration sums stay int 0 until a duration is met: Fraction additions of 0
        # cost more than the rest of the timeline on a plan without durations.
        self.bytes_before = [0]
        self.streamed_before = [0]
        self.duration_before: list[Fraction | int] = [0]
        # For each stage, the last stage at or before it lacking a duration, with a
        # task, and pushing other bytes through L2 or using SDMA; -1 when none.
        self.last_unmeasured: list[int] = []
        self.last_task: list[int] = []
        self.last_busy: list[int] = []
        weighed = 0
        streamed = 0
        total: Fraction | int = 0
        unmeasured = task = busy = -1
        for i, s in enumerate(stages):
            weights: list[ir.Tensor] = []
            if s.reads:
                for name in dict.fromkeys(s.reads):
                    self.readers.setdefault(name, []).append(i)
                    t = tensors.get(name)
                    if t is not None and t.static:
                        weights.append(t)
                        weighed += t.bytes or 0
                if weights:
                    self.streaming.append(i)
            self.weights.append(weights)
            self.bytes_before.append(weighed)
            if s.sdma:
                self.sdma.append(i)
            if s.streams:
                self.streams_at.append(i)
                streamed += s.streams
            self.streamed_before.append(streamed)
            if s.duration_us is None:
                unmeasured = i
            else:
                total += decimal(s.duration_us)
            self.duration_before.append(total)
            self.last_unmeasured.append(unmeasured)
            if s.task is not None:
                task = i
            self.last_task.append(task)
            if s.streams or s.sdma:
                busy = i
            self.last_busy.append(busy)
        # The duration sums as floats, to bisect without Fraction's slow comparisons
        # (then exact).
        self.duration_floats = [float(d) for d in self.duration_before]
        # Per consumer group: its streaming stages and the prefix sums of their bytes.
        self.group_streaming: dict[Group, list[int]] = {}
        self.group_bytes: dict[Group, list[int]] = {}
        for i in self.streaming:
            group = stages[i].consumer_group
            weight = self.bytes_before[i + 1] - self.bytes_before[i]
            members = self.group_streaming.get(group)
            if members is None:
                self.group_streaming[group] = [i]
                self.group_bytes[group] = [0, weight]
            else:
                members.append(i)
                sums = self.group_bytes[group]
                sums.append(sums[-1] + weight)
        # Candidate anchors: stages that stream weights and have a task. For each (by
        # position), the position of the last earlier candidate in another consumer
        # group: skipping a touched group is one jump per run of it.
        self.candidates = [i for i in self.streaming if stages[i].task is not None]
        self.other_before: list[int] = []
        before = -1  # the last candidate of the run before the current one
        for k, i in enumerate(self.candidates):
            if k and stages[self.candidates[k - 1]].consumer_group != stages[i].consumer_group:
                before = k - 1
            self.other_before.append(before)

    def consumer(self, tensor: str, anchor: int) -> int | None:
        """The first stage after ``anchor`` that reads ``tensor``."""
        readers = self.readers.get(tensor, [])
        k = bisect.bisect_right(readers, anchor)
        return readers[k] if k < len(readers) else None

    def read_upto(self, tensor: str, stage: int) -> int:
        """The last stage at or before ``stage`` that reads ``tensor``; -1 when none."""
        readers = self.readers.get(tensor, [])
        k = bisect.bisect_right(readers, stage)
        return readers[k - 1] if k else -1

    def landing(self, anchor: int, first: int, warm_bytes: int) -> Landing:
        """PC107's arithmetic for a warm of ``warm_bytes`` anchored at ``anchor``."""
        rate = self.rate
        measured = first > anchor + 1 and self.last_unmeasured[first - 1] <= anchor
        if measured and rate is not None:
            window = Fraction(self.duration_before[first] - self.duration_before[anchor + 1])
            landed = window * rate / 1_000_000
            return Landing(4 * landed < warm_bytes, window, landed)
        return Landing(first == anchor + 1, None, None)

    def latest_landing(self, first: int, warm_bytes: int) -> int:
        """The last stage index, before ``first`` - 1, from which a warm of ``warm_bytes``
        lands in time (PC107 would not fire); -1 when none. Landing is monotone: an
        earlier anchor has a longer window, or an unmeasured stage in it."""
        bound = first - 2  # the stage right before the consumer never leaves a window
        rate = self.rate
        if bound < 0 or rate is None or warm_bytes == 0:
            return bound
        unmeasured = self.last_unmeasured[first - 1]  # anchors before it: not estimated
        if unmeasured > bound:  # the stage before the consumer has no duration: no estimate
            return bound
        need = Fraction(warm_bytes * 1_000_000, 4 * rate)  # the window that lands a quarter
        # Anchored at c (c >= unmeasured), the window is before[first] - before[c + 1].
        target = self.duration_before[first] - need
        k = bisect_exact(self.duration_before, self.duration_floats, target) - 1
        best = min(k - 1, bound)
        if best >= max(unmeasured, 0):
            return best
        return max(min(unmeasured - 1, bound), -1)

    def last_candidate(self, after: int, upto: int, groups: set[Group]) -> int | None:
        """The last candidate anchor in (``after``, ``upto``] outside ``groups``."""
        k = bisect.bisect_right(self.candidates, upto) - 1
        while k >= 0 and self.stages[self.candidates[k]].consumer_group in groups:
            k = self.other_before[k]
        if k >= 0 and self.candidates[k] > after:
            return self.candidates[k]
        return None

    def streamed(self, after: int, before: int, groups: set[Group]) -> tuple[int, int, list[int]]:
        """Weight bytes and streaming stages strictly between two stages, outside
        ``groups``: (bytes, how many stages, the first three of them)."""
        lo, hi = after + 1, before
        if hi <= lo:
            return 0, 0, []
        total = self.bytes_before[hi] - self.bytes_before[lo]
        count = bisect.bisect_left(self.streaming, hi) - bisect.bisect_left(self.streaming, lo)
        for g in groups:
            idx = self.group_streaming.get(g)
            if idx is None:
                continue  # a group that streams nothing
            a, b = bisect.bisect_left(idx, lo), bisect.bisect_left(idx, hi)
            total -= self.group_bytes[g][b] - self.group_bytes[g][a]
            count -= b - a
        shown: list[int] = []
        k = bisect.bisect_left(self.streaming, lo)
        while len(shown) < 3 and k < len(self.streaming) and self.streaming[k] < hi:
            i = self.streaming[k]
            if self.stages[i].consumer_group not in groups:
                shown.append(i)
            k += 1
        return total, count, shown


def bisect_exact(exact: Sequence[Fraction | int], floats: Sequence[float], target: Fraction) -> int:
    """``bisect.bisect_right(exact, target)``, with ``floats`` the same sorted values as
    floats. Rounding to float keeps order, so only the values whose float equals
    target's can fall on either side of it: only they are compared exactly."""
    near = float(target)
    lo = bisect.bisect_left(floats, near)
    hi = bisect.bisect_right(floats, near)
    return bisect.bisect_right(exact, target, lo, hi)


def within(indices: list[int], start: int, end: int) -> list[int]:
    """The indices in [start, end], from a sorted list."""
    return indices[bisect.bisect_left(indices, start) : bisect.bisect_right(indices, end)]


T = TypeVar("T")


def once_per_plan(plan: ir.Plan, key: object, source: object, make: Callable[[], T]) -> T:
    """``make()``, worked out once per plan for ``key`` while ``source`` (what it is
    worked out from) stays the same object: what the rules of one check share (each
    layer kind's timeline and L2 peak, the placed warms). Kept in ``plan.derived``,
    so it lives as long as the plan; neither ``source`` nor ``make()`` may refer to the
    plan itself, or a dropped plan would wait for the cycle collector."""
    found = plan.derived.get(key)
    if found is None or found[0] is not source:
        found = plan.derived[key] = (source, make())
    value: T = found[1]
    return value


def timeline(plan: ir.Plan, layer: ir.Layer) -> Timeline:
    """The layer kind's timeline, built once per plan (the rules of one check share it)."""
    return once_per_plan(
        plan, ("timeline", layer.name), layer.stages, lambda: Timeline(plan, layer)
    )

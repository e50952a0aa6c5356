"""A layer kind's schedule: its stages as a graph of `deps`, pure (no plan, no diagnostics).

The contract ("The schedule" in docs/plan-format.md): a stage starts as soon as all
its `deps` have finished, each stage takes one step, so a stage's start is the
longest `deps` path to it counted in stages. A stage without `deps` waits for the
stage listed just before it, which makes a plan without `deps` its list order.
X runs before Y when a `deps` path leads from X to Y; stages with no path between
them run beside each other.

Stages are numbered by their place in the list, and every `deps` entry is an
earlier stage (PC015 refuses the rest), so the list is a topological order and
everything here is one pass over it.

SHARED: stages may wait for one tuple object (a joined kind's first stages wait for
every last stage of the kind before: ``plancc.facts.crossing.join``); what a wait
gives is worked out once per object, so a fan of n stages joined to the next layer
costs n, not n² (the Python loop over n sinks for each of n stages).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property


@dataclass(frozen=True)
class Schedule:
    """The stages' steps and their order. ``deps[i]`` holds the indices stage i waits for."""

    deps: tuple[tuple[int, ...], ...]

    @cached_property
    def start(self) -> tuple[int, ...]:
        """The step each stage starts at: the longest `deps` path to it, in stages."""
        start: list[int] = []
        seen: dict[int, int] = {}  # by waits object (SHARED)
        for waits in self.deps:
            got = seen.get(id(waits))
            if got is None:
                got = seen[id(waits)] = max((start[d] + 1 for d in waits), default=0)
            start.append(got)
        return tuple(start)

    @cached_property
    def at_step(self) -> tuple[tuple[int, ...], ...]:
        """The stages starting at each step, in list order."""
        out: list[list[int]] = [[] for _ in range(self.steps)]
        for i, step in enumerate(self.start):
            out[step].append(i)
        return tuple(tuple(stages) for stages in out)

    @cached_property
    def steps(self) -> int:
        """How many steps the layer kind takes: one past the last stage's start."""
        return max(self.start, default=-1) + 1

    @cached_property
    def linear(self) -> bool:
        """Whether each stage waits for just the one listed before it (a plan without `deps`)."""
        return all(waits == ((i - 1,) if i else ()) for i, waits in enumerate(self.deps))

    @cached_property
    def _ancestors(self) -> tuple[int, ...]:
        # Bit d of entry i is set when stage d runs before stage i; ints as bit sets keep
        # this quadratic only in bits (n²/64 words), linear in Python operations.
        anc: list[int] = []
        seen: dict[int, int] = {}  # by waits object (SHARED)
        for waits in self.deps:
            bits = seen.get(id(waits))
            if bits is None:
                bits = 0
                for d in waits:
                    bits |= anc[d] | (1 << d)
                seen[id(waits)] = bits
            anc.append(bits)
        return tuple(anc)

    def __len__(self) -> int:
        return len(self.deps)

    def finish(self, i: int) -> int:
        """The step at which stage i has finished (one step after its start)."""
        return self.start[i] + 1

    def before(self, b: int) -> int:
        """The stages a `deps` path leads from to stage b, as a bit set."""
        return (1 << b) - 1 if self.linear else self._ancestors[b]

    def runs_before(self, a: int, b: int) -> bool:
        """Whether a `deps` path leads from stage a to stage b."""
        if self.linear:
            return a < b
        return bool(self._ancestors[b] >> a & 1)

    def beside(self, a: int, b: int) -> bool:
        """Whether two different stages have no path between them: they may run at once."""
        return a != b and not self.runs_before(a, b) and not self.runs_before(b, a)

    def between(self, a: int, c: int) -> list[int]:
        """The stages whose step overlaps the span from a's finish to c's start, in list order
        (for a plan without `deps`: the stages strictly between a and c)."""
        lo, hi = self.finish(a), self.start[c]
        return [s for s, step in enumerate(self.start) if lo <= step < hi]

    def order(self) -> list[int]:
        """Every stage by start step, then by its place in the list."""
        return sorted(range(len(self.deps)), key=lambda i: (self.start[i], i))

    @cached_property
    def lanes(self) -> tuple[int, ...]:
        """A lane for each stage so that stages starting at the same step get different
        lanes (lane 0 first, in list order): how a picture draws stages running beside
        each other."""
        taken: dict[int, int] = {}
        lanes: list[int] = []
        for step in self.start:
            lanes.append(taken.get(step, 0))
            taken[step] = lanes[-1] + 1
        return tuple(lanes)


def schedule(deps: Sequence[Sequence[int] | None]) -> Schedule:
    """The schedule of stages whose `deps` are given by index, None where a stage has none
    (it then waits for the stage listed before it). Every index must be an earlier stage."""
    waits: list[tuple[int, ...]] = []
    shared: dict[int, tuple[int, ...]] = {}  # each entry object's waits, made once
    for i, entry in enumerate(deps):
        if entry is None:
            waits.append((i - 1,) if i else ())
            continue
        got = shared.get(id(entry))
        if got is None:  # valid for stage i, so for every later one
            if any(not 0 <= d < i for d in entry):
                raise ValueError(f"stage {i} waits for a stage not listed before it: {list(entry)}")
            got = shared[id(entry)] = tuple(dict.fromkeys(entry))
        waits.append(got)
    return Schedule(tuple(waits))

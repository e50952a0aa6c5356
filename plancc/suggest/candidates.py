"""The warms a layer kind could have: the candidates `plancc suggest` judges.

Each source of candidates is one generator, listed in ``GENERATORS`` in the order its
candidates are listed; a new kind of candidate (across layers, a prefix, a guard) is
one more generator there. Besides "no warm", which every candidate is classed against:

- ``declared``: each declared warm alone, with its `allow`; and when the kind declares
  several, all of them together as declared;
- ``given``: the `--candidate`s of the layer kind, exactly as given (any anchor, any
  order, any tensor: a user may name a tensor under 1 %);
- ``enumerated``: every stage with a `task` as anchor, then every join of two such
  stages that run beside each other, times the tensor sets built from the groups of
  static tensors read only after the anchor (below).

A candidate listed again (a `--candidate` that is a declared warm) is judged once, as
the first. Generated candidates (``Source.capped``) stop at ``MAX_GENERATED`` per layer kind, and
the work spent finding them at ``WORK`` stage visits per stage of the kind: the
enumeration is linear in the stages, never quadratic (no pair of stages is tested but
those it yields). The judged candidates' findings spawn more (``neighbours``): a
finding whose fix edits the warm (PC102's order, PC103's missing tensors, PC104's later
anchor) gives the fixed warm, judged like any other.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property

from plancc import fixes, ir
from plancc.facts.timeline import Timeline
from plancc.tables.names import suggest as did_you_mean
from plancc.tables.thresholds import kept, negligible
from plancc.text import clip
from plancc.usage import UsageError

NONE = "none"  # the origin of "no warm"
# Generated candidates per layer kind: a layer of a thousand tasked stages would
# otherwise give millions (each anchor times each suffix of its later groups).
MAX_GENERATED = 1000
WORK = 64  # stage visits per stage of the layer kind the enumeration may spend

Part = tuple[tuple[str, ...], tuple[str, ...]]  # one warm: its anchor stages, its tensors


@dataclass(frozen=True)
class Candidate:
    """One warm, or (the declared warms of a kind, as declared) several."""

    kind: str
    parts: tuple[Part, ...]  # empty for "no warm"
    origin: str  # "given", "declared", "as declared", "enumerated", "neighbour", or NONE
    # The declared warms it is (their `allow` and `reason` go with it), in part order.
    warms: tuple[ir.Warm, ...] = ()

    @property
    def none(self) -> bool:
        return not self.parts

    @property
    def anchor(self) -> tuple[str, ...]:
        return tuple(a for anchor, _ in self.parts for a in anchor)

    @property
    def tensors(self) -> tuple[str, ...]:
        return tuple(t for _, tensors in self.parts for t in tensors)


def one(kind: str, anchor: tuple[str, ...], tensors: tuple[str, ...], origin: str) -> Candidate:
    return Candidate(kind, ((anchor, tensors),), origin)


def measured(kind: str, parts: tuple[Part, ...]) -> Candidate:
    """The warms a measurement measured: judged as given (their stages and tensors are
    checked against the plan by ``judge``'s caller)."""
    return Candidate(kind, parts, "measured")


@dataclass(frozen=True)
class Setting:
    """What a generator reads: the plan, one layer kind on its timeline, the `--candidate`s."""

    plan: ir.Plan
    layer: ir.Layer
    line: Timeline
    given: tuple[Candidate, ...] = ()
    # The stage visits the generators may still spend (``WORK`` per stage); below 1, they
    # have stopped at their bound.
    work: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.work[:] = [WORK * max(len(self.layer.stages), 1)]

    @property
    def stopped(self) -> bool:
        return self.work[0] <= 0

    @property
    def l2(self) -> int | None:
        return self.plan.platform.l2_bytes if self.plan.platform is not None else None

    @cached_property
    def stage(self) -> dict[str, ir.Stage]:
        """The stages by name."""
        return {st.name: st for st in self.layer.stages}

    @cached_property
    def _pushed(self) -> list[int]:
        """The bytes pushed through L2 before each step: weights and `streams`."""
        line = self.line
        return [w + x for w, x in zip(line.weighed_before, line.streamed_before, strict=True)]

    def reach(self, after: int) -> int:
        """The first step past the reach of an anchor finishing at step ``after``
        (``_later_groups``): a step starts in reach while what streams from ``after`` up to
        it stays within twice L2."""
        if self.l2 is None:
            return self.line.schedule.steps
        pushed = self._pushed
        if after >= len(pushed):
            return after
        return bisect.bisect_right(pushed, pushed[after] + 2 * self.l2)


Generator = Callable[[Setting], Iterator[Candidate]]


@dataclass(frozen=True)
class Source:
    generate: Generator
    capped: bool  # generated: stops at MAX_GENERATED (the user's own are never cut)


def given(s: Setting) -> Iterator[Candidate]:
    return (c for c in s.given if c.kind == s.layer.name)


def declared(s: Setting) -> Iterator[Candidate]:
    """Each declared warm alone; and, when there are several, all of them as declared
    (two scopes at one anchor are a split only together)."""
    layer = s.layer
    warms = [w for w in layer.warms if w.anchors]
    for w in warms:
        yield Candidate(layer.name, (part_of(layer, w),), "declared", (w,))
    if len(warms) > 1:
        yield Candidate(
            layer.name, tuple(part_of(layer, w) for w in warms), "as declared", tuple(warms)
        )


def part_of(layer: ir.Layer, w: ir.Warm) -> Part:
    return tuple(layer.stages[a].name for a in w.anchors), tuple(e.tensor.name for e in w.entries)


def enumerated(s: Setting) -> Iterator[Candidate]:
    """Each anchor (``_anchors``) with each of its tensor sets (``_sets``)."""
    names = [st.name for st in s.layer.stages]
    for anchors in _anchors(s.line):
        if s.stopped:
            return
        for tensors in _sets(s, anchors):
            yield one(s.layer.name, tuple(names[a] for a in anchors), tensors, "enumerated")


# Every source of candidates, in the order they are listed.
GENERATORS: tuple[Source, ...] = (
    Source(declared, capped=False),
    Source(given, capped=False),
    Source(enumerated, capped=True),
)


def _anchors(line: Timeline) -> Iterator[tuple[int, ...]]:
    """Each stage with a task, in step order; then each join of two that run beside each
    other, the later in step order second. A join's partners are the tasked stages before
    it in step order that are not its ancestors: a bit set, not a test of every pair."""
    tasks = line.tasked
    yield from ((a,) for a in tasks)
    sched = line.schedule
    if sched.linear:
        return  # one stage after another: nothing runs beside anything
    seen = 0
    for b in tasks:
        partners = seen & ~sched.before(b)
        seen |= 1 << b
        found = []
        while partners:
            low = partners & -partners
            found.append(low.bit_length() - 1)
            partners ^= low
        yield from ((a, b) for a in sorted(found, key=lambda a: line.rank[a]))


def _sets(s: Setting, anchors: tuple[int, ...]) -> Iterator[tuple[str, ...]]:
    """The tensor sets of one anchor: each suffix of its later groups and each single group
    (``_later_groups``), in consumer order; of each, the tensors that are not negligible
    against the set (a scale vector never rides along). A set is left out when it is over
    L2 alone (PC030), negligible against every later group's bytes (a scale vector alone
    is no warm), empty, or one already given."""
    groups = _later_groups(s, anchors)
    size = {t: s.plan.tensors[t].bytes or 0 for g in groups for t in g}
    every = sum(size.values())
    l2 = s.l2
    # The suffixes from the shortest up, until one is over L2. A suffix's kept tensors are
    # the longer one's group's and the shorter one's kept that stay above 1 % of the
    # larger total: at most a hundred of them, never the whole suffix again.
    suffixes: dict[int, tuple[str, ...]] = {}
    shorter: list[str] = []
    total = 0
    for i in range(len(groups) - 1, -1, -1):
        total += sum(size[t] for t in groups[i])
        if l2 is not None and total > l2:
            break
        shorter = [t for t in [*groups[i], *shorter] if not negligible(size[t], total)]
        suffixes[i] = tuple(shorter)
    done: set[tuple[str, ...]] = set()
    for i, g in enumerate(groups):
        single = tuple(kept({t: size[t] for t in g}))
        for tensors in (suffixes.get(i, ()), single):
            nbytes = sum(size[t] for t in tensors)
            if not tensors or tensors in done or negligible(nbytes, every):
                continue
            if l2 is not None and nbytes > l2:
                continue
            done.add(tensors)
            yield tensors


def _later_groups(s: Setting, anchors: tuple[int, ...]) -> list[list[str]]:
    """The static tensors read only by stages running after every anchor and first read
    within its reach, grouped by their consumer's group, the groups by their first
    consumer's start, each group's tensors in consumer order.

    The reach ends where more than twice L2 has streamed since the anchor finished
    (weights and `streams`, each stage's own, by step as PC106 counts them): a warm holds
    at most L2 of those bytes, so a tensor first read beyond is evicted before it (PC106)
    or the warm is over L2 (PC030). Each stage in reach spends one of ``s.work``."""
    line, sched = s.line, s.line.schedule
    after = max(line.start[a] for a in anchors) + 1
    lo = bisect.bisect_left(line.step_of, after)
    hi = bisect.bisect_left(line.step_of, s.reach(after))
    s.work[0] -= hi - lo

    def runs_after(i: int) -> bool:
        return all(sched.runs_before(a, i) for a in anchors)

    by_group: dict[tuple[str, str], list[str]] = {}
    for i in itertools.islice(line.order, lo, hi):  # step order: consumers by start, then name
        if not line.weights[i] or not runs_after(i):
            continue
        for t in line.weights[i]:
            readers = line.readers[t.name]
            if readers[0] != i or not all(runs_after(r) for r in readers):
                continue  # read before the anchor, or its consumer is an earlier stage
            by_group.setdefault(line.stages[i].consumer_group, []).append(t.name)
    return list(by_group.values())


def neighbours(c: Candidate, found: Iterable[fixes.Fix]) -> Iterator[Candidate]:
    """The candidate as each fix of its findings leaves it: a finding's fix that edits its
    warms' `after` and `tensors` (the paths ``judge`` gave them) gives a neighbour."""
    for fix in found:
        parts = [(list(a), list(t)) for a, t in c.parts]
        if all(_edit(parts, c.kind, e) for e in fix.edits):
            out = tuple((tuple(a), tuple(t)) for a, t in parts)
            if out != c.parts and all(a and t for a, t in out):
                yield Candidate(c.kind, out, "neighbour")


def warm_path(kind: str, i: int) -> fixes.Path:
    """The path of a candidate's i-th warm, as its findings' fixes address it."""
    return ("layers", kind, "warms", i)


def _edit(parts: list[tuple[list[str], list[str]]], kind: str, e: fixes.Edit) -> bool:
    """Apply one edit to the parts; False for an edit of anything else."""
    path = e.path
    if len(path) != 5 or path[:3] != ("layers", kind, "warms") or not isinstance(path[3], int):
        return False
    if not 0 <= path[3] < len(parts):
        return False
    anchor, tensors = parts[path[3]]
    key = path[4]
    if key == "after" and isinstance(e, fixes.Replace):
        value = e.value
        anchor[:] = [value] if isinstance(value, str) else list(value)
        return True
    if key != "tensors":
        return False
    if isinstance(e, fixes.Reorder):
        old = list(tensors)
        tensors[:] = [old[i] for i in e.order if 0 <= i < len(old)]
        return len(tensors) == len(old)
    if isinstance(e, fixes.Append):
        tensors += [t for t in e.items if isinstance(t, str) and t not in tensors]
        return True
    if isinstance(e, fixes.Remove):
        drop = {i for i in e.items if isinstance(i, int)}
        tensors[:] = [t for i, t in enumerate(tensors) if i not in drop]
        return True
    return False


def parse(spec: str, plan: ir.Plan) -> Candidate:
    """``KIND:ANCHOR[+ANCHOR…]:T1,T2,…`` (``--candidate``), checked against the plan."""
    parts = spec.split(":")
    if len(parts) != 3 or not all(parts):
        raise UsageError(
            f"--candidate '{clip(spec)}': expected KIND:ANCHOR[+ANCHOR…]:T1,T2,… "
            "(csa:q_proj:wo_a,wo_b)"
        )
    kind, anchors, tensors = parts
    layer = plan.layers.get(kind)
    if layer is None:
        raise UsageError(f"--candidate '{clip(spec)}': {unknown('layer kind', kind, plan.layers)}")
    stages = {s.name for s in layer.stages}
    anchor = tuple(anchors.split("+"))
    for a in anchor:
        if a not in stages:
            raise UsageError(f"--candidate '{clip(spec)}': {unknown('stage', a, stages)}")
    if len(set(anchor)) != len(anchor):
        raise UsageError(f"--candidate '{clip(spec)}': a stage is listed twice in its anchors")
    names = tuple(tensors.split(","))
    for t in names:
        if t not in plan.tensors:
            raise UsageError(f"--candidate '{clip(spec)}': {unknown('tensor', t, plan.tensors)}")
    if len(set(names)) != len(names):
        raise UsageError(f"--candidate '{clip(spec)}': a tensor is listed twice")
    return one(kind, anchor, names, "given")


def unknown(what: str, name: str, known: Iterable[str]) -> str:
    hint = did_you_mean(name, known)
    return f"unknown {what} '{clip(name)}'" + (f"; {hint}" if hint else "")

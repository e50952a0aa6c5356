"""The warms a layer kind could have: the candidates `plancc suggest` judges.

Each source of candidates is one generator, listed in ``GENERATORS`` in the order its
candidates are listed; a new kind of candidate is one more generator there. Besides "no
warm", which every candidate is classed against:

- ``declared``: each declared warm alone, with its `allow`, its forms (`next_layer`,
  `rows`, `guard`) and its entries as resolve made them; and when the kind declares
  several, all of them together as declared;
- ``given``: the `--candidate`s of the layer kind, exactly as given (any anchor, any
  order, any tensor: a user may name a tensor under 1 %);
- ``enumerated``: every stage with a `task` as anchor, then every join of two such
  stages that run beside each other, times the tensor sets built from the groups of
  static tensors read only after the anchor (below);
- ``crossing``: every stage with a `task` as anchor of a cross-layer warm (`next_layer`),
  times the sets built the same way on the kind joined with each kind the forward runs
  next, of the next layer's weights that no anchor of the next layer lands: read before
  its first anchor, or right after every anchor before them (PC107's "cannot land");
- ``prefixes``: at every stage with a `task`, the first whole leading-dim groups of the
  tensor each later consumer group reads first (`rows: [0, K]`), K a quarter, a half
  and three quarters of them (the steps the groups divide into).

A guard is not generated here: a candidate whose class flips inside a param's range gives
the candidate guarded where it is a gain (``plancc.suggest.ranges``).

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
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, NamedTuple

from plancc import fixes, ir
from plancc.facts.crossing import Joined, successors
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

Rows = tuple[int, int]  # a prefix's first-dim range [lo, hi)
GuardSpec = tuple[str, str, int]  # a guard: its param, comparison and bound


class Part(NamedTuple):
    """One warm: its anchor stages, its tensors, and its forms."""

    anchor: tuple[str, ...]
    tensors: tuple[str, ...]
    # Per tensor, a prefix's rows (None: the whole tensor); empty when it has none.
    rows: tuple[Rows | None, ...] = ()
    next_layer: bool = False  # a cross-layer warm: the next layer's tensors
    guards: tuple[GuardSpec, ...] = ()  # run-time guards, all of which must hold

    @staticmethod
    def of(
        anchor: tuple[str, ...],
        tensors: tuple[str, ...],
        rows: Iterable[Rows | None] = (),
        next_layer: bool = False,
        guards: tuple[GuardSpec, ...] = (),
    ) -> Part:
        """A part with its rows in one form: empty when no tensor has a range, so that two
        spellings of one warm are one part."""
        ranges = tuple(rows)
        if not any(r is not None for r in ranges):
            ranges = ()
        return Part(anchor, tensors, ranges, next_layer, guards)

    def range_of(self, j: int) -> Rows | None:
        return self.rows[j] if self.rows else None

    @property
    def items(self) -> list[str]:
        """Its tensors as a table lists them: ``wo_a``, a prefix ``wo_a[0:8]``."""
        return [item(t, self.range_of(j)) for j, t in enumerate(self.tensors)]

    @property
    def guard_words(self) -> str:
        """`` if CTX <= 2272`` (several joined with ``and``); empty without a guard."""
        return " if " + " and ".join(guard_text(g) for g in self.guards) if self.guards else ""

    @property
    def what(self) -> str:
        """Its tensors in words: ``wo_a, wo_b``, ``next layer's wq_a, wkv``, with its guard."""
        nxt = "next layer's " if self.next_layer else ""
        return f"{nxt}{', '.join(self.items)}{self.guard_words}"


def item(tensor: str, rows: Rows | None) -> str:
    return tensor if rows is None else f"{tensor}[{rows[0]}:{rows[1]}]"


def guard_text(g: GuardSpec) -> str:
    return f"{g[0]} {g[1]} {g[2]}"


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
        return tuple(a for p in self.parts for a in p.anchor)

    @property
    def tensors(self) -> tuple[str, ...]:
        return tuple(t for p in self.parts for t in p.tensors)

    def guarded(self, guard: GuardSpec) -> Candidate:
        """The candidate with ``guard`` on each of its warms, as a guard spawns it: the
        plan's own warms stay the plan's (their names, `allow` and `reason`), guarded."""
        parts = tuple(p._replace(guards=(*p.guards, guard)) for p in self.parts)
        return Candidate(self.kind, parts, self.origin if self.warms else "guarded", self.warms)


def one(
    kind: str, anchor: tuple[str, ...], tensors: tuple[str, ...], origin: str, **forms: Any
) -> Candidate:
    return Candidate(kind, (Part.of(anchor, tensors, **forms),), origin)


def measured(kind: str, parts: tuple[Part, ...]) -> Candidate:
    """The warms a measurement measured: judged as given (their stages and tensors are
    checked against the plan by ``judge``'s caller)."""
    return Candidate(kind, parts, "measured")


@dataclass(frozen=True, eq=False)
class World:
    """The plan at one value of its params, with its layer kinds' timelines and the pairs
    of kinds a cross-layer candidate joins, each built when first asked for and shared by
    every candidate judged there."""

    plan: ir.Plan
    lines: dict[str, Timeline] = field(default_factory=dict)
    joins: dict[tuple[str, str], Joined] = field(default_factory=dict)

    def line(self, kind: str) -> Timeline:
        line = self.lines.get(kind)
        if line is None:
            line = self.lines[kind] = Timeline(self.plan, self.plan.layers[kind])
        return line

    def joined(self, a: str, b: str) -> Joined:
        found = self.joins.get((a, b))
        if found is None:
            layers = self.plan.layers
            found = self.joins[a, b] = Joined.of(self.plan, layers[a], layers[b])
        return found

    def next_kinds(self, kind: str) -> tuple[str, ...]:
        """The complete layer kinds a cross-layer warm of ``kind`` is judged against."""
        layers = self.plan.layers
        return tuple(k for k in successors(self.plan, kind) if k in layers and layers[k].complete)


@dataclass(frozen=True)
class Setting:
    """What a generator reads: the plan, one layer kind on its timeline, the `--candidate`s;
    ``world``: the plan with its other kinds' timelines (a cross-layer candidate's)."""

    plan: ir.Plan
    layer: ir.Layer
    line: Timeline
    given: tuple[Candidate, ...] = ()
    # The stage visits the generators may still spend (``WORK`` per stage); below 1, they
    # have stopped at their bound.
    work: list[int] = field(default_factory=list)
    world: World | None = None
    away: bool = False  # at other values of the params than the run's (an end of a range)
    # An anchor's later groups (``_later_groups``), kept for the generators after the first.
    groups: dict[tuple[int, ...], list[list[str]]] = field(default_factory=dict)
    pushes: dict[int, list[int]] = field(default_factory=dict)  # ``_pushed`` per timeline

    def __post_init__(self) -> None:
        self.work[:] = [WORK * max(len(self.layer.stages), 1)]
        if self.world is None:
            world = World(self.plan, {self.layer.name: self.line})
            object.__setattr__(self, "world", world)

    @property
    def here(self) -> World:
        assert self.world is not None  # set by __post_init__
        return self.world

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

    def _pushed(self, line: Timeline) -> list[int]:
        """The bytes pushed through L2 before each step of ``line``: weights and `streams`."""
        found = self.pushes.get(id(line))  # each timeline lives as long as the setting
        if found is None:
            found = self.pushes[id(line)] = [
                w + x for w, x in zip(line.weighed_before, line.streamed_before, strict=True)
            ]
        return found

    def reach(self, after: int, line: Timeline | None = None) -> int:
        """The first step past the reach of an anchor finishing at step ``after``
        (``_later_groups``), on the kind's timeline or ``line`` (a joined kind's): a step
        starts in reach while what streams from ``after`` up to it stays within twice L2."""
        line = self.line if line is None else line
        if self.l2 is None:
            return line.schedule.steps
        pushed = self._pushed(line)
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
    """A declared warm as a candidate's part: its anchors, tensors and forms."""
    return Part.of(
        tuple(layer.stages[a].name for a in w.anchors),
        tuple(e.tensor.name for e in w.entries),
        (None if e.rows is None else (e.rows.lo, e.rows.hi) for e in w.entries),
        w.next_layer,
        tuple((g.param, g.op, g.bound) for g in w.guards),
    )


def enumerated(s: Setting) -> Iterator[Candidate]:
    """Each anchor (``_anchors``) with each of its tensor sets (``_sets``)."""
    names = [st.name for st in s.layer.stages]
    for anchors in _anchors(s.line):
        if s.stopped:
            return
        for tensors in _sets(s, _later_groups(s, anchors)):
            yield one(s.layer.name, tuple(names[a] for a in anchors), tensors, "enumerated")


def crossing(s: Setting) -> Iterator[Candidate]:
    """Cross-layer warms: each stage with a `task` as anchor, with the sets of the next
    layer's weights that no anchor of the next layer lands (``_unlandable``), built as
    the enumerated sets are, on the kind joined with each kind the forward runs next."""
    kind = s.layer.name
    names = [st.name for st in s.layer.stages]
    world = s.here
    nexts = [(world.joined(kind, b), _unlandable(s, world.line(b))) for b in world.next_kinds(kind)]
    done: set[tuple[int, tuple[str, ...]]] = set()
    for a in s.line.tasked:
        for joined, wanted in nexts:
            if s.stopped:
                return
            if not wanted:
                continue
            # In the joined kind the next layer's tensors are read by its stages alone.
            groups = _later_groups(s, (a,), joined.line, wanted)
            for tensors in _sets(s, groups):
                if (a, tensors) not in done:
                    done.add((a, tensors))
                    yield one(kind, (names[a],), tensors, "crossing", next_layer=True)


def _unlandable(s: Setting, line: Timeline) -> frozenset[str]:
    """The static tensors of a layer kind that no anchor of it can land: each one's first
    reader runs before every stage with a `task`, or right after the last anchors from
    which it would land (``Timeline.latest_landing``: PC107 fires from every later one)
    none runs before all its readers. Each tensor spends one of ``s.work``, and at most
    ``TRIES`` anchors are tried per tensor."""
    out = set()
    for name, readers in line.readers.items():
        first = readers[0]
        static = line.weights[first]
        tensor = next((t for t in static if t.name == name), None)
        if tensor is None:
            continue  # dynamic: never warmed
        s.work[0] -= 1
        bound = line.latest_landing(first, tensor.bytes or 0)
        k = bisect.bisect_right(line.tasked_steps, bound)
        tried = line.tasked[max(k - TRIES, 0) : k]
        if not any(all(line.runs_before(a, r) for r in readers) for a in reversed(tried)):
            out.add(name)
    return frozenset(out)


def prefixes(s: Setting) -> Iterator[Candidate]:
    """At each stage with a `task`, each later consumer group's first tensor of three or
    more dims (its first dim holding whole groups of the rest) as a prefix of its first
    groups: a quarter, a half and three quarters of them, where they divide so."""
    names = [st.name for st in s.layer.stages]
    tensors = s.plan.tensors
    for a in s.line.tasked:
        if s.stopped:
            return
        for group in _later_groups(s, (a,)):
            tensor = tensors[group[0]]
            if len(tensor.shape) < 3 or not tensor.static:
                continue
            for k in _steps(tensor.shape[0] or 0):
                rows = ((0, k),)
                yield one(s.layer.name, (names[a],), (tensor.name,), "prefix", rows=rows)


def _steps(first: int) -> list[int]:
    """A prefix's row counts of a first dim: its quarters, else its half."""
    if first >= 4 and first % 4 == 0:
        return [first // 4, first // 2, 3 * first // 4]
    return [first // 2] if first >= 2 and first % 2 == 0 else []


# Every source of candidates, in the order they are listed.
GENERATORS: tuple[Source, ...] = (
    Source(declared, capped=False),
    Source(given, capped=False),
    Source(enumerated, capped=True),
    Source(crossing, capped=True),
    Source(prefixes, capped=True),
)
TRIES = 8  # anchors tried per tensor for one that lands it (``_unlandable``)


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


def _sets(s: Setting, groups: list[list[str]]) -> Iterator[tuple[str, ...]]:
    """The tensor sets of one anchor's later groups (``_later_groups``): each suffix of the
    groups and each single group, in consumer order; of each, the tensors that are not
    negligible against the set (a scale vector never rides along). A set is left out when
    it is over L2 alone (PC030), negligible against every later group's bytes (a scale
    vector alone is no warm), empty, or one already given."""
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


def _later_groups(
    s: Setting,
    anchors: tuple[int, ...],
    line: Timeline | None = None,
    keep: frozenset[str] | None = None,
) -> list[list[str]]:
    """The static tensors read only by stages running after every anchor and first read
    within its reach, grouped by their consumer's group, the groups by their first
    consumer's start, each group's tensors in consumer order; on the kind's timeline, or
    on ``line`` (a joined kind's) those of ``keep``.

    The reach ends where more than twice L2 has streamed since the anchor finished
    (weights and `streams`, each stage's own, by step as PC106 counts them): a warm holds
    at most L2 of those bytes, so a tensor first read beyond is evicted before it (PC106)
    or the warm is over L2 (PC030). Each stage in reach spends one of ``s.work``; the
    kind's own are worked out once per anchor for every generator."""
    own = line is None
    if own and anchors in s.groups:
        return s.groups[anchors]
    line = s.line if line is None else line
    sched = line.schedule
    after = max(line.start[a] for a in anchors) + 1
    lo = bisect.bisect_left(line.step_of, after)
    hi = bisect.bisect_left(line.step_of, s.reach(after, line))
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
            if keep is not None and t.name not in keep:
                continue
            by_group.setdefault(line.stages[i].consumer_group, []).append(t.name)
    out = list(by_group.values())
    if own:
        s.groups[anchors] = out
    return out


def neighbours(c: Candidate, found: Iterable[fixes.Fix]) -> Iterator[Candidate]:
    """The candidate as each fix of its findings leaves it: a finding's fix that edits its
    warms' `after` and `tensors` (the paths ``judge`` gave them) gives a neighbour, with
    its forms (a prefix's rows go with their tensor). A guard that a flip of its class
    spawned does not go with it: the neighbour is guarded where its own class flips, and
    is no gain only at values the guard skips (`sv_matmul: wo if BATCH <= 8` beside an
    unguarded `sv_matmul: wo` that is a gain at every batch)."""
    kept = [_spawned_off(c, i, p) for i, p in enumerate(c.parts)]
    for fix in found:
        parts = [_Editable(list(p.anchor), list(_pairs(p))) for p in c.parts]
        if all(_edit(parts, c.kind, e) for e in fix.edits):
            out = tuple(
                Part.of(
                    tuple(e.anchor),
                    tuple(t for t, _ in e.items),
                    (r for _, r in e.items),
                    p.next_layer,
                    guards,
                )
                for e, p, guards in zip(parts, c.parts, kept, strict=True)
            )
            if out != c.parts and all(p.anchor and p.tensors for p in out):
                yield Candidate(c.kind, out, "neighbour")


def _spawned_off(c: Candidate, i: int, p: Part) -> tuple[GuardSpec, ...]:
    """The guards of ``c``'s i-th warm that were not spawned by a flip of its class: a
    declared warm's own, those of a `--candidate`."""
    if c.origin == "guarded":
        return ()
    if i < len(c.warms):
        declared = {(g.param, g.op, g.bound) for g in c.warms[i].guards}
        return tuple(g for g in p.guards if g in declared)
    return p.guards


def _pairs(p: Part) -> Iterator[tuple[str, Rows | None]]:
    return ((t, p.range_of(j)) for j, t in enumerate(p.tensors))


@dataclass
class _Editable:
    anchor: list[str]
    items: list[tuple[str, Rows | None]]


def warm_path(kind: str, i: int) -> fixes.Path:
    """The path of a candidate's i-th warm, as its findings' fixes address it."""
    return ("layers", kind, "warms", i)


def _edit(parts: list[_Editable], kind: str, e: fixes.Edit) -> bool:
    """Apply one edit to the parts; False for an edit of anything else."""
    path = e.path
    if len(path) != 5 or path[:3] != ("layers", kind, "warms") or not isinstance(path[3], int):
        return False
    if not 0 <= path[3] < len(parts):
        return False
    part = parts[path[3]]
    key = path[4]
    if key == "after" and isinstance(e, fixes.Replace):
        value = e.value
        part.anchor[:] = [value] if isinstance(value, str) else list(value)
        return True
    if key != "tensors":
        return False
    items = part.items
    if isinstance(e, fixes.Reorder):
        old = list(items)
        items[:] = [old[i] for i in e.order if 0 <= i < len(old)]
        return len(items) == len(old)
    if isinstance(e, fixes.Append):
        names = {t for t, _ in items}
        items += [(t, None) for t in e.items if isinstance(t, str) and t not in names]
        return True
    if isinstance(e, fixes.Remove):
        drop = {i for i in e.items if isinstance(i, int)}
        items[:] = [t for i, t in enumerate(items) if i not in drop]
        return True
    return False


_ROWS = re.compile(r"^(?P<name>[^\[\]]+)\[(?P<lo>[0-9]+):(?P<hi>[0-9]+)\]$")
_GUARD = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(<=|>=|<|>)\s*([0-9]+)\s*$")
SPEC = "KIND:ANCHOR[+ANCHOR…]:T1,T2,…[:next][:PARAM<=N…]"


def parse(spec: str, plan: ir.Plan) -> Candidate:
    """``KIND:ANCHOR[+ANCHOR…]:T1,T2,…`` (``--candidate``), checked against the plan; a
    tensor may be a prefix ``T[LO:HI]``, and the fields after the tensors say ``next``
    (a cross-layer warm) or a guard ``PARAM<=N`` (``>=``, ``<``, ``>``)."""
    kind, anchors, tensors, *forms = _fields(spec)
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
    names, rows = _tensors(spec, plan, tensors)
    next_layer, guards = _forms(spec, plan, forms)
    return one(kind, anchor, names, "given", rows=rows, next_layer=next_layer, guards=guards)


def _fields(spec: str) -> list[str]:
    """The fields between colons; a prefix's ``[LO:HI]`` holds one, and stays whole."""
    fields: list[str] = []
    for piece in spec.split(":"):
        if fields and fields[-1].count("[") > fields[-1].count("]"):
            fields[-1] += ":" + piece
        else:
            fields.append(piece)
    if len(fields) < 3 or not all(fields):
        raise UsageError(f"--candidate '{clip(spec)}': expected {SPEC} (csa:q_proj:wo_a,wo_b)")
    return fields


def _tensors(
    spec: str, plan: ir.Plan, text: str
) -> tuple[tuple[str, ...], tuple[Rows | None, ...]]:
    names: list[str] = []
    rows: list[Rows | None] = []
    for t in text.split(","):
        m = _ROWS.match(t)
        name = m["name"] if m else t
        if name not in plan.tensors:
            raise UsageError(f"--candidate '{clip(spec)}': {unknown('tensor', name, plan.tensors)}")
        rows.append(_rows(spec, plan.tensors[name], m))
        names.append(name)
    if len(set(zip(names, rows, strict=True))) != len(names):
        raise UsageError(f"--candidate '{clip(spec)}': a tensor is listed twice")
    return tuple(names), tuple(rows)


def _forms(spec: str, plan: ir.Plan, forms: list[str]) -> tuple[bool, tuple[GuardSpec, ...]]:
    next_layer = False
    guards: list[GuardSpec] = []
    params = [p.name for p in plan.params]
    for f in forms:
        if f == "next":
            next_layer = True
            continue
        g = _GUARD.match(f)
        if g is None or g[1] not in params:
            raise UsageError(
                f"--candidate '{clip(spec)}': '{clip(f)}' is neither `next` nor a guard "
                f"PARAM<=N on a param of the plan ({', '.join(params) or 'it has none'})"
            )
        guards.append((g[1], g[2], int(g[3])))
    return next_layer, tuple(guards)


def _rows(spec: str, tensor: ir.Tensor, m: re.Match[str] | None) -> Rows | None:
    if m is None:
        return None
    lo, hi = int(m["lo"]), int(m["hi"])
    first = tensor.shape[0] if tensor.shape else None
    if first is None or not lo < hi <= first:
        raise UsageError(
            f"--candidate '{clip(spec)}': rows [{lo}:{hi}] of '{tensor.name}' are no range "
            f"of its first dim ({first if first is not None else 'dynamic'}): 0 ≤ LO < HI ≤ it"
        )
    return (lo, hi)


def unknown(what: str, name: str, known: Iterable[str]) -> str:
    hint = did_you_mean(name, known)
    return f"unknown {what} '{clip(name)}'" + (f"; {hint}" if hint else "")

"""Per warm scope, from the swimlane traces: how long it ran, the bandwidth it reached,
and the seed's four ways a warm fails to do its job (missing, implausible, split, late).

Events are matched by the manifest's ``name_hint`` (and the consumers' kernels),
grouped into one instance per task (an SPMD task's cores together), and each
instance is attributed to the one layer it belongs to. PyPTO names a hint repeated
within one function ``<hint>_<N>``, N counting its occurrences in issue order: the
N-th layer of the forward (``forward.kinds``) whose kind issues the hint. Names
without ``_N`` are placed by order — the k-th scope to the k-th such layer — only
when the trace holds as many as the forward issues. What cannot be placed (the
counts disagree and the names carry no ``_N``, or the manifest has no forward and
several warms share the hint) is reported as unattributed, never credited to
every warm that shares its hint. A layer whose scope is absent while its
neighbours' are placed is flagged: its transfer never happened.

A cross-layer warm (the manifest's `next_layer`) is issued in every layer of its
kind but the forward's last, and lands for its consumer in the next layer (the
consumers' `layer`): its scope in layer i is paired with its consumer's kernel in
layer i + 1, and the last layer's absent scope is expected. A guarded warm (its
`guards`) may be skipped at run time: the layers without its scope are noted as not
issued, never called lost.

An instance whose figures are impossible (``trace``: a zero or negative duration,
an absurd stamp) keeps its layer but gives no figure: no duration, no bandwidth,
no lateness, no share of a split's aggregate; it is flagged with its line.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field

from plancc.measure.compare import where
from plancc.measure.manifest import Manifest, Warm
from plancc.measure.trace import Event, Trace
from plancc.text import plural

LayerKey = Hashable


@dataclass(frozen=True)
class Instance:
    start: float
    end: float
    duration: float  # µs: the kernel duration (SPMD: the union of its cores' kernels)
    lanes: tuple[str, ...]
    n: int | None  # the name's _<N>
    line: int
    problem: str | None  # an impossible figure: no duration, no bandwidth
    fanin: tuple[str, ...] = ()  # the tasks it waited on: its anchor's among them


@dataclass
class Split:
    """Warms of one layer kind whose scopes ran at the same time on different cores."""

    warms: tuple[str, ...]
    bytes: int
    layers: int = 0  # layers where they overlapped
    of: int = 0  # layers where all of them ran
    windows: list[float] = field(default_factory=list)  # union of their windows, µs
    lanes: set[str] = field(default_factory=set)


@dataclass
class Scope:
    warm: Warm
    durations: list[float] = field(default_factory=list)  # of the placed, valid instances
    found: int = 0  # instances placed in this warm's layers, valid or not
    expected: int | None = 0  # instances the forward issues, over every trace; None: unknown
    missing_in: list[str] = field(default_factory=list)  # traces without any of its hint
    missing_layers: list[tuple[str, list[str]]] = field(default_factory=list)  # (trace, layers)
    invalid: list[str] = field(default_factory=list)  # "file:line: name: why"
    consumer: str | None = None  # the first consumer's kernel
    landed: int = 0
    judged: int = 0  # layers where the warm and its consumer were both found
    late_note: str | None = None  # why lateness was not judged
    # Each layer where it landed after its consumer started: the layer as a message names
    # it ("17 (hca)"), and by how much, µs (the warm's end minus the consumer's start).
    late: list[tuple[str, float]] = field(default_factory=list)


@dataclass(frozen=True)
class Unattributed:
    """Scopes of one hint in one trace that could not be placed in a layer."""

    file: str
    name_hint: str
    warms: tuple[str, ...]  # the warms that share the hint: one of them, unknown which
    durations: tuple[float, ...]  # of the valid ones
    count: int
    reason: str
    # A lone scope whose warms all have the same bytes: those bytes (its bandwidth is
    # the same whichever warm it is); None otherwise.
    bytes: int | None = None


@dataclass(frozen=True)
class Analysis:
    scopes: list[Scope]
    splits: list[Split]
    unattributed: list[Unattributed]


def instances(trace: Trace) -> dict[str, list[Instance]]:
    """Every wanted kernel's task instances in the Worker View, by start time."""
    groups: dict[tuple[str, str], list[Event]] = defaultdict(list)
    for e in trace.worker_events():
        groups[(e.kernel, e.task)].append(e)
    out: dict[str, list[Instance]] = defaultdict(list)
    for (kernel, _), events in groups.items():
        problems = [
            f"{e.problem} (line {e.line})" if len(events) > 1 else e.problem
            for e in events
            if e.problem
        ]
        start, end = min(e.start for e in events), max(e.end for e in events)
        duration = events[0].kernel_us if len(events) == 1 else end - start
        out[kernel].append(
            Instance(
                start,
                end,
                duration,
                tuple(sorted({trace.lane(e.tid) for e in events})),
                events[0].n,
                min(e.line for e in events),
                "; ".join(p for p in problems if p) or None,
                tuple(dict.fromkeys(t for e in events for t in e.fanin)),
            )
        )
    for found in out.values():
        found.sort(key=lambda i: (i.start, i.end, i.line))
    return out


Slot = tuple[LayerKey, str]  # a layer and the warm (or kernel) it stands for there


def _slots(
    m: Manifest, owners: dict[str, list[str]], count: int, nexts: frozenset[str] = frozenset()
) -> list[Slot] | None:
    """The (layer, owner) each instance of one name belongs to, in issue order; None
    when the instances cannot be told apart by layer. ``nexts``: the owners (cross-layer
    warms) that the forward's last layer does not issue."""
    if m.kinds is not None:
        last = len(m.kinds) - 1
        return [
            (i, o)
            for i, kind in enumerate(m.kinds)
            for o in owners.get(kind, [])
            if not (i == last and o in nexts)
        ]
    every = [(kind, o) for kind, os in owners.items() for o in os]
    if len(every) != 1:
        return None
    kind, owner = every[0]
    return [((kind, i), owner) for i in range(count)]


Ranks = dict[str, tuple[int, int]]  # a task -> its place among its kernel's tasks, and their count


def ranks(trace: Trace) -> Ranks:
    """Each Worker View task's place among its kernel's tasks by start, and their count."""
    runs: dict[str, list[str]] = defaultdict(list)
    for task, (kernel, _) in sorted(trace.tasks.items(), key=lambda t: (t[1][1], t[0])):
        runs[kernel].append(task)
    return {task: (k, len(ts)) for ts in runs.values() for k, task in enumerate(ts)}


def _by_edges(
    got: list[Instance], slots: list[Slot], kinds: int | None, edges: Ranks
) -> list[tuple[Slot, Instance]] | None:
    """Each scope at the layer of the anchor task it waited on (its fanin-hint), or None
    when the edges do not say. The anchor's kernel runs once in every layer (``kinds``
    of the forward), or in every layer whose kind issues the hint (``slots``): its
    instances in start order are those layers in order."""
    by_layer = {layer: (layer, owner) for layer, owner in slots}
    out: list[tuple[Slot, Instance]] = []
    for inst in got:
        places = []
        for task in inst.fanin:
            k, count = edges.get(task, (-1, 0))
            if count == kinds and k in by_layer:  # runs in every layer of the forward
                places.append(by_layer[k])
            elif count == len(slots) and k >= 0:  # runs in every layer issuing the hint
                places.append(slots[k])
        if len(set(places)) != 1:
            return None  # no anchor edge, or two that disagree
        out.append((places[0], inst))
    if len({slot for slot, _ in out}) != len(out):
        return None  # two scopes at one layer: the edges do not tell them apart
    return out


def _attribute(
    name: str, got: list[Instance], slots: list[Slot] | None, kinds: int | None, edges: Ranks
) -> tuple[list[tuple[Slot, Instance]], str | None]:
    """Each instance with its slot; and why the rest (those not returned) are unplaced.
    By the anchor task each waited on, else by the name's _<N>, else by order."""
    if slots is None:
        return [], f"several warms share name_hint {name} and the manifest has no forward"
    placed = _by_edges(got, slots, kinds, edges)
    if placed is not None:
        return placed, None
    ns = [i.n for i in got]
    if all(n is not None for n in ns) and len(set(ns)) == len(ns):
        placed = [(slots[i.n], i) for i in got if i.n is not None and i.n < len(slots)]
        if len(placed) == len(got):
            return placed, None
        return placed, (
            f"{plural(len(got) - len(placed), 'scope')} named {name}_<N> with N past the "
            f"{len(slots)} the forward issues"
        )
    if len(got) == len(slots):
        return list(zip(slots, got, strict=True)), None
    return [], (
        f"{plural(len(got), 'scope')} named {name}, the forward issues {len(slots)}, and "
        "their names carry no _<N> to place them by"
    )


def _label(m: Manifest, layer: LayerKey) -> str:
    if isinstance(layer, int) and m.kinds is not None:
        return f"{layer} ({m.kinds[layer]})"
    kind, i = layer if isinstance(layer, tuple) else (layer, 0)
    return f"{kind} #{i}"


Owners = dict[str, dict[str, list[str]]]  # a kernel name -> layer kind -> what it stands for
Placed = dict[str, dict[LayerKey, Instance]]  # a warm (or consumer kernel) -> layer -> scope


def analyse(m: Manifest, traces: Sequence[Trace]) -> Analysis:
    scopes = {
        w.name: Scope(w, consumer=w.consumer_kernels[0] if w.consumer_kernels else None)
        for w in m.warms
    }
    hints: Owners = defaultdict(lambda: defaultdict(list))  # hint -> kind -> its warms
    kernels: Owners = defaultdict(lambda: defaultdict(list))  # consumer kernel -> kind -> [it]
    for w in m.warms:
        hints[w.name_hint][w.layer].append(w.name)
        layers = w.consumer_layers or (w.layer,) * len(w.consumer_kernels)
        for k, kind in zip(w.consumer_kernels, layers, strict=False):
            if k is not None:
                kernels[k][kind] = [k]  # runs in the layers of its stage's kind
    splits: dict[tuple[str, ...], Split] = {}
    unplaced: list[Unattributed] = []
    for trace in traces:
        found = instances(trace)
        placed = _place_warms(m, trace, found, hints, scopes=scopes, unplaced=unplaced)
        consumers, notes = _place_consumers(m, trace.file, found, kernels)
        _late(m, scopes, placed, consumers, notes)
        _splits(m, placed, splits)
    return Analysis(list(scopes.values()), list(splits.values()), unplaced)


def _place_warms(  # noqa: C901 (places each scope by its edges, name or order, else leaves it unattributed)
    m: Manifest,
    trace: Trace,
    found: dict[str, list[Instance]],
    hints: Owners,
    *,
    scopes: dict[str, Scope],
    unplaced: list[Unattributed],
) -> Placed:
    """Each warm's scopes in one trace, by layer; durations, counts and flags into ``scopes``."""
    file, edges = trace.file, ranks(trace)
    placed: Placed = defaultdict(dict)
    nexts = frozenset(w.name for w in m.warms if w.next_layer)
    for hint, owners in hints.items():
        got = found.get(hint, [])
        slots = _slots(m, owners, len(got), nexts)  # never sized by a name's N: that is input
        names = [n for names in owners.values() for n in names]
        for name in names:
            scope = scopes[name]
            if scope.expected is not None:
                mine = None if slots is None else [s for s in slots if s[1] == name]
                scope.expected = None if mine is None else scope.expected + len(mine)
            if not got:
                scope.missing_in.append(file)
        if not got:
            continue
        kinds = None if m.kinds is None else len(m.kinds)
        pairs, why = _attribute(hint, got, slots, kinds, edges)
        for (layer, name), inst in pairs:
            placed[name][layer] = inst
            scope = scopes[name]
            scope.found += 1
            if inst.problem is None:
                scope.durations.append(inst.duration)
            else:
                scope.invalid.append(f"{where(file, inst.line)}: {inst.problem}")
        if why is not None:
            rest = [i for i in got if all(i is not p for _, p in pairs)]
            sizes = {scopes[n].warm.bytes for n in names}
            lone = sizes.pop() if len(rest) == 1 and len(sizes) == 1 else None
            unplaced.append(
                Unattributed(
                    file,
                    hint,
                    tuple(names),
                    tuple(i.duration for i in rest if i.problem is None),
                    len(rest),
                    why,
                    lone,
                )
            )
        if pairs and slots is not None:
            for name in names:
                absent = [
                    _label(m, layer)
                    for layer, owner in slots
                    if owner == name and layer not in placed[name]
                ]
                if absent and (m.kinds is not None or why is None):
                    scopes[name].missing_layers.append((file, absent))
    return placed


def _place_consumers(
    m: Manifest, file: str, found: dict[str, list[Instance]], kernels: Owners
) -> tuple[Placed, dict[str, str]]:
    """Each consumer kernel's instances in one trace by layer, and why a kernel's are not.
    By order only: a consumer's kernel runs in layers without a warm too, so its _<N>
    does not count the forward's warm layers."""
    placed: Placed = {}
    notes: dict[str, str] = {}
    for kernel, owners in kernels.items():
        got = found.get(kernel, [])
        slots = _slots(m, owners, len(got))
        if slots is None or len(slots) != len(got):
            expect = "an unknown number" if slots is None else str(len(slots))
            notes[kernel] = (
                f"{file}: {len(got)} {kernel} kernels, the manifest's consumers "
                f"account for {expect}: not paired by layer"
            )
            continue
        placed[kernel] = {layer: inst for (layer, _), inst in zip(slots, got, strict=True)}
    return placed, notes


def _late(
    m: Manifest,
    scopes: dict[str, Scope],
    placed: Placed,
    consumers: Placed,
    notes: dict[str, str],
) -> None:
    for name, scope in scopes.items():
        kernel = scope.consumer
        if kernel is None or name not in placed:
            continue
        if kernel not in consumers:
            scope.late_note = notes.get(kernel)
            continue
        for layer, inst in placed[name].items():
            # A cross-layer warm's consumer runs in the next layer.
            consumer = consumers[kernel].get(_next(layer) if scope.warm.next_layer else layer)
            if consumer is not None and inst.problem is None and consumer.problem is None:
                scope.judged += 1
                scope.landed += inst.end <= consumer.start
                if inst.end > consumer.start:
                    scope.late.append((_label(m, layer), inst.end - consumer.start))


def _next(layer: LayerKey) -> LayerKey:
    """The layer after ``layer``: the forward's next index, or without a forward the next
    instance of the kind (the next layer is another of the same kind)."""
    if isinstance(layer, int):
        return layer + 1
    kind, i = layer if isinstance(layer, tuple) else (layer, 0)
    return (kind, i + 1)


def _splits(m: Manifest, placed: Placed, splits: dict[tuple[str, ...], Split]) -> None:
    by_kind: dict[str, list[Warm]] = defaultdict(list)
    for w in m.warms:
        by_kind[w.layer].append(w)
    for warms in by_kind.values():
        names = tuple(w.name for w in warms if w.name in placed)
        if len(names) < 2:
            continue
        split = splits.setdefault(
            names, Split(names, sum(w.bytes for w in warms if w.name in names))
        )
        common = set.intersection(*(set(placed[n]) for n in names))
        for layer in common:
            scopes = [placed[n][layer] for n in names]
            if any(s.problem is not None for s in scopes):
                continue  # no figure from an impossible one: not in the aggregate either
            split.of += 1
            if _overlap(scopes) and len({lane for s in scopes for lane in s.lanes}) > 1:
                split.layers += 1
                split.windows.append(max(s.end for s in scopes) - min(s.start for s in scopes))
                split.lanes.update(lane for s in scopes for lane in s.lanes)


def _overlap(scopes: list[Instance]) -> bool:
    """Every scope overlaps another in time: one transfer split across them."""
    ordered = sorted(scopes, key=lambda s: s.start)
    reach = ordered[0].end
    for s in ordered[1:]:
        if s.start >= reach:
            return False
        reach = max(reach, s.end)
    return True


def median(xs: Sequence[float]) -> float | None:
    return statistics.median(xs) if xs else None

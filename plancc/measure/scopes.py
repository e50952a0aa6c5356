"""Per warm scope, from the swimlane traces: how long it ran, the bandwidth it reached,
and the seed's four ways a warm fails to do its job (missing, implausible, split, late).

Events are matched by the manifest's ``name_hint`` (and the consumers' kernels),
grouped into one instance per task (an SPMD task's cores together), and each
instance is attributed to its layer by order: the k-th scope named H in a trace is
the k-th layer of the forward whose kind issues H (``forward.kinds``). When the
counts disagree, or the manifest has no forward and several warms share a hint,
nothing is attributed and the report says so rather than pairing by guess.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field

from plancc.measure.manifest import Manifest, Warm
from plancc.measure.trace import Trace

LayerKey = Hashable


@dataclass(frozen=True)
class Instance:
    start: float
    end: float
    duration: float  # µs: the kernel duration (SPMD: the union of its cores' kernels)
    lanes: tuple[str, ...]


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
    durations: list[float] = field(default_factory=list)
    expected: int | None = 0  # instances the forward issues, over every trace; None: unknown
    missing_in: list[str] = field(default_factory=list)
    unattributed: list[str] = field(default_factory=list)  # why instances have no layer
    consumer: str | None = None  # the first consumer's kernel
    landed: int = 0
    judged: int = 0  # layers where the warm and its consumer were both found
    late_note: str | None = None  # why lateness was not judged


def instances(trace: Trace) -> dict[str, list[Instance]]:
    """Every wanted kernel's task instances in the Worker View, by start time."""
    groups: dict[tuple[str, str], list[tuple[float, float, float, str]]] = defaultdict(list)
    for e in trace.worker_events():
        groups[(e.kernel, e.task)].append((e.start, e.end, e.kernel_us, trace.lane(e.tid)))
    out: dict[str, list[Instance]] = defaultdict(list)
    for (kernel, _), events in groups.items():
        start, end = min(e[0] for e in events), max(e[1] for e in events)
        duration = events[0][2] if len(events) == 1 else end - start
        out[kernel].append(Instance(start, end, duration, tuple(sorted({e[3] for e in events}))))
    for found in out.values():
        found.sort(key=lambda i: (i.start, i.end))
    return out


def _slots(
    m: Manifest, owners: dict[str, list[str]], found: int
) -> list[tuple[LayerKey, str]] | None:
    """The (layer, owner) each instance of one name belongs to, in order; None when
    the instances cannot be told apart by layer."""
    if m.kinds is not None:
        return [(i, o) for i, kind in enumerate(m.kinds) for o in owners.get(kind, [])]
    every = [(kind, o) for kind, os in owners.items() for o in os]
    if len(every) != 1:
        return None
    kind, owner = every[0]
    return [((kind, i), owner) for i in range(found)]


Owners = dict[str, dict[str, list[str]]]  # a kernel name -> layer kind -> what it stands for
Placed = dict[str, dict[LayerKey, Instance]]  # a warm (or consumer kernel) -> layer -> scope


def analyse(m: Manifest, traces: Sequence[Trace]) -> tuple[list[Scope], list[Split]]:
    scopes = {
        w.name: Scope(w, consumer=w.consumer_kernels[0] if w.consumer_kernels else None)
        for w in m.warms
    }
    hints: Owners = defaultdict(lambda: defaultdict(list))  # hint -> kind -> its warms
    kernels: Owners = defaultdict(lambda: defaultdict(list))  # consumer kernel -> kind -> [it]
    for w in m.warms:
        hints[w.name_hint][w.layer].append(w.name)
        for k in w.consumer_kernels:
            if k is not None:
                kernels[k][w.layer] = [k]
    splits: dict[tuple[str, ...], Split] = {}
    for trace in traces:
        found = instances(trace)
        placed = _place_warms(m, trace.file, found, hints, scopes)
        consumers, notes = _place_consumers(m, trace.file, found, kernels)
        _late(scopes, placed, consumers, notes)
        _splits(m, placed, splits)
    return list(scopes.values()), list(splits.values())


def _place_warms(
    m: Manifest,
    file: str,
    found: dict[str, list[Instance]],
    hints: Owners,
    scopes: dict[str, Scope],
) -> Placed:
    """Each warm's scopes in one trace, by layer; durations and counts into ``scopes``."""
    placed: Placed = defaultdict(dict)
    for hint, owners in hints.items():
        got = found.get(hint, [])
        slots = _slots(m, owners, len(got))
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
        if slots is None or len(slots) != len(got):
            why = (
                f"{file}: several warms share name_hint {hint} and the manifest has no forward"
                if slots is None
                else f"{file}: {len(got)} scopes named {hint}, the forward issues {len(slots)}"
            )
            for name in names:
                scopes[name].durations += [i.duration for i in got]
                scopes[name].unattributed.append(why)
            continue
        for (layer, name), inst in zip(slots, got, strict=True):
            placed[name][layer] = inst
            scopes[name].durations.append(inst.duration)
    return placed


def _place_consumers(
    m: Manifest, file: str, found: dict[str, list[Instance]], kernels: Owners
) -> tuple[Placed, dict[str, str]]:
    """Each consumer kernel's instances in one trace by layer, and why a kernel's are not."""
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
    scopes: dict[str, Scope], placed: Placed, consumers: Placed, notes: dict[str, str]
) -> None:
    for name, scope in scopes.items():
        kernel = scope.consumer
        if kernel is None or name not in placed:
            continue
        if kernel not in consumers:
            scope.late_note = notes.get(kernel)
            continue
        for layer, inst in placed[name].items():
            consumer = consumers[kernel].get(layer)
            if consumer is not None:
                scope.judged += 1
                scope.landed += inst.end <= consumer.start


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

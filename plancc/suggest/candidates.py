"""The warms a layer kind could have: the candidates `plancc suggest` evaluates.

Three sources, and "no warm", which every candidate is classed against:

- enumerated: every stage with a `task` as anchor, and every join of two such stages
  that run beside each other, times tensor sets built from
  the static tensors read only by stages that run after the anchor, grouped by
  their consumer's group and ordered by consumer start: each suffix of those
  groups and each single group, unless it holds under 1 % of the bytes of them all
  (a scale vector alone is no warm);
- the layer kind's declared warms;
- the `--candidate`s, exactly as given (any anchor, any order).

Two candidates with one anchor whose tensors differ only by tensors under 1 % of
the set's bytes are one candidate (a scale vector rides along with its matrix):
the first kept wins, given before declared before enumerated.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from plancc import ir
from plancc.facts.timeline import Timeline
from plancc.tables.names import suggest as did_you_mean
from plancc.text import clip
from plancc.usage import UsageError

NONE = "none"  # the origin of "no warm"


Part = tuple[tuple[str, ...], tuple[str, ...]]  # one warm: its anchor stages, its tensors


@dataclass(frozen=True)
class Candidate:
    """One warm, or (the declared warms of a kind, as declared) several."""

    kind: str
    parts: tuple[Part, ...]  # empty for "no warm"
    origin: str  # "given", "declared", "as declared", "enumerated", or NONE

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


def declared(layer: ir.Layer) -> Iterator[Candidate]:
    """Each declared warm alone; and, when there are several, all of them as declared
    (two scopes at one anchor are a split only together)."""
    parts = [
        (tuple(layer.stages[a].name for a in w.anchors), tuple(e.tensor.name for e in w.entries))
        for w in layer.warms
        if w.anchors
    ]
    for part in parts:
        yield Candidate(layer.name, (part,), "declared")
    if len(parts) > 1:
        yield Candidate(layer.name, tuple(parts), "as declared")


def enumerated(plan: ir.Plan, layer: ir.Layer, line: Timeline) -> Iterator[Candidate]:
    """Each stage with a `task`, in step order, and each join of two that run beside each
    other, with each suffix of its later groups (by consumer start) and each single group."""
    tasks = [a for a in line.order if layer.stages[a].task is not None]
    joins = [
        (a, b) for i, a in enumerate(tasks) for b in tasks[i + 1 :] if line.schedule.beside(a, b)
    ]
    for anchors in [*((a,) for a in tasks), *joins]:
        groups = _later_groups(layer, line, anchors)
        sets = [g for i in range(len(groups)) for g in (_flat(groups[i:]), _flat([groups[i]]))]
        names = tuple(layer.stages[a].name for a in anchors)
        every = _bytes(plan, _flat(groups))
        for tensors in sets:  # a set under 1 % of them all only rides along with the rest
            if tensors and 100 * _bytes(plan, tensors) >= every:
                yield one(layer.name, names, tensors, "enumerated")


def _bytes(plan: ir.Plan, tensors: Sequence[str]) -> int:
    return sum(plan.tensors[t].bytes or 0 for t in tensors)


def _flat(groups: Sequence[Sequence[str]]) -> tuple[str, ...]:
    return tuple(t for g in groups for t in g)


def _later_groups(layer: ir.Layer, line: Timeline, anchors: tuple[int, ...]) -> list[list[str]]:
    """The static tensors read only by stages running after every anchor, grouped by
    their consumer's group, the groups by their first consumer's start, each group's
    tensors in consumer order."""

    def after(i: int) -> bool:
        return all(line.runs_before(a, i) for a in anchors)

    by_group: dict[tuple[str, str], list[str]] = {}
    for i in line.order:  # step order: consumers by start, then name
        if not after(i):
            continue
        for t in line.weights[i]:
            readers = line.readers[t.name]
            if readers[0] != i or not all(after(r) for r in readers):
                continue  # read before the anchor, or its consumer is an earlier stage
            by_group.setdefault(layer.stages[i].consumer_group, []).append(t.name)
    return list(by_group.values())


def significant(plan: ir.Plan, tensors: Sequence[str]) -> tuple[str, ...]:
    """The tensors holding at least 1 % of the set's bytes: what tells two sets apart."""
    sizes = [plan.tensors[t].bytes or 0 for t in tensors]
    total = sum(sizes)
    return tuple(t for t, n in zip(tensors, sizes, strict=True) if 100 * n >= total)


def unique(plan: ir.Plan, candidates: Iterator[Candidate]) -> list[Candidate]:
    seen: set[tuple[Part, ...]] = set()
    out = []
    for c in candidates:
        key = tuple((anchor, significant(plan, tensors)) for anchor, tensors in c.parts)
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out

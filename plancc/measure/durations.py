"""Stage durations from a swimlane trace: what `suggest --trace` and `validate --trace`
time the schedule with (docs/suggest.md, "Durations from a trace").

A stage is found by its `kernel`. Its span in one layer is its kernel's events in
that layer instance, the first start to the last end (an SPMD task's cores and a
stage's several tasks together); its duration is the median of its spans over the
layers of its kind, in every swimlane given (a directory's, as `plancc measure` takes
it). A trace is read once, by ``trace.spans``, for every kernel of the plan: of each
task only its first start and last end are kept, as its events stream by.

Layer instances: a kernel runs once (or the same number of times) in every layer
whose kind has a stage of it, so its task instances in start order, cut into as many
equal runs as the forward (`forward`) has such layers, are those layers in order.
Without a forward, each kind counts as one layer. A kernel whose count does not
divide so, or that is absent, tells nothing: its stage keeps its `duration_us` (or
counts in steps), and ``Durations.notes`` says why.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, replace
from types import MappingProxyType

from plancc import ir
from plancc.usage import UsageError


@dataclass(frozen=True)
class Durations:
    by_stage: dict[tuple[str, str], float]  # (layer kind, stage) -> µs
    notes: tuple[str, ...]  # kernels that gave no duration, and why


def _layers(plan: ir.Plan, kinds: set[str]) -> list[str]:
    """The kind of each layer instance that runs a kernel of ``kinds``, in order."""
    if plan.forward is not None:
        return [k for k in plan.forward.kinds if k in kinds]
    return [k for k in plan.layers if k in kinds]


Kernels = dict[str, list[tuple[str, str]]]  # kernel -> the (kind, stage) it runs


def durations(path: str, plan: ir.Plan, kinds: Iterable[str] | None = None) -> Durations:
    """Each stage's median span over its kind's layers, for the stages the trace shows:
    ``path`` is a swimlane, or a directory of them (as `plancc measure --trace` takes it:
    each a dispatch of one card, each a forward of its own). The notes are of ``kinds``'
    stages (None: every kind's). Raises ``InputError`` for a file that is not a
    swimlane, or a directory that holds none."""
    kinds = None if kinds is None else frozenset(kinds)
    stages = _by_kernel(plan)
    if not stages:
        return Durations({}, _timed_notes(plan, {}, kinds))
    from plancc.measure.files import expanded  # noqa: PLC0415 (validate imports this module)
    from plancc.measure.trace import name_pattern  # noqa: PLC0415 (the same)

    pattern = name_pattern(stages)
    spans: dict[tuple[str, str], list[float]] = defaultdict(list)
    notes: list[str] = []
    absent: set[str] = set(stages)
    for file in expanded([path]):
        absent -= _file_spans(file, pattern, plan, stages=stages, spans=spans, notes=notes)
    if kinds is not None:
        absent = {k for k in absent if any(kind in kinds for kind, _ in stages[k])}
    if absent:  # one note for them all: a trace of a few kernels misses most
        names = sorted(absent)
        shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        keep = "its stage keeps its" if len(names) == 1 else "their stages keep their"
        notes.insert(0, f"no event of {shown}: {keep} duration_us")
    from statistics import median  # noqa: PLC0415 (the same)

    by_stage = {k: median(v) for k, v in spans.items()}
    return Durations(by_stage, (*_timed_notes(plan, by_stage, kinds), *notes))


def _file_spans(
    file: str,
    pattern: re.Pattern[str],
    plan: ir.Plan,
    *,
    stages: Kernels,
    spans: dict[tuple[str, str], list[float]],
    notes: list[str],
) -> set[str]:
    """One swimlane's spans into ``spans`` (why a kernel gives none into ``notes``); the
    kernels it has events of."""
    from plancc.measure.trace import spans as read_spans  # noqa: PLC0415 (validate imports this module)

    found = read_spans(file, pattern)
    seen: set[str] = set()
    for kernel, owners in sorted(stages.items()):
        got = found.runs(kernel)
        if not got:
            continue
        seen.add(kernel)
        layers = _layers(plan, {kind for kind, _ in owners})
        if not layers or len(got) % len(layers):
            note = (
                f"{len(got)} {kernel} tasks over {len(layers)} layers that run it: not "
                "placed by layer, its stage keeps its duration_us"
            )
            notes += [] if note in notes else [note]
            continue
        for kind, span in _spans(got, layers):
            for stage in (name for k, name in owners if k == kind):
                spans[(kind, stage)].append(span)
    return seen


def _timed_notes(
    plan: ir.Plan, by_stage: dict[tuple[str, str], float], kinds: Iterable[str] | None = None
) -> tuple[str, ...]:
    """Per layer kind (of ``kinds``, None: every one), how many of its stages the trace
    timed: "csa: timed 2 of 22 stages: proj_a, proj_b"."""
    out = []
    for kind, layer in plan.layers.items():
        if kinds is not None and kind not in kinds:
            continue
        names = [s.name for s in layer.stages if (kind, s.name) in by_stage]
        shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        of = f"{kind}: timed {len(names)} of {len(layer.stages)} stages"
        out.append(f"{of}: {shown}" if names else of)
    return tuple(out)


def _by_kernel(plan: ir.Plan) -> Kernels:
    """Each kernel a stage names: the (layer kind, stage) of each such stage."""
    stages: Kernels = defaultdict(list)
    for kind, layer in plan.layers.items():
        for s in layer.stages:
            if s.kernel is not None:
                stages[s.kernel].append((kind, s.name))
    return stages


def _spans(got: list[tuple[float, float]], layers: list[str]) -> list[tuple[str, float]]:
    """Each layer's kind and the span of its run of ``got`` (each task's start and end:
    equal runs, in start order)."""
    size = len(got) // len(layers)
    runs = [got[j * size : (j + 1) * size] for j in range(len(layers))]
    return [
        (kind, max(end for _, end in run) - min(start for start, _ in run))
        for kind, run in zip(layers, runs, strict=True)
    ]


def apply(plan: ir.Plan, found: Durations) -> tuple[ir.Plan, frozenset[str]]:
    """The plan with the trace's durations on its stages, and the kinds that got any."""
    timed: set[str] = set()
    layers: dict[str, ir.Layer] = {}
    for kind, layer in plan.layers.items():
        stages = tuple(
            s
            if (kind, s.name) not in found.by_stage
            else replace(s, duration_us=found.by_stage[(kind, s.name)])
            for s in layer.stages
        )
        changed = any(a is not b for a, b in zip(stages, layer.stages, strict=True))
        if changed:
            timed.add(kind)
        layers[kind] = replace(layer, stages=stages) if changed else layer
    return replace(plan, layers=MappingProxyType(layers)), frozenset(timed)


def timed(
    path: str, plan: ir.Plan, kinds: Iterable[str] | None = None
) -> tuple[ir.Plan, frozenset[str], tuple[str, ...]]:
    """``apply`` of the trace at ``path``, and its notes (of ``kinds``' stages, None:
    every kind's); a file that is not a swimlane is a usage error."""
    from plancc.measure.errors import InputError  # noqa: PLC0415 (validate imports this module)

    try:
        found = durations(path, plan, kinds)
    except InputError as exc:
        raise UsageError(str(exc)) from None
    return (*apply(plan, found), found.notes)

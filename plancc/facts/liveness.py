"""When warms hold L2, and how much they hold at once: an interval sweep per layer kind.

Time is the layer kind's schedule (``plancc.schedule``): a warm holds L2 from its
anchor's finish through the start of the last stage after the anchor that reads one
of its tensors. For a layer kind without `deps`, a step is a stage's index.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass

from plancc import ir
from plancc.schedule import Schedule


def readers(stages: Sequence[ir.Stage]) -> dict[str, list[int]]:
    """Tensor -> the indices of the stages reading it, in list order: one pass per layer
    kind, so that each warm's interval costs its own tensors' readers, not a scan."""
    out: dict[str, list[int]] = {}
    for s in stages:
        for name in dict.fromkeys(s.reads):
            out.setdefault(name, []).append(s.index)
    return out


def join_gate(schedule: Schedule, gates: Sequence[ir.Stage]) -> ir.Stage | None:
    """Of a warm's anchor stages, the one it waits for: the one that finishes last, of one
    step the slowest (by its `duration_us`), then the first listed. None without one."""
    return max(gates, key=lambda s: (schedule.finish(s.index), s.duration_us or 0), default=None)


def live_interval(
    schedule: Schedule,
    anchors: Sequence[int],
    held: Set[str],
    read_by: Mapping[str, Sequence[int]],
) -> tuple[int, int]:
    """The first and last step a warm holds L2: from its anchors' latest finish through the
    start of the last stage that runs after every anchor and reads one of ``held`` (its
    static tensors), else through the layer kind's last step. A warm without an anchor is
    alive nowhere: ``(1, 0)``. ``read_by`` is ``readers(stages)``."""
    if not anchors:
        return (1, 0)
    start = schedule.start
    later = [
        start[r]
        for t in held
        for r in read_by.get(t, ())
        if all(schedule.runs_before(a, r) for a in anchors)
    ]
    return (
        max(schedule.finish(a) for a in anchors),
        max(later, default=schedule.steps - 1),
    )


def step_stage(layer: ir.Layer, step: int) -> int:
    """The stage that names a step in a message: the one of that step whose name comes
    first (for a layer kind without `deps`, the step's only stage). Names, not the list
    order, so that no message depends on which valid order the stages are listed in."""
    return min(layer.schedule.at_step[step], key=lambda i: layer.stages[i].name)


@dataclass(frozen=True)
class Peak:
    bytes: int
    stage: int | None  # the stage naming the first step at which the peak is reached
    warms: tuple[ir.Warm, ...]  # the warms alive then, in plan order


def layer_peak(layer: ir.Layer, incoming: Sequence[ir.Warm] = ()) -> Peak:
    """The largest sum of distinct warmed regions' bytes held during any one step.

    Warms hold L2 over an interval of steps (``ir.Warm.live``); a sweep over those
    interval endpoints finds the peak in O(n log n). ``incoming``: the cross-layer warms
    of the layer before, with their live steps in this layer kind (from its entry to
    their last consumer here: ``plancc.facts.crossing``), held beside its own. A region
    is a tensor, or a prefix's rows of it: two warms holding the same count once.
    """
    warms = (*incoming, *layer.warms)
    events: list[tuple[int, int, int]] = []  # (step, +1 start / -1 end after, warm index)
    for i, warm in enumerate(warms):
        start, end = warm.live
        if start <= end:
            events += [(start, 1, i), (end + 1, -1, i)]
    events.sort()  # by step, ends (-1) before starts at the same step, then plan order
    # The cross-layer warms of this layer kind warm the next layer's copies: other regions.
    held: dict[tuple[bool, tuple[str, int, int]], int] = {}  # region -> alive warms holding it
    total = 0
    best_bytes, best_step = 0, None
    for step, kind, i in events:
        warm = warms[i]
        outgoing = warm.next_layer and i >= len(incoming)
        for entry in warm.entries:
            size = entry.bytes
            key = (outgoing, entry.key)
            if kind > 0:
                held[key] = held.get(key, 0) + 1
                total += size if held[key] == 1 else 0
            else:
                held[key] -= 1
                total -= size if held[key] == 0 else 0
        if kind > 0 and total > best_bytes:
            best_bytes, best_step = total, step
    if best_step is None:
        return Peak(0, None, ())
    # Every warm alive then, also those adding no new bytes (a tensor already held).
    alive = tuple(w for w in warms if w.alive_at(best_step))
    return Peak(best_bytes, step_stage(layer, best_step), alive)

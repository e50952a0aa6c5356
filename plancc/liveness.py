"""When warms hold L2, and how much they hold at once: an interval sweep per layer kind."""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass

from plancc import ir


def last_reads(stages: Sequence[ir.Stage]) -> dict[str, int]:
    """Tensor -> the index of the last stage reading it: one pass per layer kind, so
    that each warm's interval costs its own tensors, not a scan of the stages."""
    out: dict[str, int] = {}
    for s in stages:
        out.update(dict.fromkeys(s.reads, s.index))
    return out


def live_interval(
    stages: Sequence[ir.Stage], anchor: int | None, held: Set[str], last_read: Mapping[str, int]
) -> tuple[int, int]:
    """The first and last stage index a warm holds L2: from the stage after its anchor
    through the last later stage reading any of ``held`` (its static tensors), else the
    layer's end. A warm without an anchor is alive nowhere: ``(1, 0)``. ``last_read``
    is ``last_reads(stages)``."""
    if anchor is None:
        return (1, 0)
    later = [last_read[t] for t in held if last_read.get(t, -1) > anchor]
    return (anchor + 1, max(later, default=len(stages) - 1))


@dataclass(frozen=True)
class Peak:
    bytes: int
    stage: int | None  # the first stage at which the peak is reached
    warms: tuple[ir.Warm, ...]  # the warms alive then, in plan order


def layer_peak(layer: ir.Layer) -> Peak:
    """The largest sum of distinct warmed tensors' bytes held during any one stage.

    Warms hold L2 from the stage after their anchor through their last consumer;
    a sweep over those interval endpoints finds the peak in O(n log n).
    """
    events: list[tuple[int, int, int]] = []  # (stage, +1 start / -1 end after, warm index)
    for i, warm in enumerate(layer.warms):
        start, end = warm.live
        if start <= end:
            events += [(start, 1, i), (end + 1, -1, i)]
    events.sort()  # by stage, ends (-1) before starts at the same stage, then plan order
    held: dict[str, int] = {}  # tensor -> number of alive warms holding it
    total = 0
    best = Peak(0, None, ())
    for stage, kind, i in events:
        warm = layer.warms[i]
        for entry in warm.entries:
            size = entry.tensor.bytes or 0
            name = entry.tensor.name
            if kind > 0:
                held[name] = held.get(name, 0) + 1
                total += size if held[name] == 1 else 0
            else:
                held[name] -= 1
                total -= size if held[name] == 0 else 0
        if kind > 0 and total > best.bytes:
            best = Peak(total, stage, ())
    if best.stage is None:
        return best
    # Every warm alive then, also those adding no new bytes (a tensor already held).
    return Peak(best.bytes, best.stage, tuple(w for w in layer.warms if w.alive_at(best.stage)))


def plan_peak(plan: ir.Plan) -> int:
    """The peak over the forward when the plan has one, else over every layer kind.

    A kind with a stand-in stage (incomplete) is left out, as PC030 and PC032
    leave it out: its liveness is a guess, and the summary must not report a
    peak the budget rules did not judge.
    """
    kinds = set(plan.forward.kinds) if plan.forward is not None else set(plan.layers)
    layers = (plan.layers[k] for k in kinds if k in plan.layers)
    return max((layer_peak(layer).bytes for layer in layers if layer.complete), default=0)

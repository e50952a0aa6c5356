"""Guarded warms at the values a check takes: which warms are issued there, and at which
values the others are judged instead.

A check takes every param at one value (its default, an end of its range, or its `--set`
value). A warm whose guard does not admit that value is not issued there, so the rules
do not see it; it is judged instead at the nearest value its guards admit (the range's
end clipped to the guard), with every other param as the check has it: ``clipped`` says
at which values, and ``plancc.api`` checks the plan there for those warms alone. A param
fixed by `--set` is not clipped: a warm its guard skips there is not judged in that run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType

from plancc import ir

Values = tuple[tuple[str, int], ...]  # (param, value) pairs, in plan order


@dataclass(frozen=True)
class Admitted:
    plan: ir.Plan  # the plan as this check judges it: without the warms not issued
    clipped: Mapping[Values, frozenset[str]]  # values -> the warms judged there instead


def admitted(plan: ir.Plan, fixed: Mapping[str, int] = MappingProxyType({})) -> Admitted:
    """``plan`` without the warms its param values do not issue, and where to judge
    those. ``fixed``: the params `--set` fixes."""
    params = {p.name: p for p in plan.params}
    values = {p.name: p.value for p in plan.params}
    out: dict[Values, set[str]] = {}
    skipped: set[str] = set()
    for warm in plan.warms:
        if warm.admits(values):
            continue
        skipped.add(warm.name)
        clip = _clip(warm, params, fixed)
        if clip is not None:
            out.setdefault(clip, set()).add(warm.name)
    if not skipped:
        return Admitted(plan, MappingProxyType({}))
    layers = {
        name: replace(layer, warms=tuple(w for w in layer.warms if w.name not in skipped))
        if any(w.name in skipped for w in layer.warms)
        else layer
        for name, layer in plan.layers.items()
    }
    gone = tuple(w for w in plan.warms if w.name in skipped)
    view = replace(plan, layers=MappingProxyType(layers), skipped=gone)
    return Admitted(view, MappingProxyType({k: frozenset(v) for k, v in out.items()}))


def _clip(warm: ir.Warm, params: Mapping[str, ir.Param], fixed: Mapping[str, int]) -> Values | None:
    """The values nearest the check's at which every guard of ``warm`` holds: each
    guarded param's value clipped into the interval its guards admit. None when a
    guard admits no value of the range (PC043) or skips a value `--set` fixes."""
    clipped: dict[str, int] = {}
    for name in dict.fromkeys(g.param for g in warm.guards):
        param = params.get(name)
        if param is None:
            continue
        lo, hi = param.lo, param.hi
        for g in warm.guards:
            if g.param == name:
                span = g.admitted(lo, hi)
                if span is None:
                    return None
                lo, hi = span
        if lo <= param.value <= hi:
            continue
        if name in fixed:
            return None
        clipped[name] = min(max(param.value, lo), hi)
    order = list(params)
    return tuple(sorted(clipped.items(), key=lambda kv: order.index(kv[0])))

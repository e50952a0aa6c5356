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

from collections.abc import Container, Mapping, Sequence
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
    """The values nearest the check's at which every guard of ``warm`` holds, those of the
    params it clips alone; None as ``clip``."""
    values = {p.name: p.value for p in params.values()}
    out = clip([(g.param, g.op, g.bound) for g in warm.guards], params, values, fixed)
    return None if out is None else tuple((k, v) for k, v in out.items() if v != values[k])


def clip(
    guards: Sequence[tuple[str, str, int]],
    params: Mapping[str, ir.Param],
    values: Mapping[str, int],
    fixed: Container[str],
) -> dict[str, int] | None:
    """``values`` (every param's, in plan order) with each param that ``guards`` (param,
    comparison, bound) compare clipped into the interval they admit of its range: the
    values nearest them at which every guard holds. None when the guards admit no value of
    the range (PC043) or skip the value of a param ``fixed`` (`--set`) holds."""
    out = dict(values)
    for name in dict.fromkeys(g[0] for g in guards):
        param = params.get(name)
        if param is None:
            continue
        lo, hi = param.lo, param.hi
        for _, op, bound in (g for g in guards if g[0] == name):
            if op in ("<=", "<"):
                hi = min(hi, bound if op == "<=" else bound - 1)
            else:
                lo = max(lo, bound if op == ">=" else bound + 1)
        if lo > hi:
            return None
        if lo <= out[name] <= hi:
            continue
        if name in fixed:
            return None
        out[name] = min(max(out[name], lo), hi)
    return out

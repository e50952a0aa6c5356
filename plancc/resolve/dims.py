"""Dims: each dim's expression evaluated in dependency order, cycles reported once."""

from __future__ import annotations

import contextlib

from plancc import codes, ir
from plancc import expr as ex
from plancc.graph import shortest_cycle, strongly_connected
from plancc.resolve.context import Context, Unresolved
from plancc.text import clip


def resolve_dims(ctx: Context) -> tuple[ir.Dim, ...]:
    uses = dim_uses(ctx)
    for component in strongly_connected(ctx.plan.dims, uses):
        name = component[0]
        if len(component) > 1 or name in uses[name]:
            report_cycle(ctx, component, uses)
            continue
        source = ctx.plan.dims[name]
        if source == "dynamic":
            ctx.dim_values[name] = None
            continue
        # Every dim it uses comes in an earlier component: resolved, or broken.
        with contextlib.suppress(Unresolved):
            _, ctx.dim_values[name] = ctx.evaluate(source, ctx.v.at("dims", name), f"dim '{name}'")
    out = []
    for name in ctx.plan.dims:
        pos = ctx.v.key_at("dims", name)
        ctx.name_check(name, pos, "dim", reserved=True)
        if name in ctx.dim_values:
            out.append(ir.Dim(name, ctx.dim_values[name]))
    return tuple(out)


def dim_uses(ctx: Context) -> dict[str, list[str]]:
    """The dims each dim's expression uses, in the order it names them, each once.
    A dim that is dynamic or does not parse uses none (evaluating it reports why)."""
    uses: dict[str, list[str]] = {}
    for name, source in ctx.plan.dims.items():
        try:
            parsed = ex.parse(source) if source != "dynamic" else None
        except ex.ExprError:
            parsed = None
        used = ex.names(parsed) if parsed is not None else ()
        uses[name] = list(dict.fromkeys(n for n in used if n in ctx.plan.dims))
    return uses


def report_cycle(ctx: Context, component: list[str], uses: dict[str, list[str]]) -> None:
    """One PC012 for a component of dims that use each other: the shortest cycle
    from its first dim in plan order back to it. The component's names that are
    not dims are still checked, as they would be in an expression that resolves."""
    first = min(component, key=ctx.plan_order.__getitem__)
    cycle = shortest_cycle(first, set(component), uses)
    ctx.report(
        ctx.v.at("dims", first),
        codes.BAD_EXPRESSION,
        f"dims form a cycle: {_cycle_text(cycle)}",
    )
    for name in sorted(component, key=ctx.plan_order.__getitem__):
        pos = ctx.v.at("dims", name)
        for used in ex.names(ex.parse(ctx.plan.dims[name])):
            if used not in ctx.plan.dims:
                with contextlib.suppress(Unresolved):
                    ctx.lookup(used, pos)


_CYCLE_SHOWN = 8  # a longer cycle is named by its first few dims and its length


def _cycle_text(cycle: list[str]) -> str:
    """``A -> B -> A``; for a cycle through hundreds of dims, a bounded part of it."""
    names = [clip(name) for name in cycle]
    if len(names) > _CYCLE_SHOWN:
        names = [*names[:3], f"… ({len(names)} dims)"]
    return " -> ".join([*names, clip(cycle[0])])

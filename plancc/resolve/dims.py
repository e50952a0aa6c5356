"""Dims: each dim's expression evaluated in dependency order, cycles reported once."""

from __future__ import annotations

import contextlib

from plancc import codes, ir
from plancc import expr as ex
from plancc.resolve.context import Context, Unresolved
from plancc.resolve.graph import shortest_cycle, strongly_connected
from plancc.text import clip


def resolve_dims(ctx: Context) -> tuple[ir.Dim, ...]:
    """Dims and params, in one dependency order: a dim may use a param (a `streams` or a
    shape over the context length), a param's default and range use dims."""
    uses = dim_uses(ctx)
    for component in strongly_connected([*ctx.plan.dims, *ctx.plan.params], uses):
        name = component[0]
        if len(component) > 1 or name in uses[name]:
            report_cycle(ctx, component, uses)
            continue
        if name not in ctx.plan.dims:
            _resolve_param(ctx, name)
            continue
        ctx.param_deps[name] = ctx.depends_on(uses[name])
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
    for name in ctx.plan.params:
        ctx.name_check(name, ctx.v.key_at("params", name), "param", reserved=True)
    return tuple(out)


def _param_sources(ctx: Context, name: str) -> list[tuple[int | str, tuple[str | int, ...]]]:
    """A param's expressions: its default, then its range's ends, with their paths."""
    p = ctx.plan.params[name]
    if isinstance(p, int):
        return [(p, ("params", name))]
    out: list[tuple[int | str, tuple[str | int, ...]]] = [(p.default, ("params", name, "default"))]
    out += [(end, ("params", name, "range", i)) for i, end in enumerate(p.range or ())]
    return out


def _resolve_param(ctx: Context, name: str) -> None:
    """The param's default and range, and the value this check takes: the default, an
    end of the range, or its `--set` value. A default or range that names another param
    is PC012: a param's range is fixed before any param takes a value."""
    values: list[int] = []
    for source, path in _param_sources(ctx, name):
        pos = ctx.v.at(*path)
        try:
            named = list(ex.names(ex.parse(source)))
        except ex.ExprError:
            named = []
        other = next((n for n in named if n in ctx.plan.params), None)
        if other is not None:
            ctx.report(
                pos,
                codes.BAD_EXPRESSION,
                f"param '{name}' uses param '{other}'; a param's default and range are "
                "over dims and config keys",
            )
            return
        try:
            _, value = ctx.evaluate(source, pos, f"param '{name}'")
        except Unresolved:
            return
        if value is None:
            ctx.report(pos, codes.BAD_EXPRESSION, f"param '{name}' uses a dynamic dim")
            return
        values.append(value)
    default, lo, hi = values[0], values[1] if len(values) > 1 else values[0], values[-1]
    if not lo <= default <= hi:
        ctx.report(
            ctx.v.at("params", name),
            codes.BAD_EXPRESSION,
            f"param '{name}' has default {default:,} outside its range [{lo:,}, {hi:,}]",
            "LO ≤ default ≤ HI",
        )
        return
    value = ctx.overrides.get(name, {"default": default, "lo": lo, "hi": hi}[ctx.point])
    ctx.dim_values[name] = value
    ctx.param_deps[name] = frozenset({name})
    raw = ctx.plan.params[name]
    variable = None if isinstance(raw, int) else raw.source  # the model code's name for it
    if variable is not None and not ctx.name_check(
        variable.lstrip("_") or variable,
        ctx.v.at("params", name, "source"),
        "param source",
        reserved=True,
    ):
        variable = None
    ctx.params.append(ir.Param(name, default, lo, hi, value, variable or ""))


def dim_uses(ctx: Context) -> dict[str, list[str]]:
    """The dims and params each dim's expression (and each param's default and range)
    uses, in the order it names them, each once. A dim that is dynamic or does not
    parse uses none (evaluating it reports why)."""
    defined = ctx.plan.dims.keys() | ctx.plan.params.keys()
    uses: dict[str, list[str]] = {}
    sources = [(n, [s]) for n, s in ctx.plan.dims.items()]
    sources += [(n, [s for s, _ in _param_sources(ctx, n)]) for n in ctx.plan.params]
    for name, texts in sources:
        used: list[str] = []
        for source in texts:
            try:
                parsed = ex.parse(source) if source != "dynamic" else None
            except ex.ExprError:
                parsed = None
            used += ex.names(parsed) if parsed is not None else ()
        uses[name] = list(dict.fromkeys(n for n in used if n in defined))
    return uses


def report_cycle(ctx: Context, component: list[str], uses: dict[str, list[str]]) -> None:
    """One PC012 for a component of dims (and params) that use each other: the shortest
    cycle from its first name in plan order back to it. The component's names that are
    not dims are still checked, as they would be in an expression that resolves."""
    first = min(component, key=ctx.plan_order.__getitem__)
    cycle = shortest_cycle(first, set(component), uses)
    kinds = {"dims" if n in ctx.plan.dims else "params" for n in component}
    ctx.report(
        ctx.v.at("dims" if first in ctx.plan.dims else "params", first),
        codes.BAD_EXPRESSION,
        f"{' and '.join(sorted(kinds))} form a cycle: {_cycle_text(cycle)}",
    )
    defined = ctx.plan.dims.keys() | ctx.plan.params.keys()
    for name in sorted(component, key=ctx.plan_order.__getitem__):
        if name in ctx.plan.dims:
            pos, texts = ctx.v.at("dims", name), [ctx.plan.dims[name]]
        else:
            pos, texts = ctx.v.at("params", name), [t for t, _ in _param_sources(ctx, name)]
        for text in texts:
            for used in ex.names(ex.parse(text)):
                if used not in defined:
                    with contextlib.suppress(Unresolved):
                        ctx.lookup(used, pos)


_CYCLE_SHOWN = 8  # a longer cycle is named by its first few dims and its length


def _cycle_text(cycle: list[str]) -> str:
    """``A -> B -> A``; for a cycle through hundreds of dims, a bounded part of it."""
    names = [clip(name) for name in cycle]
    if len(names) > _CYCLE_SHOWN:
        names = [*names[:3], f"… ({len(names)} dims)"]
    return " -> ".join([*names, clip(cycle[0])])

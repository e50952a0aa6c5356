"""The one namespace that dims, used config keys, params, tensors and warms share (PC011)."""

from __future__ import annotations

from plancc import codes, ir
from plancc.diagnostics import Pos
from plancc.resolve.context import Context


def check_namespace(
    ctx: Context, tensors: dict[str, ir.Tensor], layers: dict[str, ir.Layer]
) -> None:
    """Dims, used config keys, params, tensors and warms share one namespace (PC011)."""
    # The names defined twice first, without positions: a plan of 10,000 warms has
    # 20,000 names, and only those clashing are placed and sorted.
    seen = set(ctx.config_used)
    clash: set[str] = set()
    warms = [w.name for layer in ctx.plan.layers.values() for w in layer.warms]
    for name in (*ctx.plan.dims, *ctx.plan.params, *ctx.plan.tensors, *warms):
        if name in seen:
            clash.add(name)
        seen.add(name)
    if not clash:
        return
    defined: list[tuple[Pos, str, str]] = []
    defined += [(ctx.v.key_at("dims", n), n, "dim") for n in ctx.plan.dims if n in clash]
    defined += [(ctx.v.key_at("params", n), n, "param") for n in ctx.plan.params if n in clash]
    defined += [(ctx.v.key_at("tensors", n), n, "tensor") for n in ctx.plan.tensors if n in clash]
    for kind, layer in ctx.plan.layers.items():
        defined += [
            (ctx.v.at("layers", kind, "warms", i, "name"), w.name, "warm")
            for i, w in enumerate(layer.warms)
            if w.name in clash
        ]
    owner: dict[str, tuple[Pos, str]] = {n: (Pos(0, 0), "config key") for n in ctx.config_used}
    for pos, name, what in sorted(defined, key=lambda d: (d[0].line, d[0].col)):
        if name in owner:
            first_pos, first_what = owner[name]
            where = f" (at {first_pos.line}:{first_pos.col})" if first_pos.line else ""
            ctx.report(
                pos,
                codes.DUPLICATE_NAME,
                f"{what} '{name}' has the same name as {first_what} '{name}'{where}",
                "dims, config keys, params, tensors and warms share one namespace"
                if "param" in (what, first_what)
                else "dims, config keys, tensors and warms share one namespace",
            )
        else:
            owner[name] = (pos, what)

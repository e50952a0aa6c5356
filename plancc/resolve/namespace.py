"""The one namespace that dims, used config keys, params, tensors and warms share (PC011)."""

from __future__ import annotations

from plancc import codes, ir
from plancc import expr as ex
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


def anchor_params(layer: ir.Layer, warm: ir.Warm) -> tuple[str, ...]:
    """The generated function's TaskId parameters: `after` for one anchor; for a join, each
    anchor's `task` without its leading underscores, in `after`'s order."""
    if not warm.join:
        return ("after",)
    return tuple((layer.stages[a].task or "").lstrip("_") for a in warm.anchors)


def check_function_names(ctx: Context, layers: dict[str, ir.Layer]) -> None:
    """The names a warm's generated function binds are distinct (PC011): its tensors,
    their slabs (``<tensor>_slab``) and flat views, the stacks' indices (one parameter
    for the stacks sharing an index, of one type), the anchors' TaskIds and the module
    constants it reads. Only stacked tensors and joins bring names a plan chooses
    beyond the shared namespace: a plan without them never fails here."""
    for layer in layers.values():
        for warm in layer.warms:
            stacked = list(
                {e.tensor.name: e.tensor for e in warm.entries if e.tensor.stacked}.values()
            )
            if not stacked and not warm.join and not warm.guards and not _ranges(warm):
                continue
            problem = _clash(layer, warm, stacked)
            if problem is not None:
                ctx.report(warm.name_pos, codes.DUPLICATE_NAME, *problem)


def _ranges(warm: ir.Warm) -> bool:
    return any(e.rows is not None for e in warm.entries)


def entry_vars(warm: ir.Warm) -> list[str]:
    """The name each entry's variables start with (``<var>_flat``, ``<var>_rows``): its
    tensor's, or for a tensor's second range and on, ``<tensor>_<k>``."""
    seen: dict[str, int] = {}
    out = []
    for e in warm.entries:
        k = seen.get(e.tensor.name, 0)
        seen[e.tensor.name] = k + 1
        out.append(e.tensor.name if k == 0 else f"{e.tensor.name}_{k}")
    return out


def last_layer_condition(warm: ir.Warm) -> str:
    """The `if` a cross-layer warm's call stands under, so that the forward's last layer
    issues none: its first stack's index below the stack's layers less one, else the
    model's own layer loop's."""
    first = next((e.tensor.stacked for e in warm.entries if e.tensor.stacked), None)
    if first is None:
        return "layer_idx < NUM_LAYERS - 1"
    return f"{first.index} < {ex.factor(first.layers_source)} - 1"


def _variables(warm: ir.Warm) -> list[tuple[str, str]]:
    """The tensor parameters and the variables the body binds of them (a slab or a
    prefix's rows, a second range's flat view), each with how a message names it."""
    wanted = [(n, f"tensor '{n}'") for n in dict.fromkeys(e.tensor.name for e in warm.entries)]
    for e, var in zip(warm.entries, entry_vars(warm), strict=True):
        t = e.tensor.name
        if e.rows is not None:
            wanted.append((f"{var}_rows", f"the rows '{var}_rows' of tensor '{t}'"))
        elif e.tensor.stacked is not None:
            wanted.append((f"{var}_slab", f"the slab '{var}_slab' of tensor '{t}'"))
        if var != t:
            wanted.append((f"{var}_flat", f"the flat view '{var}_flat' of tensor '{t}'"))
    return wanted


def _clash(layer: ir.Layer, warm: ir.Warm, stacked: list[ir.Tensor]) -> tuple[str, str] | None:
    """What two names of the warm's function clash: the message and its hint."""
    bound: dict[str, str] = {"pl": "the module name 'pl'", "warm_ctx": "the context 'warm_ctx'"}
    constants = {n for e in warm.entries for n in e.tensor.names}
    constants.update(n for t in stacked if t.stacked for n in t.stacked.names)
    constants.update(n for e in warm.entries if e.rows for n in e.rows.names)
    bound.update((n, f"the module constant '{n}'") for n in sorted(constants))
    wanted = _variables(warm)
    indices: dict[str, ir.Tensor] = {}
    for t in stacked:
        assert t.stacked is not None
        index = t.stacked.index_param
        first = indices.setdefault(index, t)
        if first is not t:  # one parameter for every stack with this index
            assert first.stacked is not None
            if first.stacked.index_type != t.stacked.index_type:
                return (
                    f"warm '{warm.name}': tensors '{first.name}' and '{t.name}' type their "
                    f"index '{index}' differently ({first.stacked.index_type}, "
                    f"{t.stacked.index_type})",
                    "one variable of the model code has one type: give both one index_type",
                )
            continue
        wanted.append((index, f"the index '{index}' of tensor '{t.name}'"))
    for g in {g.variable: g for g in warm.guards}.values():
        wanted.append((g.variable, f"the run-time value '{g.variable}' of param '{g.param}'"))
    if warm.anchors and all(layer.stages[a].task for a in warm.anchors):  # resolved anchors
        params = zip(warm.anchors, anchor_params(layer, warm), strict=True)
        wanted += [(n, f"the TaskId '{n}' of anchor '{layer.stages[a].name}'") for a, n in params]
    for name, what in wanted:
        other = bound.setdefault(name, what)
        if other != what:
            return (
                f"warm '{warm.name}': its generated function would name both {other} and {what}",
                "rename one of them",
            )
    return None

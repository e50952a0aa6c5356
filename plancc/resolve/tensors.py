"""Tensors: dtype, shape and flat view of each; references to them by name."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from plancc import codes, ir
from plancc import expr as ex
from plancc.diagnostics import Pos
from plancc.load import PathT
from plancc.resolve.context import Context, Exprs, Unresolved, too_many
from plancc.schema import plan as model
from plancc.tables.dtypes import DTYPES
from plancc.tables.names import dtype_hint
from plancc.text import clip


def resolve_tensors(ctx: Context) -> dict[str, ir.Tensor]:
    out: dict[str, ir.Tensor] = {}
    for name, t in ctx.plan.tensors.items():
        locate = partial(ctx.v.key_at, "tensors", name)
        ctx.name_check_at(name, locate, "tensor", reserved=True)
        dtype = DTYPES.get(t.dtype)
        if dtype is None:
            ctx.report(
                ctx.v.at("tensors", name, "dtype"),
                codes.UNKNOWN_DTYPE,
                f"unknown dtype '{clip(t.dtype)}' for tensor '{name}'",
                dtype_hint(t.dtype),
            )
        shape = ctx.exprs(t.shape, ("tensors", name, "shape"), f"shape of '{name}'")
        try:
            flat = flat_view(ctx, t.flat, ("tensors", name, "flat"), name)
        except Unresolved:
            shape = None
        if dtype is None or shape is None:
            ctx.broken_tensors.add(name)
            continue
        texts, values, names, _ = shape
        # Its bytes too: every size plancc writes (manifest, docstrings) is an int64.
        width = max(1, dtype.bits // 8)
        if too_many(values) or too_many((*values, width)):
            what = "elements" if too_many(values) else "bytes"
            ctx.report(
                ctx.v.at("tensors", name, "shape"),
                codes.BAD_EXPRESSION,
                f"shape of '{name}' has more than 2**63 - 1 {what}",
            )
            ctx.broken_tensors.add(name)
            continue
        if flat is None and all(v is not None for v in values):
            flat = default_flat(shape, locate)
        stacked = None
        if t.stacked is not None:
            try:
                stacked = _stacked(ctx, name, t.stacked, values, width)
            except Unresolved:
                ctx.broken_tensors.add(name)
                continue
        params = ctx.depends_on(names | (stacked.names if stacked else frozenset()))
        if flat is not None and flat.declared:
            params |= flat.params
        out[name] = ir.Tensor(name, dtype, texts, values, names, flat, stacked, params)
    return out


def _stacked(
    ctx: Context,
    tensor: str,
    stacked: model.Stacked,
    values: tuple[int | None, ...],
    width: int,
) -> ir.Stacked:
    """The stack's layer count (a static value: the slice's offset is ``index * rows``;
    the stack, ``values`` a slab's shape of elements ``width`` bytes wide, within 64 bits,
    in elements and in bytes) and its index, a parameter of the generated function
    (PC013 for a name it cannot be)."""
    path = ("tensors", tensor, "stacked")
    parsed, value = ctx.evaluate(
        stacked.layers, ctx.v.at(*path, "layers"), f"stacked layers of '{tensor}'"
    )
    if value is None:
        ctx.report(
            ctx.v.at(*path, "layers"),
            codes.BAD_EXPRESSION,
            f"stacked layers of '{tensor}' is dynamic; the stack's layer count must be static",
        )
        raise Unresolved
    if too_many((value, *values, width)):  # its rows, `[layers * rows, ...]`, too
        what = "elements" if too_many((value, *values)) else "bytes"
        ctx.report(
            ctx.v.at(*path, "layers"),
            codes.BAD_EXPRESSION,
            f"the stack of '{tensor}' has more than 2**63 - 1 {what} "
            f"({clip(ex.render(parsed))} layers of its shape)",
        )
        raise Unresolved
    ok = ctx.name_check(
        stacked.index.lstrip("_") or stacked.index,
        ctx.v.at(*path, "index"),
        "stacked index",
        reserved=True,
    )
    if not ok:
        raise Unresolved
    names = frozenset(ex.names(parsed))
    return ir.Stacked(value, ex.render(parsed), names, stacked.index, stacked.index_type)


def flat_view(
    ctx: Context, sources: list[int | str] | None, path: PathT, tensor: str
) -> ir.FlatView | None:
    """The declared view (None when absent); Unresolved when it does not resolve."""
    if sources is None:
        return None
    got = ctx.exprs(sources, path, f"flat view of '{tensor}'")
    if got is None:
        raise Unresolved
    texts, values, names, _ = got
    if too_many(values):
        ctx.report(
            ctx.v.at(*path),
            codes.BAD_EXPRESSION,
            f"flat view of '{tensor}' has more than 2**63 - 1 elements",
        )
        raise Unresolved
    locate = partial(ctx.v.at, *path)
    return ir.FlatView(texts, values, names, locate, declared=True, params=ctx.depends_on(names))


def default_flat(shape: Exprs, locate: ir.Locate) -> ir.FlatView:
    """The product of the shape's entries (``Context.exprs``), each compound entry in
    parentheses."""
    texts, values, names, parsed = shape
    text = " * ".join(
        f"({t})" if ex.is_compound(e) else t for t, e in zip(texts, parsed, strict=True)
    )
    total = 1
    for value in values:
        total *= value or 1
    return ir.FlatView((text,), (total,), names, locate, declared=False)


def tensor_ref(
    ctx: Context, name: str, pos: Callable[[], Pos], tensors: dict[str, ir.Tensor]
) -> ir.Tensor | None:
    """The tensor ``name`` refers to; None after reporting it unknown at ``pos()``."""
    if name in tensors:
        return tensors[name]
    if not unknown_tensor(ctx, name):
        return None
    ctx.unknown(pos(), f"unknown tensor '{clip(name)}'", name, ctx.plan.tensors)
    return None


def unknown_tensor(ctx: Context, name: str) -> bool:
    """Whether ``name`` names no tensor of the plan: not one whose definition an error
    dropped (that error is reported; a reference to it names the right tensor)."""
    broken = ctx.v.broken
    return not (name in broken.tensors or name in ctx.broken_tensors or broken.all_tensors)

"""A warm's newer forms: a prefix's rows (`{tensor, rows: [LO, HI]}`) and its run-time
guards (`guard: PARAM <= EXPR`). `next_layer` needs no resolving: its meaning is the
forward's (``plancc.facts.crossing``)."""

from __future__ import annotations

import re
from dataclasses import replace
from functools import partial

from plancc import codes, ir
from plancc import expr as ex
from plancc.diagnostics import Pos
from plancc.load import PathT
from plancc.resolve.context import Context, Unresolved
from plancc.tables.names import identifier_problem
from plancc.text import clip

# One comparison: a bound with another (`CTX <= 2272 and BATCH <= 8`, `1 <= CTX <= 64`)
# is no guard; several conditions are a list (PyPTO rejects `and` in an `if`).
_GUARD = re.compile(
    r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(<=|>=|<|>)\s*"
    r"((?!=)(?!.*(?:[<>=!]|\b(?:and|or|not)\b))\S.*?)\s*$"
)


def _end(
    ctx: Context, source: int | str, path: PathT, what: str, fixed: str = "a warm's rows are"
) -> tuple[str, int, frozenset[str]]:
    """One end of a range (or a guard's bound): 0, or a static dim expression over dims
    and config keys. ``fixed``: what is fixed at build time, as the message says it."""
    if source == 0 or (isinstance(source, str) and source.strip() == "0"):
        return "0", 0, frozenset()
    pos = ctx.v.at(*path)
    parsed, value = ctx.evaluate(source, pos, what)
    names = frozenset(ex.names(parsed))
    params = ctx.depends_on(names)
    if value is None or params:
        why = (
            "uses a dynamic dim"
            if value is None
            else f"uses param {', '.join(repr(p) for p in sorted(params))}"
        )
        ctx.report(pos, codes.BAD_EXPRESSION, f"{what} {why}: {fixed} fixed at build time")
        raise Unresolved
    return ex.render(parsed), value, names


def rows(ctx: Context, sources: list[int | str], path: PathT, tensor: ir.Tensor) -> ir.Rows | None:
    """The range [LO, HI) of ``tensor``'s first dim a prefix warm holds; None after
    reporting why not (PC012: an end that does not resolve, or 0 ≤ LO < HI ≤ the dim
    broken). A tensor whose first dim is dynamic is PC020's, not judged here."""
    what = f"rows of '{tensor.name}'"
    try:
        lo_src, lo, lo_names = _end(ctx, sources[0], (*path, 0), f"{what}: LO")
        hi_src, hi, hi_names = _end(ctx, sources[1], (*path, 1), f"{what}: HI")
    except Unresolved:
        return None
    first = tensor.shape[0] if tensor.shape else None
    if first is not None and not lo < hi <= first:
        ctx.report(
            ctx.v.at(*path),
            codes.BAD_EXPRESSION,
            f"rows [{lo:,}, {hi:,}] of '{tensor.name}' are no range of its first dim "
            f"({tensor.shape_source[0]} = {first:,})",
            "a prefix warm holds rows LO to HI - 1 of the first dim: 0 ≤ LO < HI ≤ the dim",
        )
        return None
    return ir.Rows(lo, hi, lo_src, hi_src, lo_names | hi_names)


def guards(ctx: Context, guard: str | list[str] | None, path: PathT) -> tuple[ir.Guard, ...]:
    """The warm's guards, each `PARAM op EXPR` over one param and a static expression of
    dims; a guard that does not resolve is reported (PC010, PC012) and left out."""
    if guard is None:
        return ()
    items = (
        [(guard, path)]
        if isinstance(guard, str)
        else [(g, (*path, i)) for i, g in enumerate(guard)]
    )
    out = []
    for text, where in items:
        g = _guard(ctx, text, where)
        if g is not None:
            # Fixes edit the document: its index there (a bad item dropped shifts the rest).
            item = None if isinstance(guard, str) else int(ctx.v.doc_path(where)[-1])
            out.append(replace(g, item=(item, 1 if isinstance(guard, str) else len(guard))))
    return tuple(out)


def _guard(ctx: Context, text: str, path: PathT) -> ir.Guard | None:
    pos = ctx.v.at(*path)
    m = _GUARD.match(text)
    if m is None:
        ctx.report(
            pos,
            codes.BAD_EXPRESSION,
            f"guard '{clip(text)}' is not PARAM <= EXPR, PARAM >= EXPR, PARAM < EXPR or "
            "PARAM > EXPR",
            "one param, one comparison, a dim expression: `guard: CTX <= 2272`; several "
            "conditions are a list, all of which must hold",
        )
        return None
    name, op, bound = m.groups()
    param = next((p for p in ctx.params if p.name == name), None)
    if param is None:
        if name in ctx.plan.params:
            return None  # a param that did not resolve: reported already
        known = list(ctx.plan.params)
        if name in ctx.plan.dims or name in (ctx.config or {}):
            ctx.report(
                pos,
                codes.UNKNOWN_NAME,
                f"guard '{clip(text)}' compares '{name}', which is no param: a guard is on a "
                "run-time value",
                "declare it under `params` with its range" if not known else None,
            )
            return None
        ctx.unknown(pos, f"guard '{clip(text)}': unknown param '{clip(name)}'", name, known)
        return None
    if not _variable_named(ctx, param, text, pos):
        return None
    try:
        source, value, _ = _end(
            ctx, bound, path, f"guard '{clip(text)}': its bound", "a guard's bound is"
        )
    except Unresolved:
        return None
    return ir.Guard(name, op, value, source, param.variable, partial(ctx.v.at, *path))


def _variable_named(ctx: Context, param: ir.Param, text: str, pos: Pos) -> bool:
    """Whether the param's run-time variable can be the generated function's parameter.
    A `source` was checked with the params (PC013 there); the default, the param's name
    in lower case, only here, where a guard puts it in code: `IF` is `if`, `W_FLAT` the
    flat view `w_flat`."""
    raw = ctx.plan.params[param.name]
    if not isinstance(raw, int) and raw.source is not None:
        return True
    problem = identifier_problem(param.variable, reserved=True)
    if problem is not None:
        ctx.report(
            pos,
            codes.BAD_IDENTIFIER,
            f"guard '{clip(text)}': no `source`: {problem}",
            f"give param '{param.name}' a `source`, the model code's name for its value: "
            "without one, the variable is the param's name in lower case",
        )
    return problem is None

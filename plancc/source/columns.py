"""Partial reads: the columns of a layer parameter a kernel reads (docs/sources.md,
"Partial reads"). Only one form is inferred, the narrowest sound one: every use of the
parameter in the kernel is a subscript whose last index is `X : X + T`, X running over
`v * T` for v the SPMD block index or a loop variable of constant range. Anything else
is a whole read, never guessed."""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from plancc.source.modules import Module
from plancc.source.resolver import Resolver
from plancc.source.values import TensorV, dotted, int_or_none

Span = tuple[int, int, int]  # a name runs over `v * T` for v in [lo, hi): (lo, hi, T)


@dataclass(frozen=True)
class Given:
    """What a kernel's layer frame knows: its module's constants, its names' values,
    the names it bound again."""

    resolver: Resolver
    module: Module
    env: Mapping[str, Any]
    rebound: set[str]

    def const(self, node: ast.expr) -> int | None:
        return int_or_none(self.resolver.const(self.module, node))


def loop_bounds(it: ast.expr, const: Callable[[ast.expr], Any]) -> tuple[int, int] | None:
    """[lo, hi) of `pl.parallel` / `pl.range` / `pl.unroll` with constant bounds and
    step 1 (no keyword), else None."""
    loops = ("pl.parallel", "pl.range", "pl.unroll")
    if not (isinstance(it, ast.Call) and dotted(it.func) in loops) or it.keywords:
        return None
    args = [int_or_none(const(a)) for a in it.args]
    if len(args) == 3 and args[2] == 1:
        args = args[:2]
    if len(args) == 1:
        args = [0, *args]
    if len(args) != 2 or args[0] is None or args[1] is None or args[0] >= args[1]:
        return None
    return (args[0], args[1])


def scaled(
    given: Given, spans: Mapping[str, Span], node: ast.expr, blocks: int | None
) -> Span | None:
    """What ``node`` runs over: `pl.get_block_idx()` of ``blocks`` blocks, or `v * T`
    (`T * v`) for such an index or a loop variable v and a constant T; else None."""
    if isinstance(node, ast.Call) and dotted(node.func) == "pl.get_block_idx":
        return None if blocks is None or node.args else (0, blocks, 1)
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult)):
        return None
    for v, t in ((node.left, node.right), (node.right, node.left)):
        over = spans.get(v.id) if isinstance(v, ast.Name) else None
        if isinstance(v, ast.Call):
            over = scaled(given, spans, v, blocks)  # `pl.get_block_idx() * T`: one level
        if over is not None and over[2] == 1:
            step = given.const(t)
            if step is not None and step > 0:
                return (over[0], over[1], step)
    return None


def _cols(given: Given, spans: Mapping[str, Span], index: ast.expr) -> tuple[int, int] | None:
    """The columns a subscript's last index `X : X + T` covers over X's span."""
    last = index.elts[-1] if isinstance(index, ast.Tuple) and index.elts else index
    if not (isinstance(last, ast.Slice) and last.step is None):
        return None
    x, upper = last.lower, last.upper
    if not (isinstance(x, ast.Name) and x.id in spans and isinstance(upper, ast.BinOp)):
        return None
    if not (isinstance(upper.op, ast.Add) and isinstance(upper.left, ast.Name)):
        return None
    lo, hi, step = spans[x.id]
    if upper.left.id != x.id or given.const(upper.right) != step:
        return None
    return (lo * step, hi * step)


def columns(
    given: Given, outer: Mapping[str, Span], nodes: list[ast.AST], blocks: int | None
) -> dict[str, tuple[int, int]]:
    """The layer parameters a kernel (its ``nodes``, in source order, already paid for)
    reads only columns [lo, hi) of, all its uses the same columns; ``outer``: the spans
    of the names it is given, ``blocks``: its SPMD block count (None: no SPMD)."""
    spans = dict(outer)
    fixed: set[int] = set()  # the Name target of a span just recorded
    found: dict[int, tuple[int, int] | None] = {}  # a subscript's base Name: its columns
    out: dict[str, tuple[int, int] | None] = {}
    for node in nodes:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            t = node.targets[0]
            span = scaled(given, spans, node.value, blocks)
            if isinstance(t, ast.Name) and span is not None:
                spans[t.id] = span
                fixed.add(id(t))
        elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
            found[id(node.value)] = _cols(given, spans, node.slice)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            if id(node) not in fixed:
                spans.pop(node.id, None)
            out[node.id] = None  # a parameter's name bound again: its uses are whole
        elif isinstance(node, ast.Name) and given.env.get(node.id) == TensorV(node.id):
            cols = None
            if isinstance(node.ctx, ast.Load) and node.id not in given.rebound:
                cols = found.get(id(node))
            if out.get(node.id, cols) != cols:
                cols = None
            out[node.id] = cols
    return {r: c for r, c in out.items() if c is not None}

"""The generated warm functions, recognised in model code (docs/sources.md, "Warms").

`plancc build` writes one `@pl.jit.inline` function per warm (templates/module.py.j2,
pypto-facts.md): its tensors (a stacked weight's whole stack), then the stacks' layer
indices, then the anchor TaskIds (a join's: several); a slab of each stacked tensor
sliced at `index * ROWS` and reshaped flat, then one `pl.at(CORE_GROUP, name_hint=,
deps=[anchors])` scope that prefetches the flat views. Model code holds it in three
forms, each read here into the same `WarmEntry`s (a tensor, and the layer-index
variable of its slab):

- a call of a function imported from the generated module (`from qwen3_14b_warms
  import prefetch_wo`), which need not exist where the model is read: its arguments
  say what it is (``call``): tensors, other scalars (a stack's index), TaskIds;
- a call of a function of the generated form wherever it is defined (copied into the
  model, or imported from a module of another name): ``signature`` reads which
  parameter is what, its `name_hint`, and which tensor is a slab at which index;
- its body written out in the layer: the slab is a `pl.slice` the reader sees
  (``slab``), the scope an `async_prefetch` scope like any other.

A form is added here, in one place: what it carries goes on `WarmEntry` (or the
call), it is recognised by ``slab``/``signature``/``call``, and compared with the
plan's warm by ``warms.entry_problem`` and written by ``extract``.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from plancc.source.params import tensor_annotation
from plancc.source.reading import WarmCall, WarmEntry
from plancc.source.values import ArrayV, ScalarV, TaskV, TensorV, dotted, roots
from plancc.text import clip

_PREFETCH = "pl.prefetch.async_prefetch"


def _rows(node: ast.expr, index: Callable[[ast.expr], str | None]) -> tuple[str, ast.expr] | None:
    """`I * ROWS` (or `ROWS * I`) where ``index`` names I: its name and ROWS."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult)):
        return None
    for i, rows in ((node.left, node.right), (node.right, node.left)):
        name = index(i)
        if name is not None:
            return name, rows
    return None


def _same(a: ast.expr, b: ast.expr, const: Callable[[ast.expr], Any]) -> bool:
    if ast.unparse(a) == ast.unparse(b):
        return True
    va, vb = const(a), const(b)
    return isinstance(va, int) and va == vb


def slab_index(
    call: ast.Call, index: Callable[[ast.expr], str | None], const: Callable[[ast.expr], Any]
) -> str | None:
    """The layer-index variable a `pl.slice(stack, [ROWS, …], [I * ROWS, 0, …])` takes one
    layer's slab at (``index`` names I, or None), else None."""
    if dotted(call.func) != "pl.slice" or len(call.args) < 3 or call.keywords:
        return None
    shape, offsets = call.args[1], call.args[2]
    if not (
        isinstance(shape, (ast.List, ast.Tuple)) and isinstance(offsets, (ast.List, ast.Tuple))
    ):
        return None
    if not shape.elts or len(shape.elts) != len(offsets.elts):
        return None
    found = _rows(offsets.elts[0], index)
    rest = offsets.elts[1:]
    if found is None or not all(isinstance(o, ast.Constant) and o.value == 0 for o in rest):
        return None
    name, rows = found
    return name if _same(rows, shape.elts[0], const) else None


def slab(
    call: ast.Call,
    taken: Any,
    value: Callable[[ast.expr], Any],
    const: Callable[[ast.expr], Any],
) -> Any:
    """What a `pl.slice` of ``taken`` outside kernels gives: one layer's slab of a whole
    tensor, at a scalar parameter of the layer function; else None."""
    if not isinstance(taken, TensorV) or taken.part:
        return None

    def index(node: ast.expr) -> str | None:
        v = value(node) if isinstance(node, ast.Name) else None
        return v.name if isinstance(v, ScalarV) else None

    name = slab_index(call, index, const)
    return None if name is None else TensorV(taken.root, part=True, slab=name)


def entry(v: Any) -> WarmEntry:
    """The entry of a value a warm prefetches: a whole tensor, or a slab of one."""
    found = sorted(roots(v))
    if not found:
        return WarmEntry(None)
    return WarmEntry(found[0], v.slab if isinstance(v, TensorV) else None)


# -- the generated function's definition


@dataclass(frozen=True)
class Signature:
    """A function of the generated form: what each parameter is, and what its scope
    prefetches in issue order (a tensor parameter, and the index parameter of its
    slab, or None)."""

    name_hint: str
    tensors: tuple[str, ...]
    scalars: tuple[str, ...]
    anchors: tuple[str, ...]
    issued: tuple[tuple[str, str | None], ...]

    @property
    def params(self) -> tuple[str, ...]:
        return (*self.tensors, *self.scalars, *self.anchors)


def _kinds(fn: ast.FunctionDef) -> tuple[list[str], list[str], list[str]] | None:
    """``fn``'s parameters as tensors, scalars and TaskIds, in that order; None when they
    are not the generated function's."""
    args = fn.args
    if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs or args.defaults:
        return None
    kinds: list[list[str]] = [[], [], []]
    at = 0
    for a in args.args:
        ann = a.annotation
        kind = 0
        if tensor_annotation(ann) is None:
            if not (isinstance(ann, ast.Subscript) and dotted(ann.value) == "pl.Scalar"):
                return None
            kind = 2 if dotted(ann.slice) == "pl.TASK_ID" else 1
        if kind < at:
            return None
        at = kind
        kinds[kind].append(a.arg)
    return (kinds[0], kinds[1], kinds[2]) if kinds[0] and kinds[2] else None


def _scope(stmt: ast.stmt) -> tuple[str, list[str], list[ast.stmt]] | None:
    """A `with pl.at(..., name_hint="…", deps=[a, …]):` statement: its hint, deps, body."""
    if not (isinstance(stmt, ast.With) and len(stmt.items) == 1):
        return None
    ctx = stmt.items[0].context_expr
    if not (isinstance(ctx, ast.Call) and dotted(ctx.func) == "pl.at"):
        return None
    kw = {k.arg: k.value for k in ctx.keywords}
    hint, deps = kw.get("name_hint"), kw.get("deps")
    if not (isinstance(hint, ast.Constant) and isinstance(hint.value, str)):
        return None
    if not (isinstance(deps, ast.List) and all(isinstance(d, ast.Name) for d in deps.elts)):
        return None
    return hint.value, [d.id for d in deps.elts if isinstance(d, ast.Name)], stmt.body


def _issued(body: list[ast.stmt], views: Mapping[str, tuple[str, str | None]]) -> list[str] | None:
    """The views a scope body prefetches in order: one context, then `async_prefetch` of
    each; None for any other body."""
    out: list[str] = []
    for i, stmt in enumerate(body):
        call = stmt.value if isinstance(stmt, (ast.Assign, ast.Expr)) else None
        if not isinstance(call, ast.Call):
            return None
        name = dotted(call.func)
        if i == 0 and isinstance(stmt, ast.Assign) and name == "pl.prefetch.make_context":
            continue
        arg = call.args[0] if call.args else None
        if name != _PREFETCH or not isinstance(arg, ast.Name) or arg.id not in views:
            return None
        out.append(arg.id)
    return out or None


def signature(fn: ast.FunctionDef, const: Callable[[ast.expr], Any]) -> Signature | None:
    """``fn`` read as a generated warm function (the template's form), else None."""
    kinds = _kinds(fn)
    if kinds is None:
        return None
    tensors, scalars, anchors = kinds
    body = list(fn.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring
    views = _views(body[:-1], tensors, scalars, const)
    scope = _scope(body[-1]) if body and views is not None else None
    if views is None or scope is None or sorted(scope[1]) != sorted(anchors):
        return None
    issued = _issued(scope[2], views)
    if issued is None:
        return None
    return Signature(
        scope[0], tuple(tensors), tuple(scalars), tuple(anchors), tuple(views[v] for v in issued)
    )


def _views(
    body: list[ast.stmt], tensors: list[str], scalars: list[str], const: Callable[[ast.expr], Any]
) -> dict[str, tuple[str, str | None]] | None:
    """The views the statements before the scope bind, each to its tensor parameter and
    the index parameter of its slab (None: whole): a slab `pl.slice` (annotated or
    not), a `pl.reshape`; None for anything else."""
    views: dict[str, tuple[str, str | None]] = {t: (t, None) for t in tensors}
    for stmt in body:
        target: ast.expr | None = stmt.target if isinstance(stmt, ast.AnnAssign) else None
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target = stmt.targets[0]
        value = stmt.value if isinstance(stmt, (ast.Assign, ast.AnnAssign)) else None
        if not (isinstance(target, ast.Name) and isinstance(value, ast.Call) and value.args):
            return None
        source = value.args[0]
        if not (isinstance(source, ast.Name) and source.id in views):
            return None
        tensor, index = views[source.id]
        if dotted(value.func) == "pl.slice" and index is None and source.id == tensor:
            index = slab_index(value, lambda n: _param(n, scalars), const)
            if index is None:
                return None
        elif dotted(value.func) != "pl.reshape":
            return None
        views[target.id] = (tensor, index)
    return views


def _param(node: ast.expr, scalars: list[str]) -> str | None:
    return node.id if isinstance(node, ast.Name) and node.id in scalars else None


# -- a call site


def call(
    function: str,
    node: ast.Call,
    values: list[Any],
    keywords: Mapping[str, Any],
    *,
    where: tuple[str, int],
    sig: Signature | None = None,
) -> WarmCall:
    """The warm a call of a generated function issues, from its arguments' ``values`` (in
    order; ``keywords`` by name): by its ``sig`` where its definition was read, else by
    what each argument is (a tensor, a TaskId, another scalar)."""
    args = [(v, _var(a)) for v, a in zip(values, node.args, strict=False)]
    kws = {
        k.arg: (keywords[k.arg], _var(k.value))
        for k in node.keywords
        if k.arg is not None and k.arg in keywords
    }
    if sig is not None:
        at = dict(zip(sig.params, args, strict=False)) | kws
        entries = tuple(_slab_entry(at.get(t), at.get(i) if i else None) for t, i in sig.issued)
        scalars = tuple(_name(at.get(s)) or "?" for s in sig.scalars)
        tasks = [at.get(a) for a in sig.anchors]
    else:
        pairs = [*args, *kws.values()]
        entries = tuple(entry(v) for v, _ in pairs if isinstance(v, TensorV))
        scalars = tuple(_name(p) or "?" for p in pairs if _scalar(p[0]))
        tasks = [p for p in pairs if isinstance(p[0], (TaskV, ArrayV))]
    deps: set[int] = set()
    for t in tasks:
        if t is not None and isinstance(t[0], (TaskV, ArrayV)):
            deps |= t[0].kernels
    return WarmCall(
        function,
        where[0],
        where[1],
        entries,
        tuple(t[1] if t is not None else None for t in tasks),
        frozenset(deps),
        scalars,
        sig.name_hint if sig is not None else None,
        read=sig is not None,
    )


def _var(node: ast.expr) -> str:
    """How an argument is written: its variable, or its expression (`0`, `layer_idx + 1`)."""
    return node.id if isinstance(node, ast.Name) else clip(ast.unparse(node))


def _scalar(v: Any) -> bool:
    return not isinstance(v, (TensorV, TaskV, ArrayV))


def _name(pair: tuple[Any, str | None] | None) -> str | None:
    """The layer's variable a scalar argument is: a scalar parameter's name, or the
    variable passed."""
    if pair is None:
        return None
    v, n = pair
    return v.name if isinstance(v, ScalarV) else n


def _slab_entry(
    tensor: tuple[Any, str | None] | None, index: tuple[Any, str | None] | None
) -> WarmEntry:
    if tensor is None:
        return WarmEntry(None)
    e = entry(tensor[0])
    return WarmEntry(e.tensor, _name(index) if index is not None else e.index)

"""The generated warm functions, recognised in model code (docs/sources.md, "Warms").

`plancc build` writes one `@pl.jit.inline` function per warm (templates/module.py.j2,
pypto-facts.md): its tensors (a stacked weight's whole stack), then the stacks' layer
indices, then each guard's run-time scalar, then the anchor TaskIds (a join's:
several); a slab of each stacked tensor sliced at `index * ROWS`, a prefix's whole
leading-dim rows as an annotated `pl.slice` at `[LO, 0, …]` (of a slab: `index * ROWS
+ LO`), each reshaped flat, then one `pl.at(CORE_GROUP, name_hint=, deps=[anchors])`
scope that prefetches the flat views, inside one `if VAR op BOUND:` per guard (nested,
never `and`). A cross-layer warm's call is spared the last layer (`if layer_idx <
NUM_LAYERS - 1:`) and passes the next layer's index (`layer_idx + 1`) or its slices.
Model code holds it in three forms, each read here into the same `WarmEntry`s (a
tensor, the layer-index variable of its slab, a prefix's rows) and ``Condition``s:

- a call of a function imported from the generated module (`from qwen3_14b_warms
  import prefetch_wo`), which need not exist where the model is read: its arguments
  say what it is (``call``): tensors, other scalars (a stack's index), TaskIds;
- a call of a function of the generated form wherever it is defined (copied into the
  model, or imported from a module of another name): ``signature`` reads which
  parameter is what, its `name_hint`, and which tensor is a slab at which index;
- its body written out in the layer: the slab or prefix is a `pl.slice` the reader
  sees (``slab``), the scope an `async_prefetch` scope like any other, the `if`s around
  it (``condition``) its guards.

An `if` around a call or a scope is read (``condition``) when it compares a scalar of
the layer (a guard's `ctx_len`, the layer index) with a constant and holds nothing but
warms: a guard, or the test that spares the last layer a cross-layer warm.

A form is added here, in one place: what it carries goes on `WarmEntry` (or the
call), it is recognised by ``slab``/``signature``/``call``, and compared with the
plan's warm by ``warms.entry_problem`` and written by ``extract``.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from plancc.source.modules import Module
from plancc.source.params import calls_of, modules_naming, tensor_annotation
from plancc.source.reading import Condition, Warm, WarmCall, WarmEntry
from plancc.source.resolver import Resolver
from plancc.source.values import ArrayV, ScalarV, TaskV, TensorV, dotted, roots
from plancc.text import clip

_PREFETCH = "pl.prefetch.async_prefetch"


Rows = tuple[int, int]
_OPS = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}
_FLIPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}  # `B op V` is `V flipped B`


def _index(node: ast.expr, index: Callable[[ast.expr], str | None]) -> str | None:
    """The layer index ``node`` names: `I` (``index`` names it), or the next layer's `I +
    1` (either way round)."""
    name = index(node)
    if name is not None:
        return name
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        for i, one in ((node.left, node.right), (node.right, node.left)):
            if isinstance(one, ast.Constant) and one.value == 1 and index(i) is not None:
                return f"{index(i)} + 1"
    return None


def _rows(node: ast.expr, index: Callable[[ast.expr], str | None]) -> tuple[str, ast.expr] | None:
    """`I * ROWS` (or `ROWS * I`) where I is a layer index (``_index``): its name and ROWS."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult)):
        return None
    for i, rows in ((node.left, node.right), (node.right, node.left)):
        name = _index(i, index)
        if name is not None:
            return name, rows
    return None


Dim = ast.expr | int | None  # an annotated dim: its expression, or its value (None: unknown)


def _same(a: ast.expr, b: Dim, const: Callable[[ast.expr], Any]) -> bool:
    """Whether ``a`` is the dim ``b``: the same expression or value (an unknown one is
    taken to be: the reader's dims of a dynamic or unread annotation)."""
    if b is None:
        return True
    if isinstance(b, int):
        return _int(a, const) == b
    if ast.unparse(a) == ast.unparse(b):
        return True
    va, vb = const(a), const(b)
    return isinstance(va, int) and va == vb


def _int(node: ast.expr, const: Callable[[ast.expr], Any]) -> int | None:
    v = const(node)
    return v if type(v) is int else None


def leading_slice(
    call: ast.Call,
    index: Callable[[ast.expr], str | None],
    const: Callable[[ast.expr], Any],
    dims: Sequence[Dim] | None,
) -> tuple[str | None, Rows | None] | None:
    """A `pl.slice(t, SHAPE, OFFSETS)` of whole leading-dim rows of ``t`` (its annotated
    ``dims``, when known): one layer's slab of a stack (`[I * ROWS, 0, …]`, SHAPE[0] ROWS),
    a prefix of the slab (`[I * ROWS + LO, 0, …]`, SHAPE[0] K: its rows [LO, LO + K)), or a
    prefix of ``t`` (`[LO, 0, …]`); its layer index (None: no stack's) and rows (None: all
    of the slab, or of ``t``). None for any other slice: one of an inner dim is not
    contiguous (PyPTO would prefetch other bytes), and is no form of a warm."""
    found = _leading(call, const, dims)
    if found is None:
        return None
    first, count = found
    lo_node: ast.expr | None = None
    if isinstance(first, ast.BinOp) and isinstance(first.op, ast.Add):
        for a, b in ((first.left, first.right), (first.right, first.left)):
            if _rows(a, index) is not None:
                first, lo_node = a, b
                break
    stacked = _rows(first, index)
    if stacked is not None:  # a stack's slab, or a prefix of it
        name, rows = stacked
        if lo_node is None and _same(rows, count, const):
            return name, None
        lo = 0 if lo_node is None else _int(lo_node, const)
        span = _span(lo, _int(count, const), _int(rows, const))
        return None if span is None else (name, span)
    top = _dim(dims[0], const) if dims else None
    span = _span(_int(first, const), _int(count, const), top)
    if span is None:
        return None
    return None, None if span == (0, top) else span


def _dim(d: Dim, const: Callable[[ast.expr], Any]) -> int | None:
    return d if isinstance(d, int) or d is None else _int(d, const)


def _leading(
    call: ast.Call, const: Callable[[ast.expr], Any], dims: Sequence[Dim] | None
) -> tuple[ast.expr, ast.expr] | None:
    """A `pl.slice` whose offsets are 0 but the first, and whose shape holds every other
    dim of ``dims`` (when known) whole: its first offset and first count."""
    if dotted(call.func) != "pl.slice" or len(call.args) < 3 or call.keywords:
        return None
    shape, offsets = call.args[1], call.args[2]
    if not (
        isinstance(shape, (ast.List, ast.Tuple)) and isinstance(offsets, (ast.List, ast.Tuple))
    ):
        return None
    if not shape.elts or len(shape.elts) != len(offsets.elts):
        return None
    if not all(isinstance(o, ast.Constant) and o.value == 0 for o in offsets.elts[1:]):
        return None
    if dims is not None and (
        len(dims) != len(shape.elts)
        or not all(_same(a, b, const) for a, b in zip(shape.elts[1:], dims[1:], strict=True))
    ):
        return None  # an inner dim sliced
    return offsets.elts[0], shape.elts[0]


def _span(lo: int | None, count: int | None, whole: int | None) -> Rows | None:
    """Rows [lo, lo + count) of ``whole`` rows, when all three are known and they fit."""
    if lo is None or count is None or whole is None or not 0 <= lo < lo + count <= whole:
        return None
    return (lo, lo + count)


def slab_index(
    call: ast.Call, index: Callable[[ast.expr], str | None], const: Callable[[ast.expr], Any]
) -> str | None:
    """The layer-index variable a `pl.slice(stack, [ROWS, …], [I * ROWS, 0, …])` takes one
    layer's slab at (``index`` names I, or None), else None."""
    found = leading_slice(call, index, const, None)
    return found[0] if found is not None and found[1] is None else None


def slab(
    call: ast.Call,
    taken: Any,
    value: Callable[[ast.expr], Any],
    const: Callable[[ast.expr], Any],
    dims: Callable[[str], Sequence[Dim] | None],
) -> Any:
    """What a `pl.slice` of ``taken`` outside kernels gives: one layer's slab of a whole
    tensor, at a scalar parameter of the layer function (or the next layer's, `I + 1`), a
    prefix of whole leading-dim rows of it or of its slab; else None. ``dims``: a layer
    parameter's annotated dims."""
    if not isinstance(taken, TensorV) or taken.part:
        return None

    def index(node: ast.expr) -> str | None:
        v = value(node) if isinstance(node, ast.Name) else None
        return v.name if isinstance(v, ScalarV) else None

    found = leading_slice(call, index, const, dims(taken.root))
    if found is None or found == (None, None):
        return None
    name, rows = found
    return TensorV(taken.root, part=True, slab=name, rows=rows)


def entry(v: Any) -> WarmEntry:
    """The entry of a value a warm prefetches: a whole tensor, a slab of one, a prefix."""
    found = sorted(roots(v))
    if not found:
        return WarmEntry(None)
    if not isinstance(v, TensorV):
        return WarmEntry(found[0])
    return WarmEntry(found[0], v.slab, v.rows)


def per_layer_rows(warms: Sequence[Warm]) -> list[Warm]:
    """``warms`` with those marked ``part`` that warm rows of a tensor other warms take
    other rows of: one layer's slice each of a stack a forward hands its layers
    (Flash's `decode_fwd`: `pl.slice(wq_a, [D, …], [1 * D, 0])` for the second layer).
    A plan's `rows` are consumed by every reader of the tensor, every layer's, so no
    plan warm declares them (its copies in a forward would read as PC030 and PC040).
    One warm listing two ranges of a tensor is a plan's form, and is kept."""
    ranges: dict[str, set[tuple[int, int]]] = {}
    taken: dict[str, set[int]] = {}  # the warms that take rows of each tensor
    for i, w in enumerate(warms):
        for e in w.entries:
            if e.tensor is not None and e.rows is not None:
                ranges.setdefault(e.tensor, set()).add(e.rows)
                taken.setdefault(e.tensor, set()).add(i)
    shared = {t for t, found in ranges.items() if len(found) > 1 and len(taken[t]) > 1}
    return [
        replace(w, part=True)
        if not w.part and any(e.rows is not None and e.tensor in shared for e in w.entries)
        else w
        for w in warms
    ]


def known(v: Any) -> bool:
    """Whether a value a warm prefetches is what a plan warm can declare: a whole tensor,
    one layer's slab of a stack, a prefix of whole leading-dim rows."""
    return not (isinstance(v, TensorV) and v.part and v.slab is None and v.rows is None)


def condition(
    test: ast.expr, scalar: Callable[[ast.expr], str | None], const: Callable[[ast.expr], Any]
) -> Condition | None:
    """An `if` test a warm is issued under: `VAR op BOUND` (op `<`, `<=`, `>`, `>=`), VAR a
    scalar of the layer (``scalar`` names it), BOUND a constant expression, or the same
    the other way round (`2272 >= ctx_len` is `ctx_len <= 2272`); else None (`and` is no
    form: PyPTO's code generation rejects it)."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and len(test.comparators) == 1):
        return None
    op = _OPS.get(type(test.ops[0]))
    if op is None:
        return None
    left, right = test.left, test.comparators[0]
    name = scalar(left)
    if name is None and (name := scalar(right)) is not None:
        left, right, op = right, left, _FLIPPED[op]
    if name is None:
        return None
    return Condition(name, op, _int(right, const), clip(ast.unparse(test)))


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
    rows: tuple[Rows | None, ...] = ()  # a prefix's, per issued view (empty: none has)
    guards: tuple[Condition, ...] = ()  # its `if`s around the scope, on scalar parameters

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


def _issued(body: list[ast.stmt], views: Mapping[str, View]) -> list[str] | None:
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
    dims = {a.arg: _dims(a.annotation) for a in fn.args.args}
    views = _views(body[:-1], tensors, scalars, const, dims)
    last, guards = _guarded(body[-1], scalars, const) if body else (None, [])
    scope = _scope(last) if last is not None and views is not None else None
    if views is None or scope is None or sorted(scope[1]) != sorted(anchors):
        return None
    issued = _issued(scope[2], views)
    if issued is None:
        return None
    rows = tuple(views[v][2] for v in issued)
    return Signature(
        scope[0],
        tuple(tensors),
        tuple(scalars),
        tuple(anchors),
        tuple(views[v][:2] for v in issued),
        rows if any(rows) else (),
        tuple(guards),
    )


def _dims(ann: ast.expr | None) -> Sequence[Dim] | None:
    """The dims of a `pl.Tensor[[dims], dtype]` annotation, else None."""
    t = tensor_annotation(ann)
    if not isinstance(t, ast.Subscript) or not isinstance(t.slice, ast.Tuple):
        return None
    shape = t.slice.elts[0] if t.slice.elts else None
    return list(shape.elts) if isinstance(shape, (ast.List, ast.Tuple)) else None


def _guarded(
    stmt: ast.stmt, scalars: list[str], const: Callable[[ast.expr], Any]
) -> tuple[ast.stmt | None, list[Condition]]:
    """The statement inside the nested `if`s on scalar parameters around it (a guarded
    warm's scope), and those `if`s' conditions, outermost first."""
    guards: list[Condition] = []
    while isinstance(stmt, ast.If):
        found = condition(stmt.test, lambda n: _param(n, scalars), const)
        if found is None or stmt.orelse or len(stmt.body) != 1:
            return None, []
        guards.append(found)
        stmt = stmt.body[0]
    return stmt, guards


View = tuple[str, str | None, Rows | None]  # a tensor parameter, its slab's index, a prefix


def _views(
    body: list[ast.stmt],
    tensors: list[str],
    scalars: list[str],
    const: Callable[[ast.expr], Any],
    dims: Mapping[str, Sequence[Dim] | None],
) -> dict[str, View] | None:
    """The views the statements before the scope bind, each to its tensor parameter, the
    index parameter of its slab (None: whole) and a prefix's rows: a slab or prefix
    `pl.slice` of whole leading-dim rows (annotated or not), a `pl.reshape`; None for
    anything else."""
    views: dict[str, View] = {t: (t, None, None) for t in tensors}
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
        tensor, index, rows = views[source.id]
        if dotted(value.func) == "pl.slice" and index is None and source.id == tensor:
            found = leading_slice(value, lambda n: _param(n, scalars), const, dims.get(tensor))
            if found is None or found == (None, None):
                return None
            index, rows = found
        elif dotted(value.func) != "pl.reshape":
            return None
        views[target.id] = (tensor, index, rows)
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
    under: tuple[Condition, ...] = (),
) -> WarmCall:
    """The warm a call of a generated function issues, from its arguments' ``values`` (in
    order; ``keywords`` by name): by its ``sig`` where its definition was read, else by
    what each argument is (a tensor, a TaskId, another scalar). ``under``: the `if`s
    around the call; its definition's guards follow, on the variables passed."""
    args = [(v, _var(a)) for v, a in zip(values, node.args, strict=False)]
    kws = {
        k.arg: (keywords[k.arg], _var(k.value))
        for k in node.keywords
        if k.arg is not None and k.arg in keywords
    }
    conditions = under
    if sig is not None:
        at = dict(zip(sig.params, args, strict=False)) | kws
        rows = sig.rows or (None,) * len(sig.issued)
        entries = tuple(
            _slab_entry(at.get(t), at.get(i) if i else None, r)
            for (t, i), r in zip(sig.issued, rows, strict=True)
        )
        scalars = tuple(_name(at.get(s)) or "?" for s in sig.scalars)
        tasks = [at.get(a) for a in sig.anchors]
        for g in sig.guards:  # on the variable the caller passes
            passed = _name(at.get(g.variable)) or "?"
            text = f"{passed} {g.op} {g.bound if g.bound is not None else '?'}"
            conditions = (*conditions, Condition(passed, g.op, g.bound, text))
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
        conditions=conditions,
        arity=_arity(function, sig, node, values) if sig is not None else None,
    )


def _arity(function: str, sig: Signature, node: ast.Call, values: list[Any]) -> str | None:
    """How a call's arguments miss ``sig``'s parameters (Python would refuse the call),
    or None."""
    if any(isinstance(a, ast.Starred) for a in node.args) or any(
        k.arg is None for k in node.keywords
    ):
        return None  # *args, **kwargs: not counted
    params = sig.params
    keywords = [k.arg for k in node.keywords if k.arg is not None]
    given = len(node.args) + len(keywords)
    takes = f"{function}({', '.join(params)}) takes {len(params)}"
    counted = f"{given} argument{'s' * (given != 1)}, but {takes}"
    if len(node.args) > len(params):
        return counted
    unknown = [k for k in keywords if k not in params]
    if unknown:
        return f"{unknown[0]}=, which {function}({', '.join(params)}) does not take"
    bound = set(params[: len(node.args)]) | set(keywords)
    missing = [p for p in params if p not in bound]
    if not missing:
        return None
    if not keywords:
        missing = _left_out(sig, node, values) or missing
    return f"{counted}: no argument for {', '.join(repr(m) for m in missing)}"


def _left_out(sig: Signature, node: ast.Call, values: list[Any]) -> list[str] | None:
    """The parameters a positional call leaves out, by what its arguments are: of each
    kind (tensors, scalars, TaskIds), the ones no argument is named as where every
    argument of the kind is written as one of them (a call of an older signature: a
    guard's variable added since), else the kind's last ones; None when a kind has
    more arguments than parameters."""
    kinds = (sig.tensors, sig.scalars, sig.anchors)
    given: tuple[list[str], list[str], list[str]] = ([], [], [])
    for v, a in zip(values, node.args, strict=False):
        kind = 0 if isinstance(v, TensorV) else 2 if isinstance(v, (TaskV, ArrayV)) else 1
        given[kind].append(_var(a))
    missing: list[str] = []
    for written, params in zip(given, kinds, strict=True):
        if len(written) > len(params):
            return None
        unnamed = [p for p in params if p not in written]
        named = all(w in params for w in written) and len(unnamed) == len(params) - len(written)
        missing += unnamed if named else list(params[len(written) :])
    return missing


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
    tensor: tuple[Any, str | None] | None,
    index: tuple[Any, str | None] | None,
    rows: Rows | None = None,
) -> WarmEntry:
    if tensor is None:
        return WarmEntry(None)
    e = entry(tensor[0])
    return WarmEntry(e.tensor, _name(index) if index is not None else e.index, rows or e.rows)


# -- a cross-layer warm's call outside the layer function


@dataclass(frozen=True)
class OutsideCall:
    """A call of a generated warm function found in a function other than the layer's
    (a cross-layer warm's, between one layer and the next: `decode_fwd`'s loop), read
    as written: its arguments and the `if`s around it."""

    file: str
    line: int
    caller: str  # the function it is in
    arguments: tuple[str, ...]  # each as written: `wq`, `layer_idx + 1`, `moe_tid`
    conditions: tuple[Condition, ...]  # the `if`s around it in its function, outermost first


def outside_calls(resolver: Resolver, layer: Module, function: str, name: str) -> list[OutsideCall]:
    """The calls of ``name`` in the functions of the layer's directory (its own module's
    too) but the layer function ``function`` itself: where a cross-layer warm's call
    stands, between one layer and the next (pypto-facts.md)."""
    out: list[OutsideCall] = []
    directory = os.path.dirname(layer.path)
    for mod in modules_naming(resolver, directory, name):
        for fn, node in calls_of(resolver, mod, name):
            if fn.name == function and os.path.realpath(mod.path) == os.path.realpath(layer.path):
                continue  # the layer function's own: the reading has it

            def const(n: ast.expr, mod: Module = mod) -> Any:
                return resolver.const(mod, n)

            def variable(n: ast.expr) -> str | None:
                return n.id if isinstance(n, ast.Name) else None

            ifs = _ifs_around(fn, node, resolver)
            conditions = tuple(
                c for c in (condition(t, variable, const) for t in ifs) if c is not None
            )
            args = tuple(_var(a) for a in node.args)
            out.append(OutsideCall(resolver.show(mod.path), node.lineno, fn.name, args, conditions))
    return out


def _ifs_around(fn: ast.FunctionDef, target: ast.Call, resolver: Resolver) -> list[ast.expr]:
    """The tests of the `if`s (their bodies, not `else`) around ``target`` in ``fn``."""
    found: list[ast.expr] = []

    def visit(node: ast.AST, tests: list[ast.expr]) -> bool:
        resolver.budget.spend()
        if node is target:
            found.extend(tests)
            return True
        if isinstance(node, ast.If):
            if visit(node.test, tests):
                return True
            if any(visit(s, [*tests, node.test]) for s in node.body):
                return True
            return any(visit(s, tests) for s in node.orelse)
        return any(visit(child, tests) for child in ast.iter_child_nodes(node))

    visit(fn, [])
    return found

"""Kernels: the `pl.at` and `pl.spmd` scopes of the code, their names, tensors and order."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field, replace
from typing import Any

from plancc.source.collectives import called
from plancc.source.limits import MAX_KERNELS, OutOfWork
from plancc.source.modules import Module
from plancc.source.reading import Kernel, Loop, Task, Unresolved, Warm, WarmCall
from plancc.source.resolver import Resolver
from plancc.source.values import (
    UNKNOWN,
    ArrayV,
    FreeNames,
    TaskV,
    TensorV,
    base_name,
    base_node,
    dotted,
    hints_in,
    int_or_none,
    prefetched,
    roots,
    tensor_only,
    walk,
    walk_body,
)

_SPMD_SUFFIX = "_spmd"
ALIASING = {"pl.reshape", "pl.slice", "pl.assemble", "pl.tensor.view", "pl.view"}
SLICING = {"pl.slice", "pl.tensor.view", "pl.view"}  # a part of the tensor they take


@dataclass
class Frame:
    module: Module
    env: dict[str, Any]
    function: str
    depth: int
    stack: tuple[str, ...]
    layer: bool = False  # the layer function itself: its TaskId variables are its tasks
    loops: tuple[Loop, ...] = ()  # the loops outside kernels it runs inside, outermost first
    # Names that run over `v * T` for v in [lo, hi) (T 1: a loop variable): (lo, hi, T).
    spans: dict[str, tuple[int, int, int]] = field(default_factory=dict)
    rebound: set[str] = field(default_factory=set)  # names assigned here (a reshape, say)


class Scopes:
    """The kernels found so far, in program order, and what each scope adds; paths in
    what it records are shown as ``resolver`` shows them."""

    def __init__(self, resolver: Resolver) -> None:
        self.resolver = resolver
        self.kernels: list[Kernel] = []
        self.names = FreeNames()  # the kernels' names, as PyPTO's outliner gives them
        self.warms: list[Warm] = []
        self.calls: list[WarmCall] = []
        self.unresolved: list[Unresolved] = []
        self.tasks: dict[str, Task] = {}
        self.inner: list[Task] = []  # helpers' task variables, in the order they are bound
        self.bound: dict[str, tuple[str, int]] = {}
        self.writers: dict[str, set[int]] = {}
        self.manual = 0  # inside `pl.manual_scope`: no last-writer order
        self.budget = resolver.budget
        self.listed: dict[int, tuple[list[ast.stmt], list[ast.AST]]] = {}

    def add(self, k: Kernel) -> None:
        if len(self.kernels) >= MAX_KERNELS:
            raise OutOfWork(f"more than {MAX_KERNELS:,} kernels")
        self.order(k)
        self.kernels.append(k)

    def opaque(
        self,
        frame: Frame,
        node: ast.AST,
        what: str,
        args: list[Any] | None = None,
        names: frozenset[str] = frozenset(),
        *,
        line: int = 0,
    ) -> None:
        """Code that cannot be followed: a kernel that may touch every tensor it is given."""
        file = self.resolver.show(frame.module.path)
        line = line or int(getattr(node, "lineno", 1))
        self.unresolved.append(Unresolved(file, line, what))
        given: set[str] = set()
        for v in args if args is not None else self.values_in(frame, node):
            given |= roots(v)
        names = names | hints_in(node, self.budget)
        k = Kernel(len(self.kernels), "", "", file, line, opaque=True, names=names)
        k.reads = set(given)
        k.writes = set(given)
        # What it waits on is not known: it waits for everything before it, so nothing
        # after it is taken to run beside what came first (never `deps: []` by default).
        self.budget.spend(len(self.kernels))  # n opaque kernels: n**2 / 2 edges, paid for
        k.after = set(range(len(self.kernels)))
        self.add(k)

    def values_in(self, frame: Frame, node: ast.AST) -> list[Any]:
        return [
            frame.env[n.id]
            for n in walk(node, self.budget)
            if isinstance(n, ast.Name) and n.id in frame.env
        ]

    def scope(  # noqa: C901 (one branch per statement form a kernel body reads or writes through)
        self,
        frame: Frame,
        call: ast.Call,
        body: list[ast.stmt],
        stmt: ast.stmt,
        tid: str | None,
        *,
        spmd_for: bool,
    ) -> None:
        hint = ""
        deps_node: ast.expr | None = None
        for kw in call.keywords:
            if kw.arg == "name_hint" and isinstance(kw.value, ast.Constant):
                hint = str(kw.value.value)
            elif kw.arg == "deps":
                deps_node = kw.value
        if spmd_for and hint.endswith(_SPMD_SUFFIX):
            hint = hint[: -len(_SPMD_SUFFIX)]
        deps: set[int] = set()
        dep_names: list[str] = []
        if deps_node is not None:
            for n in walk(deps_node, self.budget):
                if isinstance(n, ast.Name) and n.id in frame.env:
                    v = frame.env[n.id]
                    if isinstance(v, (TaskV, ArrayV)):
                        self.budget.spend(len(v.kernels))  # as large as the code
                        deps |= set(v.kernels)
                        dep_names.append(n.id)
        file = self.resolver.show(frame.module.path)
        nodes = self.nodes(body)
        warmed = prefetched(nodes)
        name = self.names.take(hint) if hint else ""
        if warmed is not None:
            values = [self.alias(frame, n, body) for n in warmed]
            tensors = tuple(r for v in values for r in sorted(roots(v)))
            part = any(isinstance(v, TensorV) and v.part for v in values)
            self.warms.append(
                Warm(hint, file, stmt.lineno, tensors, frozenset(deps), tuple(dep_names), part)
            )
            return
        k = Kernel(len(self.kernels), name, hint, file, stmt.lineno, task=tid, deps=deps)
        self.touch(frame, k, nodes)
        k.collectives = called(frame.module, nodes, self.budget)
        if frame.layer:
            blocks = self.resolver.const(frame.module, call.args[0]) if call.args else None
            spmd = dotted(call.func) == "pl.spmd"
            k.columns = self.columns(frame, nodes, int_or_none(blocks) if spmd else None)
        self.add(k)
        if tid is not None:
            frame.env[tid] = TaskV(frozenset({k.index}))
            self.bound.setdefault(tid, (file, stmt.lineno))
            self.task(frame, Task(tid, frozenset({k.index}), file, stmt.lineno))

    def task(self, frame: Frame, task: Task) -> None:
        """A TaskId variable bound in ``frame``: the layer's, or an inner one."""
        if frame.loops:
            task = replace(task, loop=frame.loops[-1])
        if frame.layer:
            self.tasks[task.name] = task
        else:
            self.inner.append(task)

    def inner_tasks(self) -> dict[str, Task]:
        """The helpers' tasks, each named as a repeated kernel is, apart from the layer's."""
        names = FreeNames()
        names.taken |= self.tasks.keys()
        out: dict[str, Task] = {}
        for t in self.inner:
            name = names.take(t.name)
            out[name] = replace(t, name=name)
        return out

    def order(self, k: Kernel) -> None:
        if not self.manual:
            for r in k.reads | k.writes:
                k.after |= self.writers.get(r, set())
        k.after.discard(k.index)
        for r in k.writes:
            self.writers[r] = {k.index}

    def alias(self, frame: Frame, name: str, body: list[ast.stmt]) -> Any:
        return frame.env.get(name, UNKNOWN)

    def nodes(self, body: list[ast.stmt]) -> list[ast.AST]:
        """Every node of a kernel's body in source order, listed once per body (a helper
        inlined a thousand times has one), and paid for at each use."""
        hit = self.listed.get(id(body))
        if hit is None or hit[0] is not body:
            hit = (body, list(walk_body(body, self.budget)))
            self.listed[id(body)] = hit
        else:
            self.budget.spend(len(hit[1]))
        return hit[1]

    def touch(self, frame: Frame, k: Kernel, nodes: list[ast.AST]) -> None:  # noqa: C901, PLR0912 (one branch per statement form a kernel body reads or writes through)
        """The tensors a kernel body reads and writes (its local aliases followed)."""
        self.budget.spend(len(frame.env))
        env = dict(frame.env)
        for node in nodes:
            if isinstance(node, ast.Assign):
                v = self.local_value(env, node.value)
                for t in node.targets:
                    if isinstance(t, ast.Name):
                        env[t.id] = v
                    elif isinstance(t, ast.Subscript):
                        base = base_name(t.value)
                        if base is not None:
                            k.writes |= roots(env.get(base))
            elif isinstance(node, ast.Call):
                fn = dotted(node.func)
                target: ast.expr | None = None
                if fn in ("pl.assemble", "pl.write", "pl.tensor.write") and node.args:
                    target = node.args[0]
                elif fn == "pl.store" and len(node.args) >= 3:
                    target = node.args[2]
                if target is not None:
                    base = base_name(target)
                    if base is not None:
                        k.writes |= roots(env.get(base))
        written_only: set[int] = set()
        for node in nodes:
            if isinstance(node, ast.Assign):
                for t in node.targets:
                    if isinstance(t, ast.Subscript):
                        b = base_node(t.value)
                        if b is not None:
                            written_only.add(id(b))
            elif isinstance(node, ast.Call):
                fn = dotted(node.func)
                arg = None
                if fn in ("pl.assemble", "pl.write", "pl.tensor.write") and node.args:
                    arg = node.args[0]
                elif fn == "pl.store" and len(node.args) >= 3:
                    arg = node.args[2]
                b = base_node(arg) if arg is not None else None
                if b is not None:
                    written_only.add(id(b))
        # Names are looked up in the kernel's final environment: a name a kernel
        # rebinds to a tile is not a tensor, and its uses before that are counted
        # by the tensor it aliased.
        for node in nodes:
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                if id(node) in written_only:
                    continue
                v = frame.env.get(node.id) if node.id in frame.env else env.get(node.id)
                k.reads |= roots(v)

    def columns(
        self, frame: Frame, nodes: list[ast.AST], blocks: int | None
    ) -> dict[str, tuple[int, int]]:
        """The layer parameters the kernel (its ``nodes``) reads only columns [lo, hi) of:
        every use of the parameter's name is a subscript whose last index is `X : X + T`,
        X running over `v * T` for v in a loop's constant range or the SPMD block index
        (``blocks`` blocks, None: no SPMD), all uses the same columns."""
        self.budget.spend(len(frame.spans))
        spans = dict(frame.spans)
        fixed: set[int] = set()  # the Name target of a span just recorded
        found: dict[int, tuple[int, int] | None] = {}  # a subscript's base Name: its columns
        out: dict[str, tuple[int, int] | None] = {}
        for node in nodes:
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                t = node.targets[0]
                span = self.span(frame, spans, node.value, blocks)
                if isinstance(t, ast.Name) and span is not None:
                    spans[t.id] = span
                    fixed.add(id(t))
            elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
                found[id(node.value)] = self.cols(frame, spans, node.slice)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                if id(node) not in fixed:
                    spans.pop(node.id, None)
                out[node.id] = None  # a parameter's name bound again: its uses are whole
            elif isinstance(node, ast.Name) and frame.env.get(node.id) == TensorV(node.id):
                cols = None
                if isinstance(node.ctx, ast.Load) and node.id not in frame.rebound:
                    cols = found.get(id(node))
                if out.get(node.id, cols) != cols:
                    cols = None
                out[node.id] = cols
        return {r: c for r, c in out.items() if c is not None}

    def span(
        self,
        frame: Frame,
        spans: dict[str, tuple[int, int, int]],
        node: ast.expr,
        blocks: int | None,
    ) -> tuple[int, int, int] | None:
        """What ``node`` runs over: `pl.get_block_idx()` of ``blocks`` blocks, or `v * T`
        (`T * v`) for a loop variable v and a constant T; None for anything else."""
        if isinstance(node, ast.Call) and dotted(node.func) == "pl.get_block_idx":
            return None if blocks is None or node.args else (0, blocks, 1)
        if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult)):
            return None
        for v, t in ((node.left, node.right), (node.right, node.left)):
            over = spans.get(v.id) if isinstance(v, ast.Name) else None
            if isinstance(v, ast.Call):
                over = self.span(frame, spans, v, blocks)  # `pl.get_block_idx() * T`
            if over is not None and over[2] == 1:
                step = int_or_none(self.resolver.const(frame.module, t))
                if step is not None and step > 0:
                    return (over[0], over[1], step)
        return None

    def cols(
        self, frame: Frame, spans: dict[str, tuple[int, int, int]], index: ast.expr
    ) -> tuple[int, int] | None:
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
        width = self.resolver.const(frame.module, upper.right)
        if upper.left.id != x.id or int_or_none(width) != step:
            return None
        return (lo * step, hi * step)

    def local_value(self, env: dict[str, Any], node: ast.expr) -> Any:
        if isinstance(node, ast.Name):
            return env.get(node.id, UNKNOWN)
        if isinstance(node, ast.Subscript):
            return tensor_only(self.local_value(env, node.value))
        if isinstance(node, ast.Call) and dotted(node.func) in ALIASING and node.args:
            return tensor_only(self.local_value(env, node.args[0]))
        return UNKNOWN

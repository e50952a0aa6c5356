"""Kernels: the `pl.at` and `pl.spmd` scopes of the code, their names, tensors and order."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from plancc.source import warm_forms
from plancc.source.collectives import called
from plancc.source.copies import Copies
from plancc.source.flow import (
    BINDING,
    COMPREHENSIONS,
    Position,
    binding,
    bound,
    comprehended,
    reads_before,
)
from plancc.source.limits import MAX_DEPTH, MAX_KERNELS, OutOfWork
from plancc.source.modules import Module
from plancc.source.reading import Condition, Kernel, Loop, Task, Unresolved, Warm, WarmCall
from plancc.source.resolver import Resolver
from plancc.source.values import (
    UNKNOWN,
    ArrayV,
    FreeNames,
    FuncV,
    TaskV,
    TensorV,
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


@dataclass(frozen=True)
class Facts:
    """A kernel body, read for ``Scopes.touch``: the names it binds (flow.py), in source
    order each assignment and the names written through at it, and the uses of names
    it may read."""

    binds: dict[str, Position]
    steps: list[tuple[ast.Assign | None, list[ast.Name]]]
    loads: list[ast.Name]


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
        self.copies = Copies()  # the unrolled loops being read
        self.warms: list[Warm] = []
        self.calls: list[WarmCall] = []
        self.conditions: list[Condition] = []  # the `if`s on warms being read, outermost first
        self.unresolved: list[Unresolved] = []
        self.tasks: dict[str, Task] = {}
        self.inner: list[Task] = []  # helpers' task variables, in the order they are bound
        self.bound: dict[str, tuple[str, int]] = {}
        self.writers: dict[str, set[int]] = {}
        self.manual = 0  # inside `pl.manual_scope`: no last-writer order
        self.budget = resolver.budget
        self.listed: dict[int, tuple[list[ast.stmt], list[ast.AST]]] = {}
        self.written_by: dict[int, frozenset[str]] = {}  # a helper -> the parameters it writes
        self.bodies: dict[int, tuple[list[ast.stmt], Facts]] = {}

    def copy_of(self, frame: Frame, site: ast.AST, index: int) -> int | None:
        """The first copy of the kernel ``index`` made at ``site``, when it is a later copy
        of an unrolled scope (copies.py)."""
        found = self.copies.first(("kernel", id(site), frame.stack), index)
        if found is None:
            return None
        first = self.kernels[found].copy_of
        return found if first is None else first

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
            entries = tuple(warm_forms.entry(v) for v in values if roots(v))
            part = not all(warm_forms.known(v) for v in values)
            copy = self.copies.first(("warm", id(stmt), frame.stack), len(self.warms)) is not None
            self.warms.append(
                Warm(
                    hint,
                    file,
                    stmt.lineno,
                    entries,
                    frozenset(deps),
                    tuple(dep_names),
                    part,
                    copy,
                    tuple(self.conditions),
                )
            )
            return
        k = Kernel(len(self.kernels), name, hint, file, stmt.lineno, task=tid, deps=deps)
        k.copy_of = self.copy_of(frame, stmt, k.index)
        body_facts = self.facts(frame.module, body, nodes)
        # The names the scope binds: a `for` form's variable (the block index) is its own.
        binds = body_facts.binds
        if isinstance(stmt, ast.For):
            binds = binds | dict.fromkeys(bound([stmt]), (0, 0))
        env = self.touch(frame, k, body_facts, binds)
        k.collectives = called(frame.module, nodes, self.budget)
        if frame.layer:
            blocks = self.resolver.const(frame.module, call.args[0]) if call.args else None
            spmd = dotted(call.func) == "pl.spmd"
            k.columns = self.columns(frame, nodes, int_or_none(blocks) if spmd else None)
        self.export(frame, k, env, binds.keys() - bound([stmt]).keys())
        self.add(k)
        if tid is not None:
            frame.env[tid] = TaskV(frozenset({k.index}))
            self.bound.setdefault(tid, (file, stmt.lineno))
            last = stmt.end_lineno or stmt.lineno
            self.task(frame, Task(tid, frozenset({k.index}), file, stmt.lineno, last=last))

    def task(self, frame: Frame, task: Task) -> None:
        """A TaskId variable bound in ``frame``: the layer's, or an inner one."""
        if frame.loops:
            task = replace(task, loops=frame.loops)
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

    def carry(self, into: Any, source: Any) -> None:
        """``source`` copied into tensor ``into`` outside any kernel (`attn_out =
        pl.assemble(attn_out, attn_row, [b, 0])`): what reads ``into`` from here on waits
        for the last writers of ``source`` too, as PyPTO orders the copy between them."""
        came: set[int] = set()
        for r in roots(source):
            came |= self.writers.get(r, set())
        if came:
            self.budget.spend(len(came))
            for r in roots(into):
                self.writers[r] = self.writers.get(r, set()) | came

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

    def export(self, frame: Frame, k: Kernel, env: dict[str, Any], names: Iterable[str]) -> None:
        """The names a kernel body binds leave it (flow.py): a tensor it aliases as that
        tensor, anything else as a value of its own that the kernel wrote."""
        for n in sorted(names):
            self.budget.spend()
            v = env.get(n)
            if not isinstance(v, TensorV):
                v = TensorV(f"{n}@{k.index}")
                k.writes.add(v.root)
            frame.env[n] = v
            frame.rebound.add(n)
            frame.spans.pop(n, None)

    def facts(self, mod: Module, body: list[ast.stmt], nodes: list[ast.AST]) -> Facts:
        """What ``touch`` needs of a kernel body, worked out once per body (a helper's
        scope inlined a hundred times has one) from its ``nodes``, already paid for, in
        one pass."""
        hit = self.bodies.get(id(body))
        if hit is not None and hit[0] is body:
            return hit[1]
        binds: dict[str, Position] = {}
        steps: list[tuple[ast.Assign | None, list[ast.Name]]] = []
        skip: set[int] = set()  # written through, or a comprehension's own
        names: list[ast.Name] = []
        for node in nodes:
            if type(node) is ast.Name:
                if type(node.ctx) is ast.Load:
                    names.append(node)
                continue
            if isinstance(node, BINDING):
                for name, at in binding(node):
                    binds.setdefault(name, at)
            if isinstance(node, COMPREHENSIONS):
                skip |= comprehended(node)
            if isinstance(node, (ast.Assign, ast.Call)):
                bases = _written(node)
                skip |= {id(b) for b in bases}
                bases += self.through(mod, node)  # a helper inlined into the kernel writes
                assign = node if isinstance(node, ast.Assign) else None
                if assign is not None or bases:
                    steps.append((assign, bases))
        found = Facts(binds, steps, [n for n in names if id(n) not in skip])
        self.bodies[id(body)] = (body, found)
        return found

    def touch(
        self, frame: Frame, k: Kernel, facts: Facts, binds: dict[str, Position]
    ) -> dict[str, Any]:
        """The tensors a kernel body reads and writes (its local aliases followed), and
        the values the names it binds hold at its end."""
        self.budget.spend(len(frame.env))
        env: dict[str, Any] = {}  # the body's own bindings

        def look(name: ast.Name) -> Any:
            # A use before the body binds the name reads the value it had before the body
            # (a tensor, or what an earlier kernel made); a use after reads the body's own,
            # in the environment reached so far: a name rebound to a tile is no tensor.
            return frame.env.get(name.id) if reads_before(name, binds) else env.get(name.id)

        for assign, bases in facts.steps:
            if assign is not None:
                v = self.local_value(look, assign.value)
                for t in assign.targets:
                    if isinstance(t, ast.Name):
                        env[t.id] = v
            for b in bases:
                k.writes |= roots(look(b))
        for node in facts.loads:
            k.reads |= roots(look(node))
        return env

    def through(self, mod: Module, call: ast.AST, stack: tuple[int, ...] = ()) -> list[ast.Name]:
        """The arguments a call inside a kernel body writes through: those a helper it
        names (resolved in ``mod``) stores to, assembles into or takes as `pl.Out` or
        `pl.InOut` (dspark's `rms_norm` fills `x_normed` in `_rms_norm_full_tile`)."""
        if not isinstance(call, ast.Call) or dotted(call.func).startswith("pl."):
            return []
        callee = self.resolver.dotted_value(mod, call.func)
        if not isinstance(callee, FuncV):
            return []
        params = [a.arg for a in [*callee.node.args.posonlyargs, *callee.node.args.args]]
        out = self.writes_of(callee, stack)
        given = list(zip(params, call.args, strict=False))
        given += [(kw.arg, kw.value) for kw in call.keywords if kw.arg]
        return [a for p, a in given if p in out and isinstance(a, ast.Name)]

    def writes_of(self, fn: FuncV, stack: tuple[int, ...]) -> frozenset[str]:
        """The parameters a helper writes, through the helpers it calls too (worked out
        once; a helper that calls itself, or nests past MAX_DEPTH, adds nothing more)."""
        key = id(fn.node)
        if key in self.written_by:
            return self.written_by[key]
        args = [*fn.node.args.posonlyargs, *fn.node.args.args, *fn.node.args.kwonlyargs]
        out = {a.arg for a in args if _out(a.annotation)}
        if key not in stack and len(stack) < MAX_DEPTH:
            for node in self.nodes(fn.node.body):
                out |= {b.id for b in _written(node)}
                out |= {b.id for b in self.through(fn.module, node, (*stack, key))}
        found = frozenset(out & {a.arg for a in args})
        self.written_by[key] = found
        return found

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

    def local_value(self, look: Callable[[ast.Name], Any], node: ast.expr) -> Any:
        if isinstance(node, ast.Name):
            found = look(node)
            return UNKNOWN if found is None else found
        if isinstance(node, ast.Subscript):
            return tensor_only(self.local_value(look, node.value))
        if isinstance(node, ast.Call) and dotted(node.func) in ALIASING and node.args:
            return tensor_only(self.local_value(look, node.args[0]))
        return UNKNOWN


_WRITES = ("pl.assemble", "pl.write", "pl.tensor.write")


def _out(ann: ast.expr | None) -> bool:
    """A `pl.Out[...]` or `pl.InOut[...]` annotation: the parameter is written."""
    return isinstance(ann, ast.Subscript) and dotted(ann.value) in ("pl.Out", "pl.InOut")


def _written(node: ast.AST) -> list[ast.Name]:
    """The names a statement or call of a kernel body writes through: a subscript
    store's base, the target of `pl.assemble`, `pl.write` or `pl.store`."""
    targets: list[ast.expr] = []
    if isinstance(node, ast.Assign):
        targets = [t.value for t in node.targets if isinstance(t, ast.Subscript)]
    elif isinstance(node, ast.Call):
        fn = dotted(node.func)
        if fn in _WRITES and node.args:
            targets = [node.args[0]]
        elif fn == "pl.store" and len(node.args) >= 3:
            targets = [node.args[2]]
    return [b for b in map(base_node, targets) if b is not None]

"""Read a PyPTO layer function with ``ast``: kernels, tasks, tensors, deps, warms.

The reader walks the layer function's body as PyPTO's orchestration would run
it, statement by statement, expanding every ``@pl.jit.inline`` helper it calls
(found in its own module or a sibling module it imports), with the call's
arguments bound to the helper's parameters. A value is a tensor (a layer
parameter, or one made by ``pl.create_tensor``; ``pl.reshape``, ``pl.slice``,
a subscript and ``pl.assemble`` alias the tensor they take), a task (the kernels
a TaskId stands for: a scope's ``as tid``, a ``pl.system.task_dummy`` over
others, an array of them), a constant, a helper, or unknown. A kernel is a
``with pl.at(..., name_hint=)``, ``with pl.spmd(..., name_hint=)`` or ``for …
in pl.spmd(..., name_hint=)`` scope: its reads and writes are every tensor its
body uses (a subscript store, ``pl.assemble``, ``pl.write`` and ``pl.store``
write), its deps the tasks of its ``deps=`` and the last writers of what it
reads or writes (outside ``pl.manual_scope``), as PyPTO's runtime orders them.

What cannot be known without running code is never guessed: a helper chosen at
import time (``hc_pre = _bind_hc_pre()``, on an environment variable) or a branch
on something not constant becomes an ``opaque`` kernel that may read and write
every tensor it is given, with the names its code could give its kernels, and
an ``Unresolved`` note with its line (PC208).

Bounds (``limits``): a file is read up to 4 MiB, at most ``MAX_MODULES``
modules, helpers nest at most ``MAX_DEPTH`` deep and blocks ``MAX_BLOCKS``, a
helper that calls itself is opaque, and one budget pays every statement walked,
node visited and constant evaluated; past a bound the rest is a PC208 note. Given a
deadline (the editor's bound for a check), the budget also looks at the clock and
stops the reading past it (``OutOfTime``), between two of its steps.
Problems reading the layer's own file raise ``SourceError`` (PC200); nothing here
raises anything else for bad input.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Mapping
from dataclasses import replace
from types import MappingProxyType
from typing import Any

from plancc.source import warm_forms
from plancc.source.bound import Unbound
from plancc.source.collectives import called
from plancc.source.copies import is_unroll, unroll_values
from plancc.source.limits import MAX_BLOCKS, MAX_DEPTH, Budget, Deadline, OutOfWork
from plancc.source.modules import SourceError, load_module
from plancc.source.params import read_params
from plancc.source.program import program_entry
from plancc.source.reading import Condition, Kernel, Loop, Param, Reading, Task, Unresolved
from plancc.source.resolver import Resolver
from plancc.source.scopes import ALIASING, SLICING, Frame, Scopes
from plancc.source.values import (
    UNKNOWN,
    ArrayV,
    ChosenV,
    ConstV,
    Dynamic,
    FuncV,
    ScalarV,
    TaskV,
    TensorV,
    TupleV,
    WarmFnV,
    dotted,
    eval_local,
    int_or_none,
    is_incore,
    is_jit,
    is_opaque,
    part_of,
    prefetched,
    roots,
    tensor_only,
    walk,
)
from plancc.text import clip

_BUILTINS = {"range", "len", "int", "float", "print", "max", "min", "list", "tuple", "zip"}

_REST = "the rest of it is not read"

__all__ = ["Reader", "Reading", "SourceError", "read_layer"]


class Reader:
    """One reading of a layer function: the statements walked here, module-level names
    and constants asked of ``resolver`` (which readings of one plan may share), the
    kernels recorded in ``scopes``."""

    def __init__(self, resolver: Resolver) -> None:
        self.resolver = resolver
        self.scopes = Scopes(resolver)
        self.budget = resolver.budget
        self.unbound = Unbound(self.budget)
        self.created = 0
        self.blocks = 0  # blocks under way, one inside another
        self.params: dict[str, Param] = {}  # the layer function's

    def read(self, path: str, function: str) -> Reading:
        first_note = len(self.resolver.notes)
        mod = self.resolver.adopt(os.path.normpath(path), load_module(path))
        node = mod.globals.get(function)
        if not isinstance(node, ast.FunctionDef) or not is_jit(node):
            node = program_entry(mod, function) or node  # a `@pl.program` class
        if not isinstance(node, ast.FunctionDef):
            defined = sorted(n for n, s in mod.globals.items() if isinstance(s, ast.FunctionDef))
            raise SourceError(
                f"{self.resolver.show(path)} defines no function '{function}'"
                + (f" (it defines {', '.join(defined[:8])})" if defined else "")
            )
        params: dict[str, Param] = {}
        shown = self.resolver.show(path)
        try:
            params = read_params(self.resolver, mod, node)
            self.params = params
            frame = Frame(mod, {p: TensorV(p) for p in params if params[p].tensor}, function, 0, ())
            frame.layer = True
            scalars = {a.arg for a in node.args.args if _scalar_param(a)}
            for p in params.values():
                if not p.tensor:
                    frame.env[p.name] = ScalarV(p.name) if p.name in scalars else UNKNOWN
            self.block(frame, node.body)
        except OutOfWork as exc:
            what = f"{function}() needs {exc}"
            self.scopes.unresolved.append(Unresolved(shown, node.lineno, what, _REST))
        except RecursionError:
            what = "the code is too large or deep to read"
            self.scopes.unresolved.append(Unresolved(shown, node.lineno, what))
        unresolved = self.scopes.unresolved + self.resolver.notes[first_note:]
        return Reading(
            self.resolver.show(path),
            function,
            node.lineno,
            params,
            self.scopes.kernels,
            self.scopes.tasks,
            warm_forms.per_layer_rows(self.scopes.warms),
            self.scopes.calls,
            unresolved,
            self.scopes.bound,
            mod,
            self.scopes.inner_tasks(),
        )

    # -- statements

    def block(self, frame: Frame, body: list[ast.stmt]) -> Any:
        """Walk ``body``; the value of the first `return` reached, else None."""
        if self.blocks >= MAX_BLOCKS:
            what = f"code nested more than {MAX_BLOCKS} blocks deep (inlined helpers counted)"
            self.scopes.opaque(frame, ast.Module(body, []), what, line=body[0].lineno)
            return None
        self.blocks += 1
        try:
            for stmt in body:
                self.budget.spend()
                result = self.stmt(frame, stmt)
                if result is not None:
                    return result
            return None
        finally:
            self.blocks -= 1

    def stmt(self, frame: Frame, stmt: ast.stmt) -> Any:  # noqa: C901 (one branch per Python construct the reader follows)
        if isinstance(stmt, ast.Return):
            return self.value(frame, stmt.value) if stmt.value is not None else ConstV(None)
        if isinstance(stmt, ast.Assign):
            value = self.value(frame, stmt.value, targets=stmt.targets)
            for t in stmt.targets:
                self.assign(frame, t, value, stmt)
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            self.assign(frame, stmt.target, self.value(frame, stmt.value), stmt)
        elif isinstance(stmt, ast.AugAssign):
            pass
        elif isinstance(stmt, ast.Expr):
            self.value(frame, stmt.value)
        elif isinstance(stmt, ast.With):
            return self.with_(frame, stmt)
        elif isinstance(stmt, ast.For):
            return self.for_(frame, stmt)
        elif isinstance(stmt, ast.If):
            return self.if_(frame, stmt)
        elif isinstance(stmt, (ast.While, ast.Try)):
            self.scopes.opaque(frame, stmt, "a loop or try block outside a kernel")
        return None

    def assign(self, frame: Frame, target: ast.expr, value: Any, stmt: ast.stmt) -> None:
        if isinstance(target, ast.Name):
            frame.env[target.id] = value
            frame.rebound.add(target.id)
            span = None
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                span = self.scopes.span(frame, frame.spans, stmt.value, None)
            if span is None:
                frame.spans.pop(target.id, None)
            else:
                frame.spans[target.id] = span
            if isinstance(value, TaskV):
                file = self.resolver.show(frame.module.path)
                task = Task(
                    target.id, value.kernels, file, stmt.lineno, value.opaque, last=_last(stmt)
                )
                self.scopes.task(frame, task)
        elif isinstance(target, (ast.Tuple, ast.List)):
            items = value.items if isinstance(value, TupleV) else ()
            for i, t in enumerate(target.elts):
                v = items[i] if i < len(items) else (value if is_opaque(value) else UNKNOWN)
                self.assign(frame, t, v, stmt)
        elif isinstance(target, ast.Subscript):
            base = self.value(frame, target.value)
            if isinstance(base, ArrayV) and isinstance(value, TaskV):
                self.budget.spend(len(value.kernels))  # a task set is as large as the code
                base.kernels |= value.kernels
            elif isinstance(base, TensorV):  # `out[b : b + 1, :] = row` outside kernels
                self.scopes.carry(base, value)

    def with_(self, frame: Frame, stmt: ast.With) -> Any:
        for item in stmt.items:
            ctx = item.context_expr
            name = dotted(ctx.func) if isinstance(ctx, ast.Call) else ""
            if name in ("pl.at", "pl.spmd") and isinstance(ctx, ast.Call):
                var = item.optional_vars
                tid = var.id if isinstance(var, ast.Name) else None
                self.scopes.scope(frame, ctx, stmt.body, stmt, tid, spmd_for=False)
                return None
            if name == "pl.manual_scope":
                self.scopes.manual += 1
                try:
                    return self.block(frame, stmt.body)
                finally:
                    self.scopes.manual -= 1
        return self.block(frame, stmt.body)

    def for_(self, frame: Frame, stmt: ast.For) -> Any:
        it = stmt.iter
        if isinstance(it, ast.Call) and dotted(it.func) == "pl.spmd":
            self.scopes.scope(frame, it, stmt.body, stmt, None, spmd_for=True)
            return None
        # A loop outside kernels runs its scopes many times: each is one kernel; an
        # unrolled one is read once per copy, its variable a constant (copies.py).
        values = unroll_values(it, lambda a: self.const_in(frame, a))
        for n in walk(stmt.target, self.budget):
            if isinstance(n, ast.Name):
                frame.env[n.id] = ConstV(UNKNOWN)
                frame.spans.pop(n.id, None)
        before = dict(frame.spans)
        var = stmt.target.id if isinstance(stmt.target, ast.Name) else None
        bounds = self.bounds(frame, it)
        if var is not None and bounds is not None:
            frame.spans[var] = (*bounds, 1)
        file = self.resolver.show(frame.module.path)
        first = len(self.scopes.kernels)
        loop = Loop(file, stmt.lineno, ast.unparse(stmt.target), first, last=_last(stmt))
        outer = frame.loops
        frame.loops = (*outer, loop)
        try:
            if values is None:
                if is_unroll(it):
                    what = (
                        "an unrolled loop whose count is no known constant (or past 1,024 copies)"
                    )
                    note = "read once: its later copies are not named"
                    self.scopes.unresolved.append(Unresolved(file, stmt.lineno, what, note))
                return self.block(frame, stmt.body)
            with self.scopes.copies.unroll() as next_copy:
                for v in values:
                    next_copy()
                    if isinstance(stmt.target, ast.Name):
                        frame.env[stmt.target.id] = ConstV(v)
                    result = self.block(frame, stmt.body)
                    if result is not None:
                        return result
            return None
        finally:
            frame.loops = outer
            # Past the loop a name holds one value: spans set inside it end with it.
            frame.spans = {n: s for n, s in before.items() if frame.spans.get(n) == s}
            loop.end = len(self.scopes.kernels)

    def bounds(self, frame: Frame, it: ast.expr) -> tuple[int, int] | None:
        """[lo, hi) of `pl.parallel` / `pl.range` / `pl.unroll` with constant bounds and
        step 1 (no keyword), else None."""
        loops = ("pl.parallel", "pl.range", "pl.unroll")
        if not (isinstance(it, ast.Call) and dotted(it.func) in loops) or it.keywords:
            return None
        args = [int_or_none(self.const_in(frame, a)) for a in it.args]
        if len(args) == 3 and args[2] == 1:
            args = args[:2]
        if len(args) == 1:
            args = [0, *args]
        if len(args) != 2 or args[0] is None or args[1] is None or args[0] >= args[1]:
            return None
        return (args[0], args[1])

    def if_(self, frame: Frame, stmt: ast.If) -> Any:
        test = self.const_in(frame, stmt.test)
        if isinstance(test, (bool, int, str, float)) and not isinstance(test, Dynamic):
            return self.block(frame, stmt.body if test else stmt.orelse)
        found = self.warm_if(frame, stmt)
        if found is not None:  # a guard, or a cross-layer warm spared the last layer
            self.scopes.conditions.append(found)
            try:
                return self.block(frame, stmt.body)
            finally:
                self.scopes.conditions.pop()
        self.scopes.opaque(frame, stmt, "a branch on something not constant")
        return None

    def warm_if(self, frame: Frame, stmt: ast.If) -> Condition | None:
        """The condition of an `if` a warm is issued under (warm_forms.condition): one on a
        scalar of the layer, with no `else`, holding nothing but warms: calls of generated
        warm functions, prefetch scopes, the views they take, such `if`s."""
        if stmt.orelse:
            return None

        def scalar(n: ast.expr) -> str | None:
            v = frame.env.get(n.id) if isinstance(n, ast.Name) else None
            return v.name if isinstance(v, ScalarV) else None

        found = warm_forms.condition(stmt.test, scalar, lambda n: self.const_in(frame, n))
        if found is None or not all(self.warm_only(frame, s) for s in stmt.body):
            return None
        return found

    def warm_only(self, frame: Frame, stmt: ast.stmt) -> bool:
        if isinstance(stmt, ast.Pass):
            return True
        if isinstance(stmt, ast.If):
            return self.warm_if(frame, stmt) is not None
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            value = stmt.value
            return isinstance(value, ast.Call) and dotted(value.func) in ("pl.slice", "pl.reshape")
        if isinstance(stmt, ast.With):
            ctx = stmt.items[0].context_expr if len(stmt.items) == 1 else None
            at = isinstance(ctx, ast.Call) and dotted(ctx.func) == "pl.at"
            return at and prefetched(self.scopes.nodes(stmt.body)) is not None
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            callee = self.value(frame, stmt.value.func)
            return isinstance(callee, WarmFnV) or self.generated(callee) is not None
        return False

    def dims(self, root: str) -> list[int | None] | None:
        """The annotated dims of the layer's tensor parameter ``root``, when it has them."""
        p = self.params.get(root)
        return list(p.values) if p is not None and p.tensor and p.values else None

    def const_in(self, frame: Frame, node: ast.expr) -> Any:
        names = {n.id for n in walk(node, self.budget) if isinstance(n, ast.Name)}
        for n in names:
            v = frame.env.get(n)
            if v is not None and not isinstance(v, ConstV):
                return UNKNOWN
            if isinstance(v, ConstV) and v.value is UNKNOWN:
                return UNKNOWN
        if names & frame.env.keys():
            env = {n: frame.env[n].value for n in names & frame.env.keys()}
            return eval_local(node, env, lambda e: self.resolver.const(frame.module, e))
        return self.resolver.const(frame.module, node)

    def value(self, frame: Frame, node: ast.expr, targets: list[ast.expr] | None = None) -> Any:  # noqa: C901 (one branch per Python construct the reader follows)
        if isinstance(node, ast.Name):
            if node.id in frame.env:
                return frame.env[node.id]
            return self.resolver.global_value(frame.module, node.id)
        if isinstance(node, ast.Constant):
            return ConstV(node.value)
        if isinstance(node, ast.Tuple):
            return TupleV(tuple(self.value(frame, e) for e in node.elts))
        if isinstance(node, ast.Subscript):
            base = self.value(frame, node.value)
            if isinstance(base, ArrayV):
                return TaskV(frozenset(base.kernels))
            if isinstance(base, TupleV) and isinstance(node.slice, ast.Constant):
                i = node.slice.value
                if isinstance(i, int) and -len(base.items) <= i < len(base.items):
                    return base.items[i]
            return part_of(base)
        if isinstance(node, ast.Attribute):
            return self.resolver.member(self.value(frame, node.value), node.attr)
        if isinstance(node, ast.Call):
            return self.call(frame, node)
        if isinstance(node, (ast.BinOp, ast.Compare, ast.UnaryOp, ast.BoolOp)):
            return ConstV(self.const_in(frame, node))
        return UNKNOWN

    def call(self, frame: Frame, node: ast.Call) -> Any:  # noqa: C901, PLR0912 (one branch per Python construct the reader follows)
        fn = dotted(node.func)
        if fn == "pl.create_tensor":
            self.created += 1
            return TensorV(f"#{self.created}")
        if fn in ALIASING and node.args:
            taken = self.value(frame, node.args[0])
            if fn == "pl.assemble" and len(node.args) > 1:  # outside kernels: a copy into it
                self.scopes.carry(taken, self.value(frame, node.args[1]))
            if fn == "pl.slice":  # a slab of a stack, a prefix (warm_forms.py)?
                found = warm_forms.slab(
                    node,
                    taken,
                    lambda n: self.value(frame, n),
                    lambda n: self.const_in(frame, n),
                    self.dims,
                )
                if found is not None:
                    return found
            return part_of(taken) if fn in SLICING else tensor_only(taken)
        if fn == "pl.system.task_dummy":
            kernels: set[int] = set()
            for kw in node.keywords:
                if kw.arg == "deps":
                    for n in walk(kw.value, self.budget):
                        if isinstance(n, ast.Name):
                            v = frame.env.get(n.id)
                            if isinstance(v, (TaskV, ArrayV)):
                                self.budget.spend(len(v.kernels))
                                kernels |= set(v.kernels)
            return TaskV(frozenset(kernels))
        if fn == "pl.array.create":
            return ArrayV()
        if fn.startswith("pl.") or fn.startswith("pypto."):
            return UNKNOWN
        callee = self.value(frame, node.func)
        args = [self.value(frame, a) for a in node.args]
        kwargs = {kw.arg: self.value(frame, kw.value) for kw in node.keywords if kw.arg}
        if isinstance(callee, WarmFnV):  # of a generated module that is not read
            self.warm_call(frame, node, callee.name, (args, kwargs))
            return ConstV(None)
        sig = self.generated(callee)
        if sig is not None:  # a function of the generated form, wherever it is defined
            self.warm_call(frame, node, callee.node.name, (args, kwargs), sig)
            return ConstV(None)
        if isinstance(callee, ChosenV):
            self.scopes.opaque(
                frame,
                node,
                f"helper '{fn}' is chosen at import time ({callee.file}:{callee.line}{callee.why})",
                [*args, *kwargs.values()],
                callee.names,
            )
            return TaskV(frozenset(), opaque=True)
        if isinstance(callee, FuncV) and is_incore(callee.node):
            return self.incore(frame, node, callee, args, kwargs)
        if isinstance(callee, FuncV) and is_jit(callee.node):
            return self.inline(frame, node, callee, args, kwargs)
        given = [*args, *kwargs.values()]
        builtin = isinstance(node.func, ast.Name) and node.func.id in _BUILTINS
        if any(roots(a) for a in given) and not builtin and not _cut(node.func, self.budget):
            # A plain function given tensors, or a call resolved to no function: what it
            # does with them is not read, and never taken to be nothing.
            name = fn or clip(ast.unparse(node.func))
            what = (
                f"'{name}' is not a @pl.jit.inline helper the reader can follow"
                if isinstance(callee, FuncV)
                else f"call of '{name}' is resolved to no function the reader can read"
            )
            self.scopes.opaque(frame, node, what, given)
            return TaskV(frozenset(), opaque=True)
        return UNKNOWN

    def inline(
        self, frame: Frame, node: ast.Call, callee: FuncV, args: list[Any], kwargs: dict[str, Any]
    ) -> Any:
        key = f"{callee.module.path}:{callee.node.name}"
        if key in frame.stack or frame.depth >= MAX_DEPTH:
            why = "calls itself" if key in frame.stack else f"nests more than {MAX_DEPTH} deep"
            self.scopes.opaque(
                frame, node, f"helper '{callee.node.name}' {why}", [*args, *kwargs.values()]
            )
            return TaskV(frozenset(), opaque=True)
        fn = callee.node
        names = [a.arg for a in [*fn.args.posonlyargs, *fn.args.args]]
        env: dict[str, Any] = {}
        for i, a in enumerate(args):
            if i < len(names):
                env[names[i]] = a
        for k, v in kwargs.items():
            env[k] = v
        for a in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]:
            env.setdefault(a.arg, UNKNOWN)
        inner = Frame(
            callee.module, env, fn.name, frame.depth + 1, (*frame.stack, key), loops=frame.loops
        )
        result = self.block(inner, fn.body)
        return UNKNOWN if result is None else result

    def incore(
        self, frame: Frame, node: ast.Call, callee: FuncV, args: list[Any], kwargs: dict[str, Any]
    ) -> Any:
        """A call of a `@pl.jit.incore` function: one kernel, named after the function,
        that reads the tensors it is given and writes those its `pl.Out`/`pl.InOut`
        parameters take; its order is what those say. It returns what its `return` names
        of its parameters."""
        fn = callee.node
        params = [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]
        bound = {a.arg: v for a, v in zip(params, args, strict=False)} | kwargs
        file = self.resolver.show(callee.module.path)
        k = Kernel(
            len(self.scopes.kernels), self.scopes.names.take(fn.name), fn.name, file, fn.lineno
        )
        k.copy_of = self.scopes.copy_of(frame, node, k.index)
        k.collectives = called(callee.module, self.scopes.nodes(fn.body), self.budget)
        for a in params:
            given = roots(bound.get(a.arg))
            ann = a.annotation
            wrapper = dotted(ann.value) if isinstance(ann, ast.Subscript) else ""
            if wrapper in ("pl.Out", "pl.InOut"):
                k.writes |= given
            if wrapper != "pl.Out":
                k.reads |= given
        self.scopes.add(k)
        ret = next((s for s in reversed(fn.body) if isinstance(s, ast.Return)), None)
        items = ret.value.elts if ret and isinstance(ret.value, ast.Tuple) else [ret and ret.value]
        out = [bound.get(e.id, UNKNOWN) if isinstance(e, ast.Name) else UNKNOWN for e in items]
        return TupleV(tuple(out)) if len(out) > 1 else out[0]

    def generated(self, callee: Any) -> warm_forms.Signature | None:
        """The signature of a generated warm function ``callee`` is (warm_forms.py)."""
        if not (isinstance(callee, FuncV) and is_jit(callee.node)):
            return None
        return warm_forms.signature(callee.node, lambda n: self.resolver.const(callee.module, n))

    def warm_call(
        self,
        frame: Frame,
        node: ast.Call,
        function: str,
        given: tuple[list[Any], dict[str, Any]],
        sig: warm_forms.Signature | None = None,
    ) -> None:
        """A call of a generated warm function: the warm it issues (warm_forms.py)."""
        where = (self.resolver.show(frame.module.path), node.lineno)
        under = tuple(self.scopes.conditions)
        found = warm_forms.call(function, node, *given, where=where, sig=sig, under=under)
        args = (*node.args, *(k.value for k in node.keywords))
        if passed := [a.id for a in args if isinstance(a, ast.Name)]:
            missing = self.unbound(frame.module, frame.function, node.lineno, passed)
            found = replace(found, unbound=missing)
        site = ("call", id(node), frame.stack)
        if self.scopes.copies.first(site, len(self.scopes.calls)) is not None:
            found = replace(found, copy=True)  # a later copy of an unrolled call
        self.scopes.calls.append(found)


def _scalar_param(a: ast.arg) -> bool:
    """A `pl.Scalar[...]` parameter other than a TaskId: its variable names a layer index."""
    ann = a.annotation
    return (
        isinstance(ann, ast.Subscript)
        and dotted(ann.value) == "pl.Scalar"
        and dotted(ann.slice) != "pl.TASK_ID"
    )


def _cut(node: ast.expr, budget: Budget) -> bool:
    """Whether ``node`` was cut where it nests too deep (modules.py): noted there already."""
    return any(isinstance(n, ast.Constant) and n.value is Ellipsis for n in walk(node, budget))


def _last(stmt: ast.stmt) -> int:
    """The last line of a statement (its block's, for a compound one)."""
    return stmt.end_lineno or stmt.lineno


def read_layer(
    path: str,
    function: str,
    root: str | None = None,
    defines: Mapping[str, object] = MappingProxyType({}),
    deadline: Deadline | None = None,
) -> Reading:
    """The reading of ``function`` in the Python file ``path`` (SourceError: PC200), the
    code's run-time choices taken as ``defines`` says (choices.py), else at their default.
    Past ``deadline`` it stops with its work (OutOfTime: the editor's bound, ``cache``)."""
    resolver = Resolver(root, Budget(deadline=deadline))
    resolver.defines = defines
    return Reader(resolver).read(path, function)

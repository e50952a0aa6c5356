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

Bounds: a file is read up to 4 MiB, at most ``MAX_MODULES`` modules, helpers
nest at most ``MAX_DEPTH`` deep, a helper that calls itself is opaque, and at
most ``MAX_STEPS`` statements are walked. Problems reading the layer's own file
raise ``SourceError`` (PC200); nothing here raises anything else for bad input.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

MAX_BYTES = 4 * 1024 * 1024
MAX_MODULES = 64
MAX_DEPTH = 32
MAX_STEPS = 200_000
_SPMD_SUFFIX = "_spmd"


class SourceError(Exception):
    """The layer's source cannot be read; the message says what and where (PC200)."""


# ---------------------------------------------------------------------------
# What a reading gives


@dataclass(frozen=True)
class Param:
    name: str
    line: int
    tensor: bool  # a `pl.Tensor[...]` (also inside `pl.Out[...]`/`pl.InOut[...]`)
    dims: tuple[ast.expr, ...] = ()  # the annotation's shape entries
    values: tuple[int | None, ...] = ()  # their values; None: dynamic or unknown
    dtype: str | None = None  # the plan's name of the dtype (`bf16`), None when unknown
    dynamic: tuple[bool, ...] = ()  # which dims are `pl.dynamic(...)`


@dataclass
class Kernel:
    index: int
    name: str  # as PyPTO names it: the name_hint, `_0`, `_1`, ... on repeats
    hint: str
    file: str
    line: int
    task: str | None = None  # the `as` variable, in its own function
    reads: set[str] = field(default_factory=set)  # tensor roots
    writes: set[str] = field(default_factory=set)
    deps: set[int] = field(default_factory=set)  # explicit: `deps=` (task_dummy mapped through)
    after: set[int] = field(default_factory=set)  # the last writers of what it reads or writes
    opaque: bool = False  # an unresolved helper or branch: may read and write all it is given
    names: frozenset[str] = frozenset()  # an opaque kernel: the names its code could give


@dataclass(frozen=True)
class Warm:
    """An `async_prefetch` scope in the code."""

    name_hint: str
    file: str
    line: int
    tensors: tuple[str, ...]  # roots, in issue order
    deps: frozenset[int]  # kernels it waits for
    dep_names: tuple[str, ...]  # the task variables of its `deps=`


@dataclass(frozen=True)
class WarmCall:
    """A call of a function of a generated warm module (`from x_warms import w`)."""

    function: str
    file: str
    line: int
    tensors: tuple[str | None, ...]  # roots of its tensor arguments
    task: str | None  # the variable of its last (TaskId) argument
    deps: frozenset[int]


@dataclass(frozen=True)
class Unresolved:
    file: str
    line: int
    what: str


@dataclass(frozen=True)
class Task:
    """A TaskId variable of the layer function."""

    name: str
    kernels: frozenset[int]
    file: str
    line: int
    opaque: bool = False  # bound to the result of something unresolved


@dataclass
class Reading:
    file: str
    function: str
    line: int
    params: dict[str, Param]
    kernels: list[Kernel]
    tasks: dict[str, Task]  # the layer function's TaskId variables
    warms: list[Warm]
    calls: list[WarmCall]
    unresolved: list[Unresolved]
    bound: dict[str, tuple[str, int]]  # every `as` task variable anywhere -> (file, line)
    module: Module

    def kernel(self, name: str) -> Kernel | None:
        for k in self.kernels:
            if not k.opaque and k.name == name:
                return k
        return None

    @property
    def possible(self) -> frozenset[str]:
        """Kernel names that unresolved code could give."""
        return frozenset(n for k in self.kernels if k.opaque for n in k.names)

    def params_of(self, roots: set[str]) -> set[str]:
        return {r for r in roots if r in self.params}


# ---------------------------------------------------------------------------
# Modules: parsed once, kept while the file is unchanged


@dataclass
class Module:
    path: str
    name: str
    tree: ast.Module
    globals: dict[str, ast.stmt]


_CACHE: dict[str, tuple[tuple[int, int], Module | str]] = {}


def _stamp(path: str) -> tuple[int, int]:
    st = os.stat(path)
    return (st.st_mtime_ns, st.st_size)


def load_module(path: str) -> Module:
    """The parsed module at ``path``; parsed again only when its mtime or size changed.
    Raises SourceError when it is missing, unreadable, too large or not Python."""
    try:
        stamp = _stamp(path)
    except (OSError, ValueError) as exc:
        raise SourceError(f"cannot read {path}: {_reason(exc)}") from None
    hit = _CACHE.get(path)
    if hit is None or hit[0] != stamp:
        hit = (stamp, _parse(path))
        _CACHE[path] = hit
    if isinstance(hit[1], str):
        raise SourceError(hit[1])
    return hit[1]


def _reason(exc: BaseException) -> str:
    return getattr(exc, "strerror", None) or str(exc) or type(exc).__name__


def _parse(path: str) -> Module | str:
    try:
        if not os.path.isfile(path):
            return f"{path} is not a file"
        with open(path, "rb") as f:
            raw = f.read(MAX_BYTES + 1)
        if len(raw) > MAX_BYTES:
            return f"{path} is larger than 4 MiB"
        tree = ast.parse(raw, filename=path)
    except SyntaxError as exc:
        return f"{path}:{exc.lineno or 1}: does not parse: {exc.msg}"
    except (OSError, ValueError) as exc:
        return f"cannot read {path}: {_reason(exc)}"
    except (RecursionError, MemoryError):
        return f"{path} nests too deeply to parse"
    name = os.path.splitext(os.path.basename(path))[0]
    return Module(path, name, tree, _globals(tree))


def _globals(tree: ast.Module) -> dict[str, ast.stmt]:
    """The module's top-level names, each to the statement that binds it last."""
    out: dict[str, ast.stmt] = {}
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out[stmt.name] = stmt
        elif isinstance(stmt, ast.Assign):
            for t in stmt.targets:
                if isinstance(t, ast.Name):
                    out[t.id] = stmt
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            if stmt.value is not None:
                out[stmt.target.id] = stmt
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            for alias in stmt.names:
                if alias.name != "*":
                    out[(alias.asname or alias.name).split(".")[0]] = stmt
    return out


# ---------------------------------------------------------------------------
# Values


@dataclass(frozen=True)
class TensorV:
    root: str


@dataclass(frozen=True)
class TaskV:
    kernels: frozenset[int]
    opaque: bool = False


@dataclass(eq=False)
class ArrayV:
    """`pl.array.create(n, pl.TASK_ID)`: tasks stored into it by subscript."""

    kernels: set[int] = field(default_factory=set)


@dataclass(frozen=True)
class FuncV:
    module: Module
    node: ast.FunctionDef


@dataclass(frozen=True)
class ChosenV:
    """A helper chosen at import time: which one is known only by running the module."""

    file: str
    line: int
    why: str
    names: frozenset[str]  # the kernel names any choice could give


@dataclass(frozen=True)
class WarmFnV:
    module: str
    name: str


@dataclass(frozen=True)
class ModV:
    module: Module | None
    name: str


@dataclass(frozen=True)
class TupleV:
    items: tuple[Any, ...]


@dataclass(frozen=True)
class ConstV:
    value: Any


@dataclass(frozen=True)
class Dynamic:
    name: str


@dataclass(frozen=True)
class Instance:
    """A config object: `FLASH = DeepSeekV4Config(hidden_size=4096, ...)`."""

    module: Module
    call: ast.Call


class _Unknown:
    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN: Any = _Unknown()
_PL_TENSOR_WRAPPERS = {"Out", "InOut", "In"}


def is_warm_module(name: str) -> bool:
    """A generated warm module: `<model>_warms` (plancc build's output)."""
    return name.endswith("_warms")


# ---------------------------------------------------------------------------
# The reader


class _Budget(Exception):
    pass


@dataclass
class _Frame:
    module: Module
    env: dict[str, Any]
    function: str
    depth: int
    stack: tuple[str, ...]
    layer: bool = False  # the layer function itself: its TaskId variables are its tasks


class Reader:
    def __init__(self, root: str | None = None) -> None:
        self.root = root  # paths in messages are relative to it
        self.kernels: list[Kernel] = []
        self.taken: set[str] = set()
        self.warms: list[Warm] = []
        self.calls: list[WarmCall] = []
        self.unresolved: list[Unresolved] = []
        self.tasks: dict[str, Task] = {}
        self.bound: dict[str, tuple[str, int]] = {}
        self.writers: dict[str, set[int]] = {}
        self.created = 0
        self.steps = 0
        self.modules: dict[str, Module] = {}
        self.manual = 0
        self.const_stack: set[tuple[str, str]] = set()

    # -- paths and modules

    def show(self, path: str) -> str:
        if self.root:
            try:
                rel = os.path.relpath(path, self.root)
            except ValueError:
                return path
            if not rel.startswith(".."):
                return rel.replace(os.sep, "/")
        return path

    def module(self, path: str) -> Module | None:
        path = os.path.normpath(path)
        if path in self.modules:
            return self.modules[path]
        if len(self.modules) >= MAX_MODULES:
            return None
        try:
            mod = load_module(path)
        except SourceError:
            return None
        self.modules[path] = mod
        return mod

    def sibling(self, mod: Module, name: str, level: int) -> Module | None:
        base = os.path.dirname(mod.path)
        for _ in range(max(level - 1, 0)):
            base = os.path.dirname(base)
        parts = name.split(".") if name else []
        for candidate in (
            os.path.join(base, *parts) + ".py",
            os.path.join(base, *parts, "__init__.py"),
        ):
            if parts and os.path.isfile(candidate):
                return self.module(candidate)
        return None

    # -- module-level names

    def global_value(self, mod: Module, name: str, depth: int = 0) -> Any:
        stmt = mod.globals.get(name)
        if stmt is None or depth > MAX_DEPTH:
            return UNKNOWN
        if isinstance(stmt, ast.FunctionDef):
            return FuncV(mod, stmt)
        if isinstance(stmt, ast.ImportFrom):
            for alias in stmt.names:
                if (alias.asname or alias.name) == name:
                    if is_warm_module(stmt.module or ""):
                        return WarmFnV(stmt.module or "", alias.name)
                    other = self.sibling(mod, stmt.module or "", stmt.level or 1)
                    if other is None:
                        return UNKNOWN
                    if alias.name in other.globals:
                        return self.global_value(other, alias.name, depth + 1)
                    sub = self.sibling(other, alias.name, 1)
                    return ModV(sub, alias.name) if sub is not None else UNKNOWN
            return UNKNOWN
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                bound = (alias.asname or alias.name).split(".")[0]
                if bound == name:
                    if alias.name == "pypto.language":
                        return ModV(None, "pl")
                    return ModV(self.sibling(mod, alias.name, 1), alias.name)
            return UNKNOWN
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
            value = stmt.value
            if isinstance(value, ast.Call):
                callee = self.global_callee(mod, value.func, depth)
                if isinstance(callee, FuncV) and not _is_jit(callee.node):
                    # `hc_pre = _bind_hc_pre()`: which function it returns is decided
                    # by running the module (an environment variable, a flag).
                    why = _choice_reason(callee.module, callee.node)
                    names = _hints_reachable(callee.module, callee.node)
                    return ChosenV(self.show(mod.path), stmt.lineno, why, names)
                if isinstance(callee, ClassV):
                    return Instance(mod, value)
            if isinstance(value, ast.Name):
                return self.global_value(mod, value.id, depth + 1)
            return ConstV(self.const(mod, value))
        if isinstance(stmt, ast.ClassDef):
            return ClassV(mod, stmt)
        return UNKNOWN

    def global_callee(self, mod: Module, node: ast.expr, depth: int) -> Any:
        if isinstance(node, ast.Name):
            return self.global_value(mod, node.id, depth + 1)
        return UNKNOWN

    # -- constants

    def const(self, mod: Module, node: ast.expr, self_obj: Any = None) -> Any:
        """The value of a module-level expression: int, float, bool, str, Dynamic,
        Instance, or UNKNOWN."""
        try:
            return self._const(mod, node, self_obj, 0)
        except (RecursionError, ZeroDivisionError, OverflowError, TypeError, ValueError):
            return UNKNOWN

    def _const(self, mod: Module, node: ast.expr, self_obj: Any, depth: int) -> Any:
        if depth > 64:
            return UNKNOWN
        if isinstance(node, ast.Constant):
            v = node.value
            return v if isinstance(v, (int, float, str, bool)) else UNKNOWN
        if isinstance(node, ast.Name):
            key = (mod.path, node.id)
            if key in self.const_stack:
                return UNKNOWN
            self.const_stack.add(key)
            try:
                v = self.global_value(mod, node.id)
            finally:
                self.const_stack.discard(key)
            if isinstance(v, ConstV):
                return v.value
            if isinstance(v, Instance):
                return v
            return UNKNOWN
        if isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name) and node.value.id == "self":
                base = self_obj
            else:
                base = self._const(mod, node.value, self_obj, depth + 1)
            if isinstance(base, Instance):
                return self.attribute(base, node.attr, depth)
            return UNKNOWN
        if isinstance(node, ast.BinOp):
            a = self._const(mod, node.left, self_obj, depth + 1)
            b = self._const(mod, node.right, self_obj, depth + 1)
            return _binop(node.op, a, b)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            a = self._const(mod, node.operand, self_obj, depth + 1)
            return -a if _number(a) else UNKNOWN
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            a = self._const(mod, node.left, self_obj, depth + 1)
            b = self._const(mod, node.comparators[0], self_obj, depth + 1)
            return _compare(node.ops[0], a, b)
        if isinstance(node, ast.BoolOp):
            vals = [self._const(mod, v, self_obj, depth + 1) for v in node.values]
            if any(v is UNKNOWN for v in vals):
                return UNKNOWN
            return all(vals) if isinstance(node.op, ast.And) else any(vals)
        if isinstance(node, ast.Call):
            return self._const_call(mod, node, self_obj, depth)
        return UNKNOWN

    def _const_call(self, mod: Module, node: ast.Call, self_obj: Any, depth: int) -> Any:
        name = _dotted(node.func)
        if name == "pl.dynamic":
            arg = node.args[0] if node.args else None
            label = arg.value if isinstance(arg, ast.Constant) else "dynamic"
            return Dynamic(str(label))
        args = [self._const(mod, a, self_obj, depth + 1) for a in node.args]
        if node.keywords or any(a is UNKNOWN or isinstance(a, Instance) for a in args):
            return UNKNOWN
        if name == "int" and len(args) == 1 and _number(args[0]):
            return int(args[0])
        if name in ("max", "min") and args and all(_number(a) for a in args):
            return max(args) if name == "max" else min(args)
        return UNKNOWN

    def attribute(self, obj: Instance, attr: str, depth: int = 0) -> Any:
        for kw in obj.call.keywords:
            if kw.arg == attr:
                return self._const(obj.module, kw.value, None, depth + 1)
        cls = self.global_callee(obj.module, obj.call.func, 0)
        if isinstance(cls, ClassV):
            for stmt in cls.node.body:
                if isinstance(stmt, ast.FunctionDef) and stmt.name == attr:
                    for inner in stmt.body:
                        if isinstance(inner, ast.Return) and inner.value is not None:
                            return self._const(cls.module, inner.value, obj, depth + 1)
        return UNKNOWN

    # -- reading a layer

    def read(self, path: str, function: str) -> Reading:
        mod = load_module(path)
        self.modules[os.path.normpath(path)] = mod
        node = mod.globals.get(function)
        if not isinstance(node, ast.FunctionDef):
            defined = sorted(n for n, s in mod.globals.items() if isinstance(s, ast.FunctionDef))
            raise SourceError(
                f"{self.show(path)} defines no function '{function}'"
                + (f" (it defines {', '.join(defined[:8])})" if defined else "")
            )
        params = self.params(mod, node)
        frame = _Frame(mod, {p: TensorV(p) for p in params if params[p].tensor}, function, 0, ())
        frame.layer = True
        for p in params.values():
            if not p.tensor:
                frame.env[p.name] = UNKNOWN
        try:
            self.block(frame, node.body)
        except _Budget:
            self.unresolved.append(
                Unresolved(self.show(path), node.lineno, "the code is too large to read whole")
            )
        return Reading(
            self.show(path),
            function,
            node.lineno,
            params,
            self.kernels,
            self.tasks,
            self.warms,
            self.calls,
            self.unresolved,
            self.bound,
            mod,
        )

    def params(self, mod: Module, fn: ast.FunctionDef) -> dict[str, Param]:
        out: dict[str, Param] = {}
        for arg in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]:
            out[arg.arg] = self.param(mod, arg)
        return out

    def param(self, mod: Module, arg: ast.arg) -> Param:
        ann = arg.annotation
        while isinstance(ann, ast.Subscript) and _dotted(ann.value) in {
            f"pl.{w}" for w in _PL_TENSOR_WRAPPERS
        }:
            ann = ann.slice
        if not (isinstance(ann, ast.Subscript) and _dotted(ann.value) == "pl.Tensor"):
            return Param(arg.arg, arg.lineno, False)
        parts = ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
        dims: tuple[ast.expr, ...] = ()
        dtype = None
        if parts and isinstance(parts[0], (ast.List, ast.Tuple)):
            dims = tuple(parts[0].elts)
        if len(parts) > 1:
            d = _dotted(parts[1])
            if d.startswith("pl."):
                dtype = d[3:].lower()
        consts = [self.const(mod, d) for d in dims]
        values = tuple(_int_or_none(v) for v in consts)
        dynamic = tuple(isinstance(v, Dynamic) for v in consts)
        return Param(arg.arg, arg.lineno, True, dims, values, dtype, dynamic)

    # -- statements

    def step(self) -> None:
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise _Budget

    def block(self, frame: _Frame, body: list[ast.stmt]) -> Any:
        """Walk ``body``; the value of the first `return` reached, else None."""
        for stmt in body:
            self.step()
            result = self.stmt(frame, stmt)
            if result is not None:
                return result
        return None

    def stmt(self, frame: _Frame, stmt: ast.stmt) -> Any:
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
            self.opaque(frame, stmt, "a loop or try block outside a kernel")
        return None

    def assign(self, frame: _Frame, target: ast.expr, value: Any, stmt: ast.stmt) -> None:
        if isinstance(target, ast.Name):
            frame.env[target.id] = value
            if frame.layer and isinstance(value, TaskV):
                self.tasks[target.id] = Task(
                    target.id,
                    value.kernels,
                    self.show(frame.module.path),
                    stmt.lineno,
                    value.opaque,
                )
        elif isinstance(target, (ast.Tuple, ast.List)):
            items = value.items if isinstance(value, TupleV) else ()
            for i, t in enumerate(target.elts):
                v = items[i] if i < len(items) else (value if _opaque(value) else UNKNOWN)
                self.assign(frame, t, v, stmt)
        elif isinstance(target, ast.Subscript):
            base = self.value(frame, target.value)
            if isinstance(base, ArrayV) and isinstance(value, TaskV):
                base.kernels |= value.kernels

    def if_(self, frame: _Frame, stmt: ast.If) -> Any:
        test = self.const_in(frame, stmt.test)
        if isinstance(test, (bool, int, str, float)) and not isinstance(test, Dynamic):
            return self.block(frame, stmt.body if test else stmt.orelse)
        self.opaque(frame, stmt, "a branch on something not constant")
        return None

    def const_in(self, frame: _Frame, node: ast.expr) -> Any:
        names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
        for n in names:
            v = frame.env.get(n)
            if v is not None and not isinstance(v, ConstV):
                return UNKNOWN
            if isinstance(v, ConstV) and v.value is UNKNOWN:
                return UNKNOWN
        if names & frame.env.keys():
            env = {n: frame.env[n].value for n in names & frame.env.keys()}
            return _eval_local(node, env, lambda e: self.const(frame.module, e))
        return self.const(frame.module, node)

    def opaque(
        self,
        frame: _Frame,
        node: ast.AST,
        what: str,
        args: list[Any] | None = None,
        names: frozenset[str] = frozenset(),
    ) -> None:
        """Code that cannot be followed: a kernel that may touch every tensor it is given."""
        file = self.show(frame.module.path)
        line = getattr(node, "lineno", 1)
        self.unresolved.append(Unresolved(file, line, what))
        roots: set[str] = set()
        for v in args if args is not None else self.values_in(frame, node):
            roots |= _roots(v)
        names = names | _hints_in(node)
        k = Kernel(len(self.kernels), "", "", file, line, opaque=True, names=names)
        k.reads = set(roots)
        k.writes = set(roots)
        self.order(k)
        self.kernels.append(k)

    def values_in(self, frame: _Frame, node: ast.AST) -> list[Any]:
        return [
            frame.env[n.id] for n in ast.walk(node) if isinstance(n, ast.Name) and n.id in frame.env
        ]

    # -- scopes

    def with_(self, frame: _Frame, stmt: ast.With) -> Any:
        for item in stmt.items:
            ctx = item.context_expr
            name = _dotted(ctx.func) if isinstance(ctx, ast.Call) else ""
            if name in ("pl.at", "pl.spmd") and isinstance(ctx, ast.Call):
                var = item.optional_vars
                tid = var.id if isinstance(var, ast.Name) else None
                self.scope(frame, ctx, stmt.body, stmt, tid, spmd_for=False)
                return None
            if name == "pl.manual_scope":
                self.manual += 1
                try:
                    return self.block(frame, stmt.body)
                finally:
                    self.manual -= 1
        return self.block(frame, stmt.body)

    def for_(self, frame: _Frame, stmt: ast.For) -> Any:
        it = stmt.iter
        if isinstance(it, ast.Call) and _dotted(it.func) == "pl.spmd":
            self.scope(frame, it, stmt.body, stmt, None, spmd_for=True)
            return None
        # A loop outside kernels runs its scopes many times: each is one kernel.
        for n in ast.walk(stmt.target):
            if isinstance(n, ast.Name):
                frame.env[n.id] = ConstV(UNKNOWN)
        return self.block(frame, stmt.body)

    def scope(
        self,
        frame: _Frame,
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
            for n in ast.walk(deps_node):
                if isinstance(n, ast.Name) and n.id in frame.env:
                    v = frame.env[n.id]
                    if isinstance(v, (TaskV, ArrayV)):
                        deps |= set(v.kernels)
                        dep_names.append(n.id)
        file = self.show(frame.module.path)
        prefetched = _prefetched(body)
        name = self.name(hint) if hint else ""
        if prefetched is not None:
            tensors = tuple(
                r for n in prefetched for r in sorted(_roots(self.alias(frame, n, body)))
            )
            self.warms.append(
                Warm(hint, file, stmt.lineno, tensors, frozenset(deps), tuple(dep_names))
            )
            return
        k = Kernel(len(self.kernels), name, hint, file, stmt.lineno, task=tid, deps=deps)
        self.touch(frame, k, body)
        self.order(k)
        self.kernels.append(k)
        if tid is not None:
            frame.env[tid] = TaskV(frozenset({k.index}))
            self.bound.setdefault(tid, (file, stmt.lineno))
            if frame.layer:
                self.tasks[tid] = Task(tid, frozenset({k.index}), file, stmt.lineno)

    def name(self, hint: str) -> str:
        """PyPTO's name for a scope: the hint, or the smallest free `hint_N` on a repeat."""
        name = hint
        n = 0
        while name in self.taken:
            name = f"{hint}_{n}"
            n += 1
        self.taken.add(name)
        return name

    def order(self, k: Kernel) -> None:
        if not self.manual:
            for r in k.reads | k.writes:
                k.after |= self.writers.get(r, set())
        k.after.discard(k.index)
        for r in k.writes:
            self.writers[r] = {k.index}

    def alias(self, frame: _Frame, name: str, body: list[ast.stmt]) -> Any:
        return frame.env.get(name, UNKNOWN)

    def touch(self, frame: _Frame, k: Kernel, body: list[ast.stmt]) -> None:
        """The tensors a kernel body reads and writes (its local aliases followed)."""
        env = dict(frame.env)
        for node in _walk_body(body):
            if isinstance(node, ast.Assign):
                v = self.local_value(env, node.value)
                for t in node.targets:
                    if isinstance(t, ast.Name):
                        env[t.id] = v
                    elif isinstance(t, ast.Subscript):
                        base = _base_name(t.value)
                        if base is not None:
                            k.writes |= _roots(env.get(base))
            elif isinstance(node, ast.Call):
                fn = _dotted(node.func)
                target: ast.expr | None = None
                if fn in ("pl.assemble", "pl.write", "pl.tensor.write") and node.args:
                    target = node.args[0]
                elif fn == "pl.store" and len(node.args) >= 3:
                    target = node.args[2]
                if target is not None:
                    base = _base_name(target)
                    if base is not None:
                        k.writes |= _roots(env.get(base))
        written_only: set[int] = set()
        for node in _walk_body(body):
            if isinstance(node, ast.Assign):
                for t in node.targets:
                    if isinstance(t, ast.Subscript):
                        b = _base_node(t.value)
                        if b is not None:
                            written_only.add(id(b))
            elif isinstance(node, ast.Call):
                fn = _dotted(node.func)
                arg = None
                if fn in ("pl.assemble", "pl.write", "pl.tensor.write") and node.args:
                    arg = node.args[0]
                elif fn == "pl.store" and len(node.args) >= 3:
                    arg = node.args[2]
                b = _base_node(arg) if arg is not None else None
                if b is not None:
                    written_only.add(id(b))
        # Names are looked up in the kernel's final environment: a name a kernel
        # rebinds to a tile is not a tensor, and its uses before that are counted
        # by the tensor it aliased.
        for node in _walk_body(body):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                if id(node) in written_only:
                    continue
                v = frame.env.get(node.id) if node.id in frame.env else env.get(node.id)
                k.reads |= _roots(v)

    def local_value(self, env: dict[str, Any], node: ast.expr) -> Any:
        if isinstance(node, ast.Name):
            return env.get(node.id, UNKNOWN)
        if isinstance(node, ast.Subscript):
            return _tensor_only(self.local_value(env, node.value))
        if isinstance(node, ast.Call) and _dotted(node.func) in _ALIASING and node.args:
            return _tensor_only(self.local_value(env, node.args[0]))
        return UNKNOWN

    # -- expressions at orchestration level

    def value(self, frame: _Frame, node: ast.expr, targets: list[ast.expr] | None = None) -> Any:
        if isinstance(node, ast.Name):
            if node.id in frame.env:
                return frame.env[node.id]
            return self.global_value(frame.module, node.id)
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
            return _tensor_only(base)
        if isinstance(node, ast.Attribute):
            base = self.value(frame, node.value)
            if isinstance(base, ModV) and base.module is not None:
                return self.global_value(base.module, node.attr)
            if isinstance(base, ModV) and is_warm_module(base.name):
                return WarmFnV(base.name, node.attr)
            return UNKNOWN
        if isinstance(node, ast.Call):
            return self.call(frame, node)
        if isinstance(node, (ast.BinOp, ast.Compare, ast.UnaryOp, ast.BoolOp)):
            return ConstV(self.const_in(frame, node))
        return UNKNOWN

    def call(self, frame: _Frame, node: ast.Call) -> Any:
        fn = _dotted(node.func)
        if fn == "pl.create_tensor":
            self.created += 1
            return TensorV(f"#{self.created}")
        if fn in _ALIASING and node.args:
            return _tensor_only(self.value(frame, node.args[0]))
        if fn == "pl.system.task_dummy":
            kernels: set[int] = set()
            for kw in node.keywords:
                if kw.arg == "deps":
                    for n in ast.walk(kw.value):
                        if isinstance(n, ast.Name):
                            v = frame.env.get(n.id)
                            if isinstance(v, (TaskV, ArrayV)):
                                kernels |= set(v.kernels)
            return TaskV(frozenset(kernels))
        if fn == "pl.array.create":
            return ArrayV()
        if fn.startswith("pl.") or fn.startswith("pypto."):
            return UNKNOWN
        callee = self.value(frame, node.func)
        if isinstance(callee, WarmFnV):
            self.warm_call(frame, node, callee)
            return ConstV(None)
        args = [self.value(frame, a) for a in node.args]
        kwargs = {kw.arg: self.value(frame, kw.value) for kw in node.keywords if kw.arg}
        if isinstance(callee, ChosenV):
            self.opaque(
                frame,
                node,
                f"helper '{fn}' is chosen at import time ({callee.file}:{callee.line}{callee.why})",
                [*args, *kwargs.values()],
                callee.names,
            )
            return TaskV(frozenset(), opaque=True)
        if isinstance(callee, FuncV) and _is_jit(callee.node):
            return self.inline(frame, node, callee, args, kwargs)
        given = [*args, *kwargs.values()]
        if any(_roots(a) for a in given) and (
            isinstance(callee, FuncV)
            or (isinstance(node.func, ast.Name) and node.func.id not in _BUILTINS)
        ):
            # A plain function given tensors: what it does with them is not read.
            what = f"'{fn or ast.unparse(node.func)}' is not a @pl.jit.inline helper"
            self.opaque(frame, node, what + " the reader can follow", given)
            return TaskV(frozenset(), opaque=True)
        return UNKNOWN

    def inline(
        self, frame: _Frame, node: ast.Call, callee: FuncV, args: list[Any], kwargs: dict[str, Any]
    ) -> Any:
        key = f"{callee.module.path}:{callee.node.name}"
        if key in frame.stack or frame.depth >= MAX_DEPTH:
            why = "calls itself" if key in frame.stack else f"nests more than {MAX_DEPTH} deep"
            self.opaque(
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
        inner = _Frame(callee.module, env, fn.name, frame.depth + 1, (*frame.stack, key))
        result = self.block(inner, fn.body)
        return UNKNOWN if result is None else result

    def warm_call(self, frame: _Frame, node: ast.Call, fn: WarmFnV) -> None:
        tensors: list[str | None] = []
        task = None
        deps: frozenset[int] = frozenset()
        for i, a in enumerate(node.args):
            v = self.value(frame, a)
            if i == len(node.args) - 1 and isinstance(v, TaskV):
                task = a.id if isinstance(a, ast.Name) else None
                deps = v.kernels
            else:
                roots = sorted(_roots(v))
                tensors.append(roots[0] if roots else None)
        self.calls.append(
            WarmCall(fn.name, self.show(frame.module.path), node.lineno, tuple(tensors), task, deps)
        )


@dataclass(frozen=True)
class ClassV:
    module: Module
    node: ast.ClassDef


_ALIASING = {"pl.reshape", "pl.slice", "pl.assemble", "pl.tensor.view", "pl.view"}
_BUILTINS = {"range", "len", "int", "float", "print", "max", "min", "list", "tuple", "zip"}


def _tensor_only(v: Any) -> Any:
    return v if isinstance(v, TensorV) else UNKNOWN


def _roots(v: Any) -> set[str]:
    if isinstance(v, TensorV):
        return {v.root}
    if isinstance(v, TupleV):
        out: set[str] = set()
        for item in v.items:
            out |= _roots(item)
        return out
    return set()


def _opaque(v: Any) -> bool:
    return isinstance(v, TaskV) and v.opaque


def _is_jit(fn: ast.FunctionDef) -> bool:
    for d in fn.decorator_list:
        name = _dotted(d.func if isinstance(d, ast.Call) else d)
        if name in ("pl.jit.inline", "pl.jit", "pl.inline", "pl.function"):
            return True
    return False


def _choice_reason(mod: Module, fn: ast.FunctionDef) -> str:
    """`, on environment variable X` when the module reads one."""
    for node in ast.walk(mod.tree):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        arg = node.args[0]
        env = _dotted(node.func) in ("os.environ.get", "os.getenv")
        if env and isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            return f", on environment variable {arg.value}"
    return ""


def _dotted(node: ast.AST | None) -> str:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


def _base_node(node: ast.expr | None) -> ast.Name | None:
    while isinstance(node, ast.Subscript):
        node = node.value
    return node if isinstance(node, ast.Name) else None


def _base_name(node: ast.expr | None) -> str | None:
    b = _base_node(node)
    return None if b is None else b.id


def _walk_body(body: list[ast.stmt]) -> Iterator[ast.AST]:
    """Every node of ``body`` in source order (iterative)."""
    stack: list[ast.AST] = list(reversed(body))
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(list(ast.iter_child_nodes(node))))


def _prefetched(body: list[ast.stmt]) -> list[str] | None:
    """The variables a warm scope prefetches, in order; None for any other scope."""
    names: list[str] = []
    found = False
    for node in _walk_body(body):
        if isinstance(node, ast.Call) and _dotted(node.func) == "pl.prefetch.async_prefetch":
            found = True
            if node.args and isinstance(node.args[0], ast.Name):
                names.append(node.args[0].id)
    return names if found else None


def _hints_in(node: ast.AST) -> frozenset[str]:
    out = set()
    for n in ast.walk(node):
        if (
            isinstance(n, ast.keyword)
            and n.arg == "name_hint"
            and isinstance(n.value, ast.Constant)
        ):
            out.add(str(n.value.value))
    return frozenset(out)


def _hints_reachable(mod: Module, fn: ast.FunctionDef) -> frozenset[str]:
    """The name hints of ``fn`` and of every function of its module it calls, transitively."""
    out: set[str] = set()
    seen: set[str] = set()
    todo: list[ast.AST] = [fn]
    while todo:
        node = todo.pop()
        out |= _hints_in(node)
        for n in ast.walk(node):
            if isinstance(n, ast.Name) and n.id not in seen:
                seen.add(n.id)
                target = mod.globals.get(n.id)
                if isinstance(target, ast.FunctionDef):
                    todo.append(target)
    return frozenset(out)


def _int_or_none(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, Dynamic)


def _binop(op: ast.operator, a: Any, b: Any) -> Any:
    if isinstance(a, Dynamic) or isinstance(b, Dynamic):
        return a if isinstance(a, Dynamic) else b
    if not (_number(a) and _number(b)):
        return UNKNOWN
    if isinstance(op, ast.Add):
        return a + b
    if isinstance(op, ast.Sub):
        return a - b
    if isinstance(op, ast.Mult):
        return a * b
    if isinstance(op, ast.FloorDiv):
        return a // b
    if isinstance(op, ast.Mod):
        return a % b
    if isinstance(op, ast.Div):
        return a / b
    if isinstance(op, ast.Pow) and abs(b) < 64:
        return a**b
    return UNKNOWN


def _compare(op: ast.cmpop, a: Any, b: Any) -> Any:
    if a is UNKNOWN or b is UNKNOWN or isinstance(a, (Dynamic, Instance)):
        return UNKNOWN
    try:
        if isinstance(op, ast.Eq):
            return a == b
        if isinstance(op, ast.NotEq):
            return a != b
        if isinstance(op, ast.Lt):
            return a < b
        if isinstance(op, ast.LtE):
            return a <= b
        if isinstance(op, ast.Gt):
            return a > b
        if isinstance(op, ast.GtE):
            return a >= b
    except TypeError:
        return UNKNOWN
    return UNKNOWN


def _eval_local(node: ast.expr, env: dict[str, Any], fallback: Any) -> Any:
    """A condition over local constants (a helper's constant parameter)."""
    if isinstance(node, ast.Name) and node.id in env:
        return env[node.id]
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        return _compare(
            node.ops[0],
            _eval_local(node.left, env, fallback),
            _eval_local(node.comparators[0], env, fallback),
        )
    if isinstance(node, ast.BinOp):
        return _binop(
            node.op, _eval_local(node.left, env, fallback), _eval_local(node.right, env, fallback)
        )
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        v = _eval_local(node.operand, env, fallback)
        return UNKNOWN if v is UNKNOWN else not v
    return fallback(node)


def read_layer(path: str, function: str, root: str | None = None) -> Reading:
    """The reading of ``function`` in the Python file ``path`` (SourceError: PC200)."""
    return Reader(root).read(path, function)

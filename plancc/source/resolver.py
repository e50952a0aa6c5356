"""Module-level names of model code: imports of sibling modules, functions, constants
(integers over `+ - * // %`, `pl.dynamic`, the attributes and properties of a
config object such as `FLASH = DeepSeekV4Config(hidden_size=4096, ...)`)."""

from __future__ import annotations

import ast
import os
from typing import Any

from plancc.source.modules import Module, SourceError, load_module
from plancc.source.values import (
    UNKNOWN,
    ChosenV,
    ClassV,
    ConstV,
    Dynamic,
    FuncV,
    Instance,
    ModV,
    WarmFnV,
    binop,
    choice_reason,
    compare,
    dotted,
    hints_reachable,
    is_jit,
    is_warm_module,
    number,
)

MAX_MODULES = 64
MAX_DEPTH = 32


class Resolver:
    def __init__(self, root: str | None = None) -> None:
        self.root = root  # paths in messages are relative to it
        self.modules: dict[str, Module] = {}
        self.const_stack: set[tuple[str, str]] = set()

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

    def global_value(self, mod: Module, name: str, depth: int = 0) -> Any:  # noqa: C901, PLR0912 (one branch per kind of constant expression)
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
                if isinstance(callee, FuncV) and not is_jit(callee.node):
                    # `hc_pre = _bind_hc_pre()`: which function it returns is decided
                    # by running the module (an environment variable, a flag).
                    why = choice_reason(callee.module, callee.node)
                    names = hints_reachable(callee.module, callee.node)
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

    def _const(self, mod: Module, node: ast.expr, self_obj: Any, depth: int) -> Any:  # noqa: C901, PLR0912 (one branch per kind of constant expression)
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
            return binop(node.op, a, b)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            a = self._const(mod, node.operand, self_obj, depth + 1)
            return -a if number(a) else UNKNOWN
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            a = self._const(mod, node.left, self_obj, depth + 1)
            b = self._const(mod, node.comparators[0], self_obj, depth + 1)
            return compare(node.ops[0], a, b)
        if isinstance(node, ast.BoolOp):
            vals = [self._const(mod, v, self_obj, depth + 1) for v in node.values]
            if any(v is UNKNOWN for v in vals):
                return UNKNOWN
            return all(vals) if isinstance(node.op, ast.And) else any(vals)
        if isinstance(node, ast.Call):
            return self._const_call(mod, node, self_obj, depth)
        return UNKNOWN

    def _const_call(self, mod: Module, node: ast.Call, self_obj: Any, depth: int) -> Any:
        name = dotted(node.func)
        if name == "pl.dynamic":
            arg = node.args[0] if node.args else None
            label = arg.value if isinstance(arg, ast.Constant) else "dynamic"
            return Dynamic(str(label))
        args = [self._const(mod, a, self_obj, depth + 1) for a in node.args]
        if node.keywords or any(a is UNKNOWN or isinstance(a, Instance) for a in args):
            return UNKNOWN
        if name == "int" and len(args) == 1 and number(args[0]):
            return int(args[0])
        if name in ("max", "min") and args and all(number(a) for a in args):
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

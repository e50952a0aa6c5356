"""Module-level names of model code: imports of sibling modules, functions, constants
(integers over `+ - * // %`, `pl.dynamic`, the attributes and properties of a
config object such as `FLASH = DeepSeekV4Config(hidden_size=4096, ...)`)."""

from __future__ import annotations

import ast
import os
from collections.abc import Mapping
from typing import Any

from plancc.source.choices import chosen, env_default, table
from plancc.source.limits import (
    MAX_EXPR_DEPTH,
    MAX_INT_BITS,
    MAX_MODULES,
    MAX_NESTING,
    Budget,
)
from plancc.source.modules import Module, SourceError, load_module
from plancc.source.reading import Unresolved
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
    walk,
)
from plancc.text import clip

CONSTANT_EFFECT = "the dims that use it are not compared"


class Resolver:
    """Module-level names and constants, each worked out once (memoised: a constant
    named twice by each of 40 others is evaluated 40 times, not 2**40), within the
    bounds of ``limits`` and the work of ``budget``; what is left unresolved at a bound
    is a note (PC208) in ``notes``."""

    def __init__(self, root: str | None = None, budget: Budget | None = None) -> None:
        self.root = root  # paths in messages are relative to it; no import leaves it
        self.real_root = os.path.realpath(root) if root else None
        self.budget = budget or Budget()
        self.modules: dict[str, Module] = {}
        self.notes: list[Unresolved] = []
        self.noted: set[tuple[str, int, str]] = set()
        self.values: dict[tuple[str, str], Any] = {}  # (module path, name) -> its value
        self.attributes: dict[tuple[int, str], Any] = {}  # (id of the config call, attr)
        self.evaluating: set[tuple[object, str]] = set()  # under way: met again, a cycle
        self.naming: list[tuple[Module, str, int]] = []  # the constants under evaluation
        self.defines: Mapping[str, object] = {}  # run-time choices given (choices.py)
        self.locals: list[dict[str, Any]] = []  # a comprehension's variables, innermost last
        self.nesting = 0
        self.preparing = False

    def show(self, path: str) -> str:
        if self.root:
            try:
                rel = os.path.relpath(path, self.root)
            except ValueError:
                return path
            if not rel.startswith(".."):
                return rel.replace(os.sep, "/")
        return path

    def note(
        self,
        mod: Module,
        line: int,
        what: str,
        effect: str = CONSTANT_EFFECT,
        *,
        choice: bool = False,
    ) -> None:
        """A PC208 note, once per place and wording."""
        key = (mod.path, line, what)
        if key not in self.noted:
            self.noted.add(key)
            self.notes.append(Unresolved(self.show(mod.path), line, what, effect, choice))

    def adopt(self, path: str, mod: Module) -> Module:
        """``mod``, read at ``path``, is one of this reading's modules."""
        self.modules[path] = mod
        if mod.cut:
            more = f" (and {len(mod.cut) - 1} more lines)" if len(mod.cut) > 1 else ""
            self.note(
                mod,
                mod.cut[0],
                f"an expression nested more than {MAX_EXPR_DEPTH} deep{more}",
                "the part past that depth is not read",
            )
        return mod

    def sibling(self, mod: Module, name: str, level: int, line: int = 0) -> Module | None:
        """The module ``from <level dots><name> import`` names in ``mod`` (an absolute
        import, level 0, is looked for beside it), never one outside the root."""
        base = os.path.dirname(mod.path)
        for _ in range(max(level - 1, 0)):
            base = os.path.dirname(base)
        parts = name.split(".") if name else []
        for candidate in (
            os.path.join(base, *parts) + ".py",
            os.path.join(base, *parts, "__init__.py"),
        ):
            if not parts or not os.path.exists(candidate) or os.path.isdir(candidate):
                continue  # a FIFO is there, and is refused when read: a note, not nothing
            return self.module(candidate, mod, line, f"import '{'.' * level}{name}'")
        return None

    def module(self, path: str, importer: Module, line: int, what: str) -> Module | None:
        """The module at ``path`` that ``importer`` imports at ``line``: read once, or
        None with a note when it is outside the root, past MAX_MODULES or unreadable."""
        path = os.path.normpath(path)
        if path in self.modules:
            return self.modules[path]
        problem = None
        if not self.inside(path):
            problem = f"{what} resolves outside the source root ({path})"
        elif len(self.modules) >= MAX_MODULES:
            problem = f"{what}: more than {MAX_MODULES} modules would be read"
        else:
            try:
                return self.adopt(path, load_module(path))
            except SourceError as exc:
                problem = f"{what}: {str(exc).replace(path, self.show(path))}"
        self.note(importer, line, problem, "its names are not read")
        return None

    def inside(self, path: str) -> bool:
        if self.real_root is None:
            return True
        real = os.path.realpath(path)
        return os.path.commonpath([real, self.real_root]) == self.real_root

    # -- module-level names

    def global_value(self, mod: Module, name: str) -> Any:
        """The value ``name`` is bound to at the top of ``mod``, worked out once."""
        key = (mod.path, name)
        if key in self.values:
            return self.values[key]
        if key in self.evaluating:
            return UNKNOWN  # a cycle: `X = Y`, `Y = X`
        if not self.preparing:
            self.prepare(mod, name)
            if key in self.values:
                return self.values[key]
        if self.nesting >= MAX_NESTING:
            return self.too_deep(mod, getattr(mod.globals.get(name), "lineno", 1))
        self.budget.spend()
        self.evaluating.add(key)
        self.nesting += 1
        try:
            value = self._global_value(mod, name)
        finally:
            self.evaluating.discard(key)
            self.nesting -= 1
        self.values[key] = value
        return value

    def prepare(self, mod: Module, name: str) -> None:
        """Work out the names ``name``'s statement names before it, deepest first, without
        recursion: each is then evaluated with what it names known already, so a chain
        of a thousand constants nests one deep, not a thousand (a cycle is left to the
        evaluation, which meets it and stops)."""
        self.preparing = True
        try:
            todo: list[tuple[Module, str, bool]] = [(mod, name, False)]
            seen: set[tuple[str, str]] = set()
            while todo:
                m, n, expanded = todo.pop()
                key = (m.path, n)
                if key in self.values:
                    continue
                if expanded:
                    self.global_value(m, n)
                elif key not in seen:
                    seen.add(key)
                    todo.append((m, n, True))
                    todo += [(dm, dn, False) for dm, dn in self.named(m, n)]
        finally:
            self.preparing = False

    def named(self, mod: Module, name: str) -> list[tuple[Module, str]]:
        """The module-level names the statement that binds ``name`` names."""
        stmt = mod.globals.get(name)
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
            return [
                (mod, n.id)
                for n in walk(stmt.value, self.budget)
                if isinstance(n, ast.Name) and n.id in mod.globals and n.id != name
            ]
        if isinstance(stmt, ast.ImportFrom) and not is_warm_module(stmt.module or ""):
            for alias in stmt.names:
                if (alias.asname or alias.name) == name:
                    other = self.sibling(mod, stmt.module or "", stmt.level, stmt.lineno)
                    if other is not None and alias.name in other.globals:
                        return [(other, alias.name)]
        return []

    def too_deep(self, mod: Module, line: int) -> Any:
        where = self.naming[-1] if self.naming else (mod, "", line)
        what = f"constant '{where[1]}'" if where[1] else "a constant expression"
        self.note(where[0], where[2], f"{what} nests more than {MAX_NESTING} names deep")
        return UNKNOWN

    def _global_value(self, mod: Module, name: str) -> Any:  # noqa: C901, PLR0912 (one branch per kind of statement that binds a name)
        stmt = mod.globals.get(name)
        if stmt is None:
            return self.starred(mod, name)
        if isinstance(stmt, ast.FunctionDef):
            return FuncV(mod, stmt)
        if isinstance(stmt, ast.ImportFrom):
            for alias in stmt.names:
                if (alias.asname or alias.name) == name:
                    if is_warm_module(stmt.module or ""):  # read where it is there
                        other = self.sibling(mod, stmt.module or "", stmt.level, stmt.lineno)
                        if other is not None and alias.name in other.globals:
                            return self.global_value(other, alias.name)
                        return WarmFnV(stmt.module or "", alias.name)
                    if not stmt.module:  # `from . import x`: a module of the package
                        sub = self.sibling(mod, alias.name, stmt.level, stmt.lineno)
                        return ModV(sub, alias.name) if sub is not None else UNKNOWN
                    other = self.sibling(mod, stmt.module, stmt.level, stmt.lineno)
                    if other is None:
                        return UNKNOWN
                    if alias.name in other.globals:
                        return self.global_value(other, alias.name)
                    sub = self.sibling(other, alias.name, 1, stmt.lineno)
                    return ModV(sub, alias.name) if sub is not None else UNKNOWN
            return UNKNOWN
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                bound = (alias.asname or alias.name).split(".")[0]
                if bound == name:
                    if alias.name == "pypto.language":
                        return ModV(None, "pl")
                    # `import a.b` binds `a` (its `b` an attribute); `import a.b as c`, b.
                    target = alias.name if alias.asname else alias.name.split(".")[0]
                    return ModV(self.sibling(mod, target, 0, stmt.lineno), target)
            return UNKNOWN
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
            value = stmt.value
            if isinstance(value, ast.Call):
                callee = self.global_callee(mod, value.func)
                if isinstance(callee, FuncV) and not is_jit(callee.node):
                    taken = chosen(self, mod, name, stmt, callee)  # `TP = _parse_tp_argv()`
                    if taken is not None:
                        return ConstV(taken)
                    # `hc_pre = _bind_hc_pre()`: which function it returns is decided
                    # by running the module (an environment variable, a flag).
                    why = choice_reason(callee.module, self.budget)
                    names = hints_reachable(callee.module, callee.node, self.budget)
                    return ChosenV(self.show(mod.path), stmt.lineno, why, names)
                if isinstance(callee, ClassV):
                    return Instance(mod, value)
            if isinstance(value, ast.Name):
                return self.global_value(mod, value.id)
            self.naming.append((mod, name, stmt.lineno))
            try:
                return ConstV(self.const(mod, value))
            finally:
                self.naming.pop()
        if isinstance(stmt, ast.ClassDef):
            return ClassV(mod, stmt)
        return UNKNOWN

    def starred(self, mod: Module, name: str) -> Any:
        """``name`` bound by a `from x import *` of ``mod`` (the last that binds it, as
        Python runs them in order): a public name of ``x``, or of what ``x`` imports so."""
        if name.startswith("_"):
            return UNKNOWN
        for stmt in reversed(mod.stars):
            other = self.sibling(mod, stmt.module or "", stmt.level, stmt.lineno)
            if other is not None and (name in other.globals or other.stars):
                value = self.global_value(other, name)
                if value is not UNKNOWN or name in other.globals:
                    return value
        return UNKNOWN

    def global_callee(self, mod: Module, node: ast.expr) -> Any:
        if isinstance(node, ast.Name):
            return self.global_value(mod, node.id)
        return UNKNOWN

    def dotted_value(self, mod: Module, node: ast.expr) -> Any:
        """What a module-level name or a dotted name (`x.f`, `pkg.mod.f`) is bound to in
        ``mod``, as Python looks it up: its globals, then the modules they import."""
        if isinstance(node, ast.Name):
            return self.global_value(mod, node.id)
        if isinstance(node, ast.Attribute):
            return self.member(self.dotted_value(mod, node.value), node.attr)
        return UNKNOWN

    def member(self, base: Any, attr: str) -> Any:
        """``base.attr`` for a module ``base``: its global, else its submodule (a
        package's `pkg.mod`); a generated warm module's function; else unknown."""
        if isinstance(base, ModV) and base.module is not None:
            if attr in base.module.globals:
                return self.global_value(base.module, attr)
            if os.path.basename(base.module.path) == "__init__.py":
                sub = self.sibling(base.module, attr, 1)
                if sub is not None:
                    return ModV(sub, f"{base.name}.{attr}")
            return UNKNOWN
        if isinstance(base, ModV) and is_warm_module(base.name):
            return WarmFnV(base.name, attr)
        return UNKNOWN

    # -- constants

    def const(self, mod: Module, node: ast.expr, self_obj: Any = None) -> Any:
        """The value of a module-level expression: int, float, bool, str, Dynamic,
        Instance, or UNKNOWN (also for an integer of 2**MAX_INT_BITS or more, noted)."""
        try:
            return self._const(mod, node, self_obj)
        except (RecursionError, ZeroDivisionError, OverflowError, TypeError, ValueError):
            return UNKNOWN

    def _const(self, mod: Module, node: ast.expr, self_obj: Any) -> Any:
        if self.nesting >= MAX_NESTING:
            return self.too_deep(mod, getattr(node, "lineno", 1))
        self.budget.spend()
        self.nesting += 1
        try:
            value = self._const_of(mod, node, self_obj)
        finally:
            self.nesting -= 1
        if isinstance(value, int) and value.bit_length() > MAX_INT_BITS:
            return self.too_large(mod, node)
        return value

    def too_large(self, mod: Module, node: ast.expr) -> Any:
        """An integer past the bound: unresolved, and named (the constant it is in)."""
        if self.naming:
            home, name, line = self.naming[-1]
            self.note(home, line, f"constant '{name}' is {_BOUND} or more in magnitude")
        else:
            text = clip(ast.unparse(node))
            line = getattr(node, "lineno", 1)
            self.note(mod, line, f"'{text}' is {_BOUND} or more in magnitude")
        return UNKNOWN

    def _const_of(self, mod: Module, node: ast.expr, self_obj: Any) -> Any:  # noqa: C901, PLR0912 (one branch per kind of constant expression)
        if isinstance(node, ast.Constant):
            v = node.value
            return v if isinstance(v, (int, float, str, bool)) else UNKNOWN
        if isinstance(node, ast.Name):
            if self.locals and node.id in self.locals[-1]:
                return self.locals[-1][node.id]
            v = self.global_value(mod, node.id)
            if isinstance(v, ConstV):
                return v.value
            if isinstance(v, Instance):
                return v
            return UNKNOWN
        if isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name) and node.value.id == "self":
                base = self_obj
            else:
                base = self._const(mod, node.value, self_obj)
            if isinstance(base, Instance):
                return self.attribute(base, node.attr)
            return UNKNOWN
        if isinstance(node, ast.BinOp):
            a = self._const(mod, node.left, self_obj)
            b = self._const(mod, node.right, self_obj)
            return binop(node.op, a, b)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            a = self._const(mod, node.operand, self_obj)
            return -a if number(a) else UNKNOWN
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            a = self._const(mod, node.left, self_obj)
            b = self._const(mod, node.comparators[0], self_obj)
            return compare(node.ops[0], a, b)
        if isinstance(node, ast.BoolOp):
            vals = [self._const(mod, v, self_obj) for v in node.values]
            if any(v is UNKNOWN for v in vals):
                return UNKNOWN
            return all(vals) if isinstance(node.op, ast.And) else any(vals)
        if isinstance(node, ast.Call):
            return self._const_call(mod, node, self_obj)
        return table(self, mod, node, self_obj)

    def _const_call(self, mod: Module, node: ast.Call, self_obj: Any) -> Any:
        name = dotted(node.func)
        if name == "pl.dynamic":
            arg = node.args[0] if node.args else None
            label = arg.value if isinstance(arg, ast.Constant) else "dynamic"
            return Dynamic(str(label))
        if name in ("replace", "dataclasses.replace"):
            return table(self, mod, node, self_obj)
        env = env_default(self, mod, node)
        if env is not None:
            return env
        args = [self._const(mod, a, self_obj) for a in node.args]
        if node.keywords or any(a is UNKNOWN or isinstance(a, Instance) for a in args):
            return UNKNOWN
        if name == "int" and len(args) == 1 and number(args[0]):
            return int(args[0])
        if name in ("max", "min") and args and all(number(a) for a in args):
            return max(args) if name == "max" else min(args)
        return UNKNOWN

    def attribute(self, obj: Instance, attr: str) -> Any:
        """A config object's field (a keyword of its call) or property, worked out once."""
        key = (id(obj.call), attr)
        if key in self.attributes:
            return self.attributes[key]
        if key in self.evaluating:
            return UNKNOWN  # a property that returns itself
        self.evaluating.add(key)
        try:
            value = self._attribute(obj, attr)
        finally:
            self.evaluating.discard(key)
        self.attributes[key] = value
        return value

    def _attribute(self, obj: Instance, attr: str) -> Any:
        for kw in obj.call.keywords:
            if kw.arg == attr:
                return self._const(obj.module, kw.value, None)
        cls = self.global_callee(obj.module, obj.call.func)
        if isinstance(cls, ClassV):
            for stmt in cls.node.body:
                if isinstance(stmt, ast.FunctionDef) and stmt.name == attr:
                    for inner in stmt.body:
                        if isinstance(inner, ast.Return) and inner.value is not None:
                            return self._const(cls.module, inner.value, obj)
        return UNKNOWN


_BOUND = f"2**{MAX_INT_BITS}"

"""The dims of an extracted skeleton: the module constants a parameter's annotation uses,
written as the plan's dim expressions (config keys where ``--config`` has them; a value
where no expression the plan reads can say it); a stacked weight's layers and slab."""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field

from plancc.source.limits import OutOfWork
from plancc.source.modules import Module
from plancc.source.reading import Reading
from plancc.source.resolver import Resolver
from plancc.source.values import ClassV, Dynamic, Instance
from plancc.tables.names import identifier_problem
from plancc.text import clip

_OPS = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod)


def _arithmetic(
    node: ast.expr, depth: int, leaf: Callable[[ast.expr, int], ast.expr | None]
) -> ast.expr | None:
    """``node`` as a dim expression: integer literals and ``_OPS`` kept, every other node
    put through ``leaf``; None where a part cannot be written (or nests past 32)."""
    if depth > 32:
        return None
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node
    if isinstance(node, ast.BinOp) and isinstance(node.op, _OPS):
        a = _arithmetic(node.left, depth + 1, leaf)
        b = _arithmetic(node.right, depth + 1, leaf)
        return None if a is None or b is None else ast.BinOp(a, node.op, b)
    return leaf(node, depth)


@dataclass
class Dims:
    resolver: Resolver
    config: dict[str, int]
    dims: dict[str, str] = field(default_factory=dict)  # name -> expression text
    values: dict[str, object] = field(default_factory=dict)
    notices: list[str] = field(default_factory=list)
    # A layer function's `scalar * ROWS` products: (scalar, ROWS as written), found once.
    scaled: dict[int, list[tuple[str, str]]] = field(default_factory=dict)

    def expr(self, mod: Module, node: ast.expr) -> str:
        where = f"{self.resolver.show(mod.path)}:{node.lineno}: '{clip(ast.unparse(node))}'"
        try:
            out = self.convert(mod, node, 0)
            value = self.resolver.const(mod, node) if out is None else None
        except OutOfWork as exc:
            self.notices.append(f"{where} not resolved: {exc}")
            return self.dynamic("UNRESOLVED")
        if out is not None:
            return ast.unparse(out)
        if isinstance(value, Dynamic):
            return self.dynamic(value.name)
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        self.notices.append(f"{where} not resolved")
        return self.dynamic("UNRESOLVED")

    def dynamic(self, label: str) -> str:
        name = "".join(c if c.isalnum() else "_" for c in label).strip("_") or "DYN"
        if identifier_problem(name, reserved=True) is not None:
            name = "DYN"
        self.dims.setdefault(name, "dynamic")
        return name

    def convert(self, mod: Module, node: ast.expr, depth: int) -> ast.expr | None:
        return _arithmetic(node, depth, lambda leaf, d: self.leaf(mod, leaf, d))

    def leaf(self, mod: Module, node: ast.expr, depth: int) -> ast.expr | None:
        if isinstance(node, ast.Attribute):
            value = self.resolver.const(mod, node)
            if node.attr in self.config and self.config[node.attr] == value:
                return ast.Name(node.attr)
            derived = self.derived(mod, node, depth)
            if derived is not None:
                return derived
            return ast.Constant(value) if type(value) is int else None
        if isinstance(node, ast.Name):
            return self.name(mod, node.id, depth)
        return None

    def derived(self, mod: Module, node: ast.Attribute, depth: int) -> ast.expr | None:
        """A config property over config keys (`M.q_dim`: `num_heads * head_dim`)."""
        if not self.config:
            return None
        base = self.resolver.const(mod, node.value)
        if not isinstance(base, Instance):
            return None
        cls = self.resolver.global_callee(base.module, base.call.func)
        if not isinstance(cls, ClassV):
            return None
        for stmt in cls.node.body:
            if isinstance(stmt, ast.FunctionDef) and stmt.name == node.attr:
                ret = next((r for r in stmt.body if isinstance(r, ast.Return)), None)
                if ret is not None and ret.value is not None:
                    return self.over_self(base, ret.value, depth + 1)
        return None

    def over_self(self, base: Instance, node: ast.expr, depth: int) -> ast.expr | None:
        """A property's return value over `self.<config key>` attributes."""

        def leaf(node: ast.expr, depth: int) -> ast.expr | None:
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                value = self.resolver.attribute(base, node.attr)
                if node.value.id == "self" and self.config.get(node.attr) == value:
                    return ast.Name(node.attr)
            return None

        return _arithmetic(node, depth, leaf)

    def name(self, mod: Module, name: str, depth: int) -> ast.expr | None:
        value = self.resolver.const(mod, ast.Name(name))
        if isinstance(value, Dynamic):
            return ast.Name(self.dynamic(name if name not in self.dims else value.name))
        if type(value) is not int:
            return None
        if identifier_problem(name, reserved=True) is not None or name.endswith("_flat"):
            return ast.Constant(value)
        if name in self.dims:
            # Its value where the name is taken by another constant, or is being written
            # (`X = Y` in one module, `Y = X` in another: two constants of one name).
            same = self.dims[name] != "" and self.values.get(name) == value
            return ast.Name(name) if same else ast.Constant(value)
        home, stmt = _defining(self.resolver, mod, name)
        expr: ast.expr | None = None
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None and home:
            self.dims[name] = ""  # reserved while its expression converts
            self.values[name] = value
            expr = self.convert(home, stmt.value, depth + 1)
        text = ast.unparse(expr) if expr is not None else str(value)
        if expr is not None and isinstance(expr, ast.Name) and expr.id == name:
            text = str(value)
        self.dims[name] = text
        self.values[name] = value
        return ast.Name(name)


def _defining(resolver: Resolver, mod: Module, name: str) -> tuple[Module | None, ast.stmt | None]:
    """The module and statement that bind ``name`` (through `from x import name`)."""
    for _ in range(32):
        stmt = mod.globals.get(name)
        if not isinstance(stmt, ast.ImportFrom):
            return mod, stmt
        alias = next((a for a in stmt.names if (a.asname or a.name) == name), None)
        other = resolver.sibling(mod, stmt.module or "", stmt.level, stmt.lineno)
        if alias is None or other is None:
            return None, None
        mod, name = other, alias.name
    return None, None


_INDEX_TYPES = {"pl.INT32": "int32", "pl.INT64": "int64", "pl.INDEX": "index"}


def stacked(
    reading: Reading, mod: Module, shape: tuple[ast.expr, ...], dims: Dims
) -> tuple[str, str, str] | None:
    """A stacked weight: its first dim is `LAYERS * ROWS` and the layer function scales a
    scalar parameter by the same ROWS (`layer_idx * HIDDEN`: its slab's offset). Its
    `, stacked: {…}`, the slab's rows and the index; None for any other parameter."""
    first = shape[0] if shape else None
    if not (isinstance(first, ast.BinOp) and isinstance(first.op, ast.Mult)):
        return None
    fn = reading.module.globals.get(reading.function)  # a top-level one: found at once
    if not isinstance(fn, ast.FunctionDef):
        fn = next(
            (
                n
                for n in ast.walk(reading.module.tree)
                if isinstance(n, ast.FunctionDef) and n.name == reading.function
            ),
            None,
        )
    if fn is None:
        return None
    scalars = {
        a.arg: ast.unparse(a.annotation.slice)
        for a in fn.args.args
        if isinstance(a.annotation, ast.Subscript)
        and ast.unparse(a.annotation.value) == "pl.Scalar"
    }
    if not scalars:  # no layer index to scale: no slab offset (and no walk of the body)
        return None
    rows = ast.unparse(first.right)
    if id(fn) not in dims.scaled:
        dims.scaled[id(fn)] = [
            (node.left.id, ast.unparse(node.right))
            for node in ast.walk(fn)
            if isinstance(node, ast.BinOp)
            and isinstance(node.op, ast.Mult)
            and isinstance(node.left, ast.Name)
            and node.left.id in scalars
        ]
    for index, scaled_rows in dims.scaled[id(fn)]:
        if scaled_rows == rows:
            kind = _INDEX_TYPES.get(scalars[index], "int32")
            typed = "" if kind == "int32" else f", index_type: {kind}"
            layers = dims.expr(mod, first.left)
            stack = f", stacked: {{layers: {layers}, index: {index}{typed}}}"
            return stack, dims.expr(mod, first.right), index
    return None

"""The values the reader computes, and the small pure helpers over ``ast`` it uses."""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from plancc.source.limits import Budget
from plancc.source.modules import Module


@dataclass(frozen=True)
class TensorV:
    root: str
    part: bool = False  # a slice or subscript of ``root``, not all of it
    # A part the warm forms know (warm_forms.py): one layer's slab of a stacked weight,
    # the layer-index variable it is sliced at (`layer_idx`, the next layer's `layer_idx +
    # 1`); and a prefix's whole leading-dim rows [lo, hi) (of the slab, of a stack's).
    slab: str | None = None
    rows: tuple[int, int] | None = None


def part_of(v: Any) -> Any:
    """A slice of tensor ``v`` (`pl.slice`, a subscript), else unknown."""
    return TensorV(v.root, part=True) if isinstance(v, TensorV) else UNKNOWN


@dataclass(frozen=True)
class ScalarV:
    """A scalar parameter of the layer function (`layer_idx: pl.Scalar[pl.INT32]`): its
    value is known only at run time, its name is what a warm's layer index names."""

    name: str


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


def is_warm_module(name: str) -> bool:
    """A generated warm module: `<model>_warms` (plancc build's output)."""
    return name.endswith("_warms")


@dataclass(frozen=True)
class ClassV:
    module: Module
    node: ast.ClassDef


class FreeNames:
    """Names given as PyPTO's outliner gives a scope its name: the base while it is free,
    else the smallest free `base_N` from `_0`. Names are only ever taken, so the search
    for a base goes on where it stopped: n names of one base cost n steps, not n**2 / 2."""

    def __init__(self) -> None:
        self.taken: set[str] = set()
        self.next: dict[str, int] = {}  # base -> the smallest N whose `base_N` may be free

    def take(self, base: str) -> str:
        name = base
        n = self.next.get(base, 0)
        while name in self.taken:
            name = f"{base}_{n}"
            n += 1
        self.next[base] = n
        self.taken.add(name)
        return name


def tensor_only(v: Any) -> Any:
    return v if isinstance(v, TensorV) else UNKNOWN


def roots(v: Any) -> set[str]:
    if isinstance(v, TensorV):
        return {v.root}
    if isinstance(v, TupleV):
        out: set[str] = set()
        for item in v.items:
            out |= roots(item)
        return out
    return set()


def is_opaque(v: Any) -> bool:
    return isinstance(v, TaskV) and v.opaque


def is_jit(fn: ast.FunctionDef) -> bool:
    for d in fn.decorator_list:
        name = dotted(d.func if isinstance(d, ast.Call) else d)
        if name in ("pl.jit.inline", "pl.jit", "pl.inline", "pl.function"):
            return True
    return False


def is_incore(fn: ast.FunctionDef) -> bool:
    """A kernel of its own (`@pl.jit.incore`, `@pl.jit.extern`): called, not inlined."""
    for d in fn.decorator_list:
        if dotted(d.func if isinstance(d, ast.Call) else d) in ("pl.jit.incore", "pl.jit.extern"):
            return True
    return False


def choice_reason(mod: Module, budget: Budget) -> str:
    """`, on environment variable X` when the module reads one."""
    for node in walk(mod.tree, budget):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        arg = node.args[0]
        env = dotted(node.func) in ("os.environ.get", "os.getenv")
        if env and isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            return f", on environment variable {arg.value}"
    return ""


def dotted(node: ast.AST | None) -> str:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


def base_node(node: ast.expr | None) -> ast.Name | None:
    while isinstance(node, ast.Subscript):
        node = node.value
    return node if isinstance(node, ast.Name) else None


def walk_body(body: Sequence[ast.AST], budget: Budget) -> Iterator[ast.AST]:
    """Every node of ``body`` in source order (iterative), each paid from ``budget``."""
    stack: list[ast.AST] = list(reversed(body))
    while stack:
        node = stack.pop()
        budget.spend()
        yield node
        stack.extend(reversed(list(ast.iter_child_nodes(node))))


def walk(node: ast.AST, budget: Budget) -> Iterator[ast.AST]:
    """``node`` and every node under it (as ``ast.walk``), each paid from ``budget``."""
    return walk_body([node], budget)


def prefetched(nodes: Sequence[ast.AST]) -> list[str] | None:
    """The variables a warm scope (its ``nodes``, in source order) prefetches, in order;
    None for any other scope."""
    names: list[str] = []
    found = False
    for node in nodes:
        if isinstance(node, ast.Call) and dotted(node.func) == "pl.prefetch.async_prefetch":
            found = True
            if node.args and isinstance(node.args[0], ast.Name):
                names.append(node.args[0].id)
    return names if found else None


def hints_in(node: ast.AST, budget: Budget) -> frozenset[str]:
    out = set()
    for n in walk(node, budget):
        if (
            isinstance(n, ast.keyword)
            and n.arg == "name_hint"
            and isinstance(n.value, ast.Constant)
        ):
            out.add(str(n.value.value))
    return frozenset(out)


def hints_reachable(mod: Module, fn: ast.FunctionDef, budget: Budget) -> frozenset[str]:
    """The name hints of ``fn`` and of every function of its module it calls, transitively."""
    out: set[str] = set()
    seen: set[str] = set()
    todo: list[ast.AST] = [fn]
    while todo:
        node = todo.pop()
        out |= hints_in(node, budget)
        for n in walk(node, budget):
            if isinstance(n, ast.Name) and n.id not in seen:
                seen.add(n.id)
                target = mod.globals.get(n.id)
                if isinstance(target, ast.FunctionDef):
                    todo.append(target)
    return frozenset(out)


def int_or_none(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, Dynamic)


def binop(op: ast.operator, a: Any, b: Any) -> Any:
    if isinstance(a, Dynamic) or isinstance(b, Dynamic):
        return a if isinstance(a, Dynamic) else b
    if not (number(a) and number(b)):
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


def compare(op: ast.cmpop, a: Any, b: Any) -> Any:
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


def eval_local(node: ast.expr, env: dict[str, Any], fallback: Any) -> Any:
    """A condition over local constants (a helper's constant parameter)."""
    if isinstance(node, ast.Name) and node.id in env:
        return env[node.id]
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        return compare(
            node.ops[0],
            eval_local(node.left, env, fallback),
            eval_local(node.comparators[0], env, fallback),
        )
    if isinstance(node, ast.BinOp):
        return binop(
            node.op, eval_local(node.left, env, fallback), eval_local(node.right, env, fallback)
        )
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        v = eval_local(node.operand, env, fallback)
        return UNKNOWN if v is UNKNOWN else not v
    return fallback(node)

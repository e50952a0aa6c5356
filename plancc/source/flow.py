"""Values that flow between kernels (docs/sources.md, "Order").

A kernel body is Python code of the function it is written in: a name it binds is a
name of that function, and a later scope that uses it reads what the kernel made (a
tile computed in `q_head_proj`, assembled by `q_head_proj_write`). PyPTO outlines
each scope into a function and passes such a value out of one and into the next,
so the second depends on the first, as on a tensor it wrote. Here a name a kernel
binds leaves it as a value the kernel wrote (the tensor it aliases, or a tile of
its own), and a use in a later kernel *before* that kernel binds the name again
reads it; a use after a rebinding reads the kernel's own value.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

Position = tuple[int, int]  # (line, column) of the source


def _names(target: ast.AST) -> Iterable[ast.Name]:
    """The names a binding target binds (`a`, `a, (b, c)`; not `a[i]` or `a.x`)."""
    if isinstance(target, ast.Name):
        yield target
    elif isinstance(target, (ast.Tuple, ast.List)):
        for e in target.elts:
            yield from _names(e)
    elif isinstance(target, ast.Starred):
        yield from _names(target.value)


def _end(node: ast.AST) -> Position:
    return (getattr(node, "end_lineno", 0) or 0, getattr(node, "end_col_offset", 0) or 0)


BINDING = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.NamedExpr, ast.For, ast.withitem)
COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)


def binding(node: ast.AST) -> list[tuple[str, Position]]:
    """The names one node binds, each with where the binding takes effect: after the
    value is evaluated (`x = f(x)` reads the `x` before it), after a loop's iterable
    for its variable."""
    targets: list[ast.AST] = []
    at: ast.AST = node
    if isinstance(node, ast.Assign):
        targets = list(node.targets)
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.NamedExpr)):
        targets = [node.target]
    elif isinstance(node, ast.For):
        targets, at = [node.target], node.iter
    elif isinstance(node, ast.withitem) and node.optional_vars is not None:
        targets, at = [node.optional_vars], node.context_expr
    return [(n.id, _end(at)) for t in targets for n in _names(t)]


def bound(nodes: Iterable[ast.AST]) -> dict[str, Position]:
    """Each name a body (its nodes in source order) binds, with where its first binding
    takes effect."""
    out: dict[str, Position] = {}
    for node in nodes:
        for name, at in binding(node):
            out.setdefault(name, at)
    return out


def comprehended(node: ast.AST) -> set[int]:
    """The uses of a comprehension's own variables inside it (`[t[i] for i in ...]`):
    local to it, whatever the body binds before or after."""
    if not isinstance(node, COMPREHENSIONS):
        return set()
    own = {n.id for g in node.generators for n in _names(g.target)}
    return {id(n) for n in ast.walk(node) if isinstance(n, ast.Name) and n.id in own}


def reads_before(node: ast.Name, binds: dict[str, Position]) -> bool:
    """Whether a use of ``node`` (a load) reads the value the name had before the body:
    the body binds it nowhere before it."""
    first = binds.get(node.id)
    return first is None or (node.lineno, node.col_offset) < first

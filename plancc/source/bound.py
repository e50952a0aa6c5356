"""Names a call's arguments use that nothing binds: Python raises NameError there.

A generated warm's docstring says to pass its guard's variable (`ctx_len`); a model
function that has no such variable fails when PyPTO parses it, not when plancc reads
it. Scoping is Python's own (``symtable``), so only what is certain is said: a name
the function neither takes, assigns nor imports, that no module-level statement binds
and that is no builtin. A nested function (its enclosing scopes' names) or a module
with a `from x import *` is never judged.
"""

from __future__ import annotations

import ast
import builtins
import symtable
from collections.abc import Iterable, Iterator
from functools import lru_cache

from plancc.source.modules import Module

_BUILTINS = frozenset(dir(builtins))


def unbound(module: Module, function: str, line: int, names: Iterable[str]) -> tuple[str, ...]:
    """Of ``names``, those the top-level function ``function`` holding ``line`` uses
    without anything binding them, in the order given."""
    if module.stars:
        return ()
    fn = _function(module.tree, function, line)
    if fn is None:
        return ()
    wanted = [n for n in dict.fromkeys(names) if n not in _BUILTINS]
    if not wanted:
        return ()
    top = _module_names(module.tree)
    table = _table(fn)
    if table is None:
        return ()
    out = []
    for name in wanted:
        try:
            sym = table.lookup(name)
        except KeyError:  # only a comprehension or a lambda inside uses it
            continue
        local = sym.is_parameter() or sym.is_assigned() or sym.is_imported()
        if not local and not sym.is_nonlocal() and name not in top:
            out.append(name)
    return tuple(out)


def _function(tree: ast.Module, name: str, line: int) -> ast.FunctionDef | None:
    """The function ``name`` of the module, or a method of a top-level class, whose
    lines hold ``line``; None when it is nested in another function or not found."""
    tops: list[ast.stmt] = list(tree.body)
    tops += [s for c in tree.body if isinstance(c, ast.ClassDef) for s in c.body]
    for node in tops:
        if (
            isinstance(node, ast.FunctionDef)
            and node.name == name
            and node.lineno <= line <= (node.end_lineno or node.lineno)
        ):
            return node
    return None


# Both kept per parsed node (a few: a stale module's tree is not held long), so a function
# calling many warms is read once, not once per call.
@lru_cache(maxsize=8)
def _table(fn: ast.FunctionDef) -> symtable.SymbolTable | None:
    """The function's own symbol table (the only child of its source's); None where
    Python refuses its scoping (`nonlocal` with nothing around it, say)."""
    try:
        (child,) = symtable.symtable(ast.unparse(fn), "<function>", "exec").get_children()
    except SyntaxError:
        return None
    return child


@lru_cache(maxsize=8)
def _module_names(tree: ast.Module) -> frozenset[str]:
    """Every name a module-level statement binds: in `if`, `try`, `with` and `for`
    blocks too, not inside functions or classes."""
    return frozenset(_bound(tree.body))


def _bound(body: list[ast.stmt]) -> Iterator[str]:
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield node.name
            continue
        if isinstance(node, ast.Lambda):
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield from ((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            yield node.id
        elif isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name:
            yield node.name
        elif isinstance(node, ast.MatchMapping) and node.rest:
            yield node.rest
        stack.extend(ast.iter_child_nodes(node))

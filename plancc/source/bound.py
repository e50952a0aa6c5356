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

from plancc.source.limits import Budget
from plancc.source.modules import Module

_BUILTINS = frozenset(dir(builtins))


class Unbound:
    """One reading's judge of unbound names: each function's scoping and each module's
    names are worked out once (a layer calling warms N times would otherwise walk its
    module N times), and every node walked is spent from the reading's ``budget``."""

    def __init__(self, budget: Budget) -> None:
        self.budget = budget
        self._tops: dict[int, frozenset[str]] = {}  # by id of a module's tree
        self._tables: dict[int, symtable.SymbolTable | None] = {}  # by id of a function
        self._named: dict[tuple[int, str], list[ast.FunctionDef]] = {}  # by module, name

    def __call__(
        self, module: Module, function: str, line: int, names: Iterable[str]
    ) -> tuple[str, ...]:
        """Of ``names``, those the top-level function ``function`` holding ``line`` uses
        without anything binding them, in the order given."""
        if module.stars:
            return ()
        wanted = [n for n in dict.fromkeys(names) if n not in _BUILTINS]
        fn = self._function(module.tree, function, line) if wanted else None
        if fn is None:
            return ()
        if id(fn) not in self._tables:
            self.budget.spend()
            self._tables[id(fn)] = _table(ast.unparse(fn))
        table = self._tables[id(fn)]
        if table is None:
            return ()
        tree = module.tree
        if id(tree) not in self._tops:
            self._tops[id(tree)] = frozenset(_bound(tree.body, self.budget))
        top = self._tops[id(tree)]
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

    def _function(self, tree: ast.Module, name: str, line: int) -> ast.FunctionDef | None:
        """The function ``name`` whose lines hold ``line``; None when not found."""
        key = (id(tree), name)
        if key not in self._named:
            self.budget.spend(len(tree.body))
            self._named[key] = _functions(tree, name)
        return next(
            (f for f in self._named[key] if f.lineno <= line <= (f.end_lineno or f.lineno)),
            None,
        )


def _functions(tree: ast.Module, name: str) -> list[ast.FunctionDef]:
    """The module's functions ``name`` and the methods ``name`` of its top-level classes
    (a function nested in another is not judged)."""
    tops: list[ast.stmt] = list(tree.body)
    tops += [s for c in tree.body if isinstance(c, ast.ClassDef) for s in c.body]
    return [n for n in tops if isinstance(n, ast.FunctionDef) and n.name == name]


def _table(source: str) -> symtable.SymbolTable | None:
    """The function's own symbol table (the only child of its source's); None where
    Python refuses its scoping (`nonlocal` with nothing around it, say)."""
    try:
        (child,) = symtable.symtable(source, "<function>", "exec").get_children()
    except SyntaxError:
        return None
    return child


def _bound(body: list[ast.stmt], budget: Budget) -> Iterator[str]:
    """Every name a module-level statement binds: in `if`, `try`, `with` and `for`
    blocks too, not inside functions or classes."""
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        budget.spend()
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

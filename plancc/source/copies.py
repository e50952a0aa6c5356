"""Unrolled copies (docs/sources.md, "How a plan maps to the code").

PyPTO replicates the body of a `pl.unroll` loop outside kernels once per iteration,
statically: each copy is read with the loop variable a constant, its scopes are
kernels of their own, and the outliner names them in program order like any
repeated name (the first keeps its `name_hint`, later ones `_0`, `_1`, …; pypto-facts
"Unrolled copies"). A `pl.range` or `pl.parallel` body is one kernel submitted many
times. A later copy of a scope records the index of its first copy: a plan stage
standing for the scope stands for all its copies, as for a loop's iterations.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from plancc.source.values import dotted, int_or_none

MAX_COPIES = 1024  # copies of one unrolled body; past it the body is read once (PC208)

Site = tuple[str, int, tuple[str, ...]]  # what, id of its statement, the helpers it is in


def unroll_values(it: ast.expr, const: Callable[[ast.expr], Any]) -> list[int] | None:
    """The loop variable's values of `pl.unroll(stop)`, `(start, stop)` or `(start, stop,
    step)` with constant arguments; None for any other loop or a count not known."""
    if not (isinstance(it, ast.Call) and dotted(it.func) == "pl.unroll") or it.keywords:
        return None
    args: list[int] = []
    for a in it.args:
        v = int_or_none(const(a))
        if v is None:
            return None
        args.append(v)
    if not 1 <= len(args) <= 3:
        return None
    bounds = [0, *args] if len(args) == 1 else args
    start, stop, step = (*bounds, 1) if len(bounds) == 2 else bounds
    if step == 0 or len(range(start, stop, step)) > MAX_COPIES:
        return None
    return list(range(start, stop, step))


def is_unroll(it: ast.expr) -> bool:
    return isinstance(it, ast.Call) and dotted(it.func) == "pl.unroll"


@dataclass
class _Unroll:
    copy: int = 0
    first: dict[tuple[Site, int], int] = field(default_factory=dict)
    seen: dict[Site, int] = field(default_factory=dict)


class Copies:
    """The unrolled loops being read, outermost first, and what their first copies made."""

    def __init__(self) -> None:
        self.active: list[_Unroll] = []

    @contextmanager
    def unroll(self) -> Iterator[Callable[[], None]]:
        """Within it, one unrolled loop is read; call what it gives before each copy."""
        u = _Unroll(copy=-1)

        def next_copy() -> None:
            u.copy += 1
            u.seen = {}

        self.active.append(u)
        try:
            yield next_copy
        finally:
            self.active.pop()

    def first(self, site: Site, index: int) -> int | None:
        """``index`` made at ``site``: the index its first copy has when it is a later
        copy of the same scope (the outermost loop's, for nested ones), else None."""
        found: int | None = None
        for u in self.active:
            n = u.seen.get(site, 0)
            u.seen[site] = n + 1
            key = (site, n)
            if u.copy == 0:
                u.first.setdefault(key, index)
            elif found is None:
                found = u.first.get(key)
        return found

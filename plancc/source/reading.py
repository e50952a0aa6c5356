"""What a reading of a layer function gives: its parameters, kernels, tasks, warms, and
what could not be resolved (see ``plancc.source.reader``)."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from functools import cached_property

from plancc.source.modules import Module

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
    # A bare `pl.Tensor`: its annotation is a caller's (``module``, where its dims are
    # written, and ``origin``, "file:line"), or none was found (``dims`` empty).
    bare: bool = False
    module: Module | None = None
    origin: str = ""

    @property
    def unknown_shape(self) -> bool:
        return self.bare and self.module is None


@dataclass
class Kernel:
    index: int
    name: str  # as PyPTO names it: the name_hint, `_0`, `_1`, ... on repeats
    hint: str
    file: str
    line: int
    task: str | None = None  # the `as` variable, in its own function
    reads: set[str] = field(default_factory=set)  # tensor roots
    # A read of columns [lo, hi) of a layer parameter only, where every subscript shows it
    # (docs/sources.md, "Partial reads"); a root not here is read whole.
    columns: dict[str, tuple[int, int]] = field(default_factory=dict)
    writes: set[str] = field(default_factory=set)
    deps: set[int] = field(default_factory=set)  # explicit: `deps=` (task_dummy mapped through)
    after: set[int] = field(default_factory=set)  # the last writers of what it reads or writes
    opaque: bool = False  # an unresolved helper or branch: may read and write all it is given
    names: frozenset[str] = frozenset()  # an opaque kernel: the names its code could give
    collectives: tuple[str, ...] = ()  # the inter-rank primitives it calls (collectives.py)


@dataclass(frozen=True)
class Warm:
    """An `async_prefetch` scope in the code."""

    name_hint: str
    file: str
    line: int
    tensors: tuple[str, ...]  # roots, in issue order
    deps: frozenset[int]  # kernels it waits for
    dep_names: tuple[str, ...]  # the task variables of its `deps=`
    part: bool = False  # warms a slice of a tensor (one layer's of a stack): no plan warm can


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
    effect: str = "the checks of what it runs are skipped"
    choice: bool = False  # a run-time choice taken (choices.py): ``effect`` says how to change it


@dataclass(eq=False)
class Loop:
    """A `for` loop outside kernels (its scopes run once per iteration)."""

    file: str
    line: int
    target: str  # the loop variable(s), as written
    first: int  # the index of the first kernel inside it
    end: int = -1  # one past the index of its last kernel, once walked

    def holds(self, kernels: set[int]) -> bool:
        """Whether every kernel inside the loop is one of ``kernels``."""
        return all(i in kernels for i in range(self.first, self.end))


@dataclass(frozen=True)
class Task:
    """A TaskId variable of the layer function (or, ``inner``, of a helper it inlines)."""

    name: str
    kernels: frozenset[int]
    file: str
    line: int
    opaque: bool = False  # bound to the result of something unresolved
    loop: Loop | None = None  # bound inside a loop: the innermost one


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
    # The TaskId variables of inlined helpers, named as repeated kernels are (`rms_tid`,
    # then `rms_tid_0`, ...; never a name of the layer function's): what a warm scope of
    # a helper waits for, which a plan describing that scope anchors on.
    inner: dict[str, Task] = field(default_factory=dict)

    def task(self, name: str) -> Task | None:
        """The layer function's task ``name``, else the helper's so named."""
        return self.tasks.get(name) or self.inner.get(name)

    def kernel(self, name: str) -> Kernel | None:
        return self._by_name.get(name)

    @cached_property
    def _by_name(self) -> dict[str, Kernel]:
        out: dict[str, Kernel] = {}
        for k in self.kernels:
            if not k.opaque:
                out.setdefault(k.name, k)
        return out

    @cached_property
    def possible(self) -> frozenset[str]:
        """Kernel names that unresolved code could give."""
        return frozenset(n for k in self.kernels if k.opaque for n in k.names)

    def params_of(self, roots: set[str]) -> set[str]:
        return {r for r in roots if r in self.params}

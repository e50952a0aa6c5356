"""What a reading of a layer function gives: its parameters, kernels, tasks, warms, and
what could not be resolved (see ``plancc.source.reader``)."""

from __future__ import annotations

import ast
from collections.abc import Iterable
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
    copy_of: int | None = None  # a later copy of an unrolled scope: the index of its first


@dataclass(frozen=True)
class WarmEntry:
    """A tensor a warm in the code prefetches (warm_forms.py): its root, and what part of
    it where a generated form says (one layer's slab of a stack, at the variable
    ``index``: `layer_idx`, or the next layer's `layer_idx + 1`; a prefix's ``rows``, whole
    rows [lo, hi) of its first dim, of the slab where it is a stack's); None: the whole
    tensor, or a part no plan warm can declare."""

    tensor: str | None
    index: str | None = None
    rows: tuple[int, int] | None = None


@dataclass(frozen=True)
class Condition:
    """An `if VARIABLE op BOUND:` a warm is issued under (warm_forms.py): a guard
    (`ctx_len <= 2272`), or the test that spares the last layer a cross-layer warm
    (`layer_idx < NUM_LAYERS - 1`). ``bound``: its value, None when not a constant."""

    variable: str
    op: str
    bound: int | None
    text: str  # as written: `ctx_len <= 2272`

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class Warm:
    """An `async_prefetch` scope in the code."""

    name_hint: str
    file: str
    line: int
    entries: tuple[WarmEntry, ...]  # in issue order
    deps: frozenset[int]  # kernels it waits for
    dep_names: tuple[str, ...]  # the task variables of its `deps=`
    part: bool = False  # warms a slice no plan warm can declare (one layer's of a stack that
    # no layer-index variable of the layer function picks, say)
    copy: bool = False  # a later copy of an unrolled scope: its first copy stands for it
    conditions: tuple[Condition, ...] = ()  # the `if`s around the scope, outermost first

    @property
    def tensors(self) -> tuple[str, ...]:
        return tuple(e.tensor for e in self.entries if e.tensor is not None)


@dataclass(frozen=True)
class WarmCall:
    """A call of a generated warm function (warm_forms.py): imported from a generated
    `<model>_warms` module, or a function of the generated form wherever defined."""

    function: str
    file: str
    line: int
    entries: tuple[WarmEntry, ...]  # its tensor arguments, in issue order
    tasks: tuple[str | None, ...]  # the variables of its TaskId arguments: the anchors
    deps: frozenset[int]
    scalars: tuple[str, ...] = ()  # the variables of its other scalar arguments
    name_hint: str | None = None  # its scope's, where its definition was read
    read: bool = False  # its definition was read: ``entries`` know their slabs
    copy: bool = False  # a later copy of an unrolled scope
    # The `if`s it is issued under: around the call, then those of its definition (its
    # guards, their variables the arguments passed), outermost first.
    conditions: tuple[Condition, ...] = ()
    # How its arguments miss its definition's parameters ("5 arguments; f() takes 6: none
    # for ctx_len"), where its definition was read; None when they match.
    arity: str | None = None
    # Its arguments' variables that nothing binds where it is called (bound.py).
    unbound: tuple[str, ...] = ()

    @property
    def tensors(self) -> tuple[str | None, ...]:
        return tuple(e.tensor for e in self.entries)


@dataclass(frozen=True)
class Unresolved:
    file: str
    line: int
    what: str
    effect: str = "the checks of what it runs are skipped"
    choice: bool = False  # a run-time choice taken (choices.py): ``effect`` says how to change it


@dataclass(eq=False)
class Loop:
    """A `for` loop outside kernels (its scopes run once per iteration; an unrolled one's
    are copied, one per iteration)."""

    file: str
    line: int
    target: str  # the loop variable(s), as written
    first: int  # the index of the first kernel inside it
    end: int = -1  # one past the index of its last kernel, once walked
    last: int = 0  # its last line


@dataclass(frozen=True)
class Task:
    """A TaskId variable of the layer function (or, ``inner``, of a helper it inlines)."""

    name: str
    kernels: frozenset[int]
    file: str
    line: int
    opaque: bool = False  # bound to the result of something unresolved
    loops: tuple[Loop, ...] = ()  # bound inside loops outside kernels: those, outermost first
    last: int = 0  # the last line of the statement that binds it (a `with` block's)

    @property
    def loop(self) -> Loop | None:
        """The innermost loop it is bound in."""
        return self.loops[-1] if self.loops else None

    @property
    def end(self) -> tuple[str, int]:
        """The file and line after which its value holds for good: the end of the block
        that binds it, or of the outermost loop it is bound in (inside either, a later
        line may see no task yet, or another iteration's)."""
        if self.loops:
            return (self.loops[0].file, self.loops[0].last)
        return (self.file, self.last or self.line)

    @property
    def after(self) -> str:
        return "{}:{}".format(*self.end)


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

    def anchor(
        self, stages: Iterable[tuple[str, str]], kernels: frozenset[int]
    ) -> str | list[str] | None:
        """The stage whose task stands for ``kernels`` (a warm's anchor), else the stages
        whose tasks together stand for them (a join, in stage order); None when none do.
        ``stages``: each stage with its task, the first of stages whose tasks' kernels are
        the same taken."""
        parts: dict[frozenset[int], str] = {}
        for stage, name in stages:
            task = self.task(name)
            if task is not None and task.kernels and task.kernels <= kernels:
                parts.setdefault(task.kernels, stage)
        if kernels in parts:
            return parts[kernels]
        if len(parts) > 1 and frozenset().union(*parts) == kernels:
            return list(parts.values())
        return None

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

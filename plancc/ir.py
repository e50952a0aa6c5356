"""The resolved plan: frozen values that the check, render and write stages consume.

Every number here is exact (integers of bytes and elements); every name has
passed the identifier checks; every position points into the plan file. The IR is
read-only: frozen dataclasses, tuples, and mappings typed ``Mapping`` (built as
``MappingProxyType``). Values derived from a frozen field (a tensor's bytes, a
stage's consumer group, a layer kind's schedule) are ``cached_property``: the rules
ask for them per warm.

A record keeps ``locate``, which looks its node up in the document when a
diagnostic or the report asks for its position. ``locate`` is not compared: two
records of the same values are equal wherever they were written.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from types import MappingProxyType

from plancc.diagnostics import Pos
from plancc.schedule import Schedule, schedule
from plancc.tables.dtypes import DType
from plancc.tables.platforms import Platform

# Where a record's node is (no argument), or a node under it (``locate("name")``).
Locate = Callable[..., Pos]
# A rule id an `allow` or `lint.ignore` names: (id, where, which silence, its document path).
Silence = tuple[str, Pos, str, tuple[str | int, ...]]


@dataclass(frozen=True)
class Dim:
    name: str
    value: int | None  # None: dynamic


@dataclass(frozen=True)
class Param:
    """A run-time parameter: its default, its range and the value this check takes."""

    name: str
    default: int
    lo: int
    hi: int
    value: int
    source: str = ""  # the model code's run-time variable: a guard's parameter

    @cached_property
    def variable(self) -> str:
        """The generated function's parameter for it (no leading underscores)."""
        return (self.source or self.name.lower()).lstrip("_")


@dataclass(frozen=True)
class Stacked:
    """A tensor the model passes as every layer's copy stacked along the first dim."""

    layers: int
    layers_source: str  # Python source, with the plan's names
    names: frozenset[str]  # dims and config keys ``layers_source`` uses
    index: str  # the model code's layer-index scalar, as the plan names it
    index_type: str = "int32"  # its scalar type: int32, int64 or index

    @cached_property
    def index_param(self) -> str:
        """The generated function's parameter for the index (no leading underscores)."""
        return self.index.lstrip("_")


@dataclass(frozen=True)
class FlatView:
    """A flat view: its entries as Python source, their values, and the names they use."""

    source: tuple[str, ...]
    values: tuple[int | None, ...]  # None: a dynamic entry (never valid for a warm)
    names: frozenset[str]
    locate: Locate = field(compare=False, repr=False)
    declared: bool
    params: frozenset[str] = frozenset()  # the params its entries depend on (PC020)

    @cached_property
    def pos(self) -> Pos:
        return self.locate()

    @cached_property
    def elements(self) -> int | None:
        n = 1
        for v in self.values:
            if v is None:
                return None
            n *= v
        return n

    @cached_property
    def is_flat(self) -> bool:
        return len(self.values) <= 3 and all(v == 1 for v in self.values[:-1])


@dataclass(frozen=True)
class Tensor:
    name: str
    dtype: DType
    shape_source: tuple[str, ...]
    shape: tuple[int | None, ...]  # None: a dynamic dim
    names: frozenset[str]  # dims and config keys the shape uses
    flat: FlatView | None  # None for a tensor with a dynamic dim
    stacked: Stacked | None = None  # the shape is one layer's slab of a stack
    params: frozenset[str] = frozenset()  # the params its shape depends on (PC020)

    @cached_property
    def static(self) -> bool:
        return all(d is not None for d in self.shape)

    @cached_property
    def elements(self) -> int | None:
        n = 1
        for d in self.shape:
            if d is None:
                return None
            n *= d
        return n

    @cached_property
    def bytes(self) -> int | None:
        n = self.elements
        return None if n is None else -(-n * self.dtype.bits // 8)


@dataclass(frozen=True)
class Stage:
    name: str
    index: int
    task: str | None
    reads: tuple[str, ...]
    streams: int
    sdma: bool
    group: str | None  # the declared consumer group
    duration_us: float | None
    kernel: str | None = None  # its kernel name in a swimlane trace (`plancc measure`)
    collective: str | None = None  # the engine of the collective it is (`tables.engines`)
    locate: Locate | None = field(default=None, compare=False, repr=False)
    # The indices of the stages it waits for, None without `deps` (it waits for the one before).
    deps: tuple[int, ...] | None = None
    # The tensors it reads part of (`{tensor, share}`), with that share; others whole.
    shares: tuple[tuple[str, Fraction], ...] = ()

    def read_bytes(self, tensor: Tensor) -> int:
        """The bytes it streams of ``tensor`` (a static tensor it reads): its share, rounded up."""
        full = tensor.bytes or 0
        for name, share in self.shares:
            if name == tensor.name:
                return -(-full * share.numerator // share.denominator)
        return full

    @cached_property
    def pos(self) -> Pos | None:
        """Where its entry starts: `plancc report` places diagnostics by it."""
        return None if self.locate is None else self.locate()

    @property
    def number(self) -> int:
        """Its place in the layer kind's list as people count, from 1 (``index`` counts
        from 0): how the report and the editor's hover name it."""
        return self.index + 1

    @cached_property
    def consumer_group(self) -> tuple[str, str]:
        """Stages sharing a declared group consume together; any other stage is its own group."""
        return ("group", self.group) if self.group is not None else ("stage", self.name)


@dataclass(frozen=True)
class Rows:
    """A prefix warm's range [lo, hi) of a tensor's first dimension (`rows: [LO, HI]`)."""

    lo: int
    hi: int
    lo_source: str  # Python source, with the plan's names
    hi_source: str
    names: frozenset[str]  # dims and config keys the sources use

    def overlaps(self, other: Rows | None) -> bool:
        """Whether the two ranges share a row; None stands for the whole tensor."""
        return other is None or (self.lo < other.hi and other.lo < self.hi)

    def __str__(self) -> str:
        return f"rows [{self.lo:,}, {self.hi:,})"


@dataclass(frozen=True)
class WarmEntry:
    tensor: Tensor
    flat: FlatView | None  # the view this warm uses (entry override, else the tensor's)
    locate: Locate = field(compare=False, repr=False)
    index: int = field(default=-1, compare=False)  # its item's index in the document's list
    rows: Rows | None = None  # a prefix warm: the range of the first dim it warms

    @cached_property
    def pos(self) -> Pos:
        return self.locate()

    @cached_property
    def bytes(self) -> int:
        """The bytes it warms: its rows' share of the tensor's (whole rows), or all of it."""
        full = self.tensor.bytes or 0
        first = self.tensor.shape[0] if self.tensor.shape else None
        if self.rows is None or not first:
            return full
        elements = (self.tensor.elements or 0) // first * (self.rows.hi - self.rows.lo)
        return -(-elements * self.tensor.dtype.bits // 8)

    @cached_property
    def elements(self) -> int | None:
        """The elements it warms (its flat view must hold as many)."""
        n = self.tensor.elements
        first = self.tensor.shape[0] if self.tensor.shape else None
        if n is None or self.rows is None or not first:
            return n
        return n // first * (self.rows.hi - self.rows.lo)

    @property
    def key(self) -> tuple[str, int, int]:
        """What it holds in L2, to count each held region once: the tensor and its rows."""
        if self.rows is None:
            return (self.tensor.name, 0, -1)
        return (self.tensor.name, self.rows.lo, self.rows.hi)

    @property
    def what(self) -> str:
        """How a message names it: ``'wo_a'``, or ``'wo_a' rows [0, 8)``."""
        return f"'{self.tensor.name}'" + ("" if self.rows is None else f" {self.rows}")

    def covers(self, other: WarmEntry) -> bool:
        """Whether it holds a row ``other`` holds too (same tensor, overlapping rows)."""
        if self.tensor.name != other.tensor.name:
            return False
        return self.rows is None or self.rows.overlaps(other.rows)


_OPS: Mapping[str, Callable[[int, int], bool]] = MappingProxyType(
    {
        "<=": lambda a, b: a <= b,
        ">=": lambda a, b: a >= b,
        "<": lambda a, b: a < b,
        ">": lambda a, b: a > b,
    }
)


@dataclass(frozen=True)
class Guard:
    """A run-time guard: the warm is issued only when ``param op bound`` holds."""

    param: str
    op: str  # <=, >=, <, >
    bound: int
    bound_source: str  # Python source of the bound, with the plan's names
    variable: str  # the generated function's parameter: the param's `source`
    locate: Locate = field(compare=False, repr=False)
    # Its item's index in a `guard` list and the list's length; (None, 1) for a string.
    item: tuple[int | None, int] = field(default=(None, 1), compare=False)

    @cached_property
    def pos(self) -> Pos:
        return self.locate()

    def admits(self, value: int) -> bool:
        return _OPS[self.op](value, self.bound)

    def admitted(self, lo: int, hi: int) -> tuple[int, int] | None:
        """The values of [lo, hi] it admits (an interval: one bound), or None."""
        if self.op in ("<=", "<"):
            top = self.bound if self.op == "<=" else self.bound - 1
            return (lo, min(hi, top)) if lo <= min(hi, top) else None
        bottom = self.bound if self.op == ">=" else self.bound + 1
        return (max(lo, bottom), hi) if max(lo, bottom) <= hi else None

    def __str__(self) -> str:
        return f"{self.param} {self.op} {self.bound_source}"


def allow_scope(warm: str) -> str:
    """How diagnostics name a warm's `allow` list, and how ``Plan.silences`` records it."""
    return f"allow on warm '{warm}'"


@dataclass(frozen=True)
class Warm:
    name: str
    name_hint: str
    layer: str
    # The index of the `after` stage, for a join the anchor stage that finishes last (of
    # one step, the first listed); None when an anchor names no stage (PC010).
    anchor: int | None
    entries: tuple[WarmEntry, ...]
    # The first and last step (``Layer.schedule.start``) during which it holds L2: from its
    # anchor's finish through the start of the last stage after it reading its tensors.
    live: tuple[int, int]
    allow: Mapping[str, Pos]  # rule ids this warm accepts (upper case), where first named
    reason: str | None
    # A key of the warm's entry: ``locate("after")``.
    locate: Locate = field(compare=False, repr=False)
    # Its entry's path in the document (``("layers", "csa", "warms", 0)``), and how many
    # items its `tensors` list has there (some may not have resolved): what fixes edit.
    path: tuple[str | int, ...] = field(default=(), compare=False, repr=False)
    listed: int = field(default=0, compare=False, repr=False)
    # Every anchor stage's index, in the order `after` lists them: one, or a join's; empty
    # when one names no stage.
    anchors: tuple[int, ...] = ()
    # False when an item of its `tensors` or `after` did not resolve (an unknown tensor or
    # stage, a bad view): the rules that judge the warm as a whole, and the L2 budget of
    # its layer kind, wait for the error (its entries or its place in time are not the
    # plan's).
    complete: bool = True
    # A cross-layer warm (`next_layer: true`): issued here, it warms the tensors the next
    # layer of the forward reads, and its consumers are that layer's stages.
    next_layer: bool = False
    guards: tuple[Guard, ...] = ()  # run-time guards, all of which must hold (`guard`)

    @property
    def join(self) -> bool:
        """Whether `after` lists several stages: the warm waits for all of them."""
        return len(self.anchors) > 1

    @cached_property
    def name_pos(self) -> Pos:
        return self.locate("name")

    @cached_property
    def after_pos(self) -> Pos:
        return self.locate("after")

    @cached_property
    def tensors_pos(self) -> Pos:
        return self.locate("tensors")

    @cached_property
    def bytes(self) -> int:
        """Its static entries' bytes (a prefix's rows only)."""
        return sum(e.bytes for e in self.entries if e.tensor.static)

    def admits(self, values: Mapping[str, int]) -> bool:
        """Whether every guard holds at these param values (a param not given: held)."""
        return all(g.param not in values or g.admits(values[g.param]) for g in self.guards)

    def alive_at(self, step: int) -> bool:
        """Whether it holds L2 during ``step``: for stage i, ``layer.schedule.start[i]``
        (for a layer kind without `deps` the step is the stage's index)."""
        return self.live[0] <= step <= self.live[1]


@dataclass(frozen=True)
class Layer:
    name: str
    stages: tuple[Stage, ...]
    warms: tuple[Warm, ...]
    # False when a stage was replaced by a stand-in after a schema error, or an error
    # left an entry of a stage's `deps` or `reads` out (an unknown name): the rules that
    # judge stage order and reads skip the layer kind rather than judge a graph or
    # readers that are not the plan's (one mistake, one finding: its error).
    complete: bool = True

    @property
    def budgeted(self) -> bool:
        """Whether the L2 budget rules judge it: complete, and every warm too (a warm in
        error holds bytes or a time the plan does not mean: the peak would be a guess)."""
        return self.complete and all(w.complete for w in self.warms)

    @cached_property
    def schedule(self) -> Schedule:
        """The stages as a graph of `deps`: every before / after / beside the rules ask."""
        return schedule([s.deps for s in self.stages])


@dataclass(frozen=True)
class Forward:
    kinds: tuple[str, ...]  # the layer kind of each layer, in order


@dataclass(frozen=True)
class Plan:
    file: str
    sha256: str
    model: str
    model_pos: Pos
    platform: Platform | None  # None when the platform key was invalid
    platform_pos: Pos
    l2_fraction: Fraction
    dims: tuple[Dim, ...]
    config: Mapping[str, int]  # the config keys the plan uses, with their values
    tensors: Mapping[str, Tensor]
    layers: Mapping[str, Layer]
    forward: Forward | None
    lint_ignore: Mapping[str, Pos]  # rule ids ignored plan-wide (upper case), where first named
    # Every rule id named by an `allow` (of any warm, resolved or not) or by
    # `lint.ignore`, as written: (id, where it is named, which silence names it, the
    # entry's path in the document).
    silences: tuple[Silence, ...]
    # Warm entries (mappings) in the document, including those schema recovery
    # dropped: PC031 is about the plan asking for warms, whether or not they resolved.
    declared_warms: int
    # The `config` file as read (its path from the working directory, the SHA-256 of its
    # bytes), for the manifest's source.config; None without a readable config.
    config_file: tuple[str, str] | None = None
    params: tuple[Param, ...] = ()  # in plan order, each with the value this check takes
    # The warms whose guards the params' values here skip: left out of ``layers`` for the
    # rules of this check, judged at other values (``plancc.facts.admitted``).
    skipped: tuple[Warm, ...] = ()

    @cached_property
    def at_values(self) -> str:
        """The params this check takes away from their default, as a message says it:
        ``BATCH=1, CTX=128``; empty at the defaults."""
        return ", ".join(f"{p.name}={p.value}" for p in self.params if p.value != p.default)

    @property
    def warms(self) -> tuple[Warm, ...]:
        return tuple(w for layer in self.layers.values() for w in layer.warms)

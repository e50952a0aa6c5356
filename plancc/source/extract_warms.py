"""The warms `plancc extract` writes: those already in the code (warm_forms.py), each as
the plan warm that would describe it, or left out and named (PC208) where none can.

A warm is written when its anchor is read (the stage whose task stands for exactly
the kernels it waits for, or the join of the stages whose tasks together do), every
tensor it warms is one the skeleton writes with a static shape, and each of them is
warmed as the skeleton declares it: whole where the tensor is not stacked, its slab
at the tensor's `stacked.index` where it is. A prefix of whole leading-dim rows is
written with its `rows`; a warm of the next layer's slabs (`layer_idx + 1`, under the
`if` that spares the last layer) with `next_layer: true`. A guarded warm (`if ctx_len <=
2272:`) is written with its `guard` on a param the skeleton declares for the variable
(``Written.param``); a guard whose bound is no constant is left out and named.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from plancc.source.extract_names import scalar
from plancc.source.reading import Condition, Reading, Warm, WarmCall, WarmEntry
from plancc.source.values import FreeNames
from plancc.tables.names import identifier_problem

Key = tuple[str, str]  # (layer kind, parameter)


@dataclass
class Written:
    """The parameters as the skeleton writes them."""

    names: dict[Key, str] = field(default_factory=dict)  # -> the plan tensor's name
    stacks: dict[Key, str] = field(default_factory=dict)  # -> a stacked tensor's index
    dynamic: set[Key] = field(default_factory=set)  # a dim written `dynamic`: never warmed
    taken: set[str] = field(default_factory=set)  # the names of dims and tensors
    # A guard's variable -> the param the skeleton declares for it, and its guards' `if`s.
    params: dict[str, tuple[str, list[Condition]]] = field(default_factory=dict)

    def declares(self, kind: str, w: Warm) -> bool:
        """Whether a warm scope's tensors are ones the skeleton can declare it over."""
        tensors = _tensors(kind, w.entries, self, None)
        return (
            not w.part
            and not w.copy
            and isinstance(tensors, Items)
            and not isinstance(_guards(w.conditions, tensors, self), str)
        )

    def param(self, c: Condition) -> str:
        """The param a guard on ``c``'s variable compares: the variable in upper case
        (`ctx_len` -> `CTX_LEN`), `_P` after it while that names a dim, a tensor or
        another variable's param."""
        if c.variable not in self.params:
            name = c.variable.lstrip("_").upper()
            if identifier_problem(name, reserved=True) is not None:
                name = "PARAM"  # too long to be a plan name, say
            taken = self.taken | {n for n, _ in self.params.values()}
            name = next(n for i in range(len(taken) + 1) if (n := f"{name}{'_P' * i}") not in taken)
            self.params[c.variable] = (name, [])
        self.params[c.variable][1].append(c)
        return self.params[c.variable][0]

    def param_lines(self) -> list[str]:
        """The `params:` the guards compare: each at the bounds its `if`s compare it with,
        a value each admits its default (the first's), a range from the first value one
        skips to the last: the model's own range is the author's to set."""
        if not self.params:
            return []
        lines = [
            "params:",
            "  # The guards' run-time values, ranged only across the bounds the code compares",
            "  # them with: give each the range the model serves.",
        ]
        for variable, (name, conditions) in self.params.items():
            values = [v for c in conditions for v in _edge(c)]
            lo, hi = max(1, min(values)), max(1, *values)  # a param is at least 1
            default = min(max(_edge(conditions[0])[0], lo), hi)
            source = "" if variable == name.lower() else f", source: {scalar(variable)}"
            lines.append(f"  {name}: {{default: {default}, range: [{lo}, {hi}]{source}}}")
        return lines


def _edge(c: Condition) -> tuple[int, int]:
    """The value next to ``c``'s bound it admits, and the one it skips."""
    bound = c.bound or 0
    return {
        "<=": (bound, bound + 1),
        "<": (bound - 1, bound),
        ">=": (bound, bound - 1),
        ">": (bound + 1, bound),
    }[c.op]


def warms(
    kind: str,
    *,
    reading: Reading,
    written: Written,
    notices: list[str],
    suffix: str,
    anchors: dict[str, str],
) -> list[str]:
    """The lines of a layer kind's `warms:` (``anchors``: a task -> the stage it is written
    on); a warm scope is named after its `name_hint` and ``suffix`` (warm names are
    plan-wide), a generated call after its function."""
    lines: list[str] = []
    used = FreeNames()
    for w in reading.warms:
        if w.copy:  # a later copy of an unrolled scope: its first copy's warm stands for it
            continue
        where = f"{w.file}:{w.line}: warm '{w.name_hint}' left out"
        anchor = _anchor(reading, anchors, w.deps)
        tensors = _tensors(kind, w.entries, written, None)
        guards = None if isinstance(tensors, str) else _guards(w.conditions, tensors, written)
        if w.part or isinstance(tensors, str):
            notices.append(f"{where}: it warms {'a slice' if w.part else tensors}")
        elif isinstance(guards, str):
            notices.append(f"{where}: {guards}")
        elif anchor is None or identifier_problem(w.name_hint, reserved=False) is not None:
            notices.append(f"{where}: anchor not read")
        else:
            base = w.name_hint + suffix
            if identifier_problem(base, reserved=True) is not None:
                base = f"{base}_w"
            said = [f"{written.param(c)} {c.op} {c.bound}" for c in guards or ()]
            lines += _warm(used.take(base), w.name_hint, anchor, tensors, said)
    for c in reading.calls:
        anchor = _anchor(reading, anchors, c.deps)
        lines += _call(c, kind, anchor, written=written, notices=notices, used=used)
    return lines


def _call(
    c: WarmCall,
    kind: str,
    anchor: str | None,
    *,
    written: Written,
    notices: list[str],
    used: FreeNames,
) -> list[str]:
    """A generated warm's call, named after its function."""
    if c.copy:
        return []
    where = f"{c.file}:{c.line}: call of '{c.function}' left out"
    tensors = _tensors(kind, c.entries, written, c)
    if isinstance(tensors, str):
        notices.append(f"{where}: it warms {tensors}")
        return []
    guards = _guards(c.conditions, tensors, written)
    if isinstance(guards, str):
        notices.append(f"{where}: {guards}")
        return []
    if anchor is None or c.function in used.taken:
        notices.append(f"{where}: not read")
        return []
    used.taken.add(c.function)
    hint = c.name_hint if c.name_hint not in (None, c.function) else None
    said = [f"{written.param(g)} {g.op} {g.bound}" for g in guards]
    return _warm(c.function, hint, anchor, tensors, said)


@dataclass(frozen=True)
class Items:
    """A warm's `tensors` as the skeleton writes them, and whether it warms the next
    layer's slabs (`layer_idx + 1`)."""

    items: list[str]
    next_layer: bool = False


def _guards(
    conditions: tuple[Condition, ...], tensors: Items | str, written: Written
) -> list[Condition] | str:
    """The guards a warm issued under ``conditions`` has (all of them but the test on a
    stack's layer index that spares the last layer a warm of the next layer's slabs), or
    why it is left out: a guard whose bound is no constant, or a warm of the next layer's
    slabs in every layer."""
    indices = set(written.stacks.values())
    spare = isinstance(tensors, Items) and tensors.next_layer
    guards = [
        c for c in conditions if not (spare and c.op in ("<", "<=") and c.variable in indices)
    ]
    if spare and len(guards) == len(conditions):
        return "it warms the next layer's slabs in every layer"
    opaque = [c for c in guards if c.bound is None]
    if opaque:
        said = ", ".join(f"`if {c}`" for c in opaque)
        return f"it is guarded ({said}) on a bound that is no constant"
    return guards


def _warm(name: str, hint: str | None, anchor: str, tensors: Items, guards: list[str]) -> list[str]:
    guard = guards[0] if len(guards) == 1 else f"[{', '.join(guards)}]"
    return [
        f"      - name: {scalar(name)}",
        *([f"        name_hint: {scalar(hint)}"] if hint is not None else []),
        f"        after: {anchor}",
        *(["        next_layer: true"] if tensors.next_layer else []),
        *([f"        guard: {guard}"] if guards else []),
        f"        tensors: [{', '.join(tensors.items)}]",
    ]


def _tensors(
    kind: str, entries: tuple[WarmEntry, ...], written: Written, call: WarmCall | None
) -> Items | str:
    """The plan tensors a warm's ``entries`` are (a prefix with its rows), or why no plan
    warm can say so. Every stacked one at the next layer's index makes it a cross-layer
    warm."""
    out: list[str] = []
    nexts: list[bool] = []
    for e in entries:
        key = (kind, e.tensor or "")
        name = written.names.get(key)
        if name is None:
            return f"'{e.tensor or '?'}', which the skeleton does not write"
        if key in written.dynamic:
            return f"'{name}', which has a dynamic dim"
        found = _slab(name, written.stacks.get(key), e, call)
        if isinstance(found, str):
            return found
        if found is not None:
            nexts.append(found)
        rows = f"{{tensor: {scalar(name)}, rows: [{e.rows[0]}, {e.rows[1]}]}}" if e.rows else None
        out.append(rows or scalar(name))
    if any(nexts) and not all(nexts):
        return "this layer's and the next layer's slabs at once"
    return Items(out, any(nexts))


def _slab(name: str, index: str | None, e: WarmEntry, call: WarmCall | None) -> bool | str | None:
    """Whether a stacked tensor's entry is at the next layer's index (None: not stacked),
    or why it is at none the skeleton declares."""
    if call is not None and not call.read:  # its slabs are not known: its indices are
        if index is None:
            return None
        if index in call.scalars or f"{index} + 1" in call.scalars:
            return f"{index} + 1" in call.scalars
        return f"'{name}' at another index than its stack's ({index})"
    if index is not None and e.index == f"{index} + 1":
        return True
    if e.index != index:
        return f"a slice of '{name}'" if index is None else f"'{name}' not at {index}"
    return None if index is None else False


def _anchor(reading: Reading, anchors: dict[str, str], deps: frozenset[int]) -> str | None:
    """The stage a warm waiting for ``deps`` is anchored at; a join `[a, b, ...]` of the
    stages whose tasks' kernels, together, are exactly ``deps``; None when none is."""
    found = reading.anchor(((a, t) for t, a in anchors.items()), deps)
    if found is None or isinstance(found, str):
        return None if found is None else scalar(found)
    return "[" + ", ".join(scalar(a) for a in found) + "]"

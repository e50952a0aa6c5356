"""Fixes: what a finding says to change, as edits on plan paths, not text ranges.

A rule that knows the answer (the closest name, the consumer order, the later
anchor) builds a ``Fix`` where it computes it; ``Diagnostic.fix`` carries it. An
edit addresses a node by its path in the plan document: a tuple of mapping keys
and list indices, such as ``("layers", "csa", "warms", 0, "tensors")``. Four
edits cover every fix:

- ``Replace(path, value)``: the value at ``path`` becomes ``value`` (a mapping key
  that is missing is added);
- ``Reorder(path, order)``: the list at ``path`` becomes ``[old[i] for i in order]``;
- ``Append(path, items)``: ``items`` are added at the end of the list at ``path``;
- ``Remove(path, items)``: the list items (indices) or mapping keys ``items`` of the
  node at ``path`` are removed.

A fix is ``safe`` when it changes the plan's layout or order, or removes what does
nothing (a stale suppression, a tensor no stage reads, a second transfer of bytes
already in L2): applying it never moves a warm in time. It is ``unsafe`` when it
moves a warm in time or changes what it lands (an anchor move, the tensors a warm
adds, a name guessed from a typo): a performance change the seed measured, to be
measured again. ``plancc validate --fix`` applies safe fixes; ``--unsafe-fixes``
applies both (docs/cli.md).

This module is a leaf (tier 0): the diagnostics carry its values. Making a fix on a
plan's text is ``plancc.edits.interpret`` (the one interpreter), applying fixes until
none is left ``plancc.edits.apply``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from fractions import Fraction
from typing import Any

# A node's path in the plan document: mapping keys and list indices.
Path = tuple[str | int, ...]
# A value an edit writes: a scalar, or a list or mapping of them (a warm's declaration).
Value = Any


class Safety(StrEnum):
    SAFE = "safe"  # layout and order only, or removes what does nothing
    UNSAFE = "unsafe"  # moves a warm in time or changes what it lands


@dataclass(frozen=True)
class Replace:
    path: Path
    value: Value

    op = "replace"


@dataclass(frozen=True)
class Reorder:
    path: Path
    order: tuple[int, ...]  # the new list is [old[i] for i in order]

    op = "reorder"


@dataclass(frozen=True)
class Append:
    path: Path
    items: tuple[Value, ...]

    op = "append"


@dataclass(frozen=True)
class Remove:
    path: Path
    items: tuple[int | str, ...]  # list indices, or mapping keys

    op = "remove"


Edit = Replace | Reorder | Append | Remove


@dataclass(frozen=True)
class Fix:
    """What to change so that a finding goes away without raising another."""

    title: str  # one line, imperative: "issue in consumer order: [wo_a, wo_b]"
    edits: tuple[Edit, ...]
    safety: Safety = Safety.SAFE

    @property
    def safe(self) -> bool:
        return self.safety is Safety.SAFE


def touched(edit: Edit) -> list[Path]:
    """The nodes ``edit`` changes: a removal's items, any other edit's node."""
    if isinstance(edit, Remove):
        return [(*edit.path, item) for item in edit.items]
    return [edit.path]


def replace(path: Path, value: Value, title: str, safety: Safety = Safety.SAFE) -> Fix:
    return Fix(title, (Replace(path, value),), safety)


def reorder(path: Path, order: Sequence[int], title: str) -> Fix:
    return Fix(title, (Reorder(path, tuple(order)),), Safety.SAFE)


def append(path: Path, items: Sequence[Value], title: str, safety: Safety) -> Fix:
    return Fix(title, (Append(path, tuple(items)),), safety)


def remove(path: Path, items: Sequence[int | str], title: str) -> Fix:
    return Fix(title, (Remove(path, tuple(items)),), Safety.SAFE)


def edit_json(edit: Edit) -> dict[str, Any]:
    """An edit as `--format json` and SARIF print it."""
    out: dict[str, Any] = {"op": edit.op, "path": list(edit.path)}
    if isinstance(edit, Replace):
        out["value"] = edit.value
    elif isinstance(edit, Reorder):
        out["order"] = list(edit.order)
    else:
        out["items"] = list(edit.items)
    return out


def fix_json(fix: Fix) -> dict[str, Any]:
    return {
        "title": fix.title,
        "safety": fix.safety.value,
        "edits": [edit_json(e) for e in fix.edits],
    }


def node_at(data: Any, path: Path, missing: Any = None) -> Any:
    """The node at ``path`` in the plan's tree ``data``; ``missing`` when the path names
    none (a key or index not there, or a scalar on the way)."""
    for part in path:
        try:
            data = data[part]
        except (KeyError, IndexError, TypeError):
            return missing
    return data


def path_text(path: Path) -> str:
    """``layers.csa.warms[0].tensors``: a path as the messages and titles write it."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


def data_json(data: Mapping[str, Any]) -> dict[str, Any]:
    """A finding's numbers as JSON values: a fraction becomes a float."""
    return {k: float(v) if isinstance(v, Fraction) else v for k, v in data.items()}

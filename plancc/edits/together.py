"""Which fixes chosen against one text may be made together, in one pass of the fix loop.

A pass of ``plancc.edits.apply.fix_loop`` makes the first fix that applies and, with it,
the fixes of the same code that do not interact with it: ``companions``. Two fixes do
not interact when

- their findings do not depend on each other: both are of one code of ``TOGETHER``,
  codes whose finding is about one node and stays what it is whatever another finding
  of the code does (an unknown name, a tensor listed twice, a silence that silences
  nothing, a tensor no stage reads or read before the anchor, an issue order, a guard
  that admits every value: removing it changes nothing), and
  they are of one severity (errors' fixes first, as ever: a lead that is an error takes
  only errors);
- their edits touch different nodes, neither inside the other (a list two fixes remove
  items of is one exception: the removals are worked out together by the interpreter,
  as long as they leave the list an item);
- two names written into one list are not one name (two typos guessed as one name
  would list it twice).

Anything else (an anchor move, a tensor added: the L2 peak, another warm's anchor
depend on them) waits for the check of the next pass.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plancc.diagnostics import Diagnostic
from plancc.fixes import Path, Remove, Replace, node_at, touched

# Codes whose findings are about one node each, independent of the others' fixes.
TOGETHER = frozenset({"PC006", "PC010", "PC011", "PC040", "PC041", "PC044", "PC102"})


class _Taken:
    """The nodes the fixes chosen so far edit."""

    def __init__(self, data: Any) -> None:
        self.data = data
        self.nodes: set[Path] = set()  # each node an edit changes
        self.above: set[Path] = set()  # those nodes and every node above them
        self.removed: dict[Path, int] = {}  # a list's (mapping's) items removed
        self.named: set[tuple[Path, str]] = set()  # a name written into a list

    def admits(self, d: Diagnostic) -> bool:
        """Whether ``d``'s fix touches nothing the chosen fixes touch (but removals from
        one list that leave it an item), and writes no name twice into one list."""
        assert d.fix is not None
        removed = dict(self.removed)
        for edit in d.fix.edits:
            if isinstance(edit, Remove):
                removed[edit.path] = removed.get(edit.path, 0) + len(edit.items)
                if removed[edit.path] >= _size(self.data, edit.path):
                    return False
            for path in touched(edit):
                if path in self.above or any(path[:k] in self.nodes for k in range(len(path))):
                    return False
            if self._named(edit) in self.named:
                return False
        return True

    def take(self, d: Diagnostic) -> None:
        assert d.fix is not None
        for edit in d.fix.edits:
            if isinstance(edit, Remove):
                self.removed[edit.path] = self.removed.get(edit.path, 0) + len(edit.items)
            for path in touched(edit):
                self.nodes.add(path)
                self.above.update(path[:k] for k in range(len(path) + 1))
            named = self._named(edit)
            if named is not None:
                self.named.add(named)

    def _named(self, edit: object) -> tuple[Path, str] | None:
        """A name a replacement writes into a list, with the list's path."""
        if not isinstance(edit, Replace) or not isinstance(edit.value, str) or not edit.path:
            return None
        return (edit.path[:-1], edit.value) if isinstance(edit.path[-1], int) else None


def companions(data: Any, lead: Diagnostic, rest: Sequence[Diagnostic]) -> list[Diagnostic]:
    """``lead`` and the diagnostics of ``rest`` (in order) whose fixes may be made with
    its fix, against the text whose tree is ``data``."""
    if lead.fix is None or lead.code not in TOGETHER:
        return [lead]
    taken = _Taken(data)
    taken.take(lead)
    out = [lead]
    for d in rest:
        if d.fix is None or d.code != lead.code or d.severity is not lead.severity:
            continue
        if taken.admits(d):
            taken.take(d)
            out.append(d)
    return out


def _size(data: Any, path: Path) -> int:
    """How many items (entries) the list (mapping) at ``path`` has; 0 when none is there."""
    node = node_at(data, path)
    return len(node) if isinstance(node, list | dict) else 0

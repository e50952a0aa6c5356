"""One-line flow mappings of plain scalars, the most common line of a plan: read
whole by one regular expression per entry, and their positions kept folded.

``scan`` reads such a mapping (``{name: w0, after: a0, tensors: [t0]}``) with
``simple_entries`` rather than piece by piece. When it is not asked for ranges, it
records only where the mapping starts and keeps the line in ``Folds``: a plan of
10,000 warms has 50,000 such lines, and a check that finds nothing asks where
none of their entries is. A question about one unfolds it: its entries' positions
are recorded then, from the same matches, as ``scan`` would have recorded them.
"""

from __future__ import annotations

import re

from plancc.compose import PathT
from plancc.diagnostics import COLUMN, Where

# YAML takes an implicit key of 1,024 characters at most; past it, `key: value` is
# an error. Well under it here: the scanner need not know the exact edge.
LONGEST_KEY = 1_000


class Folds:
    """The one-line flow mappings ``scan`` read without recording where their entries
    are (a plan of 10,000 warms has 50,000; a check that finds nothing asks where none
    of them is): each mapping's path -> its line. Looking up a path inside one records
    its entries' positions, as ``scan`` with ranges would have, into ``values`` and
    ``keys`` (the scanner's own dicts). A lookup may thus write: a folded document is
    for one thread (the language server, which reads across threads, keeps ranges and
    so folds nothing)."""

    __slots__ = ("in_order", "keys", "lines", "values")

    def __init__(self, values: dict[PathT, Where], keys: dict[PathT, Where]) -> None:
        self.lines: dict[PathT, str] = {}
        self.values = values
        self.keys = keys
        self.in_order = True  # no entry recorded out of document order yet

    def unfold_around(self, path: PathT) -> bool:
        """Record the entries of the folded mapping ``path`` is inside, if any: whether
        there was one. Folded mappings do not nest: at most one holds ``path``."""
        for k in range(len(path) - 1, -1, -1):
            line = self.lines.pop(path[:k], None)
            if line is not None:
                self._record(path[:k], line)
                self.in_order = False
                return True
        return False

    def unfold_all(self) -> None:
        """Record every folded entry, each dict in document order (as ``scan`` with
        ranges records them): for what reads all positions, an editor or a test."""
        if not self.lines and self.in_order:
            return  # unfolded already (the values' and the keys' share one Folds)
        for host, line in self.lines.items():
            self._record(host, line)
        self.lines.clear()
        for table in (self.values, self.keys):  # each unfolded entry went in last
            ordered = sorted(table.items(), key=lambda item: item[1])
            table.clear()
            table.update(ordered)
        self.in_order = True

    def _record(self, host: PathT, line: str) -> None:
        start = self.values[host]  # the `{`, as ``scan`` recorded it
        line_at, at = start & ~COLUMN, (start & COLUMN) - 1
        entries = simple_entries(line, at)
        assert entries is not None, "read before"
        values, keys = self.values, self.keys
        for entry in entries:
            key_path = (*host, entry.group(1))
            keys[key_path] = line_at | (entry.start(1) + 1)
            if entry.start(2) >= 0:  # a plain scalar
                values[key_path] = line_at | (entry.start(2) + 1)
                continue
            start, end = entry.span(3)  # a flat sequence
            values[key_path] = line_at | (start + 1)
            for n, item in enumerate(SIMPLE_ITEM.finditer(line, start + 1, end)):
                values[(*key_path, n)] = line_at | (item.start() + 1)


def simple_entries(line: str, at: int) -> list[re.Match[str]] | None:
    """The entries of the flow mapping at ``line[at]``, one match of ``SIMPLE_ENTRY``
    each, when every value is a plain scalar or a flat sequence of them and only a
    comment follows; else None."""
    entries = []
    match = SIMPLE_ENTRY.match
    pos = at + 1
    while True:
        entry = match(line, pos)
        if entry is None:
            return None
        entries.append(entry)
        pos = entry.end()
        if line[pos - 1] == "}":
            break
    return entries if SIMPLE_TAIL.match(line, pos) else None


# A flow mapping of name-like keys whose values are plain scalars, or flat sequences
# of them (most lines of a plan), then at most a comment: see ``simple_entries``. A plain
# scalar here starts as ``scan`` lets one start, and holds no `:` or `#`. A key is
# at most LONGEST_KEY characters: a longer one is not read here (``scan`` gives up on it).
_PLAIN_IN_FLOW = r"(?:[^ \[\]{},:#?&*!|>'\"%@`-]|-(?=[^ \[\]{},:#]))(?:[^\[\]{},:#]*[^ \[\]{},:#])?"
_SEQ_IN_FLOW = rf"\[ *(?:{_PLAIN_IN_FLOW}(?: *, *{_PLAIN_IN_FLOW})*)? *\]"
SIMPLE_ENTRY = re.compile(
    rf" *([A-Za-z0-9_][A-Za-z0-9_.-]{{0,{LONGEST_KEY - 1}}}): +"
    rf"(?:({_PLAIN_IN_FLOW})|({_SEQ_IN_FLOW})) *[,}}]"
)
SIMPLE_TAIL = re.compile(r"(?: *| +#.*)\Z")
SIMPLE_ITEM = re.compile(_PLAIN_IN_FLOW)

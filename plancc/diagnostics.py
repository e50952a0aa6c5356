"""Diagnostics: the one value every stage returns for a problem in a plan."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from plancc.codes import Code, Severity
from plancc.fixes import Fix


class Pos(NamedTuple):
    """A 1-based line and column in a plan file. A named tuple, not a frozen dataclass:
    resolve makes one per name (150,000 for 10,000 warms), at a third of the cost."""

    line: int
    col: int


# A position packed into one int (line << 32 | column), as the loader keeps
# every node's: a plan of 10,000 warms has 600,000 positions, and as tuples they
# would be as many more objects for the cycle collector to walk.
Where = int
COLUMN = (1 << 32) - 1  # a Where's column bits


def where_of(line: int, col: int) -> Where:
    return line << 32 | col


def pos_of(where: Where) -> Pos:
    return Pos(where >> 32, where & COLUMN)


@dataclass(frozen=True)
class Diagnostic:
    file: str
    line: int
    col: int
    severity: Severity
    code: str
    message: str
    hint: str | None = None
    # What to change (plancc.fixes), when the rule knows it; not compared: a diagnostic
    # is the finding, wherever its fix points.
    fix: Fix | None = field(default=None, compare=False)
    # The numbers the rule judged (PC107's window and share, PC106's pushed bytes), by
    # name, for the tools that read findings as data (docs/rules.md lists them).
    data: Mapping[str, Any] | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        # Messages quote plan text; one diagnostic stays one line, and no escape
        # sequence or bidi override in a plan reaches the terminal.
        object.__setattr__(self, "message", _bounded(printable(self.message)))
        if self.hint is not None:
            object.__setattr__(self, "hint", _bounded(printable(self.hint)))

    @property
    def sort_key(self) -> tuple[str, int, int, str, str]:
        return (self.file, self.line, self.col, self.code, self.message)


def printable(text: str) -> str:
    """``text`` on one printable line: line breaks, control and format characters (a
    terminal escape, U+2028, a bidi override) are shown escaped, as in a Python literal."""
    if text.isprintable():
        return text
    return "".join(
        c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text
    )


MAX_MESSAGE = 1000  # a safety net: a message naming hundreds of stages is cut here


def _bounded(text: str) -> str:
    if len(text) <= MAX_MESSAGE:
        return text
    return f"{text[:MAX_MESSAGE]}… ({len(text) - MAX_MESSAGE:,} more characters)"


def diag(
    file: str,
    pos: Pos,
    code: Code,
    message: str,
    hint: str | None = None,
    *,
    fix: Fix | None = None,
) -> Diagnostic:
    """A diagnostic at ``pos`` with the code's id and severity."""
    return Diagnostic(file, pos.line, pos.col, code.severity, code.id, message, hint, fix)

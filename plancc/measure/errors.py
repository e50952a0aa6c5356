"""The one error of `plancc measure`: an input it cannot read, named with what is wrong."""

from __future__ import annotations

from plancc.diagnostics import printable


class InputError(Exception):
    """An unreadable or mismatched input: exit 2, one line naming the file."""

    def __init__(self, file: str, message: str, line: int | None = None) -> None:
        shown = printable(file)
        where = f"{shown}:{line}" if line is not None else shown
        super().__init__(f"{where}: {message}")

"""The bounds of reading model code (docs/sources.md, "Bounds"), and the work budget.

Model code is any Python a plan names, careless or hostile: every loop of the reader
over it is bounded here, so that a reading ends within seconds whatever the input,
with a PC208 notice for what was left unread.
"""

from __future__ import annotations

MAX_BYTES = 4 * 1024 * 1024  # a module's size
MAX_MODULES = 64  # modules read for one layer kind
MAX_DEPTH = 32  # helpers inlined in one another, names imported through one another
MAX_EXPR_DEPTH = 48  # an expression's nesting; deeper parts are cut when it is parsed
MAX_BLOCKS = 64  # blocks walked inside one another, inlined helpers' included
MAX_NESTING = 96  # the constant evaluator's nesting: names inside names, operands
MAX_INT_BITS = 63  # a constant's magnitude: 2**63 and beyond is not resolved
MAX_KERNELS = 20_000
MAX_WORK = 2_000_000  # statements walked, nodes visited, constants evaluated


class OutOfWork(Exception):
    """A reading is past a bound of its size (its work, its kernels): the rest is not
    read (PC208); the message says which bound."""


class Budget:
    """The work one reading may do: every walk over the code spends from it."""

    def __init__(self, limit: int | None = None) -> None:
        self.limit = MAX_WORK if limit is None else limit
        self.left = self.limit

    def spend(self, units: int = 1) -> None:
        self.left -= units
        if self.left < 0:
            raise OutOfWork(f"more than {self.limit:,} steps of work")

"""The bounds of reading model code (docs/sources.md, "Bounds"), and the work budget.

Model code is any Python a plan names, careless or hostile: every loop of the reader
over it is bounded here, so that a reading ends within seconds whatever the input,
with a PC208 notice for what was left unread.
"""

from __future__ import annotations

import time

MAX_BYTES = 4 * 1024 * 1024  # a module's size
MAX_MODULES = 64  # modules read for one layer kind
MAX_DEPTH = 32  # helpers inlined in one another, names imported through one another
MAX_EXPR_DEPTH = 48  # an expression's nesting; deeper parts are cut when it is parsed
MAX_BLOCKS = 64  # blocks walked inside one another, inlined helpers' included
MAX_NESTING = 96  # the constant evaluator's nesting: names inside names, operands
MAX_INT_BITS = 63  # a constant's magnitude: 2**63 and beyond is not resolved
MAX_KERNELS = 20_000
MAX_WORK = 2_000_000  # statements walked, nodes visited, constants evaluated
# Steps of work between two looks at the clock, under a deadline: about a millisecond
# of reading, and no cost worth a name per step.
LOOK_EVERY = 1_000


class OutOfWork(Exception):
    """A reading is past a bound of its size (its work, its kernels): the rest is not
    read (PC208); the message says which bound."""


class OutOfTime(Exception):
    """A reading past its deadline (the editor's bound for a check, ``cache.deadline``):
    the reader stops at its next look at the clock, a step of its work where nothing is
    half done, and the reading is not used: a partial one would make the check's findings
    depend on how busy the machine was."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"not read within {seconds:g} s, the editor's bound for a check")
        self.seconds = seconds


# A deadline: the ``time.monotonic()`` it passes at, and its length in seconds (for the
# message).
Deadline = tuple[float, float]


class Budget:
    """The work one reading may do: every walk over the code spends from it. Under a
    ``deadline`` it also looks at the clock every ``LOOK_EVERY`` steps."""

    def __init__(self, limit: int | None = None, deadline: Deadline | None = None) -> None:
        self.limit = MAX_WORK if limit is None else limit
        self.left = self.limit
        self.deadline = deadline
        # At this many steps left or fewer, ``spend`` looks further: past the work's end
        # (-1), or under a deadline at the clock too.
        self.look = -1 if deadline is None else max(-1, self.left - LOOK_EVERY)

    def spend(self, units: int = 1) -> None:
        self.left -= units
        if self.left <= self.look:
            self._past()

    def _past(self) -> None:
        if self.left < 0:
            raise OutOfWork(f"more than {self.limit:,} steps of work")
        assert self.deadline is not None  # a look is due only under one
        until, seconds = self.deadline
        if time.monotonic() >= until:
            raise OutOfTime(seconds)
        self.look = max(-1, self.left - LOOK_EVERY)

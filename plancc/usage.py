"""``UsageError``: a usage or I/O problem, one line on stderr and exit 2.

In a module of its own, so that a command that can fail so (`schema --out`, `measure`)
need not import the pipeline (``plancc.api``) to say it.
"""

from __future__ import annotations


class UsageError(Exception):
    """A usage or I/O problem: one line on stderr, exit 2."""

"""Check-stage rules. Each rule is one function decorated with ``@rule``.

The decorator records the rule's id, short name and severity in the code
catalog, with the function's docstring as its documentation (``plancc
explain``). A rule takes the resolved plan and yields ``Finding`` values; it
never raises for a user's mistake. Modules in this package are imported by
``plancc.codes`` on first use, so a new rule module needs no registration.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from fractions import Fraction

from plancc import ir
from plancc.codes import declare
from plancc.diagnostics import Pos, Severity
from plancc.summary import fmt_share


@dataclass(frozen=True)
class Finding:
    pos: Pos
    message: str
    hint: str | None = None
    warm: ir.Warm | None = None  # the warm whose `allow` may silence it
    # Other warms whose `allow` silences it too (a budget finding: every warm at the peak).
    also: tuple[ir.Warm, ...] = ()


RuleFn = Callable[[ir.Plan], Iterator[Finding]]


@dataclass(frozen=True)
class Rule:
    id: str
    name: str
    severity: Severity
    check: RuleFn


RULES: list[Rule] = []


def rule(id: str, name: str, severity: Severity) -> Callable[[RuleFn], RuleFn]:
    def register(fn: RuleFn) -> RuleFn:
        declare(id, name, severity, fn.__doc__ or "")
        RULES.append(Rule(id, name, severity, fn))
        return fn

    return register


def anchored(plan: ir.Plan) -> Iterator[tuple[ir.Layer, ir.Warm, int]]:
    """The warms that stage-order rules can judge, with their anchor's index.

    A warm whose `after` names no stage (PC010) has no place in time; a layer
    kind with a stage replaced after a schema error has no reliable order.
    Both are left to the other rules rather than guessed at.
    """
    for layer in plan.layers.values():
        if layer.complete:
            for warm in layer.warms:
                if warm.anchor is not None:
                    yield layer, warm, warm.anchor


SMALL = 100_000  # below this, a size is given in bytes alone: never "0.0 MB"


def fmt_size(n: int) -> str:
    """``42.1 MB``, or ``16,384 B`` for a size that would round to a tenth of a MB or less."""
    return f"{n / 1e6:.1f} MB" if n >= SMALL else f"{n:,} B"


def fmt_bytes(n: int, l2: int | None = None, limit: Fraction | None = None) -> str:
    """``268,435,456 B = 268.4 MB = 256.0 MiB = 1.33× L2``: every unit users quote.

    The × L2 figure has two decimals, or as many more as it takes to compare with
    ``limit`` (the fraction it was compared with) as the exact share does: one
    byte over L2 must not print as 1.00×, nor a share over a 0.754 budget as 0.75×.
    """
    text = f"{n:,} B" if n < SMALL else f"{n:,} B = {n / 1e6:.1f} MB = {n / 2**20:.1f} MiB"
    if l2:
        text += f" = {fmt_share(Fraction(n, l2), [] if limit is None else [limit])}× L2"
    return text

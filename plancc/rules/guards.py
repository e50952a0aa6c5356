"""Run-time guards: a guard that admits no value of its param's range (PC043), or every
value (PC044).

A guard (`guard: CTX <= 2272`) issues its warm only while it holds; the checks judge the
warm at the values it admits (the range's ends clipped to it: ``plancc.api``). Both rules
judge the param's declared range, whatever value `--set` fixes for one run.
"""

from __future__ import annotations

from collections.abc import Iterator

from plancc import fixes, ir
from plancc.codes import Severity
from plancc.facts import Facts
from plancc.rules import Finding, rule


def _guarded(plan: ir.Plan) -> Iterator[tuple[ir.Warm, ir.Guard, ir.Param]]:
    params = {p.name: p for p in plan.params}
    for warm in (*plan.warms, *plan.skipped):  # also those the values here skip
        for guard in warm.guards:
            param = params.get(guard.param)
            if param is not None:
                yield warm, guard, param


@rule("PC043", "guard-never", Severity.ERROR)
def guard_never(plan: ir.Plan, facts: Facts) -> Iterator[Finding]:
    """A warm's guard admits no value of its param's range: the warm is never issued.

    The generated code would carry a warm no run takes, and no rule judges it.
    Reported at the guard, with the range.

    Fix: correct the bound (or the comparison), or remove the warm.
    """
    for warm, guard, param in _guarded(plan):
        if guard.admitted(param.lo, param.hi) is None:
            yield Finding(
                guard.pos,
                f"guard '{guard}' of warm '{warm.name}' admits no value of param "
                f"'{param.name}' ([{param.lo:,}, {param.hi:,}]): the warm is never issued",
                "correct the bound, or remove the warm",
                warm=warm,
            )


@rule("PC044", "guard-always", Severity.WARNING)
def guard_always(plan: ir.Plan, facts: Facts) -> Iterator[Finding]:
    """A warm's guard admits every value of its param's range: it never skips the warm.

    The guard costs a comparison at run time and says the warm depends on the
    param where it does not. Reported at the guard, with the range.

    Fix: remove the guard; its fix (safe) does. Or correct the bound.
    """
    for warm, guard, param in _guarded(plan):
        if guard.admitted(param.lo, param.hi) == (param.lo, param.hi):
            yield Finding(
                guard.pos,
                f"guard '{guard}' of warm '{warm.name}' admits every value of param "
                f"'{param.name}' ([{param.lo:,}, {param.hi:,}]): it never skips the warm",
                "remove the guard, or correct the bound",
                warm=warm,
                fix=_remove(warm, guard),
            )


def _remove(warm: ir.Warm, guard: ir.Guard) -> fixes.Fix:
    """Remove the guard: the key when it is the warm's only one, else its list item."""
    title = f"remove guard '{guard}' from warm '{warm.name}'"
    item, items = guard.item
    if item is None or items == 1:
        return fixes.remove(warm.path, ("guard",), title)
    return fixes.remove((*warm.path, "guard"), (item,), title)

"""A plan's summary line, as `plancc validate` prints it: the numbers of
``plancc.facts.metrics`` in words."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from plancc import ir
from plancc.diagnostics import printable
from plancc.facts import Facts
from plancc.facts.metrics import plan_numbers, unused_kinds
from plancc.text import fmt_fraction, fmt_share, plural


def peak_share(plan: ir.Plan, l2: dict[str, Any]) -> str:
    """The L2 peak of ``l2 = l2_numbers(facts)`` as × L2, told apart from both limits it is
    judged by: L2 itself and the plan's budget."""
    share = Fraction(l2["peak_bytes"], l2["capacity_bytes"])
    return fmt_share(share, (Fraction(1), plan.l2_fraction))


def summary_line(facts: Facts) -> str:
    plan = facts.plan
    n = plan_numbers(facts)
    l2 = n["l2"]
    text = f"{printable(plan.file)}: {plural(n['warms'], 'warm')}, {n['warm_bytes']:,} B warmed"
    if l2["capacity_bytes"]:
        text += (
            f", L2 peak {l2['peak_bytes']:,} B = {peak_share(plan, l2)}× L2"
            f" (budget {fmt_fraction(l2['budget_fraction'])})"
        )
    if "forward" in n:
        f = n["forward"]
        guarded = f.get("guarded_warm_issues", 0)
        most = "up to " if guarded else ""  # a guard may skip its warm
        behind = f" ({guarded} behind a guard)" if guarded else ""
        text += (
            f", forward {f['layers']} layers, {most}{f['warm_issues']} warm issues{behind}, "
            f"{most}{f['warm_bytes']:,} B"
        )
    return text + unused_notice(plan)


def unused_notice(plan: ir.Plan) -> str:
    """``; layer kind mla is not in forward (checked, not counted)``, or nothing."""
    unused = unused_kinds(plan) if plan.forward else []
    if not unused:
        return ""
    many = len(unused) > 1
    kinds = ("layer kinds " if many else "layer kind ") + ", ".join(unused)
    return f"; {kinds} {'are' if many else 'is'} not in forward (checked, not counted)"

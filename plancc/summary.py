"""The numbers a plan stands for: warms, bytes, the L2 peak, per-forward counts.

Shared by `validate`'s summary and the build manifest, so both say the same.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from plancc import ir
from plancc.liveness import plan_peak

# The seed: a fresh process stalls a few percent of warm issues for ~200-300 µs
# until a few thousand have been issued; comparisons need ≥ 500 rounds.
STARTUP_WARM_ISSUES = 5000
MIN_WARMUP_ROUNDS = 500


def plural(n: int, word: str) -> str:
    """``1 warm``, ``3 warms``."""
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def fmt_share(share: Fraction, limits: Sequence[Fraction] = ()) -> str:
    """``share`` to two decimals, or as many more as it takes to compare with each of
    ``limits`` as the exact share does: one byte over L2 is ``1.000000005``, never
    ``1.00``, and a share under a 0.756 budget is never ``0.76``.

    The limits are decimals (1, a plan's `l2_fraction`), so enough digits always
    tell them apart from the share, or show them exactly when the share equals one.
    """
    digits = 2
    while True:
        scaled = round(share * 10**digits)  # exact, half to even: no float drift
        shown = Fraction(scaled, 10**digits)
        if all(_sign(shown - limit) == _sign(share - limit) for limit in limits):
            whole, decimals = divmod(scaled, 10**digits)
            return f"{whole}.{decimals:0{digits}d}"
        digits += 1


def _sign(x: Fraction) -> int:
    return (x > 0) - (x < 0)


def fmt_fraction(x: float) -> str:
    """A plan's fraction as written: the shortest text that reads back as it (``0.123456789``,
    not ``0.123457``); a whole number without ``.0``, as YAML has it (``1``)."""
    return repr(x).removesuffix(".0")


def peak_share(plan: ir.Plan, l2: dict[str, Any]) -> str:
    """The L2 peak of ``l2 = l2_numbers(plan)`` as × L2, told apart from both limits it is
    judged by: L2 itself and the plan's budget."""
    share = Fraction(l2["peak_bytes"], l2["capacity_bytes"])
    return fmt_share(share, (Fraction(1), plan.l2_fraction))


def l2_numbers(plan: ir.Plan) -> dict[str, Any]:
    capacity = plan.platform.l2_bytes if plan.platform else None
    peak = plan_peak(plan)
    return {
        "capacity_bytes": capacity,
        "peak_bytes": peak,
        "peak_fraction": peak / capacity if capacity else None,
        "budget_fraction": float(plan.l2_fraction),
    }


def warm_issues(layer: ir.Layer) -> int:
    return sum(len(w.entries) for w in layer.warms)


def warm_bytes(layer: ir.Layer) -> int:
    return sum(w.bytes for w in layer.warms)


def forward_numbers(plan: ir.Plan) -> dict[str, int] | None:
    if plan.forward is None:
        return None
    layers = [plan.layers[k] for k in plan.forward.kinds]
    return {
        "layers": len(layers),
        "warm_issues": sum(warm_issues(layer) for layer in layers),
        "warm_bytes": sum(warm_bytes(layer) for layer in layers),
    }


def measure_numbers(plan: ir.Plan) -> dict[str, Any] | None:
    fwd = forward_numbers(plan)
    if fwd is None or fwd["warm_issues"] == 0:
        return None
    per_round = fwd["warm_issues"]
    rounds = max(MIN_WARMUP_ROUNDS, math.ceil(STARTUP_WARM_ISSUES / per_round))
    return {
        "warm_issues_per_round": per_round,
        "warmup_rounds": rounds,
        "env": {"PYPTO_BENCH_WARMUP": str(rounds)},
        "why": (
            "a fresh process stalls a few percent of warm issues for ~200-300 µs until a few "
            f"thousand have been issued; {rounds} rounds issue {rounds * per_round:,} warms, past "
            "that start-up phase, and at least 500 rounds keep the start-up from being charged "
            "to the warm (seed: spike rate 2.3 % at warmup 20, 1.3 % at 100, 0.4 % at 500)"
        ),
        "compare": "quote median and mean; on several cards take the fastest rank's median",
    }


def plan_numbers(plan: ir.Plan) -> dict[str, Any]:
    """The `plans` entry of `validate --format json`."""
    out: dict[str, Any] = {
        "file": plan.file,
        "model": plan.model,
        "platform": plan.platform.name if plan.platform else None,
        "warms": len(plan.warms),
        "warm_bytes": sum(w.bytes for w in plan.warms),
        "l2": l2_numbers(plan),
    }
    fwd = forward_numbers(plan)
    if fwd is not None:
        out["forward"] = fwd
        out["unused_kinds"] = unused_kinds(plan)
    return out


def unused_kinds(plan: ir.Plan) -> list[str]:
    """The layer kinds, in plan order, that the plan's forward does not use (checked still)."""
    used = set(plan.forward.kinds) if plan.forward else set()
    return [k for k in plan.layers if k not in used]


def unused_notice(plan: ir.Plan) -> str:
    """``; layer kind mla is not in forward (checked, not counted)``, or nothing."""
    unused = unused_kinds(plan) if plan.forward else []
    if not unused:
        return ""
    kinds = "layer kind" + ("s " if len(unused) > 1 else " ") + ", ".join(unused)
    return f"; {kinds} {'are' if len(unused) > 1 else 'is'} not in forward (checked, not counted)"


def summary_line(plan: ir.Plan) -> str:
    n = plan_numbers(plan)
    l2 = n["l2"]
    text = f"{plan.file}: {plural(n['warms'], 'warm')}, {n['warm_bytes']:,} B warmed"
    if l2["capacity_bytes"]:
        text += (
            f", L2 peak {l2['peak_bytes']:,} B = {peak_share(plan, l2)}× L2"
            f" (budget {fmt_fraction(l2['budget_fraction'])})"
        )
    if "forward" in n:
        f = n["forward"]
        text += (
            f", forward {f['layers']} layers, {f['warm_issues']} warm issues, {f['warm_bytes']:,} B"
        )
    return text + unused_notice(plan)

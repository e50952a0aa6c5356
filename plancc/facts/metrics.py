"""The numbers a plan stands for: warms, bytes, the L2 peak, per-forward counts.

Typed data, no text: read by render (the manifest), the output formats and
``plancc.formats.summary``, so that all of them say the same. The L2 peak is the check's
(``plancc.facts.Facts``), never swept again here.
"""

from __future__ import annotations

import math
from typing import Any

from plancc import ir
from plancc.diagnostics import printable
from plancc.facts import Facts

# The seed: a fresh process stalls a few percent of warm issues for ~200-300 µs
# until a few thousand have been issued; comparisons need ≥ 500 rounds.
STARTUP_WARM_ISSUES = 5000
MIN_WARMUP_ROUNDS = 500


def l2_numbers(facts: Facts) -> dict[str, Any]:
    plan = facts.plan
    capacity = plan.platform.l2_bytes if plan.platform else None
    peak = facts.peak_bytes
    return {
        "capacity_bytes": capacity,
        "peak_bytes": peak,
        "peak_fraction": peak / capacity if capacity else None,
        "budget_fraction": float(plan.l2_fraction),
    }


def warm_issues(layer: ir.Layer) -> int:
    return sum(len(w.entries) for w in layer.warms)


def warm_bytes(layer: ir.Layer) -> int:
    """The bytes the layer kind's warms move into L2: each distinct tensor once, however
    many of its warms list it (a second is PC108's finding, not more bytes warmed)."""
    tensors = {e.tensor.name: e.tensor.bytes or 0 for w in layer.warms for e in w.entries}
    return sum(tensors.values())


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


def plan_numbers(facts: Facts) -> dict[str, Any]:
    """The `plans` entry of `validate --format json`."""
    plan = facts.plan
    out: dict[str, Any] = {
        "file": printable(plan.file),
        "model": plan.model,
        "platform": plan.platform.name if plan.platform else None,
        "warms": len(plan.warms),
        "warm_bytes": sum(warm_bytes(layer) for layer in plan.layers.values()),
        "l2": l2_numbers(facts),
    }
    fwd = forward_numbers(plan)
    if fwd is not None:
        out["forward"] = fwd
        out["unused_kinds"] = unused_kinds(plan)
    return out


def unused_kinds(plan: ir.Plan) -> list[str]:
    """The layer kinds, in plan order, that the plan's forward does not use (still checked)."""
    used = set(plan.forward.kinds) if plan.forward else set()
    return [k for k in plan.layers if k not in used]

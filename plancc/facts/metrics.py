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


def warm_bytes(layer: ir.Layer, *, last: bool = False) -> int:
    """The bytes the layer kind's warms move into L2: each distinct region (a tensor, or a
    prefix's rows of it) once, however many of its warms list it (a second is PC108's
    finding, not more bytes warmed); its cross-layer warms move the next layer's copies,
    other regions, but none in the forward's ``last`` layer."""
    regions = {
        (w.next_layer, e.key): e.bytes
        for w in layer.warms
        if not (last and w.next_layer)
        for e in w.entries
    }
    return sum(regions.values())


def forward_numbers(plan: ir.Plan) -> dict[str, int] | None:
    """Layers, warm issues (one per warmed tensor) and warmed bytes of one forward; the
    forward's last layer issues no cross-layer warm. A guarded warm is issued only where
    its guard holds: the counts are then the most a forward issues, and
    ``guarded_warm_issues`` (present only then) says how many of them hang on a guard."""
    if plan.forward is None:
        return None
    kinds = plan.forward.kinds
    issues = guarded = 0
    moved = 0
    for i, kind in enumerate(kinds):
        layer = plan.layers[kind]
        last = i == len(kinds) - 1
        for w in layer.warms:
            if last and w.next_layer:
                continue
            issues += len(w.entries)
            guarded += len(w.entries) if w.guards else 0
        moved += warm_bytes(layer, last=last)
    out = {"layers": len(kinds), "warm_issues": issues, "warm_bytes": moved}
    if guarded:
        out["guarded_warm_issues"] = guarded
    return out


def measure_numbers(plan: ir.Plan) -> dict[str, Any] | None:
    fwd = forward_numbers(plan)
    if fwd is None or fwd["warm_issues"] == 0:
        return None
    per_round = fwd["warm_issues"]
    # A guard may skip its warm: the rounds must pass the start-up on the issues that are
    # sure (on all of them when every issue hangs on a guard: there is no lower bound).
    sure = per_round - fwd.get("guarded_warm_issues", 0)
    rounds = max(MIN_WARMUP_ROUNDS, math.ceil(STARTUP_WARM_ISSUES / (sure or per_round)))
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

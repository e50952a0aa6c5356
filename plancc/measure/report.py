"""The measurement as one JSON-shaped dict (``schemas/measure.schema.json``): what
``--format json`` prints, and what the text and markdown reports are printed from."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plancc.measure import scopes as sc
from plancc.measure.compare import Finding
from plancc.measure.manifest import Manifest
from plancc.measure.stats import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, Figures
from plancc.measure.units import bandwidth, megabytes
from plancc.measure.verdict import Verdict
from plancc.measure.wall import SPIKE_US, Delta, Variant

FORMAT = "plancc-measure/1"
# The seed: 500 warmup rounds of a forward's ~86 warm issues.
RECOMMENDED_WARM_ISSUES = 500 * 86
SEED_SPIKE_RATES = "2.3 % at warmup 20, 1.3 % at 100, 0.4 % at 500"


def figures(f: Figures) -> dict[str, Any]:
    return {
        "rounds": f.rounds,
        "min": f.min,
        "p50": f.p50,
        "mean": f.mean,
        "p90": f.p90,
        "max": f.max,
    }


def variant(v: Variant) -> dict[str, Any]:
    return {
        "file": v.file,
        "warmup": v.warmup,
        "fallback_flattened": v.flattened,
        "headline": figures(v.headline),
        "ranks": [
            {"rank": r.rank, "source": r.source, "figures": figures(r.figures), "spikes": r.spikes}
            for r in v.ranks
        ],
        "fastest_rank": v.fastest.rank if v.fastest else None,
        "missing": list(v.missing),
    }


def delta_set(d: dict[str, Delta | None]) -> dict[str, Any]:
    return {k: None if x is None else {"us": x.us, "pct": x.pct} for k, x in d.items()}


def verdict(v: Verdict, findings: list[Finding]) -> dict[str, Any]:
    i = v.interval
    return {
        "decision": v.decision,
        "interval_us": None if i is None else [i.lo, i.hi],
        "precision_us": None if i is None else i.precision,
        "mismatches": [
            {"file": f.file, "line": f.line, "message": f.message, "text": str(f)} for f in findings
        ],
        "resamples": BOOTSTRAP_RESAMPLES,
        "seed": BOOTSTRAP_SEED,
        "reason": v.reason,
        "heavy_tail": v.heavy_tail,
    }


def warmup(m: Manifest, base: Variant, warm: Variant) -> dict[str, Any]:
    per_round = m.warm_issues_per_round
    issues = warm.warmup * per_round if warm.warmup is not None else None
    warning = None
    if issues is not None and issues < RECOMMENDED_WARM_ISSUES:
        warning = (
            f"warmup {warm.warmup} rounds × {per_round} warm issues = {issues:,} warm issues, "
            f"below the seed's 500 × 86 = {RECOMMENDED_WARM_ISSUES:,}: the SDMA start-up phase "
            "(a few percent of warm issues stalling ~200-300 µs) is charged to the warm; "
            f"seed spike rates {SEED_SPIKE_RATES}; measure with PYPTO_BENCH_WARMUP=500"
        )
    elif warm.warmup is None:
        warning = "the warm log gives no warmup (printed with PYPTO_BENCH_RAW=1): not checked"
    if base.warmup is not None and warm.warmup is not None and base.warmup != warm.warmup:
        note = (
            f"the baseline ran warmup {base.warmup}, the warm {warm.warmup}: compare at one warmup"
        )
        warning = note if warning is None else f"{warning}; {note}"
    return {
        "warm_issues_per_round": per_round,
        "rounds": {"baseline": base.warmup, "warm": warm.warmup},
        "warm_issues": issues,
        "recommended": RECOMMENDED_WARM_ISSUES,
        "spike_us": SPIKE_US,
        "spikes": {"baseline": _spikes(base), "warm": _spikes(warm)},
        "warning": warning,
    }


def _spikes(v: Variant) -> dict[str, Any] | None:
    counts = v.spike_counts
    if counts is None:
        return None
    spikes, rounds = counts
    return {"spikes": spikes, "rounds": rounds, "rate_pct": spikes / rounds * 100}


def _implausible(m: Manifest, nbytes: int, durations: Sequence[float]) -> list[dict[str, str]]:
    """The flattered-scope flag: scopes faster than twice the single-stream rate."""
    rate = m.single_stream_bytes_per_s
    speeds = [nbytes / d for d in durations]  # every duration here is positive
    if rate is not None and speeds:
        limit = 2 * rate / 1e6  # bytes per µs
        fast = [x for x in speeds if x > limit]
        if fast:
            return [
                {
                    "flag": "implausible",
                    "message": (
                        f"implausible bandwidth: {len(fast)} of {len(speeds)} scopes faster than "
                        f"twice the {m.platform} single-stream rate ({bandwidth(limit)}), up to "
                        f"{megabytes(nbytes)} in {min(nbytes / x for x in fast):.1f} µs = "
                        f"{bandwidth(max(fast))}: the weights were still in L2 from the previous "
                        "round; the bench loop flatters the warm"
                    ),
                }
            ]
    return []


def scope(s: sc.Scope, m: Manifest) -> dict[str, Any]:
    w = s.warm
    p50, mean = (
        sc.median(s.durations),
        (sum(s.durations) / len(s.durations) if s.durations else None),
    )
    flags: list[dict[str, str]] = []
    notes: list[str] = []
    guard = f"its guard {' and '.join(w.guard_texts)} skipped it there, or it was lost"
    for file in s.missing_in:
        if w.guarded:  # a run may skip it: not called lost
            notes.append(f"not issued: no {w.name_hint} event in {file}: {guard}")
            continue
        flags.append(
            {
                "flag": "missing",
                "message": (
                    f"missing scope: no {w.name_hint} event in {file}: the transfer never happened"
                ),
            }
        )
    for file, layers in s.missing_layers:
        where = f"layer{'' if len(layers) == 1 else 's'} {', '.join(layers)} in {file}"
        if w.guarded:
            notes.append(f"not issued: no {w.name_hint} event for {where}: {guard}")
            continue
        flags.append(
            {
                "flag": "missing",
                "message": (
                    f"missing scope: no {w.name_hint} event for {where}: "
                    "the transfer never happened there"
                ),
            }
        )
    if s.invalid:
        shown = "; ".join(s.invalid[:3]) + ("; …" if len(s.invalid) > 3 else "")
        flags.append(
            {
                "flag": "impossible",
                "message": (
                    f"impossible figures in {len(s.invalid)} of {s.found} scopes, left out of "
                    f"every figure: {shown}"
                ),
            }
        )
    flags += _implausible(m, w.bytes, s.durations)
    landed = None
    if s.judged:
        late = [{"layer": layer, "by_us": by} for layer, by in s.late]
        landed = {"consumer": s.consumer, "before": s.landed, "of": s.judged, "late": late}
        if s.landed < s.judged:
            flags.append(
                {
                    "flag": "late",
                    "message": (
                        f"late warm: landed before its consumer {s.consumer} in {s.landed} of "
                        f"{s.judged} layers; {_late_layers(s.late)}; what lands late competes "
                        "with the layer's own reads"
                    ),
                }
            )
    if s.consumer is None and w.first_consumer is not None:
        notes.append(
            f"its first consumer stage {w.first_consumer} names no kernel in the plan: "
            "lateness not judged"
        )
    elif s.late_note:
        notes.append(s.late_note)
    return {
        "warm": w.name,
        "layer": w.layer,
        "name_hint": w.name_hint,
        "bytes": w.bytes,
        "instances": s.found,
        "expected": s.expected,
        "next_layer": w.next_layer,
        "guards": w.guard_texts,
        "kernel_us": None if p50 is None else {"p50": p50, "mean": mean},
        "gbps": None if p50 is None else w.bytes / p50 / 1000,
        "landed": landed,
        "flags": flags,
        "notes": notes,
    }


def unattributed(u: sc.Unattributed, m: Manifest) -> dict[str, Any]:
    """A lone scope whose warms share their bytes gets its bandwidth and flag: whichever
    warm it is, the figures are the same."""
    p50 = sc.median(u.durations)
    return {
        "file": u.file,
        "name_hint": u.name_hint,
        "warms": list(u.warms),
        "scopes": u.count,
        "kernel_us": None
        if p50 is None
        else {"p50": p50, "mean": sum(u.durations) / len(u.durations)},
        "reason": u.reason,
        "bytes": u.bytes,
        "gbps": None if u.bytes is None or p50 is None else u.bytes / p50 / 1000,
        "flags": _implausible(m, u.bytes, u.durations) if u.bytes is not None else [],
    }


def split(x: sc.Split, m: Manifest, gbps: dict[str, float | None]) -> dict[str, Any] | None:
    if not x.layers:
        return None
    window = sc.median(x.windows) or 0.0
    agg = x.bytes / window if window > 0 else None
    rate = m.single_stream_bytes_per_s
    parts = " + ".join(
        f"{n} {bandwidth(g * 1000)}" if g is not None else f"{n} ?"
        for n, g in ((n, gbps.get(n)) for n in x.warms)
    )
    message = (
        f"split transfer: {', '.join(x.warms)} overlap in time on {len(x.lanes)} cores in "
        f"{x.layers} of {x.of} layers: {parts}, aggregate {megabytes(x.bytes)} / {window:.1f} µs"
        + (f" = {bandwidth(agg)}" if agg else "")
        + (f" against {bandwidth(rate / 1e6)} for one stream" if rate else "")
        + ": one scope, one context"
    )
    return {
        "warms": list(x.warms),
        "bytes": x.bytes,
        "layers": x.layers,
        "of": x.of,
        "lanes": sorted(x.lanes),
        "union_us": window,
        "aggregate_gbps": None if agg is None else agg / 1000,
        "message": message,
    }


def window(
    name: str,
    slots: tuple[int, int],
    base: Sequence[float],
    warm: Sequence[float],
    *,
    standalone: float | None,
    note: str | None,
) -> dict[str, Any]:
    return {
        "window": name,
        "slots": list(slots),
        "baseline": _range(base),
        "warm": _range(warm),
        "standalone_us": standalone,
        "note": note,
    }


def _range(xs: Sequence[float]) -> dict[str, Any] | None:
    """One sorted copy: a window series can hold millions of rounds."""
    if not xs:
        return None
    ordered = sorted(xs)
    n = len(ordered)
    p50 = ordered[n // 2] if n % 2 else (ordered[n // 2 - 1] + ordered[n // 2]) / 2
    return {"min": ordered[0], "max": ordered[-1], "p50": p50, "count": n}


def _late_layers(late: list[tuple[str, float]]) -> str:
    """Which layers a warm landed late in, and by how much: the latest first, three named
    ("late in layer 17 (hca) by 12.5 µs, layer 3 (csa) by 4.0 µs and 2 more, up to 12.5
    µs")."""
    ordered = sorted(late, key=lambda pair: -pair[1])
    named = ", ".join(f"layer {layer} by {by:.1f} µs" for layer, by in ordered[:3])
    more = f" and {len(ordered) - 3} more" if len(ordered) > 3 else ""
    return f"late in {named}{more}"

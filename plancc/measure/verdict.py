"""Ship, no-ship or inconclusive: the bootstrap interval of the fastest-rank median delta.

`ship` when the whole 95 % interval lies below zero, `no-ship` when above,
`inconclusive` otherwise, when the raw samples it needs are missing, or when the
two runs cannot be compared (``compare``: each finding names its file and line).
A heavy
tail (the mean keeps less than two thirds of the median's gain, or the p90 does
not gain while the median does) is a warning on a ship: the seed's MoE case kept
−1.04 % of a −1.63 % median.
"""

from __future__ import annotations

from dataclasses import dataclass

from plancc.measure.compare import Finding
from plancc.measure.stats import (
    BOOTSTRAP_RESAMPLES,
    BOOTSTRAP_SEED,
    Interval,
    bootstrap_median_delta,
)
from plancc.measure.units import signed_pct, signed_us
from plancc.measure.wall import Delta, Variant

SHIP, NO_SHIP, INCONCLUSIVE = "ship", "no-ship", "inconclusive"
HEAVY_TAIL_SHARE = 2 / 3


@dataclass(frozen=True)
class Verdict:
    decision: str
    interval: Interval | None
    reason: str
    heavy_tail: str | None  # why the tail is heavy; None when it is not (or unknown)

    @property
    def exit_code(self) -> int:
        return 0 if self.decision == SHIP else 1


def heavy_tail(d: dict[str, Delta | None]) -> str | None:
    p50, mean, p90 = d["p50"], d["mean"], d["p90"]
    if p50 is None or p50.pct >= 0:
        return None
    if mean is not None and mean.pct / p50.pct < HEAVY_TAIL_SHARE:
        return (
            f"the mean keeps {signed_pct(mean.pct)} of the median's {signed_pct(p50.pct)}, "
            "less than two thirds: quote both"
        )
    if p90 is not None and p90.pct >= 0:
        return (
            f"the p90 does not gain ({signed_pct(p90.pct)}) "
            f"while the median does ({signed_pct(p50.pct)})"
        )
    return None


def decide(
    base: Variant, warm: Variant, d: dict[str, Delta | None], findings: list[Finding]
) -> Verdict:
    tail = heavy_tail(d)
    if findings:
        n = len(findings)
        return Verdict(
            INCONCLUSIVE,
            None,
            f"the two runs cannot be compared: {n} mismatch{'' if n == 1 else 'es'}",
            tail,
        )
    flattened = [v.file for v in (base, warm) if v.flattened]
    if flattened:
        return Verdict(
            INCONCLUSIVE,
            None,
            "fallback_flattened=1 in "
            + ", ".join(flattened)
            + ": per-round segmentation failed, so the per-rank figures are unreliable",
            tail,
        )
    if base.fastest is None or warm.fastest is None:
        return Verdict(INCONCLUSIVE, None, "a log has no per-rank figures", tail)
    if base.fastest.samples is None or warm.fastest.samples is None:
        return Verdict(
            INCONCLUSIVE,
            None,
            "no raw samples for the fastest ranks: run both with PYPTO_BENCH_RAW=1",
            tail,
        )
    interval = bootstrap_median_delta(base.fastest.samples, warm.fastest.samples)
    lo, hi = interval.lo, interval.hi
    how = (
        f"bootstrap 95 % interval of the fastest-rank median delta "
        f"[{signed_us(lo)}, {signed_us(hi)}] µs "
        f"({BOOTSTRAP_RESAMPLES} resamples, seed {BOOTSTRAP_SEED}; "
        f"each end ±{interval.precision:.1f} µs)"
    )
    if hi < 0:
        return Verdict(SHIP, interval, f"{how} lies below zero", tail)
    if lo > 0:
        return Verdict(NO_SHIP, interval, f"{how} lies above zero", tail)
    return Verdict(INCONCLUSIVE, interval, f"{how} contains zero", tail)

"""Summary figures of samples, and the seeded bootstrap of a median difference."""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

# Fixed: the same samples give the same interval, so the same report bytes.
BOOTSTRAP_SEED = 12
BOOTSTRAP_RESAMPLES = 2000


@dataclass(frozen=True)
class Figures:
    """One series' wall time in µs. ``None`` is a figure the input does not give."""

    rounds: int | None
    min: float | None
    p50: float | None
    mean: float | None
    p90: float | None
    max: float | None


def p90(samples: Sequence[float]) -> float:
    """The 90th percentile, linearly interpolated between order statistics (the
    "inclusive" method: numpy's default, exact for the samples it is given)."""
    if len(samples) == 1:
        return samples[0]
    return statistics.quantiles(samples, n=10, method="inclusive")[8]


def figures(samples: Sequence[float]) -> Figures:
    return Figures(
        rounds=len(samples),
        min=min(samples),
        p50=statistics.median(samples),
        mean=statistics.fmean(samples),
        p90=p90(samples),
        max=max(samples),
    )


def bootstrap_median_delta(
    baseline: Sequence[float],
    warm: Sequence[float],
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> tuple[float, float]:
    """The 95 % percentile interval of median(warm) − median(baseline), both resampled
    with replacement: the 2.5th and 97.5th percentiles of ``resamples`` differences."""
    rng = random.Random(seed)
    deltas = sorted(
        statistics.median(rng.choices(warm, k=len(warm)))
        - statistics.median(rng.choices(baseline, k=len(baseline)))
        for _ in range(resamples)
    )
    return deltas[math.floor(0.025 * resamples)], deltas[math.ceil(0.975 * resamples) - 1]

"""Wall time per variant: the headline and every rank, the fastest rank, the deltas.

The seed quotes the fastest rank's median (the smallest per-rank median; with raw
samples, recomputed from them) and asks for the mean beside it. A figure the log
does not give (p90 and a recomputed median need PYPTO_BENCH_RAW=1) stays None and
is named in ``missing``, never estimated.
"""

from __future__ import annotations

from dataclasses import dataclass

from plancc.measure.logs import BenchLog
from plancc.measure.stats import Figures, figures, p90

# The seed: a start-up stall costs ~200-300 µs; a round this far above its rank's
# median is counted as one.
SPIKE_US = 200.0


@dataclass(frozen=True)
class RankFigures:
    rank: str
    figures: Figures
    source: str  # "raw": recomputed from the samples; "log": the rank line as printed
    samples: tuple[float, ...] | None
    spikes: int | None  # rounds more than SPIKE_US above this rank's median


@dataclass(frozen=True)
class Variant:
    file: str
    warmup: int | None
    flattened: bool
    headline: Figures
    ranks: tuple[RankFigures, ...]
    fastest: RankFigures | None  # None: the log has no per-rank figures
    missing: tuple[str, ...]

    @property
    def quoted(self) -> Figures:
        """The figures the seed quotes: the fastest rank's, else the headline's."""
        return self.fastest.figures if self.fastest else self.headline

    @property
    def spike_counts(self) -> tuple[int, int] | None:
        """Spikes and rounds over every rank with raw samples; None without any."""
        counted = [r for r in self.ranks if r.spikes is not None and r.samples is not None]
        if not counted:
            return None
        return sum(r.spikes or 0 for r in counted), sum(len(r.samples or ()) for r in counted)


def variant(log: BenchLog, comparable: bool = True) -> Variant:
    """``comparable``: the log agrees with itself (``compare.check``); a headline p90
    is only formed from a complete set of ranks."""
    missing: list[str] = []
    found = (_rank(r.rank, r.logged, r.samples, log.rounds, missing) for r in log.ranks)
    ranks = tuple(r for r in found if r is not None)
    if not any(r.samples for r in ranks):
        missing += [
            "p90 (needs PYPTO_BENCH_RAW=1)",
            "recomputed medians (needs PYPTO_BENCH_RAW=1)",
            "warmup rounds (printed with PYPTO_BENCH_RAW=1)",
            "spike counts (need PYPTO_BENCH_RAW=1)",
        ]
    head_p90 = _headline_p90(log, ranks) if comparable else None
    if head_p90 is None and any(r.samples for r in ranks):
        missing.append("headline p90 (needs every rank's raw samples, round for round)")
    mn, med, mean, mx = log.headline
    headline = Figures(log.rounds, mn, med, mean, head_p90, mx)
    fastest = min(ranks, key=lambda r: r.figures.p50 or 0.0) if ranks else None
    if not ranks:
        missing.append("per-rank figures (the log has no rank lines)")
    return Variant(log.file, log.warmup, log.flattened, headline, ranks, fastest, tuple(missing))


def _rank(
    rank: str,
    logged: tuple[float, float, float, float] | None,
    samples: list[float] | None,
    rounds: int,
    missing: list[str],
) -> RankFigures | None:
    if samples:
        timed = [x for x in samples if x > 0]
        if len(timed) < len(samples):
            missing.append(
                f"{len(samples) - len(timed)} of rank {rank}'s {len(samples)} raw samples are "
                "0.0 (no timing that round): left out, as the runner does"
            )
        samples = timed
    if samples:
        figs = figures(samples)
        median = figs.p50 or 0.0
        spikes = sum(1 for s in samples if s > median + SPIKE_US)
        return RankFigures(rank, figs, "raw", tuple(samples), spikes)
    if logged is None:
        return None
    mn, med, mean, mx = logged
    return RankFigures(rank, Figures(rounds, mn, med, mean, None, mx), "log", None, None)


def _headline_p90(log: BenchLog, ranks: tuple[RankFigures, ...]) -> float | None:
    """The headline is the per-round maximum across ranks: its p90 needs every rank's raw
    samples, round for round (not after a flattened segmentation)."""
    series = [r.samples for r in ranks]
    head = log.raw_header
    if (
        log.flattened
        or head is None
        or head.ranks != len(series)
        or any(s is None or len(s) != head.rounds for s in series)
    ):
        return None
    return p90([max(values) for values in zip(*(s for s in series if s), strict=True)])


@dataclass(frozen=True)
class Delta:
    us: float
    pct: float


def delta(base: float | None, warm: float | None) -> Delta | None:
    if base is None or warm is None or base == 0:
        return None
    return Delta(warm - base, (warm - base) / base * 100)


def deltas(base: Figures, warm: Figures) -> dict[str, Delta | None]:
    return {
        "p50": delta(base.p50, warm.p50),
        "mean": delta(base.mean, warm.mean),
        "p90": delta(base.p90, warm.p90),
    }

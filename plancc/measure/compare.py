"""Whether two benchmark logs can be compared: each against itself, then one against the other.

A log says what it holds several times over: the raw samples header (``ranks=``,
``rounds=``), one raw line per rank, the ``benchmark`` line (``kernel=``,
``ranks=``, ``rounds=``), one summary line per rank. Where these disagree — a log
cut off after its first rank, a header that does not count its samples — or
where the two runs differ in what makes them comparable (ranks, kernel, run
mode, warmup, the same file twice), the result is a ``Finding`` naming the file
and line, and the verdict is inconclusive: never ship on runs that cannot be
compared. Figures that contradict the samples they summarise, once the counts
agree, are an ``InputError``: the log is corrupt, not merely incomparable.
"""

from __future__ import annotations

import os
import statistics
from dataclasses import dataclass

from plancc.diagnostics import printable
from plancc.measure.errors import InputError
from plancc.measure.logs import BenchLog, Summary

# Samples are printed to 0.1 µs and summaries from the unrounded values, also to 0.1:
# two roundings apart, plus float noise.
ROUNDING_US = 0.1 + 1e-6


@dataclass(frozen=True)
class Finding:
    file: str
    line: int | None
    message: str

    def __str__(self) -> str:
        return f"{where(self.file, self.line)}: {self.message}"


def where(file: str, line: int | None) -> str:
    return printable(file) + (f":{line}" if line is not None else "")


def check(log: BenchLog) -> list[Finding]:  # noqa: C901, PLR0912 (one branch per field a log and a pair of logs must agree on; each names its mismatch)
    """What in one log disagrees with the rest of it; then, when the counts agree, its
    summary figures against its samples (an InputError when they contradict)."""
    out: list[Finding] = []

    def say(line: int | None, message: str) -> None:
        out.append(Finding(log.file, line, message))

    raw = [r for r in log.ranks if r.samples is not None]
    head, bench = log.raw_header, log.benchmark
    if head is not None and head.ranks != len(raw):
        listed = ", ".join(f"rank {r.rank} at line {r.raw_line}" for r in raw) or "none"
        say(
            head.line,
            f"the raw samples header says ranks={head.ranks} and {len(raw)} "
            f"{'rank lists' if len(raw) == 1 else 'ranks list'} samples ({listed}): "
            "the log is cut off or a rank is missing",
        )
    if head is None and raw:
        say(raw[0].raw_line, "raw samples without their 'raw samples:' header")
    if bench is not None:
        for key, other, at in (
            ("ranks", head and head.ranks, head and head.line),
            ("rounds", head and head.rounds, head and head.line),
        ):
            given = bench.fields.get(key)
            if given is not None and other is not None and given != str(other):
                say(
                    bench.line,
                    f"the benchmark line says {key}={printable(given)}, the raw samples "
                    f"header (line {at}) {key}={other}",
                )
        summed = [r for r in log.ranks if r.logged is not None]
        given = bench.fields.get("ranks")
        if not log.flattened and given is not None and given != str(len(summed)):
            say(
                bench.line,
                f"the benchmark line says ranks={printable(given)} and {len(summed)} rank "
                f"summary {'line follows' if len(summed) == 1 else 'lines follow'}: "
                "the log is cut off or a rank is missing",
            )
    rounds = head.rounds if head is not None else None
    if rounds is not None and log.rounds > rounds:
        say(
            log.headline_line,
            f"the headline counts {log.rounds} rounds, the raw samples header "
            f"(line {head and head.line}) rounds={rounds}",
        )
    if not log.flattened:
        for r in raw:
            n = len(r.samples or ())
            if r.slots > 1:
                say(
                    r.raw_line,
                    f"rank {r.rank} dispatches {r.slots} times a round (line {r.line}): its "
                    "raw samples are per dispatch, not per round",
                )
            elif rounds is not None and n != rounds:
                say(
                    r.raw_line,
                    f"rank {r.rank} lists {n} raw samples, the raw samples header "
                    f"(line {head and head.line}) rounds={rounds}",
                )
        if any(r.logged is not None for r in log.ranks):
            for r in log.ranks:
                if r.logged is None:
                    say(r.raw_line, f"rank {r.rank} has raw samples and no summary line")
                elif raw and r.samples is None:
                    say(r.line, f"rank {r.rank} has a summary line and no raw samples")
    if not out and not log.flattened:
        _figures_agree(log)
    return out


def _figures_agree(log: BenchLog) -> None:
    """Each summary line against the samples it summarises: the rank lines against
    their rank's samples, the headline against the per-round maximum across ranks."""
    for r in log.ranks:
        if r.logged is not None and r.samples is not None and r.slots <= 1:
            _agree(
                log.file,
                r.line,
                f"rank {r.rank}'s summary",
                r.logged,
                r.samples,
                source=f"line {r.raw_line}",
            )
    series = [r.samples for r in log.ranks if r.samples is not None]
    if series and log.raw_header is not None and len({len(s) for s in series}) == 1:
        per_round = [max(x) for x in zip(*series, strict=True)]
        lines = f"{len(series)} raw lines" if len(series) > 1 else f"line {log.ranks[0].raw_line}"
        positive = [x for x in per_round if x > 0]
        if len(positive) != log.rounds:
            raise InputError(
                log.file,
                f"the headline counts {log.rounds} rounds, the raw samples ({lines}) time "
                f"{len(positive)}",
                log.headline_line,
            )
        _agree(log.file, log.headline_line, "the headline", log.headline, per_round, source=lines)


def _agree(
    file: str,
    line: int | None,
    what: str,
    logged: Summary,
    samples: list[float],
    *,
    source: str,
) -> None:
    timed = [x for x in samples if x > 0]  # the runner leaves out rounds without timing
    if not timed:
        return
    mine = (min(timed), statistics.median(timed), statistics.fmean(timed), max(timed))
    for name, given, computed in zip(("min", "median", "mean", "max"), logged, mine, strict=True):
        if abs(given - computed) > ROUNDING_US:
            raise InputError(
                file,
                f"{what} says {name}={given}, its samples ({source}) give "
                f"{computed:.1f}: the summary contradicts its samples",
                line,
            )


def one_run(log: BenchLog) -> Finding:
    return Finding(
        log.file, None, "both sides are one run: --baseline and --warm are the same file"
    )


def across(base: BenchLog, warm: BenchLog) -> list[Finding]:
    """What differs between the two runs that makes their figures incomparable, or
    that they are one run twice (two copies of one log)."""
    out: list[Finding] = []
    if base.headline == warm.headline and [r.samples for r in base.ranks] == [
        r.samples for r in warm.ranks
    ]:
        out.append(
            Finding(
                warm.file,
                warm.headline_line,
                f"both sides are one run: the warm log repeats the baseline's figures "
                f"({where(base.file, base.headline_line)}) sample for sample",
            )
        )

    def differ(
        what: str, b: tuple[str, int | None] | None, w: tuple[str, int | None] | None
    ) -> None:
        if b is None or w is None or b[0] == w[0]:
            return
        out.append(
            Finding(
                warm.file,
                w[1],
                f"the baseline {what} {b[0]} ({where(base.file, b[1])}), "
                f"the warm {w[0]}: not comparable",
            )
        )

    differ("ran on", _ranks(base), _ranks(warm))
    differ("benchmarks", _kernel(base), _kernel(warm))
    differ("ran", _mode(base), _mode(warm))
    bw = (f"warmup {base.warmup}", base.raw_header.line) if base.raw_header else None
    ww = (f"warmup {warm.warmup}", warm.raw_header.line) if warm.raw_header else None
    differ("ran at", bw, ww)
    return out


def _ranks(log: BenchLog) -> tuple[str, int | None] | None:
    line: int | None
    given = log.benchmark.fields.get("ranks", "") if log.benchmark is not None else ""
    if log.raw_header is not None:
        n, line = log.raw_header.ranks, log.raw_header.line
    elif log.benchmark is not None and given.isdigit() and len(given) < 10:
        n, line = int(log.benchmark.fields["ranks"]), log.benchmark.line
    elif log.ranks:
        n, line = len(log.ranks), log.ranks[0].line
    else:
        return None
    return f"{n} rank{'' if n == 1 else 's'}", line


def _kernel(log: BenchLog) -> tuple[str, int | None]:
    if log.benchmark is None:
        return "no kernel= (the log has no benchmark line)", None
    return f"kernel={printable(log.benchmark.kernel)}", log.benchmark.line


def _mode(log: BenchLog) -> tuple[str, int | None] | None:
    if log.benchmark is None:
        return None
    f = log.benchmark.fields
    mode = "l3_resident=1" if f.get("l3_resident") == "1" else "l3=1" if "l3" in f else None
    return None if mode is None else (mode, log.benchmark.line)


def same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False

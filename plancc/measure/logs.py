"""Benchmark logs: the ``[RUN]`` lines pypto-lib's runner prints under ``PYPTO_BENCH=1``.

Only the forms in docs/measure.md are read: the ``effective_us`` headline, the
``raw samples`` header and one ``rank N raw n=… eff_us=[…]`` line per rank
(``PYPTO_BENCH_RAW=1``), the ``benchmark`` line and one ``rank N: eff_us …`` line
per rank. Other log lines are skipped; a ``[RUN]`` line that starts like one of
these forms and does not finish like it is an error, never guessed at. So is an
impossible figure (a negative or absurd time, a summary whose median is below its
min); whether the lines agree with each other is ``compare``'s question.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from plancc.diagnostics import printable
from plancc.measure import files
from plancc.measure.errors import InputError
from plancc.text import clip

# A round of an hour is no benchmark; past this a time is a corrupt figure, not a slow one.
MAX_US = 1e9
_NUM = r"(-?\d+(?:\.\d+)?)"
_COUNT = r"(\d{1,9})"  # rounds, ranks, warmup, n: a longer one is not the runner's
_FIGS = rf"min={_NUM} median={_NUM} mean={_NUM} max={_NUM}"
HEADLINE = re.compile(rf"effective_us \({_COUNT} rounds\) {_FIGS}")
UNAVAILABLE = re.compile(r"(effective_us|benchmark) unavailable:\s*(.*)")
RAW_HEADER = re.compile(
    rf"raw samples: ranks={_COUNT} rounds={_COUNT} warmup={_COUNT}( fallback_flattened=1)?"
)
RAW_RANK = re.compile(rf"rank (\d{{1,12}}) raw n={_COUNT} eff_us=\[(.*)")
RANK = re.compile(rf"rank (\d{{1,12}}): eff_us {_FIGS}")
BENCHMARK = re.compile(r"benchmark kernel=(\S+)((?: \w+=\S+)*)")
SLOT = re.compile(rf"slot (\d{{1,9}}) \(.*\): eff_us {_FIGS}")
# The first words of each form: a line that starts so must parse completely.
_STARTS = ("effective_us", "raw samples", "benchmark", "rank ", "slot ")
_SAMPLE = re.compile(r"\s*-?\d+(?:\.\d+)?\s*")

Summary = tuple[float, float, float, float]  # min, median, mean, max


@dataclass
class Rank:
    rank: str  # the worker's OS process id, as the log prints it
    logged: Summary | None = None  # its summary line
    line: int | None = None  # of the summary line
    samples: list[float] | None = None  # PYPTO_BENCH_RAW=1
    raw_line: int | None = None
    slots: int = 0  # `slot k (fn)` lines under its summary: dispatches per round


@dataclass(frozen=True)
class RawHeader:
    line: int
    ranks: int
    rounds: int


@dataclass(frozen=True)
class Benchmark:
    """The ``benchmark kernel=…`` line of a multi-card run."""

    line: int
    kernel: str
    fields: dict[str, str]  # rounds=, ranks=, l3_resident=/l3=, …


@dataclass
class BenchLog:
    file: str
    rounds: int  # the headline's
    headline: Summary
    headline_line: int
    warmup: int | None  # printed only with the raw samples
    flattened: bool  # fallback_flattened=1: per-round segmentation failed
    raw_header: RawHeader | None = None
    benchmark: Benchmark | None = None
    ranks: list[Rank] = field(default_factory=list)


def read(path: str) -> BenchLog:
    try:
        with files.open_text(path) as f:
            return _parse(path, files.lines(path, f, "a benchmark log"))
    except OSError as exc:
        raise InputError(path, f"cannot read: {exc.strerror or exc}") from None


def _parse(path: str, lines: Iterable[str]) -> BenchLog:  # noqa: C901, PLR0912 (one pass over the log, one branch per kind of line)
    log: BenchLog | None = None
    warmup: int | None = None
    header: RawHeader | None = None
    bench: Benchmark | None = None
    flattened = False
    ranks: dict[str, Rank] = {}
    last: Rank | None = None  # the rank whose summary line a slot line follows
    for number, raw in enumerate(lines, 1):
        at = raw.find("[RUN]")
        if at < 0:
            continue
        text = raw[at + 5 :].strip()
        if not text.startswith(_STARTS):
            continue  # another runner message
        if not raw.endswith("\n"):  # the runner ends every line: this one was cut
            raise InputError(path, "cut off: the last [RUN] line has no line end", number)
        if m := UNAVAILABLE.fullmatch(text):
            raise InputError(
                path,
                f"no timing captured ('{m[1]} unavailable: {m[2]}'): a simulator or a "
                "non-profiling build measures nothing",
                number,
            )
        if m := HEADLINE.fullmatch(text):
            if log is not None:
                raise InputError(
                    path,
                    f"a second benchmark run (the first is at line {log.headline_line}): "
                    "give one run per log",
                    number,
                )
            figs = _summary(path, number, "effective_us", m.groups()[1:])
            log = BenchLog(path, int(m[1]), figs, number, None, False)
        elif m := RAW_HEADER.fullmatch(text):
            header = RawHeader(number, int(m[1]), int(m[2]))
            warmup = int(m[3])
            flattened = flattened or bool(m[4])
        elif m := RAW_RANK.fullmatch(text):
            rank = ranks.setdefault(m[1], Rank(m[1]))
            rank.samples = _samples(path, number, m[1], m[2], m[3])
            rank.raw_line = number
        elif m := RANK.fullmatch(text):
            last = ranks.setdefault(m[1], Rank(m[1]))
            last.logged = _summary(path, number, f"rank {m[1]}", m.groups()[1:])
            last.line = number
        elif m := BENCHMARK.fullmatch(text):
            fields = dict(f.split("=", 1) for f in m[2].split())
            bench = Benchmark(number, m[1], fields)
            flattened = flattened or fields.get("fallback_flattened") == "1"
        elif m := SLOT.fullmatch(text):
            _summary(path, number, f"slot {m[1]}", m.groups()[1:])
            if last is not None:
                last.slots += 1
        else:
            raise InputError(path, f"unreadable benchmark line: '{printable(clip(text))}'", number)
    if log is None:
        raise InputError(
            path,
            "no [RUN] timing line ('effective_us (N rounds) min=… median=… mean=… max=…'): "
            "not the log of a PYPTO_BENCH=1 run",
        )
    log.warmup, log.flattened, log.raw_header, log.benchmark = warmup, flattened, header, bench
    log.ranks = list(ranks.values())
    return log


def _time(path: str, line: int, what: str, x: float) -> float:
    """A wall time as a figure: finite, not negative, not absurd."""
    if not math.isfinite(x) or x > MAX_US:
        raise InputError(path, f"{what}: {clip(repr(x))} µs is not a time a round takes", line)
    if x < 0:
        raise InputError(path, f"{what}: a negative time ({x} µs)", line)
    return x


def _summary(path: str, line: int, what: str, values: Iterable[str | None]) -> Summary:
    """min, median, mean, max as the runner prints them: positive (it leaves out rounds
    without timing), and in order; a line that contradicts itself is no figure."""
    mn, med, mean, mx = (_time(path, line, what, float(v or "")) for v in values)
    if mn <= 0:
        raise InputError(
            path, f"{what}: min={mn}: the runner leaves out rounds without timing", line
        )
    if not (mn <= med <= mx and mn <= mean <= mx):
        raise InputError(
            path,
            f"{what}: min={mn} median={med} mean={mean} max={mx} contradict each other "
            "(the median and the mean lie between min and max)",
            line,
        )
    return mn, med, mean, mx


def _samples(path: str, line: int, rank: str, n: str, body: str) -> list[float]:
    if not body.endswith("]"):
        raise InputError(path, f"the raw samples of rank {rank} are cut off (no closing ']')", line)
    items = body[:-1].split(",") if body[:-1].strip() else []
    if not all(_SAMPLE.fullmatch(x) for x in items):
        raise InputError(path, f"the raw samples of rank {rank} are not all numbers", line)
    if len(items) != int(n):
        raise InputError(
            path, f"rank {rank} announces n={n} raw samples and lists {len(items)}", line
        )
    if not items:
        raise InputError(path, f"rank {rank} has no raw samples", line)
    return [_time(path, line, f"a raw sample of rank {rank}", float(x)) for x in items]

"""Benchmark logs: the ``[RUN]`` lines pypto-lib's runner prints under ``PYPTO_BENCH=1``.

Only the forms in docs/measure.md are read: the ``effective_us`` headline, the
``raw samples`` header and one ``rank N raw n=… eff_us=[…]`` line per rank
(``PYPTO_BENCH_RAW=1``), the ``benchmark`` line and one ``rank N: eff_us …`` line
per rank. Other log lines are skipped; a ``[RUN]`` line that starts like one of
these forms and does not finish like it is an error, never guessed at.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from plancc.diagnostics import printable
from plancc.measure.errors import InputError
from plancc.text import clip

_NUM = r"(-?\d+(?:\.\d+)?)"
_FIGS = rf"min={_NUM} median={_NUM} mean={_NUM} max={_NUM}"
HEADLINE = re.compile(rf"effective_us \((\d+) rounds\) {_FIGS}")
UNAVAILABLE = re.compile(r"(effective_us|benchmark) unavailable:\s*(.*)")
RAW_HEADER = re.compile(
    r"raw samples: ranks=(\d+) rounds=(\d+) warmup=(\d+)( fallback_flattened=1)?"
)
RAW_RANK = re.compile(r"rank (\d+) raw n=(\d+) eff_us=\[(.*)")
RANK = re.compile(rf"rank (\d+): eff_us {_FIGS}")
BENCHMARK = re.compile(r"benchmark kernel=\S+( \w+=\S+)*")
SLOT = re.compile(rf"slot (\d+) \(.*\): eff_us {_FIGS}")
# The first words of each form: a line that starts so must parse completely.
_STARTS = ("effective_us", "raw samples", "benchmark", "rank ", "slot ")
_SAMPLE = re.compile(r"\s*-?\d+(?:\.\d+)?\s*")


@dataclass
class Rank:
    rank: str  # the worker's OS process id, as the log prints it
    logged: tuple[float, float, float, float] | None = None  # min, median, mean, max
    samples: list[float] | None = None  # PYPTO_BENCH_RAW=1


@dataclass
class BenchLog:
    file: str
    rounds: int
    headline: tuple[float, float, float, float]  # min, median, mean, max
    warmup: int | None  # printed only with the raw samples
    flattened: bool  # fallback_flattened=1: per-round segmentation failed
    ranks: list[Rank] = field(default_factory=list)


def read(path: str) -> BenchLog:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return _parse(path, f)
    except OSError as exc:
        raise InputError(path, f"cannot read: {exc.strerror or exc}") from None


def _parse(path: str, lines: Iterable[str]) -> BenchLog:  # noqa: C901, PLR0912 (one pass over the log, one branch per kind of line)
    headline: tuple[int, tuple[float, float, float, float]] | None = None
    headline_line = 0
    warmup: int | None = None
    flattened = False
    ranks: dict[str, Rank] = {}
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
            if headline is not None:
                raise InputError(
                    path,
                    f"a second benchmark run (the first is at line {headline_line}): "
                    "give one run per log",
                    number,
                )
            headline = (int(m[1]), (float(m[2]), float(m[3]), float(m[4]), float(m[5])))
            headline_line = number
        elif m := RAW_HEADER.fullmatch(text):
            warmup = int(m[3])
            flattened = flattened or bool(m[4])
        elif m := RAW_RANK.fullmatch(text):
            ranks.setdefault(m[1], Rank(m[1])).samples = _samples(path, number, m[1], m[2], m[3])
        elif m := RANK.fullmatch(text):
            figs = (float(m[2]), float(m[3]), float(m[4]), float(m[5]))
            ranks.setdefault(m[1], Rank(m[1])).logged = figs
        elif BENCHMARK.fullmatch(text):
            flattened = flattened or " fallback_flattened=1" in text
        elif not SLOT.fullmatch(text):
            raise InputError(path, f"unreadable benchmark line: '{printable(clip(text))}'", number)
    if headline is None:
        raise InputError(
            path,
            "no [RUN] timing line ('effective_us (N rounds) min=… median=… mean=… max=…'): "
            "not the log of a PYPTO_BENCH=1 run",
        )
    return BenchLog(path, headline[0], headline[1], warmup, flattened, list(ranks.values()))


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
    return [float(x) for x in items]

"""Swimlane traces: PyPTO's Chrome Trace Event JSON, read as a stream.

A forward's trace reaches tens of MB. The file is decoded one event at a time
(``json.JSONDecoder.raw_decode`` over a sliding buffer of about a MiB), and each
event is handed to a sink that keeps only what its command reports. ``read`` (for
`plancc measure`) keeps the complete events whose name is a wanted kernel, as small
records, and of every other Worker View task its kernel and start only (what a
scope's fanin-hint names: its anchor); ``spans`` (for `--trace`) keeps of each
wanted kernel's task its first start and last end, folded as its events come: the
memory grows with the tasks, never with the events or the file's size. Anything
that is
not the converter's form (not JSON, cut off, no ``traceEvents`` list, an event
that is not an object, a matching task without its kernel duration, a value
nested past Python's recursion limit) is an ``InputError`` naming the file and
where. A matching task whose numbers are impossible (a zero or negative duration,
a negative or absurd ``ts``, a number too large for a float) is kept with its
``problem``: the report flags it with its line and takes no figure from it.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import IO, Any, NoReturn, TypeGuard, TypeVar

from plancc.diagnostics import printable
from plancc.measure import files
from plancc.measure.errors import InputError
from plancc.text import clip

CHUNK = 1 << 20
# A trace holds one dispatch, milliseconds long: a stamp or duration past this is corrupt.
MAX_US = 1e9
# Integers past this many digits are read as floats (so, past 308 digits, infinite and
# flagged): int() refuses more than 4,300 digits, and no stamp needs 20.
_MAX_INT_DIGITS = 20
MAX_VALUE = 16 << 20  # no event or metadata value of the converter comes near this
WORKER_VIEW = "Worker View"
WORKER_VIEW_PID = 4  # the converter's pid for it, when the file names no processes
_WS = re.compile(r"[ \t\n\r]*")
_SEP = re.compile(r"[ \t\n\r]*([,\]])[ \t\n\r]*")  # between two events, or after the last
_TASK = re.compile(r"(?P<k>.*?)(?:_\d{1,9})?(?:_spmd)?\((?P<task>(?:r\d+)?t\d+)\)")
_FANIN = re.compile(r"(?:r\d+)?t\d+")
_S = TypeVar("_S", "Trace", "Spans")


@dataclass(frozen=True)
class Event:
    """One matched task event on a core lane."""

    kernel: str  # the wanted name it matched (a name_hint or a stage's kernel)
    n: int | None  # the _<N> suffix of a name repeated within one function
    task: str  # "t17" or "r1t17": SPMD events of one task share it
    pid: int
    tid: int
    start: float  # µs: when the kernel started (the lane's end minus the kernel duration)
    end: float  # µs
    kernel_us: float  # args["kernel-duration-us"]
    line: int  # where the event starts in its file
    problem: str | None = None  # an impossible figure: flagged, never used
    fanin: tuple[str, ...] = ()  # the tasks it waited on (args["fanin-hint"]): "t16", "r1t3"


@dataclass
class Trace:
    file: str
    events: list[Event] = field(default_factory=list)
    process_names: dict[int, str] = field(default_factory=dict)
    thread_names: dict[tuple[int, int], str] = field(default_factory=dict)
    total: int = 0  # every element of traceEvents
    # Every Worker View task, wanted or not: its kernel (the name without its _<N>,
    # _spmd and task) and when it started; what a scope's fanin-hint names is found here.
    tasks: dict[str, tuple[str, float]] = field(default_factory=dict)

    @property
    def worker_pid(self) -> int:
        return _worker_pid(self.process_names)

    def lane(self, tid: int) -> str:
        return self.thread_names.get((self.worker_pid, tid), f"tid {tid}")

    def worker_events(self) -> list[Event]:
        pid = self.worker_pid
        return [e for e in self.events if e.pid == pid]

    def matched(self, s: _Stream, m: re.Match[str], event: dict[str, Any], at: int) -> None:
        """A wanted kernel's event, its figures numbers, at file offset ``at``."""
        ts, dur, tid, args = event["ts"], event["dur"], event["tid"], event["args"]
        kdur = args["kernel-duration-us"]
        problem = _impossible(ts, dur, kdur)
        end = ts + dur if problem is None else 0.0
        n = int(m["n"]) if m["n"] is not None else None
        hint = args.get("fanin-hint")
        fanin = tuple(_FANIN.findall(hint.partition(":")[2])) if isinstance(hint, str) else ()
        self.events.append(
            Event(
                m["k"],
                n,
                m["task"],
                self.worker_pid,
                tid,
                end - kdur,
                end,
                kdur,
                s.line_at(at),
                problem,
                fanin,
            )
        )
        self.other(event)

    def other(self, event: dict[str, Any]) -> None:
        """Remember a Worker View task's kernel and start: a scope's fanin-hint names it."""
        m = _TASK.fullmatch(event["name"])
        ts = event.get("ts")
        if m is None or not _number(ts) or not math.isfinite(ts):
            return
        known = self.tasks.get(m["task"])
        if known is None or ts < known[1]:  # an SPMD task's cores: its first start
            self.tasks[m["task"]] = (sys.intern(m["k"]), ts)  # a forward repeats few kernels


@dataclass
class Spans:
    """What `--trace` reports of a swimlane: of each wanted kernel, each Worker View task's
    first start, last end (its cores' and its events' together) and whether a figure of
    it is impossible, with the file offset of its first event (the order of tasks that
    start together). A few floats a task, whatever the events or the file hold."""

    file: str
    process_names: dict[int, str] = field(default_factory=dict)
    thread_names: dict[tuple[int, int], str] = field(default_factory=dict)
    total: int = 0
    # kernel -> task -> [start, end, impossible, offset]
    kernels: dict[str, dict[str, list[Any]]] = field(default_factory=dict)

    @property
    def worker_pid(self) -> int:
        return _worker_pid(self.process_names)

    def matched(self, s: _Stream, m: re.Match[str], event: dict[str, Any], at: int) -> None:
        ts, dur, kdur = event["ts"], event["dur"], event["args"]["kernel-duration-us"]
        bad = _impossible(ts, dur, kdur) is not None
        end = ts + dur if not bad else 0.0
        tasks = self.kernels.setdefault(sys.intern(m["k"]), {})
        known = tasks.get(m["task"])
        if known is None:
            tasks[m["task"]] = [end - kdur, end, bad, at]
        else:
            known[0] = min(known[0], end - kdur)
            known[1] = max(known[1], end)
            known[2] = known[2] or bad

    def other(self, event: dict[str, Any]) -> None:
        pass

    def runs(self, kernel: str) -> list[tuple[float, float]]:
        """The (start, end) of each of ``kernel``'s tasks with no impossible figure, by
        start (then end, then where it is in the file)."""
        kept = [t for t in self.kernels.get(kernel, {}).values() if not t[2]]
        kept.sort(key=lambda t: (t[0], t[1], t[3]))
        return [(t[0], t[1]) for t in kept]


Sink = Trace | Spans


def _worker_pid(process_names: dict[int, str]) -> int:
    for pid, name in process_names.items():
        if name == WORKER_VIEW:
            return pid
    return WORKER_VIEW_PID


def name_pattern(kernels: Iterable[str]) -> re.Pattern[str]:
    """Event names of these kernels: ``<k>(t<n>)``, with the ``_<N>`` suffix of a
    repeated hint, ``_spmd`` of an SPMD task and ``r<ring>`` of a nested scope. The
    longest kernel name is tried first, so ``w_1(t3)`` is ``w_1`` when both exist."""
    names = sorted(set(kernels), key=lambda k: (-len(k), k))
    alt = "|".join(re.escape(k) for k in names)
    return re.compile(rf"(?P<k>{alt})(?:_(?P<n>\d{{1,9}}))?(?:_spmd)?\((?P<task>(?:r\d+)?t\d+)\)")


class _Stream:
    """A text file as a buffer that slides forward; positions are into ``buf``."""

    def __init__(self, file: str, f: IO[str]) -> None:
        self.file, self.f = file, f
        self.buf, self.pos, self.eof = "", 0, False
        self.line = 1  # the line ``buf`` starts on
        self.base = 0  # the file offset (in characters) ``buf`` starts at
        self.decoder = json.JSONDecoder(parse_int=_int)
        self.mark = (0, 1)  # a position in ``buf`` and its line: lines are counted onward

    def more(self) -> bool:
        if self.eof:
            return False
        try:
            chunk = self.f.read(CHUNK)
        except UnicodeDecodeError:
            self.fail("not a trace: not UTF-8 text")
        except OSError as exc:
            raise InputError(self.file, f"cannot read: {exc.strerror or exc}") from None
        if not chunk:
            self.eof = True
            return False
        if self.pos > CHUNK:
            self.line += self.buf.count("\n", 0, self.pos)
            self.base += self.pos
            self.buf, self.pos = self.buf[self.pos :], 0
            self.mark = (0, self.line)
        self.buf += chunk
        return True

    def peek(self) -> str:
        """The next non-blank character ('' at the end of the file)."""
        while True:
            self.pos = _WS.match(self.buf, self.pos).end()  # type: ignore[union-attr]
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self.more():
                return ""

    def expect(self, chars: str, what: str) -> str:
        c = self.peek()
        if c == "" or c not in chars:
            self.fail(f"expected {what}" if c else f"cut off: expected {what}")
        self.pos += 1
        return c

    def value(self) -> Any:
        self.peek()
        while True:
            try:
                value, end = self.decoder.raw_decode(self.buf, self.pos)
            except RecursionError:
                self.fail("a value nested too deeply: not a trace event")
            except json.JSONDecodeError as exc:
                if self.more():
                    self.guard()
                    continue
                cut = exc.pos >= len(self.buf) or exc.msg.startswith("Unterminated")
                self.fail("cut off in the middle of a value" if cut else f"not JSON: {exc.msg}")
            if end == len(self.buf) and self.more():  # a number may go on in the next chunk
                self.guard()
                continue
            self.pos = end
            return value

    def guard(self) -> None:
        if len(self.buf) - self.pos > MAX_VALUE:
            self.fail(f"a value larger than {MAX_VALUE >> 20} MiB: not a trace event")

    def line_at(self, at: int) -> int:
        """The line of file offset ``at`` (still in ``buf``), counting on from the last
        one asked: the events asked about come in file order."""
        pos = min(at - self.base, len(self.buf))
        mark, line = self.mark
        if pos < mark:
            mark, line = 0, self.line
        line += self.buf.count("\n", mark, pos)
        self.mark = (pos, line)
        return line

    def fail(self, message: str, at: int | None = None) -> NoReturn:
        """Stop at the current position, or at file offset ``at`` (still in ``buf``)."""
        raise InputError(
            self.file, message, self.line_at(self.base + self.pos if at is None else at)
        )


def read(path: str, wanted: re.Pattern[str]) -> Trace:
    """The trace at ``path``: the wanted kernels' events, every task's kernel and start."""
    return _sunk(path, wanted, Trace(path))


def spans(path: str, wanted: re.Pattern[str]) -> Spans:
    """Of the trace at ``path``, each wanted kernel's tasks' spans, and no more."""
    return _sunk(path, wanted, Spans(path))


def _sunk(path: str, wanted: re.Pattern[str], sink: _S) -> _S:
    try:
        with files.open_text(path, strict=True) as f:
            _read(path, f, wanted, sink)
    except OSError as exc:
        raise InputError(path, f"cannot read: {exc.strerror or exc}") from None
    return sink


def _read(path: str, f: IO[str], wanted: re.Pattern[str], trace: Sink) -> None:
    s = _Stream(path, f)
    if s.peek() != "{":
        s.fail(
            'not a Chrome Trace Event file: expected an object {"traceEvents": [...]}'
            if s.peek()
            else "empty file: not a trace"
        )
    s.pos += 1
    seen_events = False
    if s.peek() == "}":
        s.pos += 1
    else:
        while True:
            key = s.value()
            if not isinstance(key, str):
                s.fail("not JSON: an object key must be a string")
            s.expect(":", "':'")
            if key == "traceEvents":
                _events(s, trace, wanted)
                seen_events = True
            else:
                s.value()  # "metadata" and any other sibling: read past it
            if s.expect(",}", "',' or '}' after a top-level value") == "}":
                break
    if s.peek():
        s.fail("more data after the trace object")
    if not seen_events:
        raise InputError(path, 'not a Chrome Trace Event file: no "traceEvents" list')


def _events(s: _Stream, trace: Sink, wanted: re.Pattern[str]) -> None:
    if s.peek() != "[":
        s.fail('"traceEvents" is not a list')
    s.pos += 1
    if s.peek() == "]":
        s.pos += 1
        return
    while True:
        if s.pos >= len(s.buf) or s.buf[s.pos] in " \t\n\r":
            s.peek()
        start = s.base + s.pos  # compacting the buffer never drops the value being read
        event = s.value()
        _event(s, trace, wanted, event, start)
        trace.total += 1
        sep = _SEP.match(s.buf, s.pos)  # the common case, in one step
        if sep is not None and sep.end() < len(s.buf):
            s.pos = sep.end()
            if sep[1] == "]":
                return
        elif s.expect(",]", "',' or ']' in traceEvents") == "]":
            return


def _event(s: _Stream, trace: Sink, wanted: re.Pattern[str], event: Any, start: int) -> None:
    if not isinstance(event, dict) or not isinstance(event.get("ph"), str):
        s.fail(f'traceEvents[{trace.total}] is not a trace event (an object with "ph")', start)
    ph = event["ph"]
    if ph == "M":
        args = event.get("args")
        name = args.get("name") if isinstance(args, dict) else None
        if isinstance(name, str) and isinstance(event.get("pid"), int):
            if event.get("name") == "process_name":
                trace.process_names[event["pid"]] = name
            elif event.get("name") == "thread_name" and isinstance(event.get("tid"), int):
                trace.thread_names[(event["pid"], event["tid"])] = name
        return
    if ph != "X" or not isinstance(event.get("name"), str):
        return
    ts, dur, pid, tid = (event.get(k) for k in ("ts", "dur", "pid", "tid"))
    if pid != trace.worker_pid:
        return  # the Scheduler View repeats each task: its stamps are dispatch and finish
    m = wanted.fullmatch(event["name"])
    if m is None:
        trace.other(event)
        return
    args = event.get("args")
    kdur = args.get("kernel-duration-us") if isinstance(args, dict) else None
    if not (_number(ts) and _number(dur) and _number(kdur) and isinstance(tid, int)):
        s.fail(
            f"event '{printable(clip(event['name']))}' lacks a numeric ts, dur, tid or "
            "args.kernel-duration-us: not the PyPTO converter's form",
            start,
        )
    trace.matched(s, m, event, start)


def _impossible(ts: float, dur: float, kdur: float) -> str | None:
    """Why these figures cannot be a task's, or None."""
    for name, x in (("ts", ts), ("dur", dur), ("kernel-duration-us", kdur)):
        if not math.isfinite(x) or abs(x) > MAX_US:
            return f"{name} {x:.6g} µs is not a time a task takes"
        if x < 0:
            return f"a negative {name} ({x:.6g} µs)"
    if kdur == 0:
        return "kernel-duration-us 0: no duration"
    if kdur > dur + 0.02:  # one 50 MHz tick of rounding
        return f"kernel-duration-us {kdur:.6g} µs exceeds the lane's dur {dur:.6g} µs"
    return None


def _int(text: str) -> int | float:
    return int(text) if len(text) <= _MAX_INT_DIGITS else float(text)


def _number(x: object) -> TypeGuard[float]:
    return isinstance(x, int | float) and not isinstance(x, bool)

"""Stage windows from task-timing slots: ``[STRACE]`` lines, finish-to-finish per round.

A slot line gives one slot's min(dispatch) … max(finish) for one invocation, in
device nanoseconds. The window between slots A and B in one invocation of one
process is ``(ts_B + dur_B) − (ts_A + dur_A)``; slots are per device, so windows
are only ever formed within one process (pid), never across cards.

A slot file can hold millions of lines, so it is read line by line and nothing
but the windows is kept: a process's slot ends are held only while its current
invocation lasts (the runtime prints an invocation's lines together, invocations
in order), then folded into the windows asked for — or, when none is named, the
windows between consecutive slots of that invocation.
"""

from __future__ import annotations

import itertools
import re
from array import array
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from plancc.measure import files
from plancc.measure.errors import InputError

NAME = re.compile(r"(?:chip\.run|simpler_run)\.runner_run\.device_wall\.task_slot_(\d{1,9})")
_FIELD = re.compile(r"(\w+)=(\S*)")
# The runtime's own field order, read in one step; any other order takes the general path.
_FAST = re.compile(
    r"\[STRACE\] v=\S* pid=(\d{1,19}) tid=\S* inv=(\d{1,19}) hid=\S* depth=\S* "
    r"name=(?:chip\.run|simpler_run)\.runner_run\.device_wall\.task_slot_(\d{1,2}) "
    r"ts=(\d{1,19}) dur=(\d{1,19})(?: [^\n]*)?\n"
)
_INT = re.compile(r"\d{1,19}")  # the runtime prints 64-bit integers
MAX_SLOT = 15
Pair = tuple[int, int]


@dataclass
class SlotRun:
    """The slot windows of one run, µs, by slot pair; what was seen, to name what was not."""

    found: dict[Pair, array[float]] = field(default_factory=lambda: defaultdict(lambda: array("d")))
    seen: set[int] = field(default_factory=set)
    # pid -> (first, last) invocation, per file: one process's lines come from one file
    invocations: dict[str, tuple[str, int, int]] = field(default_factory=dict)

    @property
    def pids(self) -> set[str]:
        return set(self.invocations)

    def windows(self, a: int, b: int) -> Sequence[float]:
        return self.found.get((a, b), array("d"))

    def merge(self, other: SlotRun) -> None:
        for pid, (file, lo, hi) in other.invocations.items():
            if pid not in self.invocations:
                self.invocations[pid] = (file, lo, hi)
                continue
            first, f_lo, f_hi = self.invocations[pid]
            if lo <= f_hi and f_lo <= hi:  # one round's windows would count twice
                raise InputError(
                    file,
                    f"the slot lines of pid {pid} (invocations {lo}-{hi}) are also in "
                    f"{first} (invocations {f_lo}-{f_hi}): give each file once",
                )
            self.invocations[pid] = (first, min(lo, f_lo), max(hi, f_hi))
        for pair, xs in other.found.items():
            self.found[pair].extend(xs)
        self.seen |= other.seen


def read(path: str, into: SlotRun, pairs: set[Pair] | None) -> int:
    """Fold the slot lines of ``path`` into ``into`` (the windows of ``pairs``; None:
    consecutive slots); return how many lines there were."""
    run = SlotRun()
    try:
        with files.open_text(path) as f:
            count = _parse(path, files.lines(path, f, "a slot file"), run, pairs)
    except OSError as exc:
        raise InputError(path, f"cannot read: {exc.strerror or exc}") from None
    into.merge(run)
    return count


def _parse(path: str, lines: Iterable[str], run: SlotRun, pairs: set[Pair] | None) -> int:
    count = 0
    current: dict[str, tuple[int, dict[int, int]]] = {}  # pid -> its invocation's slot ends
    for number, raw in enumerate(lines, 1):
        if "task_slot_" not in raw:
            continue  # the common case, in one step
        at = raw.find("[STRACE]")
        if at < 0:
            continue
        fast = _FAST.match(raw, at)
        if fast is not None and int(fast[3]) <= MAX_SLOT:
            pid, inv, slot, ts, dur = fast[1], int(fast[2]), int(fast[3]), fast[4], fast[5]
        else:
            line = _slot_line(path, number, raw, at)
            if line is None:
                continue  # another host trace marker
            pid, inv, slot, ts, dur = line
        held = current.get(pid)
        if held is None or held[0] != inv:
            if held is not None:
                if inv < held[0]:
                    raise InputError(
                        path,
                        f"a slot line of invocation {inv} after invocation {held[0]}'s "
                        f"(pid {pid}): the lines of one process are out of order",
                        number,
                    )
                _fold(held[1], run, pairs)
            held = current[pid] = (inv, {})
            first = run.invocations.get(pid, (path, inv, inv))[1]
            run.invocations[pid] = (path, first, inv)
        held[1][slot] = int(ts) + int(dur)
        run.seen.add(slot)
        count += 1
    for _, ends in current.values():
        _fold(ends, run, pairs)
    return count


def _slot_line(path: str, number: int, raw: str, at: int) -> tuple[str, int, int, str, str] | None:
    """pid, invocation, slot, ts and dur of a slot line in any field order; None for
    another marker."""
    fields = dict(_FIELD.findall(raw, at + 8))
    m = NAME.fullmatch(fields.get("name", ""))
    if m is None:
        return None
    if not raw.endswith("\n"):  # the runtime ends every line: this one was cut
        raise InputError(path, "cut off: the last [STRACE] line has no line end", number)
    values = [fields.get(k, "") for k in ("pid", "inv", "ts", "dur")]
    if not all(_INT.fullmatch(v) for v in values) or int(m[1]) > MAX_SLOT:
        raise InputError(
            path,
            "unreadable [STRACE] slot line (pid, inv, ts and dur: integers of at most "
            "19 digits; slot 0-15)",
            number,
        )
    return values[0], int(values[1]), int(m[1]), values[2], values[3]


def _fold(ends: dict[int, int], run: SlotRun, pairs: set[Pair] | None) -> None:
    """One invocation's windows: finish-to-finish, µs."""
    if pairs is None:
        wanted: Iterable[Pair] = itertools.pairwise(sorted(ends))
    else:
        wanted = (p for p in pairs if p[0] in ends and p[1] in ends)
    for a, b in wanted:
        run.found[(a, b)].append((ends[b] - ends[a]) / 1000)

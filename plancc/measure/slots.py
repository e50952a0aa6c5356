"""Stage windows from task-timing slots: ``[STRACE]`` lines, finish-to-finish per round.

A slot line gives one slot's min(dispatch) … max(finish) for one invocation, in
device nanoseconds. The window between slots A and B in one invocation of one
process is ``(ts_B + dur_B) − (ts_A + dur_A)``; slots are per device, so windows
are only ever formed within one process (pid), never across cards.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from plancc.measure.errors import InputError

NAME = re.compile(r"(?:chip\.run|simpler_run)\.runner_run\.device_wall\.task_slot_(\d+)")
_FIELD = re.compile(r"(\w+)=(\S*)")
_INT = re.compile(r"\d+")
MAX_SLOT = 15


@dataclass
class SlotRun:
    """The slot lines of one run: slot ends in ns by (pid, invocation)."""

    ends: dict[tuple[str, int], dict[int, int]] = field(default_factory=lambda: defaultdict(dict))

    @property
    def pids(self) -> set[str]:
        return {pid for pid, _ in self.ends}

    def slots(self) -> set[int]:
        return {s for ends in self.ends.values() for s in ends}

    def windows(self, a: int, b: int) -> list[float]:
        """Finish-to-finish from slot a to slot b, µs, for every invocation with both."""
        return [
            (ends[b] - ends[a]) / 1000
            for _, ends in sorted(self.ends.items())
            if a in ends and b in ends
        ]


def read(path: str, into: SlotRun) -> int:
    """Add the slot lines of ``path`` to ``into``; return how many there were."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return _parse(path, f, into)
    except OSError as exc:
        raise InputError(path, f"cannot read: {exc.strerror or exc}") from None


def _parse(path: str, lines: Iterable[str], into: SlotRun) -> int:
    count = 0
    for number, raw in enumerate(lines, 1):
        at = raw.find("[STRACE]")
        if at < 0:
            continue
        fields = dict(_FIELD.findall(raw[at + 8 :]))
        m = NAME.fullmatch(fields.get("name", ""))
        if m is None:
            continue  # another host trace marker
        if not raw.endswith("\n"):  # the runtime ends every line: this one was cut
            raise InputError(path, "cut off: the last [STRACE] line has no line end", number)
        values = [fields.get(k, "") for k in ("pid", "inv", "ts", "dur")]
        if not all(_INT.fullmatch(v) for v in values) or int(m[1]) > MAX_SLOT:
            raise InputError(
                path, "unreadable [STRACE] slot line (pid, inv, ts, dur, slot 0-15)", number
            )
        pid, inv, ts, dur = values
        into.ends[(pid, int(inv))][int(m[1])] = int(ts) + int(dur)
        count += 1
    return count

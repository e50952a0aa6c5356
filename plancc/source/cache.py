"""Readings of layer functions, kept while every file they read is unchanged.

A reading is the costly part of the source checks (150 ms for the Flash CSA
layer, cold): ``modules`` keeps each parsed file, but walking the layer function
again still took most of a keystroke's time in the editor. ``read`` keeps whole
readings, keyed by what they were asked (path, function, root), and serves one
again while every module it read is at the version it was read at, and so is each of
their directories (a module created beside them, an import that failed before, may
now resolve): a version is a stamp and a digest of the content
(``modules.version``: an edit that keeps size and mtime is a new version). One
process-wide cache, bounded (least recently used out), serves `validate`, `report`
and the language server alike.

In the language server a check has a bound (``deadline``): the reading is given it,
and its work budget looks at the clock as it spends (``limits.Budget``), so a reading
still running when the bound passes stops itself at one of its steps (``OutOfTime``)
and the check publishes what it has. Nothing is raised into a thread from outside,
and a stopped reading is never kept as a reading: what is kept is the stop, for
``STOP_KEPT`` seconds and only for checks with a deadline, so that the next
keystrokes do not wait for it again and a stop that a busy moment caused is not kept
for long.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from types import MappingProxyType

from plancc.source import modules
from plancc.source.limits import Deadline, OutOfTime
from plancc.source.reader import read_layer
from plancc.source.reading import Reading

CAPACITY = 64  # readings kept (a plan names a few layer kinds; a workspace a few plans)
STOP_KEPT = 30.0  # seconds a stopped reading is not tried again (under a deadline)

Stamps = tuple[tuple[str, modules.Version | None], ...]  # each file's version; None: missing
Key = tuple[str, str, str | None, tuple[tuple[str, object], ...]]


_lock = threading.Lock()
_kept: OrderedDict[Key, tuple[Stamps, Reading | OutOfTime, float]] = OrderedDict()
_local = threading.local()  # .deadline: (time.monotonic() bound, seconds) of this thread's check


def read(
    path: str,
    function: str,
    root: str | None = None,
    defines: Mapping[str, object] = MappingProxyType({}),
) -> Reading:
    """``read_layer(path, function, root)``, or the reading it gave while every file it read
    is unchanged. Raises what ``read_layer`` raises (SourceError, never kept: a missing or
    broken file costs no reading), and ``OutOfTime`` past this thread's ``deadline``."""
    key = (os.path.abspath(path), function, root, tuple(sorted(defines.items())))
    with _lock:
        hit = _kept.get(key)
        if hit is not None:
            _kept.move_to_end(key)
    if hit is not None and _unchanged(hit[0]) and _still(hit[1], hit[2]):
        return _given(hit[1])
    bound: Deadline | None = getattr(_local, "deadline", None)
    found: Reading | OutOfTime
    with modules.journal() as paths:
        try:
            if bound is not None and time.monotonic() >= bound[0]:
                raise OutOfTime(bound[1])  # an earlier reading of the check took it all
            found = read_layer(path, function, root, defines, bound)
        except OutOfTime as stop:
            found = OutOfTime(stop.seconds)  # kept without its traceback (the reader's frames)
    stamps = _stamps(paths)
    with _lock:
        _kept[key] = (stamps, found, time.monotonic())
        _kept.move_to_end(key)
        while len(_kept) > CAPACITY:
            _kept.popitem(last=False)
    return _given(found)


def _still(found: Reading | OutOfTime, when: float) -> bool:
    """Whether a kept reading is served: a stop only to a check with a deadline, and only
    for ``STOP_KEPT`` seconds."""
    if not isinstance(found, OutOfTime):
        return True
    return getattr(_local, "deadline", None) is not None and time.monotonic() - when < STOP_KEPT


def _given(found: Reading | OutOfTime) -> Reading:
    if isinstance(found, OutOfTime):
        raise OutOfTime(found.seconds)
    return found


def clear() -> None:
    """Forget every reading (a benchmark's cold start; a test's fresh process)."""
    with _lock:
        _kept.clear()


def _stamps(files: list[tuple[str, modules.Version | None]]) -> Stamps:
    """Each file a reading asked for, at the version it was read at (or missing), and each
    of their directories as they are now."""
    seen = {os.path.normpath(p): v for p, v in files}
    for p in list(seen):
        if (d := os.path.dirname(p)) not in seen:
            seen[d] = modules.version(d)
    return tuple(seen.items())


def _unchanged(stamps: Stamps) -> bool:
    return all(modules.version(p) == v for p, v in stamps)


# -- the deadline of a check ---------------------------------------------------------------


@contextlib.contextmanager
def deadline(seconds: float | None) -> Iterator[None]:
    """Within it, on this thread, a reading not done ``seconds`` after the start stops
    itself (``read`` raises ``OutOfTime``); every reading of one check shares the bound.
    None: no bound."""
    _local.deadline = None if seconds is None else (time.monotonic() + seconds, seconds)
    try:
        yield
    finally:
        _local.deadline = None

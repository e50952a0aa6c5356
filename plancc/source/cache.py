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

In the language server a check has a bound (``deadline``): a reading still
running when it passes is stopped (``Stopped``) and the check publishes what it
has. The stop is kept like a reading, for ``STOP_KEPT`` seconds: the next
keystrokes do not wait for it again, and a stop that a busy moment caused is
not kept for long.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from types import MappingProxyType

from plancc.source import modules
from plancc.source.reader import read_layer
from plancc.source.reading import Reading

CAPACITY = 64  # readings kept (a plan names a few layer kinds; a workspace a few plans)
STOP_KEPT = 30.0  # seconds a stopped reading is not tried again (under a deadline)

Stamps = tuple[tuple[str, modules.Version | None], ...]  # each file's version; None: missing
Key = tuple[str, str, str | None, tuple[tuple[str, object], ...]]


class Stopped(BaseException):
    """A reading stopped at its check's deadline. A BaseException: raised into the reading
    wherever it is, it must pass every ``except Exception`` of the reader."""

    def __init__(self, seconds: float = 0.0) -> None:
        super().__init__(f"not read within {seconds:g} s, the editor's bound for a check")
        self.seconds = seconds


_lock = threading.Lock()
_kept: OrderedDict[Key, tuple[Stamps, Reading | Stopped, float]] = OrderedDict()
_local = threading.local()  # .deadline: (time.monotonic() bound, seconds) of this thread's check


def read(
    path: str,
    function: str,
    root: str | None = None,
    defines: Mapping[str, object] = MappingProxyType({}),
) -> Reading:
    """``read_layer(path, function, root)``, or the reading it gave while every file it read
    is unchanged. Raises what ``read_layer`` raises (SourceError, never kept: a missing or
    broken file costs no reading), and ``Stopped`` past this thread's ``deadline``."""
    key = (os.path.abspath(path), function, root, tuple(sorted(defines.items())))
    with _lock:
        hit = _kept.get(key)
        if hit is not None:
            _kept.move_to_end(key)
    if hit is not None and _unchanged(hit[0]) and _still(hit[1], hit[2]):
        return _given(hit[1])
    with modules.journal() as paths:
        found: Reading | Stopped = _bounded(lambda: read_layer(path, function, root, defines))
    stamps = _stamps(paths)
    with _lock:
        _kept[key] = (stamps, found, time.monotonic())
        _kept.move_to_end(key)
        while len(_kept) > CAPACITY:
            _kept.popitem(last=False)
    return _given(found)


def _still(found: Reading | Stopped, when: float) -> bool:
    """Whether a kept reading is served: a stop only to a check with a deadline, and only
    for ``STOP_KEPT`` seconds."""
    if not isinstance(found, Stopped):
        return True
    return getattr(_local, "deadline", None) is not None and time.monotonic() - when < STOP_KEPT


def _given(found: Reading | Stopped) -> Reading:
    if isinstance(found, Stopped):
        raise Stopped(found.seconds)
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
    """Within it, on this thread, a reading not done ``seconds`` after the start is stopped
    (``read`` raises ``Stopped``); every reading of one check shares the bound. None: no
    bound."""
    _local.deadline = None if seconds is None else (time.monotonic() + seconds, seconds)
    try:
        yield
    finally:
        _local.deadline = None


def _bounded(run: Callable[[], Reading]) -> Reading | Stopped:
    """``run()``, stopped at this thread's deadline (if any). Python cannot stop a thread
    from outside, but it can raise an exception in it (``PyThreadState_SetAsyncExc``): a
    timer does so once, and only while the reading runs; it is raised at the reading's
    next bytecode (a long call into C, one ``ast.parse``, finishes first)."""
    bound = getattr(_local, "deadline", None)
    if bound is None:
        return run()
    until, seconds = bound
    left = until - time.monotonic()
    if left <= 0:
        return Stopped(seconds)
    alarm = _Alarm(threading.get_ident())
    timer = threading.Timer(left, alarm.ring)
    timer.daemon = True
    timer.start()
    found: Reading | None = None
    try:
        try:
            found = run()
        finally:
            alarm.disarm()
            timer.cancel()
    except Stopped:  # raised in the reading, or as it ended (then it was done)
        alarm.disarm()
        return found if found is not None else Stopped(seconds)
    return found


class _Alarm:
    def __init__(self, thread: int) -> None:
        self.thread = thread
        self.armed = True
        self.lock = threading.Lock()

    def ring(self) -> None:
        with self.lock:
            if self.armed:
                self.armed = False
                _raise_in(self.thread, Stopped)

    def disarm(self) -> None:
        """No stop after this one: one not yet raised is withdrawn."""
        with self.lock:
            if self.armed:
                self.armed = False
            else:
                _raise_in(self.thread, None)


def _raise_in(thread: int, exc: type[BaseException] | None) -> None:
    """Raise ``exc`` in ``thread`` at its next bytecode (None: withdraw one pending)."""
    given = ctypes.py_object() if exc is None else ctypes.py_object(exc)  # py_object(): NULL
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread), given)

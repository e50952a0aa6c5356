"""Python modules of model code: parsed once, kept while the file is unchanged.

A module is parsed again only when it changed, so a long-lived process (the language
server) re-reads a source file only when it changes. Only a regular file is read,
opened without blocking and read up to ``MAX_BYTES``, within ``READ_SECONDS``; an
expression nested deeper than ``MAX_EXPR_DEPTH`` is cut there when it is parsed
(the cut part reads as `...`), so no walk over a module's tree recurses further.

Unchanged means the same ``Version``: the file's stamp (size, mtime_ns, ctime_ns,
inode, device) and a digest of its bytes (of a directory: of its names). The stamp
alone is trusted once it is settled: read more than ``RACY_NS`` after its ctime, so
that any later change gives another ctime (an edit that keeps size and mtime,
``touch -d``, ``cp -p``, changes the ctime; an atomic rename, the inode). A stamp read
sooner may be shared by a change in the same tick of the file system's clock: its
bytes are read and compared again on every look until it settles (git's "racy"
files).
"""

from __future__ import annotations

import ast
import contextlib
import errno
import hashlib
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from stat import S_ISDIR

from plancc.reading import read_regular
from plancc.source.limits import MAX_BYTES, MAX_EXPR_DEPTH

__all__ = [
    "MAX_BYTES",
    "Blocked",
    "Module",
    "SourceError",
    "Version",
    "clear_cache",
    "load_module",
    "source_bytes",
    "version",
]


class SourceError(Exception):
    """The layer's source cannot be read; the message says what and where (PC200)."""


class Blocked(SourceError):
    """A file that blocks on read (it waits for data that may never come: ``/proc/kmsg``, a
    file of a hung network mount): what plancc could not judge (PC208), never waited on
    past ``READ_SECONDS``."""


@dataclass
class Module:
    path: str
    name: str
    tree: ast.Module
    globals: dict[str, ast.stmt]
    cut: tuple[int, ...] = ()  # the lines of the expressions cut at MAX_EXPR_DEPTH
    stars: tuple[ast.ImportFrom, ...] = ()  # its `from x import *`, in order


Stamp = tuple[int, int, int, int, int]  # (size, mtime_ns, ctime_ns, inode, device)
Version = tuple[Stamp, bytes]  # and a digest of the bytes (a directory: of its names)
# A change within this of a stamp's ctime may keep the stamp (the file system's clock
# ticks in jiffies, or in seconds on some): larger than any tick, and any clock skew a
# network file system shows.
RACY_NS = 2_000_000_000
READ_SECONDS = 2.0  # a model file not read within this blocks on read (a disk reads 4 MiB in less)


@dataclass
class _Entry:
    stamp: Stamp
    digest: bytes
    settled: bool  # the stamp was read RACY_NS after its ctime: trusted alone
    parsed: Module | SourceError | None = None  # the module, or why not; None: not yet


_CACHE: dict[str, _Entry] = {}  # files: modules read (parsed when asked)
_DIRS: dict[str, _Entry] = {}  # their directories: listed, never read
_reads: dict[str, _Read] = {}  # reads under way, and those given up on that still wait
_lock = threading.Lock()  # the checks of several documents share the cache
_journal = threading.local()  # .paths: where this thread's ``journal`` writes
_slot = threading.local()  # .held: the slot this thread gives back while a read waits


@contextlib.contextmanager
def yielding(slot: threading.Semaphore) -> Iterator[None]:
    """Within it, on this thread (which holds ``slot``), ``slot`` is given back while a
    read waits for its bound and taken again after: a language server's checks of other
    documents run meanwhile, however many reads block."""
    outer = getattr(_slot, "held", None)
    _slot.held = slot
    try:
        yield
    finally:
        _slot.held = outer


@contextlib.contextmanager
def journal() -> Iterator[list[tuple[str, Version | None]]]:
    """Within it, on this thread, every path ``load_module`` is asked for, read or not, is
    appended to the list it gives with the version it was read at (None: missing); a kept
    reading is checked against them (``cache``)."""
    outer = getattr(_journal, "paths", None)
    paths: list[tuple[str, Version | None]] = []
    _journal.paths = paths
    try:
        yield paths
    finally:
        _journal.paths = outer


def _stamp(path: str) -> tuple[Stamp, bool]:
    """The stamp of ``path`` and whether it is a directory; OSError, ValueError."""
    st = os.stat(path)
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev), S_ISDIR(st.st_mode)


def _entry(path: str) -> tuple[_Entry, bytes | None]:
    """The entry of ``path`` as it is now, and its bytes when they were read for it (a
    file whose stamp is new or not settled). OSError and ValueError when it is missing."""
    now = time.time_ns()  # before the stat: a stamp is settled by when it was read
    stamp, directory = _stamp(path)
    table = _DIRS if directory else _CACHE
    with _lock:
        old = table.get(path)
    if old is not None and old.stamp == stamp and old.settled:
        return old, None
    raw: bytes | None = None
    problem: SourceError | None = None
    if directory:
        content = "\0".join(sorted(os.listdir(path))).encode("utf-8", "surrogateescape")
    else:
        try:
            content = raw = source_bytes(path)
        except SourceError as exc:
            problem = exc
            content = repr(exc).encode("utf-8", "surrogateescape")
    digest = hashlib.blake2b(content, digest_size=16).digest()
    kept = old.parsed if old is not None and old.digest == digest else None
    entry = _Entry(stamp, digest, now - stamp[2] > RACY_NS, problem or kept)
    with _lock:
        table[path] = entry
    return entry, raw


def version(path: str) -> Version | None:
    """The version of the file or directory at ``path`` now (None: missing); its bytes
    are read only while its stamp is new or not settled."""
    try:
        entry, _ = _entry(path)
    except (OSError, ValueError):
        return None
    return entry.stamp, entry.digest


def load_module(path: str) -> Module:
    """The parsed module at ``path``; parsed again only when it changed. Raises
    SourceError when it is missing, unreadable, too large or not Python."""
    paths = getattr(_journal, "paths", None)
    try:
        entry, raw = _entry(path)
    except (OSError, ValueError) as exc:
        if paths is not None:
            paths.append((path, None))
        raise SourceError(f"cannot read {path}: {_reason(exc)}") from None
    if paths is not None:
        paths.append((path, (entry.stamp, entry.digest)))
    if entry.parsed is None:
        entry.parsed = _parse(path, raw if raw is not None else source_bytes(path))
    if isinstance(entry.parsed, SourceError):
        # A new one each time: raising one kept would grow its traceback every time.
        raise type(entry.parsed)(*entry.parsed.args)
    return entry.parsed


def _reason(exc: BaseException) -> str:
    return getattr(exc, "strerror", None) or str(exc) or type(exc).__name__


@dataclass
class _Read:
    """A read of one file in a thread of its own: until when it is waited for, its outcome."""

    thread: threading.Thread
    until: float  # time.monotonic()
    out: list[bytes | BaseException]


def source_bytes(path: str) -> bytes:
    """The bytes of ``path``, read as every file argument is (``plancc.reading``): a
    regular file only, never waited on, at most ``MAX_BYTES``, within ``READ_SECONDS``.
    SourceError when it cannot be; Blocked when it blocks.

    The read runs in a thread of its own, waited for until ``READ_SECONDS`` after it
    started (by every check that asks for the file meanwhile: one read, one bound). A
    read that blocks cannot be stopped: its thread is left waiting (a daemon: it holds
    no exit), and while it waits the file is Blocked at once, for every check."""
    with _lock:
        read = _reads.get(path)
        if read is not None and not read.thread.is_alive() and time.monotonic() >= read.until:
            read = None  # a read given up on that returned at last: its bytes may be old
        mine = read is None
        if read is None:
            out: list[bytes | BaseException] = []
            worker = threading.Thread(target=_read, args=(path, out), name="plancc-read")
            worker.daemon = True
            read = _reads[path] = _Read(worker, time.monotonic() + READ_SECONDS, out)
            worker.start()
    left = read.until - time.monotonic()
    held = getattr(_slot, "held", None)
    if held is not None and read.thread.is_alive():
        held.release()  # waiting computes nothing: another check may run
        try:
            read.thread.join(max(0.0, left))
        finally:
            held.acquire()
    else:
        read.thread.join(max(0.0, left))
    if read.thread.is_alive():
        if mine or left > 0:
            raise Blocked(f"{path} was not read within {READ_SECONDS:g} s: it blocks on read")
        raise Blocked(f"{path} blocks on read: an earlier read of it still waits")
    if mine:
        with _lock:
            if _reads.get(path) is read:
                del _reads[path]
    return _outcome(path, read.out[0])


def _read(path: str, out: list[bytes | BaseException]) -> None:
    try:
        out.append(read_regular(path, MAX_BYTES))
    except BaseException as exc:  # given to the caller's thread
        out.append(exc)


def _outcome(path: str, got: bytes | BaseException) -> bytes:
    if isinstance(got, bytes):
        return got
    if isinstance(got, OSError):
        if got.errno == errno.EAGAIN:  # non-blocking, it said it would block
            raise Blocked(f"{path} {got.strerror}") from None
        if got.errno in (errno.EINVAL, errno.EFBIG):  # not a regular file; past the cap
            raise SourceError(f"{path} is {got.strerror}") from None
        raise SourceError(f"cannot read {path}: {_reason(got)}") from None
    if isinstance(got, ValueError):  # a NUL in the path
        raise SourceError(f"cannot read {path}: {_reason(got)}") from None
    raise got


def _parse(path: str, raw: bytes) -> Module | SourceError:
    problem = _parsed(path, raw)
    return SourceError(problem) if isinstance(problem, str) else problem


def _parsed(path: str, raw: bytes) -> Module | str:
    try:
        tree = _parse_apart(raw, path)
    except SyntaxError as exc:
        return f"{path}:{exc.lineno or 1}: does not parse: {exc.msg}"
    except ValueError as exc:  # a NUL in the source, on the Pythons whose parser says so
        return f"cannot read {path}: {_reason(exc)}"
    except (RecursionError, MemoryError):
        return f"{path} nests too deeply to parse"
    name = os.path.splitext(os.path.basename(path))[0]
    stars = tuple(
        s
        for s in tree.body
        if isinstance(s, ast.ImportFrom) and any(a.name == "*" for a in s.names)
    )
    return Module(path, name, tree, _globals(tree), _cut_deep(tree), stars)


def _parse_apart(raw: bytes, path: str) -> ast.Module:
    """``ast.parse`` in a thread of its own: how deep a nesting the parser takes depends
    on how deep its caller's stack is, so a file would parse from the command line and
    not in the language server's worker; from a fresh thread it parses the same from
    everywhere (about 2,900 levels)."""
    out: list[ast.Module | BaseException] = []

    def parse() -> None:
        try:
            out.append(ast.parse(raw, filename=path))
        except Exception as exc:  # raised again in the caller's thread
            out.append(exc)

    worker = threading.Thread(target=parse, name="plancc-parse")
    worker.start()
    worker.join()
    if isinstance(out[0], BaseException):
        raise out[0]
    return out[0]


def _cut_deep(tree: ast.Module) -> tuple[int, ...]:
    """Replace every expression nested deeper than MAX_EXPR_DEPTH (`1 + 1 + … + 1` a
    few thousand times parses, but no recursive walk survives it) by `...`; the lines
    where that happened. Iterative, and a quarter of the parse's own time."""
    cut: list[int] = []
    stack: list[tuple[ast.AST, int]] = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        for field in node._fields:
            value = getattr(node, field, None)
            if type(value) is list:
                for i, child in enumerate(value):
                    if isinstance(child, ast.expr) and depth >= MAX_EXPR_DEPTH:
                        value[i] = _stub(child, cut)
                    elif isinstance(child, ast.AST):
                        stack.append((child, depth + isinstance(child, ast.expr)))
            elif isinstance(value, ast.expr):
                if depth >= MAX_EXPR_DEPTH:
                    setattr(node, field, _stub(value, cut))
                else:
                    stack.append((value, depth + 1))
            elif isinstance(value, ast.AST) and not isinstance(value, ast.expr_context):
                stack.append((value, depth))
    return tuple(sorted(set(cut)))


def _stub(node: ast.expr, cut: list[int]) -> ast.expr:
    cut.append(node.lineno)
    return ast.copy_location(ast.Constant(...), node)


def _globals(tree: ast.Module) -> dict[str, ast.stmt]:  # noqa: C901 (one branch per kind of module-level statement)
    """The module's top-level names, each to the statement that binds it last."""
    out: dict[str, ast.stmt] = {}
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out[stmt.name] = stmt
        elif isinstance(stmt, ast.Assign):
            for t in stmt.targets:
                if isinstance(t, ast.Name):
                    out[t.id] = stmt
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            if stmt.value is not None:
                out[stmt.target.id] = stmt
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            for alias in stmt.names:
                if alias.name != "*":
                    out[(alias.asname or alias.name).split(".")[0]] = stmt
    return out


def clear_cache() -> None:
    """Forget every parsed module (a benchmark's cold start)."""
    _CACHE.clear()
    _DIRS.clear()

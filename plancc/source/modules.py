"""Python modules of model code: parsed once, kept while the file is unchanged.

A module is parsed again only when its mtime or size changed, so a long-lived
process (the language server) re-reads a source file only when it changes. Only a
regular file is read, opened without blocking and read up to ``MAX_BYTES``; an
expression nested deeper than ``MAX_EXPR_DEPTH`` is cut there when it is parsed
(the cut part reads as `...`), so no walk over a module's tree recurses further.
"""

from __future__ import annotations

import ast
import contextlib
import errno
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass

from plancc.reading import read_regular
from plancc.source.limits import MAX_BYTES, MAX_EXPR_DEPTH

__all__ = ["MAX_BYTES", "Module", "SourceError", "clear_cache", "load_module", "source_bytes"]


class SourceError(Exception):
    """The layer's source cannot be read; the message says what and where (PC200)."""


@dataclass
class Module:
    path: str
    name: str
    tree: ast.Module
    globals: dict[str, ast.stmt]
    cut: tuple[int, ...] = ()  # the lines of the expressions cut at MAX_EXPR_DEPTH
    stars: tuple[ast.ImportFrom, ...] = ()  # its `from x import *`, in order


_CACHE: dict[str, tuple[tuple[int, int], Module | str]] = {}
_journal = threading.local()  # .paths: where this thread's ``journal`` writes


@contextlib.contextmanager
def journal() -> Iterator[list[tuple[str, tuple[int, int] | None]]]:
    """Within it, on this thread, every path ``load_module`` is asked for, read or not, is
    appended to the list it gives with the stamp it was read at (None: missing); a kept
    reading is checked against them (``cache``)."""
    outer = getattr(_journal, "paths", None)
    paths: list[tuple[str, tuple[int, int] | None]] = []
    _journal.paths = paths
    try:
        yield paths
    finally:
        _journal.paths = outer


def _stamp(path: str) -> tuple[int, int]:
    st = os.stat(path)
    return (st.st_mtime_ns, st.st_size)


def load_module(path: str) -> Module:
    """The parsed module at ``path``; parsed again only when its mtime or size changed.
    Raises SourceError when it is missing, unreadable, too large or not Python."""
    paths = getattr(_journal, "paths", None)
    try:
        stamp = _stamp(path)
    except (OSError, ValueError) as exc:
        if paths is not None:
            paths.append((path, None))
        raise SourceError(f"cannot read {path}: {_reason(exc)}") from None
    if paths is not None:
        paths.append((path, stamp))
    hit = _CACHE.get(path)
    if hit is None or hit[0] != stamp:
        hit = (stamp, _parse(path))
        _CACHE[path] = hit
    if isinstance(hit[1], str):
        raise SourceError(hit[1])
    return hit[1]


def _reason(exc: BaseException) -> str:
    return getattr(exc, "strerror", None) or str(exc) or type(exc).__name__


def source_bytes(path: str) -> bytes:
    """The bytes of ``path``, read as every file argument is (``plancc.reading``): a
    regular file only, never waited on, at most ``MAX_BYTES``. SourceError when it
    cannot be."""
    try:
        return read_regular(path, MAX_BYTES)
    except OSError as exc:
        if exc.errno in (errno.EINVAL, errno.EFBIG):  # not a regular file; past the cap
            raise SourceError(f"{path} is {exc.strerror}") from None
        raise SourceError(f"cannot read {path}: {_reason(exc)}") from None
    except ValueError as exc:  # a NUL in the path
        raise SourceError(f"cannot read {path}: {_reason(exc)}") from None


def _parse(path: str) -> Module | str:
    try:
        tree = _parse_apart(source_bytes(path), path)
    except SourceError as exc:
        return str(exc)
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

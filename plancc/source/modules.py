"""Python modules of model code: parsed once, kept while the file is unchanged.

A module is parsed again only when its mtime or size changed, so a long-lived
process (the language server) re-reads a source file only when it changes.
"""

from __future__ import annotations

import ast
import contextlib
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass

MAX_BYTES = 4 * 1024 * 1024


class SourceError(Exception):
    """The layer's source cannot be read; the message says what and where (PC200)."""


@dataclass
class Module:
    path: str
    name: str
    tree: ast.Module
    globals: dict[str, ast.stmt]


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


def _parse(path: str) -> Module | str:
    try:
        if not os.path.isfile(path):
            return f"{path} is not a file"
        with open(path, "rb") as f:
            raw = f.read(MAX_BYTES + 1)
        if len(raw) > MAX_BYTES:
            return f"{path} is larger than 4 MiB"
        tree = ast.parse(raw, filename=path)
    except SyntaxError as exc:
        return f"{path}:{exc.lineno or 1}: does not parse: {exc.msg}"
    except (OSError, ValueError) as exc:
        return f"cannot read {path}: {_reason(exc)}"
    except (RecursionError, MemoryError):
        return f"{path} nests too deeply to parse"
    name = os.path.splitext(os.path.basename(path))[0]
    return Module(path, name, tree, _globals(tree))


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

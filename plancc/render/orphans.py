"""Outputs in a build directory that no plan produces any more (``build --check``).

A file is an orphan when plancc wrote it (a manifest of plancc's format, or a
module with plancc's header line), this run does not produce it, and the plan
it was built from either is one of this run's plans (its model was renamed)
or no longer exists (the plan was deleted or moved). Outputs of plans that are
merely not part of this run are left alone, so checking one plan against a
directory shared with others reports nothing about the others. A module is
judged by its manifest beside it; a module whose manifest is gone is an
orphan too.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Collection
from pathlib import Path

from plancc.tables.outputs import (
    MANIFEST_FORMAT,
    MANIFEST_SUFFIX,
    MODULE_HEADER,
    MODULE_SUFFIX,
)
from plancc.write import FileStatus, Status

_READ_LIMIT = 4 * 1024 * 1024  # a manifest is kilobytes; a bigger file is not one


def find(out_dir: Path, produced: Collection[str], plans: Collection[str]) -> list[FileStatus]:
    """The orphaned outputs in ``out_dir``, sorted: ``produced`` holds the file names this
    run writes, ``plans`` the real paths of this run's plans."""
    try:
        names = sorted(os.listdir(out_dir))
    except OSError:  # missing (every output is then missing) or unreadable: nothing to list
        return []
    ours = {os.path.realpath(p) for p in plans}
    out = []
    for name in names:
        if name in produced or name.startswith("."):
            continue
        if name.endswith(MANIFEST_SUFFIX):
            orphaned = _manifest_orphaned(out_dir, out_dir / name, ours)
        elif name.endswith(MODULE_SUFFIX) and _is_module(out_dir / name):
            manifest = name.removesuffix(MODULE_SUFFIX) + MANIFEST_SUFFIX
            if manifest in produced:
                continue
            orphaned = _manifest_orphaned(out_dir, out_dir / manifest, ours, missing=True)
        else:
            continue
        if orphaned:
            out.append(FileStatus(out_dir / name, Status.ORPHANED))
    return out


def _read(path: Path) -> bytes | None:
    """A regular file's first bytes, or None."""
    try:
        if not stat.S_ISREG(path.stat().st_mode):
            return None
        with open(path, "rb") as f:
            return f.read(_READ_LIMIT + 1)
    except OSError:
        return None


def _is_module(path: Path) -> bool:
    raw = _read(path)
    first = raw.split(b"\n", 1)[0] if raw else b""
    return first.lstrip(b"r").startswith(b'"""' + MODULE_HEADER.encode())


def _manifest_orphaned(out_dir: Path, path: Path, ours: set[str], *, missing: bool = False) -> bool:
    """Whether the manifest at ``path`` is an orphan; ``missing``: what a missing one is."""
    raw = _read(path)
    if raw is None:
        return missing and not (path.exists() or path.is_symlink())
    try:
        data = json.loads(raw)
        plan = data["source"]["plan"] if data.get("format") == MANIFEST_FORMAT else None
    except (ValueError, TypeError, KeyError, AttributeError, RecursionError):
        plan = None
    if not isinstance(plan, str) or not plan:
        return False  # not a manifest plancc wrote: not ours to judge
    where = os.path.realpath(out_dir / plan)
    return where in ours or not os.path.isfile(where)

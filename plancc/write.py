"""Stage 6, write: rendered files -> the output directory, atomically and only when changed.

Every file is written to a temporary file in the output directory and moved
into place with ``os.replace``, so a reader sees the old file or the new one,
never a part. All temporary files are written before the first is moved, so
a failure while writing (a full disk) leaves every output as it was. A file
whose bytes would not change is not touched: its mtime stays, and build
systems that watch it do not rebuild. A name is a bare file name: an output
can never land outside the directory.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path


class Status(StrEnum):
    WRITTEN = "written"
    UNCHANGED = "unchanged"
    UP_TO_DATE = "up to date"
    STALE = "stale"
    MISSING = "missing"
    ORPHANED = "orphaned"  # produced by no plan any more (build --check)

    @property
    def out_of_date(self) -> bool:
        return self in (Status.STALE, Status.MISSING, Status.ORPHANED)


@dataclass(frozen=True)
class FileStatus:
    path: Path
    status: Status


class WriteError(Exception):
    """An output could not be compared or written; the message names the file."""


def target(out_dir: Path, name: str) -> Path:
    """``out_dir / name`` for a bare file name; anything else is refused."""
    if (
        not name
        or name in (".", "..")
        or name.startswith(".")
        or "/" in name
        or "\\" in name
        or "\0" in name
        or Path(name).name != name
    ):
        raise ValueError(f"not a bare output file name: {name!r}")
    return out_dir / name


def _current(path: Path) -> bytes | None:
    """The bytes now at ``path`` if it is a regular file (not a link), else None."""
    try:
        st = path.lstat()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise WriteError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if stat.S_ISDIR(st.st_mode):
        raise WriteError(f"{path}: is a directory")
    if not stat.S_ISREG(st.st_mode):
        return None  # a symlink or a special file: always replaced by a regular file
    try:
        return path.read_bytes()
    except OSError as exc:
        raise WriteError(f"{path}: cannot read: {exc.strerror or exc}") from None


def compare(out_dir: Path, files: Mapping[str, bytes]) -> list[FileStatus]:
    """What ``write`` would do, without writing: up to date, stale or missing, per file."""
    out = []
    for name, data in files.items():
        path = target(out_dir, name)
        exists = path.exists() or path.is_symlink()
        now = _current(path)
        if now == data:
            out.append(FileStatus(path, Status.UP_TO_DATE))
        else:
            out.append(FileStatus(path, Status.STALE if exists else Status.MISSING))
    return out


def _new_file_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def write(out_dir: Path, files: Mapping[str, bytes]) -> list[FileStatus]:
    """Write the files that changed, atomically; report each as written or unchanged."""
    changed: list[tuple[Path, bytes]] = []
    result: list[FileStatus] = []
    for name, data in files.items():
        path = target(out_dir, name)
        if _current(path) == data:
            result.append(FileStatus(path, Status.UNCHANGED))
        else:
            changed.append((path, data))
            result.append(FileStatus(path, Status.WRITTEN))
    staged: list[tuple[str, Path]] = []
    try:
        for path, data in changed:
            staged.append((_stage(path, data), path))
        for tmp, path in staged:
            try:
                os.replace(tmp, path)
            except OSError as exc:
                raise WriteError(f"{path}: cannot write: {exc.strerror or exc}") from None
    finally:
        for tmp, _ in staged:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
    if changed:
        _sync_dir(out_dir)
    return result


def replace(path: Path, data: bytes) -> None:
    """Replace one existing file with ``data`` atomically, keeping its mode (``plancc fmt``
    rewriting a plan in place)."""
    tmp = _stage(path, data)
    try:
        os.replace(tmp, path)
    except OSError as exc:
        raise WriteError(f"{path}: cannot write: {exc.strerror or exc}") from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
    _sync_dir(path.parent)


def _stage(path: Path, data: bytes) -> str:
    """Write ``data`` to a new temporary file beside ``path``; its name.

    The name (``.plancc-XXXXXXXX.tmp``) is fixed and short, not derived from ``path``,
    so its length never depends on the model's name."""
    try:
        mode = stat.S_IMODE(path.stat().st_mode) if path.is_file() else _new_file_mode()
        fd, tmp = tempfile.mkstemp(prefix=".plancc-", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise WriteError(f"{path}: cannot write: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise WriteError(f"{path}: cannot write: {exc.strerror or exc}") from None
    return tmp


def _sync_dir(directory: Path) -> None:
    """Make the renames durable where the platform allows it (not on Windows)."""
    if os.name == "nt":
        return
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

"""Stage 6, write: rendered files -> the output directory, atomically and only when changed.

Every file is written to a temporary file in the output directory and moved
into place with ``os.replace``, so a reader sees the old file or the new one,
never a part. All temporary files are written before the first is moved, so
a failure while writing (a full disk) leaves every output as it was. A file
whose bytes would not change is not touched: its mtime stays, and build
systems that watch it do not rebuild. A name is a bare file name: an output
can never land outside the directory.

A build or `plancc fmt` killed while writing (SIGKILL, a power cut) leaves its
temporary files, named ``.plancc-<pid>-XXXXXXXX.tmp``: the next ``write`` into
the directory (or ``fmt`` of a plan in it) removes those whose process is gone,
and nothing else.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
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
    MISMATCHED = "not the manifest of the module beside it"
    ORPHANED = "orphaned"  # produced by no plan any more (build --check)

    @property
    def out_of_date(self) -> bool:
        return self in (Status.STALE, Status.MISSING, Status.MISMATCHED, Status.ORPHANED)


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


def compare(
    out_dir: Path, files: Mapping[str, bytes], pairs: Mapping[str, str] | None = None
) -> list[FileStatus]:
    """What ``write`` would do, without writing: up to date, stale or missing, per file.

    ``pairs`` maps a manifest's name to its module's: a manifest on disk whose
    ``module.sha256`` is not the module's on disk is MISMATCHED, whatever else."""
    out = []
    for name, data in files.items():
        path = target(out_dir, name)
        exists = path.exists() or path.is_symlink()
        now = _current(path)
        if name in (pairs or {}) and now is not None and _mismatched(now, out_dir, pairs, name):
            out.append(FileStatus(path, Status.MISMATCHED))
        elif now == data:
            out.append(FileStatus(path, Status.UP_TO_DATE))
        else:
            out.append(FileStatus(path, Status.STALE if exists else Status.MISSING))
    return out


def _mismatched(manifest: bytes, out_dir: Path, pairs: Mapping[str, str] | None, name: str) -> bool:
    """Whether a manifest's ``module.sha256`` differs from its module's bytes on disk
    (a manifest too old to have one, or not JSON, is only stale)."""
    assert pairs is not None
    try:
        expected = json.loads(manifest)["module"]["sha256"]
    except (ValueError, KeyError, TypeError):
        return False
    module = _current(target(out_dir, pairs[name]))
    return module is None or hashlib.sha256(module).hexdigest() != expected


def _new_file_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def write(out_dir: Path, files: Mapping[str, bytes]) -> list[FileStatus]:
    """Write the files that changed, atomically; report each as written or unchanged."""
    remove_leftovers(out_dir)
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


# mkstemp's names: the prefix, eight of [a-z0-9_], the suffix.
_LEFTOVER = re.compile(r"\.plancc-([0-9]+)-[a-z0-9_]{8}\.tmp")


def remove_leftovers(out_dir: Path) -> None:
    """Remove the temporary files of earlier builds (or `fmt` runs) that were killed
    while writing: those named as ``_stage`` names them, by a process that no longer
    runs (a build writing into the same directory now keeps its own)."""
    try:
        names = os.listdir(out_dir)
    except OSError:
        return  # writing will report the directory's problem
    for name in names:
        m = _LEFTOVER.fullmatch(name)
        if m is None or _running(int(m.group(1))):
            continue
        path = out_dir / name
        with contextlib.suppress(OSError):
            if stat.S_ISREG(path.lstat().st_mode):
                path.unlink()


def _running(pid: int) -> bool:
    if pid == os.getpid():
        return False  # this process has no temporary file before it stages
    if os.name == "nt":
        return True  # no cheap test: leave it (Windows keeps an open file from removal anyway)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (OSError, OverflowError):
        return True  # it runs (as another user), or the test cannot tell: leave it
    return True


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

    The name (``.plancc-<pid>-XXXXXXXX.tmp``) is short and not derived from ``path``, so
    its length never depends on the model's name; the pid tells a later build whether
    its writer still runs."""
    try:
        mode = stat.S_IMODE(path.stat().st_mode) if path.is_file() else _new_file_mode()
        prefix = f".plancc-{os.getpid()}-"
        fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=path.parent)
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

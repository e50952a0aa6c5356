"""Stage 6, write: rendered files -> the output directory, atomically and only when changed;
and every other file plancc rewrites (`fmt`, `validate --fix`, `suggest --fix`), the same way.

Every file is written to a temporary file beside it and moved into place with
``os.replace``, so a reader sees the old file or the new one, never a part. All
temporary files are written before the first is moved, so a failure while writing
(a full disk) leaves every output as it was. A file whose bytes would not change is
not touched: its mtime stays, and build systems that watch it do not rebuild. A
build output's name is a bare file name: an output can never land outside the
directory but through a symlink the user put there.

Files as users keep them: a symlink is written through, to its target (the link
stays a link); the file keeps its mode (and owner, where the process may give it);
a read-only file, and a file with other hard links (a rename would split them,
leaving the other names on the old bytes), are refused with a message that says
so, and nothing is written. ``Form`` keeps a text file's byte order mark and line
ending across a rewrite.

A write killed midway (SIGKILL, a power cut) leaves its temporary file, named
``.plancc-<pid>-XXXXXXXX.tmp``: the next write into the directory removes those
whose process is gone, and nothing else.
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


_BREAK = re.compile(rb"\r\n|\r|\n")


@dataclass(frozen=True)
class Form:
    """How a text file keeps its text: with a UTF-8 byte order mark or without, and its
    line ending (its first: LF, CRLF or a lone CR; LF when it has none). A rewrite works
    on the text with LF alone (``text``) and writes it back in the file's form (``encode``),
    so a plan kept with CRLF and a BOM keeps both."""

    bom: bool = False
    newline: str = "\n"

    @staticmethod
    def of(raw: bytes) -> Form:
        m = _BREAK.search(raw)
        return Form(raw.startswith(b"\xef\xbb\xbf"), "\n" if m is None else m[0].decode())

    def text(self, raw: bytes) -> str:
        """``raw`` decoded, without its BOM, every line ending LF; UnicodeDecodeError."""
        text = raw.decode("utf-8").removeprefix("\ufeff")
        return text.replace("\r\n", "\n").replace("\r", "\n")

    def encode(self, text: str) -> bytes:
        """``text`` (line endings LF) as this form keeps it."""
        if self.newline != "\n":
            text = text.replace("\n", self.newline)
        return (("\ufeff" if self.bom else "") + text).encode("utf-8")


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


def destination(path: Path) -> Path:
    """Where writing ``path`` lands: ``path``, or the end of the symlinks it is (a link to
    a file not yet there: that file). WriteError for a loop of links."""
    if not path.is_symlink():
        return path
    try:
        return Path(os.path.realpath(path, strict=True))
    except FileNotFoundError:
        real = Path(os.path.realpath(path))
    except OSError as exc:  # ELOOP: links that lead to each other
        raise WriteError(f"{path}: cannot write: {exc.strerror or exc}") from None
    if real.is_symlink():  # a loop that realpath returned as it was
        raise WriteError(f"{path}: cannot write: a loop of symbolic links")
    return real


def _current(path: Path) -> bytes | None:
    """The bytes ``path`` holds if it is (or links to) a regular file, else None."""
    real = destination(path)
    try:
        st = real.lstat()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise WriteError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if stat.S_ISDIR(st.st_mode):
        raise WriteError(f"{path}: is a directory")
    if not stat.S_ISREG(st.st_mode):
        return None  # a FIFO, a socket, a device: never read (and never replaced)
    try:
        return real.read_bytes()
    except OSError as exc:
        raise WriteError(f"{path}: cannot read: {exc.strerror or exc}") from None


def _writable(path: Path, real: Path) -> os.stat_result | None:
    """The stat of the file at ``real`` that writing ``path`` replaces (None: none yet);
    WriteError when it must not be replaced: not a regular file, read-only, or one of
    several hard links."""
    try:
        st = real.lstat()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise WriteError(f"{path}: cannot write: {exc.strerror or exc}") from None
    where = path if real == path else f"{path} (a link to {real})"
    if stat.S_ISDIR(st.st_mode):
        raise WriteError(f"{where}: is a directory")
    if not stat.S_ISREG(st.st_mode):  # renamed over, /dev/null would be a file
        raise WriteError(f"{where}: is not a regular file (a FIFO, a device); not replaced")
    # Its mode bits, not access(): root may write anything, yet a file its user made
    # read-only is not one to rewrite behind their back.
    if not st.st_mode & 0o222 or not os.access(real, os.W_OK):
        raise WriteError(f"{where}: is read-only; not rewritten (make it writable first)")
    if st.st_nlink > 1:
        raise WriteError(
            f"{where}: has {st.st_nlink} hard links; not rewritten, as a new file would "
            "leave the other names on the old bytes (copy it to a file of its own first)"
        )
    return st


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
    changed: list[tuple[Path, Path, bytes]] = []  # (the name, where it lands, its bytes)
    result: list[FileStatus] = []
    for name, data in files.items():
        path = target(out_dir, name)
        if _current(path) == data:
            result.append(FileStatus(path, Status.UNCHANGED))
        else:
            changed.append((path, destination(path), data))
            result.append(FileStatus(path, Status.WRITTEN))
    _put(changed)
    return result


def replace(path: Path, data: bytes) -> None:
    """Replace one file with ``data`` atomically, as ``write`` does (through a symlink,
    keeping its mode; refusing a read-only or hard-linked file): `plancc fmt`, `validate
    --fix` and `suggest --fix` rewriting a plan in place."""
    _put([(path, destination(path), data)])


def _put(changed: list[tuple[Path, Path, bytes]]) -> None:
    """Stage every file, then move each into place: a refusal or a failure before the
    first move writes nothing. The temporary files of killed writes in each directory
    written go first."""
    if not changed:
        return
    olds = [_writable(path, real) for path, real, _ in changed]
    directories = list(dict.fromkeys(real.parent for _, real, _ in changed))
    for directory in directories:
        remove_leftovers(directory)
    staged: list[tuple[str, Path, Path]] = []
    try:
        for (path, real, data), old in zip(changed, olds, strict=True):
            staged.append((_stage(path, real, data, old), path, real))
        for tmp, path, real in staged:
            try:
                os.replace(tmp, real)
            except OSError as exc:
                raise WriteError(f"{path}: cannot write: {exc.strerror or exc}") from None
    finally:
        for tmp, _, _ in staged:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
    for directory in directories:
        _sync_dir(directory)


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


def _stage(path: Path, real: Path, data: bytes, old: os.stat_result | None) -> str:
    """Write ``data`` to a new temporary file beside ``real`` (where ``path`` lands), with
    the mode and owner of the file it replaces (``old``); its name.

    The name (``.plancc-<pid>-XXXXXXXX.tmp``) is short and not derived from ``path``, so
    its length never depends on the model's name; the pid tells a later write whether
    its writer still runs."""
    mode = stat.S_IMODE(old.st_mode) if old is not None else _new_file_mode()
    try:
        prefix = f".plancc-{os.getpid()}-"
        fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=real.parent)
    except OSError as exc:
        raise WriteError(f"{path}: cannot write: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if old is not None and hasattr(os, "chown"):
            with contextlib.suppress(OSError):  # only root (or its owner) may give it
                os.chown(tmp, old.st_uid, old.st_gid)
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

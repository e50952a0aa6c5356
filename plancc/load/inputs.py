"""The plans a command reads: files, directories of plans, and standard input (``-``).

A directory stands for its ``*.yaml`` and ``*.yml`` files, hidden ones left
out. An entry of a directory that cannot be read (a broken symlink, a
subdirectory named ``x.yaml``, a file without read permission, a FIFO) is
skipped and reported, so one bad entry does not stop a run over a whole
directory; a file named on the command line that cannot be read is a usage
error. Plans are read one at a time, as they are checked (``Inputs.read``), each
once and up to the 4 MiB limit, so a directory of many plans is never held in
memory at once.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from plancc.load import MAX_BYTES, read_capped

STDIN = "-"
STDIN_LABEL = "<stdin>"
SUFFIXES = (".yaml", ".yml")


class InputError(Exception):
    """A plan named on the command line cannot be read: a usage or I/O error (exit 2)."""


@dataclass(frozen=True)
class PlanInput:
    label: str  # its name in diagnostics: as given, or --stdin-filename, or <stdin>
    path: Path | None = None  # None: standard input
    listed: bool = False  # found in a directory: skipped, not fatal, when unreadable
    stdin_raw: bytes = b""  # what standard input held

    @property
    def stdin(self) -> bool:
        return self.path is None

    @property
    def piped(self) -> bool:
        """Read from standard input or a pipe (``<(generate-plan)``): no file to read again."""
        if self.stdin:
            return True
        if self.listed:  # a directory's entry is read only when it is a regular file
            return False
        try:
            return not stat.S_ISREG(os.stat(self.label).st_mode)
        except OSError:  # a dangling link, a loop of links: reading it says why it cannot be
            return False


@dataclass(frozen=True)
class Skipped:
    """A directory entry that looked like a plan but could not be read."""

    label: str
    reason: str


@dataclass
class Inputs:
    plans: tuple[PlanInput, ...]
    skipped: list[Skipped] = field(default_factory=list)  # filled by read()

    def read(self) -> Iterator[tuple[PlanInput, bytes]]:
        """Each plan with its bytes, in order. A directory entry that cannot be read is
        added to ``skipped``; a plan named on the command line raises InputError."""
        for plan in self.plans:
            if plan.path is None:
                yield plan, plan.stdin_raw
                continue
            try:
                if plan.listed:  # a FIFO would block; a directory cannot be read
                    mode = plan.path.stat().st_mode
                    if not stat.S_ISREG(mode):
                        raise OSError(0, "is a directory" if stat.S_ISDIR(mode) else "not a file")
                raw = read_capped(plan.path)
            except OSError as exc:
                reason = exc.strerror or str(exc)
                if not plan.listed:
                    raise InputError(f"{plan.label}: cannot read: {reason}") from None
                self.skipped.append(Skipped(plan.label, reason))
                continue
            yield plan, raw


def process_name(name: str) -> bool:
    """Whether ``name`` is one the kernel gives this process (``/dev/fd/63`` for a pipe
    from ``<(generate-plan)``, ``/dev/stdin``, ``/proc/self/fd/5``): outputs record it
    as given, since relative to another directory it names nothing."""
    return name.startswith(("/dev/", "/proc/"))


def collect(paths: Sequence[str], stdin_filename: str | None = None) -> Inputs:
    """Every plan the arguments name, sorted by label and each file once, whatever the
    order of the arguments. One file under two spellings (``a.yaml`` and ``/abs/a.yaml``,
    a directory and a file in it, a symlink) is one plan, labelled as first given.
    ``-`` reads standard input (once), named ``stdin_filename`` or ``<stdin>``."""
    found: list[tuple[Path, str, bool]] = []  # (path, label, inside a directory)
    stdin: PlanInput | None = None
    for given in paths:
        if given == STDIN:
            if stdin is None:
                stdin = PlanInput(stdin_filename or STDIN_LABEL, stdin_raw=_read_stdin())
            continue
        path = Path(given)
        if path.is_dir():
            entries = _plan_entries(path, given)
            if not entries:
                raise InputError(f"{given}: no *.yaml or *.yml plans in this directory")
            found += [(p, p.as_posix(), True) for p in entries]
        elif path.exists() or path.is_symlink():
            found.append((path, path.as_posix(), False))
        else:
            raise InputError(f"{given}: no such file or directory")
    unique: dict[object, tuple[Path, str, bool]] = {}
    for path, label, listed in found:
        unique.setdefault(_identity(path), (path, label, listed))
    plans = [PlanInput(label, path, listed) for path, label, listed in unique.values()]
    if stdin is not None:
        plans.append(stdin)
    return Inputs(tuple(sorted(plans, key=lambda p: p.label)))


def _plan_entries(directory: Path, given: str) -> list[Path]:
    """The directory's ``*.yaml`` and ``*.yml`` entries that are not hidden, sorted."""
    try:
        names = os.listdir(directory)
    except OSError as exc:
        raise InputError(f"{given}: cannot read: {exc.strerror or exc}") from None
    return sorted(
        directory / name for name in names if name.endswith(SUFFIXES) and not name.startswith(".")
    )


def _read_stdin() -> bytes:
    try:
        return sys.stdin.buffer.read(MAX_BYTES + 1)
    except (OSError, AttributeError, ValueError) as exc:  # closed, or not a byte stream
        raise InputError(f"{STDIN}: cannot read standard input: {exc}") from None


def _identity(path: Path) -> object:
    """What makes two spellings one file: its device and inode (which see through
    symlinks, hard links and case-insensitive names), else its real path."""
    try:
        st = path.stat()
    except OSError:  # reading it will report the problem
        return os.path.realpath(path)
    return (st.st_dev, st.st_ino) if st.st_ino else os.path.realpath(path)

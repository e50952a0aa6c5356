"""Reading a file a user names: a regular file only, opened without blocking, capped.

A FIFO blocks its open until a writer comes and its read until one writes; a device
such as ``/dev/zero`` never ends, nor may a file in ``/proc``. So a file argument is
opened with ``O_NONBLOCK`` (a FIFO's open returns at once), the opened descriptor's
``fstat`` must say it is a regular file (a path that becomes a FIFO after a check is
caught too), and no more than ``limit`` of its bytes is ever read. The descriptor
stays non-blocking: a file that calls itself regular yet waits for data
(``/proc/kmsg``, a tracing pipe) says so at once (EAGAIN) instead of blocking the
read, while a file on a disk reads as ever (the flag means nothing to it).
Everything raises ``OSError``, whose ``strerror`` says what is wrong in words.

A leaf module, imported by the generated modules' runtime too: the standard library only.
"""

from __future__ import annotations

import errno
import io
import os
import stat

__all__ = ["open_regular", "read_regular"]


def _size(limit: int) -> str:
    if limit >= 1 << 30:
        return f"{limit >> 30} GiB"
    return f"{limit >> 20} MiB" if limit >= 1 << 20 else f"{limit:,} bytes"


class _Capped(io.RawIOBase):
    """A file descriptor's bytes, refused past ``limit`` of them."""

    def __init__(self, fd: int, limit: int) -> None:
        super().__init__()
        self._file = io.FileIO(fd, "rb")
        self._limit = limit
        self._read = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        n = self._file.readinto(buffer)
        if n is None:  # EAGAIN: no data yet, and perhaps never
            raise OSError(errno.EAGAIN, "blocks on read: it waits for data")
        self._read += n
        if self._read > self._limit:
            raise OSError(errno.EFBIG, f"larger than {_size(self._limit)}")
        return n

    def close(self) -> None:
        self._file.close()
        super().close()


def open_regular(path: str | os.PathLike[str], limit: int) -> io.BufferedReader:
    """``path`` opened for reading, buffered; OSError when it is not a regular file, and
    from a read that would take it past ``limit`` bytes."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # a FIFO, a device, a directory
            raise OSError(errno.EINVAL, "not a regular file")
        raw = _Capped(fd, limit)
    except BaseException:
        os.close(fd)
        raise
    return io.BufferedReader(raw)


def read_regular(path: str | os.PathLike[str], limit: int) -> bytes:
    """The bytes of the regular file ``path``; OSError when it is not one, or is larger
    than ``limit`` bytes."""
    with open_regular(path, limit) as f:
        return f.read()

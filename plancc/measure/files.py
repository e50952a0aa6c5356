"""Opening `plancc measure`'s inputs: regular files only, opened without blocking, never
read past a cap (``plancc.reading``); a log or slot file line by line, each line bounded.

A trace or slot file reaches hundreds of MB and is streamed, so the cap is far above
any real one: it is there so that a file that never ends (one in ``/proc``) ends.
"""

from __future__ import annotations

import functools
import io
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from plancc.measure.errors import InputError
from plancc.reading import open_regular, read_regular
from plancc.usage import UsageError

MAX_BYTES = 4 << 30  # a log, a slot file or a trace
RESULT_BYTES = 16 << 20  # a result is a few kB; a file that never ends stops here
MAX_LINE = 64 << 20  # a line of a log or slot file (a rank's raw samples are one line)


def open_text(path: str, *, strict: bool = False) -> TextIO:
    """``path`` as UTF-8 text: undecodable bytes replaced, or with ``strict`` a
    UnicodeDecodeError, and line ends as written (``strict``: a trace's own) or read as
    ``\\n``. OSError when it cannot be read, is not a regular file or is too large."""
    return io.TextIOWrapper(
        open_regular(path, MAX_BYTES),
        encoding="utf-8",
        errors="strict" if strict else "replace",
        newline="" if strict else None,
    )


def lines(path: str, f: TextIO, what: str) -> Iterator[str]:
    """The lines of ``f``; InputError at one longer than MAX_LINE characters, which no
    ``what`` holds (and which is never held whole)."""
    for number, line in enumerate(iter(functools.partial(f.readline, MAX_LINE + 1), ""), 1):
        if len(line) > MAX_LINE:
            raise InputError(path, f"a line longer than {MAX_LINE >> 20} MiB: not {what}", number)
        yield line


TRACE_GLOB = "merged_swimlane_*.json"  # what PyPTO names a swimlane


def expanded(paths: list[str]) -> list[str]:
    """The swimlanes ``paths`` name: a file as given, a directory's every ``TRACE_GLOB``
    under it (a multi-card run writes one per dispatch under ``rank<r>/d<k>/``), each
    once, in order. InputError for a directory that holds none."""
    out: list[str] = []
    for p in paths:
        if os.path.isdir(p):
            found = sorted(str(f) for f in Path(p).rglob(TRACE_GLOB) if f.is_file())
            if not found:
                raise InputError(p, f"no {TRACE_GLOB} under this directory")
            out += found
        else:
            out.append(p)
    return list(dict.fromkeys(out))


def read_result(path: str, label: str) -> Any:
    """The JSON of a `plancc measure --format json` result (`suggest --measured`, `report
    --measure`); UsageError, its words after ``label`` (how the command names the file),
    when it cannot be read or is not JSON."""
    try:  # a regular file, opened without blocking, read no further than RESULT_BYTES
        raw = read_regular(path, RESULT_BYTES)
    except OSError as exc:
        raise UsageError(f"{label}: cannot read: {exc.strerror or exc}") from None
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise UsageError(f"{label}: not JSON: {exc}") from None
    except RecursionError:  # a few kB of `[`: no result nests so deep
        raise UsageError(f"{label}: not JSON: nested too deeply") from None

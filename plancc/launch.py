"""The console script: `validate` and `build` with plain arguments start without typer.

typer and click take about 200 ms to import, a third of a cold `plancc
validate`. So this module reads the arguments of those two commands itself,
when they are of the plain forms below, and runs the same bodies
(``plancc.commands``) that ``plancc.cli`` runs. Anything else (``--help``, a
global option, an unknown or repeated-short option, a value that looks like an
option, a bad ``--format``) goes to typer unread, so every message and exit
code for it stays typer's. ``tests/test_launch.py`` holds ``OPTIONS`` to the
options typer declares and both paths to the same output.

The forms read here: the command name first; ``--name``, ``--name=value``,
``--name value`` and ``-x value``; positional paths (``-`` for stdin); ``--``
ends the options.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

from plancc import commands, console
from plancc.commands import Format

# Per command: each option's spellings, its keyword in plancc.commands, and whether it
# takes a value.
_SHARED: dict[str, tuple[str, bool]] = {
    "--format": ("fmt", True),
    "-f": ("fmt", True),
    "--strict": ("strict", False),
    "--quiet": ("quiet", False),
    "-q": ("quiet", False),
    "--show-allowed": ("show_allowed", False),
    "--stdin-filename": ("stdin_filename", True),
}
OPTIONS: dict[str, dict[str, tuple[str, bool]]] = {
    "validate": _SHARED,
    "build": {
        **_SHARED,
        "--out": ("out", True),
        "-o": ("out", True),
        "--check": ("compare", False),
    },
}
_REQUIRED = {"validate": (), "build": ("out",)}
_RUN: dict[str, Callable[..., int]] = {"validate": commands.validate, "build": commands.build}
_FORMATS = frozenset(f.value for f in Format)


def parse(argv: Sequence[str]) -> Callable[[], int] | None:
    """The command ``argv`` asks for, ready to run; None when typer should read it."""
    if not argv or argv[0] not in OPTIONS or "_PLANCC_COMPLETE" in os.environ:
        return None
    name, options = argv[0], OPTIONS[argv[0]]
    kwargs: dict[str, object] = {}
    paths: list[str] = []
    rest = iter(argv[1:])
    for arg in rest:
        if arg == "--":
            paths.extend(rest)
            break
        if arg == "-" or not arg.startswith("-"):
            paths.append(arg)
            continue
        spelling, eq, attached = arg.partition("=")
        if spelling not in options or (eq and not spelling.startswith("--")):
            return None
        keyword, takes_value = options[spelling]
        if not takes_value:
            if eq:
                return None
            kwargs[keyword] = True
            continue
        value = attached if eq else next(rest, None)
        if value is None or (value.startswith("-") and value != "-"):
            return None
        if keyword == "fmt":
            if value not in _FORMATS:
                return None
            kwargs[keyword] = Format(value)
        else:
            kwargs[keyword] = value
    if not paths or any(key not in kwargs for key in _REQUIRED[name]):
        return None
    run = _RUN[name]
    return lambda: run(paths, **kwargs)


def main(argv: Sequence[str] | None = None) -> NoReturn:
    """The console script (``argv`` None: ``sys.argv``). As the console script, the
    process is short-lived: no cycle collection, and it ends at once after its output
    (``console.run``). Given ``argv`` (tests, in process), it exits as usual."""
    command = parse(sys.argv[1:] if argv is None else argv)
    if command is None:
        from plancc import cli  # noqa: PLC0415 (typer only for what launch does not read)

        cli.main()
    if argv is None:
        gc.disable()  # every object dies with the process: collecting cycles is waste
    console.run(lambda: console.guarded(command), at_once=argv is None)

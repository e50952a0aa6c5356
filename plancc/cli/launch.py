"""The console script: every command with plain arguments starts without typer.

typer and click (and the pydantic typer converts values with) take about
100 ms to import, more than the rest of a cold `plancc validate`. So this
module reads the arguments itself when they are of the plain forms below,
from the same declarations (``plancc.cli.commands``: each command's signature)
that ``plancc.cli`` hands typer, and runs the command. Anything else
(``--help`` or ``-h``, completion, an unknown or a short option run together with its
value, a value that looks like an option, a bad choice, a missing argument)
goes to typer unread, so every message and exit code for it stays typer's.
``tests/test_launch.py`` holds both paths to the same output.

The forms read here: global flags, then the command name; ``--name``,
``--name=value``, ``--name value`` and ``-x value`` (an int option's value in
plain digits); positional arguments (``-`` for stdin); ``--`` ends the options.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NoReturn

from plancc.cli import commands, console
from plancc.cli.options import COMMANDS, REQUIRED, Argument, Command, Option, Param, params_of


class _Unread(Exception):
    """Not a plain form: typer reads it."""


def _value(p: Param, value: str) -> Any:
    if p.type in (int, int | None):  # a plain decimal; anything else is typer's
        if not value.isascii() or not value.isdigit():
            raise _Unread
        return int(value)
    choices = p.choices
    if choices is None:
        return value
    if value not in choices.__members__.values():
        raise _Unread
    return choices(value)


def _options(params: list[Param], args: Iterator[str], positional: list[str]) -> dict[str, Any]:
    """The keywords of the options in ``args``; positional arguments go to ``positional``."""
    spellings = {n: p for p in params if isinstance(p.decl, Option) for n in p.decl.names}
    kwargs: dict[str, Any] = {}
    for arg in args:
        if arg == "--":
            positional.extend(args)
            break
        if arg == "-" or not arg.startswith("-"):
            positional.append(arg)
            continue
        spelling, eq, attached = arg.partition("=")
        p = spellings.get(spelling)
        if p is None or (eq and not spelling.startswith("--")):
            raise _Unread
        if p.flag:
            if eq:
                raise _Unread
            kwargs[p.name] = True
            continue
        value = attached if eq else next(args, None)
        if value is None or (value.startswith("-") and value != "-"):
            raise _Unread
        if p.many:
            kwargs.setdefault(p.name, []).append(_value(p, value))
        else:
            kwargs[p.name] = _value(p, value)
    return kwargs


def _call(params: list[Param], args: Iterator[str]) -> dict[str, Any]:
    """The keywords a command's body takes for ``args``."""
    positional: list[str] = []
    kwargs = _options(params, args, positional)
    arguments = [p for p in params if isinstance(p.decl, Argument)]
    for p in arguments:
        if p.many:
            kwargs[p.name], positional = positional, []
        elif positional:
            kwargs[p.name] = positional.pop(0)
    if positional or any(p.default is REQUIRED and kwargs.get(p.name, []) == [] for p in params):
        raise _Unread
    return kwargs


def parse(argv: Sequence[str]) -> tuple[Command, Callable[[], int]] | None:
    """The command ``argv`` asks for, ready to run; None when typer should read it."""
    if "_PLANCC_COMPLETE" in os.environ:
        return None
    args = iter(argv)
    root = params_of(commands.root)
    spellings = {n: p for p in root if isinstance(p.decl, Option) for n in p.decl.names}
    flags: dict[str, Any] = {}
    name = next(args, None)
    while name in spellings and spellings[name].flag:  # the global options are flags
        flags[spellings[name].name] = True
        name = next(args, None)
    for p in root:
        if flags.get(p.name) and isinstance(p.decl, Option) and p.decl.action is not None:
            return _ROOT, p.decl.action  # --version: typer runs it before the command
    found = COMMANDS.get(name or "")
    if found is None:
        return None
    try:
        kwargs = _call(found.params, args)
    except _Unread:
        return None
    commands.root(**flags)
    run = found.run
    return found, lambda: run(**kwargs)


_ROOT = Command("plancc", commands.root)


def main(argv: Sequence[str] | None = None) -> NoReturn:
    """The console script (``argv`` None: ``sys.argv``). As the console script, a
    short-lived command runs without cycle collection and ends at once after its
    output (``console.run``). Given ``argv`` (tests, in process), it exits as usual."""
    parsed = parse(sys.argv[1:] if argv is None else argv)
    if parsed is None:
        from plancc.cli import app as cli  # noqa: PLC0415 (typer only for what launch does not read)

        cli.main()
    found, command = parsed
    short_lived = argv is None and not found.long_lived
    if short_lived:
        gc.disable()  # every object dies with the process: collecting cycles is waste
    console.run(lambda: console.guarded(command), at_once=short_lived)

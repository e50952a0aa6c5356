"""How a command declares its options: ``Annotated`` parameters of its function.

``plancc.cli.commands`` declares every command this way, once; ``plancc.cli`` turns the
declarations into typer's parameters and ``plancc.cli.launch`` parses the plain forms
of a command line from them without typer (``Param``: one parameter as both read it).
"""

from __future__ import annotations

import typing
from collections.abc import Callable, Sequence
from enum import StrEnum
from typing import Any, NamedTuple


class Option:
    """An option's spellings (``--format``, ``-f``), help and metavar (for an option
    that takes a value). ``action``: a flag that does this and exits (``--version``)."""

    __slots__ = ("action", "help", "metavar", "names")

    def __init__(
        self,
        *names: str,
        help: str,
        metavar: str | None = None,
        action: Callable[[], int] | None = None,
    ) -> None:
        self.names = names
        self.help = help
        self.metavar = metavar
        self.action = action


# Named tuples, not dataclasses: `plancc --version` would spend more importing
# dataclasses than on the rest of its work.
class Argument(NamedTuple):
    """A positional argument: its metavar (``PATH``) and help."""

    metavar: str
    help: str


class Param(NamedTuple):
    """One parameter of a command as both parsers read it."""

    name: str  # the keyword the body takes
    type: Any  # the annotation without Annotated: bool, str, str | None, list[str], an enum
    decl: Option | Argument
    default: Any  # REQUIRED when there is none

    @property
    def flag(self) -> bool:
        return self.type is bool

    @property
    def many(self) -> bool:
        return typing.get_origin(self.type) in (list, Sequence)

    @property
    def choices(self) -> type[StrEnum] | None:
        arms = typing.get_args(self.type) or (self.type,)
        return next((a for a in arms if isinstance(a, type) and issubclass(a, StrEnum)), None)

    @property
    def metavar(self) -> str | None:
        if self.choices is not None:
            return "[" + "|".join(self.choices) + "]"
        return self.decl.metavar


REQUIRED = object()


class Command(NamedTuple):
    name: str
    run: Callable[..., int]
    long_lived: bool = False  # a server: it keeps the cycle collector and tears down

    @property
    def params(self) -> list[Param]:
        return params_of(self.run)


def params_of(fn: Callable[..., Any]) -> list[Param]:
    hints = typing.get_type_hints(fn, include_extras=True)
    defaults = fn.__kwdefaults__ or {}
    out = []
    for name, hint in hints.items():
        if name != "return":
            base, decl = typing.get_args(hint)[:2]
            out.append(Param(name, base, decl, defaults.get(name, REQUIRED)))
    return out


COMMANDS: dict[str, Command] = {}


def command(*, long_lived: bool = False) -> Callable[[Callable[..., int]], Callable[..., int]]:
    """Register a command; its name is the function's, its help the docstring."""

    def register(fn: Callable[..., int]) -> Callable[..., int]:
        name = fn.__name__.removesuffix("_")
        COMMANDS[name] = Command(name, fn, long_lived)
        return fn

    return register

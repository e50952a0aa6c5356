"""What every output format is: a name and how it prints a validation and a build."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from plancc.api import BuildResult, Validation

if TYPE_CHECKING:
    from plancc.write import FileStatus


@dataclass(frozen=True)
class Options:
    colour: bool = False
    quiet: bool = False  # diagnostics only, no summary lines
    show_allowed: bool = False  # silenced warnings too, with their reasons


@dataclass(frozen=True)
class OutputFormat:
    name: str
    validate: Callable[[Validation, Options], str]  # `plancc validate`
    build: Callable[[BuildResult, Options], str]  # a `plancc build` that passed validation


def stale_message(f: FileStatus) -> str:
    """What `plancc build --check` says of a missing or stale output."""
    return f"{f.path.as_posix()} is {f.status.value}; run plancc build to regenerate it"

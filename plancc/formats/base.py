"""What every output format is: a name and how it prints a validation and a build."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from plancc.api import BuildResult, Validation
from plancc.check import Allowed
from plancc.diagnostics import printable
from plancc.ir import allow_scope

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


def allowed_by(a: Allowed) -> str:
    """What silenced a warning, in the text formats: the warm and its reason, or
    lint.ignore. (JSON and SARIF carry the warm and the reason apart.)"""
    return a.reason if a.warm is None else f"{allow_scope(printable(a.warm))}: {a.reason}"


def stale_message(f: FileStatus) -> str:
    """What `plancc build --check` says of a missing, stale or orphaned output."""
    if f.status.value == "orphaned":
        return f"{f.path.as_posix()} is produced by no plan any more; delete it"
    return f"{f.path.as_posix()} is {f.status.value}; run plancc build to regenerate it"

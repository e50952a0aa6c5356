"""How a command prints its report: the `--format` choices, colour, the output format
chosen, and the lines said beside the report (skipped inputs, a refused build)."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from enum import StrEnum
from typing import TYPE_CHECKING

from plancc.cli import console

if TYPE_CHECKING:
    from plancc.api import Validation
    from plancc.formats import Options, OutputFormat
    from plancc.load.inputs import Skipped


# The --format choices: the names of plancc.formats.FORMATS (listed here, not imported,
# so that the command line loads no output format it does not use) and `auto`.
class Format(StrEnum):
    auto = "auto"
    text = "text"
    json = "json"
    github = "github"
    sarif = "sarif"


def colour() -> bool:
    """Colour on a terminal, unless NO_COLOR is set to a non-empty value (no-color.org)."""
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def decided(fmt: Format) -> Format:
    """``auto``: GitHub annotations in GitHub Actions, text elsewhere."""
    if fmt is not Format.auto:
        return fmt
    return Format.github if os.environ.get("GITHUB_ACTIONS") == "true" else Format.text


def output(fmt: Format, *, quiet: bool, show_allowed: bool) -> tuple[OutputFormat, Options]:
    """The output format (``auto`` decided) and its options."""
    from plancc.formats import FORMATS, Options  # noqa: PLC0415 (cold start)

    options = Options(colour=colour(), quiet=quiet, show_allowed=show_allowed)
    return FORMATS[decided(fmt).value], options


def emit(report: Validation, fmt: Format, *, quiet: bool, show_allowed: bool) -> None:
    chosen, options = output(fmt, quiet=quiet, show_allowed=show_allowed)
    console.out(chosen.validate(report, options))


def say_skipped(skipped: Sequence[Skipped]) -> None:
    """Directory entries that could not be read, on stderr: the report is about the rest."""
    for s in skipped:
        console.err(f"plancc: skipped {s.label}: {s.reason}")


def say_refused(refusal: str, fmt: Format, *, quiet: bool) -> None:
    """A failed build says it wrote nothing and why: last in the text report, else (so as
    not to spoil JSON or SARIF on stdout) on stderr."""
    if decided(fmt) is Format.text and not quiet:
        console.out(f"plancc build: {refusal}\n")
    else:
        console.err(f"plancc build: {refusal}")

"""How `validate` and `build` print a report: the output format (``auto`` decided), colour,
what could not be read, and a refused build. Formats are named by their value (the
command line's ``Format``, a ``StrEnum``, is one)."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from plancc import console

if TYPE_CHECKING:
    from plancc.api import Validation
    from plancc.formats import Options, OutputFormat
    from plancc.inputs import Skipped


def colour() -> bool:
    """Colour on a terminal, unless NO_COLOR is set to a non-empty value (no-color.org)."""
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def decided(fmt: str) -> str:
    """``auto``: GitHub annotations in GitHub Actions, text elsewhere."""
    if fmt != "auto":
        return fmt
    return "github" if os.environ.get("GITHUB_ACTIONS") == "true" else "text"


def output(fmt: str, *, quiet: bool, show_allowed: bool) -> tuple[OutputFormat, Options]:
    """The output format (``auto`` decided) and its options."""
    from plancc.formats import FORMATS, Options  # noqa: PLC0415 (cold start)

    options = Options(colour=colour(), quiet=quiet, show_allowed=show_allowed)
    return FORMATS[decided(fmt)], options


def emit(report: Validation, fmt: str, *, quiet: bool, show_allowed: bool) -> None:
    out, options = output(fmt, quiet=quiet, show_allowed=show_allowed)
    console.out(out.validate(report, options))


def say_skipped(skipped: Sequence[Skipped]) -> None:
    """Directory entries that could not be read, on stderr: the report is about the rest."""
    for s in skipped:
        console.err(f"plancc: skipped {s.label}: {s.reason}")


def say_refused(refusal: str, fmt: str, *, quiet: bool) -> None:
    """A failed build says it wrote nothing and why: last in the text report, else (so as
    not to spoil JSON or SARIF on stdout) on stderr."""
    if decided(fmt) == "text" and not quiet:
        console.out(f"plancc build: {refusal}\n")
    else:
        console.err(f"plancc build: {refusal}")

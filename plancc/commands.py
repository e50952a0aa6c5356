"""The bodies of `validate` and `build`, free of typer: ``plancc.cli`` declares their
options for typer, and ``plancc.launch`` runs them without it (cold start).

Each returns its exit code; usage and I/O problems raise ``api.UsageError``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from enum import StrEnum
from typing import TYPE_CHECKING

from plancc import console

if TYPE_CHECKING:
    from plancc.api import Validation
    from plancc.formats import Options, OutputFormat
    from plancc.inputs import Skipped


# The --format choices: the names of plancc.formats.FORMATS (listed here, not imported,
# so that the command line loads no output format it does not use) and `auto`.
class Format(StrEnum):
    auto = "auto"
    text = "text"
    json = "json"
    github = "github"
    sarif = "sarif"


def validate(
    paths: Sequence[str],
    *,
    fmt: Format = Format.auto,
    strict: bool = False,
    quiet: bool = False,
    show_allowed: bool = False,
    stdin_filename: str | None = None,
) -> int:
    from plancc.api import validate_paths  # noqa: PLC0415 (cold start)

    report = validate_paths(paths, stdin_filename)
    say_skipped(report.skipped)
    _emit(report, fmt, quiet=quiet, show_allowed=show_allowed)
    return 1 if report.failed(strict) else 0


def build(
    paths: Sequence[str],
    *,
    out: str,
    compare: bool = False,
    fmt: Format = Format.auto,
    strict: bool = False,
    quiet: bool = False,
    show_allowed: bool = False,
    stdin_filename: str | None = None,
) -> int:
    from plancc.api import build as build_plans  # noqa: PLC0415 (cold start)

    result = build_plans(paths, out, compare=compare, strict=strict, stdin_filename=stdin_filename)
    say_skipped(result.report.skipped)
    if result.failed:
        _emit(result.report, fmt, quiet=quiet, show_allowed=show_allowed)
        _say_refused(result.refusal, fmt, quiet=quiet)
    else:
        output, options = _output(fmt, quiet=quiet, show_allowed=show_allowed)
        console.out(output.build(result, options))
    return result.exit_code


def _colour() -> bool:
    """Colour on a terminal, unless NO_COLOR is set to a non-empty value (no-color.org)."""
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def _decided(fmt: Format) -> Format:
    """``auto``: GitHub annotations in GitHub Actions, text elsewhere."""
    if fmt is not Format.auto:
        return fmt
    return Format.github if os.environ.get("GITHUB_ACTIONS") == "true" else Format.text


def _output(fmt: Format, *, quiet: bool, show_allowed: bool) -> tuple[OutputFormat, Options]:
    """The output format (``auto`` decided) and its options."""
    from plancc.formats import FORMATS, Options  # noqa: PLC0415 (cold start)

    options = Options(colour=_colour(), quiet=quiet, show_allowed=show_allowed)
    return FORMATS[_decided(fmt).value], options


def _emit(report: Validation, fmt: Format, *, quiet: bool, show_allowed: bool) -> None:
    output, options = _output(fmt, quiet=quiet, show_allowed=show_allowed)
    console.out(output.validate(report, options))


def say_skipped(skipped: Sequence[Skipped]) -> None:
    """Directory entries that could not be read, on stderr: the report is about the rest."""
    for s in skipped:
        console.err(f"plancc: skipped {s.label}: {s.reason}")


def _say_refused(refusal: str, fmt: Format, *, quiet: bool) -> None:
    """A failed build says it wrote nothing and why: last in the text report, else (so as
    not to spoil JSON or SARIF on stdout) on stderr."""
    if _decided(fmt) is Format.text and not quiet:
        console.out(f"plancc build: {refusal}\n")
    else:
        console.err(f"plancc build: {refusal}")

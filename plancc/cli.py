"""The command line: parses arguments, calls ``plancc.api``, prints, sets the exit code.

Exit codes: 0 clean or warnings only; 1 errors (or warnings under --strict);
2 usage or I/O errors. No input produces a traceback: an unexpected
exception prints one line (``--debug`` shows the traceback).
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import Annotated, NoReturn

import typer

from plancc import __version__

app = typer.Typer(
    name="plancc",
    help="Compile declarative L2 warm plans into PyPTO prefetch code.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    add_completion=True,
)


class Format(StrEnum):
    auto = "auto"
    text = "text"
    json = "json"
    github = "github"
    sarif = "sarif"


_state = {"debug": False}


def _version(value: bool) -> None:
    if value:
        typer.echo(f"plancc {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
    debug: Annotated[
        bool, typer.Option("--debug", help="Show tracebacks of internal errors.")
    ] = False,
) -> None:
    _state["debug"] = debug


def _fail(message: str) -> NoReturn:
    typer.echo(f"plancc: {message}", err=True)
    raise typer.Exit(2)


def _stdout_to_devnull() -> None:
    """Point stdout at /dev/null, so that flushing it at exit cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # not a real file (in-process tests): nothing to flush
        pass


def _guarded(fn: Callable[[], int]) -> None:
    """Run a command body: usage errors exit 2 in one line, internal errors too."""
    from plancc.api import UsageError

    try:
        code = fn()
    except UsageError as exc:
        _fail(str(exc))
    except (typer.Exit, KeyboardInterrupt):
        raise
    except BrokenPipeError:
        # The reader went away (`plancc rules | head -1`): nothing left to say to anyone.
        _stdout_to_devnull()
        raise typer.Exit(2) from None
    except Exception as exc:
        if _state["debug"]:
            traceback.print_exc()
        _fail(f"internal error: {type(exc).__name__}: {exc}")
    raise typer.Exit(code)


def _emit(report: object, fmt: Format, *, quiet: bool, show_allowed: bool) -> None:
    from plancc import report as rp
    from plancc.api import Report

    assert isinstance(report, Report)
    if fmt is Format.auto:
        fmt = Format.github if os.environ.get("GITHUB_ACTIONS") == "true" else Format.text
    if fmt is Format.json:
        out = rp.json_(report, show_allowed=show_allowed)
    elif fmt is Format.github:
        out = rp.github(report)
    elif fmt is Format.sarif:
        out = rp.sarif(report)
    else:
        colour = sys.stdout.isatty() and "NO_COLOR" not in os.environ
        out = rp.text(report, colour=colour, quiet=quiet, show_allowed=show_allowed)
    sys.stdout.write(out)


Paths = Annotated[list[str], typer.Argument(help="Plan files, or directories of *.yaml plans.")]
FormatOpt = Annotated[Format, typer.Option("--format", "-f", help="Output format.")]
StrictOpt = Annotated[bool, typer.Option("--strict", help="Warnings fail too (exit 1).")]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="Diagnostics only, no summary.")]
ShowAllowedOpt = Annotated[
    bool, typer.Option("--show-allowed", help="Also list silenced warnings with their reasons.")
]


@app.command()
def validate(
    paths: Paths,
    fmt: FormatOpt = Format.auto,
    strict: StrictOpt = False,
    quiet: QuietOpt = False,
    show_allowed: ShowAllowedOpt = False,
) -> None:
    """Check plans: schema, names, L2 budget and placement rules."""

    def body() -> int:
        from plancc.api import validate_paths

        report = validate_paths(paths)
        _emit(report, fmt, quiet=quiet, show_allowed=show_allowed)
        return 1 if report.failed(strict) else 0

    _guarded(body)


OutOpt = Annotated[
    str,
    typer.Option(
        "--out", "-o", metavar="DIR", help="Output directory (must exist).", show_default=False
    ),
]
CheckOpt = Annotated[
    bool,
    typer.Option("--check", help="Write nothing; exit 1 when an output is missing or out of date."),
]


@app.command()
def build(
    paths: Paths,
    *,
    out: OutOpt,
    check: CheckOpt = False,
    fmt: FormatOpt = Format.auto,
    strict: StrictOpt = False,
    quiet: QuietOpt = False,
    show_allowed: ShowAllowedOpt = False,
) -> None:
    """Validate plans, then write DIR/<model>_warms.py and its manifest for each."""

    def body() -> int:
        from plancc.api import build as build_plans

        result = build_plans(paths, out, check=check, strict=strict)
        if result.failed:
            _emit(result.report, fmt, quiet=quiet, show_allowed=show_allowed)
        else:
            _emit_build(result, fmt, quiet=quiet, show_allowed=show_allowed)
        return result.exit_code

    _guarded(body)


def _emit_build(result: object, fmt: Format, *, quiet: bool, show_allowed: bool) -> None:
    """A build that passed validation: its warnings, then one line per plan."""
    from plancc import report as rp
    from plancc.api import BuildReport

    assert isinstance(result, BuildReport)
    if fmt is Format.auto:
        fmt = Format.github if os.environ.get("GITHUB_ACTIONS") == "true" else Format.text
    colour = sys.stdout.isatty() and "NO_COLOR" not in os.environ
    sys.stdout.write(
        rp.build(result, fmt.value, colour=colour, quiet=quiet, show_allowed=show_allowed)
    )


@app.command()
def schema(
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Write the schema to this file.")
    ] = None,
) -> None:
    """Print the JSON Schema of the plan format (or write it with --out)."""

    def body() -> int:
        from plancc.validate import plan_schema_text

        text = plan_schema_text()
        if out is None:
            sys.stdout.write(text)
            return 0
        from plancc.api import UsageError

        try:
            out.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"{out}: cannot write: {exc.strerror or exc}") from None
        return 0

    _guarded(body)


@app.command()
def explain(code: Annotated[str, typer.Argument(help="A rule id, e.g. PC030.")]) -> None:
    """Print the documentation of one diagnostic code."""

    def body() -> int:
        from plancc.api import UsageError
        from plancc.codes import lookup
        from plancc.names import suggest

        found = lookup(code.upper())
        if found is None:
            from plancc.codes import all_codes

            hint = suggest(code.upper(), [c.id for c in all_codes()])
            raise UsageError(f"unknown code '{code}'" + (f"; {hint}" if hint else ""))
        typer.echo(f"{found.id} {found.name} ({found.severity.value})\n\n{found.doc}")
        return 0

    _guarded(body)


@app.command()
def rules() -> None:
    """List every diagnostic code with its name and severity."""

    def body() -> int:
        from plancc.codes import all_codes

        for c in all_codes():
            typer.echo(f"{c.id}  {c.severity.value:<7}  {c.name}")
        return 0

    _guarded(body)


def main() -> None:
    app()

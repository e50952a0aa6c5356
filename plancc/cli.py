"""The command line: parses arguments, calls ``plancc.api``, prints, sets the exit code.

Exit codes: 0 clean or warnings only; 1 errors (or warnings under --strict);
2 usage or I/O errors, in one line on stderr. No input produces a traceback: an
unexpected exception prints one line (``--debug`` shows the traceback).
"""

from __future__ import annotations

import codecs
import contextlib
import importlib
import io
import os
import sys
import traceback
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from types import ModuleType
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


class _OutputError(Exception):
    """Standard output cannot take what plancc prints (a full disk, a closed stream)."""


def _out(text: str) -> None:
    """Print to stdout, flushed now, so a write error is reported here, in one line,
    not at interpreter exit."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise _OutputError(exc.strerror or str(exc)) from None


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
    except _OutputError as exc:
        _stdout_to_devnull()
        _fail(f"cannot write output: {exc}")
    except Exception as exc:
        if _state["debug"]:
            traceback.print_exc()
        _fail(f"internal error: {type(exc).__name__}: {exc}")
    raise typer.Exit(code)


def _colour() -> bool:
    """Colour on a terminal, unless NO_COLOR is set to a non-empty value (no-color.org)."""
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def _emit(report: object, fmt: Format, *, quiet: bool, show_allowed: bool) -> None:
    from plancc import report as rp
    from plancc.api import Report

    assert isinstance(report, Report)
    if fmt is Format.auto:
        fmt = Format.github if os.environ.get("GITHUB_ACTIONS") == "true" else Format.text
    if fmt is Format.json:
        out = rp.json_(report, show_allowed=show_allowed)
    elif fmt is Format.github:
        out = rp.github(report, show_allowed=show_allowed)
    elif fmt is Format.sarif:
        out = rp.sarif(report, show_allowed=show_allowed)
    else:
        out = rp.text(report, colour=_colour(), quiet=quiet, show_allowed=show_allowed)
    _out(out)


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
    _out(rp.build(result, fmt.value, colour=_colour(), quiet=quiet, show_allowed=show_allowed))


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
            _out(text)
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
        from plancc.diagnostics import clip
        from plancc.names import suggest

        found = lookup(code.upper())
        if found is None:
            from plancc.codes import all_codes

            hint = suggest(code.upper(), [c.id for c in all_codes()])
            shown = clip(code)
            raise UsageError(f"unknown code '{shown}'" + (f"; {hint}" if hint else ""))
        _out(f"{found.id} {found.name} ({found.severity.value})\n\n{found.doc}\n")
        return 0

    _guarded(body)


@app.command()
def rules() -> None:
    """List every diagnostic code with its name and severity."""

    def body() -> int:
        from plancc.codes import all_codes

        _out("".join(f"{c.id}  {c.severity.value:<7}  {c.name}\n" for c in all_codes()))
        return 0

    _guarded(body)


@app.command()
def lsp(
    stdio: Annotated[
        bool, typer.Option("--stdio", help="Speak over stdin/stdout (the only transport).")
    ] = True,
) -> None:
    """Run the language server for editors (LSP over stdio; docs/editors.md)."""

    def body() -> int:
        from plancc.lsp.server import serve  # pygls is imported only for this command

        serve()
        return 0

    _guarded(body)


def _escape_unencodable(exc: UnicodeError) -> tuple[str, int]:
    """A codec error handler: what the stream cannot encode is written ``\\uXXXX``, an
    escape that keeps JSON and SARIF valid JSON (non-ASCII only occurs in their strings)."""
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    out = []
    for char in exc.object[exc.start : exc.end]:
        code = ord(char)
        if code > 0xFFFF:  # a surrogate pair, as JSON spells characters beyond the BMP
            code -= 0x10000
            out.append(f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}")
        else:
            out.append(f"\\u{code:04x}")
    return "".join(out), exc.end


def _tolerant_streams() -> None:
    """Never fail on a character the output's encoding lacks (``PYTHONIOENCODING=ascii``,
    a surrogate-escaped file name): print it escaped instead."""
    codecs.register_error("plancc.escape", _escape_unencodable)
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            with contextlib.suppress(OSError, ValueError):  # closed, or not reconfigurable
                stream.reconfigure(errors="plancc.escape")


def _click_exceptions() -> ModuleType:
    """click's exceptions: typer >= 0.20 vendors click as ``typer._click``."""
    try:
        return importlib.import_module("typer._click.exceptions")
    except ImportError:
        return importlib.import_module("click.exceptions")


def _usage_message(exc: Exception) -> str:
    """A click usage error in one line: ``no such option: --bogus (try 'plancc validate
    --help')``."""
    ce = _click_exceptions()
    no_args = getattr(ce, "NoArgsIsHelpError", ())
    if isinstance(exc, no_args):  # a bare `plancc`: its message is the whole help
        message = "missing command"
    else:
        message = exc.format_message() if isinstance(exc, ce.ClickException) else str(exc)
        message = " ".join(line.strip() for line in message.splitlines() if line.strip())
        message = message.rstrip(".")
        if message[:1].isupper() and message[1:2].islower():  # "No such …", not "PC…"
            message = message[0].lower() + message[1:]
    ctx = getattr(exc, "ctx", None)
    if isinstance(exc, ce.UsageError) and ctx is not None:
        message += f" (try '{ctx.command_path} --help')"
    return message or "usage error"


def main() -> None:
    """The console script. Exit 0/1/2 as documented; a usage error is one line on
    stderr (not click's usage block) and nothing on stdout."""
    if sys.stdout is None:  # started with stdout closed (`plancc … >&-`)
        if sys.stderr is not None:
            sys.stderr.write("plancc: cannot write output: standard output is closed\n")
        sys.exit(2)
    _tolerant_streams()
    ce = _click_exceptions()
    try:
        code = app(prog_name="plancc", standalone_mode=False)  # an exit code, also for --help
        sys.stdout.flush()
    except BrokenPipeError:  # --help or --version into a closed pipe
        _stdout_to_devnull()
        sys.exit(2)
    except OSError as exc:  # --help or --version into a full disk
        _stdout_to_devnull()
        typer.echo(f"plancc: cannot write output: {exc.strerror or exc}", err=True)
        sys.exit(2)
    except ce.ClickException as exc:
        typer.echo(f"plancc: {_usage_message(exc)}", err=True)
        sys.exit(exc.exit_code)
    except typer.Abort:
        typer.echo("plancc: aborted", err=True)
        sys.exit(1)
    sys.exit(code if isinstance(code, int) else 0)

"""The commands: each parses its arguments, calls ``plancc.api``, prints, returns an exit code.

A command is a function returning its exit code, registered with ``@command``,
which runs it under ``plancc.console.guarded`` (one-line errors, exit 2). The
pipeline is imported inside each command, so that ``plancc --version`` and
``plancc rules`` start fast. The bodies of `validate` and `build` are in
``plancc.commands``, which ``plancc.launch`` also runs without typer.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import Annotated, NoReturn, ParamSpec

import typer

from plancc import __version__, commands, console
from plancc.commands import Format

app = typer.Typer(
    name="plancc",
    help="Compile declarative L2 warm plans into PyPTO prefetch code.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    add_completion=True,
)

P = ParamSpec("P")


def command(fn: Callable[P, int]) -> Callable[P, None]:
    """Register ``fn`` as a command; its return value is the exit code."""

    @functools.wraps(fn)
    def run(*args: P.args, **kwargs: P.kwargs) -> None:
        raise typer.Exit(console.guarded(lambda: fn(*args, **kwargs)))

    app.command()(run)
    return run


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
    console.state["debug"] = debug


Paths = Annotated[
    list[str],
    typer.Argument(help="Plan files, directories of *.yaml/*.yml plans, or - for standard input."),
]
StdinNameOpt = Annotated[
    str | None,
    typer.Option(
        "--stdin-filename",
        metavar="PATH",
        help="The name of the plan read from - (for messages, its config and the outputs).",
    ),
]
FormatOpt = Annotated[Format, typer.Option("--format", "-f", help="Output format.")]
StrictOpt = Annotated[bool, typer.Option("--strict", help="Warnings fail too (exit 1).")]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="Diagnostics only, no summary.")]
ShowAllowedOpt = Annotated[
    bool, typer.Option("--show-allowed", help="Also list silenced warnings with their reasons.")
]


@command
def validate(
    paths: Paths,
    *,
    fmt: FormatOpt = Format.auto,
    strict: StrictOpt = False,
    quiet: QuietOpt = False,
    show_allowed: ShowAllowedOpt = False,
    stdin_filename: StdinNameOpt = None,
) -> int:
    """Validate plans: schema, names, L2 budget and placement rules."""
    return commands.validate(
        paths,
        fmt=fmt,
        strict=strict,
        quiet=quiet,
        show_allowed=show_allowed,
        stdin_filename=stdin_filename,
    )


OutOpt = Annotated[
    str,
    typer.Option(
        "--out",
        "-o",
        metavar="DIR",
        help="Output directory (created when missing).",
        show_default=False,
    ),
]
CompareOpt = Annotated[
    bool,
    typer.Option(
        "--check",
        help="Write nothing; exit 1 when an output is missing, out of date or orphaned.",
    ),
]


@command
def build(
    paths: Paths,
    *,
    out: OutOpt,
    compare: CompareOpt = False,
    fmt: FormatOpt = Format.auto,
    strict: StrictOpt = False,
    quiet: QuietOpt = False,
    show_allowed: ShowAllowedOpt = False,
    stdin_filename: StdinNameOpt = None,
) -> int:
    """Validate plans, then write DIR/<model>_warms.py and its manifest for each."""
    return commands.build(
        paths,
        out=out,
        compare=compare,
        fmt=fmt,
        strict=strict,
        quiet=quiet,
        show_allowed=show_allowed,
        stdin_filename=stdin_filename,
    )


@command
def fmt(
    paths: Paths,
    *,
    check: Annotated[
        bool, typer.Option("--check", help="Write nothing; exit 1 when a plan would change.")
    ] = False,
    diff: Annotated[
        bool, typer.Option("--diff", help="Write nothing; print the change as a unified diff.")
    ] = False,
    stdin_filename: StdinNameOpt = None,
) -> int:
    """Rewrite plans in the canonical layout, every comment kept."""
    from plancc import fmt as formatter  # noqa: PLC0415 (cold start)
    from plancc import inputs, write  # noqa: PLC0415 (cold start)
    from plancc.api import UsageError  # noqa: PLC0415 (cold start)

    try:
        done = formatter.run(paths, check=check, diff=diff, stdin_filename=stdin_filename)
    except (inputs.InputError, write.WriteError) as exc:
        raise UsageError(str(exc)) from None
    commands.say_skipped(done.skipped)
    console.out(done.stdout)
    return done.exit_code


@command
def report(
    plan: Annotated[str, typer.Argument(help="A plan file.")],
    out: Annotated[
        str | None,
        typer.Option(
            "--out", "-o", metavar="FILE.html", help="Default: build/<model>_report.html."
        ),
    ] = None,
    measure: Annotated[
        str | None,
        typer.Option("--measure", metavar="RESULT.json", help="A `plancc measure` result."),
    ] = None,
) -> int:
    """Write one self-contained HTML page that draws the plan; exit 1 if it has errors."""
    from plancc.report_html import report as write_report  # noqa: PLC0415 (cold start)

    done = write_report(plan, out, measure)
    console.out(done.line)
    return done.exit_code


@command
def schema(
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Write the schema to this file.")
    ] = None,
) -> int:
    """Print the JSON Schema of the plan format (or write it with --out)."""
    from plancc.api import UsageError  # noqa: PLC0415 (cold start)
    from plancc.validate import plan_schema_text  # noqa: PLC0415 (cold start)

    text = plan_schema_text()
    if out is None:
        console.out(text)
        return 0
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"{out}: cannot write: {exc.strerror or exc}") from None
    return 0


@command
def explain(code: Annotated[str, typer.Argument(help="A rule id, e.g. PC030.")]) -> int:
    """Print the documentation of one diagnostic code."""
    from plancc.api import UsageError  # noqa: PLC0415 (cold start)
    from plancc.check import catalog, lookup  # noqa: PLC0415 (cold start)
    from plancc.names import suggest  # noqa: PLC0415 (cold start)
    from plancc.text import clip  # noqa: PLC0415 (cold start)

    found = lookup(code.upper())
    if found is None:
        hint = suggest(code.upper(), [c.id for c in catalog()])
        shown = clip(code)
        raise UsageError(f"unknown code '{shown}'" + (f"; {hint}" if hint else ""))
    console.out(f"{found.id} {found.name} ({found.severity.value})\n\n{found.doc}\n")
    return 0


@command
def rules() -> int:
    """List every diagnostic code with its name and severity."""
    from plancc.check import catalog  # noqa: PLC0415 (cold start)

    console.out("".join(f"{c.id}  {c.severity.value:<7}  {c.name}\n" for c in catalog()))
    return 0


class MeasureFormat(StrEnum):
    text = "text"
    json = "json"
    markdown = "markdown"


@command
def measure(
    *,
    manifest: Annotated[str, typer.Option("--manifest", help="The build's manifest.json.")],
    baseline: Annotated[str, typer.Option("--baseline", help="Benchmark log without the warm.")],
    warm: Annotated[str, typer.Option("--warm", help="Benchmark log with the warm.")],
    trace: Annotated[
        list[str] | None,
        typer.Option("--trace", help="A swimlane trace, or a directory of them (dfx_outputs/)."),
    ] = None,
    slots: Annotated[
        list[str] | None,
        typer.Option("--slots", help="[STRACE] stderr: FILE, baseline=FILE or warm=FILE."),
    ] = None,
    window: Annotated[
        list[str] | None, typer.Option("--window", help="Name a stage window: NAME=A:B (slots).")
    ] = None,
    standalone: Annotated[
        list[str] | None,
        typer.Option("--standalone", help="A window's standalone bound: NAME=µs (csa=347.0)."),
    ] = None,
    fmt: Annotated[
        MeasureFormat, typer.Option("--format", "-f", help="Output format.")
    ] = MeasureFormat.text,
    out: Annotated[
        str | None, typer.Option("--out", "-o", help="Write the report to this file.")
    ] = None,
) -> int:
    """Measure a warm from PyPTO's outputs: wall time, verdict, scopes, stage windows.

    Exit 0 ship, 1 no-ship or inconclusive, 2 unreadable input."""
    from plancc.api import UsageError  # noqa: PLC0415 (cold start)
    from plancc.measure.command import Options, run  # noqa: PLC0415 (cold start)
    from plancc.measure.errors import InputError  # noqa: PLC0415 (cold start)

    opts = Options(
        manifest, baseline, warm, trace or [], slots or [], standalone or [], window or []
    )
    try:
        text, code = run(opts, fmt.value, out)
    except InputError as exc:
        raise UsageError(str(exc)) from None
    console.out(text)
    return code


@command
def lsp(
    stdio: Annotated[
        bool, typer.Option("--stdio", help="Speak over stdin/stdout (the only transport).")
    ] = True,
) -> int:
    """Run the language server for editors (LSP over stdio; docs/editors.md)."""
    from plancc.lsp.server import serve  # noqa: PLC0415 (cold start: pygls only here)

    serve()
    return 0


def main() -> NoReturn:
    """The command line through typer (``plancc.launch.main`` is the console script)."""
    console.main(app)

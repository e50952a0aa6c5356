"""The command line, free of typer: each command is a function whose signature declares
its options and whose body calls ``plancc.api`` (or its own module), prints, and returns
its exit code; beside them, the options several commands share and how a command prints
its report.

A command is registered with ``@command``. Each parameter is ``Annotated`` with an
``Option`` (its spellings) or an ``Argument``, its help and metavar: that
signature is the one declaration of the command's options. ``plancc.cli`` builds
typer's commands from it (help, completion, usage errors) and ``plancc.cli.launch``
reads the plain forms of every command's arguments from it without typer, for
cold start. Bodies import what they use inside the function, so that ``plancc
rules`` loads no pipeline; usage and I/O problems raise ``api.UsageError``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated

from plancc import __version__
from plancc.cli import console
from plancc.cli.options import Argument, Option, command
from plancc.usage import UsageError

if TYPE_CHECKING:
    from plancc.api import Validation
    from plancc.formats import Options, OutputFormat
    from plancc.load.inputs import Skipped

# -- how a command prints its report: the `--format` choices, colour, the output format
# chosen, and the lines said beside the report (skipped inputs, a refused build)


# The --format choices: the names of plancc.formats.FORMATS (listed here, not imported,
# so that the command line loads no output format it does not use) and `auto`.
class Format(StrEnum):
    auto = "auto"
    text = "text"
    json = "json"
    github = "github"
    sarif = "sarif"


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
    chosen, options = _output(fmt, quiet=quiet, show_allowed=show_allowed)
    console.out(chosen.validate(report, options))


def _say_skipped(skipped: Sequence[Skipped]) -> None:
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


# -- the options several commands share, each declared once: a command's own options
# stay on its signature


Paths = Annotated[
    list[str],
    Argument("PATH", "Plan files, directories of *.yaml/*.yml plans, or - for standard input."),
]
StdinName = Annotated[
    str | None,
    Option(
        "--stdin-filename",
        metavar="PATH",
        help="The name of the plan read from - (for messages, its config and the outputs).",
    ),
]
FormatOpt = Annotated[Format, Option("--format", "-f", help="Output format.")]
Strict = Annotated[bool, Option("--strict", help="Warnings fail too (exit 1).")]
Quiet = Annotated[bool, Option("--quiet", "-q", help="Diagnostics only, no summary.")]
ShowAllowed = Annotated[
    bool, Option("--show-allowed", help="Also list silenced warnings with their reasons.")
]
FixOpt = Annotated[bool, Option("--fix", help="Apply the safe fixes in place, then report.")]
UnsafeFixes = Annotated[bool, Option("--unsafe-fixes", help="--fix, --diff: the unsafe too.")]
DiffOpt = Annotated[bool, Option("--diff", help="Write nothing; print the fixes as a diff.")]
SourceRoot = Annotated[
    str | None,
    Option(
        "--source-root",
        metavar="DIR",
        help="Where the layer kinds' `source` paths start (overrides the plan's source_root).",
    ),
]
NoSource = Annotated[bool, Option("--no-source", help="Skip the source checks (one notice).")]


def _sources(source_root: str | None, no_source: bool) -> str | None:
    """The source root the API takes: `--no-source`, `--source-root` (a directory, else a
    usage error), or None (each plan's own)."""
    from plancc.source.root import source_setting  # noqa: PLC0415 (cold start)

    return source_setting(source_root, no_source)


Sets = Annotated[
    Sequence[str],
    Option(
        "--set",
        metavar="NAME=VALUE",
        help="Fix a param's value (repeatable); without it each is checked over its range.",
    ),
]

Trace = Annotated[
    str | None,
    Option(
        "--trace",
        metavar="SWIMLANE",
        help="Time the schedule with a swimlane's durations (a file, or a directory of them).",
    ),
]


# -- the commands


def _version() -> int:
    console.out(f"plancc {__version__}\n")
    return 0


def root(
    *,
    version: Annotated[
        bool, Option("--version", help="Print the version.", action=_version)
    ] = False,
    debug: Annotated[bool, Option("--debug", help="Show tracebacks of internal errors.")] = False,
) -> int:
    """Compile declarative L2 warm plans into PyPTO prefetch code."""
    console.state["debug"] = debug
    return 0


@command()
def validate(
    paths: Paths,
    *,
    fmt: FormatOpt = Format.auto,
    strict: Strict = False,
    quiet: Quiet = False,
    show_allowed: ShowAllowed = False,
    stdin_filename: StdinName = None,
    source_root: SourceRoot = None,
    sets: Sets = (),
    fix: FixOpt = False,
    unsafe_fixes: UnsafeFixes = False,
    diff: DiffOpt = False,
    trace: Trace = None,
    no_source: NoSource = False,
) -> int:
    """Validate plans: schema, names, L2 budget, placement rules and their model sources."""
    from plancc.api import parse_sets, validate_paths  # noqa: PLC0415 (cold start)

    source_root = _sources(source_root, no_source)

    if fix or diff:
        from plancc.edits.apply import fix_paths  # noqa: PLC0415 (cold start)

        if trace is not None:  # a fix is made from the plan as written
            raise UsageError("--trace: not with --fix or --diff")
        overrides = parse_sets(sets)
        run = fix_paths(
            paths,
            unsafe=unsafe_fixes,
            dry=diff,
            stdin=stdin_filename,
            root=source_root,
            overrides=overrides,
        )
        _say_skipped(run.report.skipped)
        if diff:  # the diff alone on stdout (a patch); what it could not fix on stderr
            console.out(run.diff())
            for line in run.unfixed():
                console.err(line)
            return 1 if run.changed or run.report.failed(strict) else 0
        said = run.said()  # what was fixed, before what remains
        console.out(said) if _decided(fmt) is Format.text else console.err(said.rstrip("\n"))
        for why in run.unwritten:  # an I/O error: the others are written, the run exits 2
            console.err(f"plancc: {why}")
        _emit(run.report, fmt, quiet=quiet, show_allowed=show_allowed)
        return 2 if run.unwritten else 1 if run.report.failed(strict) else 0
    if unsafe_fixes:
        raise UsageError("--unsafe-fixes: only with --fix or --diff")
    report = validate_paths(paths, stdin_filename, source_root, parse_sets(sets), trace)
    _say_skipped(report.skipped)
    _emit(report, fmt, quiet=quiet, show_allowed=show_allowed)
    return 1 if report.failed(strict) else 0


@command()
def build(
    paths: Paths,
    *,
    out: Annotated[
        str, Option("--out", "-o", metavar="DIR", help="Output directory (created when missing).")
    ],
    compare: Annotated[
        bool,
        Option(
            "--check",
            help="Write nothing; exit 1 when an output is missing, out of date or orphaned.",
        ),
    ] = False,
    fmt: FormatOpt = Format.auto,
    strict: Strict = False,
    quiet: Quiet = False,
    show_allowed: ShowAllowed = False,
    stdin_filename: StdinName = None,
    source_root: SourceRoot = None,
    sets: Sets = (),
    no_source: NoSource = False,
) -> int:
    """Validate plans, then write DIR/<model>_warms.py and its manifest for each."""
    from plancc.api import build as build_plans  # noqa: PLC0415 (cold start)
    from plancc.api import parse_sets  # noqa: PLC0415 (cold start)

    source_root = _sources(source_root, no_source)

    result = build_plans(
        paths,
        out,
        compare=compare,
        strict=strict,
        stdin_filename=stdin_filename,
        source_root=source_root,
        overrides=parse_sets(sets),
    )
    _say_skipped(result.report.skipped)
    if result.failed:
        _emit(result.report, fmt, quiet=quiet, show_allowed=show_allowed)
        _say_refused(result.refusal, fmt, quiet=quiet)
    else:
        output, options = _output(fmt, quiet=quiet, show_allowed=show_allowed)
        console.out(output.build(result, options))
    return result.exit_code


@command()
def fmt(
    paths: Paths,
    *,
    check: Annotated[
        bool, Option("--check", help="Write nothing; exit 1 when a plan would change.")
    ] = False,
    diff: Annotated[
        bool, Option("--diff", help="Write nothing; print the change as a unified diff.")
    ] = False,
    stdin_filename: StdinName = None,
) -> int:
    """Rewrite plans in the canonical layout, every comment kept."""
    from plancc import fmt as formatter  # noqa: PLC0415 (cold start)
    from plancc.load import inputs  # noqa: PLC0415 (cold start)

    try:
        done = formatter.run(paths, check=check, diff=diff, stdin_filename=stdin_filename)
    except inputs.InputError as exc:
        raise UsageError(str(exc)) from None
    _say_skipped(done.skipped)
    console.out(done.stdout)
    for why in done.unwritten:  # an I/O error: the others are written, the run exits 2
        console.err(f"plancc: {why}")
    return done.exit_code


@command()
def report(
    plan: Annotated[str, Argument("PLAN", "A plan file.")],
    *,
    out: Annotated[
        str | None,
        Option("--out", "-o", metavar="FILE", help="Default: build/<model>_report.html."),
    ] = None,
    measure: Annotated[
        str | None, Option("--measure", metavar="FILE", help="A `plancc measure` JSON result.")
    ] = None,
    sets: Sets = (),
    source_root: SourceRoot = None,
    no_source: NoSource = False,
) -> int:
    """Write one self-contained HTML page that draws the plan; exit 1 if it has errors."""
    from plancc.api import parse_sets  # noqa: PLC0415 (cold start)
    from plancc.report_html import report as write_report  # noqa: PLC0415 (cold start)

    source_root = _sources(source_root, no_source)

    done = write_report(plan, out, measure, parse_sets(sets), source_root)
    console.out(done.line)
    return done.exit_code


@command()
def schema(
    *,
    out: Annotated[
        str | None, Option("--out", "-o", metavar="FILE", help="Write the schema to this file.")
    ] = None,
) -> int:
    """Print the JSON Schema of the plan format (or write it with --out)."""
    from plancc.validate import plan_schema_text  # noqa: PLC0415 (cold start)

    text = plan_schema_text()
    if out is None:
        console.out(text)
        return 0
    from pathlib import Path  # noqa: PLC0415 (cold start)

    from plancc import write  # noqa: PLC0415 (cold start)

    try:
        write.replace(Path(out), text.encode("utf-8"))  # as every file plancc writes
    except write.WriteError as exc:
        raise UsageError(str(exc)) from None
    return 0


@command()
def explain(
    code: Annotated[str, Argument("CODE", "A code or a rule's name: PC030, l2-budget.")],
) -> int:
    """Print the documentation of one diagnostic code."""
    from plancc.check import catalog, lookup  # noqa: PLC0415 (cold start)
    from plancc.tables.names import suggest  # noqa: PLC0415 (cold start)
    from plancc.text import clip  # noqa: PLC0415 (cold start)

    codes = catalog()
    found = lookup(code) or next((c for c in codes if c.name == code.lower()), None)
    if found is None:
        hint: str | None
        if code[:2].upper() == "PC" and code[2:].isdigit():  # a code: those it starts...
            starting = [c.id for c in codes if c.id.startswith(code.upper())]
            same = f"PC{int(code[2:]):03d}"  # ... or the code of its number (PC0013)
            if starting:
                hint = f"codes that start with it: {', '.join(starting)}"
            else:
                hint = f"did you mean '{same}'?" if lookup(same) else None
        else:  # a name: the closest rule name
            hint = suggest(code.lower(), [c.name for c in codes])
        raise UsageError(f"unknown code '{clip(code)}'" + (f"; {hint}" if hint else ""))
    console.out(f"{found.id} {found.name} ({found.severity.value})\n\n{found.doc}\n")
    return 0


@command()
def rules() -> int:
    """List every diagnostic code with its name and severity."""
    from plancc.check import catalog  # noqa: PLC0415 (cold start)

    console.out("".join(f"{c.id}  {c.severity.value:<7}  {c.name}\n" for c in catalog()))
    return 0


class ReportFormat(StrEnum):  # measure's and suggest's
    text = "text"
    json = "json"
    markdown = "markdown"


@command()
def measure(
    *,
    manifest: Annotated[str, Option("--manifest", metavar="FILE", help="The build's manifest.")],
    baseline: Annotated[
        str | None, Option("--baseline", metavar="FILE", help="Benchmark log without the warm.")
    ] = None,
    warm: Annotated[
        str | None, Option("--warm", metavar="FILE", help="Benchmark log with the warm.")
    ] = None,
    trace: Annotated[
        Sequence[str],
        Option(
            "--trace",
            metavar="PATH",
            help="A swimlane trace, or a directory of them (dfx_outputs/).",
        ),
    ] = (),
    slots: Annotated[
        Sequence[str],
        Option(
            "--slots",
            metavar="[SIDE=]FILE",
            help="[STRACE] stderr: FILE, baseline=FILE or warm=FILE.",
        ),
    ] = (),
    window: Annotated[
        Sequence[str], Option("--window", metavar="NAME=A:B", help="Name a stage window (slots).")
    ] = (),
    standalone: Annotated[
        Sequence[str],
        Option(
            "--standalone", metavar="NAME=US", help="A window's standalone bound in µs (csa=347.0)."
        ),
    ] = (),
    fmt: Annotated[
        ReportFormat, Option("--format", "-f", help="Output format.")
    ] = ReportFormat.text,
    out: Annotated[
        str | None, Option("--out", "-o", metavar="FILE", help="Write the report to this file.")
    ] = None,
) -> int:
    """Measure a warm from PyPTO's outputs: wall time, verdict, scopes, stage windows.

    Exit 0 ship (or no verdict: a trace without benchmark logs), 1 no-ship or
    inconclusive, 2 unreadable input."""
    from plancc.measure.command import Options, run  # noqa: PLC0415 (cold start)
    from plancc.measure.errors import InputError  # noqa: PLC0415 (cold start)

    opts = Options(manifest, baseline, warm, [*trace], [*slots], [*standalone], [*window])
    try:
        text, code = run(opts, fmt.value, out)
    except InputError as exc:
        raise UsageError(str(exc)) from None
    console.out(text)
    return code


@command()
def suggest(
    plan: Annotated[str, Argument("PLAN", "A plan file.")],
    *,
    layer: Annotated[
        Sequence[str], Option("--layer", metavar="KIND", help="Only this layer kind (repeatable).")
    ] = (),
    candidate: Annotated[
        Sequence[str],
        Option(
            "--candidate",
            metavar="KIND:ANCHOR:T1,T2",
            help=(
                "Also evaluate this warm, as given (repeatable; ANCHOR+ANCHOR: a join; "
                "T[LO:HI]: a prefix; then :next, a cross-layer warm, or :PARAM<=N, a guard)."
            ),
        ),
    ] = (),
    trace: Trace = None,
    sets: Sets = (),
    top: Annotated[
        int | None,
        Option(
            "--top",
            metavar="N",
            help="Rows shown per layer kind (default: 10; JSON: every row).",
        ),
    ] = None,
    fmt: Annotated[
        ReportFormat, Option("--format", "-f", help="Output format.")
    ] = ReportFormat.text,
    fix: Annotated[bool, Option("--fix", help="Write the top gain as the kind's warm.")] = False,
    measured: Annotated[
        str | None,
        Option(
            "--measured",
            metavar="RESULT",
            help="A `plancc measure --format json` result: its verdict overrides the rules'.",
        ),
    ] = None,
    source_root: SourceRoot = None,
    no_source: NoSource = False,
) -> int:
    """Rank the warms each layer kind could have by the rules' findings (hypotheses to measure)."""
    from plancc.api import parse_sets  # noqa: PLC0415 (cold start)
    from plancc.suggest.output import Run  # noqa: PLC0415 (cold start)

    root = _sources(source_root, no_source)
    run = Run(plan, [*layer], [*candidate], trace, top, fmt, fix, parse_sets(sets), root, measured)
    return run(console.out, console.err)


@command()
def extract(
    sources: Annotated[
        list[str],
        Argument("PATH:FUNCTION", "A layer function of the model code; one layer kind each."),
    ],
    *,
    kind: Annotated[
        Sequence[str],
        Option("--kind", metavar="NAME", help="The layer kind of each source, in order."),
    ] = (),
    config: Annotated[
        str | None,
        Option("--config", metavar="FILE", help="The model's config.json: its keys become dims."),
    ] = None,
    define: Annotated[
        Sequence[str],
        Option("--define", metavar="NAME=VALUE", help="A run-time choice of the code."),
    ] = (),
) -> int:
    """Print the plan skeleton of model code: tensors, dims, stages, warms (docs/sources.md)."""
    from plancc.source.extract import run  # noqa: PLC0415 (cold start)

    done = run(sources, [*kind], config, [*define])  # UsageError: exit 2
    console.out(done.text)
    for line in done.stderr:
        console.err(line)
    return done.exit_code


@command(long_lived=True)
def lsp(
    *,
    stdio: Annotated[
        bool, Option("--stdio", help="Speak over stdin/stdout (the only transport).")
    ] = True,
) -> int:
    """Run the language server for editors (LSP over stdio; docs/editors.md)."""
    from plancc.lsp.server import serve  # noqa: PLC0415 (cold start: pygls only here)

    serve()
    return 0

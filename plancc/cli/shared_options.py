"""The options several commands share, each declared once (``plancc.cli.commands`` uses
them): a command's own options stay on its signature there."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

from plancc.cli.options import Argument, Option
from plancc.cli.reporting import Format

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


def sources(source_root: str | None, no_source: bool) -> str | None:
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

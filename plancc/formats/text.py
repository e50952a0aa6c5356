"""The text format: one line per diagnostic (colour on a terminal), then summary lines."""

from __future__ import annotations

from plancc.api import BuildResult, BuiltPlan, PlanResult, Validation
from plancc.codes import Severity
from plancc.diagnostics import Diagnostic, printable
from plancc.facts.metrics import plan_numbers
from plancc.formats.base import Options, OutputFormat, allowed_by, stale_message
from plancc.formats.summary import peak_share, summary_line, unused_notice
from plancc.text import plural

_COLOURS = {
    Severity.ERROR: "\033[1;31m",
    Severity.WARNING: "\033[1;33m",
    Severity.NOTICE: "\033[1;36m",
}
_BOLD, _DIM, _RESET = "\033[1m", "\033[2m", "\033[0m"


def text(
    report: Validation, *, colour: bool = False, quiet: bool = False, show_allowed: bool = False
) -> str:
    """Each plan's diagnostics ending with its summary line, then the totals."""
    lines = []
    for r in by_file(report):
        lines += plan_diagnostics(r, colour, show_allowed)
        if not quiet and r.facts is not None:
            lines.append(summary_line(r.facts))
    if not quiet:
        lines.append(totals(report))
    return "".join(line + "\n" for line in lines)


def plan_diagnostics(r: PlanResult, colour: bool, show_allowed: bool) -> list[str]:
    """One plan's diagnostics by position, then (with ``show_allowed``) its silenced ones."""
    lines = []
    for d in sorted(r.diagnostics, key=lambda d: d.sort_key):
        lines += _text_diagnostic(d, colour)
    if show_allowed:
        for a in sorted(r.allowed, key=lambda a: a.diagnostic.sort_key):
            d = a.diagnostic
            lines.append(
                f"{printable(d.file)}:{d.line}:{d.col}: allowed {d.severity.value} {d.code}: "
                f"{d.message}"
            )
            lines.append(f"    reason: {allowed_by(a)}")
    return lines


def totals(report: Validation) -> str:
    """``0 errors, 1 warning in 1 plan``; notices are named only when there are some."""
    notices = f", {plural(report.notices, 'notice')}" if report.notices else ""
    return (
        f"{plural(report.errors, 'error')}, {plural(report.warnings, 'warning')}{notices} "
        f"in {plural(len(report.results), 'plan')}"
    )


def _text_diagnostic(d: Diagnostic, colour: bool) -> list[str]:
    where = f"{printable(d.file)}:{d.line}:{d.col}:"
    sev = d.severity.value
    if colour:
        where, sev = f"{_BOLD}{where}{_RESET}", f"{_COLOURS[d.severity]}{sev}{_RESET}"
    out = [f"{where} {sev} {d.code}: {d.message}"]
    if d.hint:
        out.append(f"    {_DIM}{d.hint}{_RESET}" if colour else f"    {d.hint}")
    return out


def by_file(report: Validation) -> list[PlanResult]:
    return sorted(report.results, key=lambda r: r.file)


def build_text(result: BuildResult, o: Options, *, diagnostics: bool = True) -> str:
    """The output of a build that passed validation: each plan's warnings (unless
    ``diagnostics`` is False: another format gave them) and its line, then the totals."""
    report = result.report
    files = [f for p in result.plans for f in p.files]
    stale = result.out_of_date
    built = {p.result.file: p for p in result.plans}
    lines = []
    for r in by_file(report):  # as `validate`: each plan's diagnostics, then its line
        if diagnostics:
            lines += plan_diagnostics(r, o.colour, o.show_allowed)
        if not o.quiet and r.file in built:
            lines.append(_build_line(built[r.file]))
    if o.quiet:
        lines += [f"{f.path.as_posix()}: {f.status.value}" for f in stale]
        return "".join(line + "\n" for line in lines)
    count = len(files)
    lines += [stale_message(f) for f in result.orphans]  # no plan's line names them
    if result.compare:
        behind = len(stale) - len(result.orphans)
        tail = (
            f"{behind} of {count} outputs missing or out of date"
            if behind
            else f"all {count} outputs up to date"
        )
        if result.orphans:
            tail += f", {len(result.orphans)} orphaned"
    else:
        written = sum(f.status.value == "written" for f in files)
        tail = f"{written} written, {count - written} unchanged"
    lines.append(f"{totals(report)}; {tail}")
    return "".join(line + "\n" for line in lines)


def _build_line(built: BuiltPlan) -> str:
    facts = built.result.facts
    assert facts is not None  # a built plan was checked
    plan = facts.plan
    n = plan_numbers(facts)
    file = printable(built.result.file)
    line = f"{file}: {plural(n['warms'], 'warm')}, {n['warm_bytes']:,} B warmed"
    if n["l2"]["capacity_bytes"]:
        line += f", L2 peak {peak_share(plan, n['l2'])}× L2"
    line += unused_notice(plan)
    groups: dict[str, list[str]] = {}
    for f in built.files:
        groups.setdefault(f.status.value, []).append(f.path.as_posix())
    return line + " -> " + "; ".join(f"{s}: {', '.join(names)}" for s, names in groups.items())


def _validate(report: Validation, o: Options) -> str:
    return text(report, colour=o.colour, quiet=o.quiet, show_allowed=o.show_allowed)


FORMAT = OutputFormat("text", _validate, build_text)

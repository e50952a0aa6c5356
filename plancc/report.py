"""Report formats: text, json, github workflow annotations and SARIF 2.1.0."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from plancc import __version__
from plancc.api import BuildReport, BuiltPlan, PlanResult, Report
from plancc.codes import all_codes
from plancc.diagnostics import Diagnostic, Severity
from plancc.summary import peak_share, plan_numbers, plural, summary_line, unused_notice

if TYPE_CHECKING:
    from plancc.write import FileStatus

_COLOURS = {Severity.ERROR: "\033[1;31m", Severity.WARNING: "\033[1;33m"}
_BOLD, _DIM, _RESET = "\033[1m", "\033[2m", "\033[0m"


def text(
    report: Report, *, colour: bool = False, quiet: bool = False, show_allowed: bool = False
) -> str:
    """Each plan's diagnostics ending with its summary line, then the totals."""
    lines = []
    for r in _by_file(report):
        lines += _plan_diagnostics(r, colour, show_allowed)
        if not quiet and r.plan is not None:
            lines.append(summary_line(r.plan))
    if not quiet:
        lines.append(_totals(report))
    return "".join(line + "\n" for line in lines)


def _by_file(report: Report) -> list[PlanResult]:
    return sorted(report.results, key=lambda r: r.file)


def _plan_diagnostics(r: PlanResult, colour: bool, show_allowed: bool) -> list[str]:
    """One plan's diagnostics by position, then (with ``show_allowed``) its silenced ones."""
    lines = []
    for d in sorted(r.diagnostics, key=lambda d: d.sort_key):
        lines += _text_diagnostic(d, colour)
    if show_allowed:
        for a in sorted(r.allowed, key=lambda a: a.diagnostic.sort_key):
            d = a.diagnostic
            lines.append(
                f"{d.file}:{d.line}:{d.col}: allowed {d.severity.value} {d.code}: {d.message}"
            )
            lines.append(f"    reason: {a.reason}")
    return lines


def _totals(report: Report) -> str:
    return (
        f"{plural(report.errors, 'error')}, {plural(report.warnings, 'warning')} "
        f"in {plural(len(report.results), 'plan')}"
    )


def _text_diagnostic(d: Diagnostic, colour: bool) -> list[str]:
    where = f"{d.file}:{d.line}:{d.col}:"
    sev = d.severity.value
    if colour:
        where, sev = f"{_BOLD}{where}{_RESET}", f"{_COLOURS[d.severity]}{sev}{_RESET}"
    out = [f"{where} {sev} {d.code}: {d.message}"]
    if d.hint:
        out.append(f"    {_DIM}{d.hint}{_RESET}" if colour else f"    {d.hint}")
    return out


def _json_diagnostic(d: Diagnostic) -> dict[str, Any]:
    return {
        "file": d.file,
        "line": d.line,
        "col": d.col,
        "severity": d.severity.value,
        "code": d.code,
        "message": d.message,
    }


def json_(report: Report, *, show_allowed: bool = False) -> str:
    out: dict[str, Any] = {
        "diagnostics": [_json_diagnostic(d) for d in report.diagnostics],
        "errors": report.errors,
        "warnings": report.warnings,
        "plans": [plan_numbers(r.plan) for r in report.results if r.plan is not None],
    }
    if show_allowed:
        out["allowed"] = [
            {**_json_diagnostic(a.diagnostic), "reason": a.reason} for a in report.allowed
        ]
    return json.dumps(out, indent=2, ensure_ascii=False) + "\n"


def _escape_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(s: str) -> str:
    return _escape_data(s).replace(":", "%3A").replace(",", "%2C")


def github(report: Report, *, show_allowed: bool = False) -> str:
    """GitHub workflow commands: one ``::error``/``::warning`` annotation per diagnostic;
    with ``show_allowed``, a ``::notice`` per silenced warning, giving its reason."""
    lines = []
    for d in report.diagnostics:
        message = d.message + (f"\n{d.hint}" if d.hint else "")
        lines.append(f"::{d.severity.value} {_props(d, d.code)}::{_escape_data(message)}")
    for a in report.allowed if show_allowed else ():
        d = a.diagnostic
        message = f"{d.message}\nallowed: {a.reason}"
        lines.append(f"::notice {_props(d, f'{d.code} (allowed)')}::{_escape_data(message)}")
    return "".join(line + "\n" for line in lines)


def _props(d: Diagnostic, title: str) -> str:
    return (
        f"file={_escape_property(d.file)},line={d.line},col={d.col},title={_escape_property(title)}"
    )


def _uri(path: str) -> str:
    """A path as a URI reference: percent-encoded but for ``/``, so that a space, ``%``
    or ``:`` (which would start a scheme) reads back as the same path; a byte of a file
    name that is not UTF-8 is encoded as itself."""
    return quote(path, safe="/", errors="surrogateescape")


# What `plancc build --check` finds: not a PCnnn code (a diagnostic of no plan), so its
# id cannot collide with one.
_STALE_OUTPUT = "stale-output"
_STALE_DOC = (
    "A generated output is missing, or differs from what `plancc build` would write.\n\n"
    "Fix: run the same `plancc build` without `--check`, and commit the result."
)


def _stale(f: FileStatus) -> str:
    if f.status.value == "orphaned":
        return f"{f.path.as_posix()} is produced by no plan any more; delete it"
    return f"{f.path.as_posix()} is {f.status.value}; run plancc build to regenerate it"


def _rule(id: str, name: str, doc: str, level: str) -> dict[str, Any]:
    return {
        "id": id,
        "name": name,
        "shortDescription": {"text": doc.split("\n\n", maxsplit=1)[0].replace("\n", " ")},
        "fullDescription": {"text": doc},
        "help": {"text": doc},
        "defaultConfiguration": {"level": level},
    }


def _location(file: str, line: int, col: int) -> dict[str, Any]:
    return {
        "physicalLocation": {
            "artifactLocation": {"uri": _uri(file)},
            "region": {"startLine": line, "startColumn": col},
        }
    }


def _result(
    rule: str, index: int, level: str, message: str, where: dict[str, Any]
) -> dict[str, Any]:
    return {
        "ruleId": rule,
        "ruleIndex": index,
        "level": level,
        "message": {"text": message},
        "locations": [where],
    }


def sarif(
    report: Report, out_of_date: Sequence[FileStatus] | None = None, *, show_allowed: bool = False
) -> str:
    """The SARIF log of ``report``; for a build (``out_of_date`` given) the `stale-output`
    rule too, with a result for each missing or stale output. With ``show_allowed``, each
    silenced warning is a result with an in-source suppression that gives its reason."""
    codes = all_codes()
    index = {c.id: i for i, c in enumerate(codes)}
    rules = [_rule(c.id, c.name, c.doc, c.severity.value) for c in codes]

    def of(d: Diagnostic) -> dict[str, Any]:
        message = d.message + (f" ({d.hint})" if d.hint else "")
        where = _location(d.file, d.line, d.col)
        return _result(d.code, index[d.code], d.severity.value, message, where)

    results = [of(d) for d in report.diagnostics]
    for a in report.allowed if show_allowed else ():
        results.append(
            {**of(a.diagnostic), "suppressions": [{"kind": "inSource", "justification": a.reason}]}
        )
    if out_of_date is not None:
        rules.append(_rule(_STALE_OUTPUT, _STALE_OUTPUT, _STALE_DOC, "error"))
        for f in out_of_date:
            # The whole file: code scanning needs a start line, so its first.
            where = _location(f.path.as_posix(), 1, 1)
            results.append(_result(_STALE_OUTPUT, len(codes), "error", _stale(f), where))
    log = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "plancc",
                        "version": __version__,
                        "informationUri": "https://plancc.dev",
                        "rules": rules,
                    }
                },
                "columnKind": "unicodeCodePoints",  # plancc's columns count characters
                "results": results,
            }
        ],
    }
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"


def build(
    result: BuildReport,
    fmt: str,
    *,
    colour: bool = False,
    quiet: bool = False,
    show_allowed: bool = False,
) -> str:
    """The output of a build that passed validation: each plan's warnings and its line."""
    report = result.report
    files = [(p.result.file, f) for p in result.plans for f in p.files]
    if fmt == "json":
        data = json.loads(json_(report, show_allowed=show_allowed))
        data["outputs"] = [
            {"plan": plan, "file": f.path.as_posix(), "status": f.status.value}
            for plan, f in [*files, *((None, f) for f in result.orphans)]
        ]
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    stale = result.out_of_date
    if fmt == "sarif":
        return sarif(report, stale, show_allowed=show_allowed)
    out = ""
    if fmt == "github":
        out += github(report, show_allowed=show_allowed)
        for f in stale:
            path = f.path.as_posix()
            out += (
                f"::error file={_escape_property(path)},title=plancc build --check::"
                f"{_escape_data(_stale(f))}\n"
            )
    built = {p.result.file: p for p in result.plans}
    lines = []
    for r in _by_file(report):  # as `validate`: each plan's diagnostics, then its line
        if fmt != "github":
            lines += _plan_diagnostics(r, colour, show_allowed)
        if not quiet and r.file in built:
            lines.append(_build_line(built[r.file]))
    if quiet:
        lines += [f"{f.path.as_posix()}: {f.status.value}" for f in stale]
        return out + "".join(line + "\n" for line in lines)
    count = len(files)
    if result.check:
        behind = len(stale) - len(result.orphans)
        tail = (
            f"{behind} of {count} outputs missing or out of date"
            if behind
            else f"all {count} outputs up to date"
        )
        if result.orphans:
            tail += f", {len(result.orphans)} orphaned"
    else:
        written = sum(f.status.value == "written" for _, f in files)
        tail = f"{written} written, {count - written} unchanged"
    lines.append(f"{_totals(report)}; {tail}")
    return out + "".join(line + "\n" for line in lines)


def _build_line(built: BuiltPlan) -> str:
    plan = built.result.plan
    assert plan is not None
    n = plan_numbers(plan)
    line = f"{built.result.file}: {plural(n['warms'], 'warm')}, {n['warm_bytes']:,} B warmed"
    if n["l2"]["capacity_bytes"]:
        line += f", L2 peak {peak_share(plan, n['l2'])}× L2"
    line += unused_notice(plan)
    groups: dict[str, list[str]] = {}
    for f in built.files:
        groups.setdefault(f.status.value, []).append(f.path.as_posix())
    return line + " -> " + "; ".join(f"{s}: {', '.join(names)}" for s, names in groups.items())

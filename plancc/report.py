"""Report formats: text, json, github workflow annotations and SARIF 2.1.0."""

from __future__ import annotations

import json
from typing import Any

from plancc import __version__
from plancc.api import Report
from plancc.codes import all_codes
from plancc.diagnostics import Diagnostic, Severity
from plancc.summary import plan_numbers, summary_line

_COLOURS = {Severity.ERROR: "\033[1;31m", Severity.WARNING: "\033[1;33m"}
_BOLD, _DIM, _RESET = "\033[1m", "\033[2m", "\033[0m"


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def text(
    report: Report, *, colour: bool = False, quiet: bool = False, show_allowed: bool = False
) -> str:
    lines = []
    for d in report.diagnostics:
        lines += _text_diagnostic(d, colour)
    if show_allowed:
        for a in report.allowed:
            d = a.diagnostic
            lines.append(
                f"{d.file}:{d.line}:{d.col}: allowed {d.severity.value} {d.code}: {d.message}"
            )
            lines.append(f"    reason: {a.reason}")
    if not quiet:
        lines += [summary_line(r.plan) for r in report.results if r.plan is not None]
        lines.append(
            f"{_count(report.errors, 'error')}, {_count(report.warnings, 'warning')} "
            f"in {_count(len(report.results), 'plan')}"
        )
    return "".join(line + "\n" for line in lines)


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


def github(report: Report) -> str:
    """GitHub workflow commands: one ``::error``/``::warning`` annotation per diagnostic."""
    lines = []
    for d in report.diagnostics:
        message = d.message + (f"\n{d.hint}" if d.hint else "")
        props = (
            f"file={_escape_property(d.file)},line={d.line},col={d.col},"
            f"title={_escape_property(d.code)}"
        )
        lines.append(f"::{d.severity.value} {props}::{_escape_data(message)}")
    return "".join(line + "\n" for line in lines)


def sarif(report: Report) -> str:
    codes = all_codes()
    index = {c.id: i for i, c in enumerate(codes)}
    rules = [
        {
            "id": c.id,
            "name": c.name,
            "shortDescription": {"text": c.doc.split("\n\n")[0].replace("\n", " ")},
            "fullDescription": {"text": c.doc},
            "help": {"text": c.doc},
            "defaultConfiguration": {"level": c.severity.value},
        }
        for c in codes
    ]
    results = []
    for d in report.diagnostics:
        message = d.message + (f" ({d.hint})" if d.hint else "")
        results.append(
            {
                "ruleId": d.code,
                "ruleIndex": index[d.code],
                "level": d.severity.value,
                "message": {"text": message},
                "locations": [
                    {
                        "physicalLocation": {
                            "artifactLocation": {"uri": d.file},
                            "region": {"startLine": d.line, "startColumn": d.col},
                        }
                    }
                ],
            }
        )
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
                "results": results,
            }
        ],
    }
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"

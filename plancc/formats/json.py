"""The json format: diagnostics, counts and each plan's numbers in one JSON object."""

from __future__ import annotations

import json
from typing import Any

from plancc.api import BuildResult, Validation
from plancc.diagnostics import Diagnostic, printable
from plancc.facts.metrics import plan_numbers
from plancc.fixes import data_json, fix_json
from plancc.formats.base import Options, OutputFormat


def _json_diagnostic(d: Diagnostic) -> dict[str, Any]:
    out = {
        "file": printable(d.file),
        "line": d.line,
        "col": d.col,
        "severity": d.severity.value,
        "code": d.code,
        "message": d.message,
    }
    if d.hint:
        out["hint"] = d.hint
    if d.fix is not None:
        out["fix"] = fix_json(d.fix)
    if d.data:
        out["data"] = data_json(d.data)
    return out


def json_(report: Validation, *, show_allowed: bool = False) -> str:
    out: dict[str, Any] = {
        "diagnostics": [_json_diagnostic(d) for d in report.diagnostics],
        "errors": report.errors,
        "warnings": report.warnings,
        "notices": report.notices,
        "plans": [plan_numbers(r.facts) for r in report.results if r.facts is not None],
    }
    if show_allowed:
        out["allowed"] = [
            {
                **_json_diagnostic(a.diagnostic),
                "warm": a.warm and printable(a.warm),
                "reason": a.reason,
            }
            for a in report.allowed
        ]
    return json.dumps(out, indent=2, ensure_ascii=False) + "\n"


def _build(result: BuildResult, o: Options) -> str:
    files = [(p.result.file, f) for p in result.plans for f in p.files]
    data = json.loads(json_(result.report, show_allowed=o.show_allowed))
    data["outputs"] = [
        {"plan": plan, "file": f.path.as_posix(), "status": f.status.value}
        for plan, f in [*files, *((None, f) for f in result.orphans)]
    ]
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


FORMAT = OutputFormat("json", lambda r, o: json_(r, show_allowed=o.show_allowed), _build)

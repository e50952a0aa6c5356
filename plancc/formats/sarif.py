"""The sarif format: a SARIF 2.1.0 log, every diagnostic code a rule, for code scanning."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from plancc import __version__
from plancc.api import BuildResult, Validation
from plancc.check import catalog
from plancc.codes import Severity
from plancc.diagnostics import Diagnostic
from plancc.fixes import Fix, data_json, fix_json
from plancc.formats.base import Options, OutputFormat, stale_message
from plancc.load import Document

if TYPE_CHECKING:
    from plancc.write import FileStatus


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


def _level(severity: Severity) -> str:
    """SARIF's levels: error, warning, note (a notice)."""
    return "note" if severity is Severity.NOTICE else severity.value


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


def _fix(d: Diagnostic, fix: Fix, doc: Document) -> dict[str, Any] | None:
    """A SARIF fix: its title, the nodes it changes written again (``replacements``), and
    plancc's own edits on plan paths and its safety in the property bag."""
    from plancc.edits.regions import replacements  # noqa: PLC0415 (cold start: only for a fix)

    found = replacements(doc, fix)
    if not found:
        return None
    changes = [
        {
            "deletedRegion": {
                "startLine": start.line,
                "startColumn": start.col,
                "endLine": end.line,
                "endColumn": end.col,
            },
            "insertedContent": {"text": text},
        }
        for start, end, text in found
    ]
    return {
        "description": {"text": fix.title},
        "artifactChanges": [{"artifactLocation": {"uri": _uri(d.file)}, "replacements": changes}],
        "properties": fix_json(fix),
    }


def sarif(
    report: Validation,
    out_of_date: Sequence[FileStatus] | None = None,
    *,
    show_allowed: bool = False,
) -> str:
    """The SARIF log of ``report``; for a build (``out_of_date`` given) the `stale-output`
    rule too, with a result for each missing or stale output. With ``show_allowed``, each
    silenced warning is a result with an in-source suppression that gives its reason."""
    codes = catalog()
    index = {c.id: i for i, c in enumerate(codes)}
    rules = [_rule(c.id, c.name, c.doc, _level(c.severity)) for c in codes]

    docs = {r.file: r.doc for r in report.results if r.doc is not None}

    def of(d: Diagnostic) -> dict[str, Any]:
        message = d.message + (f" ({d.hint})" if d.hint else "")
        where = _location(d.file, d.line, d.col)
        out = _result(d.code, index[d.code], _level(d.severity), message, where)
        doc = docs.get(d.file)
        if d.fix is not None and doc is not None and (fixed := _fix(d, d.fix, doc)) is not None:
            out["fixes"] = [fixed]
        if d.data:
            out["properties"] = {"data": data_json(d.data)}
        return out

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
            results.append(_result(_STALE_OUTPUT, len(codes), "error", stale_message(f), where))
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


def _build(result: BuildResult, o: Options) -> str:
    return sarif(result.report, result.out_of_date, show_allowed=o.show_allowed)


FORMAT = OutputFormat("sarif", lambda r, o: sarif(r, show_allowed=o.show_allowed), _build)

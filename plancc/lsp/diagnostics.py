"""plancc's diagnostics as LSP diagnostics: the same code, line and message as
`plancc validate`, over the whole range of the YAML node at fault.

The range is the node that starts where the diagnostic points (the innermost
one, when a block mapping and its first key start together); a diagnostic that
points at no node (a YAML syntax error) covers the word at its position.
Warnings silenced by `allow` or `lint.ignore` are shown as hints, with the
reason. The hint of a diagnostic travels as related information (and in
``data``, for code actions).
"""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types as lsp

from plancc.lsp.adapter import Diagnostic, Document, Pos, Severity
from plancc.lsp.index import Point, Span, Text
from plancc.lsp.state import PlanState

SOURCE = "plancc"
# Where a code's documentation is: docs/rules.md of a source checkout when there is one
# (an editor opens it offline), else the project's site; `docsUrl` in the client's
# initializationOptions overrides both (docs/editors.md).
_CHECKOUT_RULES = Path(__file__).resolve().parents[2] / "docs" / "rules.md"
SITE_RULES = "https://plancc.dev/docs/rules.md"


def default_docs_url() -> str:
    return _CHECKOUT_RULES.as_uri() if _CHECKOUT_RULES.is_file() else SITE_RULES


def node_span(doc: Document | None, text: Text, line: int, col: int) -> Span:
    """The range of the node starting at plancc's ``line:col``."""
    start = text.at(Pos(line, col))
    if doc is not None:
        end = doc.ends.get(Pos(line, col))
        if end is not None and text.at(end) > start:
            return Span(start, text.at(end))
    return Span(start, _word_end(text, start))


def _word_end(text: Text, start: Point) -> Point:
    line = text.line(start[0])
    end = start[1]
    while end < len(line) and not line[end].isspace():
        end += 1
    return start[0], max(end, min(start[1] + 1, len(line)))


def to_lsp(state: PlanState) -> list[lsp.Diagnostic]:
    """Every diagnostic of the plan (shown, then allowed), in the client's units."""
    result = state.result
    ordered = sorted(result.diagnostics, key=lambda d: d.sort_key)  # as `validate` lists them
    shown = [_one(state, d, None) for d in ordered]
    return shown + [_one(state, a.diagnostic, a.reason) for a in result.allowed]


_SEVERITY = {
    Severity.ERROR: lsp.DiagnosticSeverity.Error,
    Severity.WARNING: lsp.DiagnosticSeverity.Warning,
    Severity.NOTICE: lsp.DiagnosticSeverity.Information,
}


def _one(state: PlanState, d: Diagnostic, allowed: str | None) -> lsp.Diagnostic:
    rng = state.range(node_span(state.result.doc, state.text, d.line, d.col))
    related = []
    if d.hint:
        where = lsp.Location(state.uri, rng)
        related.append(lsp.DiagnosticRelatedInformation(where, f"hint: {d.hint}"))
    message = d.message if allowed is None else f"{d.message} (allowed: {allowed})"
    return lsp.Diagnostic(
        range=rng,
        message=message,
        severity=lsp.DiagnosticSeverity.Hint if allowed is not None else _SEVERITY[d.severity],
        code=d.code,
        code_description=lsp.CodeDescription(href=f"{state.docs_url}#{d.code.lower()}"),
        source=SOURCE,
        related_information=related or None,
        data={"hint": d.hint, "allowed": allowed is not None},
    )

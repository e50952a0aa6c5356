"""Quick fixes for the diagnostics in the client's request, and "fix all".

A diagnostic's fix is the rule's (``Diagnostic.fix``: edits on plan paths), made on
the text by the one interpreter of a fix (``plancc.edits.interpret``), as `plancc
validate --fix` makes it: the same bytes. A safe fix is the preferred action. Any
warning on a warm can also be accepted with `allow` and a reason placeholder to fill
in (an `allow` without a reason is PC002, so the placeholder is never left empty),
itself a fix made by the same interpreter. "Fix all" (kind ``source.fixAll.plancc``)
is what `plancc validate --fix` would write: its loop (one fix, then the check again)
run on the buffer, the lines that differ replaced.
"""

from __future__ import annotations

from collections.abc import Sequence

from lsprotocol import types as lsp

from plancc.lsp import adapter as pc
from plancc.lsp.index import Index, Span
from plancc.lsp.state import PlanState

REASON = "TODO: why {code} is acceptable for this warm"
FIX_ALL = "source.fixAll.plancc"


def code_actions(state: PlanState, requested: Sequence[lsp.Diagnostic]) -> list[lsp.CodeAction]:
    out: list[lsp.CodeAction] = []
    if state.index is None:
        return out
    for given in requested:
        if given.source != "plancc" or not isinstance(given.code, str):
            continue
        d = _ours(state, given)
        if d is None:
            continue
        edits = _edits(state, d.fix) if d.fix is not None else None
        if d.fix is not None and edits:
            out.append(_action(state, d.fix.title, edits, given, preferred=d.fix.safe))
        if pc.code_doc(d.code) in pc.silenceable():
            allow = _allow(state, state.index, d)
            edits = _edits(state, allow) if allow is not None else None
            if allow is not None and edits:
                out.append(_action(state, allow.title, edits, given, preferred=False))
    whole = fix_all(state)
    if whole is not None:
        out.append(whole)
    return out


def fix_all(state: PlanState) -> lsp.CodeAction | None:
    """The document as `validate --fix` would write it (its safe fixes), as one action."""
    fixed = state.fixed
    if fixed is None or not fixed.changed:
        return None
    new = fixed.after.decode("utf-8")
    changes = [_text_edit(state, e) for e in pc.diff_edits(state.text.source, new)]
    n = len(fixed.applied)
    stopped = f"; {fixed.stopped}" if fixed.stopped else ""  # a bound hit is said here too
    return lsp.CodeAction(
        title=f"fix all: {n} safe fix{'' if n == 1 else 'es'} (plancc{stopped})",
        kind=FIX_ALL,
        edit=lsp.WorkspaceEdit(changes={state.uri: changes}),
    )


def _edits(state: PlanState, fix: pc.Fix) -> list[lsp.TextEdit] | None:
    """``fix`` as the client's text edits; None when it does not apply to the text."""
    doc = state.result.doc
    if doc is None:
        return None
    try:
        return [_text_edit(state, e) for e in pc.text_edits(doc, [fix])]
    except pc.FixError:
        return None


def _text_edit(state: PlanState, edit: pc.TextEdit) -> lsp.TextEdit:
    span = Span(state.text.point(edit.start), state.text.point(edit.end))
    return lsp.TextEdit(state.range(span), edit.new)


def _ours(state: PlanState, given: lsp.Diagnostic) -> pc.Diagnostic | None:
    """The plancc diagnostic the client shows at this range (of two with one code at one
    place, PC103's of two groups, the one with its message)."""
    start = state.point(given.range.start)
    here = [
        d
        for d in state.result.diagnostics
        if d.code == given.code and state.text.at(pc.Pos(d.line, d.col)) == start
    ]
    return next((d for d in here if d.message == given.message), here[0] if here else None)


def _action(
    state: PlanState,
    title: str,
    edits: list[lsp.TextEdit],
    given: lsp.Diagnostic,
    *,
    preferred: bool,
) -> lsp.CodeAction:
    return lsp.CodeAction(
        title=title,
        kind=lsp.CodeActionKind.QuickFix,
        diagnostics=[given],
        is_preferred=preferred,
        edit=lsp.WorkspaceEdit(changes={state.uri: edits}),
    )


def _warm_of(
    state: PlanState, index: Index, d: pc.Diagnostic
) -> tuple[str, tuple[str | int, ...]] | None:
    """The warm whose entry holds the diagnostic: its name and path in the document."""
    at = state.text.at(pc.Pos(d.line, d.col))
    for name, path in index.warms.items():
        extent = index.extent(path)
        if extent is not None and extent.start <= at <= extent.end:
            return name, path
    return None


def _allow(state: PlanState, index: Index, d: pc.Diagnostic) -> pc.Fix | None:
    """The fix that silences ``d`` on its warm: its code added to the warm's `allow`, and
    a `reason` to fill in when the warm has none."""
    warm = _warm_of(state, index, d)
    if warm is None:
        return None
    name, path = warm
    entry = pc.node_at(index.doc.data, path)
    edits: list[pc.Edit] = []
    allow = entry.get("allow")
    if isinstance(allow, list) and allow:
        edits.append(pc.Append((*path, "allow"), (d.code,)))
    elif "allow" in entry:
        return None
    else:
        edits.append(pc.Replace((*path, "allow"), [d.code]))
    if "reason" not in entry:
        edits.append(pc.Replace((*path, "reason"), REASON.format(code=d.code)))
    title = f"allow {d.code} on warm '{name}' (fill in the reason)"
    return pc.Fix(title, tuple(edits))

"""Quick fixes for the diagnostics in the client's request.

PC010: replace the unknown name by the one the hint suggests. PC102: reorder
the warm's tensors to consumer order. PC103: add the tensors the hint names.
PC104: move the anchor to the stage the hint names. Any warning on a warm:
accept it with `allow` and a reason placeholder to fill in (an `allow`
without a reason is PC002, so the placeholder is never left empty).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from lsprotocol import types as lsp

from plancc.lsp import adapter as pc
from plancc.lsp.diagnostics import node_span
from plancc.lsp.index import Index, Point, Span
from plancc.lsp.state import PlanState

_QUOTED = re.compile(r"'([^']+)'")
_NAME = re.compile(r"[A-Za-z_]\w*")
REASON = "TODO: why {code} is acceptable for this warm"


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
        fix = _FIXES.get(d.code)
        fixed = fix(state, state.index, d) if fix else None
        if fixed and fixed[1]:
            out.append(_action(state, fixed[0], fixed[1], given, preferred=True))
        if pc.code_doc(d.code) in pc.silenceable():
            allow = _allow(state, state.index, d)
            if allow:
                out.append(_action(state, allow[0], allow[1], given, preferred=False))
    return out


def _ours(state: PlanState, given: lsp.Diagnostic) -> pc.Diagnostic | None:
    """The plancc diagnostic the client shows at this range."""
    start = state.point(given.range.start)
    return next(
        (
            d
            for d in state.result.diagnostics
            if d.code == given.code and state.text.at(pc.Pos(d.line, d.col)) == start
        ),
        None,
    )


Edits = list[tuple[Span, str]]


def _action(
    state: PlanState, title: str, edits: Edits, given: lsp.Diagnostic, *, preferred: bool
) -> lsp.CodeAction:
    changes = [lsp.TextEdit(state.range(span), new) for span, new in edits]
    return lsp.CodeAction(
        title=title,
        kind=lsp.CodeActionKind.QuickFix,
        diagnostics=[given],
        is_preferred=preferred,
        edit=lsp.WorkspaceEdit(changes={state.uri: changes}),
    )


def _did_you_mean(state: PlanState, index: Index, d: pc.Diagnostic) -> tuple[str, Edits] | None:
    m = re.search(r"did you mean '([^']+)'", d.hint or "")
    wrong = next((w for w in _QUOTED.findall(d.message)), None)
    if m is None or wrong is None:
        return None
    span = _node(state, d)
    text = state.text.slice(span)
    for found in _NAME.finditer(text):
        if found.group() == wrong:
            base = state.text.offset(span.start)
            where = Span(
                state.text.point(base + found.start()), state.text.point(base + found.end())
            )
            return f"replace '{wrong}' with '{m.group(1)}'", [(where, m.group(1))]
    return None


def _node(state: PlanState, d: pc.Diagnostic) -> Span:
    return node_span(state.result.doc, state.text, d.line, d.col)


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


def _resolved(state: PlanState, name: str) -> tuple[pc.ir.Layer, pc.ir.Warm] | None:
    plan = state.result.plan
    if plan is None:
        return None
    return next(
        ((layer, w) for layer in plan.layers.values() for w in layer.warms if w.name == name),
        None,
    )


def _items(index: Index, path: tuple[str | int, ...]) -> list[Span]:
    """The spans of the items of the warm's `tensors` list, in order."""
    spans = []
    i = 0
    while (span := index.extent((*path, "tensors", i))) is not None:
        spans.append(span)
        i += 1
    return spans


def _reorder(state: PlanState, index: Index, d: pc.Diagnostic) -> tuple[str, Edits] | None:
    warm = _warm_of(state, index, d)
    found = _resolved(state, warm[0]) if warm else None
    if warm is None or found is None:
        return None
    layer, w = found
    items = _items(index, warm[1])
    order = pc.consumer_order(layer, w)
    if len(items) != len(order):  # an item was dropped by schema recovery: no safe edit
        return None
    texts = [state.text.slice(s) for s in items]
    names = ", ".join(w.entries[i].tensor.name for i in order)
    edits = [
        (s, texts[i]) for s, i in zip(items, order, strict=True) if texts[i] != state.text.slice(s)
    ]
    return f"issue in consumer order: [{names}]", edits


def _append(
    state: PlanState, index: Index, path: tuple[str | int, ...], key: str, new: list[str]
) -> Edits | None:
    """Edits appending ``new`` to the list at ``path + (key,)``, flow or block."""
    items: list[Span] = []
    while (span := index.extent((*path, key, len(items)))) is not None:
        items.append(span)
    if not items:
        return None
    last = items[-1]
    whole = index.value_span((*path, key))
    if (
        whole is not None
        and state.text.slice(Span(whole.start, (whole.start[0], whole.start[1] + 1))) == "["
    ):
        return [(Span(last.end, last.end), "".join(f", {n}" for n in new))]
    line = state.text.line(last.start[0])
    dash = line[: last.start[1]]
    if not re.fullmatch(r"\s*-\s+", dash):
        return None
    return [(Span(last.end, last.end), "".join(f"\n{dash}{n}" for n in new))]


def _add_missing(state: PlanState, index: Index, d: pc.Diagnostic) -> tuple[str, Edits] | None:
    warm = _warm_of(state, index, d)
    found = _resolved(state, warm[0]) if warm else None
    plan = state.result.plan
    if warm is None or found is None or plan is None:
        return None
    have = {e.tensor.name for e in found[1].entries}
    missing = [
        n for n in dict.fromkeys(_NAME.findall(d.hint or "")) if n in plan.tensors and n not in have
    ]
    edits = _append(state, index, warm[1], "tensors", missing) if missing else None
    return (f"add {', '.join(missing)} to the warm", edits) if edits else None


def _move_anchor(state: PlanState, index: Index, d: pc.Diagnostic) -> tuple[str, Edits] | None:
    warm = _warm_of(state, index, d)
    found = _resolved(state, warm[0]) if warm else None
    span = index.name_span((*warm[1], "after")) if warm else None
    if found is None or span is None:
        return None
    layer, _ = found
    tasks = {s.name for s in layer.stages if s.task is not None}
    stage = next((n for n in _QUOTED.findall(d.hint or "") if n in tasks), None)
    if stage is None:
        return None
    return f"anchor at '{stage}'", [(span, stage)]


def _allow(state: PlanState, index: Index, d: pc.Diagnostic) -> tuple[str, Edits] | None:
    warm = _warm_of(state, index, d)
    if warm is None:
        return None
    name, path = warm
    title = f"allow {d.code} on warm '{name}' (fill in the reason)"
    entry = index.doc.data
    for part in path:
        entry = entry[part]
    reason = f'"{REASON.format(code=d.code)}"'
    if isinstance(entry.get("allow"), list) and entry["allow"]:
        edits = _append(state, index, path, "allow", [d.code])
        if edits is None:
            return None
        if "reason" not in entry:
            edits += _add_keys(state, index, path, [("reason", reason)])
        return title, edits
    if "allow" in entry:
        return None
    keys = [("allow", f"[{d.code}]")] + ([] if "reason" in entry else [("reason", reason)])
    return title, _add_keys(state, index, path, keys)


def _add_keys(
    state: PlanState, index: Index, path: tuple[str | int, ...], keys: list[tuple[str, str]]
) -> Edits:
    """Edits adding ``key: value`` entries at the end of the mapping at ``path``."""
    extent = index.extent(path)
    assert extent is not None
    start = extent.start
    if state.text.slice(Span(start, (start[0], start[1] + 1))) == "{":
        end: Point = (extent.end[0], extent.end[1] - 1)  # before the closing brace
        return [(Span(end, end), "".join(f", {k}: {v}" for k, v in keys))]
    first = next(p for p in index.doc.keys if p[: len(path)] == path and len(p) == len(path) + 1)
    indent = " " * (index.doc.keys[first].col - 1)
    line = extent.end[0] + (extent.end[1] > 0)
    if line >= len(state.text.starts):  # the entry ends the file without a line break
        at = state.text.point(len(state.text.source))
        return [(Span(at, at), "".join(f"\n{indent}{k}: {v}" for k, v in keys))]
    return [(Span((line, 0), (line, 0)), "".join(f"{indent}{k}: {v}\n" for k, v in keys))]


_FIXES = {
    "PC010": _did_you_mean,
    "PC102": _reorder,
    "PC103": _add_missing,
    "PC104": _move_anchor,
}

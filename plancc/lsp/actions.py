"""Quick fixes for the diagnostics in the client's request, and "fix all".

A diagnostic's fix is the rule's (``Diagnostic.fix``: edits on plan paths), mapped
to text edits through the index's spans: nothing here reads a hint or works a rule
fact out again. A safe fix is the preferred action. Any warning on a warm can also
be accepted with `allow` and a reason placeholder to fill in (an `allow` without a
reason is PC002, so the placeholder is never left empty). "Fix all" (kind
``source.fixAll.plancc``) applies every safe fix of the document that `plancc
validate --fix` would apply in its first pass.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from lsprotocol import types as lsp

from plancc.lsp import adapter as pc
from plancc.lsp.index import Index, Point, Span
from plancc.lsp.state import PlanState

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
        edits = text_edits(state, state.index, [d.fix]) if d.fix is not None else None
        if d.fix is not None and edits:
            out.append(_action(state, d.fix.title, edits, given, preferred=d.fix.safe))
        if pc.code_doc(d.code) in pc.silenceable():
            allow = _allow(state, state.index, d)
            if allow:
                out.append(_action(state, allow[0], allow[1], given, preferred=False))
    whole = fix_all(state, state.index)
    if whole is not None:
        out.append(whole)
    return out


def fix_all(state: PlanState, index: Index) -> lsp.CodeAction | None:
    """Every safe fix of the document that does not clash with another, as one action."""
    safe = [d.fix for d in state.result.diagnostics if d.fix is not None and d.fix.safe]
    picked = pc.chosen(safe)
    edits = text_edits(state, index, picked) if picked else None
    if not edits:
        return None
    changes = [lsp.TextEdit(state.range(span), new) for span, new in edits]
    return lsp.CodeAction(
        title=f"fix all: {len(picked)} safe fix{'' if len(picked) == 1 else 'es'} (plancc)",
        kind=FIX_ALL,
        edit=lsp.WorkspaceEdit(changes={state.uri: changes}),
    )


FIX_ALL = "source.fixAll.plancc"


def text_edits(state: PlanState, index: Index, fixes: Sequence[pc.Fix]) -> Edits | None:
    """``fixes`` (which do not clash: ``pc.chosen``) as text edits, or None when one of
    them names a node the text does not have (the document changed under it). Every
    edit of one list is worked out together, with the applier's meaning (``Remove``
    marks items, which go once every edit is done), and written over the items' spans."""
    lists: dict[pc.FixPath, list[str | int | None]] = {}  # item text, or original index
    edits: Edits = []
    for fix in fixes:
        for edit in fix.edits:
            if isinstance(edit, pc.Replace):
                done = _replace(state, index, edit.path, pc.yaml_text(edit.value))
            elif isinstance(edit, pc.Remove) and any(isinstance(k, str) for k in edit.items):
                done = _remove_keys(state, index, edit.path, [str(k) for k in edit.items])
            else:
                done = _list_edit(index, lists, edit)
            if done is None:
                return None
            edits += done
    for path, items in lists.items():
        done = _rewrite(state, index, path, items)
        if done is None:
            return None
        edits += done
    return list(dict.fromkeys(edits))  # two fixes removing one list say it twice


_GONE = None  # a removed item, in a list being rewritten


def _list_edit(
    index: Index, lists: dict[pc.FixPath, list[str | int | None]], edit: pc.Edit
) -> Edits | None:
    """Record a list edit (Reorder, Append, Remove of items) on its list's items."""
    items = lists.get(edit.path)
    if items is None:
        count = 0
        while index.extent((*edit.path, count)) is not None:
            count += 1
        items = lists[edit.path] = list(range(count))
    if isinstance(edit, pc.Reorder):
        if any(not 0 <= i < len(items) for i in edit.order):
            return None
        before = list(items)
        for slot, source in zip(sorted(edit.order), edit.order, strict=True):
            items[slot] = before[source]
    elif isinstance(edit, pc.Append):
        items += [pc.yaml_text(v) for v in edit.items]
    elif isinstance(edit, pc.Remove):
        for i in edit.items:
            if not isinstance(i, int) or i not in items:
                return None
            items[items.index(i)] = _GONE
    return []


def _rewrite(
    state: PlanState, index: Index, path: pc.FixPath, items: list[str | int | None]
) -> Edits | None:
    """The list at ``path`` holding ``items`` (original indices, new texts, removed ones)
    as edits of its items' spans: each place takes its new item's text, what is left over
    is appended or deleted."""
    spans = [s for i in range(len(items)) if (s := index.extent((*path, i))) is not None]
    texts = [state.text.slice(s) for s in spans]
    final = [texts[i] if isinstance(i, int) else i for i in items if i is not _GONE]
    edits: Edits = [
        (spans[k], final[k]) for k in range(min(len(spans), len(final))) if final[k] != texts[k]
    ]
    if len(final) > len(spans):
        added = _append(state, index, path[:-1], str(path[-1]), final[len(spans) :])
        if added is None:
            return None
        edits += added
    elif len(final) < len(spans):
        whole = index.value_span(path)
        if not final:
            if whole is None:
                return None
            edits = [(Span(whole.start, spans[-1].end), "[]")]
        else:
            edits.append((Span(spans[len(final) - 1].end, spans[-1].end), ""))
    return edits


def _replace(state: PlanState, index: Index, path: pc.FixPath, text: str) -> Edits | None:
    """The value at ``path`` written as ``text``; a missing mapping key is added."""
    span = index.extent(path)
    if span is not None:
        return [(span, text)]
    if isinstance(path[-1], str) and index.extent(path[:-1]) is not None:
        return _add_keys(state, index, path[:-1], [(path[-1], text)])
    return None


def _remove_keys(state: PlanState, index: Index, path: pc.FixPath, keys: list[str]) -> Edits | None:
    """The entries ``keys`` of the mapping at ``path`` deleted: in a flow mapping with the
    separator before each, in a block mapping their whole lines."""
    whole = index.extent(path)
    if whole is None:
        return None
    flow = state.text.slice(Span(whole.start, (whole.start[0], whole.start[1] + 1))) == "{"
    edits: Edits = []
    node: object = index.doc.data
    for part in path:
        node = node[part] if isinstance(node, dict | list) else None  # type: ignore[index]
    names = list(node) if isinstance(node, dict) else []
    for key in keys:
        start, end = index.key_span((*path, key)), index.extent((*path, key))
        if start is None or end is None or key not in names:
            return None
        if flow:  # the separator before it; for the first, the one after it
            k = names.index(key)
            before = index.extent((*path, names[k - 1])) if k else None
            after = index.key_span((*path, names[1])) if not k and len(names) > 1 else None
            cut = Span(before.end, end.end) if before else Span(start.start, end.end)
            edits.append((Span(cut.start, after.start) if after else cut, ""))
        else:
            edits.append((Span((start.start[0], 0), (end.end[0] + 1, 0)), ""))
    return edits


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

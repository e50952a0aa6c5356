"""A fix as replacements of the plan's text, for SARIF's ``fixes`` (which hold text): each
node an edit changes is written again, in flow style. `validate --fix` and the editor
keep the layout and the comments (``plancc.edits.apply``, ``plancc.lsp.actions``)."""

from __future__ import annotations

import copy
from typing import Any

from plancc.diagnostics import Pos, Where, pos_of
from plancc.edits.apply import yaml_text
from plancc.fixes import Append, Edit, Fix, Path, Remove, Reorder, Replace, Value
from plancc.load import Document

_REMOVED = object()


def replacements(doc: Document, fix: Fix) -> list[tuple[Pos, Pos, str]] | None:
    """``fix`` as replacements of the document's text: each node an edit changes is
    written again, in flow style, from start to end (`(start, end, text)`, 1-based
    positions, end exclusive); None when a path names nothing. For SARIF's ``fixes``,
    which hold text; `--fix` and the editor keep the layout and the comments."""
    new: dict[Path, Value] = {}
    for edit in fix.edits:
        target = edit.path
        if isinstance(edit, Replace) and _data(doc.data, edit.path) is _REMOVED:
            target = edit.path[:-1]  # a key to add: its mapping is written again
        value = new[target] if target in new else copy.deepcopy(_data(doc.data, target))
        if value is _REMOVED:
            return None
        new[target] = _edited(value, edit, target)
        if new[target] is _REMOVED:
            return None
    lines = doc.raw.decode("utf-8", "replace").removeprefix("\ufeff").splitlines()
    out = []
    for path, edited in new.items():
        value = [v for v in edited if v is not _REMOVED] if isinstance(edited, list) else edited
        start = doc.values.where(path)
        if start is None:
            return None
        end = _end(doc, lines, path, start)
        out.append((pos_of(start), pos_of(end), yaml_text(value)))
    return out


def _data(data: Any, path: Path) -> Any:
    for part in path:
        try:
            data = data[part]
        except (KeyError, IndexError, TypeError):
            return _REMOVED
    return data


def _edited(value: Any, edit: Edit, target: Path) -> Any:
    """``value`` (the node at ``target``) with ``edit`` done; a removed list item stays as
    a mark until every edit is done, as the applier's do."""
    if isinstance(edit, Replace):
        if target == edit.path:
            return edit.value
        if not isinstance(value, dict):
            return _REMOVED
        return {**value, str(edit.path[-1]): edit.value}
    if isinstance(edit, Remove) and isinstance(value, dict):
        return {k: v for k, v in value.items() if k not in edit.items}
    return _list_edited(value, edit) if isinstance(value, list) else _REMOVED


def _list_edited(value: list[Any], edit: Edit) -> Any:
    if isinstance(edit, Append):
        return [*value, *edit.items]
    if isinstance(edit, Reorder):
        if any(not 0 <= i < len(value) for i in edit.order):
            return _REMOVED
        out = list(value)
        for slot, source in zip(sorted(edit.order), edit.order, strict=True):
            out[slot] = value[source]
        return out
    if not isinstance(edit, Remove) or any(
        not isinstance(i, int) or not 0 <= i < len(value) for i in edit.items
    ):
        return _REMOVED
    return [_REMOVED if i in edit.items else v for i, v in enumerate(value)]


def _end(doc: Document, lines: list[str], path: Path, start: Where) -> Where:
    """Where the node at ``path`` ends: a block collection's at the end of its last node
    (keys keep the text's order), one level down at a time."""
    end = doc.ends.end(start)
    node = _data(doc.data, path)
    at = pos_of(start)
    line = lines[at.line - 1] if at.line <= len(lines) else ""
    flow = line[at.col - 1 : at.col] in ("[", "{")
    while isinstance(node, dict | list) and node and not flow:
        last = next(reversed(node)) if isinstance(node, dict) else len(node) - 1
        path, node = (*path, last), node[last]
        for where in (doc.keys.where(path), doc.values.where(path)):
            if where is not None:
                end = max(end, doc.ends.end(where))
    return end

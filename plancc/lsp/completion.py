"""Completion: the names that fit where the cursor is.

Half-typed text is usually not YAML yet, so the place is read from the text
of the current line and the keys above it, and the names come from the last
version of the plan that parsed: tensors in `reads` and a warm's `tensors`,
stages of the enclosing layer kind in `after`, layer kinds in `forward`, dims
and config keys inside expressions, dtypes, platforms, and warning ids in
`allow` and `lint.ignore` (an error id there would be PC004).
"""

from __future__ import annotations

import json
import re

from lsprotocol import types as lsp

from plancc.lsp import adapter as pc
from plancc.lsp.index import Text
from plancc.lsp.navigation import config_path
from plancc.lsp.state import PlanState

_IN_LIST = re.compile(r"([A-Za-z_]\w*)\s*:\s*\[[^\[\]]*$")
_IN_VALUE = re.compile(r"([A-Za-z_]\w*)\s*:\s*[^:\[\]{},#]*$")
_IN_KINDS = re.compile(r"kinds\s*:\s*\{[^{}]*:\s*\w*$")
_LIST_ITEM = re.compile(r"^(\s*)-\s*[^:#\[\]{}]*$")
_KEY_LINE = re.compile(r"^(\s*)(?:-\s*)?([A-Za-z_]\w*)\s*:\s*(?:#.*)?$")
_EXPRESSION_KEYS = {"shape", "flat", "repeat", "layers"}


def complete(state: PlanState | None, source: str, position: lsp.Position) -> lsp.CompletionList:
    """Completions at ``position`` (its column in code points) of the buffer ``source``."""
    text = Text(source)
    line = text.line(position.line)
    prefix = line[: position.character]
    key = _context(text, position.line, prefix)
    items = _items(state, key, position.line) if key else []
    return lsp.CompletionList(is_incomplete=False, items=items)


def _context(text: Text, line: int, prefix: str) -> str | None:
    """The key whose value the cursor is in (``"dims:"`` for an entry of `dims`)."""
    if "#" in prefix:
        return None
    if _IN_KINDS.search(prefix):
        return "kinds"
    if m := _IN_LIST.search(prefix):
        return m.group(1)
    if m := _IN_VALUE.search(prefix):
        key = m.group(1)
        if key in _KEYS or key in _EXPRESSION_KEYS:
            return key
        indent = len(prefix) - len(prefix.lstrip())
        parent = _parent(text, line, indent, strict=True)
        return f"{parent}:" if parent in ("dims", "kinds") else None
    if m := _LIST_ITEM.match(prefix):
        return _parent(text, line, len(m.group(1)), strict=False)
    return None


def _parent(text: Text, line: int, indent: int, *, strict: bool) -> str | None:
    """The key of the nearest line above that is less indented (or, for an indentless
    list, as indented) and opens a block."""
    for n in range(line - 1, -1, -1):
        above = text.line(n)
        if not above.strip() or above.lstrip().startswith("#"):
            continue
        m = _KEY_LINE.match(above)
        depth = len(above) - len(above.lstrip())
        if m and (depth < indent or (not strict and depth == indent)):
            return m.group(2)
        if depth < indent:
            return None
    return None


def _items(state: PlanState | None, key: str, line: int) -> list[lsp.CompletionItem]:
    kind = lsp.CompletionItemKind
    if key == "dtype":
        return [_item(n, kind.EnumMember, "dtype") for n in pc.dtype_names()]
    if key == "platform":
        return [_item(n, kind.EnumMember, pc.platform_note(n)) for n in pc.platform_names()]
    if key in ("allow", "ignore"):
        return [
            _item(c.id, kind.Value, f"{c.name} ({c.severity.value})")
            for c in pc.rule_ids(warnings_only=True)
        ]
    index = state.index if state is not None else None
    if index is None or state is None:
        return []
    if key in ("reads", "tensors", "tensor"):
        return [_item(n, kind.Variable, "tensor") for n in index.names("tensor")]
    if key == "after":
        scope = _enclosing_kind(state, line)
        return [_item(n, kind.Function, f"stage of {scope}") for n in index.names("stage", scope)]
    if key in ("forward", "layer", "kinds"):
        return [_item(n, kind.Class, "layer kind") for n in index.names("kind")]
    if key in _EXPRESSION_KEYS or key == "dims:":
        dims = [_item(n, kind.Constant, "dim") for n in index.names("dim")]
        return dims + [_item(n, kind.Constant, "config key") for n in config_keys(state, int)]
    if key == "from_config":
        return [_item(n, kind.Constant, "config list") for n in config_keys(state, list)]
    return []


_KEYS = {"dtype", "platform", "after", "tensor", "layer", "from_config", "reads", "tensors"}
_KEYS |= {"allow", "ignore", "forward"}


def _item(label: str, kind: lsp.CompletionItemKind, detail: str | None) -> lsp.CompletionItem:
    return lsp.CompletionItem(label=label, kind=kind, detail=detail)


def _enclosing_kind(state: PlanState, line: int) -> str | None:
    """The layer kind defined last above ``line``."""
    index = state.index
    kinds = [o for o in index.occurrences if o.kind == "kind" and o.definition] if index else []
    above = [o for o in kinds if o.span.start[0] <= line]
    return above[-1].name if above else None


def config_keys(state: PlanState, of: type) -> list[str]:
    """The keys of the plan's config whose values are integers (or lists)."""
    path = config_path(state)
    if path is None:
        return []
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError):
        return []
    if not isinstance(data, dict):
        return []
    return sorted(k for k, v in data.items() if isinstance(v, of) and not isinstance(v, bool))

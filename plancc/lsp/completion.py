"""Completion: the names that fit where the cursor is.

Half-typed text is usually not YAML yet, so the place is read from the text
of the current line and the keys above it, and the names come from the last
version of the plan that parsed: tensors in `reads` and a warm's `tensors`,
stages of the enclosing layer kind in `after`, layer kinds in `forward`, dims
(and params) and config keys inside expressions (`shape`, `streams`, a read's
`share`, a stack's `layers`, a param's `default` and `range`, a prefix's `rows`, a
warm's `guard`), `true`/`false` for `next_layer`, a `collective`'s engines, dtypes,
platforms, the stages of a join (`after: [q_proj, …]`), and warning ids in
`allow` and `lint.ignore` (an error id there would be PC004).
"""

from __future__ import annotations

import json
import re

from lsprotocol import types as lsp

from plancc.lsp import adapter as pc
from plancc.lsp.index import Point, Text
from plancc.lsp.navigation import config_path
from plancc.lsp.state import PlanState

_IN_LIST = re.compile(r"([A-Za-z_]\w*)\s*:\s*\[[^\[\]]*$")
_IN_VALUE = re.compile(r"([A-Za-z_]\w*)\s*:\s*[^:\[\]{},#]*$")
_IN_KINDS = re.compile(r"kinds\s*:\s*\{[^{}]*:\s*\w*$")
_LIST_ITEM = re.compile(r"^(\s*)-\s*[^:#\[\]{}]*$")
_KEY_LINE = re.compile(r"^(\s*)(?:-\s*)?([A-Za-z_]\w*)\s*:\s*(?:#.*)?$")
_EXPRESSION_KEYS = {"shape", "flat", "repeat", "layers", "default", "range", "streams", "share"}
_EXPRESSION_KEYS |= {"rows", "guard"}  # a prefix's rows; a guard's param and bound
_DASH = re.compile(r"^\s*(-)\s")
_NAME_KEY = re.compile(r"(?:^|[\s{,])name\s*:\s*[\"']?([A-Za-z_]\w*)")


def complete(state: PlanState | None, source: str, position: lsp.Position) -> lsp.CompletionList:
    """Completions at ``position`` (its column in code points) of the buffer ``source``."""
    text = Text(source)
    line = text.line(position.line)
    prefix = line[: position.character]
    found = _context(text, position.line, prefix)
    items = _items(state, text, *found) if found else []
    return lsp.CompletionList(is_incomplete=False, items=items)


def _context(text: Text, line: int, prefix: str) -> tuple[str, Point] | None:
    """The key whose value the cursor is in (``"dims:"`` for an entry of `dims`), and
    where that key is."""
    if "#" in prefix:
        return None
    if m := _IN_KINDS.search(prefix):
        return "kinds", (line, m.start())
    if m := _IN_LIST.search(prefix):
        return m.group(1), (line, m.start(1))
    if m := _IN_VALUE.search(prefix):
        key = m.group(1)
        if key in _KEYS or key in _EXPRESSION_KEYS:
            return key, (line, m.start(1))
        indent = len(prefix) - len(prefix.lstrip())
        parent = _parent(text, line, indent, strict=True)
        return (f"{parent[0]}:", parent[1]) if parent and parent[0] in ("dims", "kinds") else None
    if m := _LIST_ITEM.match(prefix):
        return _parent(text, line, len(m.group(1)), strict=False)
    return None


def _parent(text: Text, line: int, indent: int, *, strict: bool) -> tuple[str, Point] | None:
    """The key of the nearest line above that is less indented (or, for an indentless
    list, as indented) and opens a block, and where it is."""
    for n in range(line - 1, -1, -1):
        above = text.line(n)
        if not above.strip() or above.lstrip().startswith("#"):
            continue
        m = _KEY_LINE.match(above)
        depth = len(above) - len(above.lstrip())
        if m and (depth < indent or (not strict and depth == indent)):
            return m.group(2), (n, m.start(2))
        if depth < indent:
            return None
    return None


def _items(state: PlanState | None, text: Text, key: str, at: Point) -> list[lsp.CompletionItem]:  # noqa: C901 (one branch per place in a plan that completes)
    kind = lsp.CompletionItemKind
    if key == "dtype":
        return [_item(n, kind.EnumMember, "dtype") for n in pc.dtype_names()]
    if key == "platform":
        return [_item(n, kind.EnumMember, pc.platform_note(n)) for n in pc.platform_names()]
    if key in ("allow", "ignore"):
        return [_item(c.id, kind.Value, f"{c.name} ({c.severity.value})") for c in pc.silenceable()]
    if key == "next_layer":
        return [_item(v, kind.Value, "cross-layer warm") for v in ("true", "false")]
    if key == "collective":
        return [_item(n, kind.EnumMember, means) for n, means in pc.engines()]
    index = state.index if state is not None else None
    if index is None or state is None:
        return []
    if key in ("reads", "tensors", "tensor"):
        return [_item(n, kind.Variable, "tensor") for n in index.names("tensor")]
    if key in ("after", "deps"):
        scope = _enclosing_kind(state, at[0])
        stages = index.names("stage", scope)
        if key == "deps":  # a stage waits for stages listed before it (PC015)
            this = _stage_name(text, at)
            stages = stages[: stages.index(this)] if this in stages else stages
        return [_item(n, kind.Function, f"stage of {scope}") for n in stages]
    if key in ("forward", "layer", "kinds"):
        return [_item(n, kind.Class, "layer kind") for n in index.names("kind")]
    if key in _EXPRESSION_KEYS or key == "dims:":
        dims = [_item(n, kind.Constant, "dim") for n in index.names("dim")]
        return dims + [_item(n, kind.Constant, "config key") for n in config_keys(state, int)]
    if key == "from_config":
        return [_item(n, kind.Constant, "config list") for n in config_keys(state, list)]
    return []


_KEYS = {"dtype", "platform", "after", "tensor", "layer", "from_config", "reads", "tensors"}
_KEYS |= {"allow", "ignore", "forward", "deps", "next_layer", "collective"}


def _item(label: str, kind: lsp.CompletionItemKind, detail: str | None) -> lsp.CompletionItem:
    return lsp.CompletionItem(label=label, kind=kind, detail=detail)


def _stage_name(text: Text, key: Point) -> str | None:
    """The `name` of the stage entry holding the key at ``key``, typed before or after
    it: the entry starts at the nearest `- ` left of the key, at or above its line, and
    ends before the next line indented as little as that `- `."""
    for n in range(key[0], -1, -1):
        m = _DASH.match(text.line(n))
        if m and (n < key[0] or m.start(1) < key[1]):
            return _name_in(text, n, m.end(1))
    return None


def _name_in(text: Text, start: int, indent: int) -> str | None:
    for n in range(start, len(text.starts)):
        line = text.line(n)
        body = line.lstrip()
        if n > start and body and not body.startswith("#") and len(line) - len(body) < indent:
            return None
        if m := _NAME_KEY.search(line, indent if n == start else 0):
            return m.group(1)
    return None


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
        data = json.loads(pc.read_config_file(path))  # a regular file, capped
    except (OSError, ValueError, RecursionError):
        return []
    if not isinstance(data, dict):
        return []
    return sorted(k for k, v in data.items() if isinstance(v, of) and not isinstance(v, bool))

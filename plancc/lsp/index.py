"""Where every name of a plan is defined and used, with exact ranges: the one map that
hover, completion, navigation, rename, actions and the outline read.

Built from the loaded YAML tree (not the resolved plan), so it covers a plan
with errors too: every name the text spells, whether or not it resolves.
Positions here are 0-based lines and code-point columns; ``server`` converts
them to the client's units.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal, NamedTuple

from plancc.lsp.adapter import (
    COLUMN,
    Document,
    PathT,
    Pos,
    Where,
    line_starts,
    node_at,
    where_of,
)

Kind = Literal["dim", "config", "tensor", "stage", "kind", "warm", "rule"]
Point = tuple[int, int]  # (line, column), 0-based, columns in code points

_NAME = re.compile(r"(?<![0-9A-Za-z_])[A-Za-z_][A-Za-z0-9_]*")
_SIZE = re.compile(r"\s*[0-9.]+\s*[A-Za-z]+\s*$")  # `streams: 427.8 MB`, not an expression


class Span(NamedTuple):  # a named tuple: the outline makes thousands, a frozen dataclass
    # costs several times as much to create
    start: Point
    end: Point

    def contains(self, p: Point) -> bool:
        return self.start <= p <= self.end


class Text:
    """A buffer's text with line starts: offsets <-> points, and plancc positions."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.bom = source.startswith("\ufeff")
        self.starts = line_starts(source)  # LSP's lines: at LF, CRLF and CR only

    def offset(self, p: Point) -> int:
        line = min(p[0], len(self.starts) - 1)
        return min(self.starts[line] + p[1], len(self.source))

    def point(self, offset: int) -> Point:
        lo, hi = 0, len(self.starts) - 1
        while lo < hi:  # the last line start at or before offset
            mid = (lo + hi + 1) // 2
            lo, hi = (mid, hi) if self.starts[mid] <= offset else (lo, mid - 1)
        return lo, offset - self.starts[lo]

    def line(self, n: int) -> str:
        if n >= len(self.starts):
            return ""
        end = self.starts[n + 1] if n + 1 < len(self.starts) else len(self.source)
        return self.source[self.starts[n] : end].rstrip("\r\n")

    def at(self, pos: Pos) -> Point:
        """A plancc position (1-based; a leading BOM is no column) as a point."""
        return self.at_where(where_of(pos.line, pos.col))

    def at_where(self, where: Where) -> Point:
        """``at`` of a position as the loader keeps it (the outline reads thousands)."""
        line = (where >> 32) - 1
        return line, (where & COLUMN) - 1 + (self.bom and line == 0)

    def slice(self, span: Span) -> str:
        return self.source[self.offset(span.start) : self.offset(span.end)]


@dataclass(frozen=True)
class Occurrence:
    kind: Kind
    name: str
    span: Span
    definition: bool
    scope: str | None = None  # the layer kind, for stages

    @property
    def key(self) -> tuple[Kind, str, str | None]:
        return self.kind, self.name, self.scope


@dataclass
class Index:
    """The spans of a document's nodes, and (walked on first use: the outline and the
    inlay hints need none) the occurrences of its names."""

    text: Text
    doc: Document
    pause: Callable[[], object] = lambda: None  # PlanState.pause

    @cached_property
    def _walked(self) -> tuple[list[Occurrence], dict[str, PathT]]:
        # The walker's findings, not the walker: it holds the index, and a cycle would
        # outlive the state in the server, which leaves its states to reference counting.
        walker = _Walker(self, [], {})
        walker.walk()
        return walker.occurrences, walker.warms

    @property
    def occurrences(self) -> list[Occurrence]:
        return self._walked[0]

    @property
    def warms(self) -> dict[str, PathT]:
        """Warm name -> its path in the document (its first definition)."""
        return self._walked[1]

    def at(self, p: Point) -> Occurrence | None:
        return next((o for o in self.occurrences if o.span.contains(p)), None)

    def same(self, occ: Occurrence) -> list[Occurrence]:
        return [o for o in self.occurrences if o.key == occ.key]

    def definition(self, occ: Occurrence) -> Occurrence | None:
        return next((o for o in self.same(occ) if o.definition), None)

    def names(self, kind: Kind, scope: str | None = None) -> list[str]:
        """The defined names of a kind, in plan order (stages: of layer kind ``scope``)."""
        found = (
            o.name
            for o in self.occurrences
            if o.definition and o.kind == kind and (kind != "stage" or o.scope == scope)
        )
        return list(dict.fromkeys(found))

    # -- spans of nodes ----------------------------------------------------------------

    def value_span(self, path: PathT) -> Span | None:
        """The node at ``path``: its start and (for a scalar or flow node) its end."""
        start = self.doc.values.where(path)
        return None if start is None else self._span(start)

    def key_span(self, path: PathT) -> Span | None:
        start = self.doc.keys.where(path)
        return None if start is None else self._span(start)

    def _span(self, start: Where) -> Span:
        return Span(self.text.at_where(start), self.text.at_where(self.doc.ends.end(start)))

    def extent(self, path: PathT) -> Span | None:
        """The whole node at ``path``, block collections included: from its start to the
        end of the last node inside it. The last node inside a collection is inside its
        last entry (keys keep the text's order), so the walk goes down one entry per
        level: an extent costs the depth of the tree, not the size of the document. A
        flow collection's own end is its extent."""
        first = self.value_span(path)
        if first is None:
            return None
        if self.text.source.startswith(("{", "["), self.text.offset(first.start)):
            return first
        node, span, end = self._node(path), first, first.start
        while isinstance(node, (dict, list)) and node:
            if self.text.source.startswith(("{", "["), self.text.offset(span.start)):
                break  # a flow collection: its own end is its extent's
            # A block collection: its own end mark lies past the comments and blank lines
            # after it; its last node is in its last entry.
            last = next(reversed(node)) if isinstance(node, dict) else len(node) - 1
            path, node = (*path, last), node[last]
            key = self.key_span(path)
            end = max(end, key.end) if key is not None else end
            span = self.value_span(path) or Span(end, end)
        return Span(first.start, max(end, span.end))

    def _node(self, path: PathT) -> Any:
        return node_at(self.doc.data, path)

    def name_span(self, path: PathT) -> Span | None:
        """A scalar name's own characters, without quotes."""
        span = self.value_span(path)
        if span is None:
            return None
        text = self.text.slice(span)
        if len(text) >= 2 and text[0] in "'\"" and text[-1] == text[0]:
            return Span((span.start[0], span.start[1] + 1), (span.end[0], span.end[1] - 1))
        return span


@dataclass
class _Walker:
    index: Index
    occurrences: list[Occurrence]
    warms: dict[str, PathT]
    dims: set[str] = field(default_factory=set)

    def add(
        self, kind: Kind, name: Any, span: Span | None, *, define: bool, scope: str | None = None
    ) -> None:
        if isinstance(name, str) and name and span is not None:
            self.index.pause()
            self.occurrences.append(Occurrence(kind, name, span, define, scope))

    def ref(self, kind: Kind, path: PathT, value: Any, scope: str | None = None) -> None:
        self.add(kind, value, self.index.name_span(path), define=False, scope=scope)

    def define_key(self, kind: Kind, path: PathT, scope: str | None = None) -> None:
        self.add(kind, path[-1], self.index.key_span(path), define=True, scope=scope)

    def expr(self, path: PathT, value: Any) -> None:
        """The dim and config names of an expression string, each at its characters."""
        span = self.index.value_span(path)
        if not isinstance(value, str) or span is None:
            return
        text = self.index.text
        base = text.offset(span.start)
        for m in _NAME.finditer(text.slice(span)):
            if m.group() in ("dynamic",):
                continue
            where = Span(text.point(base + m.start()), text.point(base + m.end()))
            kind: Kind = "dim" if m.group() in self.dims else "config"
            self.add(kind, m.group(), where, define=False)

    def exprs(self, path: PathT, items: Any) -> None:
        for i, item in enumerate(items if isinstance(items, list) else ()):
            self.expr((*path, i), item)

    def walk(self) -> None:
        data = self.index.doc.data if isinstance(self.index.doc.data, dict) else {}
        # A param is a name of the dims' namespace, usable wherever a dim is.
        self.dims = {n for key in ("dims", "params") for n, _ in _items(data.get(key))}
        for name, value in _items(data.get("dims")):
            self.define_key("dim", ("dims", name))
            self.expr(("dims", name), value)
        for name, value in _items(data.get("params")):
            self.define_key("dim", ("params", name))
            if isinstance(value, dict):
                self.expr(("params", name, "default"), value.get("default"))
                self.exprs(("params", name, "range"), value.get("range"))
        for name, value in _items(data.get("tensors")):
            self.define_key("tensor", ("tensors", name))
            if isinstance(value, dict):
                self.tensor(name, value)
        for kind, layer in _items(data.get("layers")):
            self.define_key("kind", ("layers", kind))
            if isinstance(layer, dict):
                self.layer(kind, layer)
        self.forward(data.get("forward"))
        lint = data.get("lint")
        if isinstance(lint, dict):
            for i, rid in _entries(lint.get("ignore")):
                self.ref("rule", ("lint", "ignore", i), rid)

    def tensor(self, name: str, value: dict[str, Any]) -> None:
        self.exprs(("tensors", name, "shape"), value.get("shape"))
        self.exprs(("tensors", name, "flat"), value.get("flat"))
        if isinstance(stacked := value.get("stacked"), dict):
            self.expr(("tensors", name, "stacked", "layers"), stacked.get("layers"))

    def stage(self, kind: str, path: PathT, stage: dict[str, Any]) -> None:
        name = self.index.name_span((*path, "name"))
        self.add("stage", stage.get("name"), name, define=True, scope=kind)
        for j, read in _entries(stage.get("reads")):
            if isinstance(read, dict):  # a part of it: `{tensor, share}`
                self.ref("tensor", (*path, "reads", j, "tensor"), read.get("tensor"))
                self.expr((*path, "reads", j, "share"), read.get("share"))
            else:
                self.ref("tensor", (*path, "reads", j), read)
        if not _SIZE.match(str(stage.get("streams", ""))):  # a dim expression
            self.expr((*path, "streams"), stage.get("streams"))
        for j, dep in _entries(stage.get("deps")):
            self.ref("stage", (*path, "deps", j), dep, scope=kind)

    def layer(self, kind: str, layer: dict[str, Any]) -> None:
        base: PathT = ("layers", kind)
        for i, stage in _entries(layer.get("stages")):
            if isinstance(stage, dict):
                self.stage(kind, (*base, "stages", i), stage)
        for i, warm in _entries(layer.get("warms")):
            if isinstance(warm, dict):
                self.warm(kind, (*base, "warms", i), warm)

    def warm(self, kind: str, path: PathT, warm: dict[str, Any]) -> None:
        name = warm.get("name")
        self.add("warm", name, self.index.name_span((*path, "name")), define=True)
        if isinstance(name, str):
            self.warms.setdefault(name, path)
        after = warm.get("after")
        for j, anchor in _entries(after):  # a join: every anchor stage
            self.ref("stage", (*path, "after", j), anchor, scope=kind)
        self.ref("stage", (*path, "after"), after, scope=kind)
        for j, item in _entries(warm.get("tensors")):
            if isinstance(item, dict):
                self.ref("tensor", (*path, "tensors", j, "tensor"), item.get("tensor"))
                self.exprs((*path, "tensors", j, "flat"), item.get("flat"))
                self.exprs((*path, "tensors", j, "rows"), item.get("rows"))  # a prefix
            else:
                self.ref("tensor", (*path, "tensors", j), item)
        guard = warm.get("guard")  # `CTX <= 2272`: the param and the bound's dims
        if isinstance(guard, list):
            self.exprs((*path, "guard"), guard)
        else:
            self.expr((*path, "guard"), guard)
        for j, rid in _entries(warm.get("allow")):
            self.ref("rule", (*path, "allow", j), rid)

    def forward(self, forward: Any) -> None:
        if isinstance(forward, list):
            for i, item in enumerate(forward):
                if isinstance(item, dict):
                    self.ref("kind", ("forward", i, "layer"), item.get("layer"))
                    self.expr(("forward", i, "repeat"), item.get("repeat"))
                else:
                    self.ref("kind", ("forward", i), item)
        elif isinstance(forward, dict):
            self.ref("config", ("forward", "from_config"), forward.get("from_config"))
            for value, kind in _items(forward.get("kinds")):
                self.ref("kind", ("forward", "kinds", value), kind)
            self.expr(("forward", "layers"), forward.get("layers"))


def _items(node: Any) -> Iterator[tuple[str, Any]]:
    return iter(node.items()) if isinstance(node, dict) else iter(())


def _entries(node: Any) -> Iterator[tuple[int, Any]]:
    return enumerate(node) if isinstance(node, list) else iter(())

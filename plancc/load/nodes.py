"""The composer's records (``compose.Composer``): its open collections and anchored
nodes, and the copies aliases stand for."""

from __future__ import annotations

from typing import Any

from plancc.diagnostics import Where

PathT = tuple[str | int, ...]


class Node:
    """A composed node: a collection while it is open, and any node an alias names."""

    __slots__ = (
        "anchored",
        "cend",
        "cstart",
        "data",
        "deepest",
        "depth",
        "end",
        "extra",
        "height",
        "is_map",
        "items",
        "kend",
        "key",
        "key_at",
        "kstart",
        "merge",
        "nodes",
        "open",
        "path",
        "size",
        "start",
        "stop",
        "tag",
        "text",
        "where",
    )

    def __init__(self, where: Where, tag: str, text: str | None) -> None:
        self.where = where
        self.tag = tag
        self.text = text  # a scalar's source text; None for a collection
        self.open = text is None  # a collection, until its end event
        self.anchored = False
        self.merge = False  # a plain `<<`: refused as a key (a YAML 1.1 merge key)
        self.data: Any = None  # a built collection's dict or list
        self.size = 1  # nodes, every alias expanded
        self.height = 0  # levels below it, every alias expanded
        self.path: PathT = ()  # where it was built, and its slices of the positions
        self.start = self.end = self.kstart = self.kend = self.cstart = self.cend = 0
        self.stop: Where = where  # just past its end, once known
        # While open: a mapping's pending key, a sequence's item count, its depth,
        # the deepest level reached inside it, the node counts when it started.
        self.is_map = False
        self.key: str | None = None
        self.key_at: Where = where
        self.items = self.depth = self.deepest = self.nodes = self.extra = 0


class Pending:
    """An alias of a collection, copied once the document is read: where its copy
    goes, and (once copied) its positions' slices of the composer's lists."""

    __slots__ = ("end", "into", "kend", "kstart", "node", "path", "start")

    def __init__(self, path: PathT, node: Node, into: Any) -> None:
        self.path = path
        self.node = node
        self.into = into  # the dict or list holding it
        self.start = self.end = self.kstart = self.kend = 0


def copy_tree(value: Any) -> Any:
    """A copy of a built tree (dicts, lists and scalars; no cycle, at most MAX_DEPTH
    deep): four times faster than ``copy.deepcopy``, which an alias bomb would feel."""
    if isinstance(value, list):
        return [copy_tree(v) for v in value]
    if isinstance(value, dict):
        return {k: copy_tree(v) for k, v in value.items()}
    return value

"""Stage 1, load (second half): YAML events -> the plain tree and every node's position.

One pass over the parser's events, without recursion, whichever parser made
them (ruamel's C parser or its pure-Python one: ``load`` picks), so both give
the same tree, the same positions and the same diagnostics. Every limit is
checked as the events arrive, so no input costs more than linear time:

- the node past ``MAX_NODES`` in the text (an alias counting as one) stops
  reading;
- a node deeper than ``MAX_DEPTH`` stops reading, before the parser has to
  track the deeper levels;
- each node's size and height with every alias expanded are added up once,
  from its children's (an alias adds its anchor's), so an alias bomb is caught
  without being expanded; an alias's copy of its anchor is made only once the
  document has been read without a problem.

Problems rank as follows: one that stops reading (a YAML error, an undefined
alias, a second document, a limit above) wins; then the first problem of the
graph (a recursive alias, a size over the limit, an alias whose expansion
nests too deep); then the first problem of the tree (a key that is not a
scalar, a merge key, a duplicate key, a tag or scalar plancc does not take).
After the first problem nothing more is built, but the events are still read
to the end, so a YAML error further on is still the one reported.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from plancc.diagnostics import Where, pos_of
from plancc.load.nodes import Node, PathT, Pending, copy_tree
from plancc.load.scalars import MAP, MERGE, NULL, SEQ, STR, core_tag, scalar, unsupported

# Aliases are allowed, but the tree they stand for is bounded: an alias bomb is
# rejected by adding up node sizes, never by expanding them.
MAX_NODES = 500_000
TOO_MANY_NODES = "the document has more than {:,} nodes, counting each alias expanded"
MAX_DEPTH = 64
TOO_DEEP = "nesting deeper than {} levels"

# The tree, each value's and key's start, each node's end (by its start), and the paths
# of the nodes aliases share (``Composer.aliased``).
Composed = tuple[Any, dict[PathT, Where], dict[PathT, Where], dict[Where, Where], frozenset[PathT]]


class Reject(Exception):
    """A document plancc does not take: where, and why (a PC001 message)."""

    def __init__(self, where: Where, message: str) -> None:
        super().__init__(message)
        self.pos = pos_of(where)
        self.message = message


def mark_where(mark: Any) -> Where:
    line: int = mark.line
    column: int = mark.column
    return (line + 1) << 32 | (column + 1)


class Composer:
    """YAML events in; ``(data, values, keys, ends)`` out, or a ``Reject``.

    ``next_event`` is a parser's ``get_event`` (or an event generator's
    ``__next__``); whatever it raises (a YAML error) passes through. Without
    ``build`` nothing is built, only the problems that stop reading and those of
    the graph are looked for. ``restore`` maps characters back in every scalar."""

    def __init__(
        self,
        next_event: Callable[[], Any],
        *,
        build: bool = True,
        restore: dict[int, str] | None = None,
    ) -> None:
        self.next_event = next_event
        self.restore = restore  # for str.translate
        self.values: list[tuple[PathT, Where]] = []
        self.keys: list[tuple[PathT, Where]] = []
        # Where each node starts -> just past its end (the innermost of nodes starting together).
        self.ends: dict[Where, Where] = {}
        self.anchors: dict[str, Node] = {}
        self.anchored_open = 0  # anchored collections open: depths are tracked
        self.nodes = 0  # node events so far (an alias is one)
        self.extra = 0  # nodes that aliases add when expanded
        self.graph_error: Reject | None = None
        self.tree_error: Reject | None = None
        self.build = build
        self.building = build  # until the first problem; after it, only counting
        # Aliases placed, copied once the document is read without a problem: an
        # alias bomb cut short (a YAML error at its end) costs no copies.
        self.copies: list[Pending] = []
        # Where an alias stands, and the anchored node it names: one text, two or more
        # places in the tree (an edit of one would edit the others: no fix is offered).
        self.aliased: set[PathT] = set()

    def compose(self) -> Composed:
        from ruamel.yaml.composer import ComposerError  # noqa: PLC0415 (ruamel loads with the first plan)
        from ruamel.yaml.events import StreamEndEvent  # noqa: PLC0415 (ruamel loads with the first plan)

        self.next_event()  # STREAM-START
        event = self.next_event()  # DOCUMENT-START, unless the stream is empty
        if isinstance(event, StreamEndEvent):
            return None, {}, {}, {}, frozenset()
        data = self._document()
        self.next_event()  # DOCUMENT-END
        event = self.next_event()
        if not isinstance(event, StreamEndEvent):  # worded as ruamel's composer words it
            raise ComposerError(
                "expected a single document in the stream",
                None,
                "but found another document",
                event.start_mark,
            )
        error = self.graph_error or self.tree_error
        if error is not None:
            raise error
        if not self.build:
            return None, {}, {}, {}, frozenset()
        assert self.building, "building stops only at a problem"
        for copy in self.copies:
            self._expand(copy)
        return data, dict(self.values), dict(self.keys), self.ends, frozenset(self.aliased)

    def _graph_problem(self, where: Where, message: str) -> None:
        if self.graph_error is None:
            self.graph_error = Reject(where, message)
        self.building = False

    def _tree_problem(self, where: Where, message: str) -> None:
        if self.tree_error is None:
            self.tree_error = Reject(where, message)
        self.building = False

    def _document(self) -> Any:  # noqa: C901, PLR0912, PLR0915 (one loop over the events, each kind inline: a call per event would cost a third of the load)
        """The root's data, composed from the events after DOCUMENT-START.

        The loop runs once per event; a plain scalar in a collection (most of a
        plan) is handled in it, everything else in the methods it calls."""
        from ruamel.yaml.events import (  # noqa: PLC0415 (ruamel loads with the first plan)
            AliasEvent,
            MappingEndEvent,
            MappingStartEvent,
            ScalarEvent,
            SequenceEndEvent,
        )

        stack: list[Node] = []
        root: list[Any] = []  # the root's data, once placed
        values, keys, next_event = self.values, self.keys, self.next_event
        tags: dict[str, str] = {}  # plain scalar -> its core tag, each text worked out once
        while True:
            event = next_event()
            cls = type(event)
            if cls is MappingEndEvent or cls is SequenceEndEvent:
                self._end(stack, event)
                if not stack:
                    return root[0] if root else None
                continue
            self.nodes += 1
            if self.nodes > MAX_NODES:
                raise Reject(mark_where(event.start_mark), TOO_MANY_NODES.format(MAX_NODES))
            depth = len(stack)
            if depth > MAX_DEPTH:  # stop: each deeper level costs the parser more
                raise self.graph_error or Reject(
                    mark_where(event.start_mark), TOO_DEEP.format(MAX_DEPTH)
                )
            if cls is not ScalarEvent:
                if cls is AliasEvent:
                    node = self._alias(event, depth)
                    self._child(stack[-1], node, depth, alias=True)
                else:
                    stack.append(self._start(event, cls is MappingStartEvent, stack, root))
                continue
            text = event.value
            if self.restore:
                text = text.translate(self.restore)
            plain = False
            if event.ctag is not None:  # the non-specific `!` makes a string (YAML 1.2)
                tag = STR if str(event.ctag) == "!" else str(event.ctag)
            elif not event.implicit[0]:
                tag = STR
            else:
                plain = True
                tag = tags.get(text) or tags.setdefault(text, core_tag(text))
            mark, end = event.start_mark, event.end_mark
            where = (mark.line + 1) << 32 | (mark.column + 1)
            stop = (end.line + 1) << 32 | (end.column + 1)
            if event.anchor is not None or not stack:
                node = Node(where, tag, text)
                node.stop = stop
                node.merge = plain and text == "<<"
                if event.anchor is not None:
                    self.anchors[event.anchor] = node
                if not stack:
                    self._place(None, node, root)
                    return root[0] if root else None
                self._child(stack[-1], node, depth)
                continue
            parent = stack[-1]
            if parent.is_map and parent.key is None:  # a plain key
                parent.key, parent.key_at = text, where
                if self.building:
                    if plain and text == "<<":
                        tag = MERGE  # a YAML 1.1 merge key, refused (not taken as a key)
                    if tag == MERGE or text in parent.data:
                        self._bad_key(parent, text, tag, where)
                    else:
                        keys.append(((*parent.path, text), where))
                        self.ends[where] = stop
            else:  # a plain value or item
                name: str | int
                if parent.is_map:
                    name = parent.key or ""
                    parent.key = None
                else:
                    name = parent.items
                    parent.items += 1
                if self.building:
                    if tag is STR:
                        data: Any = text
                    else:
                        if tag == NULL and not text and parent.is_map:
                            where = stop = parent.key_at  # no text of its own: its key's
                        try:
                            data = scalar(tag, text)
                        except ValueError as exc:
                            self._tree_problem(where, str(exc))
                    if self.building:
                        values.append(((*parent.path, name), where))
                        self.ends.setdefault(where, stop)
                        if parent.is_map:
                            parent.data[name] = data
                        else:
                            parent.data.append(data)
            if self.anchored_open or self.extra:
                self._counted(parent, depth)

    def _start(self, event: Any, is_map: bool, stack: list[Node], root: list[Any]) -> Node:
        """A collection starts: placed (as a value) or refused (as a key)."""
        tag = None if event.ctag is None else str(event.ctag)
        if tag is None or tag == "!":
            tag = MAP if is_map else SEQ
        node = Node(mark_where(event.start_mark), tag, None)
        if event.anchor is not None:
            self.anchors[event.anchor] = node
            self.anchored_open += 1
            node.anchored = True
        parent = stack[-1] if stack else None
        if parent is not None and parent.is_map and parent.key is None:
            self._key(parent, node)
        else:
            if self.building and tag != (MAP if is_map else SEQ):
                self._tree_problem(node.where, unsupported(tag))
            self._place(parent, node, root)
        node.is_map = is_map
        node.depth = node.deepest = len(stack)
        node.nodes, node.extra = self.nodes, self.extra
        node.kstart = len(self.keys)
        return node

    def _end(self, stack: list[Node], event: Any) -> None:
        """A collection ends: its size and height are known, and count in its parent's."""
        node = stack.pop()
        node.open = False
        node.stop = mark_where(event.end_mark)
        if self.building and node.data is not None:
            self.ends.setdefault(node.where, node.stop)
        node.end, node.kend, node.cend = len(self.values), len(self.keys), len(self.copies)
        node.size = self.nodes - node.nodes + 1 + self.extra - node.extra
        if node.anchored:  # aliases of it may follow: they need its height
            node.height = node.deepest - node.depth
            self.anchored_open -= 1
        if stack and (self.anchored_open or self.extra):
            self._counted(stack[-1], node.deepest)

    def _counted(self, parent: Node, reach: int) -> None:
        """A child of ``parent``, reaching down to depth ``reach``, is complete."""
        parent.deepest = max(parent.deepest, reach)
        # A size passes the limit only through aliases (the node count stops first).
        if self.nodes - parent.nodes + 1 + self.extra - parent.extra > MAX_NODES:
            self._graph_problem(parent.where, TOO_MANY_NODES.format(MAX_NODES))

    def _alias(self, event: Any, depth: int) -> Node:
        from ruamel.yaml.composer import ComposerError  # noqa: PLC0415 (ruamel loads with the first plan)

        anchor = event.anchor
        node = self.anchors.get(anchor)
        if node is None:
            raise ComposerError(None, None, f"found undefined alias {anchor!r}", event.start_mark)
        if node.open:
            self._graph_problem(node.where, "recursive alias")
        else:
            if depth + node.height > MAX_DEPTH:
                self._graph_problem(mark_where(event.start_mark), TOO_DEEP.format(MAX_DEPTH))
            self.extra += node.size - 1
            if self.nodes + self.extra > MAX_NODES:
                # Past the limit: some node's size will pass it too, and be reported
                # where it does; until then, build no more than the limit.
                self.building = False
        return node

    def _child(self, parent: Node, node: Node, depth: int, alias: bool = False) -> None:
        """An anchored scalar or an alias, as a key or as a value."""
        if self.anchored_open or self.extra:  # before an alias is copied: it may pass the limit
            self._counted(parent, depth + node.height)
        if parent.is_map and parent.key is None:
            self._key(parent, node)
        else:
            self._place(parent, node, [], alias)

    def _key(self, parent: Node, node: Node) -> None:
        parent.key_at = node.where
        if node.text is None:
            parent.key = ""  # never read: nothing is built from here on
            self._tree_problem(node.where, "a mapping key must be a plain scalar")
            return
        parent.key = node.text
        if self.building:
            tag = MERGE if node.merge else node.tag
            if tag == MERGE or node.text in parent.data:
                self._bad_key(parent, node.text, tag, node.where)
            else:
                self.keys.append(((*parent.path, node.text), node.where))
                self.ends[node.where] = node.stop

    def _bad_key(self, parent: Node, name: str, tag: str, where: Where) -> None:
        if tag == MERGE:
            self._tree_problem(where, "merge keys (<<) are not supported")
            return
        first = pos_of(dict(self.keys[parent.kstart :])[(*parent.path, name)])
        message = f"duplicate key '{name}' (first defined at {first.line}:{first.col})"
        self._tree_problem(where, message)

    def _place(  # noqa: C901, PLR0912 (every place a node can go (root, item, key, value) with its limits, together)
        self, parent: Node | None, node: Node, root: list[Any], alias: bool = False
    ) -> None:
        """Build ``node`` as the root, a list item or the pending key's value, with its
        position; a collection as it starts, empty. Nothing once not building."""
        key_at = None
        if parent is None:
            path: PathT = ()
        elif parent.is_map:
            key_at = parent.key_at
            path = (*parent.path, parent.key or "")
            parent.key = None
        else:
            path = (*parent.path, parent.items)
            parent.items += 1
        if not self.building:
            return
        if alias:  # the anchor's path was set where it was placed (a key's: the root)
            self.aliased.update((path, node.path))
        where = node.where
        data: Any
        if node.text is not None:
            if not alias:
                node.path = path  # an anchored scalar: where its aliases' edits would land
            if key_at is not None and node.tag == NULL and node.text == "":
                where = key_at  # an empty value has no text of its own: point at its key
            try:
                data = scalar(node.tag, node.text)
            except ValueError as exc:
                self._tree_problem(where, str(exc))
                return
            self.values.append((path, where))
            if where == node.where:
                self.ends.setdefault(where, node.stop)
        elif alias:  # its anchor's tree, copied once the document is read (``_expand``)
            assert parent is not None, "an alias at the root names no anchor"
            self.values.append((path, where))
            self.ends.setdefault(where, node.stop)
            data = None
            self.copies.append(Pending(path, node, parent.data))
        else:  # a collection as it starts: its entries follow its own
            node.path, node.start, node.cstart = path, len(self.values), len(self.copies)
            self.values.append((path, where))
            data = node.data = {} if node.tag == MAP else []
        if parent is None:
            root.append(data)
        elif parent.is_map:
            parent.data[path[-1]] = data
        else:
            parent.data.append(data)

    def _expand(self, copy: Pending) -> None:
        """An alias's copy of its anchor's tree, with the anchor's positions. The
        aliases inside the anchor came first: their copies are in its tree already,
        their positions where ``_expand`` appended them."""
        node, path = copy.node, copy.path
        cut = len(node.path)
        values, keys = self.values, self.keys
        inner = self.copies[node.cstart : node.cend]
        copy.start, copy.kstart = len(values), len(keys)
        for span in (values[node.start + 1 : node.end], *(values[c.start : c.end] for c in inner)):
            values += [(path + p[cut:], w) for p, w in span]
        for span in (keys[node.kstart : node.kend], *(keys[c.kstart : c.kend] for c in inner)):
            keys += [(path + p[cut:], w) for p, w in span]
        copy.end, copy.kend = len(values), len(keys)
        copy.into[path[-1]] = copy_tree(node.data)

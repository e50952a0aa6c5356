"""Stage 1, load (fast path): the YAML plans are written in, read line by line.

Plans use a small part of YAML: block mappings and sequences, one-line flow
collections, plain scalars and comments. ``scan`` reads exactly that part with
a few regular expressions, several times faster than composing the parser's
events (no event, mark or node object per node), and gives the same tree,
positions and ends as ``compose.Composer`` (without ranges, the positions inside
most one-line flow mappings on the first question about them: ``flowmap``).

Anything outside that part, however harmless, makes ``scan`` give up (None):
quotes, anchors, aliases, tags, block scalars, a scalar over two lines, a flow
collection over two lines, an empty value, a `:` or `#` inside a value, a
duplicate, unusual or very long key, `<<`, an unexpected indentation, a
document marker, a CR, a limit reached. The loader
then composes the text from the parser's events, which also words every error,
so a plan gets the same result and the same diagnostics either way; the tests
hold both to that over the corpus and generated plans.
"""

from __future__ import annotations

import re
from typing import Any

from plancc import compose
from plancc.compose import PathT
from plancc.diagnostics import Where
from plancc.flowmap import LONGEST_KEY, SIMPLE_ITEM, Folds, simple_entries
from plancc.scalars import STR, core_tag, scalar

# A block line: its indent, a sequence entry's dash, a key (a name-like plain
# scalar followed by `:` and a space or the end), and the rest of the line.
_NAME = r"[A-Za-z0-9_][A-Za-z0-9_.-]*"  # the keys read here: a name-like plain scalar
_LINE = re.compile(rf"( *)(- +)?(?:({_NAME}):(?: +|\Z))?")
# First characters a block plain scalar may not start with here: indicators,
# quotes, and `-`, `?`, `:` (taken only before a safe character: that case is
# checked apart). A `[` or `{` starts a flow collection instead.
_NOT_PLAIN_START = frozenset("?:,]}#&*!|>'\"%@`")
_INDICATOR_COLON = re.compile(r":(?: |$)")  # a `:` that would end a block plain scalar

# ``ends`` is None when not worked out, ``folds`` when there are none (see ``scan``).
Tree = tuple[Any, dict[PathT, Where], dict[PathT, Where], dict[Where, Where] | None, "Folds | None"]


class _GiveUp(Exception):
    """The text is outside what ``scan`` reads: compose it from events instead."""


class _Block:
    """An open block collection: the column its entries start at (1-based), its data,
    path and start, and whether it is a sequence at its key's own indentation."""

    __slots__ = ("col", "data", "indentless", "is_map", "path", "where")

    def __init__(self, col: int, data: Any, path: PathT, where: Where, *, indentless: bool) -> None:
        self.col = col
        self.is_map = type(data) is dict
        self.data = data
        self.path = path
        self.where = where
        self.indentless = indentless


def scan(text: str, *, ranges: bool = True) -> Tree | None:
    """``(data, values, keys, ends, folds)``, the first four as ``Composer.compose``
    gives them, or None when the text is outside the part of YAML read here.

    Without ``ranges``, ``ends`` is None, not worked out: only an editor asks where a
    node ends. Then the positions inside most one-line flow mappings are not recorded
    either, but kept folded (``folds``: see ``Folds``): a check asks for a handful."""
    if "\r" in text or "\t" in text:
        return None
    try:
        return _Scanner(text, ranges).run()
    except _GiveUp:
        return None


class _Scanner:
    def __init__(self, text: str, ranges: bool) -> None:
        self.text = text
        self.ranges = ranges
        self.values: dict[PathT, Where] = {}  # every path is new: a duplicate key gives up
        self.keys: dict[PathT, Where] = {}
        self.ends: dict[Where, Where] = {}
        self.tags: dict[str, tuple[str, Any]] = {}  # plain text -> (tag, value), once each
        self.name = ""  # the key a flow mapping's next value goes under
        self.key_path: PathT = ()  # and its path
        self.names: set[str] = set()  # flow mapping keys known to be name-like
        self.folds = Folds(self.values, self.keys)
        self.folded_nodes = 0  # the nodes inside them, which have no position recorded

    def run(self) -> Tree:  # noqa: C901, PLR0912, PLR0915 (the scanner's loop over lines, each form inline (goes with the scanner))
        lines = self.text.split("\n")
        stack: list[_Block] = []
        values, keys, ends, ranges = self.values, self.keys, self.ends, self.ranges
        pending: tuple[_Block, str] | None = None  # a key whose value starts on a later line
        root: Any = None
        line_no = 0
        for line in lines:
            line_no += 1
            m = _LINE.match(line)
            assert m is not None  # every part is optional
            indent, dash, key = m.group(1), m.group(2), m.group(3)
            rest_at = m.end()
            if dash is None and key is None:
                if rest_at < len(line) and line[rest_at] != "#":
                    raise _GiveUp  # a line that starts with neither `- ` nor a key
                continue  # a blank line, or a comment line
            col = len(indent) + 1
            here: Where = line_no << 32 | col
            if pending is not None:  # the pending key's value: a nested block collection
                parent, name = pending
                pending = None
                if col > parent.col or (col == parent.col and dash is not None):
                    data: Any = [] if dash is not None else {}
                    path = (*parent.path, name)
                    block = _Block(col, data, path, here, indentless=col == parent.col)
                    parent.data[name] = block.data
                    values[block.path] = here
                    self._push(stack, block)
                else:
                    raise _GiveUp  # an empty value: the composer places its null
            elif not stack:  # the root
                root = [] if dash is not None else {}
                stack.append(_Block(col, root, (), here, indentless=False))
                values[()] = here
            else:
                while stack and (
                    stack[-1].col > col
                    or (stack[-1].indentless and stack[-1].col == col and dash is None)
                ):
                    self._close(stack.pop(), here)
                if not stack:
                    raise _GiveUp  # a second root
            top = stack[-1]
            if top.col != col or top.is_map != (dash is None):
                raise _GiveUp  # an indentation or entry the composer must judge
            if dash is not None:
                item_col = col + len(dash)
                item_path: PathT = (*top.path, len(top.data))
                item_where = line_no << 32 | item_col
                if key is not None:  # `- key: ...`: a block mapping as the item
                    block = _Block(item_col, {}, item_path, item_where, indentless=False)
                    top.data.append(block.data)
                    values[item_path] = item_where
                    self._push(stack, block)
                    top = block
                    col = item_col
                    here = item_where
                elif rest_at == len(line) or line[rest_at] == "#":
                    raise _GiveUp  # `-` alone: the item starts on a later line
                else:
                    top.data.append(self._value(line, rest_at, line_no, item_path, len(stack)))
                    continue
            # A key of ``top``, at ``here``.
            assert key is not None
            if key in top.data or len(key) > LONGEST_KEY:
                raise _GiveUp  # a duplicate key, or one too long: the composer words it
            key_path = (*top.path, key)
            keys[key_path] = here
            if ranges:
                ends[here] = line_no << 32 | (col + len(key))
            if rest_at == len(line) or line[rest_at] == "#":
                pending = (top, key)
                top.data[key] = None  # placed when its value starts
            else:
                top.data[key] = self._value(line, rest_at, line_no, key_path, len(stack))
        if pending is not None:
            raise _GiveUp  # an empty value at the end
        if root is None:
            raise _GiveUp  # no node: an empty document or only comments
        if len(values) + len(keys) + self.folded_nodes > compose.MAX_NODES:
            raise _GiveUp  # every node is one entry of either: the composer says where
        stop = _stream_end(lines)
        while stack:
            self._close(stack.pop(), stop)
        return (
            root,
            values,
            keys,
            ends if ranges else None,
            self.folds if self.folds.lines else None,
        )

    @staticmethod
    def _push(stack: list[_Block], block: _Block) -> None:
        if len(stack) >= compose.MAX_DEPTH:
            raise _GiveUp  # its entries would pass the limit: the composer says where
        stack.append(block)

    def _close(self, block: _Block, stop: Where) -> None:
        if self.ranges:
            self.ends.setdefault(block.where, stop)

    def _value(self, line: str, at: int, line_no: int, path: PathT, depth: int) -> Any:
        """The value starting at ``line[at]`` (a plain scalar or a flow collection),
        which must end the line, but for a comment."""
        first = line[at]
        if first == "{" and not self.ranges and depth + 2 < compose.MAX_DEPTH:
            simple = self._simple_map(line, at, line_no << 32, path)
            if simple is not None:
                return simple
        if first in "[{":
            return self._flow(line, at, line_no, path, depth)
        hash_at = line.find(" #", at)
        text = (line if hash_at < 0 else line[:hash_at]).rstrip(" ")[at:]
        return self._plain(text, line_no << 32 | (at + 1), path, block=True)

    def _flow(self, line: str, at: int, line_no: int, path: PathT, depth: int) -> Any:  # noqa: C901, PLR0912, PLR0915 (a flow collection's pieces in one loop (goes with the scanner))
        """The flow collection at ``line[at]``, which must end the line but for a comment.

        The line is cut at its brackets and commas (one ``re.split``, in C); each piece
        between two of them is spaces, a value, or a mapping's key and its value."""
        line_at = line_no << 32
        pieces = _FLOW_SPLIT.split(line[at:])  # pieces[0] is "": `[` or `{` is at `at`
        i = at  # where pieces[k] starts
        stack: list[tuple[Any, PathT, Where]] = []  # open collections: data, path, start
        data: Any = None
        out: Any = None
        item_path = path  # where the next value goes
        state = _SLOT
        for k in range(1, len(pieces), 2):
            punct, piece = pieces[k], pieces[k + 1]
            if punct == ",":
                if state is not _SEP:
                    raise _GiveUp
                if type(data) is list:
                    item_path = (*stack[-1][1], len(data))
                    state = self._item(piece, i + 1, line_at, item_path, data, blank=_SLOT)
                else:
                    state = self._entry(piece, i + 1, line_at, stack[-1][1], data)
                    item_path = self.key_path
            elif punct in "[{":
                if (state is not _SLOT and state is not _SLOT_OR_CLOSE) or (
                    len(stack) + depth >= compose.MAX_DEPTH  # the composer says where the limit is
                ):
                    raise _GiveUp
                where = line_at | (i + 1)
                self.values[item_path] = where
                new: Any = [] if punct == "[" else {}
                if data is None:
                    out = new
                elif type(data) is list:
                    data.append(new)
                else:
                    data[self.name] = new
                stack.append((new, item_path, where))
                data = new
                if punct == "[":
                    item_path = (*item_path, 0)
                    state = self._item(piece, i + 1, line_at, item_path, data, blank=_SLOT_OR_CLOSE)
                elif piece.strip(" "):
                    state = self._entry(piece, i + 1, line_at, item_path, data)
                    item_path = self.key_path
                else:
                    state = _EMPTY_MAP
            else:  # `]` or `}`
                if (punct == "]") is not (type(data) is list) or not (
                    state is _SEP
                    or (state is _SLOT_OR_CLOSE and punct == "]")
                    or (state is _EMPTY_MAP and punct == "}")
                ):
                    raise _GiveUp
                start = stack.pop()[2]
                if self.ranges:
                    self.ends.setdefault(start, line_at | (i + 2))
                if not stack:
                    tail = "".join(pieces[k + 1 :])  # a comment may have brackets and commas
                    rest = tail.lstrip(" ")
                    if rest and (rest[0] != "#" or rest == tail):
                        raise _GiveUp  # more after the collection than a comment
                    return out
                if piece.strip(" "):
                    raise _GiveUp
                data = stack[-1][0]
                state = _SEP
            i += 1 + len(piece)
        raise _GiveUp  # not closed on this line

    def _simple_map(self, line: str, at: int, line_at: int, path: PathT) -> Any:
        """The flow mapping at ``line[at]`` when every value in it is a plain scalar or a
        flat sequence of them, and only a comment follows (most lines of a plan); else
        None, with nothing recorded, for ``_flow``. Each entry is one match of a regular
        expression, not cut piece by piece; the result is ``_flow``'s (the tests hold
        both to the composer's). Only the mapping's own start is recorded: where its
        entries are is worked out from the line when first asked (``Folds``)."""
        entries = simple_entries(line, at)
        if entries is None:
            return None
        self.values[path] = line_at | (at + 1)
        self.folds.lines[path] = line
        data: dict[str, Any] = {}
        nodes = 0
        for entry in entries:
            key, text = entry.group(1, 2)
            if key in data:
                raise _GiveUp  # a duplicate key: the composer words it
            if text is not None:
                data[key] = self._value_of(text)
                nodes += 2
                continue
            start, end = entry.span(3)
            items = [self._value_of(item) for item in SIMPLE_ITEM.findall(line, start + 1, end)]
            data[key] = items
            nodes += 2 + len(items)  # its key, the sequence, its items
        self.folded_nodes += nodes
        return data

    def _item(
        self, piece: str, i: int, line_at: int, path: PathT, data: list[Any], *, blank: object
    ) -> object:
        """A sequence's item in ``piece`` (at ``i``), if any: the next state; ``blank``
        when the piece is only spaces."""
        text = piece.strip(" ")
        if not text:
            return blank
        data.append(self._plain(text, line_at | (i + 1 + piece.index(text[0])), path))
        return _SEP

    def _entry(self, piece: str, i: int, line_at: int, path: PathT, data: dict[str, Any]) -> object:
        """A mapping's key and value in ``piece`` (at ``i``): the next state."""
        key, colon, rest = piece.partition(":")
        lead = len(key) - len(key.lstrip(" "))
        key = key[lead:]
        if not colon or not rest.startswith(" ") or key in data or len(key) > LONGEST_KEY:
            raise _GiveUp  # no key, `a:b` (one scalar to YAML 1.2), a duplicate, too long
        if key not in self.names:
            if not _KEY.match(key):
                raise _GiveUp  # an unusual key: the composer judges it
            self.names.add(key)
        where = line_at | (i + lead + 1)
        key_path = self.key_path = (*path, key)
        self.keys[key_path] = where
        if self.ranges:
            self.ends[where] = where + len(key)
        self.name = key
        text = rest.strip(" ")
        if not text:
            data[key] = None  # replaced when its collection opens
            return _SLOT
        at = i + len(piece) - len(rest.lstrip(" "))
        data[key] = self._plain(text, line_at | (at + 1), key_path)
        return _SEP

    def _plain(self, text: str, where: Where, path: PathT, *, block: bool = False) -> Any:
        """A plain scalar (a block value, or in a flow collection, cut at its commas and
        brackets): its value, recorded at ``where``. One starting with an indicator, or
        with a `:` or `#` anywhere, is left to the composer: a key or comment inside a
        value, or a character both contexts read apart; but a block value may hold a `:`
        followed by neither a space nor its end (`source: x.py:layer`), which YAML reads
        as part of the scalar in block context."""
        if text not in self.tags:
            first = text[0]
            if (
                first in _NOT_PLAIN_START
                or (first == "-" and text[1:2] in ("", " "))
                or (":" in text and (not block or _INDICATOR_COLON.search(text) is not None))
                or "#" in text
            ):
                raise _GiveUp
        self.values[path] = where
        if self.ranges:
            self.ends.setdefault(where, where + len(text))
        return self._value_of(text)

    def _value_of(self, text: str) -> Any:
        """The value of ``text``, a plain scalar here, typed once per distinct text."""
        known = self.tags.get(text)
        if known is None:
            known = self.tags[text] = _typed(text)
        return known[1]


# What may follow in a flow collection: a nested collection (_SLOT), that or the
# end of an empty sequence, the end of an empty mapping, a comma or the end.
_SLOT, _SLOT_OR_CLOSE, _EMPTY_MAP, _SEP = (object() for _ in range(4))
_FLOW_SPLIT = re.compile(r"([\[\]{},])")
_KEY = re.compile(rf"{_NAME}\Z")


def _typed(text: str) -> tuple[str, Any]:
    """A plain scalar's tag and value; gives up on one with no value (the composer words
    why): ``<<`` (a merge, also as a value) or a number past 64 bits."""
    if text == "<<":
        raise _GiveUp
    tag = core_tag(text)
    if tag is STR:
        return tag, text
    try:
        return tag, scalar(tag, text)
    except ValueError:
        raise _GiveUp from None


def _stream_end(lines: list[str]) -> Where:
    """Where the parser's stream ends: after the last line break, or after the last
    character when the text does not end with one."""
    return len(lines) << 32 | (len(lines[-1]) + 1)

"""The one interpreter of a fix: ``Fix`` × a plan's text → the few text edits it makes.

A fix is edits on plan paths (``plancc.fixes``); this module turns them into
replacements of the plan's text, found through the loader's positions
(``plancc.load.Document``): `validate --fix` and `--diff`, the editor's quick fixes
and "fix all", SARIF's ``replacements`` and `suggest --fix` all call it, so they
write the same bytes. Nothing else of the text changes: comments, the BOM, line
breaks (LF, CRLF or CR, as ``plancc.load.lines`` counts them), the quoting and
style of every value left alone. `plancc fmt` is not part of fixing.

- ``Replace`` changes the value's own text; a mapping or list replaced by another
  changes only the entries that differ (so an entry's comments stay), and a missing
  key is added as the mapping's last entry;
- ``Remove`` takes an item (or a mapping's entry) with its own lines: the comment
  lines right above it, at its indentation, and its end-of-line comment; in a flow
  collection, the item and one comma, or, written a line an item, its line (the last
  item's closing bracket moves in place of the comma before it; the comment of the
  item before stays). A block list it empties becomes ``[]`` after its key, and the
  line after the list stays;
- ``Reorder`` writes the list's items in their new places (in a block list, each with
  its comment lines);
- ``Append`` follows the list: ``, x`` in a flow list, a ``- x`` line at the items'
  indentation in a block list.

A fix that names a node the text does not have, or one that aliases share (an
alias, or the anchored node it names: ``Document.shared``), is refused
(``FixError``): a fix is offered only where its edit is the whole change.
"""

from __future__ import annotations

import bisect
import difflib
import itertools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from plancc.diagnostics import COLUMN, Diagnostic, Pos, Where
from plancc.fixes import (
    Append,
    Edit,
    Fix,
    Path,
    Remove,
    Reorder,
    Replace,
    Value,
    node_at,
    touched,
)
from plancc.load import Document, lines, load


class FixError(Exception):
    """A fix does not apply to this text: a path names nothing, or a node aliases share."""


@dataclass(frozen=True, order=True)
class TextEdit:
    """Replace ``text[start:end]`` by ``new``: offsets in code points of the plan's text
    as decoded (a leading BOM is its first character)."""

    start: int
    end: int
    new: str


def text_edits(doc: Document, fixes: Sequence[Fix]) -> list[TextEdit]:
    """The text edits that make ``fixes`` (which touch different nodes) on ``doc``'s
    text, in order, none overlapping another. Raises ``FixError``."""
    return _Interpreter(_source(doc)).run([e for f in fixes for e in f.edits])


def apply_edits(text: str, edits: Sequence[TextEdit]) -> str:
    """``text`` with ``edits`` (in order, not overlapping) made."""
    out, at = [], 0
    for e in edits:
        out += [text[at : e.start], e.new]
        at = e.end
    out.append(text[at:])
    return "".join(out)


def diff_edits(old: str, new: str) -> list[TextEdit]:
    """Edits that make ``old`` into ``new``: a run of lines that differ, replaced by its
    new lines (the editor's "fix all": the loop's several passes as one change)."""
    a, b = lines.split(old), lines.split(new)
    starts = [0]
    for line in a:
        starts.append(starts[-1] + len(line))
    out = []
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op != "equal":
            out.append(TextEdit(starts[i1], starts[i2], "".join(b[j1:j2])))
    return out


def apply_fixes(doc: Document, fixes: Sequence[Fix]) -> bytes:
    """``doc``'s bytes with ``fixes`` made: the entry point of every writer of a fix
    (`validate --fix`, `suggest --fix`). Raises ``FixError`` when a fix does not apply,
    or when the text it makes would not load (never, if the interpreter is right)."""
    edits = text_edits(doc, fixes)
    out = apply_edits(doc.raw.decode("utf-8"), edits).encode("utf-8")
    if isinstance(load(doc.file, out), Diagnostic):  # a safety net: the text must read back
        raise FixError("the fixed plan would not read back")
    return out


def position(doc: Document, offset: int) -> Pos:
    """An offset of ``doc``'s text as a plancc position (1-based; a BOM is no column):
    where SARIF's regions and the editor's ranges start and end."""
    return _source(doc).pos(offset)


_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
_COMMENT = re.compile(r"(?:^|(?<=[ \t]))#.*$")  # a comment to the end of a line
_FLOW_REST = re.compile(r"[ \t]*,?[ \t]*(?:#.*)?")  # after a flow item alone on its line
_WORDS = {"null", "true", "false", "nan", "inf"}
_BLOCK_SCALAR = re.compile(r"[|>][0-9+-]*")  # a block scalar's header


def yaml_text(value: Value) -> str:
    """``value`` in YAML flow style: a name plain, any other string double-quoted."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{yaml_text(k)}: {yaml_text(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(yaml_text(v) for v in value) + "]"
    if isinstance(value, str) and _PLAIN.fullmatch(value) and value.lower() not in _WORDS:
        return value
    return json.dumps(value, ensure_ascii=False)


# -- the text and its nodes --------------------------------------------------------------

_MISSING = object()
# The last documents' texts with their line starts, by identity (each kept with its
# document, so an id is not reused while here): SARIF asks for every fix of a plan.
_SOURCES: dict[int, tuple[Document, _Source]] = {}


def _source(doc: Document) -> _Source:
    kept = _SOURCES.get(id(doc))
    if kept is not None and kept[0] is doc:
        return kept[1]
    if len(_SOURCES) >= 4:
        _SOURCES.pop(next(iter(_SOURCES)))
    src = _SOURCES[id(doc)] = (doc, _Source(doc))
    return src[1]


class _Source:
    """A document's text with its line starts: the loader's positions as offsets, and
    each node's extent."""

    def __init__(self, doc: Document) -> None:
        self.doc = doc
        self.text = doc.raw.decode("utf-8")
        self.bom = 1 if self.text.startswith("\ufeff") else 0
        self.starts = lines.starts(self.text)
        self.starts[0] = self.bom  # the loader's columns do not count a BOM
        self.nl = lines.newline(self.text)

    def off(self, where: Where) -> int:
        line = min((where >> 32) - 1, len(self.starts) - 1)
        return min(self.starts[line] + (where & COLUMN) - 1, len(self.text))

    def pos(self, offset: int) -> Pos:
        line = bisect.bisect_right(self.starts, offset) - 1
        return Pos(line + 1, offset - self.starts[line] + 1)

    def line_start(self, offset: int) -> int:
        return self.starts[max(bisect.bisect_right(self.starts, offset) - 1, 0)]

    def line_end(self, offset: int) -> int:
        """Where the line holding ``offset`` ends, before its break."""
        m = lines.BREAK.search(self.text, offset)
        return m.start() if m else len(self.text)

    def next_line(self, offset: int) -> int:
        """Where the line after the one holding ``offset`` starts (the text's end)."""
        m = lines.BREAK.search(self.text, offset)
        return m.end() if m else len(self.text)

    def data(self, path: Path) -> Any:
        return node_at(self.doc.data, path, _MISSING)

    def start(self, path: Path) -> int:
        where = self.doc.values.where(path)
        if where is None:
            raise FixError(f"nothing at {_name(path)}")
        return self.off(where)

    def key_start(self, path: Path) -> int:
        where = self.doc.keys.where(path)
        if where is None:
            raise FixError(f"no key at {_name(path)}")
        return self.off(where)

    def key_end(self, path: Path) -> int:
        where = self.doc.keys.where(path)
        if where is None:
            raise FixError(f"no key at {_name(path)}")
        return self.off(self.doc.ends.end(where))

    def flow(self, path: Path) -> bool:
        """Whether the collection at ``path`` is written in flow style."""
        return self.text.startswith(("[", "{"), self.start(path))

    def empty(self, path: Path) -> bool:
        """Whether the value at ``path`` has no text (``key:`` alone: null)."""
        where = self.doc.values.where(path)
        return where is not None and where == self.doc.keys.where(path)

    def end(self, path: Path) -> int:
        """Where the node at ``path`` ends: a block collection's at the end of its last
        node (its own end mark lies past the comments and blank lines after it). The
        last node inside a collection is in its last entry: one entry per level."""
        where = self.doc.values.where(path)
        if where is None:
            raise FixError(f"nothing at {_name(path)}")
        node, end = self.data(path), where
        while isinstance(node, dict | list) and node and not self.flow(path):
            # A block collection: its own end mark lies past the comments and blank lines
            # after it; its last node is in its last entry.
            last = next(reversed(node)) if isinstance(node, dict) else len(node) - 1
            path, node = (*path, last), node[last]
            key = self.doc.keys.where(path)
            end = max(end, where, self.doc.ends.end(key) if key is not None else end)
            where = self.doc.values.where(path) or end
        return self._content_end(self.off(where), self.off(max(end, self.doc.ends.end(where))))

    def _content_end(self, start: int, end: int) -> int:
        """Where the node from ``start`` to ``end`` (its end mark) ends as text: a block
        scalar's (``|``, ``>``) end mark lies at the start of the line after it, past the
        blank lines that end it; it ends before its last line's break, and the blank lines
        stay with the text after it, unless they are its value (``|+`` keeps them)."""
        header = _BLOCK_SCALAR.match(self.text, start)
        if header is None or end != self.line_start(end) or end <= start:
            return end
        if "+" in header.group():
            return self.line_end(self.line_start(end - 1))
        at = end
        while True:
            above = self.line_start(at - 1)
            if above <= start or self.text[above : self.line_end(above)].strip(" \t"):
                return self.line_end(above)
            at = above

    def colon(self, path: Path) -> int:
        """Just past the `:` after the key of the entry at ``path``."""
        at = self.key_end(path)
        while at < len(self.text) and self.text[at] in " \t":
            at += 1
        if not self.text.startswith(":", at):
            raise FixError(f"no ':' after the key of {_name(path)}")
        return at + 1


def _name(path: Path) -> str:
    from plancc.fixes import path_text  # noqa: PLC0415 (a message's words only)

    return path_text(path) or "the top"


@dataclass
class _Item:
    """An item of a collection (a list item, or a mapping's entry) in the text."""

    start: int  # its dash (a block list), its key (a mapping), else its value
    value: int  # where its value starts (its key's end when it has none)
    end: int  # where its last node ends
    # Past its last line's break, and the end of that line's text (its end-of-line
    # comment included), when only a comment follows it on its line.
    tail: int | None = None
    content_end: int | None = None
    # Its whole lines, when it has them (a block item alone on its lines): from the first
    # of the comment lines right above it, to its tail; and the text that moves with it
    # (those lines without the last break).
    region: tuple[int, int] | None = None
    unit: tuple[int, int] | None = None


class _Collection:
    """A list or mapping of the text: its items, its style and indentation."""

    def __init__(self, src: _Source, path: Path) -> None:
        self.src, self.path = src, path
        node = src.data(path)
        if not isinstance(node, list | dict):
            raise FixError(f"no list or mapping at {_name(path)}")
        if src.empty(path):
            raise FixError(f"nothing at {_name(path)}")
        self.is_map = isinstance(node, dict)
        self.names: list[str | int] = list(node) if self.is_map else list(range(len(node)))
        self.is_flow = src.flow(path)
        self.items = [self._item(k) for k in self.names]

    def _item(self, key: str | int) -> _Item:
        src, path = self.src, (*self.path, key)
        if src.empty(path):
            value = end = src.key_end(path)
        else:
            value, end = src.start(path), src.end(path)
        if self.is_map:
            start = src.key_start(path)
            end = max(end, src.key_end(path))
        elif self.is_flow:
            start = value
        else:
            start = self._dash(value, path)
        item = _Item(start, value, end)
        if self.is_flow:
            self._flow_lines(item)
        else:
            self._lines(item)
        return item

    def _dash(self, value: int, path: Path) -> int:
        """The `-` of the block list item whose value starts at ``value``: before it on its
        line, or alone (with a comment) on a line above it."""
        src, text, at = self.src, self.src.text, value
        while True:
            head = src.line_start(at)
            code = text[head:at].rstrip(" \t")
            if code.endswith("-"):
                return head + len(code) - 1
            if code or head <= src.starts[0]:
                raise FixError(f"no '-' before {_name(path)}")
            above = src.line_start(head - 1)  # the value starts its line: the line above
            at = above + len(_COMMENT.sub("", text[above : src.line_end(above)]))

    def _lines(self, item: _Item) -> None:
        """The item's lines: where its last line's text ends and the line after starts
        (when nothing but a comment follows it there), and where the comment lines right
        above it start (when nothing but indentation comes before it on its line)."""
        src, text = self.src, self.src.text
        rest = text[item.end : src.line_end(item.end)].strip(" \t")
        if rest and not rest.startswith("#"):
            return
        item.tail, item.content_end = src.next_line(item.end), src.line_end(item.end)
        head = src.line_start(item.start)
        if text[head : item.start].strip(" \t"):
            return  # after `- ` or another key: not alone on its line
        lead = self.comments_above(head, item.start - head)
        item.region, item.unit = (lead, item.tail), (lead, item.content_end)

    def _flow_lines(self, item: _Item) -> None:
        """A flow item's whole lines, when it is alone on them (a list written one item a
        line): nothing but indentation before it, and its comma and end-of-line comment
        after it. The comment lines right above it, at its indentation, are its own."""
        src, text = self.src, self.src.text
        head = src.line_start(item.start)
        if text[head : item.start].strip(" \t"):
            return
        if not _FLOW_REST.fullmatch(text[item.end : src.line_end(item.end)]):
            return
        item.region = (self.comments_above(head, item.start - head), src.next_line(item.end))

    def comments_above(self, head: int, column: int) -> int:
        """Where the comment lines right above the line at ``head``, at ``column``, start."""
        src, text, lead = self.src, self.src.text, head
        while lead > src.starts[0]:  # the first line's start (past a BOM)
            above = src.line_start(lead - 1)
            line = text[above : src.line_end(above)]
            stripped = line.lstrip(" \t")
            if not stripped.startswith("#") or len(line) - len(stripped) != column:
                break
            lead = above
        return lead

    @property
    def column(self) -> int:
        """The items' indentation (of a block collection): its first item's column."""
        first = self.items[0].start
        return first - self.src.line_start(first)

    def unit(self, i: int) -> tuple[int, int]:
        """The text that moves with item ``i``: its comment lines and end-of-line comment
        in a block list whose items all have whole lines, else its value."""
        item = self.items[i]
        if self.lined and item.unit is not None:
            return item.unit
        return item.value if not self.is_map else item.start, item.end

    @property
    def lined(self) -> bool:
        """Whether every item is on lines of its own (in a block collection)."""
        return not self.is_flow and all(it.region is not None for it in self.items)

    def regions(self, items: Sequence[_Item]) -> list[tuple[int, int]] | None:
        """The whole lines of ``items``, when each has them."""
        found = [it.region for it in items if it.region is not None]
        return found if len(found) == len(items) else None


# -- the edits -----------------------------------------------------------------------------


@dataclass
class _ListEdits:
    """The edits of one list, worked out together: each entry an original item's index
    or a new value, with a mark when removed (removed items go once every edit is done,
    so the indices of one fix's edits all mean the list as it was)."""

    entries: list[tuple[int | None, Value, bool]]  # (original index or None, new value, removed)

    @classmethod
    def of(cls, count: int) -> _ListEdits:
        return cls([(i, None, False) for i in range(count)])

    def reorder(self, order: Sequence[int], path: Path) -> None:
        """The places ``sorted(order)`` take the entries ``order`` names, in that order."""
        if len(set(order)) < len(order) or any(not 0 <= i < len(self.entries) for i in order):
            raise FixError(f"no such order of {_name(path)}")
        before = list(self.entries)
        for slot, source in zip(sorted(order), order, strict=True):
            self.entries[slot] = before[source]

    def remove(self, items: Sequence[int | str], path: Path) -> None:
        """The original items ``items`` marked removed, wherever they are now."""
        for i in items:
            at = next((k for k, e in enumerate(self.entries) if e[0] == i and not e[2]), None)
            if not isinstance(i, int) or at is None:
                raise FixError(f"no item {i} at {_name(path)}")
            self.entries[at] = (i, None, True)


@dataclass
class _MapEdits:
    removed: list[str] = field(default_factory=list)
    added: list[tuple[str, Value]] = field(default_factory=list)


@dataclass(order=True)
class _Out:
    start: int
    end: int
    depth: int  # of edits inserting at one place, the deeper node's text comes first
    new: str = field(compare=False)


class _Interpreter:
    def __init__(self, src: _Source) -> None:
        self.src = src
        self.lists: dict[Path, _ListEdits] = {}
        self.maps: dict[Path, _MapEdits] = {}
        self.values: list[tuple[Path, Value]] = []  # values written over their text
        self.out: list[_Out] = []

    def run(self, edits: Sequence[Edit]) -> list[TextEdit]:
        for edit in edits:
            self.edit(edit)
        for path, value in self.values:
            self._write_value(path, value)
        for path, le in self.lists.items():
            self._write_list(path, le)
        for path, me in self.maps.items():
            self._write_map(path, me)
        out = sorted(self.out)
        for a, b in itertools.pairwise(out):
            if b.start < a.end:
                raise FixError("two edits of one fix touch one node")
        return [TextEdit(e.start, e.end, e.new) for e in out]

    def edit(self, edit: Edit) -> None:
        for path in touched(edit):
            if self.src.doc.shared(path):
                raise FixError(f"{_name(path)} is written once for several places (a YAML alias)")
        if isinstance(edit, Replace):
            self.replace(edit.path, edit.value)
            return
        node = self.src.data(edit.path)
        if isinstance(edit, Remove) and isinstance(node, dict):
            me = self.maps.setdefault(edit.path, _MapEdits())
            for key in edit.items:
                if key not in node or key in me.removed:
                    raise FixError(f"no key {key} at {_name(edit.path)}")
                me.removed.append(str(key))
            return
        if not isinstance(node, list):
            raise FixError(f"no list at {_name(edit.path)}")
        le = self.lists.setdefault(edit.path, _ListEdits.of(len(node)))
        if isinstance(edit, Append):
            le.entries += [(None, v, False) for v in edit.items]
        elif isinstance(edit, Reorder):
            le.reorder(edit.order, edit.path)
        else:
            le.remove(edit.items, edit.path)

    def replace(self, path: Path, value: Value) -> None:
        """The value at ``path`` becomes ``value``: a missing key is added; a mapping or
        list replaced by another changes only what differs."""
        src = self.src
        old = src.data(path)
        if old is _MISSING:
            parent = src.data(path[:-1])
            if not path or not isinstance(parent, dict) or not isinstance(path[-1], str):
                raise FixError(f"nothing at {_name(path)}")
            self.maps.setdefault(path[:-1], _MapEdits()).added.append((path[-1], value))
        elif type(old) is type(value) and old == value:
            return
        elif isinstance(old, dict) and isinstance(value, dict) and old and not src.empty(path):
            self._replace_entries(path, old, value)
        elif isinstance(old, list) and isinstance(value, list | tuple) and old:
            self._replace_items(path, old, list(value))
        else:
            self.values.append((path, value))

    def _replace_entries(self, path: Path, old: dict[str, Any], new: dict[str, Any]) -> None:
        """A mapping made ``new``: its entries that differ replaced, removed or added."""
        for key in old:
            if key in new:
                self.replace((*path, key), new[key])
            else:
                self.maps.setdefault(path, _MapEdits()).removed.append(key)
        for key, value in new.items():
            if key not in old:
                self.maps.setdefault(path, _MapEdits()).added.append((key, value))

    def _replace_items(self, path: Path, old: list[Any], new: list[Any]) -> None:
        """A list made ``new``: item by item, the items left over removed, the new ones
        appended."""
        for i, value in enumerate(new[: len(old)]):
            self.replace((*path, i), value)
        if len(new) != len(old):
            le = self.lists.setdefault(path, _ListEdits.of(len(old)))
            le.entries = [(i, None, i >= len(new)) for i in range(len(old))]
            le.entries += [(None, v, False) for v in new[len(old) :]]

    # -- writing -----------------------------------------------------------------------------

    def _put(self, start: int, end: int, new: str, path: Path) -> None:
        self.out.append(_Out(start, end, -len(path), new))

    def _write_value(self, path: Path, value: Value) -> None:
        src = self.src
        if src.empty(path):
            self._put(src.colon(path), src.colon(path), " " + yaml_text(value), path)
            return
        self._over(path, yaml_text(value))

    def _over(self, path: Path, new: str) -> None:
        """The node at ``path`` written over by ``new``: a block collection that is a
        mapping's value loses its items' lines and ``new`` is written after its key
        (``_emptied``); anything else (a list's item: where the collection was) has its
        text replaced."""
        src = self.src
        node = src.data(path)
        block = isinstance(node, dict | list) and node and not src.flow(path)
        if block and path and isinstance(path[-1], str) and self._emptied(path, new):
            return
        self._put(src.start(path), src.end(path), new, path)

    def _emptied(self, path: Path, new: str) -> bool:
        """The block collection at ``path`` (a mapping's value) made ``new``: each item's
        lines removed and ``new`` written after the key; False when an item does not
        have lines of its own."""
        c = _Collection(self.src, path)
        regions = c.regions(c.items)
        if regions is None:
            return False
        for start, end in regions:
            self._put(start, end, "", path)
        at = self.src.colon(path)
        self._put(at, at, " " + new, path)
        return True

    def _write_map(self, path: Path, me: _MapEdits) -> None:
        c = _Collection(self.src, path)
        keep = [k for k in c.names if k not in me.removed]
        if not keep:  # every entry goes: the mapping is written again
            self._over(c.path, yaml_text(dict(me.added)))
            return
        if me.removed:
            self._remove(c, [c.names.index(k) for k in me.removed])
        if me.added:
            self._add(c, me.added)

    def _write_list(self, path: Path, le: _ListEdits) -> None:
        c = _Collection(self.src, path)
        final = [(i, v) for i, v, removed in le.entries if not removed]
        kept = [i for i, _ in final if i is not None]
        news = [v for i, v in final if i is None]
        in_place = kept == sorted(kept) and all(i is not None for i, _ in final[: len(kept)])
        if not final:
            self._over(c.path, "[]")  # every item removed
        elif in_place and kept:
            self._remove(c, [i for i in range(len(c.items)) if i not in kept])
            if news:
                self._append(c, [self._item_text(c, v) for v in news])
        else:
            self._slots(c, final)

    def _slots(self, c: _Collection, final: list[tuple[int | None, Value]]) -> None:
        """The list's items written again in its places: each place takes its new item's
        text (a moved item's own text, a new item's), what is left over is appended or
        removed."""
        text = self.src.text
        units = [c.unit(i) for i in range(len(c.items))]
        wanted = [
            text[slice(*units[i])] if i is not None else self._item_text(c, v) for i, v in final
        ]
        for k in range(min(len(units), len(wanted))):
            if text[slice(*units[k])] != wanted[k]:
                self._put(*units[k], wanted[k], c.path)
        if len(wanted) > len(units):
            self._append(c, wanted[len(units) :])
        elif len(wanted) < len(units):
            self._remove(c, list(range(len(wanted), len(units))))

    def _item_text(self, c: _Collection, value: Value) -> str:
        """A new item as the list writes its items: a value, or (a block list whose items
        have their lines) its line from the indentation."""
        if not c.lined:
            return yaml_text(value)
        return " " * c.column + "- " + _block(value, c.column + 2, self.src.nl)

    def _remove(self, c: _Collection, gone: list[int]) -> None:
        """Items ``gone`` (not all of them) removed, each run of neighbours together."""
        n = len(c.items)
        for i, j in _runs(sorted(gone)):
            last = c.items[j]
            regions = c.regions(c.items[i : j + 1])
            if regions is not None:
                for start, end in regions:
                    self._put(start, end, "", c.path)
            elif j < n - 1:  # up to the next item: its separator goes with the run
                self._put(*self._run_span(c, i, j), "", c.path)
            elif c.is_flow:
                self._remove_flow_last(c, i)
            else:
                before = c.items[i - 1]
                self._put(self.src.line_end(before.end), self.src.line_end(last.end), "", c.path)

    def _run_span(self, c: _Collection, i: int, j: int) -> tuple[int, int]:
        """What removing the items ``i`` to ``j`` (not the last) takes: up to the next item
        (their separator goes with them), or, in a flow collection whose next item is on
        a later line, to the end of ``j``'s line (its comma and end-of-line comment go;
        the next item's line, and the comment lines above it, stay as they are)."""
        text, start, nxt = self.src.text, c.items[i].start, c.items[j + 1].start
        if c.is_flow:
            m = lines.BREAK.search(text, c.items[j].end, nxt)
            if m is not None:
                head = self.src.line_start(start)
                return head + len(text[head:start].rstrip(" \t")), m.start()
        return start, nxt

    def _remove_flow_last(self, c: _Collection, i: int) -> None:
        """The items of a flow collection from ``i`` to its end removed. On one line with
        the item before, or with nothing but a comma after that item on its line: from
        that item's end (its comma goes with them). Else their lines go, their
        end-of-line comments with them, and the bracket that closed them moves in place
        of the comma after the item before, whose own comment stays (``[a,  # A`` /
        ``b]  # B`` becomes ``[a]  # A``); when more follows the bracket on its line, the
        bracket stays there, on a line of its own."""
        src, text = self.src, self.src.text
        before, first, last = c.items[i - 1], c.items[i], c.items[-1]
        sep = text[before.end : first.start]
        comma = before.end + len(sep) - len(sep.lstrip(" \t"))
        if lines.BREAK.search(sep) is None or not text.startswith(",", comma):
            self._put(before.end, last.end, "", c.path)
            return
        close = "}" if c.is_map else "]"
        rest = text[last.end : src.line_end(last.end)]
        if re.fullmatch(rf"[ \t]*,?[ \t]*\{close}[ \t]*(?:#.*)?", rest):
            self._put(comma, comma + 1, close, c.path)
            self._put(src.line_end(before.end), src.line_end(last.end), "", c.path)
        elif not text[comma + 1 : src.line_end(comma)].strip(" \t"):  # no comment to keep
            self._put(before.end, last.end, "", c.path)
        else:
            self._put(comma, comma + 1, "", c.path)
            head = src.line_start(first.start)
            if not text[head : first.start].strip(" \t"):  # its comment lines go with it
                lead = c.comments_above(head, first.start - head)
                if lead < head:
                    self._put(lead, head, "", c.path)
            self._put(first.start, last.end, "", c.path)

    def _append(self, c: _Collection, texts: list[str]) -> None:
        """Items (as ``_item_text`` writes them) added after the last."""
        src = self.src
        last = c.items[-1] if c.items else None
        if c.is_flow:
            if last is None:
                at = src.start(c.path) + 1
                self._put(at, at, ", ".join(texts), c.path)
            else:
                self._put(last.end, last.end, "".join(", " + t for t in texts), c.path)
            return
        assert last is not None  # a block collection has an item
        if not c.lined:
            indent = " " * c.column
            new = "".join(f"{src.nl}{indent}- {t}" for t in texts)
            self._put(src.line_end(last.end), src.line_end(last.end), new, c.path)
            return
        self._lines_at(
            last.tail if last.tail is not None else src.next_line(last.end), texts, c.path
        )

    def _lines_at(self, at: int, texts: list[str], path: Path) -> None:
        """Whole lines inserted at ``at`` (a line's start, or the text's end)."""
        nl = self.src.nl
        if at == len(self.src.text) and not self.src.text.endswith(("\n", "\r")):
            self._put(at, at, "".join(nl + t for t in texts), path)
        else:
            self._put(at, at, "".join(t + nl for t in texts), path)

    def _add(self, c: _Collection, entries: list[tuple[str, Value]]) -> None:
        """Keys added after the mapping's last entry."""
        src = self.src
        if c.is_flow:
            texts = [f"{yaml_text(k)}: {yaml_text(v)}" for k, v in entries]
            if not c.items:
                at = src.start(c.path) + 1
                self._put(at, at, ", ".join(texts), c.path)
            else:
                self._put(
                    c.items[-1].end, c.items[-1].end, "".join(", " + t for t in texts), c.path
                )
            return
        column = c.column
        texts = [
            " " * column + f"{yaml_text(k)}:" + _after_key(v, column + 2, src.nl)
            for k, v in entries
        ]
        last = c.items[-1]
        # A block mapping's last entry ends its line (but for a comment).
        self._lines_at(
            last.tail if last.tail is not None else src.next_line(last.end), texts, c.path
        )


def _runs(indices: list[int]) -> list[tuple[int, int]]:
    """Runs of consecutive indices, as (first, last)."""
    out: list[tuple[int, int]] = []
    for i in indices:
        if out and out[-1][1] == i - 1:
            out[-1] = (out[-1][0], i)
        else:
            out.append((i, i))
    return out


def _block(value: Value, indent: int, nl: str) -> str:
    """``value`` as a block list's item writes it after ``- ``: a mapping of names in
    block style, its keys at ``indent``; anything else in flow style."""
    if isinstance(value, dict) and value:
        pad = " " * indent
        parts = [f"{yaml_text(k)}:{_after_key(v, indent + 2, nl)}" for k, v in value.items()]
        return (nl + pad).join(parts)
    return yaml_text(value)


def _after_key(value: Value, indent: int, nl: str) -> str:
    """What follows ``key:`` in a block mapping: a list of mappings as a block list (its
    dashes at ``indent``), anything else after a space, in flow style."""
    if isinstance(value, list) and value and all(isinstance(v, dict) and v for v in value):
        pad = " " * indent
        return "".join(f"{nl}{pad}- {_block(v, indent + 2, nl)}" for v in value)
    return " " + yaml_text(value)

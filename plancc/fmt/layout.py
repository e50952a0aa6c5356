"""The canonical layout of `plancc fmt` (see plancc.fmt): entries, comments, layout.

A tree of entries (a mapping's key and value, a sequence's item) is built from
ruamel's round-trip parser events, which carry the source position of every
key, value, anchor and alias; comments are found between the scalars and
attached to entries; the tree is written out again in canonical order and style.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from plancc.fmt.scalars import folded, quoted, trimmed
from plancc.load import pure as yaml_pure
from plancc.schema.plan import KEY_ORDER

WIDTH = 88
# The top-level keys written without a blank line between them (the rest are sections).
HEADER = ("plancc", "model", "platform", "budget", "config")


class FmtError(Exception):
    """The plan cannot be formatted without changing what it says."""


@dataclass
class Node:
    kind: str  # "scalar" (also an alias), "map" or "seq"
    text: str = ""  # a scalar's source text, as written (with its anchor and tag)
    anchor: str | None = None  # of a collection
    line: int = 0
    end_line: int = 0  # of a flow collection: the line of its closing bracket
    flow_safe: bool = True  # a scalar that can stand inside [...] or {...}
    entries: list[Entry] = field(default_factory=list)


@dataclass
class Entry:
    key: Node | None  # None: a sequence item
    value: Node
    line: int
    col: int  # where the entry starts: its key, or its item's dash
    depth: int
    start: int = 0  # the index in the text where the entry starts (its key, or its item)
    within: Node | None = None  # the collection it is an entry of
    parent: Entry | None = None  # the entry whose value that collection is
    in_flow: bool = False  # an entry of a collection written in flow style in the source
    leading: list[str | None] = field(default_factory=list)  # comments; None is a blank line
    eol: list[str] = field(default_factory=list)

    @property
    def end_line(self) -> int:
        return self.value.end_line


def scalar_span(text: str, event: Any) -> tuple[int, int]:
    """Where a scalar (or alias) event's text lies in ``text``: a block scalar's trailing
    blank lines are layout, not content."""
    start, end = event.start_mark.index, event.end_mark.index
    if getattr(event, "style", None) in ("|", ">"):
        body = text[start:end]
        if "+" not in body.split("\n", 1)[0]:
            end = start + len(trimmed(body))
    return start, end


def comments(text: str, spans: list[tuple[int, int]]) -> Iterator[tuple[int, bool, str]]:
    """(line, whether it is alone on its line, text) of every comment, outside scalars."""
    starts = [0, *(i + 1 for i, ch in enumerate(text) if ch == "\n")]
    bounds = sorted(spans)
    i, s = 0, 0
    while i < len(text):
        while s < len(bounds) and bounds[s][1] <= i:
            s += 1
        if s < len(bounds) and bounds[s][0] <= i:
            i = bounds[s][1]
            continue
        if text[i] == "#" and (i == 0 or text[i - 1] in " \t\n"):
            end = text.find("\n", i)
            end = len(text) if end < 0 else end
            line = bisect.bisect_right(starts, i) - 1
            yield line, not text[starts[line] : i].strip(), text[i:end].rstrip()
            i = end
        i += 1


def _path_match(path: tuple[str, ...], pattern: tuple[str, ...]) -> bool:
    return len(path) == len(pattern) and all(
        q == p or (q == "*" and p != "#") for p, q in zip(path, pattern, strict=True)
    )


_FLOW_MAPS = (
    ("tensors", "*"),
    ("tensors", "*", "stacked"),
    ("layers", "*", "stages", "#", "reads", "#"),  # a read with a `share`
    ("layers", "*", "source_params"),
    ("layers", "*", "stages", "#"),
    ("layers", "*", "warms", "#", "tensors", "#"),
    ("forward", "kinds"),
    ("forward", "#"),
)
_ANCHOR = re.compile(r"^(?:!\S*\s+)?&(\S+)")


def _name(entry: Entry) -> str:
    """The key an entry's path records: its text unquoted, or ``#`` for an item."""
    if entry.key is None:
        return "#"
    text = entry.key.text
    return text[1:-1] if len(text) > 1 and text[0] == text[-1] and text[0] in "'\"" else text


def _key(text: str, indent: int) -> str:
    """A key as written: at column 0 a plain `---` or `...` would mark a document."""
    if not indent and text[:3] in ("---", "...") and text[3:4] in ("", " "):
        return "'" + text.replace("'", "''") + "'"
    return text


class Layout:
    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0, *(i + 1 for i, ch in enumerate(text) if ch == "\n")]
        self.scalar_spans: list[tuple[int, int]] = []
        self.entries: list[Entry] = []
        self.trailing: list[str | None] = []
        self.out: list[str] = []
        self.anchors: set[str] = set()

    def line_of(self, index: int) -> int:
        return bisect.bisect_right(self.starts, index) - 1

    def spans(self) -> list[tuple[int, int]]:
        self.parse()
        return self.scalar_spans

    def run(self) -> str | None:
        """The text laid out (None when it has no mapping at the top)."""
        root = self.parse()
        if root is None or root.kind != "map" or not root.entries:
            return None
        self.attach()
        first = min(self.entries, key=lambda e: (e.line, e.depth))
        if None in first.leading:  # comments set off from the first key: the file's header
            cut = len(first.leading) - first.leading[::-1].index(None)
            self.out += [c or "" for c in first.leading[:cut]]
            first.leading = first.leading[cut:]
        self.block(root, 0, ())
        trailing = self.trailing[1:] if self.trailing[:1] == [None] else self.trailing
        if trailing:
            self.out.append("")
        self.out += ["" if c is None else c for c in trailing]
        return "\n".join(self.out) + "\n"

    # -- reading ----------------------------------------------------------------------------

    def parse(self) -> Node | None:
        events = iter(yaml_pure.round_trip_events(self.text))
        for event in events:
            if type(event).__name__ in _NODE_EVENTS:
                return self.node(event, events, 0)
        return None

    def node(self, event: Any, events: Iterator[Any], depth: int) -> Node:
        kind = type(event).__name__
        if kind in ("ScalarEvent", "AliasEvent"):
            return self.scalar(event)
        start = event.start_mark
        if event.tag is not None and not event.implicit:
            raise FmtError(f"line {start.line + 1}: an explicit tag on a collection is not kept")
        node = Node("map" if kind == "MappingStartEvent" else "seq", anchor=event.anchor)
        node.line = start.line
        for child in events:
            if type(child).__name__ in ("MappingEndEvent", "SequenceEndEvent"):
                flow = bool(event.flow_style)
                last = node.entries[-1].end_line if node.entries else start.line
                node.end_line = self.line_of(child.end_mark.index - 1) if flow else last
                return node
            if node.kind == "map":
                key = self.node(child, events, depth + 1)
                if key.kind == "scalar" and "\n" in key.text:
                    key.text = folded(key.text) or key.text  # a block key is one line
                if key.kind != "scalar" or "\n" in key.text:
                    raise FmtError(f"line {key.line + 1}: a key that is not a one-line scalar")
                value = self.node(next(events), events, depth + 1)
                col = child.start_mark.index - self.starts[key.line]
                entry = Entry(key, value, key.line, col, depth)
            else:
                value = self.node(child, events, depth + 1)
                entry = Entry(None, value, value.line, self.dash(child.start_mark.index), depth)
            entry.start, entry.within = child.start_mark.index, node
            for inner in value.entries:
                inner.parent = entry
            entry.in_flow = bool(event.flow_style)
            node.entries.append(entry)
            self.entries.append(entry)
        raise FmtError("unexpected end of the document")  # the loader has read it: unreachable

    def scalar(self, event: Any) -> Node:
        start, end = scalar_span(self.text, event)
        text = self.text[start:end]
        style = getattr(event, "style", None)
        block = style in ("|", ">")
        self.scalar_spans.append((start, end))
        plain = style is None  # or an alias
        if plain and type(event).__name__ == "ScalarEvent" and "\n" not in text:
            written = quoted(text)
            plain, text = written == text, written
        node = Node("scalar", text=text, line=event.start_mark.line)
        node.end_line = self.line_of(max(end - 1, start))
        node.flow_safe = bool(text) and "\n" not in text and not block
        if node.flow_safe and plain:  # plain: no flow indicator, no `:` or ` #`
            node.flow_safe = not any(ch in text for ch in ",[]{}:") and " #" not in text
        return node

    def dash(self, index: int) -> int:
        """The column of the dash before a sequence item that starts at ``index``."""
        at = self.text.rfind("-", 0, index)
        return at - self.starts[self.line_of(at)] if at >= 0 else 0

    def blank(self, line: int, inside: set[int]) -> bool:
        """Whether ``line`` is blank layout (a blank line inside a scalar is content)."""
        if line < 0 or line >= len(self.starts) or line in inside:
            return False
        end = self.starts[line + 1] if line + 1 < len(self.starts) else len(self.text)
        return not self.text[self.starts[line] : end].strip()

    def attach(self) -> None:
        """Give every comment to an entry: a comment alone on its line to the entry after
        it; one at the end of a line to the entry it follows (see ``eol_owners``)."""
        inside = {  # the lines after the first of each multi-line scalar
            line
            for start, end in self.scalar_spans
            for line in range(self.line_of(start) + 1, self.line_of(max(end - 1, start)) + 1)
        }
        order = sorted(self.entries, key=lambda e: (e.line, e.depth))
        lines = [e.line for e in order]
        found = list(comments(self.text, self.scalar_spans))
        owners = self.eol_owners({line for line, alone, _ in found if not alone})
        for line, alone, text in found:
            if not alone:
                owner = owners.get(line)
                if owner is not None:
                    owner.eol.append(text)
                    continue
            at = bisect.bisect_right(lines, line)
            target = order[at].leading if at < len(order) else self.trailing
            if self.blank(line - 1, inside):
                target.append(None)
            target.append(text)
        for e in order:
            if self.blank(e.line - 1, inside) and not e.in_flow:
                e.leading.append(None)

    def eol_owners(self, targets: set[int]) -> dict[int, Entry]:
        """For each line of ``targets`` (a comment ends it), the entry the comment follows:
        of the entries that start or end on that line, the one that starts last (the
        deeper on a tie). One that ends there gives the comment to the collection it is
        in when that is a flow collection closing on the same line, and so on outwards
        (``tensors: [w, v]  # c`` is the comment of ``tensors``); so a comment after an
        item of a flow collection split over lines stays with that item. On a line where
        no entry starts or ends (``,`` alone), it goes before the entry after it."""
        out: dict[int, Entry] = {}
        for e in self.entries:
            for line in {e.line, e.end_line} & targets:
                if line not in out or (e.start, e.depth) > (out[line].start, out[line].depth):
                    out[line] = e
        for line, last in out.items():
            owner = last
            while owner.in_flow and owner.parent is not None and owner.end_line == line:
                assert owner.within is not None
                if owner.within.end_line != line:
                    break
                owner = owner.parent
            out[line] = owner
        return out

    # -- writing ----------------------------------------------------------------------------

    def ordered(self, node: Node, path: tuple[str, ...]) -> list[Entry]:
        if node.kind == "seq":
            return node.entries
        # The keys in the order plancc/schema/declared.py declares them.
        order = next((o for p, o in KEY_ORDER.items() if _path_match(path, p)), ())
        rank = {k: i for i, k in enumerate(order)}
        return sorted(node.entries, key=lambda e: rank.get(_name(e), len(order)))

    def block(self, node: Node, indent: int, path: tuple[str, ...]) -> None:
        for i, e in enumerate(self.ordered(node, path)):
            self.entry(e, indent, (*path, _name(e)), first=i == 0)

    def entry(self, e: Entry, indent: int, path: tuple[str, ...], *, first: bool) -> None:  # noqa: C901 (one entry's layout choices (flow, inline dash, comments, anchor), in the order they are made)
        head = " " * indent + (f"{_key(e.key.text, indent)}:" if e.key is not None else "-")
        v = e.value
        flow = self.flow(v, path) if v.kind != "scalar" else None
        if flow is not None and len(head) + 1 + len(flow) > WIDTH:
            flow = None
        lead = list(e.leading)
        eol = list(e.eol)
        inline = e.key is None and v.kind == "map" and flow is None and v.entries and not v.anchor
        if inline:  # `- name: x`: the first key's comments go before the dash
            child = self.ordered(v, path)[0]
            lead += [c for c in child.leading if c is not None]
            child.leading = []
            if eol and (child.eol or "\n" in child.value.text):  # the dash's line is taken
                lead += eol
                eol = []
        blank = bool(lead) and lead[0] is None
        lead = [c for i, c in enumerate(lead) if c is not None or i > 0]
        if len(path) == 1:  # a top-level key: one blank line before each section
            blank = bool(self.out) and path[0] not in HEADER
        elif first:
            blank = False
        if blank and self.out[-1:] != [""]:
            self.out.append("")
        self.out += ["" if c is None else " " * indent + c for c in lead]
        anchor = f" &{v.anchor}" if v.anchor else ""
        if v.anchor:
            self.anchors.add(v.anchor)
        if v.kind == "scalar":
            self.scalar_lines(head, e, indent, eol)
        elif not v.entries or flow is not None:
            self.line(head + anchor + " " + (flow or ("{}" if v.kind == "map" else "[]")), eol)
        elif inline:
            start = len(self.out)
            self.block(v, indent + 2, path)
            self.out[start] = " " * indent + "- " + self.out[start][indent + 2 :]
            if eol:
                self.out[start] += "  " + eol[0]
        else:
            self.line(head + anchor, eol)
            self.block(v, indent + 2, path)

    def line(self, text: str, eol: list[str]) -> None:
        pad = " " * (len(text) - len(text.lstrip()))
        self.out += [pad + c for c in eol[1:]]  # a second comment for one line: before it
        self.out.append(text + ("  " + eol[0] if eol else ""))

    def scalar_lines(self, head: str, e: Entry, indent: int, eol: list[str]) -> None:
        text = e.value.text
        self.check_alias(text)
        if not text:
            self.line(head, eol)
            return
        lines = text.split("\n")
        delta = indent - e.col
        header = lines[0].lstrip("&!").split(" ")[-1]
        block = header[:1] in ("|", ">") and len(lines) > 1
        content = [line for line in lines[1:] if line.strip(" ")]
        first = len(content[0]) - len(content[0].lstrip(" ")) if content else 0
        if block and content and not any(ch.isdigit() for ch in header):
            # content two columns in from its key (or dash), as in the contract's examples
            delta = indent + 2 - first
        for i in range(1, len(lines)):
            line = lines[i]
            if not block:  # a plain or quoted scalar's lines lose their leading spaces
                lines[i] = " " * (indent + 2) + line.lstrip(" \t") if line.strip() else ""
            elif not line.strip(" ") and len(line) <= first:
                lines[i] = ""  # an empty line; one with more spaces holds some of them
            elif delta >= 0:
                lines[i] = " " * delta + line
            else:
                lines[i] = line[min(-delta, len(line) - len(line.lstrip(" "))) :]
        if block or len(lines) == 1:
            self.line(f"{head} {lines[0]}", eol)
            self.out += lines[1:]
        else:  # a multi-line plain or quoted scalar: its comment after its last line
            self.out.append(f"{head} {lines[0]}")
            self.out += lines[1:-1]
            self.line(lines[-1], eol)

    def check_alias(self, text: str) -> None:
        if text.startswith("*"):
            if text[1:] not in self.anchors:
                raise FmtError(f"the canonical order would put alias {text} before its anchor")
        elif match := _ANCHOR.match(text):
            self.anchors.add(match.group(1))

    def flow(self, node: Node, path: tuple[str, ...]) -> str | None:  # noqa: C901 (each reason a collection stays in block style, in one list)
        """``node`` in flow style, or None when it must stay in block style."""
        if node.kind == "map" and not any(_path_match(path, p) for p in _FLOW_MAPS):
            return None
        parts = []
        for e in self.ordered(node, path):
            if e.eol or any(c is not None for c in e.leading):
                return None
            v = e.value
            if v.kind == "scalar":
                if not v.flow_safe:
                    return None
                self.check_alias(v.text)
                value = v.text
            elif (v.kind == "map" and node.kind == "map") or (  # a tensor's `stacked`
                v.kind == "seq" and all(c.value.kind == "scalar" for c in v.entries)
            ):
                inner = self.flow(v, (*path, _name(e)))
                if inner is None:
                    return None
                if v.anchor:
                    self.anchors.add(v.anchor)
                value = (f"&{v.anchor} " if v.anchor else "") + inner
            else:
                return None
            if e.key is not None:
                if not e.key.flow_safe:
                    return None
                value = f"{e.key.text}: {value}"
            parts.append(value)
        joined = ", ".join(parts)
        return "{" + joined + "}" if node.kind == "map" else "[" + joined + "]"


_NODE_EVENTS = ("MappingStartEvent", "SequenceStartEvent", "ScalarEvent", "AliasEvent")

"""Stage 1, load: plan bytes -> a plain YAML tree and the position of every node.

The tree holds dicts (keys are the keys' source text), lists, str, int, float,
bool and None. ``Document.values`` maps each node's path to where its value
starts and ``Document.keys`` maps each mapping entry's path to where its key
starts, so any later stage can place a diagnostic on the node at fault.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from plancc.diagnostics import Diagnostic, Pos, diag

MAX_BYTES = 4 * 1024 * 1024
# Aliases are allowed, but the tree they stand for is bounded: an alias bomb is
# rejected by counting the composed graph, never by expanding it.
MAX_NODES = 100_000
MAX_DEPTH = 64
MAX_INT = 2**63 - 1  # no number in a plan needs more; bigger ones only make trouble later

PathT = tuple[str | int, ...]

_STR = "tag:yaml.org,2002:str"
_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_BOOL = "tag:yaml.org,2002:bool"
_NULL = "tag:yaml.org,2002:null"
_SEQ = "tag:yaml.org,2002:seq"
_MAP = "tag:yaml.org,2002:map"


@dataclass(frozen=True)
class Document:
    file: str
    raw: bytes
    data: Any
    values: Mapping[PathT, Pos]
    keys: Mapping[PathT, Pos]

    def at(self, path: PathT) -> Pos:
        """Where the value at ``path`` starts (or its nearest known ancestor)."""
        while path not in self.values and path:
            path = path[:-1]
        return self.values.get(path, Pos(1, 1))

    def key_at(self, path: PathT) -> Pos:
        """Where the key of the entry at ``path`` starts (its value for list items)."""
        return self.keys.get(path) or self.at(path)


class _Reject(Exception):
    def __init__(self, pos: Pos, message: str) -> None:
        super().__init__(message)
        self.pos = pos
        self.message = message


def _pos(mark: Any) -> Pos:
    return Pos(mark.line + 1, mark.column + 1)


def load(file: str, raw: bytes) -> Document | Diagnostic:
    """Parse one plan; a PC001 diagnostic when it is not a readable YAML document."""
    if len(raw) > MAX_BYTES:
        return diag(file, Pos(1, 1), "PC001", f"file is {len(raw):,} bytes; the limit is 4 MiB")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        col = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        return diag(file, Pos(line, col), "PC001", "file is not valid UTF-8")
    if text.startswith("\ufeff"):
        text = text[1:]

    from ruamel.yaml import YAML
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # e.g. a reused anchor: legal YAML, the last one wins
            root = YAML(typ="safe", pure=True).compose(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        pos = _pos(mark) if mark is not None else Pos(1, 1)
        problem = exc.problem or exc.context or "invalid YAML"
        return diag(file, pos, "PC001", f"invalid YAML: {problem}")
    except (YAMLError, RecursionError) as exc:
        reason = "nesting too deep" if isinstance(exc, RecursionError) else str(exc)
        return diag(file, Pos(1, 1), "PC001", f"invalid YAML: {reason}")

    builder = _Builder()
    try:
        if root is None:
            data: Any = None
        else:
            builder.count(root, 0, set())
            data = builder.build(root, ())
    except _Reject as rej:
        return diag(file, rej.pos, "PC001", rej.message)
    return Document(file, raw, data, builder.values, builder.keys)


class _Builder:
    def __init__(self) -> None:
        self.values: dict[PathT, Pos] = {}
        self.keys: dict[PathT, Pos] = {}
        self._sizes: dict[int, int] = {}

    def count(self, node: Any, depth: int, active: set[int]) -> int:
        """Nodes the tree would have with every alias expanded, memoised per node."""
        key = id(node)
        if key in self._sizes:
            return self._sizes[key]
        if key in active:
            raise _Reject(_pos(node.start_mark), "recursive alias")
        if depth > MAX_DEPTH:
            raise _Reject(_pos(node.start_mark), f"nesting deeper than {MAX_DEPTH} levels")
        active.add(key)
        total = 1
        if node.id != "scalar":  # a sequence's items, or a mapping's (key, value) pairs
            children = [
                n for item in node.value for n in (item if node.id == "mapping" else [item])
            ]
            for child in children:
                total += self.count(child, depth + 1, active)
                if total > MAX_NODES:
                    raise _Reject(
                        _pos(node.start_mark),
                        f"aliases expand to more than {MAX_NODES:,} nodes (alias bomb?)",
                    )
        active.discard(key)
        self._sizes[key] = total
        return total

    def build(self, node: Any, path: PathT, key_pos: Pos | None = None) -> Any:
        start = _pos(node.start_mark)
        if node.tag == _NULL and node.value == "" and key_pos is not None:
            start = key_pos  # an empty value has no text of its own: point at its key
        self.values[path] = start
        if node.id == "mapping" and node.tag == _MAP:
            out: dict[str, Any] = {}
            for knode, vnode in node.value:
                if not isinstance(knode.value, str):
                    raise _Reject(_pos(knode.start_mark), "a mapping key must be a plain scalar")
                if knode.tag == "tag:yaml.org,2002:merge":
                    raise _Reject(_pos(knode.start_mark), "merge keys (<<) are not supported")
                name = knode.value
                kpos = _pos(knode.start_mark)
                if name in out:
                    first = self.keys[(*path, name)]
                    raise _Reject(
                        kpos, f"duplicate key '{name}' (first defined at {first.line}:{first.col})"
                    )
                self.keys[(*path, name)] = kpos
                out[name] = self.build(vnode, (*path, name), kpos)
            return out
        if node.id == "sequence" and node.tag == _SEQ:
            return [self.build(child, (*path, i)) for i, child in enumerate(node.value)]
        if node.id != "scalar":
            raise _Reject(start, f"unsupported tag {node.tag}")
        return _scalar(node, start)


def _scalar(node: Any, pos: Pos) -> Any:
    tag, text = node.tag, node.value
    if tag == _NULL:
        return None
    if tag == _BOOL:
        if text.lower() not in ("true", "false"):
            raise _Reject(pos, f"invalid boolean {text[:40]!r}")
        return text.lower() == "true"
    if tag == _INT:
        try:
            value = _yaml_int(text)
        except ValueError:
            raise _Reject(pos, f"invalid integer {text[:40]!r}") from None
        if abs(value) > MAX_INT:
            raise _Reject(pos, f"integer {text[:40]} does not fit in 64 bits")
        return value
    if tag == _FLOAT:
        try:
            return _yaml_float(text)
        except ValueError:
            raise _Reject(pos, f"invalid number {text[:40]!r}") from None
    if tag == _STR:
        return text
    raise _Reject(pos, f"unsupported tag {tag}")


def _yaml_int(text: str) -> int:
    t = text.replace("_", "")
    sign = -1 if t.startswith("-") else 1
    t = t.lstrip("+-")
    if t[:2] in ("0x", "0X"):
        return sign * int(t[2:], 16)
    if t[:2] in ("0o", "0O"):
        return sign * int(t[2:], 8)
    if t[:2] in ("0b", "0B"):
        return sign * int(t[2:], 2)
    return sign * int(t, 10)


def _yaml_float(text: str) -> float:
    t = text.replace("_", "").lower()
    if t.lstrip("+-") in (".inf", "inf"):
        return float("-inf") if t.startswith("-") else float("inf")
    if t in (".nan", "nan"):
        return float("nan")
    return float(t)

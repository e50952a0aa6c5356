"""Stage 1, load: plan bytes -> a plain YAML tree and the position of every node.

Also reads the JSON config file a plan names (``read_config``): all file reading
of the front end is here.

The tree holds dicts (keys are the keys' source text), lists, str, int, float,
bool and None. ``Document.values`` maps each node's path to where its value
starts and ``Document.keys`` maps each mapping entry's path to where its key
starts, so any later stage can place a diagnostic on the node at fault.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from plancc import codes, yaml_messages
from plancc.diagnostics import Diagnostic, Pos, diag
from plancc.text import clip

if TYPE_CHECKING:  # for the annotation only: ruamel is imported when a plan is loaded
    from ruamel.yaml.composer import Composer

MAX_BYTES = 4 * 1024 * 1024
# Aliases are allowed, but the tree they stand for is bounded: an alias bomb is
# rejected by counting the composed graph, never by expanding it.
MAX_NODES = 100_000
_TOO_MANY_NODES = "the document has more than {:,} nodes, counting each alias expanded"
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

# The YAML 1.2 core schema (spec 1.2.2, 10.3.2), the only one a plain scalar is
# resolved by, whatever the YAML library would otherwise accept (`1_000`, `0b11`,
# timestamps) and whatever `%YAML` directive the document carries.
_CORE_NULL = re.compile(r"(?:null|Null|NULL|~|)\Z")
_CORE_BOOL = re.compile(r"(?:true|True|TRUE|false|False|FALSE)\Z")
_CORE_INT = re.compile(r"(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)\Z")
_CORE_FLOAT = re.compile(
    r"(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))\Z"
)
_CORE = ((_CORE_NULL, _NULL), (_CORE_BOOL, _BOOL), (_CORE_INT, _INT), (_CORE_FLOAT, _FLOAT))


def _core_tag(text: str) -> str:
    """The tag the YAML 1.2 core schema gives the plain scalar ``text``."""
    return next((tag for regex, tag in _CORE if regex.match(text)), _STR)


@dataclass(frozen=True)
class Document:
    file: str
    raw: bytes
    data: Any
    values: Mapping[PathT, Pos]
    keys: Mapping[PathT, Pos]
    # Where the node (key or value) that starts at a position ends, exclusive: a
    # diagnostic's whole range for an editor. Of nodes starting at one position (a
    # block mapping and its first key) the innermost is kept.
    ends: Mapping[Pos, Pos] = field(default_factory=dict)

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


_BREAK = re.compile(r"\r(?!\n)|\n")


def _text_pos(text: str, index: int) -> Pos:
    """The line:col of ``text[index]``, counted as the YAML reader counts its marks:
    a line ends at LF, CRLF or a lone CR; a column is a character (a BOM is none)."""
    line, start = 1, 0
    for m in _BREAK.finditer(text, 0, index + 1):  # one more: a CR's LF may be at index
        if m.end() > index:
            break
        line, start = line + 1, m.end()
    return Pos(line, len(text[start:index].replace("\ufeff", "")) + 1)


def _error(file: str, pos: Pos, message: str, hint: str | None = None) -> Diagnostic:
    # One line: Diagnostic escapes what it quotes.
    return diag(file, pos, codes.YAML_SYNTAX, message, hint)


def read_capped(path: str | os.PathLike[str], limit: int = MAX_BYTES) -> bytes:
    """A file's bytes, but never more than ``limit + 1`` of them: a huge file (or
    ``/dev/zero``) is known to be too large without being read whole. Raises OSError."""
    with open(path, "rb") as f:
        return f.read(limit + 1)


def _json_problem(exc: ValueError) -> str:
    """Why a config is not JSON, in its own words (not Python's integer-size limit)."""
    if "integer string conversion" in str(exc):
        return "has an integer of more than 4,300 digits: no model dimension is that large"
    return f"is not JSON: {exc}"


class ConfigError(Exception):
    """A plan's `config:` file cannot be used; the message says why (PC005)."""


@dataclass(frozen=True)
class ConfigFile:
    data: dict[str, Any]  # the JSON object
    path: str  # where it was read: the plan's directory joined with its `config`
    sha256: str  # of its bytes, for the manifest's source.config


FileReader = Callable[[Path], bytes]  # a file's bytes, capped as read_capped caps; OSError


def read_config(plan_file: str, name: str, read: FileReader = read_capped) -> ConfigFile:
    """The JSON object in the config file ``name``, relative to the plan's directory, read
    through ``read`` (the language server's sees unsaved editor buffers). Raises
    ConfigError when it is unreadable, too large, not JSON or not an object."""
    path = Path(plan_file).parent / name
    try:
        if "\0" in name:  # no file system has such a name
            raise OSError(0, "a path cannot contain a NUL character")
        if not stat.S_ISREG(path.stat().st_mode):  # a FIFO would block, a device not end
            raise OSError(0, "not a regular file")
        raw = read(path)
        if len(raw) > MAX_BYTES:
            raise OSError(0, "larger than 4 MiB")
        data = json.loads(raw)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ConfigError(f"cannot read config '{clip(name)}': {reason}") from None
    except ValueError as exc:
        raise ConfigError(f"config '{clip(name)}' {_json_problem(exc)}") from None
    except RecursionError:
        raise ConfigError(f"config '{name}' nests too deeply to read") from None
    if not isinstance(data, dict):
        raise ConfigError(f"config '{name}' is not a JSON object")
    return ConfigFile(data, str(path), hashlib.sha256(raw).hexdigest())


def load(file: str, raw: bytes) -> Document | Diagnostic:
    """Parse one plan; a PC001 diagnostic when it is not a readable YAML document."""
    if len(raw) > MAX_BYTES:
        return _error(
            file, Pos(1, 1), f"file is larger than 4 MiB ({MAX_BYTES:,} bytes), the limit"
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = raw[: exc.start].decode("utf-8")  # the first bad byte: all before it is fine
        return _error(file, _text_pos(before, len(before)), "file is not valid UTF-8")
    if text.startswith("\ufeff"):
        text = text[1:]

    from ruamel.yaml import YAML  # noqa: PLC0415 (ruamel loads with the first plan)
    from ruamel.yaml.error import MarkedYAMLError, YAMLError  # noqa: PLC0415 (ruamel loads with the first plan)
    from ruamel.yaml.reader import ReaderError  # noqa: PLC0415 (ruamel loads with the first plan)

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # e.g. a reused anchor: legal YAML, the last one wins
            yaml = YAML(typ="safe", pure=True)
            yaml.Resolver = _core_resolver()
            yaml.Composer = _counting_composer()
            root = yaml.compose(text)
    except _Reject as rej:
        return _error(file, rej.pos, rej.message)
    except MarkedYAMLError as exc:
        return _error(file, *yaml_messages.explain(exc))
    except ReaderError as exc:  # a character YAML does not allow (a control character)
        pos = _text_pos(text, min(max(exc.position, 0), len(text)))
        char = exc.character
        code = char if isinstance(char, int) else ord(char[:1] or "\0")
        return _error(file, pos, f"invalid YAML: character U+{code:04X} is not allowed")
    except RecursionError:  # ruamel composes recursively: too deep for Python's own stack
        return _error(file, _too_deep(yaml, text), f"nesting deeper than {MAX_DEPTH} levels")
    except YAMLError as exc:
        reason = (str(exc).splitlines() or ["?"])[0]  # the rest is where, as the parser sees it
        return _error(file, Pos(1, 1), f"invalid YAML: {reason}")

    builder = _Builder()
    try:
        if root is None:
            data: Any = None
        else:
            builder.count(root, 0, set())
            data = builder.build(root, ())
    except _Reject as rej:
        return _error(file, rej.pos, rej.message)
    return Document(file, raw, data, builder.values, builder.keys, builder.ends)


def _too_deep(yaml: Any, text: str) -> Pos:
    """Where the first node deeper than MAX_DEPTH starts, found in the parser's event
    stream, which needs no recursion: the node ``_Builder.count`` would reject."""
    from ruamel.yaml.events import CollectionEndEvent, CollectionStartEvent, NodeEvent  # noqa: PLC0415 (ruamel loads with the first plan)

    events = yaml.parse(text)
    depth, event = 0, next(events)  # depth: collections open around the event
    while not (isinstance(event, NodeEvent) and depth > MAX_DEPTH):
        depth += isinstance(event, CollectionStartEvent) - isinstance(event, CollectionEndEvent)
        event = next(events)
    return _pos(event.start_mark)


@cache
def _core_resolver() -> type:
    """ruamel's resolver with plain scalars resolved by the YAML 1.2 core schema alone."""
    from ruamel.yaml.nodes import ScalarNode  # noqa: PLC0415 (ruamel loads with the first plan)
    from ruamel.yaml.resolver import VersionedResolver  # noqa: PLC0415 (ruamel loads with the first plan)
    from ruamel.yaml.tag import Tag  # noqa: PLC0415 (ruamel loads with the first plan)

    class CoreResolver(VersionedResolver):
        def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
            if kind is ScalarNode and implicit[0] and value != "<<":  # a merge key: PC001 later
                return Tag(suffix=_core_tag(value))
            return super().resolve(kind, value, implicit)

    return CoreResolver


@cache
def _counting_composer() -> type[Composer]:
    """ruamel's composer, stopped at the node past MAX_NODES in the text.

    A document has at least as many nodes, aliases expanded, as its text has node
    events (an alias among them), so this rejects only what ``_Builder.count`` would,
    but before composing the rest: a 4 MiB plan of 1.4M nodes took tens of seconds
    and most of a gigabyte to compose whole.
    """
    from ruamel.yaml.composer import Composer  # noqa: PLC0415 (ruamel loads with the first plan)

    class CountingComposer(Composer):
        def __init__(self, loader: Any = None) -> None:
            super().__init__(loader)
            self.nodes = 0

        def compose_node(self, parent: Any, index: Any) -> Any:
            self.nodes += 1
            if self.nodes > MAX_NODES:
                start = self.parser.peek_event().start_mark
                raise _Reject(_pos(start), _TOO_MANY_NODES.format(MAX_NODES))
            return super().compose_node(parent, index)

    return CountingComposer


class _Builder:
    def __init__(self) -> None:
        self.values: dict[PathT, Pos] = {}
        self.keys: dict[PathT, Pos] = {}
        self.ends: dict[Pos, Pos] = {}
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
                    raise _Reject(_pos(node.start_mark), _TOO_MANY_NODES.format(MAX_NODES))
        active.discard(key)
        self._sizes[key] = total
        return total

    def build(self, node: Any, path: PathT, key_pos: Pos | None = None) -> Any:
        start = _pos(node.start_mark)
        if node.tag == _NULL and node.value == "" and key_pos is not None:
            start = key_pos  # an empty value has no text of its own: point at its key
        else:
            self.ends[start] = _pos(node.end_mark)
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
                self.ends[kpos] = _pos(knode.end_mark)
                out[name] = self.build(vnode, (*path, name), kpos)
            return out
        if node.id == "sequence" and node.tag == _SEQ:
            return [self.build(child, (*path, i)) for i, child in enumerate(node.value)]
        if node.id != "scalar":
            raise _Reject(start, _unsupported(node.tag))
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
            raise _Reject(pos, f"integer {_digits(text)} does not fit in 64 bits")
        return value
    if tag == _FLOAT:
        try:
            return _yaml_float(text)
        except ValueError:
            raise _Reject(pos, f"invalid number {text[:40]!r}") from None
    if tag == _STR:
        return text
    raise _Reject(pos, _unsupported(tag))


def _digits(text: str) -> str:
    """An integer as a message quotes it: a long one by its first digits and its length."""
    return text if len(text) <= 40 else f"{text[:20]}… ({len(text):,} digits)"


def _unsupported(tag: Any) -> str:
    """``tag !!binary is not supported``: a standard tag as the plan writes it."""
    shown = str(tag).replace("tag:yaml.org,2002:", "!!")
    return f"tag {shown} is not supported: a plan is plain data"


def _yaml_int(text: str) -> int:
    """A YAML 1.2 core integer (an explicit ``!!int`` must be one too). One of more than
    30 digits is 2**64 at least: no need to convert it (Python refuses past 4,300)."""
    if not _CORE_INT.match(text):
        raise ValueError(text)
    if len(text.lstrip("+-")) > 30:
        return MAX_INT + 1
    if text[:2] == "0x":
        return int(text[2:], 16)
    if text[:2] == "0o":
        return int(text[2:], 8)
    return int(text, 10)


def _yaml_float(text: str) -> float:
    """A YAML 1.2 core float (an explicit ``!!float`` must be one; ``5`` is one)."""
    if not _CORE_FLOAT.match(text):
        raise ValueError(text)
    t = text.lower()
    if t.lstrip("+-") == ".inf":
        return float("-inf") if t.startswith("-") else float("inf")
    if t == ".nan":
        return float("nan")
    return float(t)

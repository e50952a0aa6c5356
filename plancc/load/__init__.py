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
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from plancc import codes
from plancc.diagnostics import Diagnostic, Pos, Where, diag, pos_of, where_of
from plancc.load import messages as yaml_messages
from plancc.load.compose import MAX_DEPTH, MAX_NODES, Composed, Composer, Reject
from plancc.load.nodes import PathT
from plancc.reading import read_regular
from plancc.text import clip

__all__ = [
    "MAX_BYTES",
    "MAX_DEPTH",
    "MAX_NODES",
    "ConfigError",
    "ConfigFile",
    "Document",
    "FileReader",
    "PathT",
    "Positions",
    "load",
    "read_capped",
    "read_config",
    "read_config_at",
    "read_config_file",
    "unbroken",
]

MAX_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True)
class Document:
    file: str
    raw: bytes
    data: Any
    values: Positions
    keys: Positions
    # Where the node (key or value) that starts at a position ends, exclusive: a
    # diagnostic's whole range for an editor. Of nodes starting at one position (a
    # block mapping and its first key) the innermost is kept.
    ends: Ends
    # The paths where an alias stands and of the anchored nodes aliases name: a node at,
    # above or below one of them is written once for several places of the tree.
    aliased: frozenset[PathT] = frozenset()

    def shared(self, path: PathT) -> bool:
        """Whether the node at ``path`` is text that aliases share: it is, holds or lies
        inside an anchored node some alias names, or an alias (an edit of it would
        change the other places too, or could not be made)."""
        return any(a[: len(path)] == path or path[: len(a)] == a for a in self.aliased)

    def at(self, path: PathT) -> Pos:
        """Where the value at ``path`` starts (or its nearest known ancestor)."""
        return self.values.nearest(path)

    def key_at(self, path: PathT) -> Pos:
        """Where the key of the entry at ``path`` starts (its value for list items)."""
        return self.keys.get(path) or self.at(path)


class Positions(Mapping[PathT, Pos]):
    """Path -> position, made a ``Pos`` only when asked for: a plan of 10,000 warms has
    300,000 nodes, and a diagnostic needs a handful of them."""

    __slots__ = ("_where",)

    def __init__(self, where: dict[PathT, Where]) -> None:
        self._where = where

    def where(self, path: PathT) -> Where | None:
        """The position at ``path`` as the loader keeps it (an editor's outline asks for
        thousands: a ``Pos`` each would be as many objects made and dropped)."""
        return self._where.get(path)

    def __getitem__(self, path: PathT) -> Pos:
        where = self.where(path)
        if where is None:
            raise KeyError(path)
        return pos_of(where)

    def __contains__(self, path: object) -> bool:
        return type(path) is tuple and self.where(path) is not None

    def get(self, path: PathT, default: Any = None) -> Any:  # Mapping's, without a raise
        where = self.where(path)
        return default if where is None else pos_of(where)

    def nearest(self, path: PathT) -> Pos:
        """The position at ``path``, or at its nearest ancestor that has one."""
        where = self.where(path)
        get = self._where.get
        while where is None and path:
            path = path[:-1]
            where = get(path)
        return Pos(1, 1) if where is None else pos_of(where)

    def __iter__(self) -> Iterator[PathT]:
        return iter(self._where)

    def __len__(self) -> int:
        return len(self._where)


class Ends(Mapping[Pos, Pos]):
    """Start -> end of each node, made ``Pos`` only when asked for (by an editor: a
    diagnostic's whole range)."""

    __slots__ = ("_where",)

    def __init__(self, where: dict[Where, Where]) -> None:
        self._where = where

    def __getitem__(self, start: Pos) -> Pos:
        return pos_of(self._where[where_of(start.line, start.col)])

    def __contains__(self, start: object) -> bool:
        return isinstance(start, Pos) and where_of(start.line, start.col) in self._where

    def __iter__(self) -> Iterator[Pos]:
        return (pos_of(w) for w in self._where)

    def __len__(self) -> int:
        return len(self._where)

    def get(self, start: Pos, default: Any = None) -> Any:  # Mapping's, without a raise
        where = self._where.get(where_of(start.line, start.col))
        return default if where is None else pos_of(where)

    def end(self, start: Where) -> Where:
        """Where the node starting at ``start`` ends (``start`` for none), as kept."""
        return self._where.get(start, start)


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


FileReader = Callable[[Path], bytes]  # a file's bytes, capped (read_config_file); OSError


def read_config_file(path: Path) -> bytes:
    """A config file's bytes: a regular file only, opened without blocking, no more than
    MAX_BYTES of it read (``plancc.reading``). Raises OSError."""
    return read_regular(path, MAX_BYTES)


def read_config(plan_file: str, name: str, read: FileReader = read_config_file) -> ConfigFile:
    """The JSON object in the config file ``name``, relative to the plan's directory, read
    through ``read`` (the language server's sees unsaved editor buffers). Raises
    ConfigError when it is unreadable, too large, not JSON or not an object."""
    return read_config_at(Path(plan_file).parent / name, name, read)


def read_config_at(path: Path, name: str, read: FileReader = read_config_file) -> ConfigFile:
    """The JSON object in the config file at ``path``, named ``name`` in messages (as
    ``read_config``; `plancc extract --config` names a file of its own)."""
    try:
        if "\0" in name:  # no file system has such a name
            raise OSError(0, "a path cannot contain a NUL character")
        # Said before any reader opens it (the language server's reads plain files).
        if not stat.S_ISREG(path.stat().st_mode):  # a FIFO would block, a device not end
            raise OSError(0, "not a regular file")
        raw = read(path)
        if len(raw) > MAX_BYTES:
            raise OSError(0, "larger than 4 MiB")
        data = json.loads(raw, object_pairs_hook=_unique_pairs)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ConfigError(f"cannot read config '{clip(name)}': {reason}") from None
    except ValueError as exc:
        raise ConfigError(f"config '{clip(name)}' {_json_problem(exc)}") from None
    except RecursionError:
        raise ConfigError(f"config '{name}' nests too deeply to read") from None
    except _DuplicateKey:  # json keeps the last silently: as YAML's PC001, an error
        key, line, first = _duplicate_key(raw)
        raise ConfigError(
            f"config '{clip(name)}': duplicate key '{clip(key)}' at line {line} "
            f"(first defined at line {first})"
        ) from None
    if not isinstance(data, dict):
        raise ConfigError(f"config '{name}' is not a JSON object")
    return ConfigFile(data, str(path), hashlib.sha256(raw).hexdigest())


class _DuplicateKey(Exception):
    pass


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) < len(pairs):
        raise _DuplicateKey
    return out


# A JSON string (a key when `:` follows it), or a brace: enough to walk valid JSON's objects.
_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"(\s*:)?|[{}]')


def _duplicate_key(raw: bytes) -> tuple[str, int, int]:
    """The first key of valid JSON ``raw`` that its object repeats: the key, the line of
    the repeat and the line of the first."""
    text = raw.decode(json.detect_encoding(raw))
    objects: list[dict[str, int]] = []
    line, counted = 1, 0
    for m in _JSON_TOKEN.finditer(text):
        token = m.group()
        if token == "{":
            objects.append({})
        elif token == "}":
            objects.pop()
        elif m.group(1):
            key = json.loads(token[: token.rindex('"') + 1])  # escapes unfolded: "\u0061" is "a"
            line, counted = line + text.count("\n", counted, m.start()), m.start()
            if key in objects[-1]:
                return key, line, objects[-1][key]
            objects[-1][key] = line
    raise AssertionError("no duplicate key")  # _unique_pairs found one


def load(file: str, raw: bytes, *, pure: bool = False) -> Document | Diagnostic:
    """Parse one plan; a PC001 diagnostic when it is not a readable YAML document.

    The plan is composed (``compose.Composer``, one pass: tree, positions and ends)
    from the events of ruamel's C parser (libyaml) where it is installed, else of its
    pure-Python parser; ``pure`` asks for the pure one, which the tests hold to the
    same result on every text."""
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

    from ruamel.yaml.error import MarkedYAMLError, YAMLError  # noqa: PLC0415 (ruamel loads with the first plan)
    from ruamel.yaml.reader import ReaderError  # noqa: PLC0415 (ruamel loads with the first plan)

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # e.g. a reused anchor: legal YAML, the last one wins
            data, values, keys, ends, aliased = _compose(text, pure)
    except Reject as rej:
        return _error(file, rej.pos, rej.message)
    except MarkedYAMLError as exc:
        return _error(file, *yaml_messages.explain(exc))
    except ReaderError as exc:  # a character YAML does not allow (a control character)
        pos = _text_pos(text, min(max(exc.position, 0), len(text)))
        char = exc.character
        code = char if isinstance(char, int) else ord(char[:1] or "\0")
        return _error(file, pos, f"invalid YAML: character U+{code:04X} is not allowed")
    except YAMLError as exc:
        reason = (str(exc).splitlines() or ["?"])[0]  # the rest is where, as the parser sees it
        return _error(file, Pos(1, 1), f"invalid YAML: {reason}")
    return Document(file, raw, data, Positions(values), Positions(keys), Ends(ends), aliased)


def _compose(text: str, pure: bool) -> Composed:
    """The tree, its positions and ends, from the C parser's events where it is installed.

    A YAML error the C parser finds is said as the pure parser says it, the reference
    wording (``yaml_messages``): the pure parser's events go through a composer that
    counts but builds nothing, so a text costs it no more than its length (an alias
    bomb cut short included), and raise what the pure path would."""
    from ruamel.yaml.composer import ComposerError  # noqa: PLC0415 (ruamel loads with the first plan)
    from ruamel.yaml.error import YAMLError  # noqa: PLC0415 (ruamel loads with the first plan)

    text, restore = unbroken(text)
    parser = None if pure or _EMPTY_KEY.search(text) else c_parser()
    if parser is None:
        return Composer(_pure_events(text), restore=restore).compose()
    try:
        composed = Composer(parser(text).get_event, restore=restore).compose()
    except ComposerError:  # the composer's own (no second document, an undefined alias)
        raise
    except YAMLError as exc:
        Composer(_pure_events(text), build=False).compose()
        raise exc from None  # the pure parser reads the text: libyaml's words, then
    return _within(text, composed)


# A `?` that blanks, comments and line breaks alone part from a `:`, `,` or `]`: in a
# flow sequence, an explicit key left empty, which libyaml misreads (it takes that
# token into the key, then refuses the text or reads past it: `[?]]` is `[{"": null}]`).
# The pure parser, which refuses it, reads such a text; the pattern finds more than
# these (a `?` in a quoted string or a comment), and those read alike on both paths.
_EMPTY_KEY = re.compile(r"\?(?:[ \t\r\n]|#[^\r\n]*)*[:,\]]")

_STAND_INS = ("\x85", "\u2028", "\u2029", "\ufeff")


def unbroken(text: str) -> tuple[str, dict[int, str] | None]:
    """``text`` with U+0085, U+2028 and U+2029, which YAML 1.1 (libyaml, and ruamel's
    scanner) takes as line breaks, and U+FEFF, for which ruamel's reader counts no
    column, each in place of a character of a private use plane that ``text`` does
    not hold: to YAML 1.2 they are characters like any other, as these are to both
    parsers. Also the table that puts them back in a scalar."""
    found = [c for c in _STAND_INS if c in text]
    if not found:
        return text, None
    spare = (chr(c) for c in range(0xF0000, 0xFFFFE) if chr(c) not in text)
    restore = {}
    for char, stand_in in zip(found, spare, strict=False):
        text = text.replace(char, stand_in)
        restore[ord(stand_in)] = char
    return text, restore


def _pure_events(text: str) -> Callable[[], Any]:
    from plancc.load import pure as yaml_pure  # noqa: PLC0415 (the pure parser: a fallback, or to word an error)

    return yaml_pure.events(text)  # type: ignore[no-any-return]


def _within(text: str, composed: Composed) -> Composed:
    """What the composer made of the C parser's events, no mark past the end of
    ``text``. Where a text without a final line break ends in an empty node (a last
    line ``-``, or only ``---``), libyaml's marks put the node, or the block collection
    it closes, on the line after the last, which is not in the text; the pure parser
    puts them where the text ends."""
    if not text or text.endswith(("\n", "\r")):
        return composed  # the text ends at the start of a line: no mark is past it
    data, values, keys, ends, aliased = composed
    stop = where_of(*_text_pos(text, len(text)))
    if max((*ends, *ends.values()), default=0) <= stop:
        return composed
    for path, where in values.items():
        if where > stop:
            values[path] = stop
    ends = {min(start, stop): min(end, stop) for start, end in ends.items()}
    return data, values, keys, ends, aliased


@cache
def c_parser() -> Callable[[str], Any] | None:
    """ruamel's C parser (ruamel.yaml.clib), or None where it is not installed."""
    try:
        from _ruamel_yaml import CParser  # type: ignore[import-not-found]  # noqa: PLC0415
    except ImportError:
        try:
            from _ruamel_yaml_clibz import CParser  # type: ignore[import-not-found]  # noqa: PLC0415
        except ImportError:
            return None
    return CParser  # type: ignore[no-any-return]

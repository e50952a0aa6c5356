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
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from plancc import codes, yaml_messages
from plancc.compose import MAX_DEPTH, MAX_NODES, Composer, PathT, Reject
from plancc.diagnostics import Diagnostic, Pos, Where, diag, pos_of, where_of
from plancc.flowmap import Folds
from plancc.scan import Tree, scan
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
]

MAX_BYTES = 4 * 1024 * 1024

# Text the C parser (libyaml, YAML 1.1) and ruamel's pure one (YAML 1.2) may
# read differently goes to the pure parser alone, whose diagnostics are the
# reference: a character YAML forbids (a control character), a tab, U+0085,
# U+2028 and U+2029 (line breaks to YAML 1.1), U+FEFF past the start (the pure
# reader counts no column for it), U+FFFE, U+FFFF; an anchor or alias name
# followed by one of `:?%@` (part of the name to YAML 1.2, its end to libyaml);
# a tag (`!` starting a token: libyaml types a bare `!` otherwise); and a flow
# collection before `:` (libyaml takes it as a key where ruamel does not).
# Four patterns, the last two searched only when their character is in the
# text: one alternation of all four is ten times slower on a large plan.
_PURE_ONLY_CHAR = re.compile(
    "[^\n\r\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]"
)
_PURE_ONLY_KEY = re.compile(r"[\]}] *:")
_PURE_ONLY_NAME = re.compile(r"[&*][-0-9A-Za-z_]*[:?%@`]")
_PURE_ONLY_TAG = re.compile(r"(?:^|[\s,\[{])!")


def _pure_only(text: str) -> bool:
    """Whether ``text`` is for the pure parser alone (see above)."""
    return bool(
        _PURE_ONLY_CHAR.search(text)
        or _PURE_ONLY_KEY.search(text)
        or (("&" in text or "*" in text) and _PURE_ONLY_NAME.search(text))
        or ("!" in text and _PURE_ONLY_TAG.search(text))
    )


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
        if type(self.values) is Positions:  # the loader's: one dict lookup per level
            return self.values.nearest(path)
        while path not in self.values and path:
            path = path[:-1]
        return self.values.get(path, Pos(1, 1))

    def key_at(self, path: PathT) -> Pos:
        """Where the key of the entry at ``path`` starts (its value for list items)."""
        return self.keys.get(path) or self.at(path)


class Positions(Mapping[PathT, Pos]):
    """Path -> position, made a ``Pos`` only when asked for: a plan of 10,000 warms has
    300,000 nodes, and a diagnostic needs a handful of them. Those inside a flow
    mapping the scanner kept folded are recorded on the first question about one
    (``flowmap.Folds``, shared by a document's values and keys)."""

    __slots__ = ("_folds", "_where")

    def __init__(self, where: dict[PathT, Where], folds: Folds | None = None) -> None:
        self._where = where
        self._folds = folds

    def _find(self, path: PathT) -> Where | None:
        where = self._where.get(path)
        if where is None and self._folds is not None and self._folds.unfold_around(path):
            where = self._where.get(path)
        return where

    def __getitem__(self, path: PathT) -> Pos:
        where = self._find(path)
        if where is None:
            raise KeyError(path)
        return pos_of(where)

    def __contains__(self, path: object) -> bool:
        return type(path) is tuple and self._find(path) is not None

    def get(self, path: PathT, default: Any = None) -> Any:  # Mapping's, without a raise
        where = self._find(path)
        return default if where is None else pos_of(where)

    def nearest(self, path: PathT) -> Pos:
        """The position at ``path``, or at its nearest ancestor that has one."""
        where = self._find(path)  # unfolds the mapping holding it: its ancestors are known
        get = self._where.get
        while where is None and path:
            path = path[:-1]
            where = get(path)
        return Pos(1, 1) if where is None else pos_of(where)

    def _unfolded(self) -> dict[PathT, Where]:
        if self._folds is not None:
            self._folds.unfold_all()
            self._folds = None
        return self._where

    def __iter__(self) -> Iterator[PathT]:
        return iter(self._unfolded())

    def __len__(self) -> int:
        return len(self._unfolded())


class _Ends(Mapping[Pos, Pos]):
    """Start -> end of each node, made ``Pos`` only when asked for. Only an editor asks
    (a diagnostic's whole range): when the loader did not work them out (None), they
    are on the first question, by reading the text again."""

    __slots__ = ("_make", "_where_or_none")

    def __init__(
        self, where: dict[Where, Where] | None, make: Callable[[], dict[Where, Where]]
    ) -> None:
        self._where_or_none = where
        self._make = make

    @property
    def _where(self) -> dict[Where, Where]:
        if self._where_or_none is None:
            self._where_or_none = self._make()
        return self._where_or_none

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


def load(
    file: str, raw: bytes, *, pure: bool = False, ranges: bool = False
) -> Document | Diagnostic:
    """Parse one plan; a PC001 diagnostic when it is not a readable YAML document.

    ``pure`` skips the line scanner and the C parser: the tests run every case
    through both paths. ``ranges`` has the line scanner keep where each node ends as
    it reads (an editor asks for every diagnostic's); otherwise a scanned plan's
    ``Document.ends`` reads the text again on its first question, and a plan that
    is only checked skips a third of the loader's objects."""
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
            data, values, keys, ends, folds = _compose(text, pure, ranges)
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
    ranges_of = _Ends(ends, lambda: _ends_of(text, pure))
    return Document(file, raw, data, Positions(values, folds), Positions(keys, folds), ranges_of)


def _ends_of(text: str, pure: bool) -> dict[Where, Where]:
    """Where each node of ``text`` (read once already, without a problem) ends."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ends = _compose(text, pure, ranges=True)[3]
    assert ends is not None, "asked for"
    return ends


def _compose(text: str, pure: bool, ranges: bool) -> Tree:
    """The tree and its positions: from the line scanner where it reads the text (the
    node ends only if ``ranges``, else None); else from the C parser's events where it
    is installed and the text is one it reads as the pure parser does; from the pure
    parser when the C parser finds a YAML error, so every YAML error reads as the pure
    one words it. The composer works out the ends on its way anyway."""
    from ruamel.yaml import YAML  # noqa: PLC0415 (ruamel loads with the first plan)
    from ruamel.yaml.error import YAMLError  # noqa: PLC0415 (ruamel loads with the first plan)

    if pure or _pure_only(text):
        c_parser = None
    else:
        scanned = scan(text, ranges=ranges)  # the part of YAML plans are written in
        if scanned is not None:
            return scanned
        c_parser = _c_parser()
    if c_parser is not None:
        try:
            data, values, keys, ends = Composer(c_parser(text).get_event).compose()
        except YAMLError:
            pass
        else:
            return data, values, keys, _within(text, ends), None
    return (*Composer(YAML(typ="safe", pure=True).parse(text).__next__).compose(), None)


def _within(text: str, ends: dict[Where, Where]) -> dict[Where, Where]:
    """``ends`` from the C parser's events, none past the end of ``text``. A block
    collection that the end of a text without a final line break closes, after an
    empty value (a last line ``-``), ends on the line after the last in libyaml's marks,
    which is not in the text; the pure parser (and the scanner) end it where the
    text ends."""
    if not text or text.endswith(("\n", "\r")):
        return ends  # the text ends at the start of a line: no mark is past it
    stop = where_of(*_text_pos(text, len(text)))
    for start, end in ends.items():
        if end > stop:
            ends[start] = stop
    return ends


@cache
def _c_parser() -> Callable[[str], Any] | None:
    """ruamel's C parser (ruamel.yaml.clib), or None where it is not installed."""
    try:
        from _ruamel_yaml import CParser  # type: ignore[import-not-found]  # noqa: PLC0415
    except ImportError:
        try:
            from _ruamel_yaml_clibz import CParser  # type: ignore[import-not-found]  # noqa: PLC0415
        except ImportError:
            return None
    return CParser  # type: ignore[no-any-return]

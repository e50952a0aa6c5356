"""ruamel's pure-Python parser, reading YAML as libyaml (the C parser) does.

``load`` composes a plan from the C parser's events where it is installed, else
from these; a YAML error the C parser finds is worded as this parser words it.
So that every text has one reading on both paths (tests/test_parsers.py, ``make
fuzz``), ruamel's parser runs in its YAML 1.1 mode, as libyaml reads (the
composer resolves scalars by the 1.2 core schema either way), and is taught
here to read what libyaml reads and YAML 1.2 allows:

- a tab separating tokens on a line (`a:\tb`, `a: b\t# note`, `!!str\tx`, a
  block scalar's header), and inside a plain scalar (`a: b\tc`); a tab still
  cannot indent, nor follow a block indicator (`-`, `?`);
- `:` right after a flow key in a flow collection (`["b":c]`, YAML 1.2 example
  7.21), a comment right after a block scalar's header (`>#`);
- a block scalar whose leading blank lines are less indented than its text;
- `...` repeated after a document;

and to refuse, or read otherwise, what libyaml does: an anchor's or alias's
name ends at the first character that is not a letter, digit, `_` or `-`
(`&a:1` anchors `:1` as `a`); a plain scalar in a flow collection cannot hold a
`:` that no blank follows; a top-level block scalar's text is indented; an
escaped surrogate (`"\\ud800"`), `!!` without a suffix, a directive other than
`%YAML` and `%TAG` and a `%YAML` other than 1.1 and 1.2 are errors; a tag's
handle is `!`, `!!` or `!name!`, the rest its suffix up to a blank (`!!!int` is
`!!`, `!int`; `[!, b]` is the tag `!,`).
An explicit key left empty in a flow sequence (`[? ]`), which libyaml misreads,
is an error here, and the loader reads such a text with this parser alone.

This module imports ruamel's pure parser: the loader imports it only when it
needs it (a fallback, or an error to word).
"""

from __future__ import annotations

import re
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import StreamMark as Mark
from ruamel.yaml.parser import Parser, ParserError, RoundTripParser
from ruamel.yaml.scanner import RoundTripScanner, Scanner, ScannerError
from ruamel.yaml.tokens import (
    DirectiveToken,
    DocumentEndToken,
    FlowEntryToken,
    FlowSequenceEndToken,
    TagToken,
    ValueToken,
)

_BREAKS = "\r\n\x85\u2028\u2029"
_SURROGATE = re.compile("[\ud800-\udfff]")


class _Scanner(Scanner):
    # libyaml reads YAML 1.1, whatever a `%YAML` directive says; so does ruamel's
    # parser when its version is 1.1 (its tags are left to the composer).
    @property
    def yaml_version(self) -> Any:
        return (1, 1)

    @yaml_version.setter
    def yaml_version(self, version: Any) -> None:
        pass

    def scan_to_next_token(self) -> Any:
        # libyaml skips a tab like a space unless it may be indentation: in a block
        # collection where a simple key may start (a line's start, after `-` or `?`).
        if self.flow_level or not self.allow_simple_key:
            while self.reader.peek() in " \t":
                self.reader.forward()
        return super().scan_to_next_token()

    def scan_plain_spaces(self, indent: Any, start_mark: Any) -> Any:
        # The blanks and line breaks after a word of a plain scalar, as libyaml reads
        # them: tabs are blanks too, but not left of the scalar's indentation on a
        # line it continues on. None at a document marker, as ruamel's.
        reader = self.reader
        length = 0
        while reader.peek(length) in " \t":
            length += 1
        blanks = reader.prefix(length)
        reader.forward(length)
        if reader.peek() not in _BREAKS:
            return [blanks] if blanks else []
        first = self.scan_line_break()
        self.allow_simple_key = True
        breaks = []
        while True:
            if (
                reader.column == 0
                and reader.prefix(3) in ("---", "...")
                and (reader.peek(3) in "\0 \t\r\n\x85\u2028\u2029")
            ):
                return None
            ch = reader.peek()
            if ch == "\t" and reader.column < indent:
                raise ScannerError(
                    "while scanning a plain scalar",
                    start_mark,
                    "found a tab character that violates indentation",
                    reader.get_mark(),
                )
            if ch in " \t":
                reader.forward()
            elif ch in _BREAKS:
                breaks.append(self.scan_line_break())
            else:
                break
        if first != "\n":
            return [first, *breaks]
        return breaks or [" "]

    def scan_plain(self) -> Any:
        # In a flow collection libyaml refuses a `:` that a blank does not follow
        # (`{a:b}`, `{a:}`), which ruamel takes into the scalar.
        token = super().scan_plain()
        if self.flow_level:
            start, end = token.start_mark, token.end_mark
            text = self.reader.buffer[start.index : end.index + 1]
            for at, ch in enumerate(text[:-1]):
                if ch == ":" and text[at + 1] not in "\0 \t\r\n":
                    raise ScannerError(
                        "while scanning a plain scalar",
                        start,
                        "found unexpected ':'",
                        Mark(start.name, start.index + at, start.line, start.column + at),
                    )
        return token

    def scan_flow_scalar(self, style: Any) -> Any:
        # libyaml refuses an escape of a surrogate (`"\\ud800"`): no character.
        token = super().scan_flow_scalar(style)
        if not token.value.isascii() and _SURROGATE.search(token.value):
            raise ScannerError(
                "while scanning a double-quoted scalar",
                token.start_mark,
                "found invalid Unicode character escape code",
                token.start_mark,
            )
        return token

    def scan_tag(self) -> Any:
        # A tag as libyaml reads it: `!<uri>`, or a handle (`!`, `!!`, `!name!`) then
        # a suffix of URI characters (`!!!int` is `!!` then `!int`), ended by a blank
        # (a tab too) or, in a flow collection, a `,`.
        reader = self.reader
        if reader.peek(1) == "<":
            return super().scan_tag()
        start = reader.get_mark()
        length = 1
        while (ch := reader.peek(length)).isascii() and (ch.isalnum() or ch in "-_"):
            length += 1
        named = reader.peek(length) == "!"
        handle = reader.prefix(length + 1) if named else "!"
        reader.forward(len(handle))
        # libyaml's suffix takes flow indicators too (`[!, b]` is the tag `!,`): a
        # tag ends at a blank, or at a `,` after a verbatim one (ruamel's, above).
        end = "\0 \t\r\n"
        if handle == "!" and reader.peek() in end:
            value: tuple[str | None, str] = (None, "!")  # the non-specific tag
        else:
            value = (handle, self.scan_tag_uri("tag", start))
        if reader.peek() not in end:
            raise ScannerError(
                "while scanning a tag",
                start,
                f"expected ' ', but found {reader.peek()!r}",
                reader.get_mark(),
            )
        return TagToken(value, start, reader.get_mark())

    def scan_directive(self) -> Any:
        # A directive as libyaml reads it: a name of letters, digits, `-` and `_`, which
        # must be `YAML` (of version 1.1 or 1.2) or `TAG` (YAML 1.2 would ignore another,
        # with a warning), then its parts and a comment, parted by blanks or tabs. The
        # version is read here as written (``yaml_version`` above is 1.1 whatever it says).
        reader = self.reader
        start = reader.get_mark()
        length = 1
        while (ch := reader.peek(length)).isascii() and (ch.isalnum() or ch in "-_"):
            length += 1
        if length == 1:
            return super().scan_directive()  # no name: ruamel's error
        name = reader.prefix(length)[1:]
        reader.forward(length)
        self._part_ends(start, "alphabetic or numeric character")
        if name not in ("YAML", "TAG"):
            raise ScannerError(
                "while scanning a directive",
                start,
                "found unknown directive name",
                reader.get_mark(),
            )
        self._skip_blanks()
        value: Any
        if name == "YAML":
            major = self.scan_yaml_directive_number(start)
            if reader.peek() != ".":
                self._part_ends(start, "a digit or '.'", always=True)
            reader.forward()
            minor = self.scan_yaml_directive_number(start)
            self._part_ends(start, "a digit or '.'")
            if (major, minor) not in ((1, 1), (1, 2)):
                raise ScannerError(
                    None,
                    None,
                    "found incompatible YAML document (version 1.1 or 1.2 is required)",
                    start,
                )
            value = self.yaml_version
        else:
            handle = self.scan_tag_handle("directive", start)
            self._part_ends(start, "' '")
            self._skip_blanks()
            value = (handle, self.scan_tag_uri("directive", start))
            self._part_ends(start, "' '")
        end = reader.get_mark()
        self._skip_blanks()
        if reader.peek() == "#":
            while reader.peek() not in "\0\r\n":
                reader.forward()
        if reader.peek() not in "\0\r\n":
            raise ScannerError(
                "while scanning a directive",
                start,
                f"expected a comment or a line break, but found {reader.peek()!r}",
                reader.get_mark(),
            )
        self.scan_line_break()
        return DirectiveToken(name, value, start, end)

    def _skip_blanks(self) -> None:
        while self.reader.peek() in " \t":
            self.reader.forward()

    def _part_ends(self, start: Any, expected: str, *, always: bool = False) -> None:
        """A directive's name, version, handle or prefix ends at a blank, a tab or the
        line's end (``always``: it cannot end here)."""
        ch = self.reader.peek()
        if always or ch not in "\0 \t\r\n":
            raise ScannerError(
                "while scanning a directive",
                start,
                f"expected {expected}, but found {ch!r}",
                self.reader.get_mark(),
            )

    def scan_block_scalar_indicators(self, start_mark: Any) -> Any:
        # A block scalar's header: a chomping and an indentation indicator, in either
        # order, then blanks (tabs too) or a comment, which libyaml lets touch them.
        reader = self.reader
        chomping = increment = None
        for _ in range(2):
            ch = reader.peek()
            if ch in "+-" and chomping is None:
                chomping = ch == "+"
            elif ch in "123456789" and increment is None:
                increment = int(ch)
            elif ch == "0" and increment is None:
                raise ScannerError(
                    "while scanning a block scalar",
                    start_mark,
                    "expected indentation indicator in the range 1-9, but found 0",
                    reader.get_mark(),
                )
            else:
                break
            reader.forward()
        ch = reader.peek()
        if ch not in "\0 \t\r\n#":
            raise ScannerError(
                "while scanning a block scalar",
                start_mark,
                f"expected chomping or indentation indicators, but found {ch!r}",
                reader.get_mark(),
            )
        return chomping, increment

    def scan_block_scalar_ignored_line(self, start_mark: Any) -> Any:
        reader = self.reader
        while reader.peek() in " \t":
            reader.forward()
        if reader.peek() == "#":
            while reader.peek() not in "\0\r\n":
                reader.forward()
        ch = reader.peek()
        if ch not in "\0\r\n":
            raise ScannerError(
                "while scanning a block scalar",
                start_mark,
                f"expected a comment or a line break, but found {ch!r}",
                reader.get_mark(),
            )
        self.scan_line_break()

    def scan_anchor(self, token_class: Any) -> Any:
        start = self.reader.get_mark()
        what = "alias" if self.reader.peek() == "*" else "anchor"
        self.reader.forward()
        length = 0
        while (ch := self.reader.peek(length)).isascii() and (ch.isalnum() or ch in "-_"):
            length += 1
        if length == 0 or ch not in "\0 \t\r\n?:,]}%@`":
            self.reader.forward(length)
            raise ScannerError(
                f"while scanning an {what}",
                start,
                f"expected alphabetic or numeric character, but found {ch!r}",
                self.reader.get_mark(),
            )
        name = self.reader.prefix(length)
        self.reader.forward(length)
        return token_class(name, start, self.reader.get_mark())

    def check_value(self) -> Any:
        # In a flow collection libyaml takes any `:` a token starts with as a value.
        return bool(self.flow_level) or super().check_value()

    def scan_block_scalar_indentation(self) -> Any:
        # The leading blank lines of a block scalar whose indentation is found from
        # its first line of text: their spaces count only towards that indentation.
        chunks = []
        widest = 0
        end_mark = self.reader.get_mark()
        while (ch := self.reader.peek()) == " " or ch in _BREAKS:
            if ch == " ":
                self.reader.forward()
                widest = max(widest, self.reader.column)
            else:
                chunks.append(self.scan_line_break())
                end_mark = self.reader.get_mark()
        return chunks, widest, end_mark


class _Parser(Parser):
    ended = False  # a document has ended with `...`

    def parse_flow_sequence_entry_mapping_key(self) -> Any:
        # An explicit key left empty in a flow sequence (`[? ]`, `[? : x]`): libyaml
        # takes the token after `?` (`:`, `,` or `]`) into the empty key and reads on
        # past it, refusing most such texts and misreading the rest (`[?]]`). An
        # error on both paths (load reads such a text with this parser alone).
        key = self.scanner.get_token()  # the `?`
        if self.scanner.check_token(ValueToken, FlowEntryToken, FlowSequenceEndToken):
            raise ParserError(None, None, "found an empty explicit key", key.start_mark)
        self.states.append(self.parse_flow_sequence_entry_mapping_value)
        return self.parse_flow_node()

    def parse_document_start(self) -> Any:
        # A document starts at its first directive, as libyaml marks it (the second
        # document of a plan is PC001 there).
        while self.scanner.check_token(DocumentEndToken):
            self.scanner.get_token()
        first = self.scanner.peek_token()
        event = super().parse_document_start()
        if isinstance(first, DirectiveToken):
            event.start_mark = first.start_mark
        return event

    def parse_document_end(self) -> Any:
        event = super().parse_document_end()
        self.ended = event.explicit
        return event

    def parse_implicit_document_start(self) -> Any:
        if self.ended and self.scanner.check_token(DocumentEndToken):  # `...` again
            return self.parse_document_start()
        return super().parse_implicit_document_start()


class _RoundTripScanner(_Scanner, RoundTripScanner):
    pass


class _RoundTripParser(_Parser, RoundTripParser):
    pass


def round_trip_events(text: str) -> Any:
    """ruamel's round-trip events of ``text`` (comments kept, for `plancc fmt`), read as
    the loader reads it: a text the loader takes is one `fmt` can lay out."""
    yaml = YAML(typ="rt")
    yaml.Scanner = _RoundTripScanner
    yaml.Parser = _RoundTripParser
    yaml.top_level_block_style_scalar_no_indent_error_1_1 = True
    return yaml.parse(text)


def events(text: str) -> Any:
    """The pure parser's events of ``text``, one per call of what is returned."""
    yaml = YAML(typ="safe", pure=True)
    yaml.Scanner = _Scanner
    yaml.Parser = _Parser
    yaml.top_level_block_style_scalar_no_indent_error_1_1 = True  # libyaml's, too
    return yaml.parse(text).__next__

"""The line-fitter: breaks the generated module's too-long statements as ruff would."""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass

LINE_LENGTH = 88  # ruff's and black's default
_INDENT = 4

# The statements the template writes on one line (`x = call(...)`, `with call(...):`,
# `call(...)`, and a parameter `name: Sub[...],`) are broken, when they are too long, in
# one way only: a bracket (call, subscript or list) that does not fit opens onto one item
# per line, each followed by a comma. The last comma is ruff's "magic trailing comma": it
# keeps the bracket expanded at every line length, so the layout does not depend on the
# line length a project formats with. What ruff has no such marker for is an expression:
# a dim expression that is too long alone on its line breaks before each of its
# lowest-precedence operators (keeping each operand whole when it fits; a parenthesized
# operand opens onto its own lines), as ruff does at LINE_LENGTH, and a formatter with a
# longer line length joins it again when it fits there. tests/test_render.py checks
# that ruff leaves the output as it is, on random statements.


@dataclass(frozen=True)
class _Atom:
    text: str


@dataclass(frozen=True)
class _Paren:
    inner: _Node


@dataclass(frozen=True)
class _Chain:
    operands: tuple[_Node, ...]
    ops: tuple[str, ...]


@dataclass(frozen=True)
class _Brackets:
    head: str  # callee or subscripted value, flat text; "" for a list
    open: str
    items: tuple[_Node, ...]
    close: str


@dataclass(frozen=True)
class _Keyword:
    name: str
    value: _Node


_Node = _Atom | _Paren | _Chain | _Brackets | _Keyword

_PRECEDENCE = {"+": 1, "-": 1, "*": 2, "//": 2, "%": 2, "/": 2}
_CLOSE = {"(": ")", "[": "]"}


class _Unsupported(Exception):
    """A statement outside the forms the template writes: left as it is."""


def _flat(node: _Node) -> str:
    if isinstance(node, _Atom):
        return node.text
    if isinstance(node, _Paren):
        return f"({_flat(node.inner)})"
    if isinstance(node, _Keyword):
        return f"{node.name}={_flat(node.value)}"
    if isinstance(node, _Chain):
        parts = [_flat(node.operands[0])]
        for op, operand in zip(node.ops, node.operands[1:], strict=True):
            parts.append(f"{op} {_flat(operand)}")
        return " ".join(parts)
    return node.head + node.open + ", ".join(_flat(i) for i in node.items) + node.close


def _lay(
    node: _Node, indent: int, prefix: str = "", suffix: str = "", *, force: bool = False
) -> list[str]:
    """The lines of ``node`` at ``indent``: ``prefix`` before it, ``suffix`` after it.
    ``force``: break its brackets even when it fits."""
    pad = " " * indent
    line = pad + prefix + _flat(node) + suffix
    if (len(line) <= LINE_LENGTH and not force) or isinstance(node, _Atom):
        return [line]
    if isinstance(node, _Keyword):
        return _lay(node.value, indent, f"{prefix}{node.name}=", suffix)
    if isinstance(node, _Paren):
        return [pad + prefix + "(", *_lay(node.inner, indent + _INDENT), pad + ")" + suffix]
    if isinstance(node, _Chain):
        lines: list[str] = []
        last = len(node.operands) - 1
        for i, operand in enumerate(node.operands):
            before = prefix if i == 0 else f"{node.ops[i - 1]} "
            lines += _lay(operand, indent, before, suffix if i == last else "")
        return lines
    if not node.items:
        return [line]
    lines = [pad + prefix + node.head + node.open]
    for item in node.items:
        lines += _lay(item, indent + _INDENT, suffix=",")
    return [*lines, pad + node.close + suffix]


class _Parser:
    """Expressions of the generated module, from their tokens, parentheses kept."""

    def __init__(self, tokens: list[tokenize.TokenInfo]) -> None:
        self.tokens = tokens
        self.pos = 0

    def peek(self) -> str | None:
        return self.tokens[self.pos].string if self.pos < len(self.tokens) else None

    def take(self, expected: str | None = None) -> tokenize.TokenInfo:
        if self.pos >= len(self.tokens):
            raise _Unsupported
        tok = self.tokens[self.pos]
        if expected is not None and tok.string != expected:
            raise _Unsupported
        self.pos += 1
        return tok

    def expr(self, min_prec: int = 1) -> _Node:
        left = self.postfix()
        while (op := self.peek()) in _PRECEDENCE and _PRECEDENCE[op] >= min_prec:
            self.take()
            right = self.expr(_PRECEDENCE[op] + 1)
            if isinstance(left, _Chain) and _PRECEDENCE[left.ops[0]] == _PRECEDENCE[op]:
                left = _Chain((*left.operands, right), (*left.ops, op))
            else:
                left = _Chain((left, right), (op,))
        return left

    def postfix(self) -> _Node:
        node = self.primary()
        while self.peek() in ("(", "[", "."):
            if self.peek() == ".":
                self.take()
                name = self.take()
                if name.type != tokenize.NAME:
                    raise _Unsupported
                node = _Atom(_flat(node) + "." + name.string)
                continue
            opener = self.take().string
            items = self.items(_CLOSE[opener], keywords=opener == "(")
            node = _Brackets(_flat(node), opener, items, _CLOSE[opener])
        return node

    def primary(self) -> _Node:
        tok = self.take()
        if tok.type in (tokenize.NAME, tokenize.NUMBER, tokenize.STRING):
            return _Atom(tok.string)
        if tok.string == "(":
            inner = self.expr()
            self.take(")")
            return _Paren(inner)
        if tok.string == "[":
            return _Brackets("", "[", self.items("]", keywords=False), "]")
        raise _Unsupported

    def items(self, close: str, *, keywords: bool) -> tuple[_Node, ...]:
        out: list[_Node] = []
        while self.peek() != close:
            if (
                keywords
                and self.pos + 1 < len(self.tokens)
                and self.tokens[self.pos + 1].string == "="
            ):
                name = self.take().string
                self.take("=")
                out.append(_Keyword(name, self.expr()))
            else:
                out.append(self.expr())
            if self.peek() != close:
                self.take(",")
        self.take(close)
        return tuple(out)


_STATEMENT = re.compile(r"(?P<indent> *)(?P<lead>with |[A-Za-z_][A-Za-z0-9_]* ?[=:] )?")
# An annotated assignment, `slab: pl.Tensor[[R, C], pl.BF16] = pl.slice(...)`.
_ANNOTATED = re.compile(
    r"(?P<indent> *)(?P<name>[A-Za-z_][A-Za-z0-9_]*): (?P<ann>.+?) = (?P<value>.+)"
)


def _parse(source: str) -> _Node | None:
    """The expression ``source`` is, or None when it is not one of the template's forms."""
    try:
        tokens = [
            t
            for t in tokenize.generate_tokens(io.StringIO(source).readline)
            if t.type not in (tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER)
        ]
    except (tokenize.TokenError, SyntaxError):
        return None
    parser = _Parser(tokens)
    try:
        node = parser.expr()
    except _Unsupported:
        return None
    if parser.pos != len(tokens) or _flat(node) != source:
        return None
    return node


def _fit(line: str) -> list[str]:
    if len(line) <= LINE_LENGTH:
        return [line]
    annotated = _ANNOTATED.fullmatch(line)
    if annotated is not None:
        return _fit_annotated(annotated) or [line]
    m = _STATEMENT.match(line)
    assert m is not None
    indent, lead = len(m.group("indent")), m.group("lead") or ""
    rest = line[m.end() :]
    suffix = rest[-1] if rest.endswith((":", ",")) else ""
    node = _parse(rest[: len(rest) - len(suffix)])
    return [line] if node is None else _lay(node, indent, lead, suffix)


def _fit_annotated(m: re.Match[str]) -> list[str] | None:
    """As ruff: the value's brackets break first; when the line that opens them is still
    too long, the value goes in parentheses of its own; when even that line is too long,
    the annotation's brackets break, and the value follows the one that closes them."""
    ann, value = _parse(m.group("ann")), _parse(m.group("value"))
    if ann is None or value is None:
        return None
    pad, name = m.group("indent"), m.group("name")
    indent, target = len(pad), f"{name}: {_flat(ann)} = "
    lines = _lay(value, indent, target)
    if len(lines[0]) <= LINE_LENGTH:
        return lines
    if len(pad + target + "(") <= LINE_LENGTH:
        return [pad + target + "(", *_lay(value, indent + _INDENT), pad + ")"]
    head = _lay(ann, indent, f"{name}: ", force=True)
    return [*head[:-1], *_lay(value, indent, head[-1].lstrip() + " = ")]


def _prose_lines(text: str) -> set[int]:
    """0-based indices of the lines that hold prose, not code: docstrings and comments."""
    out: set[int] = set()
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.STRING and (
            tok.start[0] != tok.end[0] or tok.line.strip() == tok.string
        ):
            out.update(range(tok.start[0] - 1, tok.end[0]))
        elif tok.type == tokenize.COMMENT:
            out.add(tok.start[0] - 1)
    return out


def fit_lines(text: str) -> str:
    """Break every code line longer than LINE_LENGTH, in the one layout described above."""
    lines = text.split("\n")
    skip = _prose_lines(text)
    out: list[str] = []
    for i, line in enumerate(lines):
        out += [line] if i in skip else _fit(line)
    return "\n".join(out)

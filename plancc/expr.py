"""Dim expressions: a whitelist parser and evaluator (never ``eval``).

Grammar: ``expr := term (('+'|'-') term)*``, ``term := atom (('*'|'//'|'%') atom)*``,
``atom := INT | NAME | '(' expr ')'``. Integers are plain decimal literals
(no sign, no ``0x``, no ``_``, no leading zeros); a literal 0 is rejected.
Every value stays within int64 and an expression has at most ``MAX_TOKENS``
tokens, so no input makes the compiler recurse or compute without bound.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

_TOKEN = re.compile(r"\s*(?:(?P<int>[0-9]+)|(?P<name>[A-Za-z_][A-Za-z0-9_]*)|(?P<op>//|[-+*%()]))")
_PRECEDENCE = {"+": 1, "-": 1, "*": 2, "//": 2, "%": 2}
MAX_VALUE = 2**63 - 1  # every value, literal and intermediate result fits in an int64
MAX_TOKENS = 200  # bounds the tree's depth, so parsing and evaluating never recurse deeply
_TOO_BIG = "is larger than 2**63 - 1"


class ExprError(Exception):
    """The text is not a dim expression; the message says why."""


@dataclass(frozen=True)
class Num:
    value: int


@dataclass(frozen=True)
class Name:
    id: str


@dataclass(frozen=True)
class BinOp:
    op: str
    left: Expr
    right: Expr


Expr = Num | Name | BinOp


def parse(source: int | str) -> Expr:
    if isinstance(source, int):
        if source < 1:
            raise ExprError(f"{source} is not a positive integer")
        if source > MAX_VALUE:
            raise ExprError(f"{source} {_TOO_BIG}")
        return Num(source)
    tokens = list(_tokenize(source))
    if not tokens:
        raise ExprError("empty expression")
    if len(tokens) > MAX_TOKENS:
        raise ExprError(f"the expression is longer than {MAX_TOKENS} tokens")
    parser = _Parser(tokens)
    expr = parser.expr()
    if parser.pos != len(tokens):
        raise ExprError(f"unexpected '{tokens[parser.pos]}' in '{source}'")
    return expr


def _tokenize(text: str) -> Iterator[str]:
    pos = 0
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            bad = text[pos:].strip()[:1]
            why = "; use // for integer division" if bad == "/" else " (+ - * // % and ( ) are)"
            raise ExprError(f"'{bad}' is not allowed in a dim expression{why}")
        tok = m.group(m.lastgroup or "op")
        after = text[m.end() :].lstrip()[:1]
        if m.lastgroup == "name" and after in ("(", "."):
            what = "calls are" if after == "(" else "attribute access is"
            raise ExprError(f"'{tok}{after}': {what} not allowed in a dim expression")
        if tok == "*" and text[m.end() : m.end() + 1] == "*":
            raise ExprError("'**' is not allowed in a dim expression: write the product out")
        if m.lastgroup == "int":
            end = m.end()
            if end < len(text) and (text[end].isalnum() or text[end] == "_"):
                raise ExprError(f"'{text[m.start(1) :].split()[0]}' is not a decimal integer")
            if tok == "0":
                raise ExprError("a literal 0 is not a dimension")
            if tok.startswith("0"):
                raise ExprError(f"'{tok}': write integers without leading zeros")
            if len(tok) > len(str(MAX_VALUE)) or int(tok) > MAX_VALUE:
                raise ExprError(f"'{tok[:20]}' {_TOO_BIG}")
        yield tok
        pos = m.end()


class _Parser:
    def __init__(self, tokens: list[str]) -> None:
        self.tokens = tokens
        self.pos = 0

    def peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self) -> str:
        tok = self.peek()
        if tok is None:
            raise ExprError("the expression ends too early")
        self.pos += 1
        return tok

    def expr(self, min_prec: int = 1) -> Expr:
        left = self.atom()
        while (op := self.peek()) in _PRECEDENCE and _PRECEDENCE[op] >= min_prec:
            self.take()
            right = self.expr(_PRECEDENCE[op] + 1)
            left = BinOp(op, left, right)
        return left

    def atom(self) -> Expr:
        tok = self.take()
        if tok == "(":
            inner = self.expr()
            if self.take() != ")":
                raise ExprError("missing ')'")
            return inner
        if tok.isdigit():
            return Num(int(tok))
        if tok[0].isalpha() or tok[0] == "_":
            return Name(tok)
        raise ExprError(f"unexpected '{tok}'")


def names(expr: Expr) -> Iterator[str]:
    if isinstance(expr, Name):
        yield expr.id
    elif isinstance(expr, BinOp):
        yield from names(expr.left)
        yield from names(expr.right)


def evaluate(expr: Expr, lookup: Callable[[str], int | None]) -> int | None:
    """The value, or None when a name is dynamic.

    Raises ExprError on x // 0 and x % 0, and when a value leaves the int64 range.
    """
    value = _evaluate(expr, lookup)
    if value is not None and abs(value) > MAX_VALUE:
        raise ExprError(f"the value {_TOO_BIG}")
    return value


def _evaluate(expr: Expr, lookup: Callable[[str], int | None]) -> int | None:
    if isinstance(expr, Num):
        return expr.value
    if isinstance(expr, Name):
        return lookup(expr.id)
    left = evaluate(expr.left, lookup)
    right = evaluate(expr.right, lookup)
    if left is None or right is None:
        return None
    if expr.op in ("//", "%") and right == 0:
        raise ExprError("division by zero")
    ops: dict[str, Callable[[int, int], int]] = {
        "+": lambda a, b: a + b,
        "-": lambda a, b: a - b,
        "*": lambda a, b: a * b,
        "//": lambda a, b: a // b,
        "%": lambda a, b: a % b,
    }
    return ops[expr.op](left, right)


def render(expr: Expr, parent_prec: int = 0, right_side: bool = False) -> str:
    """Python source for the expression, with only the parentheses it needs."""
    if isinstance(expr, Num):
        return str(expr.value)
    if isinstance(expr, Name):
        return expr.id
    prec = _PRECEDENCE[expr.op]
    text = f"{render(expr.left, prec)} {expr.op} {render(expr.right, prec, True)}"
    if prec < parent_prec or (right_side and prec == parent_prec):
        return f"({text})"
    return text


def is_compound(expr: Expr) -> bool:
    return isinstance(expr, BinOp)


def factor(text: str) -> str:
    """An expression's source as a factor of a product: parenthesized when compound."""
    return f"({text})" if is_compound(parse(text)) else text

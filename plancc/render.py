"""Stage 5, render: a resolved plan -> the text of its PyPTO module and its runtime manifest.

Decisions are made here, in Python: which constants the module defines, each
warm function's parameters, flat views, docstring facts and the manifest's
numbers. Layout lives in ``templates/module.py.j2``, which writes every
statement on one line in exactly the form of the PyPTO facts. A last pass
(:func:`fit_lines`) breaks the statements that are longer than
:data:`LINE_LENGTH` (ruff's default), and a bracket it breaks always opens onto
one item per line ending in a magic trailing comma, which ruff keeps at every
line length. So the output passes ``ruff format --check`` and ``ruff check``
with ruff's defaults, and ``ruff format --check`` at any longer line length
too, with one exception: a single dim expression too long for a line of its
own (longer than about 75 characters, from long names) is broken at its
operators as ruff breaks it at 88, and ruff joins it again at a line length
where it fits. The call example in each function's docstring is prose: one
line whatever its length (ruff's default rules do not include E501).

Every string that reaches the module is emitted as a Python literal or
escaped for a docstring; identifiers come only from names the front end has
validated. jinja2 is imported here, lazily: ``validate`` never loads it.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import shlex
import textwrap
import tokenize
from dataclasses import dataclass
from functools import cache
from typing import Any

from plancc import ir
from plancc.summary import forward_numbers, l2_numbers, measure_numbers

MANIFEST_FORMAT = "plancc-manifest/1"
LINE_LENGTH = 88  # ruff's and black's default
_INDENT = 4


def module_file(model: str) -> str:
    return f"{model}_warms.py"


def manifest_file(model: str) -> str:
    return f"{model}_warms.manifest.json"


def render(plan: ir.Plan, plan_path: str) -> dict[str, str]:
    """File name -> content of every output of one plan.

    ``plan_path`` is the plan file's path relative to the output directory, in
    POSIX form: it is written into both files, so it must not depend on the
    machine or the working directory.
    """
    module = render_module(plan, plan_path)
    return {
        module_file(plan.model): module,
        manifest_file(plan.model): render_manifest(plan, plan_path, module),
    }


# -- the module ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Constant:
    name: str
    value: int


@dataclass(frozen=True)
class Param:
    name: str
    shape: tuple[str, ...]  # Python source of each entry, with the plan's names
    dtype: str  # the PyPTO dtype attribute, e.g. BF16


@dataclass(frozen=True)
class View:
    var: str  # <tensor>_flat
    tensor: str
    flat: tuple[str, ...]  # Python source of each entry of the flat view


@dataclass(frozen=True)
class WarmFunction:
    name: str
    name_hint: str
    layer: str
    params: tuple[Param, ...]
    views: tuple[View, ...]
    summary: str  # docstring paragraphs, plain text (escaped by the template)
    facts: tuple[str, ...]
    call: str


def module_context(plan: ir.Plan, plan_path: str) -> dict[str, Any]:
    """Everything the module template lays out."""
    warms = [_warm_function(plan, w) for w in plan.warms]
    used: set[str] = set()
    for w in plan.warms:
        for e in w.entries:
            used |= e.tensor.names
            if e.flat is not None:
                used |= e.flat.names
    constants = [
        Constant(d.name, d.value) for d in plan.dims if d.name in used and d.value is not None
    ]
    constants += [Constant(k, plan.config[k]) for k in sorted(plan.config) if k in used]
    return {
        "model": plan.model,
        "platform": plan.platform.name if plan.platform else "",
        "plan_path": plan_path,
        "sha256": plan.sha256,
        "command": f"plancc build {shlex.quote(plan_path)} --out .",
        "manifest": manifest_file(plan.model),
        "constants": constants,
        "warms": warms,
    }


def _anchor(plan: ir.Plan, warm: ir.Warm) -> ir.Stage:
    # Only plans without errors are rendered, and an unknown anchor is PC010.
    assert warm.anchor is not None
    return plan.layers[warm.layer].stages[warm.anchor]


def _warm_function(plan: ir.Plan, warm: ir.Warm) -> WarmFunction:
    layer = plan.layers[warm.layer]
    anchor = _anchor(plan, warm)
    params = tuple(
        Param(e.tensor.name, e.tensor.shape_source, e.tensor.dtype.pl_name) for e in warm.entries
    )
    views = tuple(
        View(f"{e.tensor.name}_flat", e.tensor.name, e.flat.source if e.flat else ())
        for e in warm.entries
    )
    names = [e.tensor.name for e in warm.entries]
    consumers: list[str] = []
    unread = list(names)
    for stage in layer.stages[anchor.index + 1 :]:
        read = [n for n in names if n in stage.reads]
        if read:
            consumers.append(f"{stage.name} ({', '.join(read)})")
            unread = [n for n in unread if n not in read]
    size = f"{warm.bytes:,} B ({warm.bytes / 1e6:.1f} MB)"
    capacity = plan.platform.l2_bytes if plan.platform else None
    if capacity:
        size += f", {warm.bytes / capacity:.2f}x L2"
    facts = [
        f"Size: {size}.",
        f"Anchor: stage {anchor.name} of layer kind {warm.layer}; its TaskId is {anchor.task}.",
        "Consumers: " + (", ".join(consumers) if consumers else "none") + ".",
    ]
    if unread and consumers:
        facts.append(f"Not read after the anchor: {', '.join(unread)}.")
    return WarmFunction(
        name=warm.name,
        name_hint=warm.name_hint,
        layer=warm.layer,
        params=params,
        views=views,
        summary=f"Warm {', '.join(names)} into L2 once {anchor.name} has finished.",
        facts=tuple(facts),
        call=f"{warm.name}({', '.join([*names, anchor.task or 'after'])})",
    )


def render_module(plan: ir.Plan, plan_path: str) -> str:
    text = _environment().get_template("module.py.j2").render(module_context(plan, plan_path))
    return fit_lines(text)


@cache
def _environment() -> Any:
    import jinja2

    from plancc.resources import read_text

    env = jinja2.Environment(
        loader=jinja2.FunctionLoader(lambda name: read_text("templates", name)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )
    env.filters["py_str"] = py_str
    env.filters["doc"] = doc_escape
    env.filters["para"] = paragraph
    return env


# -- string literals -----------------------------------------------------------------------


def _escape(ch: str, quote: str) -> str:
    if ch in ("\\", quote):
        return "\\" + ch
    code = ord(ch)
    if ch == "\n":
        return "\\n"
    if 32 <= code < 127:
        return ch
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def py_str(value: str) -> str:
    """A Python string literal (ASCII only) whose value is ``value``.

    Double quotes unless single quotes need fewer escapes, as ``ruff format``
    prefers.
    """
    quote = "'" if value.count('"') > value.count("'") else '"'
    return quote + "".join(_escape(ch, quote) for ch in value) + quote


def doc_escape(value: str) -> str:
    """``value`` escaped for the inside of a triple-quoted docstring (ASCII only)."""
    return "".join(_escape(ch, '"') for ch in str(value))


def paragraph(text: str, indent: int = 0, first: str = "") -> str:
    """A docstring paragraph wrapped to the line length at ``indent``, after ``first``.

    Breaks only at spaces, so an escape sequence or a name is never split. A
    trailing newline (the end of a ``{% filter %}`` block) is kept.
    """
    pad = " " * indent
    lines = textwrap.wrap(
        " ".join(text.split()),
        width=LINE_LENGTH,
        initial_indent=pad + first,
        subsequent_indent=pad,
        break_long_words=False,
        break_on_hyphens=False,
    )
    return "\n".join(lines) + ("\n" if text.endswith("\n") else "")


# -- the manifest --------------------------------------------------------------------------


def manifest(plan: ir.Plan, plan_path: str, module: str | None = None) -> dict[str, Any]:
    """The runtime manifest, in the contract's key order; ``schemas/manifest.schema.json``.

    ``module`` is the generated module's text (rendered here when not given): its
    SHA-256 makes the pair verifiable, so a module and a manifest from two builds
    (a build killed between its two renames) are never taken for one."""
    if module is None:
        module = render_module(plan, plan_path)
    out: dict[str, Any] = {
        "format": MANIFEST_FORMAT,
        "model": plan.model,
        "platform": plan.platform.name if plan.platform else None,
        "source": {"plan": plan_path, "sha256": plan.sha256},
        "module": {
            "file": module_file(plan.model),
            "sha256": hashlib.sha256(module.encode("utf-8")).hexdigest(),
        },
        "runtime": {"enable_sdma": bool(plan.warms)},
        "l2": l2_numbers(plan),
        "warms": [
            {
                "name": w.name,
                "layer": w.layer,
                "name_hint": w.name_hint,
                "after": _anchor(plan, w).name,
                "task": _anchor(plan, w).task,
                "bytes": w.bytes,
                "tensors": [
                    {
                        "name": e.tensor.name,
                        "dtype": e.tensor.dtype.name,
                        "shape": list(e.tensor.shape),
                        "flat": list(e.flat.values) if e.flat else [],
                        "bytes": e.tensor.bytes,
                    }
                    for e in w.entries
                ],
            }
            for w in plan.warms
        ],
    }
    fwd = forward_numbers(plan)
    if fwd is not None:
        out["forward"] = fwd
    measure = measure_numbers(plan)
    if measure is not None:
        out["measure"] = measure
    return out


def render_manifest(plan: ir.Plan, plan_path: str, module: str | None = None) -> str:
    return _json(manifest(plan, plan_path, module), 0) + "\n"


def _json(value: Any, indent: int) -> str:
    """JSON with two-space indentation; a list of numbers or strings stays on one line."""
    pad, inner = " " * indent, " " * (indent + 2)
    if isinstance(value, dict) and value:
        items = [f"{inner}{_scalar(k)}: {_json(v, indent + 2)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(value, list) and any(isinstance(v, dict | list) for v in value):
        items = [inner + _json(v, indent + 2) for v in value]
        return "[\n" + ",\n".join(items) + "\n" + pad + "]"
    return _scalar(value)


def _scalar(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate (an undecodable file name): escape it
        text = json.dumps(value)
    return text


# -- line fitting --------------------------------------------------------------------------
#
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


def _lay(node: _Node, indent: int, prefix: str = "", suffix: str = "") -> list[str]:
    """The lines of ``node`` at ``indent``: ``prefix`` before it, ``suffix`` after it."""
    pad = " " * indent
    line = pad + prefix + _flat(node) + suffix
    if len(line) <= LINE_LENGTH or isinstance(node, _Atom):
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


def _fit(line: str) -> list[str]:
    if len(line) <= LINE_LENGTH:
        return [line]
    m = _STATEMENT.match(line)
    assert m is not None
    indent, lead = len(m.group("indent")), m.group("lead") or ""
    rest = line[m.end() :]
    suffix = rest[-1] if rest.endswith((":", ",")) else ""
    source = rest[: len(rest) - len(suffix)]
    try:
        tokens = [
            t
            for t in tokenize.generate_tokens(io.StringIO(source).readline)
            if t.type not in (tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER)
        ]
    except (tokenize.TokenError, SyntaxError):
        return [line]
    parser = _Parser(tokens)
    try:
        node = parser.expr()
    except _Unsupported:
        return [line]
    if parser.pos != len(tokens) or _flat(node) != source:
        return [line]
    return _lay(node, indent, lead, suffix)


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

"""The generated module: what it defines (constants, warm functions), laid out by
``templates/module.py.j2``, and the literal escapes the template uses."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from functools import cache
from typing import Any

from plancc import ir
from plancc.outputs import MODULE_HEADER, manifest_file
from plancc.render.fit import LINE_LENGTH, fit_lines
from plancc.shell import regenerate


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


def module_context(plan: ir.Plan, plan_path: str, *, piped: bool = False) -> dict[str, Any]:
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
        "command": regenerate(plan_path, piped=piped),
        "piped": piped,
        "manifest": manifest_file(plan.model),
        "header": MODULE_HEADER,
        "constants": constants,
        "warms": warms,
    }


def anchor_of(plan: ir.Plan, warm: ir.Warm) -> ir.Stage:
    # Only plans without errors are rendered, and an unknown anchor is PC010.
    assert warm.anchor is not None
    return plan.layers[warm.layer].stages[warm.anchor]


def _warm_function(plan: ir.Plan, warm: ir.Warm) -> WarmFunction:
    layer = plan.layers[warm.layer]
    anchor = anchor_of(plan, warm)
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


def render_module(plan: ir.Plan, plan_path: str, *, piped: bool = False) -> str:
    context = module_context(plan, plan_path, piped=piped)
    text = _environment().get_template("module.py.j2").render(context)
    return fit_lines(text)


@cache
def _environment() -> Any:
    from plancc.resources import template_environment  # noqa: PLC0415 (jinja2 only for build)

    env = template_environment(autoescape=False)
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

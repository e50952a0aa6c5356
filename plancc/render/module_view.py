"""The generated module: what it defines (constants, warm functions), laid out by
``templates/module.py.j2``, and the literal escapes the template uses."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from functools import cache
from typing import Any

from plancc import expr as ex
from plancc import ir
from plancc.render.fit import LINE_LENGTH, fit_lines
from plancc.render.shell import regenerate
from plancc.resolve.namespace import anchor_params
from plancc.tables.outputs import MODULE_HEADER, manifest_file


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
class Slab:
    """One layer's slab of a stacked tensor: ``var: pl.Tensor[[shape], dtype] =
    pl.slice(stack, [shape], [offset])``."""

    var: str  # <tensor>_slab
    stack: str  # the stacked tensor (the parameter)
    shape: tuple[str, ...]
    dtype: str
    offset: tuple[str, ...]  # index * rows, then 0 for every other dim


@dataclass(frozen=True)
class View:
    var: str  # <tensor>_flat
    tensor: str  # what it reshapes: the tensor, or its slab
    flat: tuple[str, ...]  # Python source of each entry of the flat view


@dataclass(frozen=True)
class WarmFunction:
    name: str
    name_hint: str
    layer: str
    params: tuple[Param, ...]
    scalars: tuple[tuple[str, str], ...]  # (name, pl type) of the stacks' indices
    anchors: tuple[str, ...]  # the TaskId parameters: `after`, or a join's tasks
    slabs: tuple[Slab, ...]
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
            if e.tensor.stacked is not None:
                used |= e.tensor.stacked.names
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
    """The anchor stage; for a join, the one that finishes last."""
    # Only plans without errors are rendered, and an unknown anchor is PC010.
    assert warm.anchor is not None
    return plan.layers[warm.layer].stages[warm.anchor]


_INDEX_TYPES = {"int32": "INT32", "int64": "INT64", "index": "INDEX"}


def _factor(text: str) -> str:
    """An expression's source as a factor of a product: parenthesized when compound."""
    return f"({text})" if ex.is_compound(ex.parse(text)) else text


def _param(tensor: ir.Tensor) -> Param:
    """The tensor as the function takes it: for a stacked one, the whole stack."""
    shape = tensor.shape_source
    if tensor.stacked is not None:
        rows = f"{_factor(tensor.stacked.layers_source)} * {_factor(shape[0])}"
        shape = (rows, *shape[1:])
    return Param(tensor.name, shape, tensor.dtype.pl_name)


def _slab(tensor: ir.Tensor, index: str) -> Slab:
    shape = tensor.shape_source
    offset = (f"{index} * {_factor(shape[0])}", *("0" for _ in shape[1:]))
    return Slab(f"{tensor.name}_slab", tensor.name, shape, tensor.dtype.pl_name, offset)


def _warm_function(plan: ir.Plan, warm: ir.Warm) -> WarmFunction:
    layer = plan.layers[warm.layer]
    anchors = [layer.stages[a] for a in warm.anchors]
    stacked = [e.tensor for e in warm.entries if e.tensor.stacked is not None]
    scalars: dict[str, str] = {}  # index parameter -> its pl type, one per index
    slabs = []
    for t in stacked:
        assert t.stacked is not None
        scalars.setdefault(t.stacked.index_param, _INDEX_TYPES[t.stacked.index_type])
        slabs.append(_slab(t, t.stacked.index_param))
    sliced = {s.stack: s.var for s in slabs}
    views = tuple(
        View(
            f"{e.tensor.name}_flat",
            sliced.get(e.tensor.name, e.tensor.name),
            e.flat.source if e.flat else (),
        )
        for e in warm.entries
    )
    names = [e.tensor.name for e in warm.entries]
    consumers: list[str] = []
    unread = list(names)
    for stage in layer.stages[max(warm.anchors) + 1 :]:
        read = [n for n in names if n in stage.reads]
        if read:
            consumers.append(f"{stage.name} ({', '.join(read)})")
            unread = [n for n in unread if n not in read]
    size = f"{warm.bytes:,} B ({warm.bytes / 1e6:.1f} MB)"
    capacity = plan.platform.l2_bytes if plan.platform else None
    if capacity:
        size += f", {warm.bytes / capacity:.2f}x L2"
    facts = [f"Size: {size}."]
    if warm.join:
        facts.append(
            f"Anchor: the join of stages {_and([s.name for s in anchors])} of layer kind "
            f"{warm.layer}; their TaskIds are {_and([s.task or '' for s in anchors])}."
        )
    else:
        anchor = anchors[0]
        facts.append(
            f"Anchor: stage {anchor.name} of layer kind {warm.layer}; its TaskId is {anchor.task}."
        )
    for t in stacked:
        assert t.stacked is not None
        facts.append(
            f"Stacked: {t.name} holds {t.stacked.layers:,} layers along its first dim; the warm "
            f"takes layer {t.stacked.index_param}'s slab."
        )
    facts.append("Consumers: " + (", ".join(consumers) if consumers else "none") + ".")
    if unread and consumers:
        facts.append(f"Not read after the anchor: {', '.join(unread)}.")
    indices = [t.stacked.index for t in stacked if t.stacked is not None]
    tasks = [s.task or "after" for s in anchors]
    return WarmFunction(
        name=warm.name,
        name_hint=warm.name_hint,
        layer=warm.layer,
        params=tuple(_param(e.tensor) for e in warm.entries),
        scalars=tuple(scalars.items()),
        anchors=anchor_params(layer, warm),
        slabs=tuple(slabs),
        views=views,
        summary=f"Warm {', '.join(names)} into L2 once {_and([s.name for s in anchors])} "
        f"{'have' if warm.join else 'has'} finished.",
        facts=tuple(facts),
        call=f"{warm.name}({', '.join([*names, *dict.fromkeys(indices), *tasks])})",
    )


def _and(items: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def render_module(plan: ir.Plan, plan_path: str, *, piped: bool = False) -> str:
    context = module_context(plan, plan_path, piped=piped)
    text = _environment().get_template("module.py.j2").render(context)
    return fit_lines(text)


@cache
def _environment() -> Any:
    from plancc.tables.resources import template_environment  # noqa: PLC0415 (jinja2 only for build)

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

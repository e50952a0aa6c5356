"""The generated module: what it defines (constants, warm functions), laid out by
``templates/module.py.j2``, and the literal escapes the template uses."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from plancc import expr as ex
from plancc import ir
from plancc.facts import Facts
from plancc.facts.crossing import successors
from plancc.render.fit import LINE_LENGTH, fit_lines
from plancc.render.shell import regenerate
from plancc.resolve.layers import rows_count
from plancc.resolve.namespace import anchor_params, entry_vars, last_layer_condition
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
    """One layer's slab of a stacked tensor, or a prefix's rows: ``var: pl.Tensor[[shape],
    dtype] = pl.slice(stack, [shape], [offset])`` (whole leading-dim rows only: a slice
    of an inner dim is not contiguous, and PyPTO would prefetch other bytes)."""

    var: str  # <tensor>_slab, or <tensor>_rows for a prefix
    stack: str  # the sliced tensor (the parameter)
    shape: tuple[str, ...]
    dtype: str
    offset: tuple[str, ...]  # index * rows (+ LO), then 0 for every other dim


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
    guards: tuple[str, ...] = ()  # the conditions of the nested `if`s around the scope
    where: str = ""  # where and with what to call it, the docstring's lead to ``call``
    when: str = ""  # the condition the call stands under (a cross-layer warm's), or ""


def module_context(
    plan: ir.Plan, plan_path: str, facts: Facts, *, piped: bool = False
) -> dict[str, Any]:
    """Everything the module template lays out; ``facts``: the check's, whose consumers
    each warm's docstring names."""
    warms = [_warm_function(plan, facts, w) for w in plan.warms]
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


def _param(tensor: ir.Tensor) -> Param:
    """The tensor as the function takes it: for a stacked one, the whole stack."""
    shape = tensor.shape_source
    if tensor.stacked is not None:
        rows = f"{ex.factor(tensor.stacked.layers_source)} * {ex.factor(shape[0])}"
        shape = (rows, *shape[1:])
    return Param(tensor.name, shape, tensor.dtype.pl_name)


def _slice(entry: ir.WarmEntry, var: str) -> Slab | None:
    """The slice the warm takes of its tensor: a stack's slab (at the index's rows), a
    prefix's rows, or both; None when it warms the tensor whole."""
    tensor, rows = entry.tensor, entry.rows
    if tensor.stacked is None and rows is None:
        return None
    shape = tensor.shape_source
    offset = "0" if rows is None else rows.lo_source
    if rows is not None:
        shape = (rows_count(rows), *shape[1:])
    if tensor.stacked is not None:
        at = f"{tensor.stacked.index_param} * {ex.factor(tensor.shape_source[0])}"
        offset = at if offset == "0" else f"{at} + {ex.factor(offset)}"
    kind = "_rows" if rows is not None else "_slab"
    return Slab(
        f"{var}{kind}",
        tensor.name,
        shape,
        tensor.dtype.pl_name,
        (offset, *("0" for _ in shape[1:])),
    )


def _warm_function(plan: ir.Plan, found: Facts, warm: ir.Warm) -> WarmFunction:
    layer = plan.layers[warm.layer]
    anchors = [layer.stages[a] for a in warm.anchors]
    stacked = list({e.tensor.name: e.tensor for e in warm.entries if e.tensor.stacked}.values())
    scalars: dict[str, str] = {}  # index parameter -> its pl type, one per index
    for t in stacked:
        assert t.stacked is not None
        scalars.setdefault(t.stacked.index_param, _INDEX_TYPES[t.stacked.index_type])
    slabs = []
    views = []
    for e, var in zip(warm.entries, entry_vars(warm), strict=True):
        cut = _slice(e, var)
        if cut is not None:
            slabs.append(cut)
        source = cut.var if cut is not None else e.tensor.name
        views.append(View(f"{var}_flat", source, e.flat.source if e.flat else ()))
    for g in warm.guards:
        scalars.setdefault(g.variable, "INT32")
    names = list(dict.fromkeys(e.tensor.name for e in warm.entries))
    facts = [f"Size: {_size(plan, warm)}.", _anchor_fact(warm, anchors)]
    for t in stacked:
        assert t.stacked is not None
        facts.append(
            f"Stacked: {t.name} holds {t.stacked.layers:,} layers along its first dim; the warm "
            f"takes layer {t.stacked.index_param}'s slab."
        )
    for e in warm.entries:
        if e.rows is not None:
            facts.append(
                f"Prefix: {e.tensor.name} {e.rows} of its {e.tensor.shape[0]:,} "
                f"({e.tensor.shape_source[0]}), {e.bytes:,} B: whole rows of the first dim."
            )
    facts += _consumer_facts(plan, consumers(found, warm), warm, names)
    for g in warm.guards:
        facts.append(
            f"Guard: issued only when {g} (param {g.param}, the model's run-time {g.variable})."
        )
    where, when, args = _call(plan, warm, stacked, anchors)
    guard_vars = list(dict.fromkeys(g.variable for g in warm.guards))
    tasks = [s.task or "after" for s in anchors]
    what = ("the next layer's " if warm.next_layer else "") + ", ".join(
        [f"{e.tensor.name}{'' if e.rows is None else f' {e.rows}'}" for e in warm.entries]
    )
    summary = (
        f"Warm {what} into L2 once {_and([s.name for s in anchors])} "
        f"{'have' if warm.join else 'has'} finished"
    )
    conditions = tuple(f"{g.variable} {g.op} {g.bound}" for g in warm.guards)
    summary += "".join(f" and {c}" for c in conditions)
    return WarmFunction(
        name=warm.name,
        name_hint=warm.name_hint,
        layer=warm.layer,
        params=tuple(_param(t) for t in {e.tensor.name: e.tensor for e in warm.entries}.values()),
        scalars=tuple(scalars.items()),
        anchors=anchor_params(layer, warm),
        slabs=tuple(slabs),
        views=tuple(views),
        summary=summary + ".",
        facts=tuple(facts),
        call=f"{warm.name}({', '.join([*args, *guard_vars, *tasks])})",
        guards=conditions,
        where=where,
        when=when,
    )


def _size(plan: ir.Plan, warm: ir.Warm) -> str:
    size = f"{warm.bytes:,} B ({warm.bytes / 1e6:.1f} MB)"
    capacity = plan.platform.l2_bytes if plan.platform else None
    if capacity:
        size += f", {warm.bytes / capacity:.2f}x L2"
    return size


def _anchor_fact(warm: ir.Warm, anchors: list[ir.Stage]) -> str:
    if warm.join:
        return (
            f"Anchor: the join of stages {_and([s.name for s in anchors])} of layer kind "
            f"{warm.layer}; their TaskIds are {_and([s.task or '' for s in anchors])}."
        )
    anchor = anchors[0]
    return f"Anchor: stage {anchor.name} of layer kind {warm.layer}; its TaskId is {anchor.task}."


def consumers(facts: Facts, warm: ir.Warm) -> list[tuple[str, ir.Stage]]:
    """The stages that run after the anchor (after every anchor of a join) and read a
    warmed tensor, each with its layer kind, as the check's analysis has them
    (``WarmFacts.readers``), in schedule order (start step, then name). A cross-layer
    warm's are the next layer's, of each kind the forward runs next (its crossings)."""
    if not warm.next_layer:
        judged = facts.analysis.warm(warm.layer, warm.name)
        return [(warm.layer, s) for s in (judged.readers if judged is not None else ())]
    return [
        (p.crossing.target.name, stage)
        for p in facts.placed
        if p.crossing is not None and p.crossing.original.name == warm.name
        for stage in p.crossing.readers()
    ]


def _consumer_facts(
    plan: ir.Plan, found: list[tuple[str, ir.Stage]], warm: ir.Warm, names: list[str]
) -> list[str]:
    """Who reads the warmed tensors after the anchor (``found``, the check's): the layer
    kind's stages, or for a cross-layer warm each next layer kind's."""
    if not warm.next_layer:
        return _consumers([s for _, s in found], names, "Consumers")
    after = [k for k in successors(plan, warm.layer) if k in plan.layers]
    facts = [
        f"Next layer: it warms the tensors of the layer after this one in the forward "
        f"({_and(after) if after else 'none'} after {warm.layer}); the forward's last layer "
        "issues none."
    ]
    for kind in after:
        facts += _consumers([s for k, s in found if k == kind], names, f"Consumers in {kind}")
    return facts


def _consumers(stages: Sequence[ir.Stage], names: list[str], lead: str) -> list[str]:
    consumers: list[str] = []
    unread = list(names)
    for stage in stages:
        read = [n for n in names if n in stage.reads]
        if read:
            consumers.append(f"{stage.name} ({', '.join(read)})")
            unread = [n for n in unread if n not in read]
    facts = [f"{lead}: " + (", ".join(consumers) if consumers else "none") + "."]
    if unread and consumers:
        facts.append(f"Not read after the anchor: {', '.join(unread)}.")
    return facts


def _call(
    plan: ir.Plan, warm: ir.Warm, stacked: list[ir.Tensor], anchors: list[ir.Stage]
) -> tuple[str, str, list[str]]:
    """Where the model calls the warm (the docstring's lead), the condition the call
    stands under (a cross-layer warm's), and its tensor and index arguments."""
    names = list(dict.fromkeys(e.tensor.name for e in warm.entries))
    indices = list(dict.fromkeys(t.stacked.index for t in stacked if t.stacked is not None))
    returns = "s return their TaskIds" if warm.join else " returns its TaskId"
    if not warm.next_layer:
        return f"Call it right after the anchor stage{returns}", "", [*names, *indices]
    # The next layer's: a stack's next slab (its index + 1), else the next layer's tensors.
    args = [n if n in {t.name for t in stacked} else f"{n}_next" for n in names]
    args += [f"{i} + 1" for i in indices]
    first = next((t.stacked for t in stacked if t.stacked is not None), None)
    if first is not None:
        with_what = f"the stacks and the next layer's index, {first.index} + 1"
    else:
        count = len(plan.forward.kinds) if plan.forward is not None else None
        with_what = (
            "the next layer's tensors (" + ", ".join(f"{n}_next" for n in names) + "), in layer "
            f"layer_idx of NUM_LAYERS{f' ({count} in the forward)' if count else ''}"
        )
    lead = (
        f"Call it in every layer but the last, right after the anchor stage{returns}, with "
        f"{with_what}: the last layer has no next one to warm"
    )
    return lead, last_layer_condition(warm), args


def _and(items: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def render_module(plan: ir.Plan, plan_path: str, facts: Facts, *, piped: bool = False) -> str:
    context = module_context(plan, plan_path, facts, piped=piped)
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

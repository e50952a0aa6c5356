"""Hover: what a name means once the plan is resolved.

A tensor: its shape in integers, dtype, bytes (B, MB, MiB, × L2) and the stages
that read it. A dim or config key: its value. A warm: the stages it is alive
in, its bytes, its estimated landing and the diagnostics on it. A rule id in
`allow` or `lint.ignore`: the rule's documentation.
"""

from __future__ import annotations

from lsprotocol import types as lsp

from plancc.lsp import adapter as pc
from plancc.lsp.diagnostics import node_span
from plancc.lsp.index import Occurrence, Span
from plancc.lsp.state import PlanState


def hover(state: PlanState, position: lsp.Position) -> lsp.Hover | None:
    if state.index is None:
        return None
    occ = state.index.at(state.point(position))
    if occ is None:
        return None
    text = _describe(state, occ)
    if text is None:
        return None
    return lsp.Hover(lsp.MarkupContent(lsp.MarkupKind.Markdown, text), state.range(occ.span))


def _describe(state: PlanState, occ: Occurrence) -> str | None:  # noqa: C901 (one branch per kind of name under the cursor)
    plan = state.result.plan
    if occ.kind == "rule":
        code = pc.code_doc(occ.name)
        if code is None:
            return f"`{occ.name}`: not a rule id (`plancc rules` lists them)"
        return f"**{code.id}** {code.name} ({code.severity.value})\n\n{code.doc}"
    if plan is None:
        return None
    if occ.kind == "tensor":
        return _tensor(plan, occ.name)
    if occ.kind == "dim":
        dim = next((d for d in plan.dims if d.name == occ.name), None)
        param = next((p for p in plan.params if p.name == occ.name), None)
        if dim is None and param is not None:
            return (
                f"param `{param.name}` = {param.default:,}, range {param.lo:,} … {param.hi:,}"
                f"\n\nrun-time value in the model code: `{param.variable}`"
            )
        if dim is None:
            return None
        return f"dim `{dim.name}` = {'dynamic' if dim.value is None else f'{dim.value:,}'}"
    if occ.kind == "config":
        value = plan.config.get(occ.name)
        return None if value is None else f"config key `{occ.name}` = {value:,}"
    if occ.kind == "warm":
        return _warm(state, plan, occ.name)
    if occ.kind == "stage":
        return _stage(plan, occ)
    if occ.kind == "kind":
        layer = plan.layers.get(occ.name)
        if layer is None:
            return None
        stages, warms = len(layer.stages), len(layer.warms)
        return f"layer kind `{layer.name}`: {_n(stages, 'stage')}, {_n(warms, 'warm')}"
    return None


def _n(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _tensor(plan: pc.ir.Plan, name: str) -> str | None:
    t = plan.tensors.get(name)
    if t is None:
        return None
    shape = ", ".join("dynamic" if d is None else str(d) for d in t.shape)
    lines = [f"tensor `{t.name}`: [{shape}] {t.dtype.name}"]
    if t.stacked is not None:  # the shape is one layer's slab of the stack
        s = t.stacked
        lines.append(f"stacked: one of {s.layers:,} layers, picked by `{s.index}`")
    n = t.bytes
    lines.append("bytes: dynamic" if n is None else f"bytes: {pc.fmt_bytes(n, pc.l2_bytes(plan))}")
    readers = [
        f"{layer.name}.{s.name}"
        for layer in plan.layers.values()
        for s in layer.stages
        if t.name in s.reads
    ]
    lines.append(f"read by: {', '.join(readers) if readers else 'no stage'}")
    return "\n\n".join(lines)


def _warm(state: PlanState, plan: pc.ir.Plan, name: str) -> str | None:
    found = next(
        ((layer, w) for layer in plan.layers.values() for w in layer.warms if w.name == name),
        None,
    )
    if found is None:
        return None
    layer, warm = found
    checked = state.result.facts
    assert checked is not None  # the plan was checked
    analysis = checked.analysis
    facts = analysis.layers.get(layer.name)
    live = [s.name for s in facts.live_stages(warm)] if facts is not None else []
    lines = [
        f"warm `{warm.name}` in `{layer.name}`, after `{_anchor(layer, warm)}`",
        f"alive in: {', '.join(live) if live else 'no stage'}",
        f"bytes: {pc.fmt_bytes(warm.bytes, pc.l2_bytes(plan))}",
        f"estimated landing: {_landing(analysis.warm(layer.name, warm.name))}",
        *_forms(plan, checked, warm),
    ]
    on_it = _diagnostics_in(state, name)
    listed = "".join(f"\n- {d.severity.value} {d.code}: {d.message}" for d in on_it)
    return "\n\n".join(lines) + "\n\ndiagnostics:" + (listed or " none")


def _forms(plan: pc.ir.Plan, checked: pc.Facts, warm: pc.ir.Warm) -> list[str]:
    """What a cross-layer warm, a prefix and a guard add to a warm's hover."""
    out = []
    if warm.next_layer:
        after = ", ".join(f"`{k}`" for k in pc.successors(plan, warm.layer))
        out.append(
            f"next layer: warms the tensors of the layer after this one ({after}); "
            "the forward's last layer issues none"
        )
        if alive := pc.alive_next(checked, warm):
            out.append(f"alive in the next layer: {alive}")
    for e in warm.entries:
        if e.rows is not None:
            out.append(
                f"prefix: `{e.tensor.name}` {e.rows} of {e.tensor.shape[0]:,}, "
                f"{pc.fmt_bytes(e.bytes, pc.l2_bytes(plan))}"
            )
    for g in warm.guards:
        out.append(f"guard: issued only when `{g}` (run-time `{g.variable}`)")
    return out


def _landing(facts: pc.WarmFacts | None) -> str:
    """The warm's landing as PC107 works it out (the check's analysis, not a second
    reckoning: on a graph the window is the steps of the schedule)."""
    if facts is None or facts.first is None or facts.landing is None:
        return "no consumer after the anchor"
    first = facts.first.name
    window, share, rate = facts.window_us, facts.share, facts.rate
    if window is None or share is None or rate is None:
        if facts.landing.fires:
            return f"first consumer '{first}' runs right after the anchor"
        return f"first consumer '{first}'; add `duration_us` to the stages before it"
    return (
        f"{pc.fmt_percent(share)} of {facts.bytes:,} B in the {float(window):g} µs "
        f"before '{first}' at {rate / 1e9:g} GB/s"
    )


def _anchor(layer: pc.ir.Layer, warm: pc.ir.Warm) -> str:
    return layer.stages[warm.anchor].name if warm.anchor is not None else "?"


def _diagnostics_in(state: PlanState, warm: str) -> list[pc.Diagnostic]:
    """The diagnostics (shown or allowed) whose node lies in the warm's entry."""
    index = state.index
    path = index.warms.get(warm) if index is not None else None
    extent = index.extent(path) if index is not None and path is not None else None
    if extent is None:
        return []
    found = [*state.result.diagnostics, *(a.diagnostic for a in state.result.allowed)]
    return [d for d in found if _inside(node_span(None, state.text, d.line, d.col), extent)]


def _inside(span: Span, outer: Span) -> bool:
    return outer.start <= span.start <= outer.end


def _stage(plan: pc.ir.Plan, occ: Occurrence) -> str | None:
    layer = plan.layers.get(occ.scope or "")
    stage = next((s for s in layer.stages if s.name == occ.name), None) if layer else None
    if layer is None or stage is None:
        return None
    warms = [w.name for w in layer.warms if w.alive_at(layer.schedule.start[stage.index])]
    lines = [f"stage `{stage.name}` (#{stage.number} of `{layer.name}`)"]
    if stage.reads:
        lines.append(f"reads: {', '.join(stage.reads)}")
    lines.append(f"warms alive: {', '.join(warms) if warms else 'none'}")
    return "\n\n".join(lines)

"""The outline (document symbols: dims, tensors, layer kinds with their stages and
warms) and inlay hints (each tensor's bytes after its definition)."""

from __future__ import annotations

from lsprotocol import types as lsp

from plancc.lsp import adapter as pc
from plancc.lsp.index import Index, Span
from plancc.lsp.state import PlanState

_K = lsp.SymbolKind


def symbols(state: PlanState) -> list[lsp.DocumentSymbol]:
    """The outline."""
    index = state.index
    if index is None or not isinstance(index.doc.data, dict):
        return []
    data = index.doc.data
    out = []
    for section, kind in (("dims", _K.Constant), ("tensors", _K.Variable)):
        entries = data.get(section)
        children = [
            symbol
            for name in (entries if isinstance(entries, dict) else ())
            if (symbol := _symbol(state, index, name, kind, (section, name))) is not None
        ]
        group = _symbol(state, index, section, _K.Namespace, (section,), children=children)
        if group is not None:
            out.append(group)
    layers = data.get("layers")
    kinds = []
    for name, layer in layers.items() if isinstance(layers, dict) else ():
        inside = _layer(state, index, name, layer)
        symbol = _symbol(state, index, name, _K.Class, ("layers", name), children=inside)
        if symbol is not None:
            kinds.append(symbol)
    group = _symbol(state, index, "layers", _K.Namespace, ("layers",), children=kinds)
    if group is not None:
        out.append(group)
    return out


Symbol = lsp.DocumentSymbol


def _layer(state: PlanState, index: Index, kind: str, layer: object) -> list[Symbol]:
    out: list[Symbol] = []
    if not isinstance(layer, dict):
        return out
    for key, symbol_kind in (("stages", _K.Function), ("warms", _K.Event)):
        items = layer.get(key)
        for i, item in enumerate(items if isinstance(items, list) else ()):
            name = item.get("name") if isinstance(item, dict) else None
            if isinstance(name, str):
                s = _symbol(state, index, name, symbol_kind, ("layers", kind, key, i))
                if s is not None:
                    out.append(s)
    return out


def _symbol(
    state: PlanState,
    index: Index,
    name: str,
    kind: lsp.SymbolKind,
    path: tuple[str | int, ...],
    *,
    children: list[Symbol] | None = None,
) -> Symbol | None:
    """A symbol spanning the entry at ``path`` (its key and value), selected at its name."""
    state.pause()
    name_span = index.key_span(path) or index.name_span((*path, "name"))
    extent = index.extent(path)
    if name_span is None or extent is None or not name:
        return None
    whole = Span(min(name_span.start, extent.start), max(name_span.end, extent.end))
    return lsp.DocumentSymbol(
        name, kind, state.range(whole), state.range(name_span), children=children or None
    )


def inlay_hints(state: PlanState, within: lsp.Range) -> list[lsp.InlayHint]:
    """Each static tensor's bytes after its entry (``67.1 MB``; every unit on hover)."""
    index, plan = state.index, state.result.plan
    if index is None or plan is None:
        return []
    span = state.span(within)
    out = []
    for t in plan.tensors.values():
        state.pause()
        extent = index.extent(("tensors", t.name))
        if extent is None or t.bytes is None or not (span.start <= extent.end <= span.end):
            continue
        label = f"{t.bytes / 1e6:.1f} MB" if t.bytes >= 100_000 else f"{t.bytes:,} B"
        position = state.range(Span(extent.end, extent.end)).end
        out.append(
            lsp.InlayHint(
                position=position,
                label=label,
                kind=lsp.InlayHintKind.Type,
                padding_left=True,
                tooltip=pc.fmt_bytes(t.bytes, pc.l2_bytes(plan)),
            )
        )
    return out

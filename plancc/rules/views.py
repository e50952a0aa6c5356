"""What can be warmed at all: static shapes and flat views (PC020-PC022)."""

from __future__ import annotations

from collections.abc import Iterator

from plancc import ir
from plancc.codes import Severity
from plancc.facts import Facts
from plancc.rules import Finding, rule


def _views(plan: ir.Plan) -> Iterator[tuple[str, ir.Tensor, ir.FlatView, int | None]]:
    """Every declared flat view once, with the elements it must hold: the tensors' own,
    then the warms' overrides (of a prefix: its rows')."""
    for tensor in plan.tensors.values():
        if tensor.flat is not None and tensor.flat.declared:
            yield tensor.name, tensor, tensor.flat, tensor.elements
    for warm in plan.warms:
        for entry in warm.entries:
            if (
                entry.flat is not None
                and entry.flat.declared
                and entry.flat is not entry.tensor.flat
            ):
                what = f"{entry.tensor.name} in warm {warm.name}"
                if entry.rows is not None:
                    what = f"{entry.tensor.name} {entry.rows} in warm {warm.name}"
                yield what, entry.tensor, entry.flat, entry.elements


@rule("PC020", "dynamic-warm", Severity.ERROR)
def dynamic_warm(plan: ir.Plan, facts: Facts) -> Iterator[Finding]:
    """A warmed tensor has a dynamic dim, or a dim that uses a param.

    Its addresses are data-dependent (like paged KV cache blocks) and its
    shape is not static, so the prefetch verifier rejects it: it cannot be
    warmed (seed: "KV cache pages, gathered blocks: impossible"). A param
    (batch, context length) is a value of the run, not of the build: the
    generated code, built once, cannot depend on one.

    Fix: remove the tensor from the warm.
    """
    for warm in plan.warms:
        for entry in warm.entries:
            t = entry.tensor
            if not t.static:
                dyn = [s for s, v in zip(t.shape_source, t.shape, strict=True) if v is None]
                yield Finding(
                    entry.pos,
                    f"tensor '{t.name}' has a dynamic dim ({', '.join(dyn)}): its addresses are "
                    "data-dependent: it cannot be warmed",
                    "warm only tensors whose every dim is static (weights)",
                )
                continue
            params = t.params | (entry.flat.params if entry.flat is not None else frozenset())
            if params:
                yield Finding(
                    entry.pos,
                    f"tensor '{t.name}' has a dim that uses param "
                    f"{', '.join(repr(p) for p in sorted(params))}: its size changes at run "
                    "time: it cannot be warmed",
                    "warm only tensors whose every dim is fixed at build time (weights)",
                )


@rule("PC021", "not-flat", Severity.ERROR)
def not_flat(plan: ir.Plan, facts: Facts) -> Iterator[Finding]:
    """A flat view is not `[N]`, `[1, N]` or `[1, 1, N]`.

    The prefetch source must be a flat, contiguous, logically 1-D GM region.
    This mirrors the PTOAS TPrefetchAsyncOp::verify() check, which would
    otherwise fail at PyPTO IR construction.
    """
    for what, _, view, _ in _views(plan):
        if not view.is_flat:
            shown = ", ".join(
                s if v is None else str(v) for s, v in zip(view.source, view.values, strict=True)
            )
            yield Finding(
                view.pos,
                f"flat view [{shown}] of {what} is not [N], [1, N] or [1, 1, N]",
                "every dimension but the last must be 1",
            )


@rule("PC022", "flat-size", Severity.ERROR)
def flat_size(plan: ir.Plan, facts: Facts) -> Iterator[Finding]:
    """A flat view's element count differs from its tensor's.

    The reshape would fail, or warm a region other than the tensor. The
    message gives both counts. A flat view given beside a prefix's `rows`
    must hold the rows' elements.
    """
    for what, tensor, view, elements in _views(plan):
        if elements is not None and view.elements != elements:
            if view.elements is None:
                dynamic = [s for s, v in zip(view.source, view.values, strict=True) if v is None]
                count = f"a dynamic entry ({', '.join(dynamic)})"
            else:
                count = f"{view.elements:,} elements"
            whole = f"the tensor has {elements:,} (shape [{', '.join(tensor.shape_source)}])"
            if elements != tensor.elements:
                whole = f"its rows hold {elements:,}"
            yield Finding(view.pos, f"flat view of {what} has {count}; {whole}")

"""PC108: a tensor warmed twice in one layer kind."""

from __future__ import annotations

from collections.abc import Iterator

from plancc import ir
from plancc.codes import Severity
from plancc.facts import Facts
from plancc.facts.crossing import predecessors
from plancc.rules import Finding, rule
from plancc.rules.anchors import drop_entries
from plancc.text import fmt_size


@rule("PC108", "warmed-twice", Severity.WARNING)
def warmed_twice(plan: ir.Plan, facts: Facts) -> Iterator[Finding]:
    """A tensor is warmed by two warms of one layer kind.

    The later warm is the one whose anchor finishes later (on the schedule), of
    two that finish together the one listed later. Reported at the later warm's
    item of the tensor; its fix removes the item there (the whole warm when that
    was its only item). Only static tensors and anchored warms count.

    Fires once per item of a tensor some earlier warm of the kind already holds
    (of a prefix, rows that overlap). A cross-layer warm holds the next layer's
    copies: the same bytes as the next layer kind's own warms of the tensor
    (it is issued first, in the layer before), other bytes than its own kind's.

    Why: the second transfer moves bytes that are in L2 already: SDMA time
    and bandwidth the layer's own streams could use. In the seed a warm's own
    task time scales with its bytes (27.0 → 56.9 µs); vllm-ascend removed a
    duplicate o_proj prefetch (#6629) and gained +4.9 % (MLA) and +7.6 % (SFA).

    Fix: remove the tensor from the later warm; its fix (safe) does.
    """
    reported: set[tuple[str, int]] = set()  # (warm, entry index): once, whatever the pairs
    for layer in plan.layers.values():
        if not layer.complete:
            continue
        for before in (None, *predecessors(plan, layer.name)):
            found, twice = _twice(_holding(plan, layer, before))
            for warm, e, other in found:
                if (warm.name, e.index) in reported:
                    continue
                reported.add((warm.name, e.index))
                name = e.tensor.name
                where = "" if other.layer == warm.layer else f" of '{other.layer}'"
                yield Finding(
                    e.pos,
                    f"tensor {e.what} is warmed by warm '{other.name}'{where} already: warm "
                    f"'{warm.name}' moves its {fmt_size(e.bytes)} into L2 a second time",
                    f"remove '{name}' from warm '{warm.name}'",
                    warm=warm,
                    fix=drop_entries(
                        warm, twice[id(warm)], e, f"warmed by warm '{other.name}' already"
                    ),
                    data={"tensor": name, "first_warm": other.name, "bytes": e.bytes},
                )


def _holding(plan: ir.Plan, layer: ir.Layer, before: str | None) -> list[ir.Warm]:
    """The warms that hold the layer kind's copies of its tensors when it follows layer
    kind ``before`` (None: no layer before it), in the order they are issued: the
    cross-layer warms of ``before`` (by anchor finish), then its own warms (the same)."""

    def ordered(kind: ir.Layer, cross: bool) -> list[ir.Warm]:
        finish = kind.schedule.finish
        return sorted(
            (w for w in kind.warms if w.anchor is not None and w.next_layer == cross),
            key=lambda w: finish(w.anchor or 0),
        )

    earlier = plan.layers.get(before) if before is not None else None
    coming = ordered(earlier, True) if earlier is not None and earlier.complete else []
    return [*coming, *ordered(layer, False)]


def _twice(
    warms: list[ir.Warm],
) -> tuple[list[tuple[ir.Warm, ir.WarmEntry, ir.Warm]], dict[int, list[ir.WarmEntry]]]:
    """Each static entry some earlier warm of ``warms`` already holds (a row of), with that
    warm; and per warm (by id) its entries found."""
    # Per tensor, the entries held so far: an entry is compared with its tensor's only.
    held: dict[str, list[tuple[ir.WarmEntry, ir.Warm]]] = {}
    found: list[tuple[ir.Warm, ir.WarmEntry, ir.Warm]] = []
    twice: dict[int, list[ir.WarmEntry]] = {}
    for warm in warms:
        for e in warm.entries:
            if not e.tensor.static:
                continue
            same = held.setdefault(e.tensor.name, [])
            other = next((w for x, w in same if w is not warm and x.covers(e)), None)
            if other is None:
                same.append((e, warm))
            else:
                found.append((warm, e, other))
                twice.setdefault(id(warm), []).append(e)
    return found, twice

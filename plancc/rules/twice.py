"""PC108: a tensor warmed twice in one layer kind."""

from __future__ import annotations

from collections.abc import Iterator

from plancc import ir
from plancc.codes import Severity
from plancc.facts import Facts
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

    Fires once per item of a tensor some earlier warm of the kind already holds.

    Why: the second transfer moves bytes that are in L2 already: SDMA time
    and bandwidth the layer's own streams could use. In the seed a warm's own
    task time scales with its bytes (27.0 → 56.9 µs); vllm-ascend removed a
    duplicate o_proj prefetch (#6629) and gained +4.9 % (MLA) and +7.6 % (SFA).

    Fix: remove the tensor from the later warm; its fix (safe) does.
    """
    for layer in plan.layers.values():
        if not layer.complete:
            continue
        finish = layer.schedule.finish
        # Anchored warms by anchor finish, then listing order (a stable sort).
        warms = sorted(
            (w for w in layer.warms if w.anchor is not None), key=lambda w: finish(w.anchor or 0)
        )
        first: dict[str, ir.Warm] = {}
        found: list[tuple[ir.Warm, ir.WarmEntry, ir.Warm]] = []
        twice: dict[int, list[ir.WarmEntry]] = {}  # id of a warm -> its entries found
        for warm in warms:
            for e in warm.entries:
                if e.tensor.static:
                    other = first.setdefault(e.tensor.name, warm)
                    if other is not warm:
                        found.append((warm, e, other))
                        twice.setdefault(id(warm), []).append(e)
        for warm, e, other in found:
            name = e.tensor.name
            yield Finding(
                e.pos,
                f"tensor '{name}' is warmed by warm '{other.name}' already: warm "
                f"'{warm.name}' moves its {fmt_size(e.tensor.bytes or 0)} into L2 a second time",
                f"remove '{name}' from warm '{warm.name}'",
                warm=warm,
                fix=drop_entries(
                    warm, twice[id(warm)], e, f"warmed by warm '{other.name}' already"
                ),
                data={"tensor": name, "first_warm": other.name, "bytes": e.tensor.bytes or 0},
            )

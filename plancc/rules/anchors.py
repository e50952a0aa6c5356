"""Whether a warm is issued before its consumers, and can be issued at all: PC040-PC042."""

from __future__ import annotations

from collections.abc import Iterator

from plancc import fixes, ir
from plancc.codes import Severity
from plancc.facts import Facts
from plancc.facts.crossing import successors
from plancc.facts.placed import anchored
from plancc.rules import Finding, rule


@rule("PC040", "read-before-anchor", Severity.ERROR)
def read_before_anchor(plan: ir.Plan, facts: Facts) -> Iterator[Finding]:
    """A warmed tensor is read by a stage that does not run after the anchor stage.

    A warm is issued when its anchor finishes (a join's: when every anchor
    stage has). A stage at or before an anchor has read the weights by then; a
    stage that runs beside one (no `deps` path between them) may have: the warm
    may start after its consumer, pure overhead that competes with the layer's
    own streams. Reported at the tensor's entry, naming the first such reader
    and the anchor it does not run after.

    Fix: anchor the warm on a stage that runs before every reader of the
    tensor, or drop the tensor from the warm. Its fix (unsafe: the warm lands
    less) drops it (the warm, when it lists nothing else).
    """
    for p in facts.placed:  # each anchored warm's static entries, shared with PC101-PC107
        layer, line = p.layer, p.line
        found = []
        for entry in p.entries:
            early = next(
                (r for r in line.readers.get(entry.tensor.name, ()) if not p.after(r)), None
            )
            if early is not None:
                found.append((entry, early))
        dropped = [entry for entry, _ in found]
        for entry, early in found:
            # The anchor it does not run after: one it runs at or before, else one beside it.
            missed = [a for a in p.anchors if not line.runs_before(a, early)]
            at = next((a for a in missed if not line.schedule.beside(a, early)), missed[0])
            anchor, reader = layer.stages[at].name, layer.stages[early].name
            if line.schedule.beside(at, early):
                where, what = f"which runs beside anchor '{anchor}'", "may start"
            else:
                where, what = f"at or before anchor '{anchor}'", "would start"
            yield Finding(
                entry.pos,
                f"tensor '{entry.tensor.name}' is read by '{reader}', {where}: the warm {what} "
                "after its consumer",
                stages=(early,),
                fix=drop_entries(
                    p.warm, dropped, entry, f"read by '{reader}' {where}", fixes.Safety.UNSAFE
                ),
            )


@rule("PC041", "unread-warm", Severity.WARNING, loss=True)
def unread_warm(plan: ir.Plan, facts: Facts) -> Iterator[Finding]:
    """A warmed tensor is read by no stage of the layer kind.

    The warm is pure overhead: it moves bytes nobody reads, and holds L2 to
    the end of the layer kind. A cross-layer warm's tensors are read by the
    next layer: one that a next layer kind does not read is reported at that
    pair of layer kinds, naming it.

    Fix: add the reading stage's `reads`, or drop the tensor; its fix (safe)
    drops it (the warm, when it lists nothing else; of a cross-layer warm, only
    a tensor no next layer kind reads).
    """
    for layer in plan.layers.values():
        if not layer.complete:
            continue
        read_by = facts.timelines[layer.name].readers
        for warm in layer.warms:
            if warm.next_layer:
                continue  # the next layer's readers count: below
            unread = [e for e in warm.entries if e.tensor.static and e.tensor.name not in read_by]
            for entry in unread:
                yield Finding(
                    entry.pos,
                    f"tensor '{entry.tensor.name}' is read by no stage of layer kind "
                    f"'{layer.name}': warming it is pure overhead",
                    warm=warm,
                    fix=drop_entries(warm, unread, entry, "read by no stage"),
                )
    yield from _unread_next(plan, facts)


def _unread_next(plan: ir.Plan, facts: Facts) -> Iterator[Finding]:
    """PC041 of a cross-layer warm: a tensor the next layer does not read, once per pair
    of layer kinds (the fix only where no next layer reads it)."""
    unread: dict[str, dict[int, list[str]]] = {}  # warm -> entry -> the kinds not reading it
    # The crossings the placement rules judge, each once (a warm's placed once per pair).
    crossing = list({id(p.crossing): p.crossing for p in facts.placed if p.crossing}.values())
    for c in crossing:
        read = {t for s in c.target.stages for t in s.reads}
        for e in c.original.entries:
            if e.tensor.static and e.tensor.name not in read:
                unread.setdefault(c.original.name, {}).setdefault(id(e), []).append(c.target.name)
    for c in crossing:
        warm = c.original
        missed = unread.get(warm.name, {})
        nowhere = [
            e
            for e in warm.entries
            if len(missed.get(id(e), ())) == len(successors(plan, warm.layer))
        ]
        for e in warm.entries:
            if c.target.name not in missed.get(id(e), ()):
                continue
            yield Finding(
                e.pos,
                f"tensor '{e.tensor.name}' is read by no stage of '{c.target.name}', the next "
                f"layer after '{warm.layer}': warming it is pure overhead",
                warm=warm,
                fix=drop_entries(warm, nowhere, e, "read by no next layer")
                if e in nowhere
                else None,
            )


def drop_entries(
    warm: ir.Warm,
    dropped: list[ir.WarmEntry],
    entry: ir.WarmEntry,
    why: str,
    safety: fixes.Safety = fixes.Safety.SAFE,
) -> fixes.Fix:
    """Remove ``entry`` from the warm; the warm itself when ``dropped`` (the entries the
    rule's findings remove together) is every item it lists, as a warm lists at least one."""
    name = entry.tensor.name
    if len(dropped) >= warm.listed:
        title = f"remove warm '{warm.name}': '{name}' is {why}"
        edit: fixes.Edit = fixes.Remove(warm.path[:-1], (warm.path[-1],))
    else:
        title = f"remove '{name}' from warm '{warm.name}': it is {why}"
        edit = fixes.Remove((*warm.path, "tensors"), (entry.index,))
    return fixes.Fix(title, (edit,), safety)


@rule("PC042", "anchor-without-task", Severity.ERROR)
def anchor_without_task(plan: ir.Plan, facts: Facts) -> Iterator[Finding]:
    """The anchor stage has no `task`.

    The generated warm takes the anchor's TaskId as its `after` parameter
    (`deps=[after]`), so the plan must name the variable that holds it in the
    model code (for example `q_rope_tid`). A join passes every anchor's TaskId
    (`deps=[q_tid, k_tid, v_tid]`): each anchor stage without a `task` is
    reported, at its item of `after`.
    """
    for layer, warm, _ in anchored(plan):
        for j, at in enumerate(warm.anchors):
            stage = layer.stages[at]
            if stage.task is None:
                yield Finding(
                    warm.locate("after", j) if warm.join else warm.after_pos,
                    f"anchor stage '{stage.name}' of warm '{warm.name}' has no `task`: the "
                    "generated call needs its TaskId",
                    f"add `task: <TaskId variable>` to stage '{stage.name}'",
                )

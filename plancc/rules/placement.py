"""Placement rules PC101-PC103 (PC104 in ``later_anchor``, PC105-PC107 in ``alive``):
where, when and what a warm may warm.

Each rule encodes one measured negative result of the seed document ("L2
Prefetch (SDMA Cache Warm)"). A warm never fails a test, it only costs time,
so these warnings are the only safety net before a multi-card benchmark.

Shared vocabulary (docs/plan-format.md, Rules):

- Only *static* tensors (every dim an integer: weights) count. A tensor with a
  dynamic dim (paged KV cache) counts for none of these rules.
- Before, after, between, first and last are the layer kind's schedule ("The
  schedule": stages as a graph of `deps`; without `deps`, the list order).
- A warmed tensor's *consumer* is the first stage running after the anchor that
  reads it (the earliest to start).
- The *first* and *last consumer* are the earliest and latest of those to start;
  the first is of the tensors that hold 1 % of the warm's bytes or more (a tensor
  under 1 % rides along: ``plancc.tables.thresholds``).
- The *consumer groups* a warm touches are the groups of its consumers.
- A warm is *alive* from its anchor's finish through its last consumer.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from fractions import Fraction
from functools import partial

from plancc import fixes, ir
from plancc.codes import Severity
from plancc.facts import Facts
from plancc.facts.crossing import grown_crossing
from plancc.facts.liveness import layer_peak
from plancc.facts.placed import Placed, consumer_order, warm_path
from plancc.rules import Finding, rule
from plancc.tables.thresholds import negligible


def _group(group: tuple[str, str]) -> str:
    kind, name = group
    return f"stage '{name}'" if kind == "stage" else f"consumer group '{name}'"


def _names(items: list[str]) -> str:
    return ", ".join(items)


@rule("PC101", "shared-anchor", Severity.WARNING, loss=True)
def shared_anchor(plan: ir.Plan, facts: Facts) -> Iterator[Finding]:
    """Two warms in one layer kind share an anchor stage.

    Fires on each warm after the first (in plan order) whose `after` names a
    stage another warm of the same layer kind already anchors on (for a join,
    the same set of stages, in any order); reported at its `after`. A warm
    whose tensors all have a dynamic dim counts for none; a cross-layer warm
    counts in the layer kind that issues it.

    Why: one warm is one `pl.at(CORE_GROUP)` scope with one
    `make_context()`. Two warms issued together land on two AIVs and run
    concurrently, but split the SDMA bandwidth: in the seed, wo_a and wo_b in
    two scopes reached 122 and 52 GB/s, 153 GB/s aggregate (100.7 MB in
    660.2 µs), against 285 GB/s for a single uncontended stream, which turned a −1.08 %
    win into a +0.66 % loss. Sharding across SDMA channels scales negatively
    for the same reason.

    Fix: merge the warms into one, listing every tensor in consumer order.
    """
    first: dict[tuple[str, frozenset[int]], ir.Warm] = {}
    # Each warm once (a cross-layer warm is placed once per crossing), in plan order.
    order = {w.name: i for i, w in enumerate(plan.warms)}
    unique = {p.warm.name: p for p in reversed(facts.placed)}
    for p in sorted(unique.values(), key=lambda p: order[p.warm.name]):
        if not p.entries:
            continue  # only dynamic tensors: nothing is issued (PC020)
        warm = p.warm
        other = first.setdefault((p.kind, frozenset(p.anchors)), warm)
        if other is not warm:
            if warm.join:
                names = ", ".join(p.layer.stages[a].name for a in p.anchors)
                shared = f"its anchors {names}"
            else:
                shared = f"anchor '{p.anchor.name}'"
            yield Finding(
                warm.after_pos,
                f"warm '{warm.name}' shares {shared} with warm '{other.name}': two "
                "scopes split the SDMA bandwidth",
                f"merge it into warm '{other.name}': one scope, tensors in consumer order",
                warm=warm,
            )


@rule("PC102", "issue-order", Severity.WARNING)
def issue_order(plan: ir.Plan, facts: Facts) -> Iterator[Finding]:
    """The warm's issue order differs from its tensors' consumer order.

    A tensor's consumer is the first stage running after the anchor that
    reads it. Fires when `tensors` lists a tensor before one whose consumer
    starts earlier; reported once per warm, at the first tensor issued too
    early.
    Tensors whose consumers start at the same step may come in any order;
    tensors with no consumer after the anchor (and tensors with a dynamic dim)
    are ignored.

    Why: SDMA moves the list in order, so the tensor needed first must land
    first. In the seed, `wo_a` then `wo_b` (proj_a reads wo_a before proj_b
    reads wo_b) gained −830 µs; the reverse order gained −595 µs: reversing
    the order cost a third of the gain.

    Fix: list the tensors in the order their consumers run; its fix (safe)
    reorders them so.
    """
    for p in facts.placed:
        issued = [e for e in p.entries if e.tensor.name in p.consumers]
        start = {e.tensor.name: p.line.start[p.consumers[e.tensor.name].index] for e in issued}
        for i, early in enumerate(issued):
            at = start[early.tensor.name]
            later = [e for e in issued[i + 1 :] if start[e.tensor.name] < at]
            if not later:
                continue
            needed = min(later, key=lambda e: start[e.tensor.name])
            order = sorted(issued, key=lambda e: start[e.tensor.name])
            title = f"issue in consumer order: [{_names([e.tensor.name for e in order])}]"
            yield Finding(
                early.pos,
                f"'{early.tensor.name}' is issued before '{needed.tensor.name}', which "
                f"'{p.consumers[needed.tensor.name].name}' reads earlier{p.on}",
                title,
                warm=p.warm,
                fix=fixes.reorder(warm_path(p, "tensors"), consumer_order(p), title),
                data={"order": [e.tensor.name for e in order]},
            )
            break


@rule("PC103", "partial-group", Severity.WARNING, amount="missing_bytes")
def partial_group(plan: ir.Plan, facts: Facts) -> Iterator[Finding]:
    """The warm covers some, but not all, of the weights of a consumer group it touches.

    The consumer groups a warm touches are the groups of its tensors'
    consumers (a stage without `group` is its own group). Fires once per
    such group when some static tensor read by the group's stages after the
    anchor is not in the warm, unless the tensors left out, over all the
    touched groups, hold less than 1 % of the static bytes those groups read
    (a 16 KB scale vector beside a 33.6 MB matrix). Reported at `tensors`,
    naming the missing tensors. The hint adds them, unless that would take
    the layer's L2 peak over the budget (PC032, whose fix is to warm less):
    then it says so.

    Why: a warm helps only the bytes it lands, and the group waits for its
    slowest stream. In the seed (ep2, one scope anchored at q): `wo_b` alone
    −399 µs, `wo_a` alone −692 µs, the pair `wo_a` then `wo_b` −830 µs.

    A prefix (`rows`) leaves the rest of its tensor out: those bytes count
    as left out, and the message says "the rest of" the tensor. A cross-layer
    warm's groups are the next layer's.

    Fix: add the missing tensors (in consumer order); if the group reads
    weights that cannot be warmed with the rest, split the group, or accept
    the finding with an `allow` and its reason. Its fix (unsafe: the warm
    lands more) adds the ones whose bytes matter (the largest, until what is
    still left out is under the 1 %: never a scale vector beside its matrix)
    in consumer order, unless another warm of the kind holds one (PC108), the
    grown warm would not land (PC107), or what is left out is the rest of a
    prefix (its rows would overlap).
    """
    held: dict[str, set[str]] = {}  # layer kind -> the tensors its warms hold
    for p in facts.placed:
        found, read, part, left_out = _gaps(p, p.line.groups)  # each kind's groups, listed once
        if not found:
            continue
        if negligible(left_out, sum(t.bytes or 0 for t in read.values())):
            continue  # a scale vector beside its matrix is not worth a finding
        warmed = {e.tensor.name for e in p.entries if e.rows is None}
        worth = _worth(read, warmed, part)
        for group, stages, have, missing in found:
            where = _group(group)
            if group[0] == "group":
                where += f" (stages {_names([s.name for s in stages])})"
            if p.layer.name not in held:  # each layer kind's warmed tensors, listed once
                held[p.layer.name] = _held(plan, p)
            whole = [read[t] for t in missing if t not in part and t in worth]
            if any(t in part for t in missing):  # a prefix is not completed
                hint, fix = _rest(missing, part), None
            elif whole:
                hint, fix = _complete(plan, p, whole, held[p.layer.name])
            else:
                hint, fix = (
                    f"{_names(missing)} of {where} hold under 1 % of the bytes: warm what the "
                    "other groups miss",
                    None,
                )
            yield Finding(
                p.warm.tensors_pos,
                f"warm '{p.warm.name}' covers {_names(_rows(p, have))} but not "
                f"{_names(_rows(p, missing, rest=True))} of {where}{p.on}",
                hint,
                warm=p.warm,
                fix=fix,
                data={
                    "missing": missing,
                    "missing_bytes": sum((read[t].bytes or 0) - part.get(t, 0) for t in missing),
                },
            )


def _worth(read: dict[str, ir.Tensor], warmed: set[str], part: dict[str, int]) -> set[str]:
    """The tensors left out worth adding: the largest first, until what is still left out
    is under 1 % of the bytes the touched groups read (the scale vector the 1 % rule lets
    go stays out, as the shipped pair leaves it). A prefix's rest counts as left out but is
    never added (its rows would overlap)."""
    total = sum(t.bytes or 0 for t in read.values())
    missing = sorted(
        (t for name, t in read.items() if name not in warmed and name not in part),
        key=lambda t: -(t.bytes or 0),
    )
    left_out = sum((t.bytes or 0) - part.get(n, 0) for n, t in read.items() if n not in warmed)
    out: set[str] = set()
    for t in missing:
        if negligible(left_out, total):
            break
        out.add(t.name)
        left_out -= t.bytes or 0
    return out


_Gap = tuple[tuple[str, str], list[ir.Stage], list[str], list[str]]


def _gaps(
    p: Placed, groups: dict[tuple[str, str], list[ir.Stage]]
) -> tuple[list[_Gap], dict[str, ir.Tensor], dict[str, int], int]:
    """Per consumer group the warm touches and leaves weights of out: the group, its
    stages after the anchor, the tensors the warm holds (a prefix's too) and those it
    leaves out (a prefix's rest too); every static tensor those groups read; the bytes
    the warm's prefixes hold of each tensor; and the bytes it leaves out."""
    line = p.line
    warmed = {e.tensor.name for e in p.entries if e.rows is None}
    part: dict[str, int] = {}  # the bytes a prefix holds of its tensor, over all its ranges
    for e in p.entries:
        if e.rows is not None:
            part[e.tensor.name] = part.get(e.tensor.name, 0) + e.bytes
    by_first = sorted(p.consumers.values(), key=lambda s: line.rank[s.index])
    found: list[_Gap] = []
    read: dict[str, ir.Tensor] = {}
    for group in dict.fromkeys(s.consumer_group for s in by_first):
        stages = [s for s in groups[group] if p.after(s.index)]
        needed = {t.name: t for s in stages for t in line.weights[s.index]}
        read.update(needed)
        missing = [t for t in needed if t not in warmed]  # a prefix's rest too
        if missing:
            have = [t for t in needed if t in warmed or t in part]
            found.append((group, stages, have, missing))
    # What it leaves out: each tensor it does not hold whole, but the rows a prefix holds.
    left_out = sum((t.bytes or 0) - part.get(n, 0) for n, t in read.items() if n not in warmed)
    return found, read, part, left_out


def _rows(p: Placed, names: list[str], *, rest: bool = False) -> list[str]:
    """Tensor names as a PC103 message gives them: a prefix's with the rows it holds (or,
    with ``rest``, those it leaves out)."""
    ranges: dict[str, list[ir.Rows]] = {}
    for e in p.entries:
        if e.rows is not None:
            ranges.setdefault(e.tensor.name, []).append(e.rows)
    out = []
    for name in names:
        if name not in ranges:
            out.append(name)
        elif rest:
            out.append(f"the rest of {name}")
        else:
            out.append(f"{name} {', '.join(str(r) for r in ranges[name])}")
    return out


def _rest(missing: list[str], part: dict[str, int]) -> str:
    """PC103's hint when a prefix leaves rows out: no fix adds them (its rows would
    overlap), the plan widens the range or says why not."""
    prefixes = [t for t in missing if t in part]
    return (
        f"widen the rows of {_names(prefixes)}, or allow PC103 with the reason the rest is "
        "left out (a prefix is what lands before its consumer)"
    )


def _held(plan: ir.Plan, p: Placed) -> set[str]:
    """The tensors other warms hold where this warm's consumers read them: its layer
    kind's warms; for a cross-layer warm, the copies the next layer reads: that layer's
    own warms' and the cross-layer warms' of the kind before it."""
    c = p.crossing
    if c is None:
        return {e.tensor.name for w in p.layer.warms for e in w.entries}
    warms = [w for w in c.target.warms if not w.next_layer]
    warms += [w for w in c.source.warms if w.next_layer]
    return {e.tensor.name for w in warms for e in w.entries}


def _complete(
    plan: ir.Plan, p: Placed, missing: list[ir.Tensor], warmed: set[str]
) -> tuple[str, fixes.Fix | None]:
    """Add the missing tensors, unless that would exceed the L2 budget (PC032 would
    then tell the plan to warm less: a circle). The fix appends them and puts the
    list in consumer order (unsafe: the warm lands more); there is none when another
    warm of the kind holds one of them (``warmed``: PC108 would follow) or the grown
    warm would not land (PC107)."""
    names = _names([t.name for t in missing])
    hint = f"add {names} to the warm, in consumer order"
    path = warm_path(p, "tensors")
    edits = (
        fixes.Append(path, tuple(t.name for t in missing)),
        fixes.Reorder(path, consumer_order(p, missing)),
    )
    fix = (
        None
        if any(t.name in warmed for t in missing) or not _lands(p, missing)
        else (fixes.Fix(hint, edits, fixes.Safety.UNSAFE))
    )
    l2 = plan.platform.l2_bytes if plan.platform is not None else None
    if l2 is None:
        return hint, fix
    line = p.line
    extra = tuple(ir.WarmEntry(t, t.flat, partial(p.warm.locate, "tensors")) for t in missing)
    if p.crossing is not None:
        top = grown_crossing(plan, p.crossing, extra)
    else:
        reads = [line.consumer(t.name, p.anchors) for t in missing]
        end = max([p.warm.live[1], *(line.start[r] for r in reads if r is not None)])
        grown = replace(p.warm, entries=(*p.warm.entries, *extra), live=(p.warm.live[0], end))
        layer = replace(p.layer, warms=tuple(grown if w is p.warm else w for w in p.layer.warms))
        top = layer_peak(layer).bytes
    if Fraction(top, l2) > plan.l2_fraction:
        return f"adding {names} would exceed the L2 budget: split the group, or allow PC103", None
    return hint, fix


def _lands(p: Placed, added: list[ir.Tensor]) -> bool:
    """Whether the warm, with ``added``, still lands before its first consumer (PC107)."""
    line = p.line
    reads = [line.consumer(t.name, p.anchors) for t in added]
    firsts = [r for r in reads if r is not None]
    if p.first is not None:
        firsts.append(p.first.index)
    if not firsts:
        return True
    first = min(firsts, key=lambda r: line.rank[r])
    grown = p.bytes + sum(t.bytes or 0 for t in added)
    return not line.landing(p.at, first, grown).fires

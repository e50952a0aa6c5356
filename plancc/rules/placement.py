"""Placement rules PC101-PC107: where, when and what a warm may warm.

Each rule encodes one measured negative result of the seed document ("L2
Prefetch (SDMA Cache Warm)"). A warm never fails a test, it only costs time,
so these warnings are the only safety net before a multi-card benchmark.

Shared vocabulary (docs/plan-format.md, Rules):

- Only *static* tensors (every dim an integer: weights) count. A tensor with a
  dynamic dim (paged KV cache) counts for none of these rules.
- A warmed tensor's *consumer* is the first stage after the anchor that reads it.
- The *first* and *last consumer* are the earliest and latest of those.
- The *consumer groups* a warm touches are the groups of its consumers.
- A warm is *alive* from the stage after its anchor through its last consumer.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterator
from dataclasses import replace
from fractions import Fraction
from functools import partial

from plancc import ir
from plancc.codes import Severity
from plancc.liveness import layer_peak
from plancc.rules import Finding, rule
from plancc.rules.placed import Placed, placed
from plancc.rules.timeline import Timeline, within
from plancc.text import fmt_share, fmt_size

_Members = tuple[list[int], list[ir.Stage]]


def _groups(layer: ir.Layer) -> dict[tuple[str, str], _Members]:
    """Consumer group -> the indices and the stages in it, in stage order."""
    out: dict[tuple[str, str], _Members] = {}
    for s in layer.stages:
        indices, stages = out.setdefault(s.consumer_group, ([], []))
        indices.append(s.index)
        stages.append(s)
    return out


def _group(group: tuple[str, str]) -> str:
    kind, name = group
    return f"stage '{name}'" if kind == "stage" else f"consumer group '{name}'"


def _names(items: list[str]) -> str:
    return ", ".join(items)


@rule("PC101", "shared-anchor", Severity.WARNING)
def shared_anchor(plan: ir.Plan) -> Iterator[Finding]:
    """Two warms in one layer kind share an anchor stage.

    Fires on each warm after the first (in plan order) whose `after` names a
    stage another warm of the same layer kind already anchors on; reported at
    its `after`. A warm whose tensors all have a dynamic dim counts for none.

    Why: one warm is one `pl.at(CORE_GROUP)` scope with one
    `make_context()`. Two warms issued together land on two AIVs and run
    concurrently, but split the SDMA bandwidth: in the seed, wo_a and wo_b in
    two scopes reached 122 and 52 GB/s, 153 GB/s aggregate (100.7 MB in
    660.2 µs), against 285 GB/s for a single uncontended stream, which turned a −1.08 %
    win into a +0.66 % loss. Sharding across SDMA channels scales negatively
    for the same reason.

    Fix: merge the warms into one, listing every tensor in consumer order.
    """
    first: dict[tuple[str, int], ir.Warm] = {}
    for p in placed(plan):
        if not p.entries:
            continue  # only dynamic tensors: nothing is issued (PC020)
        warm = p.warm
        other = first.setdefault((p.layer.name, p.at), warm)
        if other is not warm:
            anchor = p.anchor.name
            yield Finding(
                warm.after_pos,
                f"warm '{warm.name}' shares anchor '{anchor}' with warm '{other.name}': two "
                "scopes split the SDMA bandwidth",
                f"merge it into warm '{other.name}': one scope, tensors in consumer order",
                warm=warm,
            )


@rule("PC102", "issue-order", Severity.WARNING)
def issue_order(plan: ir.Plan) -> Iterator[Finding]:
    """The warm's issue order differs from its tensors' consumer order.

    A tensor's consumer is the first stage after the anchor that reads it.
    Fires when `tensors` lists a tensor before one whose consumer comes
    earlier; reported once per warm, at the first tensor issued too early.
    Tensors with the same consumer may come in any order; tensors with no
    consumer after the anchor (and tensors with a dynamic dim) are ignored.

    Why: SDMA moves the list in order, so the tensor needed first must land
    first. In the seed, `wo_a` then `wo_b` (proj_a reads wo_a before proj_b
    reads wo_b) gained −830 µs; the reverse order gained −595 µs: reversing
    the order cost a third of the gain.

    Fix: list the tensors in the order their consumers run.
    """
    for p in placed(plan):
        issued = [e for e in p.entries if e.tensor.name in p.consumers]
        for i, early in enumerate(issued):
            at = p.consumers[early.tensor.name].index
            later = [e for e in issued[i + 1 :] if p.consumers[e.tensor.name].index < at]
            if not later:
                continue
            needed = min(later, key=lambda e: p.consumers[e.tensor.name].index)
            order = sorted(issued, key=lambda e: p.consumers[e.tensor.name].index)
            yield Finding(
                early.pos,
                f"'{early.tensor.name}' is issued before '{needed.tensor.name}', which "
                f"'{p.consumers[needed.tensor.name].name}' reads earlier",
                f"issue in consumer order: [{_names([e.tensor.name for e in order])}]",
                warm=p.warm,
            )
            break


@rule("PC103", "partial-group", Severity.WARNING)
def partial_group(plan: ir.Plan) -> Iterator[Finding]:
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

    Fix: add the missing tensors (in consumer order); if the group reads
    weights that cannot be warmed with the rest, split the group, or accept
    the finding with an `allow` and its reason.
    """
    members: dict[str, dict[tuple[str, str], _Members]] = {}
    for p in placed(plan):
        warmed = {e.tensor.name for e in p.entries}
        by_first = sorted(p.consumers.values(), key=lambda s: s.index)
        found = []
        read: dict[str, ir.Tensor] = {}  # every static tensor the touched groups read
        # Each layer kind's groups are listed once, not rescanned per warm.
        groups = members.get(p.layer.name) or members.setdefault(p.layer.name, _groups(p.layer))
        weights = p.line.weights  # the static tensors each stage reads
        for group in dict.fromkeys(s.consumer_group for s in by_first):
            indices, of_group = groups[group]
            stages = of_group[bisect.bisect_right(indices, p.at) :]
            needed = {t.name: t for s in stages for t in weights[s.index]}
            read.update(needed)
            missing = [t for t in needed if t not in warmed]
            if missing:
                found.append((group, stages, [t for t in needed if t in warmed], missing))
        if not found:
            continue
        left_out = sum(t.bytes or 0 for name, t in read.items() if name not in warmed)
        if 100 * left_out < sum(t.bytes or 0 for t in read.values()):
            continue  # under 1 %: a scale vector beside its matrix is not worth a finding
        for group, stages, have, missing in found:
            where = _group(group)
            if group[0] == "group":
                where += f" (stages {_names([s.name for s in stages])})"
            yield Finding(
                p.warm.tensors_pos,
                f"warm '{p.warm.name}' covers {_names(have)} but not {_names(missing)} of {where}",
                _complete_hint(plan, p, [read[t] for t in missing]),
                warm=p.warm,
            )


@rule("PC105", "sdma-contention", Severity.WARNING)
def sdma_contention(plan: ir.Plan) -> Iterator[Finding]:
    """An `sdma: true` stage runs while the warm is alive.

    Fires when a stage marked `sdma: true` (an all-to-all dispatch or
    combine) lies in the warm's live interval: from the stage after its
    anchor through the last stage that reads one of its (static) tensors,
    both ends inclusive; a warm none of whose tensors is read after the
    anchor stays alive to the end of the layer kind. Reported at the warm's
    `name`, naming the SDMA stages.

    Why: a warm is an SDMA transfer; so is the MoE all-to-all. In the seed,
    warming `routed_w1` sped the expert FFN up (365.9 → 327.7 µs) but blew
    `combine` from 40.5 to 115.4 µs at ep8.

    Fix: end the warm before the SDMA stage (warm only tensors consumed
    before it), or anchor it after that stage.
    """
    for p in placed(plan):
        if not p.entries:
            continue
        start, end = p.at + 1, p.warm.live[1]
        line = p.line
        sdma = within(line.sdma, start, end)
        busy = [p.layer.stages[i].name for i in sdma]
        if busy:
            yield Finding(
                p.warm.name_pos,
                f"warm '{p.warm.name}' is alive (stages '{p.layer.stages[start].name}' to "
                f"'{p.layer.stages[end].name}') while SDMA stage(s) {_names(busy)} run",
                "end the warm before the SDMA stage, or anchor it after the SDMA stage",
                warm=p.warm,
                stages=tuple(sdma),
            )


@rule("PC106", "streamed-out", Severity.WARNING)
def streamed_out(plan: ir.Plan) -> Iterator[Finding]:
    """The bytes streamed between the anchor and the warm's last consumer, plus the warm, exceed L2.

    Sums `streams` over the stages strictly between the anchor and the warm's
    last consumer (the latest of its static tensors' consumers, each the
    first stage after the anchor that reads the tensor), adds the warm's
    bytes, and fires when that exceeds the platform's L2. Reported at the
    warm's `name`.

    Why: what streams through L2 while the warm waits for its consumer
    evicts it. In the seed, the MoE between two layers pushes 427.8 MB
    through L2 (2.2× L2), so nothing warmed before it survives to the next
    attention layer.

    Fix: anchor the warm after the streaming stage, so that it is issued
    once the stream has passed.
    """
    if plan.platform is None or plan.platform.l2_bytes is None:
        return
    l2 = plan.platform.l2_bytes
    for p in placed(plan):
        last = p.last
        if last is None:
            continue
        line = p.line
        streamed = line.streamed_before[last.index] - line.streamed_before[p.at + 1]
        if streamed + p.bytes <= l2:
            continue
        between = within(line.streams_at, p.at + 1, last.index - 1)
        stages = [p.layer.stages[i] for i in between]
        share = fmt_share(Fraction(streamed + p.bytes, l2), [Fraction(1)])
        if stages:
            what = ", ".join(f"'{s.name}'" for s in stages[:3])
            what += f" and {len(stages) - 3} more" if len(stages) > 3 else ""
            what += f" stream{'s' if len(stages) == 1 else ''} {fmt_size(streamed)}"
            message = (
                f"warm '{p.warm.name}' ({fmt_size(p.bytes)}) is evicted before '{last.name}' "
                f"reads it: {what}, {share}× L2 in all"
            )
        else:
            message = (
                f"warm '{p.warm.name}' ({fmt_size(p.bytes)}, {share}× L2) is larger than L2: it "
                f"is evicted before '{last.name}' reads it"
            )
        yield Finding(
            p.warm.name_pos,
            message,
            "anchor the warm after the streaming stage" if stages else "warm less",
            warm=p.warm,
            stages=tuple(s.index for s in stages),
        )


def _percent(share: Fraction) -> str:
    """Rounded down, so that a share just under a quarter never prints as 25.0 %."""
    return f"{math.floor(share * 1000) / 10:.1f} %"


@rule("PC107", "cannot-land", Severity.WARNING)
def cannot_land(plan: ir.Plan) -> Iterator[Finding]:
    """The warm cannot land before its first consumer reads the weights.

    When every stage strictly between the anchor and the first consumer has
    `duration_us`, the window is their sum (the anchor's own duration does
    not count); the rule fires when window × the platform's single-stream
    SDMA rate (285 GB/s on a2a3) is less than a quarter of the warm's bytes,
    and the message gives the estimated fraction landed. When any of those
    stages lacks `duration_us`, it fires only when the first consumer is the
    stage right after the anchor. Reported at `after`.

    Why: a warm only helps the bytes it lands before their consumer reads
    them; the rest competes with the layer's own HBM streams. The seed's
    q/kv projection and CSA indexer weights (wq_a, wkv, wq_b, idx_wq_b) are
    consumed within microseconds of `rms_norm`: warming them as a second warm
    at layer entry or at rms_norm gave back 625–673 µs of the o-projection
    warm's 830 µs gain.

    Fix: the hint names an earlier anchor with a `task` from which the warm
    lands, when there is one after every read of its tensors and every
    streaming or SDMA stage before the anchor; else warm only weights
    consumed late in the layer (the o-projection pair after q). Add
    `duration_us` to the stages in between for an estimate.
    """
    rate = plan.platform.sdma_bytes_per_s if plan.platform is not None else None
    for p in placed(plan):
        first = p.first
        if first is None or p.bytes == 0:
            continue
        line = p.line
        landing = line.landing(p.at, first.index, p.bytes)
        if not landing.fires:
            continue
        if landing.window_us is not None and landing.landed is not None and rate is not None:
            share = min(Fraction(1), landing.landed / p.bytes)
            detail = (
                f"in the {float(landing.window_us):g} µs before '{first.name}', {rate / 1e9:g} "
                f"GB/s lands an estimated {_percent(share)} of its {fmt_size(p.bytes)}"
            )
        else:
            detail = f"its consumer '{first.name}' runs right after anchor '{p.anchor.name}'"
        yield Finding(
            p.warm.after_pos,
            f"warm '{p.warm.name}' cannot land: {detail}",
            _earlier_anchor_hint(p, line, first.index),
            warm=p.warm,
            stages=tuple(range(p.at + 1, first.index)),  # the window
        )


def _earlier_anchor_hint(p: Placed, line: Timeline, first: int) -> str:
    """The latest earlier anchor with a task from which the warm lands, and which no
    other rule would send back later: after every read of its tensors (PC040) and
    every stage that streams or uses SDMA up to the anchor (PC105, PC106), and with
    no later candidate to move to (PC104)."""
    after = max([line.last_busy[p.at], *(line.read_upto(e.tensor.name, p.at) for e in p.entries)])
    bound = min(p.at - 1, line.latest_landing(first, p.bytes))
    x = line.last_task[bound] if bound >= 0 else -1
    if x > after:
        stage = p.layer.stages[x]
        return f"anchor at '{stage.name}' (task {stage.task}), or warm only weights read later"
    return "warm only weights consumed later in the layer"


def _complete_hint(plan: ir.Plan, p: Placed, missing: list[ir.Tensor]) -> str:
    """Add the missing tensors, unless that would exceed the L2 budget (PC032 would
    then tell the plan to warm less: a circle)."""
    names = _names([t.name for t in missing])
    l2 = plan.platform.l2_bytes if plan.platform is not None else None
    if l2 is None:
        return f"add {names} to the warm, in consumer order"
    line = p.line
    extra = tuple(ir.WarmEntry(t, t.flat, partial(p.warm.locate, "tensors")) for t in missing)
    reads = [line.consumer(t.name, p.at) for t in missing]
    end = max([p.warm.live[1], *(r for r in reads if r is not None)])
    grown = replace(p.warm, entries=(*p.warm.entries, *extra), live=(p.warm.live[0], end))
    layer = replace(p.layer, warms=tuple(grown if w is p.warm else w for w in p.layer.warms))
    if Fraction(layer_peak(layer).bytes, l2) > plan.l2_fraction:
        return f"adding {names} would exceed the L2 budget: split the group, or allow PC103"
    return f"add {names} to the warm, in consumer order"

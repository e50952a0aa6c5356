"""Placement rules PC101-PC107: where, when and what a warm may warm.

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
- The *first* and *last consumer* are the earliest and latest of those to start.
- The *consumer groups* a warm touches are the groups of its consumers.
- A warm is *alive* from its anchor's finish through its last consumer.
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
from plancc.liveness import layer_peak, step_stage
from plancc.rules import Finding, rule
from plancc.rules.placed import Placed, placed
from plancc.rules.timeline import Timeline
from plancc.text import fmt_share, fmt_size


def _groups(line: Timeline) -> dict[tuple[str, str], list[ir.Stage]]:
    """Consumer group -> the stages in it, in step order."""
    out: dict[tuple[str, str], list[ir.Stage]] = {}
    for i in line.order:
        s = line.stages[i]
        out.setdefault(s.consumer_group, []).append(s)
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

    Fix: list the tensors in the order their consumers run.
    """
    for p in placed(plan):
        issued = [e for e in p.entries if e.tensor.name in p.consumers]
        start = {e.tensor.name: p.line.start[p.consumers[e.tensor.name].index] for e in issued}
        for i, early in enumerate(issued):
            at = start[early.tensor.name]
            later = [e for e in issued[i + 1 :] if start[e.tensor.name] < at]
            if not later:
                continue
            needed = min(later, key=lambda e: start[e.tensor.name])
            order = sorted(issued, key=lambda e: start[e.tensor.name])
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
    members: dict[str, dict[tuple[str, str], list[ir.Stage]]] = {}
    for p in placed(plan):
        line = p.line
        warmed = {e.tensor.name for e in p.entries}
        by_first = sorted(p.consumers.values(), key=lambda s: line.rank[s.index])
        found = []
        read: dict[str, ir.Tensor] = {}  # every static tensor the touched groups read
        # Each layer kind's groups are listed once, not rescanned per warm.
        groups = members.get(p.layer.name) or members.setdefault(p.layer.name, _groups(line))
        for group in dict.fromkeys(s.consumer_group for s in by_first):
            stages = [s for s in groups[group] if line.runs_before(p.at, s.index)]
            needed = {t.name: t for s in stages for t in line.weights[s.index]}
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
    combine) starts in the warm's live interval: from its anchor's finish
    through the start of the last stage running after the anchor that reads
    one of its (static) tensors, both ends inclusive; a warm none of whose
    tensors is read after the anchor stays alive to the end of the layer
    kind. Reported at the warm's `name`, naming the SDMA stages.

    Why: a warm is an SDMA transfer; so is the MoE all-to-all. In the seed,
    warming `routed_w1` sped the expert FFN up (365.9 → 327.7 µs) but blew
    `combine` from 40.5 to 115.4 µs at ep8.

    Fix: end the warm before the SDMA stage (warm only tensors consumed
    before it), or anchor it after that stage.
    """
    for p in placed(plan):
        if not p.entries:
            continue
        line = p.line
        first, last = p.warm.live
        sdma = [i for i in line.sdma if first <= line.start[i] <= last]
        if sdma:
            stages = p.layer.stages
            since, until = stages[step_stage(p.layer, first)], stages[_last_read(p)]
            yield Finding(
                p.warm.name_pos,
                f"warm '{p.warm.name}' is alive (stages '{since.name}' to '{until.name}') "
                "while SDMA stage(s) "
                f"{_names([stages[i].name for i in sdma])} run",
                "end the warm before the SDMA stage, or anchor it after the SDMA stage",
                warm=p.warm,
                stages=tuple(sdma),
            )


def _last_read(p: Placed) -> int:
    """The stage that ends the warm's live interval: the last to start of those running
    after the anchor that read its tensors, else the layer kind's last."""
    line = p.line
    read = [
        r
        for e in p.entries
        for r in line.readers.get(e.tensor.name, ())
        if line.runs_before(p.at, r)
    ]
    return max(read, key=lambda r: line.rank[r], default=line.order[-1])


@rule("PC106", "streamed-out", Severity.WARNING)
def streamed_out(plan: ir.Plan) -> Iterator[Finding]:
    """What the layer pushes through L2 before the warm's last consumer, plus the warm, exceeds L2.

    The stages between the anchor and the warm's last consumer (the latest to
    start of its static tensors' consumers; "between" as "The schedule"
    defines it: every stage whose step lies from the anchor's finish up to
    that consumer's start) push bytes through L2: their `streams`, and the
    static tensors (weights) they read that the warm does not hold, each
    stage's own. Fires when those bytes plus the warm's exceed the platform's
    L2. Not reported for a warm larger than L2 by itself: PC030 reports that.
    Reported at the warm's `name`, naming up to three of those stages.

    Why: what streams through L2 while the warm waits for its consumer
    evicts it. In the seed, the MoE between two layers pushes 427.8 MB
    through L2 (2.2× L2), so nothing warmed before it survives to the next
    attention layer. A layer's own weights do the same: a Qwen3-14B A8W8
    layer that warms `w_down` (89.1 MB) once `out_proj` is done reads
    `w_gate` and `w_up` (178.3 MB) before `down_proj` reads it.

    Fix: anchor the warm after the streaming stage, so that it is issued
    once the stream has passed; or warm less.
    """
    if plan.platform is None or plan.platform.l2_bytes is None:
        return
    l2 = plan.platform.l2_bytes
    for p in placed(plan):
        last = p.last
        if last is None or p.bytes > l2:
            continue  # a warm larger than L2 alone: PC030's finding
        line = p.line
        lo, hi = line.window(p.at, last.index)
        pushed = 0
        if hi > lo:
            pushed = line.streamed_before[hi] - line.streamed_before[lo]
            pushed += line.weighed_before[hi] - line.weighed_before[lo]
            for e in p.entries:  # the warm's own tensors are in L2 already: not pushed
                steps = [line.start[r] for r in line.readers.get(e.tensor.name, ())]
                reads = bisect.bisect_left(steps, hi) - bisect.bisect_left(steps, lo)
                pushed -= reads * (e.tensor.bytes or 0)
        if pushed + p.bytes <= l2:
            continue
        held = {e.tensor.name for e in p.entries}
        stages = [
            p.layer.stages[i]
            for i in line.span(lo, hi)
            if p.layer.stages[i].streams or any(t.name not in held for t in line.weights[i])
        ]
        share = fmt_share(Fraction(pushed + p.bytes, l2), [Fraction(1)])
        what = ", ".join(f"'{s.name}'" for s in stages[:3])
        what += f" and {len(stages) - 3} more" if len(stages) > 3 else ""
        what += f" stream{'s' if len(stages) == 1 else ''} {fmt_size(pushed)}"
        yield Finding(
            p.warm.name_pos,
            f"warm '{p.warm.name}' ({fmt_size(p.bytes)}) is evicted before '{last.name}': "
            f"{what}, {share}× L2 in all",
            "anchor the warm after the streaming stage",
            warm=p.warm,
            stages=tuple(s.index for s in stages),
        )


def _percent(share: Fraction) -> str:
    """Rounded down, so that a share just under a quarter never prints as 25.0 %."""
    return f"{math.floor(share * 1000) / 10:.1f} %"


@rule("PC107", "cannot-land", Severity.WARNING)
def cannot_land(plan: ir.Plan) -> Iterator[Finding]:
    """The warm cannot land before its first consumer reads the weights.

    The window is the steps from the anchor's finish to the first consumer's
    start ("The schedule"). When every stage between them has `duration_us`,
    each step lasts as long as its longest stage and the window is their sum
    (the anchor's own duration does not count); the rule fires when window ×
    the platform's single-stream SDMA rate (285 GB/s on a2a3) is less than a
    quarter of the warm's bytes, and the message gives the estimated fraction
    landed. When any of those stages lacks `duration_us`, it fires only when
    no stage lies between the anchor and the first consumer. Reported at
    `after`.

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
            _earlier_anchor_hint(p, line),
            warm=p.warm,
            stages=tuple(line.between(p.at, first.index)),  # the window
        )


def _earlier_anchor_hint(p: Placed, line: Timeline) -> str:
    """The latest earlier anchor with a task from which the warm lands, and which no
    other rule would send back later: every reader of its tensors runs after it
    (PC040) and it lands before the first of them (PC107), no stage that streams or
    uses SDMA starts from it up to the anchor (PC105, PC106), and it is the last to
    start of those that land (PC104)."""
    start, at = line.start, line.start[p.at]
    read = [r for e in p.entries for r in line.readers.get(e.tensor.name, ())]
    first = min(read, key=lambda r: line.rank[r])  # the first consumer from an earlier anchor
    bound = min(at - 1, line.latest_landing(first, p.bytes))
    for x in reversed(line.span(0, bound + 1)):
        if line.busy_before[at + 1] != line.busy_before[start[x]]:
            break  # a busy stage from x's step to the anchor's, and so from every earlier x
        stage = line.stages[x]
        if stage.task is not None and all(line.runs_before(x, r) for r in read):
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
    end = max([p.warm.live[1], *(line.start[r] for r in reads if r is not None)])
    grown = replace(p.warm, entries=(*p.warm.entries, *extra), live=(p.warm.live[0], end))
    layer = replace(p.layer, warms=tuple(grown if w is p.warm else w for w in p.layer.warms))
    if Fraction(layer_peak(layer).bytes, l2) > plan.l2_fraction:
        return f"adding {names} would exceed the L2 budget: split the group, or allow PC103"
    return f"add {names} to the warm, in consumer order"

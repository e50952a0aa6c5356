"""PC104: a later anchor exists, from which the warm still lands before its consumer."""

from __future__ import annotations

import bisect
from collections.abc import Iterator

from plancc import ir
from plancc.codes import Severity
from plancc.facts import Facts
from plancc.facts.placed import Placed, anchor_fix
from plancc.facts.timeline import Group
from plancc.rules import Finding, rule
from plancc.tables.thresholds import negligible
from plancc.text import fmt_size


@rule("PC104", "later-anchor", Severity.WARNING, loss=True, amount="streamed_bytes")
def later_anchor(plan: ir.Plan, facts: Facts) -> Iterator[Finding]:
    """A later anchor exists: the warm is issued while the layer still streams its own weights.

    A candidate is a stage between the anchor and the warm's first consumer
    (a stage whose step lies from the anchor's finish up to that consumer's
    start; see "The schedule"), outside the consumer groups the warm touches,
    that reads static tensors (weights), has a `task`, and runs before every
    consumer of the warm (anchored there, the warm gets no PC040). It is
    excluded when the warm could not land from it: no stage lies between it and
    the first consumer, or every stage between them has `duration_us` and
    PC107's arithmetic, anchored there, would fire. PC104 fires when a candidate
    is left and the weights streamed in between are not negligible (1 % of the
    warm's bytes or more: a 16 KB scale vector does not compete with 100 MB);
    reported at `after`, naming the weights streamed in between, and the
    hint names the last candidate to start. Anchored there, the warm is clear of
    PC104 and of PC107. A stage beside the anchor that starts at its step and,
    both with `duration_us`, runs longer is still running when the anchor
    finishes: its weights count among those streamed, and it is a candidate
    too (with a task, before every consumer, not one of a join's anchors). In a
    timed layer kind (every stage with a duration: see PC107) the weights named
    are those of the stages running in time between the anchor's finish and
    the first consumer's start, also such a stage beside the anchor.

    Why: a warm issued while the layer still streams its own weights competes
    with those streams for HBM bandwidth and L2. In the seed (DeepSeek V4
    Flash, ep2, fast-rank p50, warmup 20), the same wo_a + wo_b warm gained
    −830 µs anchored on the task that writes q, after wq_b, the last large
    projection stream; it cost +770 µs anchored at `rms_norm`, and gained only
    −63 µs at layer entry and −13 µs at the KV projection output. Anchored
    just before the attention kernel it cost +1186 µs: too late to land, which
    is PC107's finding, not this one.

    A cross-layer warm is judged on the layer kind that issues it joined to
    the next one: the weights streamed count on both sides of the boundary,
    but a candidate is a stage of its own layer kind (an anchor in the next
    one would make it that layer's warm).

    Fix: anchor the warm at the hinted stage. It is a candidate to measure,
    not a verdict: its fix is unsafe, as every anchor move. When another warm
    of the layer kind anchors there, the two would split the SDMA bandwidth
    (PC101): the hint says to merge the warm into that one, and there is no fix.
    """
    every = facts.placed  # each warm's consumers, shared with PC101-PC107
    alone: dict[tuple[str, int], list[ir.Warm]] = {}  # (kind, stage) -> warms anchored there
    for q in every:
        if q.entries and not q.warm.join:  # as PC101 counts them
            alone.setdefault((q.kind, q.at), []).append(q.warm)  # a crossing's: its own kind
    for p in every:
        if p.first is None:
            continue
        layer, warm, first = p.layer, p.warm, p.first.index
        later = _last_candidate(p, p.groups)
        if later is None or p.streamed is None:
            continue
        total, count, shown = p.streamed
        if negligible(total, p.bytes):
            continue  # a scale vector streaming beside 100 MB does not compete with it
        names = ", ".join(f"'{layer.stages[i].name}'" for i in shown)
        if count > len(shown):
            names += f" and {count - len(shown)} more"
        stage = layer.stages[later]
        there = next((w for w in alone.get((p.kind, later), []) if w.name != warm.name), None)
        at = f"'{stage.name}' (task {stage.task}): the last weight stream after which"
        if there is None:
            hint, fix = f"anchor at {at} the warm still lands", anchor_fix(p, stage)
        else:  # anchored there too, the two would split the bandwidth: PC101
            hint, fix = f"merge it into warm '{there.name}', anchored at {at} it still lands", None
        yield Finding(
            warm.after_pos,
            f"{_anchor(p)} is early: {names} stream{'s' if count == 1 else ''} "
            f"{fmt_size(total)} of weights before '{layer.stages[first].name}'{p.on}",
            hint,
            warm=warm,
            stages=tuple(shown),  # the stages the message names
            fix=fix,
            data={
                "streamed_bytes": total,
                "streaming_stages": count,
                "first_consumer": layer.stages[first].name,
                "later_anchor": stage.name,
            },
        )


def _last_candidate(p: Placed, groups: set[Group]) -> int | None:
    """The candidate anchor that starts last, or None: between the anchor and the first
    consumer, outside ``groups``, and from which the warm still lands."""
    line = p.line
    assert p.first is not None
    lo, hi = line.window(p.at, p.first.index)
    latest = line.latest_landing(p.first.index, p.warm.bytes)
    steps = line.candidate_steps
    k = bisect.bisect_right(steps, min(hi - 1, latest))
    consumers = [s.index for s in p.consumers.values()]

    def fits(i: int) -> bool:  # a cross-layer warm's anchor stays in its own layer kind
        return (
            i < p.anchorable
            and line.stages[i].consumer_group not in groups
            and all(line.runs_before(i, c) for c in consumers)
        )

    for j in range(k - 1, bisect.bisect_left(steps, lo) - 1, -1):  # the last to start first
        i = line.candidates[j]
        if fits(i):
            return i
    if line.start[p.at] > latest:
        return None
    # Beside the anchor at its step, still streaming when it finishes: the longest first.
    beside = [
        i for i in line.outlasting(p.at) if i not in p.anchors and line.stages[i].task and fits(i)
    ]
    return max(beside, key=lambda i: (line.stages[i].duration_us or 0, line.rank[i]), default=None)


def _anchor(p: Placed) -> str:
    """``anchor 'q_proj'``, or a join's ``join [q_proj, k_proj]``."""
    if not p.warm.join:
        return f"anchor '{p.anchor.name}'"
    return f"join [{', '.join(p.layer.stages[a].name for a in p.anchors)}]"

"""Rules PC105-PC107: what happens while a warm is alive, and whether it lands in time.

Collectives and SDMA stages that run while it waits (PC105), streams that evict it
before its last consumer (PC106), and a window too short to land it before its first
(PC107). The shared vocabulary is placement's (``plancc.rules.placement``).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from fractions import Fraction

from plancc import ir
from plancc.codes import Severity
from plancc.facts import Facts
from plancc.facts.liveness import step_stage
from plancc.facts.placed import Placed, anchor_fix, pushed_bytes
from plancc.facts.timeline import Timeline
from plancc.rules import Finding, rule
from plancc.tables.engines import ENGINES
from plancc.text import fmt_percent, fmt_share, fmt_size


def _names(items: list[str]) -> str:
    return ", ".join(items)


@rule("PC105", "collective-contention", Severity.WARNING, loss=True)
def collective_contention(plan: ir.Plan, facts: Facts) -> Iterator[Finding]:
    """A collective or an `sdma: true` stage runs while the warm is alive.

    Fires when a stage with `collective` (an inter-rank collective: a TP
    all-to-all, a reduce-scatter, the MoE dispatch or combine) or marked
    `sdma: true` starts in the warm's live interval: from its anchor's finish
    through the start of the last stage running after the anchor that reads
    one of its (static) tensors, both ends inclusive; a warm none of whose
    tensors is read after the anchor stays alive to the end of the layer
    kind. Reported at the warm's `name`, naming each such stage, a
    collective with the engine its `collective` says moves its data
    (`vector-core MTE` for `mte`, `SDMA` for `sdma`).

    Why: in the seed, warming `routed_w1` sped the expert FFN up (365.9 →
    327.7 µs) but blew `combine` from 40.5 to 115.4 µs at ep8. The seed
    explains it as two SDMA transfers contending ("its SDMA contends with
    the all-to-all, which is also SDMA"); that is the seed's explanation,
    not what the code does: pypto-lib's `combine` is put-based
    (`pld.tensor.put` and `pld.system.notify`), and PyPTO runs those on the
    vector core's MTE pipes, through a staging tile, never by SDMA; only
    the prefetch context gets the SDMA workspace (docs/sources.md,
    "Collectives", with the evidence in PyPTO's sources). So the measured
    slowdown was of an MTE collective, and the rule does not depend on the
    engine: the warm and the collective share HBM, L2 and the links
    whatever moves the collective's data.

    A cross-layer warm is alive across the layer boundary: from its anchor
    through its last consumer in the next layer, and the collectives and
    SDMA stages of both sides count (the MoE's all-to-all after the anchor,
    say).

    Fix: end the warm before the collective (warm only tensors consumed
    before it), or anchor it after that stage.
    """
    for p in facts.placed:
        if not p.entries:
            continue
        line = p.line
        first, last = p.warm.live
        alive = [i for i in line.contending if first <= line.start[i] <= last]
        if alive:
            stages = p.layer.stages
            since, until = stages[step_stage(p.layer, first)], stages[_last_read(p)]
            met = [stages[i] for i in alive]
            yield Finding(
                p.warm.name_pos,
                f"warm '{p.warm.name}' is alive (stages '{since.name}' to '{until.name}') "
                f"while {contending_words(met)}{p.on}",
                _contending_hint(met),
                warm=p.warm,
                stages=tuple(alive),
                data={
                    "stages": [s.name for s in met],
                    "collectives": {s.name: s.collective for s in met if s.collective},
                },
            )


def collective_words(stage: ir.Stage) -> str:
    """A collective as the messages name it: "collective 'o_group_a2a' (vector-core MTE)"."""
    assert stage.collective is not None  # the schema keeps only the table's engines
    return f"collective '{stage.name}' ({ENGINES[stage.collective].label})"


def contending_words(met: list[ir.Stage]) -> str:
    """The stages a warm is alive across and the verb: the `sdma: true` stages that are
    no collective together, as they always were ("SDMA stage(s) moe_dispatch,
    moe_combine run"), then each collective with its engine."""
    sdma = [s.name for s in met if not s.collective]
    parts = [f"SDMA stage(s) {_names(sdma)}"] if sdma else []
    parts += [collective_words(s) for s in met if s.collective]
    one = len(met) == 1 and not sdma
    return f"{' and '.join(parts)} {'runs' if one else 'run'}"


def _contending_hint(met: list[ir.Stage]) -> str:
    if len(met) > 1:
        return "end the warm before the first of these stages, or anchor it after the last"
    noun = "collective" if met[0].collective else "SDMA stage"
    return f"end the warm before the {noun}, or anchor it after the {noun}"


def _last_read(p: Placed) -> int:
    """The stage that ends the warm's live interval: the last to start of those running
    after the anchor that read its tensors, else the layer kind's last."""
    line = p.line
    read = [r for e in p.entries for r in line.readers.get(e.tensor.name, ()) if p.after(r)]
    return max(read, key=lambda r: line.rank[r], default=line.order[-1])


@rule("PC106", "streamed-out", Severity.WARNING, loss=True, amount="evicted_bytes")
def streamed_out(plan: ir.Plan, facts: Facts) -> Iterator[Finding]:
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

    A cross-layer warm counts what streams on both sides of the layer
    boundary, up to its last consumer in the next layer; a prefix holds (and
    does not push) only its rows.

    Fix: anchor the warm after the streaming stage, so that it is issued
    once the stream has passed; or warm less. Its fix (unsafe) anchors it at
    the latest later stage with a `task` from which it lands and is no longer
    evicted, that every reader of its tensors runs after and no other warm
    anchors on, when there is one.
    """
    if plan.platform is None or plan.platform.l2_bytes is None:
        return
    l2 = plan.platform.l2_bytes
    taken: dict[str, set[int | None]] = {}  # layer kind -> the stages its warms anchor on
    for p in facts.placed:
        last = p.last
        if last is None or p.bytes > l2:
            continue  # a warm larger than L2 alone: PC030's finding
        line, pushed = p.line, p.pushed
        if pushed + p.bytes <= l2:
            continue
        count, shown = p.pushing
        share = fmt_share(Fraction(pushed + p.bytes, l2), [Fraction(1)])
        what = ", ".join(f"'{line.stages[i].name}'" for i in shown)
        what += f" and {count - 3} more" if count > 3 else ""
        what += f" stream{'s' if count == 1 else ''} {fmt_size(pushed)}"
        if p.layer.name not in taken:  # each layer kind's anchors, listed once
            taken[p.layer.name] = _anchors(p.layer)
        later = _landing_anchor(p, l2, taken[p.layer.name])
        yield Finding(
            p.warm.name_pos,
            f"warm '{p.warm.name}' ({fmt_size(p.bytes)}) is evicted before '{last.name}': "
            f"{what}, {share}× L2 in all{p.on}",
            "anchor the warm after the streaming stage",
            warm=p.warm,
            stages=shown,  # the stages the message names
            fix=None if later is None else anchor_fix(p, line.stages[later]),
            data={
                "pushed_bytes": pushed,
                "evicted_bytes": pushed + p.bytes - l2,
                "warm_bytes": p.bytes,
                "l2_bytes": l2,
                "last_consumer": last.name,
            },
        )


def _landing_anchor(p: Placed, l2: int, taken: set[int | None]) -> int | None:
    """The latest stage after the anchor from which the warm is no longer evicted and still
    lands (PC106, PC107): it has a `task`, every reader of the warm's tensors runs after it
    (PC040), no other warm of the layer kind anchors there (PC101); None when there is none."""
    line, first = p.line, p.first
    assert first is not None
    bound = min(line.start[first.index] - 1, line.latest_landing(first.index, p.bytes))
    read = [r for e in p.entries for r in line.readers.get(e.tensor.name, ())]
    lo = bisect.bisect_left(line.tasked_steps, line.start[p.at] + 1)
    hi = bisect.bisect_left(line.tasked_steps, bound + 1)
    for x in reversed(line.tasked[lo:hi]):
        if x in taken or x >= p.anchorable:  # a cross-layer warm's anchor stays in its kind
            continue
        if not all(line.runs_before(x, r) for r in read):
            continue
        last = p.last.index if p.last is not None else x
        return x if pushed_bytes(p, x, last) + p.bytes <= l2 else None  # earlier ones push more
    return None


@rule("PC107", "cannot-land", Severity.WARNING, loss=True)
def cannot_land(plan: ir.Plan, facts: Facts) -> Iterator[Finding]:
    """The warm cannot land before its first consumer reads the weights.

    The window is the steps from the anchor's finish to the first consumer's
    start ("The schedule"); the first consumer is that of the bytes the warm
    is for: a tensor under 1 % of the warm's bytes rides along, and its reader
    (a 256 B vector's, right after the anchor) does not end the window. When
    every stage between them has `duration_us`, each step lasts as long as
    its longest stage and the window is their sum (the anchor's own duration
    does not count); the rule fires when window ×
    the platform's single-stream SDMA rate (285 GB/s on a2a3) is less than a
    quarter of the warm's bytes, and the message gives the estimated fraction
    landed. When any of those stages lacks `duration_us`, it fires only when
    no stage lies between the anchor and the first consumer. When every
    stage of the layer kind has a duration (`duration_us`, or `--trace`), the
    schedule is timed: a stage starts when its slowest dep finishes, and the
    window is the first consumer's start minus the anchor's finish. Reported
    at `after`. A cross-layer warm's window runs across the layer boundary
    to its first consumer in the next layer; a prefix's bytes are its rows'.

    Why: a warm only helps the bytes it lands before their consumer reads
    them; the rest competes with the layer's own HBM streams. The seed's
    q/kv projection and CSA indexer weights (wq_a, wkv, wq_b, idx_wq_b) are
    consumed within microseconds of `rms_norm`: warming them as a second warm
    at layer entry or at rms_norm gave back 625–673 µs of the o-projection
    warm's 830 µs gain.

    Fix: the hint names an earlier anchor with a `task` from which the warm
    lands, when there is one after every read of its tensors and every
    streaming, SDMA or collective stage before the anchor; else warm only weights
    consumed late in the layer (the o-projection pair after q). Add
    `duration_us` to the stages in between for an estimate. Its fix (unsafe)
    anchors the warm at the hinted stage, when no other warm anchors there
    and it is not evicted from there (PC106).
    """
    rate = plan.platform.sdma_bytes_per_s if plan.platform is not None else None
    l2 = plan.platform.l2_bytes if plan.platform is not None else None
    taken: dict[str, set[int | None]] = {}  # layer kind -> the stages its warms anchor on
    for p in facts.placed:
        first = p.first
        if first is None or p.bytes == 0:
            continue
        line = p.line
        landing = p.landing
        if landing is None or not landing.fires:
            continue
        if landing.window_us is not None and landing.landed is not None and rate is not None:
            share = min(Fraction(1), landing.landed / p.bytes)
            detail = (
                f"in the {float(landing.window_us):g} µs before '{first.name}', {rate / 1e9:g} "
                f"GB/s lands an estimated {fmt_percent(share)} of its {fmt_size(p.bytes)}"
            )
        else:
            detail = f"its consumer '{first.name}' runs right after anchor '{p.anchor.name}'"
        earlier = _earlier_anchor(p, line)
        if earlier is None:
            hint, fix = "warm only weights consumed later in the layer", None
        else:
            stage = line.stages[earlier]
            hint = f"anchor at '{stage.name}' (task {stage.task}), or warm only weights read later"
            if p.layer.name not in taken:  # each layer kind's anchors, listed once
                taken[p.layer.name] = _anchors(p.layer)
            settles = _settles(p, earlier, taken[p.layer.name], l2)
            fix = anchor_fix(p, stage) if settles else None
        yield Finding(
            p.warm.after_pos,
            f"warm '{p.warm.name}' cannot land: {detail}{p.on}",
            hint,
            warm=p.warm,
            stages=tuple(line.between(p.at, first.index)),  # the window
            fix=fix,
            data={
                "first_consumer": first.name,
                "window_us": landing.window_us,
                "landed_bytes": landing.landed,
                "share": None
                if landing.landed is None
                else min(Fraction(1), landing.landed / p.bytes),
                "warm_bytes": p.bytes,
            },
        )


def _anchors(layer: ir.Layer) -> set[int | None]:
    return {w.anchor for w in layer.warms}


def _earlier_anchor(p: Placed, line: Timeline) -> int | None:
    """The latest earlier anchor with a task from which the warm lands, and which no
    other rule would send back later: every reader of its tensors runs after it
    (PC040) and it lands before the first of them (PC107), no stage that streams, uses
    SDMA or is a collective starts from it up to the anchor (PC105, PC106), and it is
    the last to start of those that land (PC104). The fix takes it only when no other
    warm anchors there (PC101) and what streams from it to the last consumer leaves the
    warm in L2 (PC106); else the hint alone names it."""
    start, at = line.start, line.start[p.at]
    read = [r for e in p.entries for r in line.readers.get(e.tensor.name, ())]
    first = min(read, key=lambda r: line.rank[r])  # the first consumer from an earlier anchor
    bound = min(at - 1, line.latest_landing(first, p.bytes))
    for x in reversed(line.span(0, bound + 1)):
        if line.busy_before[at + 1] != line.busy_before[start[x]]:
            break  # a busy stage from x's step to the anchor's, and so from every earlier x
        if line.stages[x].task is not None and all(line.runs_before(x, r) for r in read):
            return x
    return None


def _settles(p: Placed, x: int, taken: set[int | None], l2: int | None) -> bool:
    """Whether anchoring the warm at ``x`` (before its anchor, every reader of its
    tensors after it) raises neither PC101 nor PC106."""
    if x in taken:
        return False
    if l2 is None:
        return True
    line = p.line
    consumers = [
        min(line.readers[e.tensor.name], key=lambda r: line.rank[r])
        for e in p.entries
        if e.tensor.name in line.readers
    ]
    last = max(consumers, key=lambda r: line.rank[r])
    return pushed_bytes(p, x, last) + p.bytes <= l2

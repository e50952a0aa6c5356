"""The L2 budget and the platform: PC030, PC031, PC032."""

from __future__ import annotations

from collections.abc import Iterator
from fractions import Fraction

from plancc import ir
from plancc.codes import Severity
from plancc.facts import Facts
from plancc.facts.crossing import KindPeak
from plancc.rules import Finding, rule
from plancc.tables.platforms import PLATFORMS
from plancc.text import fmt_bytes, fmt_fraction, plural


def _complete(plan: ir.Plan) -> Iterator[ir.Layer]:
    # A layer kind with a stand-in stage, or with an error in a stage's `deps` or `reads`
    # or in a warm, has unreliable liveness: not judged while the error stands.
    return (layer for layer in plan.layers.values() if layer.budgeted)


def _at_peak(
    plan: ir.Plan, layer: ir.Layer, found: KindPeak, what: str, *, limit: Fraction, hint: str
) -> Finding:
    # At the warm that starts latest among those alive at the peak; an `allow` on any
    # of those warms silences it (PC032), so the message names them all. Cross-layer warms
    # of the kind before (``found.before``) are alive from the entry: listed first.
    peak = found.peak
    order = {w.name: i for i, w in enumerate(peak.warms)}
    latest = max(peak.warms, key=lambda w: (w.live[0], order[w.name]))
    names = " + ".join(w.name for w in peak.warms)
    l2 = plan.platform.l2_bytes if plan.platform else None
    stage = layer.stages[peak.stage or 0].name
    after = "" if found.before is None else f" after layer kind '{found.before}'"
    return Finding(
        latest.name_pos,
        f"{what} during '{stage}'{after}: {names} = {fmt_bytes(peak.bytes, l2, limit)}",
        hint,
        warm=latest,
        also=tuple(w for w in peak.warms if w is not latest),
        stages=() if peak.stage is None else (peak.stage,),
    )


@rule("PC030", "l2-overflow", Severity.ERROR)
def l2_overflow(plan: ir.Plan, facts: Facts) -> Iterator[Finding]:
    """The warms alive at the same time hold more bytes than L2.

    One diagnostic per layer kind, at the warm that starts latest among those
    alive at the peak; the message names every warm alive then, with their
    sum. A cross-layer warm holds L2 in both layers it spans: in its own from
    its anchor to the end, in the next from the entry to its last consumer
    there, beside that layer's own warms (the message then says after which
    layer kind); a prefix holds its rows.

    Why: the warm set evicts itself. In the seed measurement, adding MoE w1+w3
    (268.4 MB, 1.33× L2) turned a −1.63 % win into a +3.03 % loss, the warm's
    own task time scaling with bytes while its consumer gained nothing.

    Fix: warm fewer tensors, or end one warm (its last consumer) before the
    next one starts.
    """
    if plan.platform is None or plan.platform.l2_bytes is None:
        return
    for layer in _complete(plan):
        found = facts.kind_peaks[layer.name]
        if found.peak.bytes > plan.platform.l2_bytes:
            yield _at_peak(
                plan,
                layer,
                found,
                "warms alive at once exceed L2",
                limit=Fraction(1),
                hint="warm fewer tensors, or end one warm before the next starts",
            )


@rule("PC032", "l2-budget", Severity.WARNING, loss=True)
def l2_budget(plan: ir.Plan, facts: Facts) -> Iterator[Finding]:
    """The warms alive at the same time exceed `budget.l2_fraction` of L2 (default 0.75).

    The seed's rule is that everything in flight fits L2 "with room to
    spare": the layer's own weight and activation streams share L2 with the
    warm. 0.67× L2 (o-projection + MoE gate) still won −1.63 %; 1.33× lost
    3.03 %.

    An `allow` of PC032 on any warm alive at the peak silences it; the message
    names those warms. Counted as PC030 counts: a cross-layer warm in both
    layers it spans.

    Fix: warm less, or raise `budget.l2_fraction` after measuring.
    """
    if plan.platform is None or plan.platform.l2_bytes is None:
        return
    l2 = plan.platform.l2_bytes
    for layer in _complete(plan):
        found = facts.kind_peaks[layer.name]
        peak = found.peak
        if Fraction(peak.bytes, l2) > plan.l2_fraction and peak.bytes <= l2:
            yield _at_peak(
                plan,
                layer,
                found,
                f"warms alive at once exceed the {fmt_fraction(float(plan.l2_fraction))} L2 budget",
                limit=plan.l2_fraction,
                hint="warm less, or allow PC032 (with a reason) on any one of these warms",
            )


_SDMA = {
    "sdma": ", ".join(p.name for p in PLATFORMS.values() if p.sdma),
    "no_sdma": ", ".join(p.name for p in PLATFORMS.values() if not p.sdma),
}


@rule("PC031", "no-sdma", Severity.ERROR, doc_vars=_SDMA)
def no_sdma(plan: ir.Plan, facts: Facts) -> Iterator[Finding]:
    """The plan has a warm but the platform has no SDMA provider ({no_sdma}).

    An SDMA-enabled worker fails during runtime initialization there; PyPTO
    never turns a requested prefetch into a no-op. Reported at the
    `platform` entry's value (`a5` in `platform: a5`). Every warm the plan
    declares counts, also one dropped for a schema error (PC002): the plan
    still asks for warms.

    Fix: build warm plans for {sdma} only.
    """
    if plan.platform is not None and not plan.platform.sdma and plan.declared_warms:
        yield Finding(
            plan.platform_pos,
            f"platform '{plan.platform.name}' has no SDMA provider, but the plan has "
            f"{plural(plan.declared_warms, 'warm')}: the runtime would fail at initialization",
            f"warms run only on {_SDMA['sdma']}",
        )

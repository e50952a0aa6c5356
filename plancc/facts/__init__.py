"""What is worked out from a resolved plan once per check and handed on.

``facts_of(plan)`` builds it all in one pass: each complete layer kind's timeline, the
placed warms (each anchored warm with its consumers), each layer kind's L2 peak (its
warms' live intervals swept once), the plan's peak, and the analysis the rules judged by.
``check`` builds it once per check and hands it to every rule as an argument (a rule's
signature is ``(plan, facts)``); the check's result carries it, so that the manifest,
the report, the editor, the summary and `plancc suggest` read these facts instead of
working them out again. Nothing is kept on the plan: the facts live as long as whoever
holds them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from plancc import ir
from plancc.facts.analysis import Analysis, analyse
from plancc.facts.crossing import KindPeak, kind_peak
from plancc.facts.liveness import Peak, layer_peak
from plancc.facts.placed import Placed, each_placed
from plancc.facts.timeline import Timeline


@dataclass(frozen=True, eq=False)  # one check's: equal only to itself
class Facts:
    """One resolved plan's shared facts, built by ``facts_of``."""

    plan: ir.Plan
    timelines: Mapping[str, Timeline]  # per complete layer kind
    # Every anchored warm of a complete layer kind, plan order; then each cross-layer
    # warm on each of its crossings (``facts.crossing``).
    placed: tuple[Placed, ...]
    # Per layer kind, complete or not (the report draws both); a complete kind's with the
    # cross-layer warms of the kind before it that raise it most (``kind_peaks``).
    peaks: Mapping[str, Peak]
    # The plan's L2 peak: over the forward's layer kinds when it has one, else over every
    # kind; a kind the budget rules do not judge (``Layer.budgeted``: a stand-in stage, an
    # error in its `deps`, `reads` or a warm) is left out, as PC030 and PC032 leave it out.
    peak_bytes: int
    analysis: Analysis
    # Per complete layer kind: its peak and the kind before it that gives it (None: its
    # own warms alone).
    kind_peaks: Mapping[str, KindPeak]


def facts_of(plan: ir.Plan, timelines: Mapping[str, Timeline] = MappingProxyType({})) -> Facts:
    """Every fact of ``plan``, each worked out once. ``timelines``: layer kinds' timelines
    built already, for a plan that shares their stages, tensors and platform (`plancc
    suggest` checks hundreds of copies of a layer kind, one candidate warm each, against
    the base layer kind's timeline); one whose stages are not the layer kind's is not used."""
    lines: dict[str, Timeline] = {}
    for name, layer in plan.layers.items():
        if not layer.complete:
            continue  # a stand-in stage: no reliable order, not judged
        line = timelines.get(name)
        if line is None or line.stages is not layer.stages:
            line = Timeline(plan, layer)
        lines[name] = line
    placed = tuple(each_placed(plan, lines))
    kinds_ = {name: kind_peak(plan, plan.layers[name]) for name in lines}
    peaks = {
        name: kinds_[name].peak if name in kinds_ else layer_peak(layer)
        for name, layer in plan.layers.items()
    }
    kinds = set(plan.forward.kinds) if plan.forward is not None else set(plan.layers)
    peak_bytes = max(
        (peaks[k].bytes for k in kinds if k in plan.layers and plan.layers[k].budgeted),
        default=0,
    )
    analysis = analyse(plan, placed, lines, peaks)
    return Facts(
        plan,
        MappingProxyType(lines),
        placed,
        MappingProxyType(peaks),
        peak_bytes,
        analysis,
        MappingProxyType(kinds_),
    )

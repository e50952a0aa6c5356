"""`plancc suggest`: the warms a layer kind should have, ranked by the rules (docs/suggest.md).

``candidates`` lists what to try, ``evaluate`` runs the real check on each one alone
in its layer kind, ``rank`` orders them by the rules' facts, ``output`` prints them.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from plancc import ir
from plancc.api import validate_paths
from plancc.codes import Severity
from plancc.diagnostics import Diagnostic
from plancc.facts import Facts, facts_of
from plancc.suggest import candidates as cands
from plancc.suggest.evaluate import evaluate
from plancc.suggest.rank import Ranked, rank
from plancc.usage import UsageError

# Enumerated candidates per layer kind: a layer of a thousand tasked stages would
# otherwise enumerate millions (each anchor times each suffix of its later groups).
MAX_ENUMERATED = 1000


@dataclass(frozen=True)
class LayerSuggestions:
    kind: str
    durations: str  # "steps", "plan" or "trace": where the stages' durations come from
    ranked: list[Ranked]
    infeasible: list[Ranked]
    capped: bool = False  # the enumeration stopped at MAX_ENUMERATED candidates

    @property
    def top_gain(self) -> Ranked | None:
        first = self.ranked[0] if self.ranked else None
        return first if first is not None and first.klass == "gain" else None


@dataclass(frozen=True)
class Suggestions:
    file: str
    plan: ir.Plan | None
    errors: tuple[Diagnostic, ...]  # the plan's errors: nothing is suggested for it
    layers: tuple[LayerSuggestions, ...]
    notes: tuple[str, ...] = ()  # what the trace gave no duration for, and why
    source_root: str | None = None  # `--source-root` / `--no-source`, for --fix's re-check


def suggest(
    path: str,
    kinds: Sequence[str] = (),
    given: Sequence[str] = (),
    *,
    trace: str | None = None,
    overrides: Mapping[str, int] = MappingProxyType({}),
    source_root: str | None = None,
) -> Suggestions:
    """``overrides``: `--set`, the params' values fixed; the rest rank at their defaults.
    ``source_root``: as `validate` takes it (`--source-root`, `--no-source`)."""
    report = validate_paths([path], source_root=source_root, overrides=overrides)
    if len(report.results) != 1:  # a directory: which plan was meant is not for us to pick
        raise UsageError(f"{path}: {len(report.results)} plans; suggest takes one plan file")
    (result,) = report.results
    errors = tuple(d for d in result.diagnostics if d.severity is Severity.ERROR)
    plan = result.plan
    if errors or plan is None or result.facts is None:
        return Suggestions(result.file, plan, errors, (), source_root=source_root)
    facts = result.facts
    timed: frozenset[str] = frozenset()
    notes: tuple[str, ...] = ()
    if trace is not None:
        from plancc.measure.durations import timed as with_trace  # noqa: PLC0415 (only then)

        plan, timed, notes = with_trace(trace, plan)
        facts = facts_of(plan)  # the stages' new durations: new timelines
    for k in kinds:
        if k not in plan.layers:
            raise UsageError(f"--layer '{k}': {cands.unknown('layer kind', k, plan.layers)}")
    extra = [cands.parse(spec, plan) for spec in given]
    layers = suggest_plan(facts, kinds, extra, timed)
    return Suggestions(result.file, plan, (), layers, notes, source_root)


def suggest_plan(
    facts: Facts,
    kinds: Sequence[str] = (),
    extra: Sequence[cands.Candidate] = (),
    timed: frozenset[str] = frozenset(),
) -> tuple[LayerSuggestions, ...]:
    """The ranked candidates of each layer kind of a plan without errors (``facts``: the
    check's; ``kinds``: only those); ``timed``: the kinds whose durations a trace gave."""
    plan = facts.plan
    out = []
    for kind, layer in plan.layers.items():
        if kinds and kind not in kinds:
            continue
        durations = (
            "trace"
            if kind in timed
            else "plan"
            if any(s.duration_us is not None for s in layer.stages)
            else "steps"
        )
        line = facts.timelines[kind]  # a plan without errors: every layer kind complete
        enumerated = cands.enumerated(plan, layer, line)
        listed = list(itertools.islice(enumerated, MAX_ENUMERATED))
        found = cands.unique(
            plan,
            iter(
                [
                    cands.Candidate(kind, (), cands.NONE),
                    *(c for c in extra if c.kind == kind),
                    *cands.declared(layer),
                    *listed,
                ]
            ),
        )
        ranked, infeasible = rank([evaluate(plan, c, line) for c in found])
        capped = next(enumerated, None) is not None
        out.append(LayerSuggestions(kind, durations, ranked, infeasible, capped))
    return tuple(out)

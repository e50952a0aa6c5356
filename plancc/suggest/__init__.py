"""`plancc suggest`: the warms a layer kind should have, ranked by the rules (docs/suggest.md).

``candidates`` lists what to try, ``evaluate`` runs the real check on each one alone
in its layer kind, ``ranges`` at the ends of its params' ranges too (and guards a gain
where it stops being one), ``rank`` orders them by the rules' facts, ``output`` prints
them.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType

from plancc import ir
from plancc.api import PlanResult, validate_paths
from plancc.codes import Severity
from plancc.diagnostics import Diagnostic
from plancc.facts import Facts, facts_of
from plancc.load import read_config_file
from plancc.resolve import resolve
from plancc.suggest import candidates as cands
from plancc.suggest.evaluate import Evaluation, evaluate
from plancc.suggest.measured import Measured, Verdicts
from plancc.suggest.measured import read as read_measured
from plancc.suggest.ranges import Ranges
from plancc.suggest.rank import Ranked, label_of, rank
from plancc.usage import UsageError
from plancc.validate import validate


@dataclass(frozen=True)
class LayerSuggestions:
    kind: str
    durations: str  # "steps", "plan" or "trace": where the stages' durations come from
    ranked: list[Ranked]
    infeasible: list[Ranked]
    capped: bool = False  # the generated candidates stopped at their bound
    given: frozenset[tuple[cands.Part, ...]] = frozenset()  # the `--candidate`s of the kind
    notes: tuple[str, ...] = ()  # the candidates not judged in this run, and why

    def asked(self, r: Ranked) -> bool:
        """Whether a row is, or stands for, a `--candidate`."""
        return r.stands_for(self.given)

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
    measured: str | None = None,
) -> Suggestions:
    """``overrides``: `--set`, the params' values fixed; the rest rank at their defaults.
    ``source_root``: as `validate` takes it (`--source-root`, `--no-source`).
    ``measured``: a result of `plancc measure --format json` (``suggest.measured``)."""
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

        plan, timed, notes = with_trace(trace, plan, kinds or None)  # notes of those asked
        facts = facts_of(plan)  # the stages' new durations: new timelines
    at = _resolver(result, trace)
    for k in kinds:
        if k not in plan.layers:
            raise UsageError(f"--layer '{k}': {cands.unknown('layer kind', k, plan.layers)}")
    extra = [cands.parse(spec, plan) for spec in given]
    verdicts: Verdicts = {}
    if measured is not None:
        verdicts, said = read_measured(measured, plan)
        notes = (*notes, *said)
    world = cands.World(plan, dict(facts.timelines))
    ranges = Ranges(world, at, frozenset(overrides)) if at is not None else None
    layers = suggest_plan(facts, kinds, extra, timed, verdicts, ranges=ranges)
    return Suggestions(result.file, plan, (), layers, notes, source_root)


def _resolver(
    result: PlanResult, trace: str | None
) -> Callable[[Mapping[str, int]], ir.Plan | None] | None:
    """The plan resolved at given values of its params (with the trace's durations), as
    `validate` resolves it at the ends of their ranges; None for a plan without params."""
    if result.doc is None or result.plan is None or not result.plan.params:
        return None
    validated = validate(result.doc)

    def at(values: Mapping[str, int]) -> ir.Plan | None:
        plan, _ = resolve(validated, read_config_file, overrides=values)
        if plan is not None and trace is not None:
            from plancc.measure.durations import timed  # noqa: PLC0415 (only then)

            plan = timed(trace, plan)[0]
        return plan

    return at


def suggest_plan(
    facts: Facts,
    kinds: Sequence[str] = (),
    extra: Sequence[cands.Candidate] = (),
    timed: frozenset[str] = frozenset(),
    measured: Mapping[str, tuple[tuple[cands.Part, ...], Measured]] = MappingProxyType({}),
    *,
    ranges: Ranges | None = None,
) -> tuple[LayerSuggestions, ...]:
    """The ranked candidates of each layer kind of a plan without errors (``facts``: the
    check's; ``kinds``: only those); ``timed``: the kinds whose durations a trace gave;
    ``measured``: per kind, a verdict on its measured warms; ``ranges``: the plan at the
    other values of its params (``ranges.Ranges``), where each candidate is judged too."""
    plan = facts.plan
    world = ranges.main if ranges is not None else cands.World(plan, dict(facts.timelines))
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
        given_ = tuple(extra)
        verdict = measured.get(kind)
        if verdict is not None:  # the measured warms are judged, whatever else is
            given_ = (*given_, cands.measured(kind, verdict[0]))
        setting = cands.Setting(plan, layer, facts.timelines[kind], given_, world=world)
        judged, capped, notes = judge(setting, ranges)
        ranked, infeasible = rank(judged, verdict)
        given = frozenset(c.parts for c in extra if c.kind == kind)
        out.append(LayerSuggestions(kind, durations, ranked, infeasible, capped, given, notes))
    return tuple(out)


def judge(
    s: cands.Setting, ranges: Ranges | None = None
) -> tuple[list[Evaluation], bool, tuple[str, ...]]:
    """Every candidate of the layer kind judged: "no warm", each generator's (the generated
    ones up to ``MAX_GENERATED``), then the neighbours their findings' fixes give and the
    guards where a class flips inside a param's range (as many again at most).
    Whether a bound stopped one; the candidates not judged in this run, in words."""
    seen: set[tuple[cands.Part, ...]] = set()
    out: list[Evaluation] = []
    queue = deque([cands.Candidate(s.layer.name, (), cands.NONE)])
    capped = _generated(s, seen, queue) or s.stopped
    spawned = cands.MAX_GENERATED
    notes: list[str] = []
    while queue:
        c = queue.popleft()
        more: list[cands.Candidate] = []
        if ranges is None or c.none:
            e = evaluate(s, c)
        else:
            both = ranges.judge(s, c)
            if both is None:
                notes.append(_skipped(c, ranges))
                continue
            more = list(ranges.flips(s, c, *both))
            e = replace(both[0], guarded=tuple(g.parts[0].guards[-1] for g in more))
        out.append(e)
        fixed = cands.neighbours(c, (f.fix for f in e.findings if f.fix is not None))
        for n in itertools.chain(fixed, more):
            if n.parts not in seen and spawned > 0:
                seen.add(n.parts)
                queue.append(n)
                spawned -= 1
    return out, capped, tuple(notes)


def _generated(
    s: cands.Setting, seen: set[tuple[cands.Part, ...]], queue: deque[cands.Candidate]
) -> bool:
    """Each generator's candidates not ``seen`` yet, added to ``queue`` (the generated
    ones up to ``MAX_GENERATED``); whether the bound stopped one."""
    capped = False
    left = cands.MAX_GENERATED
    for source in cands.GENERATORS:
        if source.capped and capped:
            continue  # at the bound: whatever it generates would not be judged
        for c in source.generate(s):
            if c.parts in seen:
                continue
            if source.capped and left == 0:
                capped = True  # one more than the bound allows
                break
            seen.add(c.parts)
            queue.append(c)
            left -= source.capped
    return capped


def _skipped(c: cands.Candidate, ranges: Ranges) -> str:
    values = ", ".join(f"{n}={v}" for n, v in ranges.values if n in ranges.fixed)
    return f"{label_of(c)}: not issued at {values}, where its guard skips it: not judged"

"""`plancc suggest`: the warms a layer kind should have, ranked by the rules (docs/suggest.md).

``candidates`` lists what to try, ``evaluate`` runs the real check on each one alone
in its layer kind, ``rank`` orders them by the rules' facts, ``output`` prints them.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType

from plancc import ir
from plancc.api import validate_paths
from plancc.codes import Severity
from plancc.diagnostics import Diagnostic
from plancc.facts import Facts, facts_of
from plancc.suggest import candidates as cands
from plancc.suggest.evaluate import Evaluation, evaluate
from plancc.suggest.measured import Measured, Verdicts
from plancc.suggest.measured import read as read_measured
from plancc.suggest.rank import Ranked, rank
from plancc.usage import UsageError


@dataclass(frozen=True)
class LayerSuggestions:
    kind: str
    durations: str  # "steps", "plan" or "trace": where the stages' durations come from
    ranked: list[Ranked]
    infeasible: list[Ranked]
    capped: bool = False  # the generated candidates stopped at their bound
    given: frozenset[tuple[cands.Part, ...]] = frozenset()  # the `--candidate`s of the kind

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

        plan, timed, notes = with_trace(trace, plan)
        facts = facts_of(plan)  # the stages' new durations: new timelines
    for k in kinds:
        if k not in plan.layers:
            raise UsageError(f"--layer '{k}': {cands.unknown('layer kind', k, plan.layers)}")
    extra = [cands.parse(spec, plan) for spec in given]
    verdicts: Verdicts = {}
    if measured is not None:
        verdicts, said = read_measured(measured, plan)
        notes = (*notes, *said)
    layers = suggest_plan(facts, kinds, extra, timed, verdicts)
    return Suggestions(result.file, plan, (), layers, notes, source_root)


def suggest_plan(
    facts: Facts,
    kinds: Sequence[str] = (),
    extra: Sequence[cands.Candidate] = (),
    timed: frozenset[str] = frozenset(),
    measured: Mapping[str, tuple[tuple[cands.Part, ...], Measured]] = MappingProxyType({}),
) -> tuple[LayerSuggestions, ...]:
    """The ranked candidates of each layer kind of a plan without errors (``facts``: the
    check's; ``kinds``: only those); ``timed``: the kinds whose durations a trace gave;
    ``measured``: per kind, a verdict on its measured warms."""
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
        setting = cands.Setting(plan, layer, facts.timelines[kind], tuple(extra))
        verdict = measured.get(kind)
        if verdict is not None:  # the measured warms are judged, whatever else is
            setting = replace(setting, given=(*setting.given, cands.measured(kind, verdict[0])))
        judged, capped = judge(setting)
        ranked, infeasible = rank(judged, verdict)
        given = frozenset(c.parts for c in extra if c.kind == kind)
        out.append(LayerSuggestions(kind, durations, ranked, infeasible, capped, given))
    return tuple(out)


def judge(s: cands.Setting) -> tuple[list[Evaluation], bool]:
    """Every candidate of the layer kind judged: "no warm", each generator's (the generated
    ones up to ``MAX_GENERATED``), then the neighbours their findings' fixes give (as
    many again at most). Whether a bound stopped one."""
    seen: set[tuple[cands.Part, ...]] = set()
    out: list[Evaluation] = []
    capped = False
    left = cands.MAX_GENERATED
    queue = deque([cands.Candidate(s.layer.name, (), cands.NONE)])
    for source in cands.GENERATORS:
        for c in source.generate(s):
            if c.parts in seen:
                continue
            if source.capped and left == 0:
                capped = True  # one more than the bound allows
                break
            seen.add(c.parts)
            queue.append(c)
            left -= source.capped
    capped = capped or s.stopped
    spawned = cands.MAX_GENERATED
    while queue:
        c = queue.popleft()
        e = evaluate(s, c)
        out.append(e)
        for n in cands.neighbours(c, (f.fix for f in e.findings if f.fix is not None)):
            if n.parts not in seen and spawned > 0:
                seen.add(n.parts)
                queue.append(n)
                spawned -= 1
    return out, capped

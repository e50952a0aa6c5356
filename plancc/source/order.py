"""PC203 (a stage's reads against its kernels') and PC204 (the plan's order against the
source's: deps and last writers)."""

from __future__ import annotations

from collections.abc import Iterator

from plancc import codes
from plancc.source.findings import Findings, LayerReading
from plancc.source.reading import Kernel
from plancc.source.runs import Runs, run_names


def check_reads(findings: Findings, it: LayerReading, runs: Runs, sure: Runs) -> None:
    """PC203. What the plan misses is what the stage's run as far as it is sure (``sure``:
    without a kernel that may be a missing stage's) reads; what it has in excess, what
    its whole run does not read."""
    for index, run in runs.kernels.items():
        if index in runs.unknown or index in sure.unknown:
            continue
        s = it.layer.stages[index]
        plan = {
            t
            for t in s.reads
            if t in it.param_of and t in findings.plan.tensors and findings.plan.tensors[t].static
        }
        src, only = _read(findings, it, run), _read(findings, it, sure.kernels[index])
        missing, extra = sorted(only - plan), sorted(plan - src)
        if not missing and not extra:
            continue
        parts = []
        if missing:
            parts.append(f"the plan misses {', '.join(missing)}")
        if extra:
            parts.append(f"no kernel of it reads {', '.join(extra)}")
        kernels = run_names(run)
        keep = [t for t in s.reads if t not in extra]
        findings.report(
            findings.stage_at(it, s, "reads") if s.reads else findings.stage_at(it, s, "kernel"),
            codes.SOURCE_READS,
            f"stage '{s.name}' ({kernels}, {run[0].file}:{run[0].line}): " + "; ".join(parts),
            f"reads: [{', '.join([*keep, *missing])}]",
        )


def _read(findings: Findings, it: LayerReading, run: list[Kernel]) -> set[str]:
    """The plan's static tensors ``run`` reads."""
    read: set[str] = set()
    for k in run:
        read |= k.reads
    return {
        it.tensor_of[p]
        for p in it.reading.params_of(read)
        if p in it.tensor_of and findings.plan.tensors[it.tensor_of[p]].static
    }


def check_order(findings: Findings, it: LayerReading, runs: Runs, sure: Runs) -> None:
    """PC204: each compared stage against the first compared stage listed before it that
    the source orders otherwise, in its runs and in its runs as far as they are sure
    (``sure``: a kernel that may be a missing stage's in no stage's run), which the
    message and hint then describe: an order that follows only from folding such a
    kernel into a run is not reported while the stage's kernel is missing."""
    if sure is not runs:
        differs = dict(_differ(it, runs))
        for j, bits in _differ(it, sure):
            if bits & differs.get(j, 0):
                _report(findings, it, sure, j, bits & differs[j])
        return
    for j, bits in _differ(it, runs):
        _report(findings, it, runs, j, bits)


def _differ(it: LayerReading, runs: Runs) -> Iterator[tuple[int, int]]:
    """Each compared stage whose order differs from the source's, with the bit set of the
    compared stages listed before it that the source orders otherwise. The pairs are
    compared as bit sets, a row per stage: 4,096 stages are 4,096 steps, not 8 million."""
    known = sorted(i for i in runs.kernels if i not in runs.unknown)
    known_bits = runs.compared
    sched = it.layer.schedule
    # What each stage's plan order misses (the source runs it after, the plan does not
    # say so) and has in excess: a stage inherits both from the stages it waits on, so
    # one dropped dep is one finding, at the stage that dropped it.
    missing: dict[int, int] = {}
    extra: dict[int, int] = {}
    for j in known:
        lower = known_bits & ((1 << j) - 1)
        plan = sched.before(j)  # listed before j, and j waits for them
        after, before = runs.before[j], runs.after[j]  # in the source: runs before, after j
        missing[j] = after & ~plan & lower
        extra[j] = plan & ~after & lower
        waits = it.layer.stages[j].deps
        direct = (j - 1,) if waits is None and j else waits or ()
        inherited = 0
        for m in direct:
            inherited |= missing.get(m, 0)
            if after >> m & 1:  # a wait the source has too: its excess is not j's own
                inherited |= extra.get(m, 0)
        # Plan "after" where the source is not; plan "beside" where the source orders them.
        differ = ((missing[j] | extra[j]) & ~inherited) | (~plan & before & lower)
        if differ:
            yield j, differ


def _report(findings: Findings, it: LayerReading, runs: Runs, j: int, differ: int) -> None:
    """PC204 at stage ``j``, against the first stage of ``differ``."""
    plan, after, before = it.layer.schedule.before(j), runs.before[j], runs.after[j]
    i = (differ & -differ).bit_length() - 1
    plan_rel = "after" if plan >> i & 1 else "beside"
    src_rel = "after" if after >> i & 1 else "before" if before >> i & 1 else "beside"
    a, b = it.layer.stages[i], it.layer.stages[j]
    ka, kb = runs.kernels[i][0], runs.kernels[j][0]
    findings.report(
        findings.stage_at(it, b, "kernel"),
        codes.SOURCE_ORDER,
        f"stage '{b.name}' runs {plan_rel} '{a.name}' in the plan, but in the source "
        f"its run ({run_names(runs.kernels[j])}, {kb.file}:{kb.line}) runs "
        f"{src_rel} that of '{a.name}' ({run_names(runs.kernels[i])}, "
        f"{ka.file}:{ka.line})",
        _deps_hint(it, j, runs),
    )


def _deps_hint(it: LayerReading, j: int, runs: Runs) -> str:
    known = runs.compared
    names = [it.layer.stages[i].name for i in runs.direct(j, known)]
    later = runs.before[j] & known & ~((2 << j) - 1)  # listed after j, run before it
    if later:
        first = (later & -later).bit_length() - 1
        return (
            f"the source runs '{it.layer.stages[first].name}' first: list it before "
            f"'{it.layer.stages[j].name}'"
        )
    return f"deps: [{', '.join(names)}]"

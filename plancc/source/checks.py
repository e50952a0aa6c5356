"""The source checks, PC200-PC208: a plan against the model code its layer kinds name.

For each layer kind with `source: PATH:FUNCTION` (PATH from the plan's
`source_root`, or ``--source-root``), the function is read (``reader``) and
compared: the stages' `task` (PC201), `kernel` (PC202), `reads` (PC203) and
order (PC204), the warms (PC205, PC206), the tensors' shapes and dtypes
(PC207); what the reader could not resolve is a notice (PC208), and a source
that cannot be read is PC200. A stage stands for a run of kernels: its `kernel`
and the kernels whose last head it is (``runs.stage_runs``). Stages without a
`kernel`, or whose run may hold unresolved code, are not compared.
Each diagnostic is at the plan node at fault and names the source's file:line.
"""

from __future__ import annotations

import os

from plancc import codes, fixes, ir
from plancc.diagnostics import Diagnostic
from plancc.fixes import Fix
from plancc.source import cache
from plancc.source.findings import Findings, LayerReading, closest, nearest
from plancc.source.limits import Budget, OutOfTime, OutOfWork
from plancc.source.modules import Blocked, SourceError
from plancc.source.order import check_order, check_reads
from plancc.source.reading import Kernel, Reading, Task
from plancc.source.resolver import Resolver
from plancc.source.root import source_root, split_source, unchecked
from plancc.source.runs import Runs, run_names, stage_runs
from plancc.source.warm_forms import OutsideCall, outside_calls
from plancc.source.warms import check_warms
from plancc.validate import Validated


def check_sources(
    v: Validated, plan: ir.Plan, override: str | None = None
) -> list[tuple[Diagnostic, tuple[ir.Warm, ...]]]:
    """PC200-PC208 for every layer kind of ``plan`` that names its `source`, each with the
    plan warm it is about (its `allow` may silence it)."""
    if v.plan is None:
        return []
    kinds = [k for k, layer in v.plan.layers.items() if layer.source]
    if not kinds:
        return []
    nothing = unchecked(v, plan, override)
    if nothing is not None:
        return nothing
    root = source_root(plan.file, v.plan.source_root, override)
    findings = Findings(v, plan)
    for kind in kinds:
        _layer(findings, kind, root)
    return findings.out


def _layer(findings: Findings, kind: str, root: str) -> None:
    """One layer kind: its source read (PC200), what was not resolved (PC208), the checks."""
    model_layer = findings.model.layers[kind]
    layer = findings.plan.layers.get(kind)
    source = model_layer.source or ""
    path, function = split_source(source)
    where = findings.at("layers", kind, "source")
    try:
        reading = cache.read(
            os.path.join(root, path), function, root, findings.model.source_defines
        )
    except OutOfTime as stop:  # the editor's bound for a check (docs/editors.md)
        findings.report(
            where, codes.SOURCE_UNRESOLVED, f"source of layer kind '{kind}' not checked: {stop}"
        )
        return
    except Blocked as exc:  # a file that waits for data: not judged, as a stopped reading
        findings.report(
            where, codes.SOURCE_UNRESOLVED, f"source of layer kind '{kind}' not checked: {exc}"
        )
        return
    except SourceError as exc:
        findings.report(
            where,
            codes.SOURCE_UNCHECKED,
            f"source of layer kind '{kind}' not checked: {exc}",
            f"looked for {function}() in {os.path.join(root, path)}",
        )
        return
    if layer is None:
        return
    seen: set[tuple[str, int]] = set()
    for u in reading.unresolved:
        if (u.file, u.line) in seen:
            continue
        seen.add((u.file, u.line))
        if u.choice:  # taken at its default, or as defined: the hint says how to change it
            findings.report(
                where, codes.SOURCE_UNRESOLVED, f"{u.file}:{u.line}: {u.what}", u.effect
            )
            continue
        findings.report(
            where,
            codes.SOURCE_UNRESOLVED,
            f"{u.file}:{u.line}: {u.what}: not resolved statically; {u.effect}",
        )
    param_of, tensor_of = _mapping(findings, kind, reading)
    plan = findings.plan
    layers = len(plan.forward.kinds) if plan.forward is not None else None
    outside = _outside(layer, reading, root)
    it = LayerReading(kind, layer, reading, param_of, tensor_of, plan.params, layers, outside)
    _shapes(findings, it)
    if not layer.complete:
        return
    runs, sure = _kernels(findings, it)
    _tasks(findings, it, runs)
    check_reads(findings, it, runs, sure)
    check_order(findings, it, runs, sure)
    check_warms(findings, it)


def _outside(layer: ir.Layer, reading: Reading, root: str) -> dict[str, list[OutsideCall]]:
    """The calls outside the layer function of its cross-layer warms that it issues no
    call or scope of (warm_forms.outside_calls): between one layer and the next."""
    out: dict[str, list[OutsideCall]] = {}
    missing = [
        w
        for w in layer.warms
        if w.next_layer
        and not any(c.function == w.name for c in reading.calls)
        and not any(sw.name_hint == w.name_hint for sw in reading.warms)
    ]
    if not missing:
        return out
    resolver = Resolver(root, Budget())
    for w in missing:
        try:
            out[w.name] = outside_calls(resolver, reading.module, reading.function, w.name)
        except OutOfWork:  # past the bound of one reading: none found, as none were read
            out[w.name] = []
    return out


def _mapping(
    findings: Findings, kind: str, reading: Reading
) -> tuple[dict[str, str], dict[str, str]]:
    """Plan tensor -> source parameter (`source_params`, else the same name), and back."""
    declared = findings.model.layers[kind].source_params
    param_of: dict[str, str] = {}
    for tensor, param in declared.items():
        if tensor not in findings.plan.tensors:
            findings.report(
                findings.v.key_at("layers", kind, "source_params", tensor),
                codes.UNKNOWN_NAME,
                f"source_params names '{tensor}', which is no tensor of the plan",
                closest(tensor, findings.plan.tensors),
            )
        elif param not in reading.params or not reading.params[param].tensor:
            findings.report(
                findings.at("layers", kind, "source_params", tensor),
                codes.UNKNOWN_NAME,
                f"'{param}' is no tensor parameter of {reading.function}() ({reading.file})",
                closest(param, [p for p in reading.params if reading.params[p].tensor]),
            )
        else:
            param_of[tensor] = param
    mapped = set(param_of.values())
    for tensor in findings.plan.tensors:
        p = reading.params.get(tensor)
        if tensor not in param_of and tensor not in mapped and p is not None and p.tensor:
            param_of[tensor] = tensor
    return param_of, {p: t for t, p in param_of.items()}


def _shapes(findings: Findings, it: LayerReading) -> None:
    """PC207."""
    unknown: list[str] = []
    for tensor, param in it.param_of.items():
        t = findings.plan.tensors[tensor]
        p = it.reading.params[param]
        if p.unknown_shape:
            continue  # a bare `pl.Tensor` no caller annotates: nothing to compare
        where = f"{param} ({it.reading.file}:{p.line}, {it.reading.function})"
        if p.origin:  # a bare `pl.Tensor`: the shape is a caller's
            where += f", annotated at {p.origin},"
        if any(v is None and not d for v, d in zip(p.values, p.dynamic, strict=True)):
            unknown.append(f"{param} ({it.reading.file}:{p.line})")
        if p.dtype is not None and p.dtype != t.dtype.name:
            findings.report(
                findings.at("tensors", tensor, "dtype"),
                codes.SOURCE_SHAPE,
                f"tensor '{tensor}' is {t.dtype.name}; its source parameter {where} is {p.dtype}",
                f"write dtype: {p.dtype}, or correct the annotation at {it.reading.file}:{p.line}",
            )
        # A stacked tensor's parameter is the stack: [layers * rows, ...] of its slab.
        shape = t.shape
        if t.stacked is not None and shape[0] is not None:
            shape = (t.stacked.layers * shape[0], *shape[1:])
        if not _same_shape(shape, p.values, p.dynamic):
            what = "stacks to" if t.stacked is not None else "has shape"
            findings.report(
                findings.at("tensors", tensor, "shape"),
                codes.SOURCE_SHAPE,
                f"tensor '{tensor}' {what} {_shape(shape)}; its source parameter "
                f"{where} has {_shape(p.values, p.dynamic)}",
                f"write the shape the annotation gives, or correct it at "
                f"{it.reading.file}:{p.line}",
            )
    if unknown:
        more = f" and {len(unknown) - 1} more" if len(unknown) > 1 else ""
        findings.report(
            findings.at("layers", it.kind, "source"),
            codes.SOURCE_UNRESOLVED,
            f"a dim of {unknown[0]}{more} is not resolved statically (a constant chosen "
            "at import time?): those dims are not compared",
        )


def _kernels(findings: Findings, it: LayerReading) -> tuple[Runs, Runs]:
    """PC202; each stage with a `kernel` found in the source: its run of kernels (unknown
    when the kernel may lie in unresolved code, or its run holds some). The hint offers
    no later copy of an unrolled scope: the first copy's stage stands for it.

    And the runs as far as they are sure: while a stage's `kernel` is missing, a kernel
    PC202 offers it (the closest name, else every kernel no stage names) may be that
    stage's, not the run it waits on last (``stage_runs``'s ``loose``): what follows only
    from folding it there is not reported."""
    reading = it.reading
    found: dict[int, Kernel] = {}
    unsure: set[int] = set()
    offered: set[int] = set()  # the kernels PC202 offers a missing stage
    for s in it.layer.stages:
        if s.kernel is None:
            continue
        k = reading.kernel(s.kernel)
        if k is not None:
            found[s.index] = k
        elif s.kernel in reading.possible:
            unsure.add(s.index)
        else:  # the hint offers only kernels no other stage names
            claimed = {t.kernel for t in it.layer.stages if t.kernel is not None}
            free = [
                k
                for k in reading.kernels
                if not k.opaque and k.copy_of is None and k.name not in claimed
            ]
            names = [k.name for k in free]
            near = nearest(s.kernel, names)
            offered |= {k.index for k in free if near in (None, k.name)}
            findings.report(
                findings.stage_at(it, s, "kernel"),
                codes.SOURCE_KERNEL,
                f"stage '{s.name}': kernel '{s.kernel}' is no kernel of "
                f"{reading.function}() ({reading.file})",
                f"did you mean '{near}'?"
                if near
                else f"its kernels: {', '.join(names[:6])}{', …' if len(names) > 6 else ''}",
            )
    runs = stage_runs(reading, found)
    runs.unknown |= unsure
    sure = stage_runs(reading, found, loose=frozenset(offered)) if offered else runs
    sure.unknown |= unsure
    return runs, sure


def _tasks(findings: Findings, it: LayerReading, runs: Runs) -> None:
    """PC201."""
    reading = it.reading
    for s in it.layer.stages:
        if s.task is None:
            continue
        task = reading.tasks.get(s.task)
        if task is not None:
            _loop_task(findings, it, s, task)
        elif s.task in reading.inner and _described(it, s):
            task = reading.inner[s.task]  # waited for by scopes beside it, in its loop
        if task is not None:
            _task_kernel(findings, it, runs, s, task)
            continue
        if _passed_outside(it, s):
            continue  # bound where the cross-layer warm anchored on it is called
        bound = ", ".join(reading.tasks) or "none"
        elsewhere = reading.bound.get(s.task)
        if elsewhere is not None:
            hint = (
                f"'{s.task}' is bound at {elsewhere[0]}:{elsewhere[1]}, inside a helper: "
                f"return it, and bind `{s.task} = helper(...)` in {reading.function}()"
            )
        else:
            run = runs.kernels.get(s.index)
            on = "the stage's kernel"
            if run and s.index not in runs.unknown:  # its last kernel: the run's output
                on = f"{run[-1].name} ({run[-1].file}:{run[-1].line})"
            hint = (
                f"bind it: `with pl.spmd(...) as {s.task}:` on {on}, returned by its "
                f"helper; or name a task {reading.function}() binds: {bound}"
            )
        findings.report(
            findings.stage_at(it, s, "task"),
            codes.SOURCE_TASK,
            f"stage '{s.name}': task '{s.task}' is bound by no scope or helper return of "
            f"{reading.function}() ({reading.file})",
            hint,
            fix=_task_fix(findings, it, runs, s),
        )


def _passed_outside(it: LayerReading, s: ir.Stage) -> bool:
    """Whether every warm anchored at ``s`` is a cross-layer one called outside the layer
    function with its task ``s.task`` (bound there: between one layer and the next)."""
    anchored = [w for w in it.layer.warms if s.index in w.anchors]
    return bool(anchored) and all(
        w.next_layer and any(s.task in c.arguments for c in it.outside.get(w.name, ()))
        for w in anchored
    )


def _task_fix(findings: Findings, it: LayerReading, runs: Runs, s: ir.Stage) -> Fix | None:
    """PC201's fix: the one task the function binds, once, on a kernel of the stage's run,
    that no other stage names; none when there is not exactly one (unsafe: the warms
    anchored there then wait for that task)."""
    run = runs.kernels.get(s.index)
    if not run or s.index in runs.unknown:
        return None
    mine = {k.index for k in run}
    named = {t.task for t in it.layer.stages if t.task is not None}
    tasks = [
        t
        for t in it.reading.tasks.values()
        if t.kernels & mine and not t.opaque and t.loop is None and t.name not in named
    ]
    if len(tasks) != 1:
        return None
    path = findings.v.doc_path(("layers", it.kind, "stages", s.index, "task"))
    title = f"name task '{tasks[0].name}'"
    return fixes.replace(path, tasks[0].name, title, fixes.Safety.UNSAFE)


def _described(it: LayerReading, s: ir.Stage) -> bool:
    """Whether warms are anchored at ``s``, each describing a scope of the code waiting for the
    helper's task ``s.task`` (so no generated call needs the variable in the layer
    function): a forward or a test entry that inlines a layer with its warm scope."""
    task = it.reading.inner[s.task or ""]
    anchored = [w for w in it.layer.warms if w.anchor == s.index]
    return bool(anchored) and all(
        any(sw.name_hint == w.name_hint and sw.deps == task.kernels for sw in it.reading.warms)
        for w in anchored
    )


def _loop_task(findings: Findings, it: LayerReading, s: ir.Stage, task: Task) -> None:
    """PC209: the task is bound inside a loop outside kernels, whatever else the loop runs:
    the variable holds the last iteration's task."""
    loop = task.loop
    if loop is None or task.opaque:
        return
    index = loop.target if len(task.loops) == 1 else "…"
    findings.report(
        findings.stage_at(it, s, "task"),
        codes.SOURCE_LOOP_TASK,
        f"stage '{s.name}': task '{s.task}' is bound at {task.file}:{task.line}, inside the "
        f"loop `for {loop.target} in …` ({loop.file}:{loop.line}): it holds the last "
        "iteration's task, so a warm anchored on it waits for that iteration, not the stage",
        f"join the loop: `tids[{index}] = …` into a task array "
        "(`tids = pl.array.create(N, pl.TASK_ID)`) in the loop, then "
        f"`{s.task} = pl.system.task_dummy(deps=[tids])` once the loop ends (after "
        f"{task.after})",
    )


def _task_kernel(findings: Findings, it: LayerReading, runs: Runs, s: ir.Stage, task: Task) -> None:
    """PC202: a stage's `task` is the task of a kernel of its own run (a barrier's: of
    what it waits on), else its warms would be issued at another stage's finish."""
    run = runs.kernels.get(s.index)
    if task.opaque or run is None or s.index in runs.unknown:
        return
    mine = {k.index for k in run}
    stray = sorted(task.kernels - mine)
    if not stray:
        return
    k = it.reading.kernels[stray[0]]
    if k.opaque:
        return
    other = runs.owner.get(k.index)
    where = (
        f"the run of stage '{it.layer.stages[other].name}'"
        if other is not None
        else ("no stage's run")
    )
    findings.report(
        findings.stage_at(it, s, "task"),
        codes.SOURCE_KERNEL,
        f"stage '{s.name}': task '{s.task}' is the task of kernel {k.name} ({k.file}:"
        f"{k.line}), which is in {where}, not in the stage's ({run_names(run)})",
        f"name the task of {run[-1].name} ({run[-1].file}:{run[-1].line}), or give the "
        "task to the stage whose run holds that kernel",
    )


def _same_shape(
    plan: tuple[int | None, ...], src: tuple[int | None, ...], dyn: tuple[bool, ...]
) -> bool:
    if len(plan) != len(src):
        return False
    for a, b, d in zip(plan, src, dyn, strict=True):
        if a is None:  # the plan does not count it: any annotation will do
            continue
        if d or (b is not None and a != b):
            return False
    return True


def _shape(values: tuple[int | None, ...], dyn: tuple[bool, ...] | None = None) -> str:
    out = []
    for i, v in enumerate(values):
        if v is not None:
            out.append(f"{v:,}".replace(",", ""))
        elif dyn is None or dyn[i]:
            out.append("dynamic")
        else:
            out.append("?")
    return "[" + ", ".join(out) + "]"

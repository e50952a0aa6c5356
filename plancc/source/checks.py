"""The source checks, PC200-PC208: a plan against the model code its layer kinds name.

For each layer kind with `source: PATH:FUNCTION` (PATH from the plan's
`source_root`, or ``--source-root``), the function is read (``reader``) and
compared: the stages' `task` (PC201), `kernel` (PC202), `reads` (PC203) and
order (PC204), the warms (PC205, PC206), the tensors' shapes and dtypes
(PC207); what the reader could not resolve is a notice (PC208), and a source
that cannot be read is PC200. A stage stands for a run of kernels: from its
`kernel` up to the next stage's kernel in program order. Stages without a
`kernel`, or whose kernel lies in unresolved code, are not compared.
Each diagnostic is at the plan node at fault and names the source's file:line.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from plancc import codes, ir
from plancc.codes import Code
from plancc.diagnostics import Diagnostic, Pos, diag
from plancc.model import Plan as ModelPlan
from plancc.source.reader import Kernel, Reading, SourceError, read_layer
from plancc.validate import Validated


def source_root(plan_file: str, declared: str | None, override: str | None) -> str:
    """Where the `source` paths start: ``--source-root``, else `source_root` relative to the
    plan's directory, else that directory."""
    if override is not None:
        return os.path.abspath(override)
    base = os.path.dirname(os.path.abspath(plan_file)) if plan_file != "-" else os.getcwd()
    return os.path.normpath(os.path.join(base, declared or "."))


def split_source(source: str) -> tuple[str, str]:
    path, _, function = source.rpartition(":")
    return path, function


def ancestors(reading: Reading) -> list[int]:
    """Bit j of entry i is set when kernel j runs before kernel i in the source (a path of
    `deps=` and last-writer edges leads from j to i)."""
    anc: list[int] = []
    for k in reading.kernels:
        bits = 0
        for d in k.deps | k.after:
            if d < k.index:
                bits |= anc[d] | (1 << d)
        anc.append(bits)
    return anc


@dataclass
class _Layer:
    kind: str
    layer: ir.Layer
    reading: Reading
    param_of: dict[str, str]  # plan tensor -> source parameter
    tensor_of: dict[str, str]  # source parameter -> plan tensor


class SourceChecks:
    def __init__(self, v: Validated, plan: ir.Plan, override: str | None) -> None:
        assert v.plan is not None
        self.v = v
        self.model: ModelPlan = v.plan
        self.plan = plan
        self.override = override
        self.out: list[Diagnostic] = []

    def at(self, *path: str | int) -> Pos:
        return self.v.at(*path)

    def report(self, pos: Pos, code: Code, message: str, hint: str | None = None) -> None:
        self.out.append(diag(self.plan.file, pos, code, message, hint))

    def run(self) -> list[Diagnostic]:
        kinds = [k for k, layer in self.model.layers.items() if layer.source]
        if not kinds:
            return []
        root = source_root(self.plan.file, self.model.source_root, self.override)
        if not os.path.isdir(root):
            given = (
                f"--source-root {self.override}"
                if self.override is not None
                else f"source_root '{self.model.source_root or '.'}'"
            )
            where = (
                self.at("source_root")
                if self.model.source_root is not None and self.override is None
                else self.at("layers", kinds[0], "source")
            )
            self.report(
                where,
                codes.SOURCE_UNCHECKED,
                f"{given} is not a directory ({root}): the sources of "
                f"{', '.join(kinds)} were not checked",
                "check out the model repository there, or pass --source-root DIR",
            )
            return self.out
        for kind in kinds:
            self.layer(kind, root)
        return self.out

    def layer(self, kind: str, root: str) -> None:
        model_layer = self.model.layers[kind]
        layer = self.plan.layers.get(kind)
        source = model_layer.source or ""
        path, function = split_source(source)
        where = self.at("layers", kind, "source")
        try:
            reading = read_layer(os.path.join(root, path), function, root)
        except SourceError as exc:
            self.report(
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
            self.report(
                where,
                codes.SOURCE_UNRESOLVED,
                f"{u.file}:{u.line}: {u.what}: not resolved statically; the checks of what "
                "it runs are skipped",
            )
        param_of, tensor_of = self.mapping(kind, reading)
        it = _Layer(kind, layer, reading, param_of, tensor_of)
        self.shapes(it)
        if not layer.complete:
            return
        runs = self.kernels(it)
        self.tasks(it)
        self.reads(it, runs)
        self.order(it, runs)
        self.warms(it)

    def mapping(self, kind: str, reading: Reading) -> tuple[dict[str, str], dict[str, str]]:
        declared = self.model.layers[kind].source_params
        param_of: dict[str, str] = {}
        for tensor, param in declared.items():
            if tensor not in self.plan.tensors:
                self.report(
                    self.v.key_at("layers", kind, "source_params", tensor),
                    codes.UNKNOWN_NAME,
                    f"source_params names '{tensor}', which is no tensor of the plan",
                    _closest(tensor, self.plan.tensors),
                )
            elif param not in reading.params or not reading.params[param].tensor:
                self.report(
                    self.at("layers", kind, "source_params", tensor),
                    codes.UNKNOWN_NAME,
                    f"'{param}' is no tensor parameter of {reading.function}() ({reading.file})",
                    _closest(param, [p for p in reading.params if reading.params[p].tensor]),
                )
            else:
                param_of[tensor] = param
        mapped = set(param_of.values())
        for tensor in self.plan.tensors:
            p = reading.params.get(tensor)
            if tensor not in param_of and tensor not in mapped and p is not None and p.tensor:
                param_of[tensor] = tensor
        return param_of, {p: t for t, p in param_of.items()}

    # -- PC207

    def shapes(self, it: _Layer) -> None:
        for tensor, param in it.param_of.items():
            t = self.plan.tensors[tensor]
            p = it.reading.params[param]
            where = f"{param} ({it.reading.file}:{p.line}, {it.reading.function})"
            if p.dtype is not None and p.dtype != t.dtype.name:
                self.report(
                    self.at("tensors", tensor, "dtype"),
                    codes.SOURCE_SHAPE,
                    f"tensor '{tensor}' is {t.dtype.name}; its source parameter {where} is "
                    f"{p.dtype}",
                    f"write dtype: {p.dtype}, or correct the annotation at "
                    f"{it.reading.file}:{p.line}",
                )
            if not _same_shape(t.shape, p.values, p.dynamic):
                self.report(
                    self.at("tensors", tensor, "shape"),
                    codes.SOURCE_SHAPE,
                    f"tensor '{tensor}' has shape {_shape(t.shape)}; its source parameter "
                    f"{where} has {_shape(p.values, p.dynamic)}",
                    f"write the shape the annotation gives, or correct it at "
                    f"{it.reading.file}:{p.line}",
                )

    # -- PC202, and each stage's run of kernels

    def kernels(self, it: _Layer) -> dict[int, list[Kernel] | None]:
        """Each stage with a `kernel` found in the source: its run of kernels (None when
        the run is not known: the kernel may lie in unresolved code)."""
        reading = it.reading
        found: dict[int, Kernel] = {}
        unsure: dict[int, None] = {}
        for s in it.layer.stages:
            if s.kernel is None:
                continue
            k = reading.kernel(s.kernel)
            if k is not None:
                found[s.index] = k
            elif s.kernel in reading.possible:
                unsure[s.index] = None
            else:
                names = [k.name for k in reading.kernels if not k.opaque]
                self.report(
                    self.stage_at(it, s, "kernel"),
                    codes.SOURCE_KERNEL,
                    f"stage '{s.name}': kernel '{s.kernel}' is no kernel of "
                    f"{reading.function}() ({reading.file})",
                    _closest(s.kernel, names)
                    or f"its kernels: {', '.join(names[:6])}{', …' if len(names) > 6 else ''}",
                )
        starts = sorted({k.index for k in found.values()})
        runs: dict[int, list[Kernel] | None] = dict(unsure)
        for stage, k in found.items():
            nxt = next((i for i in starts if i > k.index), len(reading.kernels))
            run = reading.kernels[k.index : nxt]
            runs[stage] = None if any(r.opaque for r in run) else run
        return runs

    def stage_at(self, it: _Layer, s: ir.Stage, key: str | None = None) -> Pos:
        path: tuple[str | int, ...] = ("layers", it.kind, "stages", s.index)
        return self.at(*path, key) if key else self.at(*path)

    # -- PC201

    def tasks(self, it: _Layer) -> None:
        reading = it.reading
        for s in it.layer.stages:
            if s.task is None or s.task in reading.tasks:
                continue
            bound = ", ".join(reading.tasks) or "none"
            elsewhere = reading.bound.get(s.task)
            if elsewhere is not None:
                hint = (
                    f"'{s.task}' is bound at {elsewhere[0]}:{elsewhere[1]}, inside a helper: "
                    f"return it, and bind `{s.task} = helper(...)` in {reading.function}()"
                )
            else:
                hint = (
                    f"bind it (`with pl.spmd(...) as {s.task}:` on the stage's kernel, returned "
                    f"by its helper), or name a task {reading.function}() binds: {bound}"
                )
            self.report(
                self.stage_at(it, s, "task"),
                codes.SOURCE_TASK,
                f"stage '{s.name}': task '{s.task}' is bound by no scope or helper return of "
                f"{reading.function}() ({reading.file})",
                hint,
            )

    # -- PC203

    def reads(self, it: _Layer, runs: dict[int, list[Kernel] | None]) -> None:
        for index, run in runs.items():
            if run is None:
                continue
            s = it.layer.stages[index]
            read: set[str] = set()
            for k in run:
                read |= k.reads
            src = {
                it.tensor_of[p]
                for p in it.reading.params_of(read)
                if p in it.tensor_of and self.plan.tensors[it.tensor_of[p]].static
            }
            plan = {
                t
                for t in s.reads
                if t in it.param_of and t in self.plan.tensors and self.plan.tensors[t].static
            }
            missing, extra = sorted(src - plan), sorted(plan - src)
            if not missing and not extra:
                continue
            parts = []
            if missing:
                parts.append(f"the plan misses {', '.join(missing)}")
            if extra:
                parts.append(f"no kernel of it reads {', '.join(extra)}")
            kernels = _run_names(run)
            keep = [t for t in s.reads if t not in extra]
            self.report(
                self.stage_at(it, s, "reads") if s.reads else self.stage_at(it, s, "kernel"),
                codes.SOURCE_READS,
                f"stage '{s.name}' ({kernels}, {run[0].file}:{run[0].line}): " + "; ".join(parts),
                f"reads: [{', '.join([*keep, *missing])}]",
            )

    # -- PC204

    def order(self, it: _Layer, runs: dict[int, list[Kernel] | None]) -> None:
        anc = ancestors(it.reading)
        known = {i: run for i, run in runs.items() if run is not None}
        stages = sorted(known)
        sched = it.layer.schedule

        def before(a: int, b: int) -> bool:
            first = known[b][0].index
            return any(anc[first] >> k.index & 1 for k in known[a])

        for j in stages:
            for i in stages:
                if i >= j:
                    break
                plan_rel = "after" if sched.runs_before(i, j) else "beside"
                if before(i, j):
                    src_rel = "after"
                elif before(j, i):
                    src_rel = "before"
                else:
                    src_rel = "beside"
                if plan_rel == src_rel:
                    continue
                a, b = it.layer.stages[i], it.layer.stages[j]
                ka, kb = known[i][0], known[j][0]
                self.report(
                    self.stage_at(it, b, "kernel"),
                    codes.SOURCE_ORDER,
                    f"stage '{b.name}' runs {plan_rel} '{a.name}' in the plan, but its kernel "
                    f"{kb.name} ({kb.file}:{kb.line}) runs {src_rel} {ka.name} "
                    f"({ka.file}:{ka.line}) in the source",
                    self.deps_hint(it, j, known, before),
                )
                break

    def deps_hint(
        self,
        it: _Layer,
        j: int,
        known: dict[int, list[Kernel]],
        before: Callable[[int, int], bool],
    ) -> str:
        earlier = [i for i in sorted(known) if i < j and before(i, j)]
        direct = [i for i in earlier if not any(before(i, m) for m in earlier if m != i)]
        names = [it.layer.stages[i].name for i in direct]
        later = [i for i in sorted(known) if i > j and before(i, j)]
        if later:
            return (
                f"the source runs '{it.layer.stages[later[0]].name}' first: list it before "
                f"'{it.layer.stages[j].name}'"
            )
        return f"deps: [{', '.join(names)}]"

    # -- PC205, PC206

    def warms(self, it: _Layer) -> None:
        reading = it.reading
        used_warms: set[int] = set()
        used_calls: set[int] = set()
        for w in it.layer.warms:
            problem = self.find_warm(it, w, used_warms, used_calls)
            if problem is None:
                continue
            if w.name in reading.possible or w.name_hint in reading.possible:
                continue
            pos, message, hint = problem
            self.report(pos, codes.SOURCE_CALL, message, hint)
        for i, sw in enumerate(reading.warms):
            if i in used_warms:
                continue
            names = [it.tensor_of.get(t, t) for t in sw.tensors]
            after = ", ".join(sw.dep_names) or "nothing"
            self.report(
                self.warms_at(it),
                codes.SOURCE_WARM,
                f"{sw.file}:{sw.line} runs warm '{sw.name_hint}' ({', '.join(names)}) after "
                f"{after}, which layer kind '{it.kind}' does not declare",
                f"declare it under layers.{it.kind}.warms, or remove the scope",
            )
        for i, c in enumerate(reading.calls):
            if i in used_calls:
                continue
            self.report(
                self.warms_at(it),
                codes.SOURCE_WARM,
                f"{c.file}:{c.line} calls warm '{c.function}', which layer kind '{it.kind}' "
                "does not declare",
                f"declare it under layers.{it.kind}.warms, or remove the call",
            )

    def warms_at(self, it: _Layer) -> Pos:
        if self.model.layers[it.kind].warms:
            return self.v.key_at("layers", it.kind, "warms")
        return self.at("layers", it.kind, "source")

    def find_warm(
        self, it: _Layer, w: ir.Warm, used_warms: set[int], used_calls: set[int]
    ) -> tuple[Pos, str, str] | None:
        """None when the warm is found in the source; else where and why not."""
        reading = it.reading
        anchor = it.layer.stages[w.anchor] if w.anchor is not None else None
        task = reading.tasks.get(anchor.task) if anchor and anchor.task else None
        tensors = tuple(it.param_of.get(e.tensor.name, e.tensor.name) for e in w.entries)
        for i, c in enumerate(reading.calls):
            if c.function == w.name and i not in used_calls:
                used_calls.add(i)
                if task is not None and anchor is not None and c.deps != task.kernels:
                    return (
                        w.after_pos,
                        f"warm '{w.name}' is called at {c.file}:{c.line} after "
                        f"'{c.task}', not after its anchor's task '{anchor.task}'",
                        f"call it with {anchor.task}, or anchor it where the code does",
                    )
                return None
        near = None
        for i, sw in enumerate(reading.warms):
            if sw.name_hint != w.name_hint or i in used_warms:
                continue
            if sw.tensors == tensors and (task is None or sw.deps == task.kernels):
                used_warms.add(i)
                return None
            near = near if near is not None else i
        if near is not None:
            used_warms.add(near)
            sw = reading.warms[near]
            got = ", ".join(it.tensor_of.get(t, t) for t in sw.tensors)
            if sw.tensors != tensors:
                return (
                    w.tensors_pos,
                    f"warm '{w.name}': the scope '{sw.name_hint}' at {sw.file}:{sw.line} warms "
                    f"[{got}], not [{', '.join(e.tensor.name for e in w.entries)}]",
                    f"tensors: [{got}], or change the scope",
                )
            return (
                w.after_pos,
                f"warm '{w.name}': the scope '{sw.name_hint}' at {sw.file}:{sw.line} waits for "
                f"{', '.join(sw.dep_names) or 'nothing'}, not the anchor's task "
                f"'{anchor.task if anchor else '?'}'",
                "anchor it at the stage whose task the scope waits for",
            )
        return (
            w.name_pos,
            f"warm '{w.name}' has no call site in {reading.function}() ({reading.file}): "
            f"neither a call of {w.name}() nor a scope named '{w.name_hint}'",
            f"call {w.name}({', '.join(e.tensor.name for e in w.entries)}, "
            f"{anchor.task if anchor and anchor.task else 'tid'}) after the anchor's kernel, "
            "or remove the warm",
        )


def check_sources(v: Validated, plan: ir.Plan, override: str | None = None) -> list[Diagnostic]:
    """PC200-PC208 for every layer kind of ``plan`` that names its `source`."""
    if v.plan is None or not any(layer.source for layer in v.plan.layers.values()):
        return []
    return SourceChecks(v, plan, override).run()


def _same_shape(
    plan: tuple[int | None, ...], src: tuple[int | None, ...], dyn: tuple[bool, ...]
) -> bool:
    if len(plan) != len(src):
        return False
    for a, b, d in zip(plan, src, dyn, strict=True):
        if d or a is None:
            if d != (a is None):
                return False
        elif b is not None and a != b:
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


def _run_names(run: list[Kernel]) -> str:
    if len(run) == 1:
        return f"kernel {run[0].name}"
    if len(run) == 2:
        return f"kernels {run[0].name}, {run[1].name}"
    return f"kernels {run[0].name} … {run[-1].name}"


def _closest(name: str, names: Iterable[str]) -> str | None:
    found = difflib.get_close_matches(name, list(names), n=1)
    return f"did you mean '{found[0]}'?" if found else None

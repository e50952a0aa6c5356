"""PC205 (a warm in the code the plan does not declare) and PC206 (a warm of the plan
the code never issues)."""

from __future__ import annotations

from typing import Any

from plancc import codes, fixes, ir
from plancc.diagnostics import Pos
from plancc.fixes import Fix
from plancc.source.findings import Findings, LayerReading
from plancc.tables.names import identifier_problem


def check_warms(findings: Findings, it: LayerReading) -> None:
    """PC205, PC206."""
    reading = it.reading
    used_warms: set[int] = set()
    used_calls: set[int] = set()
    for w in it.layer.warms:
        problem = _find_warm(it, w, used_warms, used_calls)
        if problem is None:
            continue
        if w.name in reading.possible or w.name_hint in reading.possible:
            continue
        pos, message, hint = problem
        findings.report(pos, codes.SOURCE_CALL, message, hint, w)
    for i, sw in enumerate(reading.warms):
        if i in used_warms or sw.copy:  # a later copy of an unrolled scope: as its first
            continue
        names = [it.tensor_of.get(t, t) for t in sw.tensors]
        if sw.part:  # a plan warm covers whole tensors: it could never be declared
            findings.report(
                findings.warms_at(it),
                codes.SOURCE_UNRESOLVED,
                f"{sw.file}:{sw.line}: warm '{sw.name_hint}' warms a slice of "
                f"{', '.join(names)} (one layer's part of a stacked tensor, say), which no "
                "plan warm can declare: not compared",
            )
            continue
        after = ", ".join(sw.dep_names) or "nothing"
        declared = {"name": sw.name_hint, "after": _anchor_of(it, sw.deps), "tensors": names}
        findings.report(
            findings.warms_at(it),
            codes.SOURCE_WARM,
            f"{sw.file}:{sw.line} runs warm '{sw.name_hint}' ({', '.join(names)}) after "
            f"{after}, which layer kind '{it.kind}' does not declare",
            f"declare it under layers.{it.kind}.warms ({{name: {sw.name_hint}, after: "
            f"{declared['after']}, tensors: [{', '.join(names)}]}}), or remove "
            f"the scope at {sw.file}:{sw.line}",
            fix=_declare(findings, it, declared),
        )
    for i, c in enumerate(reading.calls):
        if i in used_calls:
            continue
        findings.report(
            findings.warms_at(it),
            codes.SOURCE_WARM,
            f"{c.file}:{c.line} calls warm '{c.function}', which layer kind '{it.kind}' "
            "does not declare",
            f"declare it under layers.{it.kind}.warms (after: {_anchor_of(it, c.deps)}), "
            f"or remove the call at {c.file}:{c.line}",
        )


def _find_warm(
    it: LayerReading, w: ir.Warm, used_warms: set[int], used_calls: set[int]
) -> tuple[Pos, str, str] | None:
    """None when the warm is found in the source; else where and why not."""
    reading = it.reading
    anchor = it.layer.stages[w.anchor] if w.anchor is not None else None
    anchors = [it.layer.stages[a] for a in w.anchors]
    found = [reading.task(s.task) if s.task else None for s in anchors]
    # The task the call waits for; a join's: every anchor's, the last bound named.
    task = None if not anchors or None in found else max(found, key=lambda t: t.end[1])  # type: ignore[union-attr]
    needs = frozenset().union(*(t.kernels for t in found if t is not None))
    tids = ", ".join(s.task or "tid" for s in anchors) or "tid"
    tensors = tuple(it.param_of.get(e.tensor.name, e.tensor.name) for e in w.entries)
    for i, c in enumerate(reading.calls):
        if c.function == w.name and i not in used_calls:
            used_calls.add(i)
            if task is not None and anchor is not None and c.deps != needs:
                return (
                    w.after_pos,
                    f"warm '{w.name}' is called at {c.file}:{c.line} after "
                    f"'{c.task}', not after its anchor's task '{tids}'",
                    f"call it with {tids}, or anchor it where the code does",
                )
            return None
    near = None
    for i, sw in enumerate(reading.warms):
        if sw.name_hint != w.name_hint or i in used_warms or sw.copy:
            continue
        if sw.tensors == tensors and (task is None or sw.deps == needs):
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
            f"'{tids if anchor else '?'}'",
            "anchor it at the stage whose task the scope waits for",
        )
    return (
        w.name_pos,
        f"warm '{w.name}' has no call site in {reading.function}() ({reading.file}): "
        f"neither a call of {w.name}() nor a scope named '{w.name_hint}'",
        f"call {w.name}({', '.join(_arguments(w))}, {tids}) "
        + (
            f"after {task.after}, the end of the block that binds {task.name}"
            if task
            else "once the anchor's task is bound"
        )
        + ", or remove the warm",
    )


def _arguments(w: ir.Warm) -> list[str]:
    """The model's variables a call of the warm passes before its TaskIds: its tensors
    (a stacked one's stack), then each stack's index once."""
    indices = [e.tensor.stacked.index for e in w.entries if e.tensor.stacked is not None]
    return [*(e.tensor.name for e in w.entries), *dict.fromkeys(indices)]


def _declare(findings: Findings, it: LayerReading, declared: dict[str, Any]) -> Fix | None:
    """PC205's fix: the declaration its hint prints, added to the layer kind's warms (unsafe:
    plancc then generates the warm and judges it); none when the anchor is unknown, a
    tensor is no plan tensor, or the name is taken or no warm's name."""
    plan = findings.plan
    name, tensors = declared["name"], declared["tensors"]
    taken = {*plan.tensors, *(d.name for d in plan.dims), *(w.name for w in plan.warms)}
    if (
        declared["after"] == "?"
        or any(t not in plan.tensors for t in tensors)
        or name in taken
        or identifier_problem(name, reserved=True) is not None
    ):
        return None
    path = ("layers", it.kind, "warms")
    title = f"declare warm '{name}'"
    if findings.model.layers[it.kind].warms:
        return fixes.append(path, [declared], title, fixes.Safety.UNSAFE)
    return fixes.replace(path, [declared], title, fixes.Safety.UNSAFE)


def _anchor_of(it: LayerReading, kernels: frozenset[int]) -> str:
    """The plan stage whose task stands for ``kernels``: a warm's anchor, or '?'."""
    for s in it.layer.stages:
        task = it.reading.task(s.task or "")
        if task is not None and task.kernels == kernels:
            return s.name
    return "?"

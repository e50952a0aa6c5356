"""PC205 (a warm in the code the plan does not declare) and PC206 (a warm of the plan
the code never issues).

The code's warms are read by ``warm_forms`` into entries (a tensor, and the
layer-index variable of a stacked weight's slab); ``entry_problem`` compares them
with a plan warm's: the same tensors in issue order, each stacked one's slab taken
at the tensor's `stacked.index`."""

from __future__ import annotations

from typing import Any

from plancc import codes, fixes, ir
from plancc.diagnostics import Pos
from plancc.fixes import Fix
from plancc.source.findings import Findings, LayerReading
from plancc.source.reading import WarmCall, WarmEntry
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
        shown = _shown(it, sw.entries)
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
        anchor = _anchor_of(it, sw.deps)
        declared = {"name": sw.name_hint, "after": anchor, "tensors": names}
        declarable = all(_stacked_as(findings, it, e) for e in sw.entries)
        findings.report(
            findings.warms_at(it),
            codes.SOURCE_WARM,
            f"{sw.file}:{sw.line} runs warm '{sw.name_hint}' ({shown}) after "
            f"{after}, which layer kind '{it.kind}' does not declare",
            f"declare it under layers.{it.kind}.warms ({{name: {sw.name_hint}, after: "
            f"{_after_text(anchor)}, tensors: [{', '.join(names)}]}}), or remove "
            f"the scope at {sw.file}:{sw.line}",
            fix=_declare(findings, it, declared) if declarable else None,
        )
    for i, c in enumerate(reading.calls):
        if i in used_calls or c.copy:
            continue
        findings.report(
            findings.warms_at(it),
            codes.SOURCE_WARM,
            f"{c.file}:{c.line} calls warm '{c.function}', which layer kind '{it.kind}' "
            "does not declare",
            f"declare it under layers.{it.kind}.warms (after: "
            f"{_after_text(_anchor_of(it, c.deps))}), or remove the call at {c.file}:{c.line}",
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
    for i, c in enumerate(reading.calls):
        if c.function == w.name and i not in used_calls and not c.copy:
            used_calls.add(i)
            if task is not None and anchor is not None and c.deps != needs:
                return (
                    w.after_pos,
                    f"warm '{w.name}' is called at {c.file}:{c.line} after "
                    f"{_names(c.tasks)}, not after its anchor's task{'s' * (len(anchors) > 1)} "
                    f"'{tids}'",
                    f"call it with {tids}, or anchor it where the code does",
                )
            problem = entry_problem(it, w, c.entries, c)
            if problem is not None:
                return (
                    w.tensors_pos,
                    f"warm '{w.name}' is called at {c.file}:{c.line} with {problem}",
                    f"call it as {w.name}({', '.join(_arguments(w))}, {tids}), or change "
                    "its tensors",
                )
            return None
    near = None
    for i, sw in enumerate(reading.warms):
        if sw.name_hint != w.name_hint or i in used_warms or sw.copy:
            continue
        if entry_problem(it, w, sw.entries) is None and (task is None or sw.deps == needs):
            used_warms.add(i)
            return None
        near = near if near is not None else i
    if near is not None:
        used_warms.add(near)
        sw = reading.warms[near]
        problem = entry_problem(it, w, sw.entries)
        if problem is not None:
            got = ", ".join(it.tensor_of.get(t, t) for t in sw.tensors)
            return (
                w.tensors_pos,
                f"warm '{w.name}': the scope '{sw.name_hint}' at {sw.file}:{sw.line} warms "
                f"{problem}",
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


def entry_problem(
    it: LayerReading, w: ir.Warm, entries: tuple[WarmEntry, ...], call: WarmCall | None = None
) -> str | None:
    """How the code's warm ``entries`` differ from the plan warm ``w``'s (`[a, b], not
    [c]`), or None: the same tensors in order, each stacked tensor's slab taken at its
    `stacked.index` and no other tensor sliced. A ``call`` whose definition was not read
    shows no slab: there, each stacked tensor's index must be among its arguments."""
    want = [(e.tensor.name, _index(e.tensor)) for e in w.entries]
    got = [(it.tensor_of.get(e.tensor or "?", e.tensor or "?"), e.index) for e in entries]
    if call is None or call.read:
        return None if got == want else f"[{_list(got)}], not [{_list(want)}]"
    # A call of a module not read: its tensors, and every stack's index among its scalars.
    names, wanted = [t for t, _ in got], [t for t, _ in want]
    if names != wanted:
        return f"[{', '.join(names)}], not [{', '.join(wanted)}]"
    indices = sorted({i for _, i in want if i is not None})
    if all(i in call.scalars for i in indices):
        return None
    given = ", ".join(f"'{s}'" for s in call.scalars) or "none"
    return f"the index {given}, not the stack's index {', '.join(repr(i) for i in indices)}"


def _index(t: ir.Tensor) -> str | None:
    return t.stacked.index if t.stacked is not None else None


def _list(entries: list[tuple[str, str | None]]) -> str:
    return ", ".join(t if i is None else f"{t} (slab at {i})" for t, i in entries)


def _shown(it: LayerReading, entries: tuple[WarmEntry, ...]) -> str:
    return _list([(it.tensor_of.get(e.tensor or "?", e.tensor or "?"), e.index) for e in entries])


def _stacked_as(findings: Findings, it: LayerReading, e: WarmEntry) -> bool:
    """Whether a plan warm naming entry ``e``'s tensor would warm what the code does: the
    whole tensor where the plan's is not stacked, its slab at `stacked.index` where it is."""
    t = findings.plan.tensors.get(it.tensor_of.get(e.tensor or "", ""))
    return (_index(t) if t is not None else None) == e.index


def _names(tasks: tuple[str | None, ...]) -> str:
    return ", ".join(f"'{t or '?'}'" for t in tasks) or "nothing"


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


def _anchor_of(it: LayerReading, kernels: frozenset[int]) -> str | list[str]:
    """The plan stage whose task stands for ``kernels`` (a warm's anchor), or the stages
    whose tasks together stand for them (a join); '?' when none do."""
    parts: list[tuple[frozenset[int], str]] = []
    for s in it.layer.stages:
        task = it.reading.task(s.task or "")
        if task is None or not task.kernels:
            continue
        if task.kernels == kernels:
            return s.name
        if task.kernels <= kernels and all(task.kernels != k for k, _ in parts):
            parts.append((task.kernels, s.name))
    if len(parts) > 1 and frozenset().union(*(k for k, _ in parts)) == kernels:
        return [name for _, name in parts]
    return "?"


def _after_text(anchor: str | list[str]) -> str:
    return anchor if isinstance(anchor, str) else f"[{', '.join(anchor)}]"

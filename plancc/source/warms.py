"""PC205 (a warm in the code the plan does not declare) and PC206 (a warm of the plan
the code never issues).

The code's warms are read by ``warm_forms`` into entries (a tensor, the layer-index
variable of a stacked weight's slab, a prefix's rows) and the `if`s they are issued
under; ``entry_problem`` compares the entries with a plan warm's: the same tensors in
issue order, each stacked one's slab taken at the tensor's `stacked.index` (a
cross-layer warm's at the next layer's, `layer_idx + 1`), the same rows of each prefix;
``condition_problem`` the `if`s: one per guard of the plan's warm (its param's run-time
variable, the comparison, the bound), the test that spares the last layer a
cross-layer warm, no other. A cross-layer warm's call may stand outside the layer
function, between one layer and the next (``warm_forms.outside_calls``)."""

from __future__ import annotations

from typing import Any

from plancc import codes, fixes, ir
from plancc.diagnostics import Pos
from plancc.fixes import Fix
from plancc.resolve.namespace import last_layer_condition
from plancc.source.findings import Findings, LayerReading
from plancc.source.reading import Condition, Warm, WarmCall, WarmEntry
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
        declared, unknown = _declaration(findings, it, sw, anchor)
        declarable = unknown is not None and not unknown
        params = "".join(f"a param whose `source` is {v} and " for v in unknown or ())
        findings.report(
            findings.warms_at(it),
            codes.SOURCE_WARM,
            f"{sw.file}:{sw.line} runs warm '{sw.name_hint}' ({shown}) after "
            f"{after}{_under(sw.conditions)}, which layer kind '{it.kind}' does not declare",
            f"declare {params}it under layers.{it.kind}.warms ({_flow(declared)}), or "
            f"remove the scope at {sw.file}:{sw.line}",
            fix=_declare(findings, it, declared) if declarable else None,
        )
    for i, c in enumerate(reading.calls):
        if i in used_calls or c.copy:
            continue
        findings.report(
            findings.warms_at(it),
            codes.SOURCE_WARM,
            f"{c.file}:{c.line} calls warm '{c.function}'{_under(c.conditions)}, which layer "
            f"kind '{it.kind}' does not declare",
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
            if c.arity is not None:  # its arguments cannot be matched with its parameters
                return (
                    w.name_pos,
                    f"warm '{w.name}' is called at {c.file}:{c.line} with {c.arity}",
                    f"call it as {_call_text(it, w, tids)}",
                )
            if c.unbound:  # Python raises NameError at the call
                names = ", ".join(f"'{n}'" for n in c.unbound)
                return (
                    w.name_pos,
                    f"warm '{w.name}' is called at {c.file}:{c.line} with {names}, which "
                    f"nothing binds there (Python raises NameError)",
                    f"bind {_what(w, c.unbound)} before the call",
                )
            if task is not None and anchor is not None and c.deps != needs:
                return (
                    w.after_pos,
                    f"warm '{w.name}' is called at {c.file}:{c.line} after "
                    f"{_names(c.tasks)}, not after its anchor's task{'s' * (len(anchors) > 1)} "
                    f"'{tids}'",
                    f"call it with {tids}, or anchor it where the code does",
                )
            return _at_call(it, w, c, tids)
    if any(
        sw.name_hint == w.name_hint and i not in used_warms and not sw.copy
        for i, sw in enumerate(reading.warms)
    ):
        return _at_scopes(it, w, (task is None, needs, tids), used_warms)
    if w.next_layer:
        return _outside(it, w, tids)
    return (
        w.name_pos,
        f"warm '{w.name}' has no call site in {reading.function}() ({reading.file}): "
        f"neither a call of {w.name}() nor a scope named '{w.name_hint}'",
        f"call {_call_text(it, w, tids)} "
        + (
            f"after {task.after}, the end of the block that binds {task.name}"
            if task
            else "once the anchor's task is bound"
        )
        + ", or remove the warm",
    )


def _at_scopes(
    it: LayerReading, w: ir.Warm, wanted: tuple[bool, frozenset[int], str], used_warms: set[int]
) -> tuple[Pos, str, str] | None:
    """The scopes named as the warm's `name_hint` (``wanted``: whether its anchor's task is
    unknown, the kernels it stands for, its names): the first with the warm's entries and
    tasks, else the first of them, and how it differs."""
    reading = it.reading
    unknown, needs, tids = wanted
    near = None
    for i, sw in enumerate(reading.warms):
        if sw.name_hint != w.name_hint or i in used_warms or sw.copy:
            continue
        if entry_problem(it, w, sw.entries) is None and (unknown or sw.deps == needs):
            used_warms.add(i)
            problem = condition_problem(it, w, sw.conditions)
            if problem is None:
                return None
            return (
                w.guard_pos,
                f"warm '{w.name}': the scope '{sw.name_hint}' at {sw.file}:{sw.line} is issued "
                f"{problem}",
                "change the `if`s around the scope, or the warm's guards",
            )
        near = near if near is not None else i
    assert near is not None  # called where such a scope is
    used_warms.add(near)
    sw = reading.warms[near]
    problem = entry_problem(it, w, sw.entries)
    if problem is not None:
        got = ", ".join(it.tensor_of.get(t, t) for t in sw.tensors)
        return (
            w.tensors_pos,
            f"warm '{w.name}': the scope '{sw.name_hint}' at {sw.file}:{sw.line} warms {problem}",
            f"tensors: [{got}], or change the scope",
        )
    return (
        w.after_pos,
        f"warm '{w.name}': the scope '{sw.name_hint}' at {sw.file}:{sw.line} waits for "
        f"{', '.join(sw.dep_names) or 'nothing'}, not the anchor's task "
        f"'{tids if w.anchor is not None else '?'}'",
        "anchor it at the stage whose task the scope waits for",
    )


def _at_call(it: LayerReading, w: ir.Warm, c: WarmCall, tids: str) -> tuple[Pos, str, str] | None:
    """A call of the warm's function, with its anchor's tasks: its tensors, its `if`s."""
    problem = entry_problem(it, w, c.entries, c)
    if problem is not None:
        return (
            w.tensors_pos,
            f"warm '{w.name}' is called at {c.file}:{c.line} with {problem}",
            f"call it as {_call_text(it, w, tids)}, or change its tensors",
        )
    unread = () if c.read else c.scalars  # its guards' variables among its arguments
    problem = condition_problem(it, w, c.conditions, unread)
    if problem is not None:
        return (
            w.guard_pos,
            f"warm '{w.name}' is called at {c.file}:{c.line} {problem}",
            f"call it as {_call_text(it, w, tids)}, or change its guards",
        )
    return None


def _outside(it: LayerReading, w: ir.Warm, tids: str) -> tuple[Pos, str, str] | None:
    """A cross-layer warm whose call is not in the layer function: its call between one
    layer and the next, in another function of the layer's directory, under the `if`
    that spares the last layer."""
    found = it.outside.get(w.name, [])
    for c in found:
        problem = _last_layer_problem(it, w, c.conditions)
        if problem is None:
            return None
        return (
            w.guard_pos,
            f"warm '{w.name}' is called at {c.file}:{c.line} ({c.caller}) {problem}",
            f"call it as {_call_text(it, w, tids)}",
        )
    return (
        w.name_pos,
        f"warm '{w.name}' has no call site in {it.reading.function}() ({it.reading.file}) "
        "nor in a function of its directory: neither a call of "
        f"{w.name}() nor a scope named '{w.name_hint}'",
        f"call {_call_text(it, w, tids)} between one layer and the next, or remove the warm",
    )


def entry_problem(
    it: LayerReading, w: ir.Warm, entries: tuple[WarmEntry, ...], call: WarmCall | None = None
) -> str | None:
    """How the code's warm ``entries`` differ from the plan warm ``w``'s (`[a, b], not
    [c]`), or None: the same tensors in order, each stacked tensor's slab taken at its
    `stacked.index` and no other tensor sliced. A ``call`` whose definition was not read
    shows no slab: there, each stacked tensor's index must be among its arguments."""
    want = [(e.tensor.name, _index(e.tensor, w.next_layer), _rows(e)) for e in w.entries]
    got = [(it.tensor_of.get(e.tensor or "?", e.tensor or "?"), e.index, e.rows) for e in entries]
    if call is None or call.read:
        return None if got == want else f"[{_list(got)}], not [{_list(want)}]"
    # A call of a module not read: its tensors, and every stack's index among its scalars.
    names, wanted = [t for t, _, _ in got], [t for t, _, _ in want]
    if names != wanted:
        return f"[{', '.join(names)}], not [{', '.join(wanted)}]"
    indices = sorted({i for _, i, _ in want if i is not None})
    if all(i in call.scalars for i in indices):
        return None
    given = ", ".join(f"'{s}'" for s in call.scalars) or "none"
    return f"the index {given}, not the stack's index {', '.join(repr(i) for i in indices)}"


def _index(t: ir.Tensor, next_layer: bool = False) -> str | None:
    """The index a warm takes a stacked tensor's slab at: the stack's, or (a cross-layer
    warm) the next layer's."""
    if t.stacked is None:
        return None
    return f"{t.stacked.index} + 1" if next_layer else t.stacked.index


def _rows(e: ir.WarmEntry) -> tuple[int, int] | None:
    return None if e.rows is None else (e.rows.lo, e.rows.hi)


Shown = tuple[str, str | None, tuple[int, int] | None]  # a tensor, its slab's index, rows


def _list(entries: list[Shown]) -> str:
    out = []
    for t, i, r in entries:
        text = t if r is None else f"{t} rows [{r[0]}, {r[1]})"
        out.append(text if i is None else f"{text} (slab at {i})")
    return ", ".join(out)


def _shown(it: LayerReading, entries: tuple[WarmEntry, ...]) -> str:
    return _list(
        [(it.tensor_of.get(e.tensor or "?", e.tensor or "?"), e.index, e.rows) for e in entries]
    )


def condition_problem(
    it: LayerReading, w: ir.Warm, found: tuple[Condition, ...], scalars: tuple[str, ...] = ()
) -> str | None:
    """How the `if`s a warm of the code is issued under differ from what the plan warm
    ``w`` says, in words (`without its guard …`), or None: one `if` per guard on its
    param's run-time variable (``scalars``: a call whose definition was not read passes
    the variable, its `if` unseen), the last layer's test for a cross-layer warm, and no
    other `if`."""
    left = list(found)
    params = {p.name: p for p in it.plan_params}
    for g in w.guards:
        names = _variables(params.get(g.param), g)
        match = next(
            (c for c in left if c.variable in names and c.op == g.op and c.bound == g.bound), None
        )
        if match is not None:
            left.remove(match)
        elif not names & set(scalars):
            return f"without its guard '{g}' (`if {g.variable} {g.op} {g.bound}:`)"
    if w.next_layer:
        problem = _last_layer_problem(it, w, tuple(left))
        if problem is not None:
            return problem
        left = [c for c in left if not _last_layer(it, w, c)]
    if left:
        said = ", ".join(f"`if {c}`" for c in left)
        return f"under {said}, which the plan's warm '{w.name}' does not guard"
    return None


def _variables(param: ir.Param | None, g: ir.Guard) -> set[str]:
    """The model's variable of a guard's param, as spelled and as the generated function
    names it (no leading underscores)."""
    return {g.variable, *((param.source,) if param is not None and param.source else ())}


def _layers(it: LayerReading, w: ir.Warm) -> int | None:
    """How many layers a cross-layer warm's test counts: its stack's, else the forward's."""
    for e in w.entries:
        if e.tensor.stacked is not None:
            return e.tensor.stacked.layers
    return it.forward_layers


def _last_layer(it: LayerReading, w: ir.Warm, c: Condition) -> bool:
    """Whether ``c`` spares the last layer: `I < L - 1` (or `I <= L - 2`), L the layers."""
    layers = _layers(it, w)
    if c.bound is None or layers is None:
        return c.op in ("<", "<=")
    return (c.op, c.bound) in (("<", layers - 1), ("<=", layers - 2))


def _last_layer_problem(it: LayerReading, w: ir.Warm, found: tuple[Condition, ...]) -> str | None:
    if any(_last_layer(it, w, c) for c in found):
        return None
    stacked = any(e.tensor.stacked is not None for e in w.entries)
    why = (
        "the last layer would warm one slab past the stack"
        if stacked
        else "the last layer has no next one to warm"
    )
    return f"without `if {last_layer_condition(w)}:` around it: {why}"


def _call_text(it: LayerReading, w: ir.Warm, tids: str) -> str:
    """How the warm is called: its arguments (each guard's variable too), and a
    cross-layer warm under the test that spares the last layer."""
    text = f"{w.name}({', '.join(_arguments(w))}, {tids})"
    return f"`if {last_layer_condition(w)}: {text}`" if w.next_layer else text


def _stacked_as(findings: Findings, it: LayerReading, e: WarmEntry, next_layer: bool) -> bool:
    """Whether a plan warm naming entry ``e``'s tensor would warm what the code does: the
    whole tensor where the plan's is not stacked, its slab at `stacked.index` where it is
    (the next layer's for a cross-layer warm)."""
    t = findings.plan.tensors.get(it.tensor_of.get(e.tensor or "", ""))
    return (_index(t, next_layer) if t is not None else None) == e.index


def _declaration(
    findings: Findings, it: LayerReading, sw: Warm, anchor: str | list[str]
) -> tuple[dict[str, Any], list[str] | None]:
    """The plan warm that would describe the scope ``sw`` (a prefix with its `rows`, a
    warm of the next layer's slabs `next_layer`, each `if` a `guard` on the plan's param
    of that variable), and the variables of its `if`s no param of the plan is (a guard
    on `PARAM` then): the plan can declare it once there are none; None when it cannot
    (a tensor warmed otherwise than the plan declares it)."""
    names = [it.tensor_of.get(t, t) for t in sw.tensors]
    stacked = [e for e in sw.entries if e.index is not None]
    next_layer = bool(stacked) and all(e.index.endswith(" + 1") for e in stacked if e.index)
    declared: dict[str, Any] = {"name": sw.name_hint, "after": anchor}
    if next_layer:
        declared["next_layer"] = True
    by_variable = {p.source or p.variable: p for p in findings.plan.params}
    by_variable |= {p.variable: p for p in findings.plan.params}
    guards = []
    unknown: list[str] = []
    for c in sw.conditions:
        param = by_variable.get(c.variable)
        if next_layer and param is None and c.op in ("<", "<="):
            continue  # the last layer's test
        guards.append(f"{param.name if param else 'PARAM'} {c.op} {c.bound}")
        if param is None or c.bound is None:
            unknown.append(c.variable)
    if guards:
        declared["guard"] = guards[0] if len(guards) == 1 else guards
    declared["tensors"] = [
        n if e.rows is None else {"tensor": n, "rows": list(e.rows)}
        for n, e in zip(names, sw.entries, strict=True)
    ]
    if not all(_stacked_as(findings, it, e, next_layer) for e in sw.entries):
        return declared, None
    return declared, unknown


def _under(conditions: tuple[Condition, ...]) -> str:
    return "".join(f" under `if {c}`" for c in conditions)


def _flow(value: Any) -> str:
    """A declaration as its hint prints it: YAML flow style, names plain."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    if value is True:
        return "true"
    return str(value)


def _names(tasks: tuple[str | None, ...]) -> str:
    return ", ".join(f"'{t or '?'}'" for t in tasks) or "nothing"


def _what(w: ir.Warm, names: tuple[str, ...]) -> str:
    """The unbound variables, each a guard's with its param: what the model must bind."""
    params = {g.variable: g.param for g in w.guards}
    return ", ".join(
        f"{n} (param {params[n]}'s value at run time)" if n in params else n for n in names
    )


def _arguments(w: ir.Warm) -> list[str]:
    """The model's variables a call of the warm passes before its TaskIds: its tensors
    (a stacked one's stack; the next layer's tensors, `wq_a_next`, for a cross-layer warm
    of unstacked ones), then each stack's index once (the next layer's: `layer_idx + 1`),
    then each guard's run-time variable once."""
    tensors = [
        f"{e.tensor.name}_next" if w.next_layer and e.tensor.stacked is None else e.tensor.name
        for e in w.entries
    ]
    indices = [_index(e.tensor, w.next_layer) for e in w.entries if e.tensor.stacked is not None]
    guards = [g.variable for g in w.guards]
    return [*tensors, *dict.fromkeys(i for i in indices if i), *dict.fromkeys(guards)]


def _declare(findings: Findings, it: LayerReading, declared: dict[str, Any]) -> Fix | None:
    """PC205's fix: the declaration its hint prints, added to the layer kind's warms (unsafe:
    plancc then generates the warm and judges it); none when the anchor is unknown, a
    tensor is no plan tensor, or the name is taken or no warm's name."""
    plan = findings.plan
    name = declared["name"]
    tensors = [t["tensor"] if isinstance(t, dict) else t for t in declared["tensors"]]
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
    """The plan stage or stages (a join) whose tasks stand for ``kernels``; '?' when none do."""
    stages = ((s.name, s.task) for s in it.layer.stages if s.task)
    found = it.reading.anchor(stages, kernels)
    return "?" if found is None else found


def _after_text(anchor: str | list[str]) -> str:
    return anchor if isinstance(anchor, str) else f"[{', '.join(anchor)}]"

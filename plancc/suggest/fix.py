"""`plancc suggest --fix`: the top gain of each layer kind written as its warm.

A warm written has its candidate's forms (`next_layer: true`, a prefix's `{tensor,
rows}`, a `guard`); where it is a version of a declared warm, what it shares with it
stays as the plan writes it (a prefix's rows as expressions, its guard's text).

Written through the fixes' edits (``plancc.fixes``: one ``Replace`` of the kind's
`warms`, unsafe, as every warm moved in time), made on the plan's text by the one
interpreter of a fix (``plancc.edits.interpret.apply_fixes``, as `validate --fix`
makes them: only the values that change are written, comments, BOM and line breaks
kept). A kind whose top is "no warm"
is left as it is, and so is one whose top gain is its declared warm already. The
plan written must validate without an error, or nothing is written.
"""

from __future__ import annotations

from pathlib import Path as FilePath
from typing import Any

from plancc import ir
from plancc.api import diagnose_plan
from plancc.codes import Severity
from plancc.diagnostics import Diagnostic
from plancc.edits.interpret import FixError, apply_fixes
from plancc.fixes import Append, Edit, Fix, Path, Remove, Replace, Safety, Value
from plancc.load import MAX_BYTES, load
from plancc.load.inputs import PlanInput
from plancc.reading import read_regular
from plancc.suggest import LayerSuggestions, Suggestions
from plancc.suggest.candidates import Part, guard_text, part_of
from plancc.suggest.evaluate import warm_name
from plancc.suggest.rank import label
from plancc.usage import UsageError
from plancc.write import WriteError, replace


def _edits(data: Any, layer: ir.Layer, top: LayerSuggestions) -> tuple[Edit, ...]:
    """The top gain written as the kind's warms. Each of its warms goes into the declared
    warm it is a version of (``_versions``), which keeps its name, `name_hint` and
    comments (`after` and `tensors` rewritten; its `allow` and `reason` only when the
    candidate was judged with them; any other key goes: the warm written is the one
    judged); a declared warm it is no version of is removed, with its own comments only;
    a warm of it that is a version of none is added. ``data``: the plan's tree."""
    gain = top.top_gain
    assert gain is not None
    c = gain.evaluation.candidate
    path: Path = ("layers", layer.name, "warms")
    declared = [w for w in layer.warms if len(w.path) == 4 and w.path[:3] == path]
    if not declared:  # none to keep: the list written whole
        return (Replace(path, [_new(layer.name, part, i) for i, part in enumerate(c.parts)]),)
    edits: list[Edit] = []
    kept = _versions(layer, declared, c.parts)
    for i, part in enumerate(c.parts):
        w = kept.get(i)
        if w is None:
            continue
        anchor = part.anchor
        edits += [
            Replace((*w.path, "after"), anchor[0] if len(anchor) == 1 else list(anchor)),
            Replace((*w.path, "tensors"), _items(data, w, part)),
        ]
        judged = {"name", "name_hint", "after", "tensors"}
        judged |= {"allow", "reason"} if w in c.warms else set()
        edits += _forms(data, w, part, judged)
        entry = _at(data, w.path)
        dropped = tuple(k for k in entry if k not in judged) if isinstance(entry, dict) else ()
        if dropped:
            edits.append(Remove(w.path, dropped))
    gone = tuple(sorted(int(w.path[3]) for w in declared if w not in kept.values()))
    if gone:
        edits.append(Remove(path, gone))
    added = [_new(layer.name, part, i) for i, part in enumerate(c.parts) if i not in kept]
    if added:
        edits.append(Append(path, tuple(added)))
    return tuple(edits)


def _versions(
    layer: ir.Layer, declared: list[ir.Warm], parts: tuple[Part, ...]
) -> dict[int, ir.Warm]:
    """The declared warm each warm of the candidate (by its index) is a version of: the one
    with its anchor and tensors, else with its tensors, else the one whose tensors it
    shares most (by bytes); the kind's one warm, when one warm replaces it. Each declared
    warm is the version of one warm at most."""
    out: dict[int, ir.Warm] = {}

    def kinship(part: Part, w: ir.Warm) -> tuple[bool, bool, int]:
        ours = part_of(layer, w)
        common = [e.tensor for e in w.entries if e.tensor.name in part.tensors]
        shared = sum(t.bytes or 0 for t in common) or len(common)
        return ours == part, set(ours.tensors) == set(part.tensors), shared

    pairs = [
        (kinship(p, w), -i, -k, i, w) for i, p in enumerate(parts) for k, w in enumerate(declared)
    ]
    for score, _, _, i, w in sorted(pairs, key=lambda p: p[:3], reverse=True):
        if score[2] and i not in out and w not in out.values():
            out[i] = w
    if not out and len(parts) == 1 and len(declared) == 1:
        out[0] = declared[0]
    return out


def _at(data: Any, path: Path) -> Any:
    for part in path:
        data = data[part]
    return data


def _new(kind: str, part: Part, i: int) -> dict[str, Value]:
    anchor = part.anchor
    warm: dict[str, Value] = {
        "name": warm_name(kind, part.tensors, i),
        "after": anchor[0] if len(anchor) == 1 else list(anchor),
    }
    if part.next_layer:
        warm["next_layer"] = True
    if part.guards:
        warm["guard"] = _guard(part)
    warm["tensors"] = [_item(part, j) for j in range(len(part.tensors))]
    return warm


def _item(part: Part, j: int) -> Value:
    """A tensor of the part as a warm lists it: its name, or a prefix `{tensor, rows}`."""
    rows = part.range_of(j)
    name = part.tensors[j]
    return name if rows is None else {"tensor": name, "rows": list(rows)}


def _guard(part: Part) -> Value:
    guards = [guard_text(g) for g in part.guards]
    return guards[0] if len(guards) == 1 else guards


def _items(data: Any, w: ir.Warm, part: Part) -> list[Value]:
    """The part's tensors as the declared warm ``w`` becomes: an item ``w`` has (the same
    tensor and rows) as the plan writes it (a prefix's rows as their expressions)."""
    own = {
        (e.tensor.name, None if e.rows is None else (e.rows.lo, e.rows.hi)): e.index
        for e in w.entries
    }
    out: list[Value] = []
    for j, name in enumerate(part.tensors):
        at = own.get((name, part.range_of(j)))
        out.append(_item(part, j) if at is None else _at(data, (*w.path, "tensors", at)))
    return out


def _forms(data: Any, w: ir.Warm, part: Part, judged: set[str]) -> list[Edit]:
    """The part's `next_layer` and `guard` on the declared warm ``w`` (``judged``: the keys
    written, which those join): kept as the plan writes them where the same."""
    edits: list[Edit] = []
    if part.next_layer:
        judged.add("next_layer")
        if not w.next_layer:
            edits.append(Replace((*w.path, "next_layer"), True))
    if part.guards:
        judged.add("guard")
        if tuple((g.param, g.op, g.bound) for g in w.guards) != part.guards:
            edits.append(Replace((*w.path, "guard"), _guard(part)))
    return edits


def fix(found: Suggestions) -> list[str]:
    """Write each kind's top gain; what was done, a line per layer kind."""
    assert found.plan is not None
    said: list[str] = []
    tops: list[tuple[ir.Layer, LayerSuggestions]] = []
    for top in found.layers:
        gain = top.top_gain
        layer = found.plan.layers[top.kind]
        if gain is None:
            said.append(f"{top.kind}: nothing beats no warm: nothing written")
        elif gain.evaluation.candidate.parts == tuple(part_of(layer, w) for w in layer.warms):
            said.append(f"{top.kind}: the top gain ({label(gain.evaluation)}) is its warm already")
        else:
            tops.append((layer, top))
            said.append(f"{top.kind}: wrote warm {label(gain.evaluation)}")
    if tops:
        _write(found.file, tops, found.source_root)
    return said


def _write(
    file: str, tops: list[tuple[ir.Layer, LayerSuggestions]], source_root: str | None
) -> None:
    path = FilePath(file)
    try:
        raw = read_regular(path, MAX_BYTES)  # as a plan is read: never waited on, capped
    except OSError as exc:  # its words, not "[Errno 22] ..."
        raise UsageError(f"{file}: cannot write the suggestion: {exc.strerror or exc}") from None
    doc = load(file, raw)
    if isinstance(doc, Diagnostic):  # changed since it was read: say so, write nothing
        raise UsageError(f"{file}: cannot write the suggestion: {doc.message}")
    fixes = []
    for layer, top in tops:
        assert top.top_gain is not None
        title = f"warm {label(top.top_gain.evaluation)}"
        fixes.append(Fix(title, _edits(doc.data, layer, top), Safety.UNSAFE))
    try:
        data = apply_fixes(doc, fixes)
    except FixError as exc:
        raise UsageError(f"{file}: cannot write the suggestion: {exc}") from None
    errors = [
        d
        for d in diagnose_plan(PlanInput(file, path), data, source_root=source_root).diagnostics
        if d.severity is Severity.ERROR
    ]
    if errors:  # a safety net: the candidate was checked, the text must agree
        d = errors[0]
        raise UsageError(f"{file}: the suggestion would not validate ({d.code}: {d.message})")
    try:
        replace(path, data)
    except WriteError as exc:
        raise UsageError(str(exc)) from None

"""`plancc suggest --fix`: the top gain of each layer kind written as its warm.

A new warm carries its candidate's forms (`next_layer: true`, a prefix's `{tensor,
rows}`, `guard`); a declared warm it repeats is left as the plan writes it. Written
through the fixes' edits (``plancc.fixes``: one ``Replace`` of the kind's
`warms`, unsafe, as every warm moved in time), made on the plan's text by the one
interpreter of a fix (``plancc.edits.interpret.apply_fixes``, as `validate --fix`
makes them: only the values that change are written, comments, BOM and line breaks
kept). A kind whose top is "no warm"
is left as it is, and so is one whose top gain is its declared warm already. The
plan written must validate without an error, or nothing is written.
"""

from __future__ import annotations

from pathlib import Path

from plancc import ir
from plancc.api import diagnose_plan
from plancc.codes import Severity
from plancc.diagnostics import Diagnostic
from plancc.edits.interpret import FixError, apply_fixes
from plancc.fixes import Fix, Replace, Safety, Value
from plancc.load import MAX_BYTES, Document, load
from plancc.load.inputs import PlanInput
from plancc.reading import read_regular
from plancc.suggest import LayerSuggestions, Suggestions
from plancc.suggest.candidates import Part, guard_text, part_of
from plancc.suggest.evaluate import warm_name
from plancc.suggest.rank import label
from plancc.usage import UsageError
from plancc.write import WriteError, replace


def _warms(layer: ir.Layer, top: LayerSuggestions, doc: Document) -> list[Value]:
    """The top gain as the kind's `warms`: a declared warm it repeats stays as the plan
    writes it (its name, `allow`, `reason`, the expressions of its rows and guard), a
    declared warm it moves keeps its name, and so does the kind's one warm when one warm
    replaces it. A new warm has the forms of its candidate: `next_layer`, a prefix's
    `rows`, a `guard`."""
    gain = top.top_gain
    assert gain is not None
    parts = gain.evaluation.candidate.parts
    declared = {part_of(layer, w): w for w in layer.warms}
    out: list[Value] = []
    for i, part in enumerate(parts):
        w = declared.get(part)
        if w is not None:  # the plan's own warm: its text is left as it is
            out.append(_node(doc, w.path))
            continue
        w = gain.evaluation.candidate.warms[i] if i < len(gain.evaluation.candidate.warms) else None
        if w is not None and part_of(layer, w)._replace(guards=part.guards) == part:
            out.append(_guarded(_node(doc, w.path), part))  # the plan's warm, guarded
            continue
        w = layer.warms[0] if len(layer.warms) == 1 and len(parts) == 1 else None
        name = w.name if w is not None else warm_name(layer.name, part.tensors)
        warm: dict[str, Value] = {"name": name}
        if w is not None and w.name_hint != w.name:
            warm["name_hint"] = w.name_hint
        warm["after"] = part.anchor[0] if len(part.anchor) == 1 else list(part.anchor)
        if part.next_layer:
            warm["next_layer"] = True
        if part.guards:
            guards = [guard_text(g) for g in part.guards]
            warm["guard"] = guards[0] if len(guards) == 1 else guards
        warm["tensors"] = [
            t if part.range_of(j) is None else {"tensor": t, "rows": list(part.range_of(j) or ())}
            for j, t in enumerate(part.tensors)
        ]
        out.append(warm)
    return out


def _guarded(node: Value, part: Part) -> Value:
    """A declared warm's entry with the part's guards (added as its last key)."""
    guards = [guard_text(g) for g in part.guards]
    return {**node, "guard": guards[0] if len(guards) == 1 else guards}


def _node(doc: Document, path: tuple[str | int, ...]) -> Value:
    node = doc.data
    for key in path:
        node = node[key]
    return node


def fix(found: Suggestions) -> list[str]:
    """Write each kind's top gain; what was done, a line per layer kind."""
    assert found.plan is not None
    said: list[str] = []
    fixes: list[Fix] = []
    path = Path(found.file)
    doc = _read(found.file, path)
    for top in found.layers:
        gain = top.top_gain
        layer = found.plan.layers[top.kind]
        if gain is None:
            said.append(f"{top.kind}: nothing beats no warm: nothing written")
            continue
        if gain.evaluation.candidate.parts == tuple(part_of(layer, w) for w in layer.warms):
            said.append(f"{top.kind}: the top gain ({label(gain.evaluation)}) is its warm already")
            continue
        title = f"warm {label(gain.evaluation)}"
        edit = Replace(("layers", top.kind, "warms"), _warms(layer, top, doc))
        fixes.append(Fix(title, (edit,), Safety.UNSAFE))
        said.append(f"{top.kind}: wrote {title}")
    if fixes:
        _write(doc, path, fixes, found.source_root)
    return said


def _read(file: str, path: Path) -> Document:
    try:
        raw = read_regular(path, MAX_BYTES)  # as a plan is read: never waited on, capped
    except OSError as exc:  # its words, not "[Errno 22] ..."
        raise UsageError(f"{file}: cannot write the suggestion: {exc.strerror or exc}") from None
    doc = load(file, raw)
    if isinstance(doc, Diagnostic):  # changed since it was read: say so, write nothing
        raise UsageError(f"{file}: cannot write the suggestion: {doc.message}")
    return doc


def _write(doc: Document, path: Path, fixes: list[Fix], source_root: str | None) -> None:
    file = doc.file
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

"""`plancc suggest --fix`: the top gain of each layer kind written as its warm.

Written through the fixes' edits (``plancc.fixes``: one ``Replace`` of the kind's
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
from plancc.load import MAX_BYTES, load
from plancc.load.inputs import PlanInput
from plancc.reading import read_regular
from plancc.suggest import LayerSuggestions, Suggestions
from plancc.suggest.candidates import Part
from plancc.suggest.evaluate import warm_name
from plancc.suggest.rank import label
from plancc.usage import UsageError
from plancc.write import WriteError, replace


def _warms(layer: ir.Layer, top: LayerSuggestions) -> list[Value]:
    """The top gain as the kind's `warms`: a declared warm it repeats keeps its name, and so
    does the kind's one warm when one warm replaces it."""
    gain = top.top_gain
    assert gain is not None
    declared = {_part(layer, w): w for w in layer.warms}
    out: list[Value] = []
    for anchor, tensors in gain.evaluation.candidate.parts:
        w = declared.get((anchor, tensors))
        if w is None and len(layer.warms) == 1 and len(gain.evaluation.candidate.parts) == 1:
            w = layer.warms[0]
        name = w.name if w is not None else warm_name(layer.name, tensors)
        warm: dict[str, Value] = {"name": name}
        if w is not None and w.name_hint != w.name:
            warm["name_hint"] = w.name_hint
        warm["after"] = anchor[0] if len(anchor) == 1 else list(anchor)
        warm["tensors"] = list(tensors)
        out.append(warm)
    return out


def _part(layer: ir.Layer, w: ir.Warm) -> Part:
    return tuple(layer.stages[a].name for a in w.anchors), tuple(e.tensor.name for e in w.entries)


def fix(found: Suggestions) -> list[str]:
    """Write each kind's top gain; what was done, a line per layer kind."""
    assert found.plan is not None
    said: list[str] = []
    fixes: list[Fix] = []
    for top in found.layers:
        gain = top.top_gain
        layer = found.plan.layers[top.kind]
        if gain is None:
            said.append(f"{top.kind}: nothing beats no warm: nothing written")
            continue
        if gain.evaluation.candidate.parts == tuple(_part(layer, w) for w in layer.warms):
            said.append(f"{top.kind}: the top gain ({label(gain.evaluation)}) is its warm already")
            continue
        title = f"warm {label(gain.evaluation)}"
        edit = Replace(("layers", top.kind, "warms"), _warms(layer, top))
        fixes.append(Fix(title, (edit,), Safety.UNSAFE))
        said.append(f"{top.kind}: wrote {title}")
    if fixes:
        _write(found.file, fixes, found.source_root)
    return said


def _write(file: str, fixes: list[Fix], source_root: str | None) -> None:
    path = Path(file)
    try:
        raw = read_regular(path, MAX_BYTES)  # as a plan is read: never waited on, capped
    except OSError as exc:  # its words, not "[Errno 22] ..."
        raise UsageError(f"{file}: cannot write the suggestion: {exc.strerror or exc}") from None
    doc = load(file, raw)
    if isinstance(doc, Diagnostic):  # changed since it was read: say so, write nothing
        raise UsageError(f"{file}: cannot write the suggestion: {doc.message}")
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

"""`plancc suggest --measured RESULT.json`: a verdict of `plancc measure` carried back.

A suggestion is a hypothesis; `plancc measure` decides it. The result (its `--format
json`) names the build it measured (``manifest.model``, ``manifest.plan_sha256``) and
the warms of that build (``manifest.warms``: each warm's layer kind, anchors and
tensors). Per layer kind, the row standing for the measured warms of the kind gets the
verdict: `ship` makes it a measured gain, above every unmeasured one; `no-ship` a
measured loss, below "no warm"; `inconclusive` is said, and changes nothing
(docs/suggest.md, "Measured").
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from plancc import ir
from plancc.diagnostics import printable
from plancc.measure.files import read_result
from plancc.measure.units import signed_pct
from plancc.suggest.candidates import GuardSpec, Part, Rows
from plancc.text import clip
from plancc.usage import UsageError

SHIP, NO_SHIP, INCONCLUSIVE = "ship", "no-ship", "inconclusive"


@dataclass(frozen=True)
class Measured:
    """A verdict on the warms of one layer kind, as one build measured them."""

    decision: str  # SHIP, NO_SHIP or INCONCLUSIVE
    pct: float | None  # the fastest rank's median delta, % (negative: faster)
    plan_sha256: str  # the plan the measured build was made from
    this_plan: bool  # that plan is the one ranked here, byte for byte
    source: str  # the result's file

    @property
    def figure(self) -> str:
        return "no figure" if self.pct is None else signed_pct(self.pct)

    def on(self) -> str:
        """Where: ``on plan 512e89866a27…`` (and whether it is another build)."""
        where = f"on plan {self.plan_sha256[:12]}…"
        return where if self.this_plan else f"{where}, another build of this plan"


Verdicts = dict[str, tuple[tuple[Part, ...], Measured]]  # layer kind -> its warms, the verdict


def read(path: str, plan: ir.Plan) -> tuple[Verdicts, tuple[str, ...]]:
    """Per layer kind of the plan, the measured warms (as a candidate's parts) and the
    verdict; what could not be matched to this plan, in words. A file that cannot be
    read, is not a result of `plancc measure`, or measured another model's build is a
    usage error."""
    return parse(path, read_result(path, f"--measured {path}"), plan)


def parse(path: str, doc: Any, plan: ir.Plan) -> tuple[Verdicts, tuple[str, ...]]:
    measured, warms = _build(path, doc, plan)
    by_kind: dict[str, list[Part]] = {}
    for i, w in enumerate(warms):
        part = _part(w)
        if part is None:
            raise UsageError(
                f"--measured {path}: warm {i} of its manifest is not {{name, layer, after, "
                "tensors}"
            )
        kind, found = part
        by_kind.setdefault(kind, []).append(found)
    out: Verdicts = {}
    notes = []
    for kind, parts in by_kind.items():
        lost = _unknown(plan, kind, parts)
        if lost:  # the plan changed since the build: the measured warm is not one of its
            notes.append(f"measured {kind} warm not in this plan ({lost}): its verdict is not used")
        else:
            out[kind] = (tuple(parts), measured)
    return out, tuple(notes)


def _build(path: str, doc: Any, plan: ir.Plan) -> tuple[Measured, list[Any]]:
    """The verdict, and the warms of the build it measured (this plan's model's)."""

    def bad(why: str) -> UsageError:
        return UsageError(f"--measured {path}: {why}")

    if not isinstance(doc, dict) or doc.get("format") != "plancc-measure/1":
        raise bad("not the JSON of `plancc measure --format json` (format plancc-measure/1)")
    manifest = doc.get("manifest")
    if not isinstance(manifest, dict):
        raise bad("no manifest: which build was measured is not said")
    model, sha = manifest.get("model"), manifest.get("plan_sha256")
    if not isinstance(model, str) or not isinstance(sha, str):
        raise bad("its manifest names no model and plan_sha256")
    if model != plan.model:
        raise bad(
            f"measures the build of model {printable(clip(model))}, not this plan's "
            f"({plan.model}): give the measurement of this plan's build"
        )
    warms = manifest.get("warms")
    if not isinstance(warms, list):
        raise bad("its manifest lists no warms (a result of an older plancc): measure again")
    verdict = doc.get("verdict")
    decision = verdict.get("decision") if isinstance(verdict, dict) else None
    if decision not in (SHIP, NO_SHIP, INCONCLUSIVE):
        raise bad("no verdict (ship, no-ship or inconclusive): measure with both logs")
    return Measured(decision, _pct(doc), sha, sha == plan.sha256, path), warms


def _unknown(plan: ir.Plan, kind: str, parts: list[Part]) -> str | None:
    layer = plan.layers.get(kind)
    if layer is None:
        return f"no layer kind {kind}"
    stages = {s.name for s in layer.stages}
    for part in parts:
        for a in part.anchor:
            if a not in stages:
                return f"no stage {clip(a)}"
        for t in part.tensors:
            if t not in plan.tensors:
                return f"no tensor {clip(t)}"
    return None


def _part(w: Any) -> tuple[str, Part] | None:
    """A measured warm as a candidate's part: its kind, anchors, tensors, and its forms
    (`rows` beside the tensors, `next_layer`, `guards`; a result of an older plancc has
    none of them)."""
    if not isinstance(w, dict):
        return None
    kind, after, tensors = w.get("layer"), _names(w.get("after")), _names(w.get("tensors"))
    if not isinstance(kind, str) or after is None or tensors is None:
        return None
    spans = w.get("rows")
    rows = [_span(r) for r in spans] if isinstance(spans, list) else []
    if rows and len(rows) != len(tensors):
        return None
    guards = w.get("guards")
    found = [_guard(g) for g in guards] if isinstance(guards, list) else []
    if any(g is None for g in found):
        return None
    return kind, Part.of(
        after, tensors, rows, w.get("next_layer") is True, tuple(g for g in found if g)
    )


def _span(x: Any) -> Rows | None:
    if isinstance(x, list) and len(x) == 2 and all(type(v) is int for v in x):
        return (x[0], x[1])
    return None


def _guard(g: Any) -> GuardSpec | None:
    if not isinstance(g, dict):
        return None
    param, op, bound = g.get("param"), g.get("op"), g.get("bound")
    if isinstance(param, str) and op in ("<=", ">=", "<", ">") and type(bound) is int:
        return (param, op, bound)
    return None


def _names(x: Any) -> tuple[str, ...] | None:
    if not isinstance(x, list) or not x or not all(isinstance(n, str) for n in x):
        return None
    return tuple(x)


def _pct(doc: dict[str, Any]) -> float | None:
    """The fastest rank's median delta in percent, the figure the seed quotes."""
    try:
        value = doc["delta"]["fastest_rank"]["p50"]["pct"]
    except (KeyError, TypeError):
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None

"""The runtime manifest: the plan's numbers as JSON, in the contract's key order
(``schemas/manifest.schema.json``), laid out as the goldens have it."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from plancc import ir
from plancc.facts import Facts
from plancc.facts.analysis import Analysis
from plancc.facts.metrics import forward_numbers, l2_numbers, measure_numbers
from plancc.render.module_view import anchor_of, render_module
from plancc.tables.outputs import MANIFEST_FORMAT, module_file


def manifest(
    plan: ir.Plan,
    plan_path: str,
    facts: Facts,
    config: tuple[str, str] | None = None,
    module: str | None = None,
) -> dict[str, Any]:
    """The runtime manifest, in the contract's key order; ``schemas/manifest.schema.json``.
    ``config``: the config file's path (relative to the manifest, POSIX) and SHA-256;
    ``facts``: the check's, whose L2 peak and consumers it reports.

    ``module`` is the generated module's text (rendered here when not given): its
    SHA-256 makes the pair verifiable, so a module and a manifest from two builds
    (a build killed between its two renames) are never taken for one."""
    if module is None:
        module = render_module(plan, plan_path)
    # A pipe's name (`<(generate-plan)`: /dev/fd/63, the one absolute name build passes)
    # is no path relative to the manifest: `-`, as a command line names standard input.
    plan_name = "-" if plan_path.startswith("/") else plan_path
    source: dict[str, Any] = {"plan": plan_name, "sha256": plan.sha256}
    if config is not None:
        source["config"] = {"path": config[0], "sha256": config[1]}
    out: dict[str, Any] = {
        "format": MANIFEST_FORMAT,
        "model": plan.model,
        "platform": plan.platform.name if plan.platform else None,
        "source": source,
        "module": {
            "file": module_file(plan.model),
            "sha256": hashlib.sha256(module.encode("utf-8")).hexdigest(),
        },
        "runtime": {"enable_sdma": bool(plan.warms)},
        "l2": l2_numbers(facts),
        "warms": [
            {
                "name": w.name,
                "layer": w.layer,
                "name_hint": w.name_hint,
                **_anchors(plan, w),
                "bytes": w.bytes,
                "consumers": _consumers(facts.analysis, w),
                "tensors": [_tensor(e) for e in w.entries],
            }
            for w in plan.warms
        ],
    }
    fwd = forward_numbers(plan)
    if fwd is not None and plan.forward is not None:
        # The kind of each layer lets `plancc measure` tell which layer a scope ran for.
        out["forward"] = {**fwd, "kinds": list(plan.forward.kinds)}
    measure = measure_numbers(plan)
    if measure is not None:
        out["measure"] = measure
    return out


def _anchors(plan: ir.Plan, warm: ir.Warm) -> dict[str, Any]:
    """`after` and `task`: the anchor stage and its TaskId variable; for a join, lists of
    every anchor's, in `after`'s order."""
    if not warm.join:
        anchor = anchor_of(plan, warm)
        return {"after": anchor.name, "task": anchor.task}
    stages = [plan.layers[warm.layer].stages[a] for a in warm.anchors]
    return {"after": [s.name for s in stages], "task": [s.task for s in stages]}


def _tensor(entry: ir.WarmEntry) -> dict[str, Any]:
    """A warmed tensor: for a stacked one, ``shape`` is one layer's slab and ``stacked``
    says how many layers the stack holds and which index variable picks the slab."""
    t = entry.tensor
    out: dict[str, Any] = {
        "name": t.name,
        "dtype": t.dtype.name,
        "shape": list(t.shape),
        "flat": list(entry.flat.values) if entry.flat else [],
        "bytes": t.bytes,
    }
    if t.stacked is not None:
        s = t.stacked
        out["stacked"] = {"layers": s.layers, "index": s.index, "index_type": s.index_type}
    return out


def _consumers(analysis: Analysis, warm: ir.Warm) -> list[dict[str, str | None]]:
    """The stages that run after the anchor (after every anchor of a join) and read a
    warmed tensor, as the check's analysis has them (``WarmFacts.readers``), in schedule
    order (start step, then name), with their swimlane kernel (null when the plan names
    none): `plancc measure` checks that the warm landed before the first one started,
    the earliest to start, the rules' first consumer."""
    facts = analysis.warm(warm.layer, warm.name)
    stages = facts.readers if facts is not None else ()
    return [{"stage": s.name, "kernel": s.kernel} for s in stages]


def render_manifest(
    plan: ir.Plan,
    plan_path: str,
    facts: Facts,
    config: tuple[str, str] | None = None,
    module: str | None = None,
) -> str:
    return _json(manifest(plan, plan_path, facts, config, module), 0) + "\n"


def _json(value: Any, indent: int) -> str:
    """JSON with two-space indentation; a list of numbers or strings stays on one line."""
    pad, inner = " " * indent, " " * (indent + 2)
    if isinstance(value, dict) and value:
        items = [f"{inner}{_scalar(k)}: {_json(v, indent + 2)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(value, list) and any(isinstance(v, dict | list) for v in value):
        items = [inner + _json(v, indent + 2) for v in value]
        return "[\n" + ",\n".join(items) + "\n" + pad + "]"
    return _scalar(value)


def _scalar(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate (an undecodable file name): escape it
        text = json.dumps(value)
    return text

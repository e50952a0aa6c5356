"""The runtime manifest: the plan's numbers as JSON, in the contract's key order
(``schemas/manifest.schema.json``), laid out as the goldens have it."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from plancc import ir
from plancc.facts import Facts
from plancc.facts.crossing import issues, successors
from plancc.facts.metrics import forward_numbers, l2_numbers, measure_numbers
from plancc.render.module_view import anchor_of, consumers, render_module
from plancc.resolve.namespace import anchor_params
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
        module = render_module(plan, plan_path, facts)
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
                "next_layer": w.next_layer,
                "consumed_in": _consumed_in(plan, w),
                **({} if plan.forward is None else {"issues": issues(plan, w)}),
                "guards": [_guard(g) for g in w.guards],
                "consumers": _consumers(facts, w),
                "tensors": [_tensor(e) for e in w.entries],
                "parameters": _parameters(plan, w),
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
    says how many layers the stack holds and which index variable picks the slab; for a
    prefix, ``rows`` is the range [LO, HI) of the first dim it warms (``shape`` stays the
    tensor's; ``flat`` and ``bytes`` are the range's)."""
    t = entry.tensor
    out: dict[str, Any] = {
        "name": t.name,
        "dtype": t.dtype.name,
        "shape": list(t.shape),
        "flat": list(entry.flat.values) if entry.flat else [],
        "bytes": entry.bytes,
    }
    if entry.rows is not None:
        out["rows"] = [entry.rows.lo, entry.rows.hi]
    if t.stacked is not None:
        s = t.stacked
        out["stacked"] = {"layers": s.layers, "index": s.index, "index_type": s.index_type}
    return out


def _guard(g: ir.Guard) -> dict[str, Any]:
    """A guard: the warm is issued when ``source`` (the model's run-time value of param
    ``param``, the function's parameter of that name) ``op`` ``bound`` holds."""
    return {"param": g.param, "op": g.op, "bound": g.bound, "source": g.variable}


def _consumed_in(plan: ir.Plan, warm: ir.Warm) -> list[str]:
    """The layer kinds whose stages read what it warms: its own, or for a cross-layer
    warm the kinds the forward runs after its own."""
    return list(successors(plan, warm.layer)) if warm.next_layer else [warm.layer]


def _consumers(facts: Facts, warm: ir.Warm) -> list[dict[str, str | None]]:
    """The stages that read what it warms after its anchor (``module_view.consumers``),
    with their layer kind and swimlane kernel (null when the plan names none): `plancc
    measure` checks that the warm landed before the first one started, the earliest to
    start, the rules' first consumer."""
    return [{"stage": s.name, "layer": k, "kernel": s.kernel} for k, s in consumers(facts, warm)]


def _parameters(plan: ir.Plan, warm: ir.Warm) -> list[dict[str, Any]]:
    """The generated function's parameters in order, each with what a caller passes: a
    tensor (this layer's, the next layer's, or the whole stack: its shape as the
    function annotates it), a stack's index (``value``: this layer's, or for a
    cross-layer warm the next layer's, ``layer_idx + 1``), a guard's run-time value, an
    anchor's TaskId."""
    out: list[dict[str, Any]] = []
    tensors = {e.tensor.name: e.tensor for e in warm.entries}
    layer = "next" if warm.next_layer else "this"
    for t in tensors.values():
        shape = list(t.shape)
        if t.stacked is not None:
            shape[0] = (shape[0] or 0) * t.stacked.layers
        item = {"name": t.name, "kind": "tensor", "dtype": t.dtype.name, "shape": shape}
        out.append({**item, "layer": "stack" if t.stacked is not None else layer})
    stacks = [t.stacked for t in tensors.values() if t.stacked is not None]
    for index in dict.fromkeys((s.index, s.index_param, s.index_type) for s in stacks):
        value = f"{index[0]} + 1" if warm.next_layer else index[0]
        out.append({"name": index[1], "kind": "index", "type": index[2], "value": value})
    for g in {g.variable: g for g in warm.guards}.values():
        out.append({"name": g.variable, "kind": "guard", "type": "int32", "param": g.param})
    stages = plan.layers[warm.layer].stages
    for a, name in zip(warm.anchors, anchor_params(plan.layers[warm.layer], warm), strict=True):
        out.append({"name": name, "kind": "task", "stage": stages[a].name, "task": stages[a].task})
    return out


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

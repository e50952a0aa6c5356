"""The runtime manifest: the plan's numbers as JSON, in the contract's key order
(``schemas/manifest.schema.json``), laid out as the goldens have it."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from plancc import ir
from plancc.metrics import forward_numbers, l2_numbers, measure_numbers
from plancc.render.module_view import anchor_of, render_module
from plancc.render.names import module_file

MANIFEST_FORMAT = "plancc-manifest/1"


def manifest(plan: ir.Plan, plan_path: str, module: str | None = None) -> dict[str, Any]:
    """The runtime manifest, in the contract's key order; ``schemas/manifest.schema.json``.

    ``module`` is the generated module's text (rendered here when not given): its
    SHA-256 makes the pair verifiable, so a module and a manifest from two builds
    (a build killed between its two renames) are never taken for one."""
    if module is None:
        module = render_module(plan, plan_path)
    out: dict[str, Any] = {
        "format": MANIFEST_FORMAT,
        "model": plan.model,
        "platform": plan.platform.name if plan.platform else None,
        "source": {"plan": plan_path, "sha256": plan.sha256},
        "module": {
            "file": module_file(plan.model),
            "sha256": hashlib.sha256(module.encode("utf-8")).hexdigest(),
        },
        "runtime": {"enable_sdma": bool(plan.warms)},
        "l2": l2_numbers(plan),
        "warms": [
            {
                "name": w.name,
                "layer": w.layer,
                "name_hint": w.name_hint,
                "after": anchor_of(plan, w).name,
                "task": anchor_of(plan, w).task,
                "bytes": w.bytes,
                "tensors": [
                    {
                        "name": e.tensor.name,
                        "dtype": e.tensor.dtype.name,
                        "shape": list(e.tensor.shape),
                        "flat": list(e.flat.values) if e.flat else [],
                        "bytes": e.tensor.bytes,
                    }
                    for e in w.entries
                ],
            }
            for w in plan.warms
        ],
    }
    fwd = forward_numbers(plan)
    if fwd is not None:
        out["forward"] = fwd
    measure = measure_numbers(plan)
    if measure is not None:
        out["measure"] = measure
    return out


def render_manifest(plan: ir.Plan, plan_path: str, module: str | None = None) -> str:
    return _json(manifest(plan, plan_path, module), 0) + "\n"


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

"""Hints never lead in a circle: following one never brings back the finding that sent you.

Each hint that names a concrete change is applied to the plan — anchor at the
named stage (PC104, PC107), add the named tensors (PC103), issue in the named
order (PC102) — and the plan is checked again: the warm must be clear of the
finding it followed, and no finding may send it back (a PC104 or PC107 hint
naming the old anchor, a budget finding after adding tensors).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from test_placement import layers  # tests/ is on sys.path under pytest

from plancc import ir
from plancc.api import validate_paths
from plancc.diagnostics import Diagnostic, Pos
from plancc.load import load

CASES = sorted((Path(__file__).parent / "cases").rglob("*.yaml"))
ANCHOR = re.compile(r"anchor at '([^']+)'")
ADD = re.compile(r"^add (.+) to the warm, in consumer order$")
ORDER = re.compile(r"^issue in consumer order: \[(.*)\]$")


def _warm_at(plan: ir.Plan, d: Diagnostic) -> ir.Warm | None:
    pos = Pos(d.line, d.col)
    for warm in plan.warms:
        if pos in (warm.name_pos, warm.after_pos, warm.tensors_pos) or pos in [
            e.pos for e in warm.entries
        ]:
            return warm
    return None


def _warm_data(data: dict[str, Any], warm: ir.Warm) -> dict[str, Any]:
    found = [w for w in data["layers"][warm.layer]["warms"] if w.get("name") == warm.name]
    assert len(found) == 1
    return found[0]


def _on(plan: ir.Plan | None, report: list[Diagnostic], name: str) -> list[Diagnostic]:
    if plan is None:
        return []
    out = []
    for d in report:
        warm = _warm_at(plan, d)
        if warm is not None and warm.name == name:
            out.append(d)
    return out


def _followed(path: Path, tmp: Path) -> list[tuple[str, str, str]]:  # noqa: C901, PLR0912 (one branch per kind of hint followed)
    """Every circle found by following each hint of the plan at ``path`` once."""
    doc = load(str(path), path.read_bytes())
    if isinstance(doc, Diagnostic) or not isinstance(doc.data, dict):
        return []
    report = validate_paths([str(path)])
    plan = report.results[0].plan
    if plan is None or report.errors:
        return []
    circles = []
    for d in report.diagnostics:
        warm = _warm_at(plan, d)
        if warm is None or d.hint is None:
            continue
        data = json.loads(json.dumps(doc.data))
        if isinstance(data.get("config"), str):
            data["config"] = str((path.parent / data["config"]).resolve())
        entry = _warm_data(data, warm)
        anchor, order, add = ANCHOR.search(d.hint), ORDER.match(d.hint), ADD.match(d.hint)
        if anchor and d.code in ("PC104", "PC107"):
            old = entry["after"]
            entry["after"] = anchor[1]
            back = {"PC104", "PC107"}  # neither may fire, nor point back at the old anchor
        elif add and d.code == "PC103":
            entry["tensors"] = [*entry["tensors"], *add[1].split(", ")]
            old, back = "", set()  # the budget, below; PC103 may still name another group
        elif order and d.code == "PC102":
            entry["tensors"] = order[1].split(", ")
            old, back = "", {"PC102"}
        else:
            continue
        again = tmp / f"followed_{len(circles)}_{d.line}_{d.col}.yaml"
        again.write_text(json.dumps(data), "utf-8")  # JSON is YAML
        result = validate_paths([str(again)])
        later = result.results[0].plan
        for e in _on(later, result.diagnostics, warm.name):
            if e.code in back or (old and e.hint and f"'{old}'" in e.hint):
                circles.append((str(path.name), f"{d.code}: {d.hint}", f"{e.code}: {e.hint}"))
        if d.code == "PC103":  # adding may not push any warm of the kind over the budget
            budget = [e for e in result.diagnostics if e.code in ("PC030", "PC032")]
            before = [e for e in report.diagnostics if e.code in ("PC030", "PC032")]
            if len(budget) > len(before):
                circles.append((path.name, f"{d.code}: {d.hint}", budget[0].message))
    return circles


@pytest.mark.parametrize("plan", CASES, ids=[p.name for p in CASES])
def test_following_a_hint_of_the_corpus_leads_on(plan: Path, tmp_path: Path) -> None:
    assert _followed(plan, tmp_path) == []


@pytest.mark.slow
@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(layer=layers())
def test_following_a_hint_of_any_plan_leads_on(
    write_plan: Callable[..., Path], tmp_path: Path, layer: str
) -> None:
    text = (
        "plancc: 1\nmodel: m\nplatform: a2a3\ndims: {B: dynamic}\ntensors:\n"
        "  a: {shape: [1048576], dtype: int8}\n  b: {shape: [50331648], dtype: bf16}\n"
        "  c: {shape: [1024], dtype: fp32}\n  kv: {shape: [B, 64], dtype: bf16}\n"
        f"layers:\n{layer}"
    )
    assert _followed(write_plan(text), tmp_path) == []

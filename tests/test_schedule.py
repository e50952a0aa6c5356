"""plancc.schedule: a layer kind's stages as a graph of `deps`."""

from __future__ import annotations

import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plancc.api import validate_paths
from plancc.schedule import schedule


def test_without_deps_the_schedule_is_the_list_order() -> None:
    s = schedule([None, None, None, None])
    assert s.linear
    assert s.start == (0, 1, 2, 3)
    assert s.runs_before(0, 3)
    assert not s.runs_before(3, 0)
    assert s.between(0, 3) == [1, 2]
    assert s.lanes == (0, 0, 0, 0)


def test_a_fan_out_runs_beside() -> None:
    # rms_norm -> {q_a -> q_b, kv} -> attn (waits for both)
    s = schedule([None, [0], [1], [0], [2, 3]])
    assert not s.linear
    assert s.start == (0, 1, 2, 1, 3)
    assert s.beside(1, 3)
    assert s.beside(2, 3)
    assert s.runs_before(0, 4)
    assert s.runs_before(3, 4)
    assert not s.runs_before(3, 2)
    # between q_a's finish (step 2) and attn's start (step 3): q_b only
    assert s.between(1, 4) == [2]
    # between rms_norm's finish (1) and attn's start (3): q_a, q_b and kv
    assert s.between(0, 4) == [1, 2, 3]
    assert s.order() == [0, 1, 3, 2, 4]
    assert s.steps == 4
    assert s.lanes == (0, 0, 0, 1, 0)


def test_empty_deps_start_at_layer_entry() -> None:
    s = schedule([None, None, []])
    assert s.start == (0, 1, 0)
    assert s.beside(0, 2)
    assert s.beside(1, 2)


def test_a_dep_on_a_later_stage_is_refused() -> None:
    with pytest.raises(ValueError, match="not listed before"):
        schedule([None, [1]])


# -- listing order: a graph's findings do not depend on it -----------------------------

_SIZES = {"t0": 1024, "t1": 4_000_000, "t2": 40_000_000, "t3": 60_000_000}  # bf16 elements


@st.composite
def _graph_plans(draw: st.DrawFn) -> tuple[str, str]:
    """A plan whose stages all have `deps`, listed in their order and in another valid one."""
    n = draw(st.integers(2, 8))
    stages = []
    for i in range(n):
        stages.append(
            {
                "name": f"s{i}",
                "deps": sorted(draw(st.sets(st.integers(0, i - 1), max_size=3)) if i else set()),
                "task": draw(st.booleans()),
                "reads": draw(st.lists(st.sampled_from([*_SIZES, "dyn"]), unique=True, max_size=3)),
                "group": draw(st.sampled_from([None, "g"])),
                "duration_us": draw(st.sampled_from([None, 5, 50, 300])),
                "streams": draw(st.sampled_from([None, None, None, "150 MB"])),
                "sdma": draw(st.booleans()) and draw(st.booleans()),
                "collective": draw(st.sampled_from([None, None, None, "mte", "sdma"])),
            }
        )
    warms = [
        (
            draw(st.integers(0, n - 1)),
            draw(st.lists(st.sampled_from(list(_SIZES)), min_size=1, max_size=3, unique=True)),
        )
        for _ in range(draw(st.integers(1, 3)))
    ]
    # Another topological order: each next stage among those whose deps are all placed.
    order: list[int] = []
    while len(order) < n:
        ready = [
            i for i in range(n) if i not in order and all(d in order for d in stages[i]["deps"])
        ]
        order.append(draw(st.sampled_from(ready)))
    return _plan_text(stages, warms, range(n)), _plan_text(stages, warms, order)


def _plan_text(
    stages: list[dict[str, Any]], warms: list[tuple[int, list[str]]], order: Iterable[int]
) -> str:
    lines = ["plancc: 1", "model: m", "platform: a2a3", "tensors:"]
    lines += [f"  {t}: {{shape: [{k}], dtype: bf16}}" for t, k in _SIZES.items()]
    lines += [
        "  dyn: {shape: [N], dtype: bf16}",
        "dims: {N: dynamic}",
        "layers:",
        "  k:",
        "    stages:",
    ]
    for i in order:
        s = stages[i]
        keys = [f"name: {s['name']}", f"deps: [{', '.join(f's{d}' for d in s['deps'])}]"]
        keys += [f"task: {s['name']}_tid"] if s["task"] else []
        keys += [f"reads: [{', '.join(s['reads'])}]"]
        keys += [
            f"{k}: {s[k]}"
            for k in ("group", "duration_us", "streams", "collective")
            if s[k] is not None
        ]
        keys += ["sdma: true"] if s["sdma"] else []
        lines.append(f"      - {{{', '.join(keys)}}}")
    lines.append("    warms:")
    lines += [
        f"      - {{name: w{j}, after: s{at}, tensors: [{', '.join(ts)}]}}"
        for j, (at, ts) in enumerate(warms)
    ]
    return "\n".join(lines) + "\n"


def _findings(text: str) -> list[tuple[str, str, str | None]]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "plan.yaml"
        path.write_text(text, "utf-8")
        report = validate_paths([str(path)])
    return sorted((d.code, d.message, d.hint) for d in report.diagnostics)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(_graph_plans())
def test_every_valid_listing_order_gives_the_same_findings(plans: tuple[str, str]) -> None:
    listed, reordered = plans
    assert _findings(listed) == _findings(reordered)

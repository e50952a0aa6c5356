"""Issue 6: counts and the L2 peak over a forward, in both of its forms."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from plancc.api import validate_paths
from plancc.facts.metrics import measure_numbers
from plancc.formats.json import json_

CONFIG = {"ratios": [0, 4, 4, 0, 4], "n": 5}

# Kind `a` warms 1 tensor of 1 MiB, kind `b` 2 tensors of 1 MiB each, and kind
# `big` (never in the forward) warms 64 MiB.
PLAN = """\
plancc: 1
model: m
platform: a2a3
config: model.config.json
tensors:
  w1: {{shape: [1048576], dtype: int8}}
  w2: {{shape: [1048576], dtype: int8}}
  w3: {{shape: [67108864], dtype: int8}}
layers:
  a:
    stages: [{{name: s0, task: t0}}, {{name: gap}}, {{name: s1, reads: [w1]}}]
    warms: [{{name: wa, after: s0, tensors: [w1]}}]
  b:
    stages: [{{name: s0, task: t0}}, {{name: gap}}, {{name: s1, reads: [w1, w2]}}]
    warms: [{{name: wb, after: s0, tensors: [w1, w2]}}]
  big:
    stages: [{{name: s0, task: t0}}, {{name: gap}}, {{name: s1, reads: [w3]}}]
    warms: [{{name: wbig, after: s0, tensors: [w3]}}]
forward:
{forward}
"""


def _run(write_plan: Callable[..., Path], forward: str) -> dict[str, object]:
    plan = write_plan(PLAN.format(forward=forward))
    (plan.parent / "model.config.json").write_text(json.dumps(CONFIG), encoding="utf-8")
    out = json.loads(json_(validate_paths([str(plan)])))
    assert out["errors"] == 0, out["diagnostics"]
    return out["plans"][0]  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("forward", "layers", "issues"),
    [
        ("  from_config: ratios\n  kinds: {0: a, 4: b}", 5, 2 * 1 + 3 * 2),
        ("  from_config: ratios\n  kinds: {0: a, 4: b}\n  layers: n", 5, 8),
        ("  from_config: ratios\n  kinds: {0: a, 4: b}\n  layers: n - 2", 3, 1 + 2 + 2),
        ("  - a\n  - {layer: b, repeat: n}\n  - {layer: a, repeat: 2}", 8, 1 + 10 + 2),
    ],
)
def test_forward_counts(
    write_plan: Callable[..., Path], forward: str, layers: int, issues: int
) -> None:
    numbers = _run(write_plan, forward)
    assert numbers["forward"] == {
        "layers": layers,
        "warm_issues": issues,
        "warm_bytes": issues * 1_048_576,
    }


def test_layers_one_past_the_list_is_pc014(write_plan: Callable[..., Path]) -> None:
    plan = write_plan(
        PLAN.format(forward="  from_config: ratios\n  kinds: {0: a, 4: b}\n  layers: n + 1")
    )
    (plan.parent / "model.config.json").write_text(json.dumps(CONFIG), encoding="utf-8")
    report = validate_paths([str(plan)])
    assert [(d.code, d.line, d.col) for d in report.diagnostics] == [("PC014", 22, 11)]
    assert report.diagnostics[0].message == (
        "forward.layers is 6, but 'ratios' has only 5 entries: layer 5 has none"
    )


def test_peak_over_the_forward_leaves_out_unused_kinds(write_plan: Callable[..., Path]) -> None:
    # `big` is checked (its own peak is 64 MiB) but is not in the forward.
    numbers = _run(write_plan, "  - a\n  - b")
    assert numbers["l2"]["peak_bytes"] == 2 * 1_048_576  # type: ignore[index]
    with_big = _run(write_plan, "  - a\n  - big")
    assert with_big["l2"]["peak_bytes"] == 67_108_864  # type: ignore[index]


def test_warmup_covers_the_start_up_phase_when_rounds_issue_few_warms(
    write_plan: Callable[..., Path],
) -> None:
    # 3 warm issues a round: 500 rounds would issue only 1,500, inside the
    # few-thousand start-up phase, so the recipe asks for ceil(5000 / 3) rounds.
    plan = write_plan(PLAN.format(forward="  - a\n  - b"))
    (plan.parent / "model.config.json").write_text(json.dumps(CONFIG), encoding="utf-8")
    ir_plan = validate_paths([str(plan)]).results[0].plan
    assert ir_plan is not None
    measure = measure_numbers(ir_plan)
    assert measure is not None
    assert measure["warm_issues_per_round"] == 3
    assert measure["warmup_rounds"] == 1667
    assert measure["env"] == {"PYPTO_BENCH_WARMUP": "1667"}


def test_warmup_is_at_least_500_rounds(write_plan: Callable[..., Path]) -> None:
    plan = write_plan(PLAN.format(forward="  - {layer: b, repeat: 40}"))
    (plan.parent / "model.config.json").write_text(json.dumps(CONFIG), encoding="utf-8")
    ir_plan = validate_paths([str(plan)]).results[0].plan
    assert ir_plan is not None
    measure = measure_numbers(ir_plan)
    assert measure is not None
    assert (measure["warm_issues_per_round"], measure["warmup_rounds"]) == (80, 500)


@pytest.mark.parametrize(
    ("layers", "at", "message"),
    [
        ("", (20, 16), "'long' gives a forward of 100,001 layers, more than 100,000"),
        (
            "\n  layers: 100001",
            (22, 11),
            "forward.layers gives a forward of 100,001 layers, more than 100,000",
        ),
    ],
)
def test_a_forward_from_config_has_at_most_100000_layers(
    write_plan: Callable[..., Path], layers: str, at: tuple[int, int], message: str
) -> None:
    plan = write_plan(PLAN.format(forward=f"  from_config: long\n  kinds: {{0: a, 4: b}}{layers}"))
    config = {"long": [0] * 100_001}
    (plan.parent / "model.config.json").write_text(json.dumps(config), encoding="utf-8")
    report = validate_paths([str(plan)])
    assert [(d.code, d.line, d.col, d.message) for d in report.diagnostics] == [
        ("PC014", *at, message)
    ]

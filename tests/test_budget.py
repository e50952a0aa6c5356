"""Issue 3: exact bytes, the L2 peak over live intervals, and the seed's budget table."""

from __future__ import annotations

import json
from collections.abc import Callable
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plancc.api import validate_paths
from plancc.formats.json import json_
from plancc.text import fmt_share

L2 = 201_326_592

# DeepSeek V4-Flash shapes (shared/data/deepseek-v4.md). routed_w1 and routed_w3
# share one shape, [N_LOCAL, moe_intermediate_size, D] int8: 8,388,608 B per
# expert. The seed gives the table's totals, not how many experts it warmed:
# N_EXPERTS is the count that reproduces each row exactly.
SEED_LAYER = """\
plancc: 1
model: m
platform: a2a3
dims:
  D: 4096
  H: 64
  HEAD_DIM: 512
  O_LORA: 1024
  O_GROUPS: 8
  O_GROUP_IN: H * HEAD_DIM // O_GROUPS
  MOE: 2048
  N_EXPERTS: {n_experts}
tensors:
  wo_a: {{shape: [O_GROUPS, O_LORA, O_GROUP_IN], dtype: bf16}}
  wo_b: {{shape: [D, O_GROUPS * O_LORA], dtype: int8}}
  routed_w1: {{shape: [N_EXPERTS, MOE, D], dtype: int8}}
  routed_w3: {{shape: [N_EXPERTS, MOE, D], dtype: int8}}
layers:
  decode:
    stages:
      - {{name: q_proj, task: q_rope_tid}}
      - {{name: sparse_attn}}
      - {{name: proj_a, reads: [wo_a], group: o_proj}}
      - {{name: proj_b, reads: [wo_b], group: o_proj}}
      - {{name: ffn, reads: [routed_w1, routed_w3]}}
    warms:
      - name: warm
        after: q_proj
        tensors: [{tensors}]
"""


def _numbers(path: Path) -> tuple[dict[str, object], list[tuple[str, str]]]:
    report = validate_paths([str(path)])
    out = json.loads(json_(report))
    return out["plans"][0]["l2"], [(d["code"], d["message"]) for d in out["diagnostics"]]


def _budget(diagnostics: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [d for d in diagnostics if d[0] in ("PC030", "PC032")]


def test_seed_table_o_projection_is_half_of_l2(write_plan: Callable[..., Path]) -> None:
    # Seed: "o-proj (wo_a+wo_b) 100.7 MB 0.50x -1.09 %"
    plan = write_plan(SEED_LAYER.format(n_experts=4, tensors="wo_a, wo_b"))
    l2, diagnostics = _numbers(plan)
    assert l2 == {
        "capacity_bytes": L2,
        "peak_bytes": 100_663_296,
        "peak_fraction": 0.5,
        "budget_fraction": 0.75,
    }
    assert _budget(diagnostics) == []


def test_seed_table_with_moe_gate_fits_the_default_budget(write_plan: Callable[..., Path]) -> None:
    # Seed: "+ MoE gate (routed_w1) 134.2 MB 0.67x -1.63 %": 100.7 MB + 4 experts of w1.
    plan = write_plan(SEED_LAYER.format(n_experts=4, tensors="wo_a, wo_b, routed_w1"))
    l2, diagnostics = _numbers(plan)
    assert l2["peak_bytes"] == 134_217_728
    assert l2["peak_fraction"] == 134_217_728 / L2
    assert round(l2["peak_fraction"], 2) == 0.67  # type: ignore[call-overload]
    assert _budget(diagnostics) == []


def test_seed_table_gate_and_up_overflows(write_plan: Callable[..., Path]) -> None:
    # Seed: "+ MoE gate and up (w1+w3) 268.4 MB 1.33x +3.03 %": 100.7 MB + 10 experts
    # each of w1 and w3 (same shape) is exactly 256 MiB.
    plan = write_plan(SEED_LAYER.format(n_experts=10, tensors="wo_a, wo_b, routed_w1, routed_w3"))
    l2, diagnostics = _numbers(plan)
    assert l2["peak_bytes"] == 268_435_456
    assert _budget(diagnostics) == [
        (
            "PC030",
            "warms alive at once exceed L2 during 'sparse_attn': "
            "warm = 268,435,456 B = 268.4 MB = 256.0 MiB = 1.33× L2",
        )
    ]


def test_budget_warning_at_a_lower_fraction(write_plan: Callable[..., Path]) -> None:
    text = SEED_LAYER.format(n_experts=4, tensors="wo_a, wo_b, routed_w1")
    plan = write_plan(
        text.replace("platform: a2a3\n", "platform: a2a3\nbudget: {l2_fraction: 0.6}\n")
    )
    l2, diagnostics = _numbers(plan)
    assert l2["budget_fraction"] == 0.6
    assert _budget(diagnostics) == [
        (
            "PC032",
            "warms alive at once exceed the 0.6 L2 budget during "
            "'sparse_attn': warm = 134,217,728 B = 134.2 MB = 128.0 MiB = 0.67× L2",
        )
    ]


def test_budget_exactly_at_the_fraction_is_clean(write_plan: Callable[..., Path]) -> None:
    # 0.5 × L2 exactly is not above a 0.5 budget.
    text = SEED_LAYER.format(n_experts=4, tensors="wo_a, wo_b, routed_w1")
    plan = write_plan(
        text.replace("platform: a2a3\n", "platform: a2a3\nbudget: {l2_fraction: 0.5}\n").replace(
            "tensors: [wo_a, wo_b, routed_w1]", "tensors: [wo_a, wo_b]"
        )
    )
    _, diagnostics = _numbers(plan)
    assert _budget(diagnostics) == []


def test_exactly_l2_is_a_warning_and_one_byte_more_an_error() -> None:
    # The boundary of PC030 ("exceed L2"): exactly L2 is only over the budget.
    from typer.testing import CliRunner

    from plancc.cli.app import app

    cases = Path(__file__).parent / "cases" / "semantics"
    for name, code in (("pc030_exactly_l2_is_pc032", 0), ("pc030_one_byte_over", 1)):
        result = CliRunner().invoke(app, ["validate", str(cases / f"{name}.yaml")])
        assert result.exit_code == code, result.output


@pytest.mark.parametrize(
    ("platform", "capacity", "fraction"),
    [("a2a3", L2, 0.5), ("a2a3sim", L2, 0.5), ("a5", None, None), ("a5sim", None, None)],
)
def test_l2_capacity_per_platform(
    write_plan: Callable[..., Path], platform: str, capacity: int | None, fraction: float | None
) -> None:
    # platforms.json: the simulator has a2a3's 192 MiB; a5 and a5sim have no L2 figure.
    text = SEED_LAYER.format(n_experts=4, tensors="wo_a, wo_b")
    l2, _ = _numbers(write_plan(text.replace("platform: a2a3\n", f"platform: {platform}\n")))
    assert (l2["capacity_bytes"], l2["peak_bytes"], l2["peak_fraction"]) == (
        capacity,
        100_663_296,
        fraction,
    )


INCOMPLETE_KIND = """\
plancc: 1
model: m
platform: a2a3
tensors:
  w: {shape: [100663296], dtype: int8}
  big: {shape: [300000000], dtype: int8}
layers:
  ok:
    stages: [{name: s0, task: t0}, {name: gap}, {name: s1, reads: [w]}]
    warms: [{name: wa, after: s0, tensors: [w]}]
  broken:
    stages: [{name: s0, task: t0}, {task: 5}, {name: s2, reads: [big]}]
    warms: [{name: wb, after: s0, tensors: [big]}]
"""


@pytest.mark.parametrize("forward", ["", "forward: [ok, broken, ok]\n"])
def test_the_peak_leaves_out_an_incomplete_kind_as_the_budget_rules_do(
    write_plan: Callable[..., Path], forward: str
) -> None:
    # 'broken' has a stand-in stage: PC030 does not judge its 300 MB warm, so the
    # reported peak is the complete kind's 0.50x L2, not an unjudged 1.49x.
    l2, diagnostics = _numbers(write_plan(INCOMPLETE_KIND + forward))
    assert [code for code, _ in diagnostics] == ["PC002", "PC002"]
    assert (l2["peak_bytes"], l2["peak_fraction"]) == (100_663_296, 0.5)


SUB_BYTE = """\
plancc: 1
model: m
platform: a2a3
tensors:
  odd4: {{shape: [3, 5], dtype: {dtype}}}
layers:
  l:
    stages:
      - {{name: s0, task: t0}}
      - {{name: s1, reads: [odd4]}}
    warms:
      - {{name: w, after: s0, tensors: [odd4]}}
"""


def test_sub_byte_dtypes_round_up(write_plan: Callable[..., Path]) -> None:
    # 15 elements × 4 bits = 60 bits = 7.5 bytes -> 8 bytes.
    for dtype, expected in [
        ("int4", 8),
        ("uint4", 8),
        ("fp4", 8),
        ("hf4", 8),
        ("bool", 15),
        ("fp16", 30),
        ("fp32", 60),
        ("int64", 120),
    ]:
        l2, _ = _numbers(write_plan(SUB_BYTE.format(dtype=dtype), f"{dtype}.yaml"))
        assert l2["peak_bytes"] == expected, dtype


def test_summary_line_has_the_budget(write_plan: Callable[..., Path]) -> None:
    from plancc.formats.text import text

    plan = write_plan(SEED_LAYER.format(n_experts=4, tensors="wo_a, wo_b"))
    out = text(validate_paths([str(plan)]))
    assert out.splitlines()[-2:] == [
        f"{plan.as_posix()}: 1 warm, 100,663,296 B warmed, L2 peak 100,663,296 B = 0.50× L2 "
        "(budget 0.75)",
        "0 errors, 0 warnings in 1 plan",
    ]


ONE_WARM = """\
plancc: 1
model: m
platform: a2a3
budget: {{l2_fraction: {fraction}}}
tensors: {{a: {{shape: [{n}], dtype: int8}}}}
layers: {{l: {{stages: [{{name: s0, task: t0}}, {{name: g}}, {{name: s1, reads: [a]}}], \
warms: [{{name: wa, after: s0, tensors: [a]}}]}}}}
"""


def _one_warm(write_plan: Callable[..., Path], fraction: str, n: int) -> tuple[list[str], str]:
    """The messages and the summary line of one warm of ``n`` bytes under ``fraction``."""
    from plancc.formats.text import text

    report = validate_paths([str(write_plan(ONE_WARM.format(fraction=fraction, n=n)))])
    summary = text(report).splitlines()[-2]
    return [d.message for d in report.diagnostics if d.code in ("PC030", "PC032")], summary


def test_a_share_just_over_the_budget_does_not_read_under_it(
    write_plan: Callable[..., Path],
) -> None:
    # 151,817,400 B is 0.754080… × L2: "0.75×" would read as inside the 0.754 budget.
    messages, summary = _one_warm(write_plan, "0.754", 151_817_400)
    assert messages == [
        "warms alive at once exceed the 0.754 L2 budget during "
        "'g': wa = 151,817,400 B = 151.8 MB = 144.8 MiB = 0.7541× L2"
    ]
    assert summary.endswith(
        ": 1 warm, 151,817,400 B warmed, L2 peak 151,817,400 B = 0.7541× L2 (budget 0.754)"
    )


def test_a_share_just_under_the_budget_does_not_read_over_it(
    write_plan: Callable[..., Path],
) -> None:
    # 0.755799… × L2: "0.76×" would read as over the 0.756 budget, "0.756×" as at it.
    messages, summary = _one_warm(write_plan, "0.756", 152_162_638)
    assert messages == []
    assert summary.endswith("L2 peak 152,162,638 B = 0.7558× L2 (budget 0.756)")


def test_the_summary_of_one_byte_over_l2_does_not_read_as_l2(
    write_plan: Callable[..., Path],
) -> None:
    _, summary = _one_warm(write_plan, "0.75", L2 + 1)
    assert summary.endswith("L2 peak 201,326,593 B = 1.000000005× L2 (budget 0.75)")


def test_a_share_exactly_at_the_budget_shows_the_budget(write_plan: Callable[..., Path]) -> None:
    # 0.625 × L2 is not over the 0.625 budget, and "0.62×" would read as under it.
    messages, summary = _one_warm(write_plan, "0.625", L2 * 5 // 8)
    assert messages == []
    assert summary.endswith("L2 peak 125,829,120 B = 0.625× L2 (budget 0.625)")


def test_the_summary_prints_the_budget_as_written(write_plan: Callable[..., Path]) -> None:
    for fraction, shown in [("0.123456789", "0.123456789"), ("1", "1"), ("1e-7", "1e-07")]:
        _, summary = _one_warm(write_plan, fraction, 1)
        assert summary.endswith(f"(budget {shown})"), summary


@given(
    st.integers(0, 2 * L2),
    st.integers(1, L2),
    st.lists(st.decimals(0, 2, places=9, allow_nan=False), max_size=3),
)
def test_a_printed_share_compares_with_each_limit_as_the_share_does(
    n: int, l2: int, limits: list[Decimal]
) -> None:
    share = Fraction(n, l2)
    fractions = [Fraction(limit) for limit in limits]
    shown = fmt_share(share, fractions)
    assert len(shown.split(".")[1]) >= 2
    assert Fraction(shown) == round(share, len(shown.split(".")[1]))
    for limit in fractions:
        assert (Fraction(shown) > limit, Fraction(shown) < limit) == (share > limit, share < limit)


# -- the peak against a brute-force per-stage sum ----------------------------------------


@st.composite
def layers(draw: st.DrawFn) -> tuple[int, list[int], list[tuple[int, list[int]]], list[list[int]]]:
    n_stages = draw(st.integers(2, 8))
    sizes = draw(st.lists(st.integers(1, 10**8), min_size=1, max_size=6))
    reads = [
        draw(st.lists(st.integers(0, len(sizes) - 1), max_size=3, unique=True))
        for _ in range(n_stages)
    ]
    warms = draw(
        st.lists(
            st.tuples(
                st.integers(0, n_stages - 1),
                st.lists(st.integers(0, len(sizes) - 1), min_size=1, max_size=3, unique=True),
            ),
            max_size=4,
        )
    )
    return n_stages, sizes, warms, reads


def _brute_force_peak(
    n_stages: int, sizes: list[int], warms: list[tuple[int, list[int]]], reads: list[list[int]]
) -> int:
    """The contract's definition, stage by stage."""
    peak = 0
    for stage in range(n_stages):
        held: set[int] = set()
        for anchor, tensors in warms:
            later = [s for s in range(anchor + 1, n_stages) if set(reads[s]) & set(tensors)]
            last = max(later) if later else n_stages - 1
            if anchor + 1 <= stage <= last:
                held |= set(tensors)
        peak = max(peak, sum(sizes[t] for t in held))
    return peak


@pytest.mark.slow
@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(layers())
def test_peak_equals_brute_force(
    write_plan: Callable[..., Path],
    layer: tuple[int, list[int], list[tuple[int, list[int]]], list[list[int]]],
) -> None:
    n_stages, sizes, warms, reads = layer
    lines = ["plancc: 1", "model: m", "platform: a2a3", "tensors:"]
    lines += [f"  t{i}: {{shape: [{size}], dtype: int8}}" for i, size in enumerate(sizes)]
    lines += ["layers:", "  l:", "    stages:"]
    for s in range(n_stages):
        names = ", ".join(f"t{t}" for t in reads[s])
        lines.append(f"      - {{name: s{s}, task: tid{s}, reads: [{names}]}}")
    lines.append("    warms:")
    for i, (anchor, tensors) in enumerate(warms):
        names = ", ".join(f"t{t}" for t in tensors)
        lines.append(f"      - {{name: w{i}, after: s{anchor}, tensors: [{names}]}}")
    if not warms:
        lines[-1] = "    warms: []"
    report = validate_paths([str(write_plan("\n".join(lines) + "\n"))])
    plan = report.results[0].plan
    assert plan is not None
    from plancc.facts import facts_of
    from plancc.facts.metrics import l2_numbers

    assert l2_numbers(facts_of(plan))["peak_bytes"] == _brute_force_peak(
        n_stages, sizes, warms, reads
    )

"""Placement rules PC101-PC107: what the messages say, and that no plan makes a rule raise.

Positions and codes are pinned by the corpus (tests/cases/rules); this file
pins the content the contract asks for: the names, bytes, later anchor and
landed fraction in each message, and the seed's measured consequence.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plancc.api import validate_paths
from plancc.check import lookup
from plancc.diagnostics import Diagnostic
from plancc.facts import facts_of

CASES = Path(__file__).parent / "cases" / "rules"

# The seed's measured consequence, one clause per rule: in `plancc explain`, never in
# the message, which is about the plan at hand.
EVIDENCE = {
    "PC101": "153 GB/s",
    "PC102": "−595 µs",
    "PC103": "−692 µs",
    "PC104": "+770 µs",
    "PC105": "40.5 to 115.4 µs",
    "PC106": "2.2× L2",
    "PC107": "625–673 µs",
}


def _diags(case: str, code: str) -> list[Diagnostic]:
    report = validate_paths([str(CASES / f"{case}.yaml")])
    return [d for d in report.diagnostics if d.code == code]


def _one(case: str, code: str) -> Diagnostic:
    found = _diags(case, code)
    assert len(found) == 1, found
    return found[0]


def test_the_seed_evidence_is_in_explain_not_in_the_message() -> None:
    seen: set[str] = set()
    for plan in sorted(CASES.glob("*.yaml")):
        for d in validate_paths([str(plan)]).diagnostics:
            if d.code in EVIDENCE:
                seen.add(d.code)
                assert "seed" not in d.message, (plan.name, d.message)
                assert EVIDENCE[d.code] not in d.message, (plan.name, d.message)
                assert d.hint, (plan.name, d.code)
    assert seen == set(EVIDENCE)
    for code, evidence in EVIDENCE.items():
        found = lookup(code)
        assert found is not None
        assert evidence in found.doc, code


def test_pc101_names_the_first_warm() -> None:
    d = _one("pc101_split_scopes", "PC101")
    assert d.message == (
        "warm 'prefetch_wo_b' shares anchor 'q_proj' with warm 'prefetch_wo_a': two scopes "
        "split the SDMA bandwidth"
    )
    assert d.hint == "merge it into warm 'prefetch_wo_a': one scope, tensors in consumer order"


def test_pc102_names_the_pair_and_the_order() -> None:
    d = _one("pc102_wo_b_first", "PC102")
    assert d.message == "'wo_b' is issued before 'wo_a', which 'proj_a' reads earlier"
    assert d.hint == "issue in consumer order: [wo_a, wo_b]"
    d = _one("pc102_edges_flow", "PC102")
    assert d.message.startswith("'c' is issued before 'a'")
    assert d.hint == "issue in consumer order: [a, b, c]"


def test_pc103_names_the_missing_tensors() -> None:
    d = _one("pc103_wo_b_alone", "PC103")
    assert d.message == (
        "warm 'prefetch_wo_b' covers wo_b but not wo_a of consumer group 'o_proj' "
        "(stages proj_a, proj_b)"
    )
    assert d.hint == "add wo_a to the warm, in consumer order"
    d = _one("pc105_routed_w1", "PC103")
    assert "covers routed_w1 but not routed_w3, routed_w2 of stage 'moe_ffn'" in d.message
    # routed_w3 + routed_w2 would take the warm past the 0.75 budget: the hint says so
    # rather than send the plan to PC032, whose fix is to warm less.
    assert d.hint == (
        "adding routed_w3, routed_w2 would exceed the L2 budget: split the group, or allow PC103"
    )


def test_pc104_names_the_weights_in_between_and_the_later_anchor() -> None:
    d = _one("pc104_rms_norm_anchor", "PC104")
    assert d.message == (
        "anchor 'rms_norm' is early: 'kv_proj', 'q_proj' stream 46.3 MB of weights before 'proj_a'"
    )
    # The later anchor is the seed's optimum, the task that writes q.
    assert d.hint == (
        "anchor at 'q_proj' (task q_rope_tid): the last weight stream after which the warm "
        "still lands"
    )


def test_pc104_names_three_stages_then_counts() -> None:
    d = _one("pc104_rms_norm_anchor_csa", "PC104")
    assert d.message == (
        "anchor 'rms_norm' is early: 'kv_proj', 'q_proj', 'compressor' and 1 more stream 76.2 MB "
        "of weights before 'proj_a'"
    )
    assert d.hint is not None
    assert "'q_proj' (task q_rope_tid)" in d.hint  # compressor and indexer have no task


def test_pc105_names_the_sdma_stages_alive() -> None:
    d = _one("pc106_across_moe", "PC105")
    assert "alive (stages 'moe_gate' to 'proj_b')" in d.message
    assert "moe_dispatch, moe_combine" in d.message
    d = _one("pc105_routed_w1", "PC105")
    assert "moe_dispatch" in d.message
    assert "moe_combine run" not in d.message  # after the last consumer: not alive


def test_pc106_gives_the_bytes() -> None:
    d = _one("pc106_across_moe", "PC106")
    assert d.message == (
        "warm 'prefetch_o_proj_w' (100.7 MB) is evicted before 'proj_b': 'moe_gate', "
        "'moe_ffn', 'rms_norm' and 2 more stream 478.3 MB, 2.88× L2 in all"
    )


def test_pc107_gives_the_landed_fraction() -> None:
    d = _one("pc107_q_weights_window", "PC107")
    # 6 µs x 285 GB/s = 1,710,000 B of 42,074,112 B.
    assert d.message == (
        "warm 'prefetch_q_w' cannot land: in the 6 µs before 'q_proj', 285 GB/s lands an "
        "estimated 4.0 % of its 42.1 MB"
    )
    found = [d for d in _diags("pc107_edges_flow", "PC107") if "'w2'" in d.message]
    assert len(found) == 1
    assert "24.9 %" in found[0].message  # just under a quarter, rounded down
    d = _one("pc107_qkv_weights", "PC107")
    assert "its consumer 'kv_proj' runs right after anchor 'rms_norm'" in d.message


def test_warm_rules_carry_the_warm() -> None:
    """Every PC1xx finding can be silenced by its warm's `allow` (it carries `warm=`)."""
    from plancc.check import check
    from plancc.load import load
    from plancc.resolve import resolve
    from plancc.rules import RULES
    from plancc.validate import validate

    for plan_path in sorted(CASES.glob("*.yaml")):
        doc = load(str(plan_path), plan_path.read_bytes())
        assert not isinstance(doc, Diagnostic)
        plan, _ = resolve(validate(doc))
        assert plan is not None
        check(plan)  # loads every rule
        for r in RULES:
            if r.id.startswith("PC1"):
                for f in r.check(plan, facts_of(plan)):
                    assert f.warm is not None
                    assert f.pos in (f.warm.name_pos, f.warm.after_pos, f.warm.tensors_pos) or (
                        f.pos in [e.pos for e in f.warm.entries]
                    )


# -- no plan makes a rule raise ---------------------------------------------------------------

TENSORS = ["a", "b", "c", "kv"]


@st.composite
def layers(draw: st.DrawFn) -> str:
    n = draw(st.integers(1, 6))
    stages = []
    for i in range(n):
        parts = [f"name: s{i}", f"task: t{i}"]
        reads = draw(st.lists(st.sampled_from(TENSORS), max_size=3, unique=True))
        if reads:
            parts.append(f"reads: [{', '.join(reads)}]")
        if draw(st.booleans()):
            parts.append(f"group: g{draw(st.integers(0, 1))}")
        if draw(st.booleans()):
            parts.append("sdma: true")
        if draw(st.booleans()):
            parts.append(f"collective: {draw(st.sampled_from(['mte', 'sdma']))}")
        if draw(st.booleans()):
            parts.append(f"streams: {draw(st.sampled_from(['0', '1 MB', '427.8 MB']))}")
        if draw(st.booleans()):
            parts.append(f"duration_us: {draw(st.sampled_from(['0', '0.5', '10', '100']))}")
        stages.append("{" + ", ".join(parts) + "}")
    warms = []
    for j in range(draw(st.integers(0, 3))):
        after = draw(st.integers(0, n - 1))
        ts = draw(st.lists(st.sampled_from(TENSORS), min_size=1, max_size=4, unique=True))
        warms.append(f"{{name: w{j}, after: s{after}, tensors: [{', '.join(ts)}]}}")
    return f"  k: {{stages: [{', '.join(stages)}], warms: [{', '.join(warms)}]}}\n"


@pytest.mark.slow
@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(layer=layers())
def test_rules_never_raise(write_plan: Callable[..., Path], layer: str) -> None:
    text = (
        "plancc: 1\nmodel: m\nplatform: a2a3\ndims: {B: dynamic}\ntensors:\n"
        "  a: {shape: [1048576], dtype: int8}\n  b: {shape: [50331648], dtype: bf16}\n"
        "  c: {shape: [1024], dtype: fp32}\n  kv: {shape: [B, 64], dtype: bf16}\n"
        f"layers:\n{layer}"
    )
    report = validate_paths([str(write_plan(text))])
    for d in report.diagnostics:
        assert d.line >= 1
        assert d.col >= 1
    # PC101: exactly the warms after the first at each anchor, among those that issue
    # something (a warm of dynamic tensors only counts for no rule but PC020).
    plan = report.results[0].plan
    warms = plan.warms if plan else ()
    anchors = [w.anchor for w in warms if any(e.tensor.static for e in w.entries)]
    pc101 = sum(d.code == "PC101" for d in report.diagnostics)
    assert pc101 == len(anchors) - len(set(anchors))

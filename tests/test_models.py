"""Issue 6: the shipped whole-model plans read their dims and forward from config.json."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from plancc.api import validate_paths
from plancc.formats.json import json_

PLANS = Path(__file__).parent.parent / "plans"
L2 = 201_326_592


def _result(name: str) -> tuple[dict[str, object], object]:
    report = validate_paths([str(PLANS / name)])
    out = json.loads(json_(report, show_allowed=True))
    assert out["errors"] == 0, out["diagnostics"]
    # Their sources are not checked here (no pypto-lib beside this checkout): PC200 only.
    assert [d["code"] for d in out["diagnostics"]] == ["PC200"], out["diagnostics"]
    return out["plans"][0], report.results[0].plan


def test_flash_forward_from_compress_ratios() -> None:
    numbers, plan = _result("deepseek_v4_flash.yaml")
    assert numbers["forward"] == {
        "layers": 43,
        "warm_issues": 86,
        "warm_bytes": 43 * 100_663_296,
    }
    kinds = plan.forward.kinds  # type: ignore[attr-defined]
    assert Counter(kinds) == {"swa": 2, "csa": 21, "hca": 20}
    assert kinds[:4] == ("swa", "swa", "csa", "hca")
    assert kinds[-1] == "csa"  # layer 42; the MTP entry (index 43) is left out


def test_flash_dims_come_from_its_config() -> None:
    _, plan = _result("deepseek_v4_flash.yaml")
    dims = {d.name: d.value for d in plan.dims}  # type: ignore[attr-defined]
    assert dims["D"] == 4096
    assert dims["O_GROUP_IN"] == 4096
    assert dims["KV_BLOCKS"] is None
    assert plan.config["hidden_size"] == 4096  # type: ignore[attr-defined]


def test_flash_warm_is_the_seed_optimum() -> None:
    numbers, plan = _result("deepseek_v4_flash.yaml")
    assert numbers["l2"] == {
        "capacity_bytes": L2,
        "peak_bytes": 100_663_296,
        "peak_fraction": 0.5,
        "budget_fraction": 0.75,
    }
    for warm in plan.warms:  # type: ignore[attr-defined]
        assert [e.tensor.name for e in warm.entries] == ["wo_a", "wo_b"]
        assert plan.layers[warm.layer].stages[warm.anchor].task == "q_rope_tid"  # type: ignore[attr-defined]


def test_pro_has_61_layers_and_fits_l2() -> None:
    numbers, plan = _result("deepseek_v4_pro.yaml")
    forward = numbers["forward"]
    assert forward == {"layers": 61, "warm_issues": 61, "warm_bytes": 61 * 134_217_728}
    l2 = numbers["l2"]
    assert l2["peak_bytes"] == 134_217_728  # type: ignore[index]
    assert l2["peak_bytes"] <= 0.75 * L2  # type: ignore[index,operator]
    assert Counter(plan.forward.kinds) == {"hca": 31, "csa": 30}  # type: ignore[attr-defined]


def test_pro_o_projection_pair_would_not_fit() -> None:
    """The reason the Pro plan warms wo_a alone: the pair is 251.7 MB = 1.25× L2."""
    _, plan = _result("deepseek_v4_pro.yaml")
    tensors = plan.tensors  # type: ignore[attr-defined]
    pair = tensors["wo_a"].bytes + tensors["wo_b"].bytes
    assert pair == 251_658_240
    assert round(pair / L2, 2) == 1.25


def _allowed(name: str) -> list[str]:
    report = validate_paths([str(PLANS / name)])
    return sorted(a.diagnostic.code for a in report.allowed)


def test_accepted_warnings_are_exactly_the_measured_trade_offs() -> None:
    # Flash: none. The seed's optimum is clean: wo_b_scale (16 KB) is under PC103's
    # 1 %, and compressor and indexer, between q_proj and proj_a, have no task to
    # anchor on (PC104 names a better anchor or nothing).
    # Pro: PC103 on both kinds, wo_a warmed without wo_b (117.4 MB) on purpose.
    assert _allowed("deepseek_v4_flash.yaml") == []
    assert _allowed("deepseek_v4_pro.yaml") == ["PC103", "PC103"]

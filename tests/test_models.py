"""Issue 6: the shipped whole-model plans read their dims and forward from config.json."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from plancc.api import validate_paths
from plancc.cli.app import app
from plancc.formats.json import json_
from plancc.source.root import NO_SOURCE
from plancc.suggest import suggest
from plancc.suggest.rank import label

PLANS = Path(__file__).parent.parent / "plans"
MODELS = Path(__file__).parent.parent / "docs" / "models.md"
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
    # A prefix of wo_a: its first 8 of 16 groups, 67.1 MB per layer.
    assert forward == {"layers": 61, "warm_issues": 61, "warm_bytes": 61 * 67_108_864}
    l2 = numbers["l2"]
    assert l2["peak_bytes"] == 67_108_864  # type: ignore[index]
    assert l2["peak_bytes"] <= 0.75 * L2  # type: ignore[index,operator]
    assert Counter(plan.forward.kinds) == {"hca": 31, "csa": 30}  # type: ignore[attr-defined]


def test_pro_warms_the_first_half_of_wo_a_the_bytes_of_flash_s_wo_a() -> None:
    _, pro = _result("deepseek_v4_pro.yaml")
    _, flash = _result("deepseek_v4_flash.yaml")
    for warm in pro.warms:  # type: ignore[attr-defined]
        (entry,) = warm.entries
        assert entry.tensor.name == "wo_a"
        assert entry.rows is not None
        assert (entry.rows.lo, entry.rows.hi) == (0, 8)  # of 16 groups
        assert entry.bytes == flash.tensors["wo_a"].bytes == 67_108_864  # type: ignore[attr-defined]


def test_flash_s_next_layer_warm_is_clean_but_not_shipped(tmp_path: Path) -> None:
    """docs/models.md: stated on the Flash plan (after moe_combine, the next layer's
    wq_a and wkv), the rules find nothing against it and issue it in 42 of 43 layers; it
    is not shipped for want of the durations that would let them say it lands."""
    text = (PLANS / "deepseek_v4_flash.yaml").read_text("utf-8")
    # Each layer kind's warms end where the next kind (or the forward) starts.
    for kind, after in (("swa", "\n  csa:"), ("csa", "\n  hca:"), ("hca", "\n# One full")):
        warm = f"      - {{name: next_qkv_{kind}, after: moe_combine, next_layer: true, "
        warm += "tensors: [wq_a, wkv]}\n"
        last = f"        tensors: [wo_a, wo_b]\n{after}"
        assert last in text
        text = text.replace(last, last.replace("\n", f"\n{warm}", 1))
    text = text.replace(
        "{name: moe_combine, sdma: true, ", "{name: moe_combine, task: moe_tid, sdma: true, "
    )
    text = text.replace("config: configs/", f"config: {PLANS}/configs/")
    (tmp_path / "flash.yaml").write_text(text, encoding="utf-8")
    report = validate_paths([str(tmp_path / "flash.yaml")])
    assert [d.code for d in report.diagnostics] == ["PC200"]
    plan = report.results[0].plan
    assert plan is not None
    assert [w.name for w in plan.warms if w.next_layer] == [
        "next_qkv_swa",
        "next_qkv_csa",
        "next_qkv_hca",
    ]
    out = json.loads(json_(report))["plans"][0]
    assert out["forward"]["warm_issues"] == 86 + 2 * 42  # none in the last layer
    assert out["l2"]["peak_bytes"] == 100_663_296  # never alive with the o-projection warm


def suggests_table(*args: str) -> str:
    """The table lines of `plancc suggest --format markdown` (docs/models.md shows them)."""
    done = CliRunner().invoke(
        app, ["suggest", *args, "--format", "markdown"], env={"NO_COLOR": "1"}
    )
    assert done.exit_code == 0, done.output
    return "".join(line + "\n" for line in done.output.splitlines() if line.startswith("|"))


def test_docs_models_shows_flash_s_suggests_table_exactly() -> None:
    table = suggests_table(str(PLANS / "deepseek_v4_flash.yaml"), "--layer", "csa", "--top", "5")
    assert table.count("\n") == 7  # the header, its rule, five rows
    assert "| 2 | gain | q_proj | wo_a[0:6] |" in table  # a prefix among the candidates
    assert table in MODELS.read_text("utf-8")


def test_docs_models_shows_pros_suggests_table_exactly() -> None:
    table = suggests_table(str(PLANS / "deepseek_v4_pro.yaml"), "--layer", "csa", "--top", "5")
    assert table.count("\n") == 7
    assert "| 1 | gain | q_proj | wo_a[0:8] |" in table  # the plan's prefix, first
    assert table in MODELS.read_text("utf-8")


def test_docs_models_shows_flash_s_next_layer_rank_exactly(tmp_path: Path) -> None:
    """docs/models.md: on the Flash plan with a TaskId after the MoE, suggest ranks the
    next layer's wq_a and wkv after moe_combine contended, below no warm."""
    text = (PLANS / "deepseek_v4_flash.yaml").read_text("utf-8")
    text = text.replace(
        "{name: moe_combine, sdma: true, ", "{name: moe_combine, task: moe_tid, sdma: true, "
    )
    text = text.replace("config: configs/", f"config: {PLANS}/configs/")
    plan = tmp_path / "flash_moe.yaml"
    plan.write_text(text, encoding="utf-8")
    table = suggests_table(
        str(plan), "--no-source", "--layer", "csa", "--top", "2",
        "--candidate", "csa:moe_combine:wq_a,wkv:next",
    )  # fmt: skip
    assert table.count("\n") == 5  # the header, its rule, two rows, the asked one
    assert "| contended | moe_combine | next: wq_a, wkv | 12.6 MB |" in table
    assert table in MODELS.read_text("utf-8")


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


# -- the three newer families (issue 44) -----------------------------------------------------

DOCS = Path(__file__).parent.parent / "docs" / "models.md"
DSPARK = "deepseek_v4_flash_dspark.yaml"


def _suggest_table(plan: Path, *args: str) -> str:
    """`suggest … --format markdown --top 4`'s table rows, as docs/models.md shows them."""
    done = CliRunner().invoke(
        app,
        ["suggest", str(plan), "--format", "markdown", "--top", "4", *args],
        env={"NO_COLOR": "1"},
    )
    assert done.exit_code == 0, done.output
    return "".join(line + "\n" for line in done.output.splitlines() if line.startswith("|"))


@pytest.mark.parametrize(
    ("name", "args", "rows"),
    [
        ("qwen3_32b.yaml", (), 1),
        ("deepseek_v3_2.yaml", (), 1),
        (DSPARK, ("--layer", "swa"), 4),
        (DSPARK, ("--layer", "csa"), 4),
        (DSPARK, ("--layer", "hca"), 4),
    ],
)
def test_docs_models_shows_suggests_table_exactly(
    name: str, args: tuple[str, ...], rows: int
) -> None:
    table = _suggest_table(PLANS / name, *args)
    assert table.count("\n") == 2 + rows  # the header, its rule, the rows
    assert table in DOCS.read_text("utf-8")


def test_the_newer_plans_validate_and_ship_no_warm() -> None:
    """Their sources are not checked here (PC200 only); none has a warm: Qwen3-32B and
    V3.2 bind no task, dspark's o-projection warms span the heads' all-to-all."""
    for name in ("qwen3_32b.yaml", "deepseek_v3_2.yaml", DSPARK):
        numbers, plan = _result(name)
        assert plan.warms == (), name  # type: ignore[attr-defined]
        assert numbers["l2"]["peak_bytes"] == 0  # type: ignore[index]


def test_dspark_s_exchanges_are_mte_collectives() -> None:
    """o_group_a2a and tp_o_reduce_scatter in every kind, as extract marks them (each
    calls pld.tensor.put and notify/wait: MTE); no stage uses SDMA."""
    _, plan = _result(DSPARK)
    for kind in ("swa", "csa", "hca"):
        stages = plan.layers[kind].stages  # type: ignore[attr-defined]
        assert {s.name: s.collective for s in stages if s.collective} == {
            "o_group_a2a": "mte",
            "tp_o_reduce_scatter": "mte",
        }
        assert not any(s.sdma for s in stages)


def test_dspark_s_heads_warm_spans_the_all_to_all(tmp_path: Path) -> None:
    """The first pass's CSA warm (wo_a, wo_b, wo_b_scale after sparse_attn): PC105 at its
    name, naming o_group_a2a and its engine; `suggest` ranks it a loss below no warm."""
    text = (PLANS / DSPARK).read_text("utf-8")
    declared = (
        "    # None: from heads_tid (suggest's best o-projection warm) it spans o_group_a2a.\n"
        "    warms: []\n"
    )
    assert declared in text
    text = text.replace(
        declared,
        "    warms:\n      - {name: prefetch_o_proj_w_csa, after: sparse_attn, "
        "tensors: [wo_a, wo_b, wo_b_scale]}\n",
    )
    text = text.replace("config: configs/", f"config: {PLANS}/configs/")
    plan = tmp_path / "dspark.yaml"
    plan.write_text(text, encoding="utf-8")
    report = validate_paths([str(plan)])
    (d,) = [d for d in report.diagnostics if d.code != "PC200"]
    assert (d.code, d.line, d.col) == ("PC105", 251, 16)  # the warm's name
    assert d.message == (
        "warm 'prefetch_o_proj_w_csa' is alive (stages 'o_group_a2a' to 'proj_b') while "
        "collective 'o_group_a2a' (vector-core MTE) runs"
    )
    found = suggest(str(plan), ["csa"], [])
    (layer,) = found.layers
    first = layer.ranked[0]
    assert (first.klass, first.evaluation.candidate.none) == ("none", True)
    (row,) = [
        r for r in layer.ranked if label(r.evaluation) == "sparse_attn: wo_a, wo_b, wo_b_scale"
    ]
    assert row.klass == "loss"
    assert "spans the collective 'o_group_a2a' (vector-core MTE) (PC105)" in row.reason


def _tasked(name: str, tmp_path: Path) -> Path:
    """A copy of the plan with a task on every stage: what the code would bind."""
    lines = []
    for line in (PLANS / name).read_text("utf-8").splitlines():
        flow = re.match(r"^(\s*)- \{name: (\w+), (.*)$", line)
        block = re.match(r"^(\s*)- name: (\w+)$", line)
        out = line.replace("config: configs/", f"config: {PLANS}/configs/")
        if flow:
            out = f"{flow[1]}- {{name: {flow[2]}, task: {flow[2]}_tid, {flow[3]}"
        elif block:
            out += f"\n{block[1]}  task: {block[2]}_tid"
        lines.append(out)
    copy = tmp_path / name
    copy.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return copy


def _top(plan: Path, n: int) -> list[str]:
    (layer,) = suggest(str(plan), source_root=NO_SOURCE).layers
    return [label(r.evaluation) for r in layer.ranked[:n]]


def test_what_the_newer_plans_should_measure_first(tmp_path: Path) -> None:
    """docs/models.md: with a task on every stage, Qwen3-32B's gains are `wo` after
    sv_matmul, tied with the next layer's wq after down_proj_residual, then the next
    layer's wk and wv, then `wo` after rope_kv_cache guarded where the K and V streams
    leave it in L2 (a loss at the defaults), then after qk_matmul guarded; V3.2's wq_b
    and wq_b_idx after q_lora_proj, then the absorbed projections tied, then
    w_latent_to_v from s3_score_tile."""
    assert _top(_tasked("qwen3_32b.yaml", tmp_path), 8) == [
        "down_proj_residual: next layer's wq",
        "sv_matmul: wo",
        "down_proj_residual: next layer's wk, wv",
        "rope_kv_cache: wo if BATCH <= 8 and CTX <= 2048",
        "rope_kv_cache: wo if CTX <= 1024",
        "qk_matmul: wo if CTX <= 2048",
        "softmax: wo if CTX <= 2048",
        "no warm",
    ]
    assert _top(_tasked("deepseek_v3_2.yaml", tmp_path), 5) == [
        "q_lora_proj: wq_b",
        "q_lora_proj: wq_b_idx",
        "q_rope: w_q_nope_to_latent",
        "s4_softmax: w_latent_to_v",
        "s3_score_tile: w_latent_to_v",
    ]


def test_flash_and_pro_moe_keep_the_seed_s_sdma_beside_the_code_s_collective() -> None:
    for name in ("deepseek_v4_flash.yaml", "deepseek_v4_pro.yaml"):
        _, plan = _result(name)
        for layer in plan.layers.values():  # type: ignore[attr-defined]
            moe = [(s.name, s.sdma, s.collective) for s in layer.stages if s.collective]
            assert moe == [("moe_dispatch", True, "mte"), ("moe_combine", True, "mte")]

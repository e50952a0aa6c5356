"""Issue 35: Qwen3-14B, the second family: stacked weights, a join anchor, run-time
parameters and partial reads, in the shipped plan and its generated module."""

from __future__ import annotations

import ast
import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from plancc import render
from plancc.api import validate_paths
from plancc.cli.app import app
from plancc.facts import facts_of

ROOT = Path(__file__).parent.parent
PLAN = ROOT / "plans" / "qwen3_14b.yaml"
GOLDEN = ROOT / "tests" / "golden"
PYPTO_LIB = os.environ.get("PLANCC_PYPTO_LIB")


def _report(**sets: int) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(code, message) of the findings shown, and of those its `allow` silenced."""
    report = validate_paths([str(PLAN)], overrides=sets)
    shown = [(d.code, d.message) for d in report.diagnostics]
    allowed = [(a.diagnostic.code, a.diagnostic.message) for a in report.allowed]
    return shown, allowed


def test_the_plan_validates_and_its_warm_is_guarded_by_the_context_length() -> None:
    shown, allowed = _report()
    # Its source is not checked here (no pypto-lib beside this checkout): PC200 only.
    assert [c for c, _ in shown] == ["PC200"]
    assert allowed == []  # the guard, not an `allow`, keeps the warm where it pays
    plan = validate_paths([str(PLAN)]).results[0].plan
    assert plan is not None
    (warm,) = plan.warms
    assert [str(g) for g in warm.guards] == ["CTX <= 2272"]
    assert warm.guards[0].variable == "ctx_len"


def _guarded_at(tmp_path: Path, bound: int) -> list[tuple[str, str]]:
    """The findings of the plan with its guard's bound moved to ``bound``."""
    (tmp_path / "configs").mkdir(exist_ok=True)
    config = ROOT / "plans" / "configs" / "qwen3_14b.config.json"
    (tmp_path / "configs" / config.name).write_bytes(config.read_bytes())
    text = PLAN.read_text("utf-8").replace("guard: CTX <= 2272", f"guard: CTX <= {bound}")
    (tmp_path / "qwen3_14b.yaml").write_text(text, encoding="utf-8")
    report = validate_paths([str(tmp_path / "qwen3_14b.yaml")])
    return [(d.code, d.message) for d in report.diagnostics if d.code != "PC200"]


@pytest.mark.parametrize(("bound", "evicted"), [(512, False), (2272, False), (2273, True)])
def test_the_warm_survives_the_kv_stream_up_to_2272_tokens(
    tmp_path: Path, bound: int, evicted: bool
) -> None:
    """The guarded warm is judged at the values its guard admits: the range's high end
    clipped to the bound. At 2,272 tokens the KV stream and the warm fill L2 exactly."""
    found = _guarded_at(tmp_path, bound)
    if not evicted:
        assert found == []
        return
    assert found == [
        (
            "PC106",
            "warm 'prefetch_wo' (52.4 MB) is evicted before 'out_proj': 'fa_fused' streams "
            f"149.0 MB, 1.0003× L2 in all at CTX={bound}",
        )
    ]


def test_a_run_the_guard_skips_does_not_judge_the_warm() -> None:
    shown, allowed = _report(CTX=4096)
    assert [c for c, _ in shown] == ["PC200"]
    assert allowed == []


def test_bytes_count_one_layer_slab_and_the_forward_forty_layers() -> None:
    plan = validate_paths([str(PLAN)]).results[0].plan
    assert plan is not None
    (warm,) = plan.warms
    assert warm.bytes == 5120 * 5120 * 2
    assert plan.forward is not None
    assert len(plan.forward.kinds) == 40
    layer = plan.layers["decode_layer"]
    assert [layer.stages[a].name for a in warm.anchors] == ["q_proj", "k_proj", "v_proj"]
    # gate_proj and gate_proj_4 read 6/17 and 11/17 of w_gate: one w_gate between them.
    w_gate = plan.tensors["w_gate"]
    gates = [s for s in layer.stages if s.name in ("gate_proj", "gate_proj_4")]
    assert sum(s.read_bytes(w_gate) for s in gates) == w_gate.bytes == 5120 * 17408 * 2


def test_the_module_takes_the_stack_the_index_and_every_anchor() -> None:
    module = (GOLDEN / "qwen3_14b_warms.py").read_text("utf-8")
    (fn,) = [n for n in ast.parse(module).body if isinstance(n, ast.FunctionDef)]
    annotations = [(a.arg, ast.unparse(a.annotation or ast.Constant(None))) for a in fn.args.args]
    assert annotations == [
        ("wo", "pl.Tensor[[NUM_LAYERS * HIDDEN, HIDDEN], pl.BF16]"),
        ("layer_idx", "pl.Scalar[pl.INT32]"),
        ("ctx_len", "pl.Scalar[pl.INT32]"),  # the guard's run-time value: CTX's `source`
        ("q_proj_tid", "pl.Scalar[pl.TASK_ID]"),
        ("k_proj_tid", "pl.Scalar[pl.TASK_ID]"),
        ("v_proj_tid", "pl.Scalar[pl.TASK_ID]"),
    ]
    body = [ast.unparse(s) for s in fn.body[1:]]  # after the docstring
    assert body[:2] == [
        "wo_slab: pl.Tensor[[HIDDEN, HIDDEN], pl.BF16] = "
        "pl.slice(wo, [HIDDEN, HIDDEN], [layer_idx * HIDDEN, 0])",
        "wo_flat = pl.reshape(wo_slab, [HIDDEN * HIDDEN])",
    ]
    guard = fn.body[3]
    assert isinstance(guard, ast.If)
    assert ast.unparse(guard.test) == "ctx_len <= 2272"
    (scope,) = guard.body
    assert isinstance(scope, ast.With)
    deps = [k for k in scope.items[0].context_expr.keywords if k.arg == "deps"]  # type: ignore[attr-defined]
    assert ast.unparse(deps[0].value) == "[q_proj_tid, k_proj_tid, v_proj_tid]"
    assert "prefetch_wo(wo, layer_idx, ctx_len, q_proj_tid, k_proj_tid, v_proj_tid)" in module


def test_the_manifest_records_the_stack_the_index_and_the_anchors() -> None:
    manifest = json.loads((GOLDEN / "qwen3_14b_warms.manifest.json").read_text("utf-8"))
    (warm,) = manifest["warms"]
    assert warm["after"] == ["q_proj", "k_proj", "v_proj"]
    assert warm["task"] == ["q_proj_tid", "k_proj_tid", "v_proj_tid"]
    (tensor,) = warm["tensors"]
    assert tensor["shape"] == [5120, 5120]
    assert tensor["stacked"] == {"layers": 40, "index": "layer_idx", "index_type": "int32"}
    assert manifest["forward"]["warm_bytes"] == 40 * 52_428_800
    assert manifest["forward"]["guarded_warm_issues"] == 40  # up to 40: CTX <= 2272
    assert warm["guards"] == [{"param": "CTX", "op": "<=", "bound": 2272, "source": "ctx_len"}]


def test_the_golden_is_this_plans_build() -> None:
    plan = validate_paths([str(PLAN)]).results[0].plan
    assert plan is not None
    assert render.render_module(plan, "../../plans/qwen3_14b.yaml", facts_of(plan)) == (
        GOLDEN / "qwen3_14b_warms.py"
    ).read_text("utf-8")


@pytest.mark.skipif(not PYPTO_LIB, reason="PLANCC_PYPTO_LIB is not set")
def test_against_pypto_lib_main_only_the_warm_is_missing() -> None:
    """The plan is the graph the code runs: the one finding is the warm it proposes, which
    pypto-lib does not call yet (PC206, docs/models.md)."""
    report = validate_paths([str(PLAN)], source_root=PYPTO_LIB)
    lines = PLAN.read_text("utf-8").splitlines()
    warm = lines.index("      - name: prefetch_wo") + 1
    assert [(d.code, d.line) for d in report.diagnostics] == [("PC206", warm)]
    hint = report.diagnostics[0].hint or ""
    assert hint.startswith(
        "call prefetch_wo(wo, layer_idx, ctx_len, q_proj_tid, k_proj_tid, v_proj_tid) after "
    )


# -- PC207 on a stacked tensor: the source parameter is the whole stack -------------------

_STACKED_LAYER = """\
import pypto.language as pl

LAYERS = 4
ROWS = 256
COLS = 512


@pl.jit.inline
def layer(
    x: pl.Tensor[[16, ROWS], pl.BF16],
    w: pl.Tensor[[LAYERS * ROWS, COLS], pl.BF16],
    y: pl.Tensor[[16, COLS], pl.FP32],
    layer_idx: pl.Scalar[pl.INT32],
):
    base = layer_idx * ROWS
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="proj") as proj_tid:
        y = pl.matmul(x, w[base : base + ROWS, 0:COLS], out_dtype=pl.FP32)
    return y
"""

_STACKED_PLAN = """\
plancc: 1
model: stacked_source
platform: a2a3
source_root: .
tensors:
  x: {{shape: [16, 256], dtype: bf16}}
  w: {{shape: [256, 512], dtype: bf16, stacked: {{layers: {layers}, index: layer_idx}}}}
  y: {{shape: [16, 512], dtype: fp32}}
layers:
  k:
    source: layer.py:layer
    stages:
      - {{name: proj, task: proj_tid, reads: [x, w], kernel: proj}}
"""


@pytest.mark.parametrize("layers", [4, 5])
def test_a_stacked_tensor_is_compared_with_the_stacks_annotation(
    tmp_path: Path, layers: int
) -> None:
    (tmp_path / "layer.py").write_text(_STACKED_LAYER, "utf-8")
    plan = tmp_path / "plan.yaml"
    plan.write_text(_STACKED_PLAN.format(layers=layers), "utf-8")
    found = [(d.code, d.line, d.message) for d in validate_paths([str(plan)]).diagnostics]
    if layers == 4:
        assert found == []
    else:
        assert found == [
            (
                "PC207",
                7,
                "tensor 'w' stacks to [1280, 512]; its source parameter w (layer.py:11, "
                "layer) has [1024, 512]",
            )
        ]


def test_the_report_draws_the_join(tmp_path: Path) -> None:
    """The warm's lane names every anchor of the join, and each anchor's column is marked
    as one (stages 4, 7 and 8: q_proj, k_proj, v_proj)."""
    from plancc.report_html import report

    page = tmp_path / "q.html"
    report(str(PLAN), str(page), None)
    html = page.read_text("utf-8")
    assert "after q_proj + k_proj + v_proj · 1 tensor, 52.4 MB" in html
    assert {n for n in ("4 anchor", "7 anchor", "8 anchor") if n in html} == {
        "4 anchor",
        "7 anchor",
        "8 anchor",
    }


# -- extract: a warm scope that waits for several stages' tasks is a join ------------------

_JOIN_LAYER = """\
import pypto.language as pl

D = 256


@pl.jit.inline
def layer(
    x: pl.Tensor[[16, D], pl.BF16],
    wq: pl.Tensor[[D, D], pl.BF16],
    wk: pl.Tensor[[D, D], pl.BF16],
    wo: pl.Tensor[[D, D], pl.BF16],
    q: pl.Tensor[[16, D], pl.FP32],
    k: pl.Tensor[[16, D], pl.FP32],
    y: pl.Tensor[[16, D], pl.FP32],
):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="q_proj") as q_tid:
        q = pl.matmul(x, wq, out_dtype=pl.FP32)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="k_proj") as k_tid:
        k = pl.matmul(x, wk, out_dtype=pl.FP32)
    wo_flat = pl.reshape(wo, [D * D])
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="prefetch_wo", deps=[q_tid, k_tid]):
        warm_ctx = pl.prefetch.make_context()
        pl.prefetch.async_prefetch(wo_flat, warm_ctx)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="o_proj", deps=[q_tid, k_tid]) as o_tid:
        y = pl.matmul(pl.cast(q, target_type=pl.BF16), wo, out_dtype=pl.FP32)
    return y
"""


def test_extract_writes_a_warm_waiting_for_two_tasks_as_a_join(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from plancc.source.extract import extract

    (tmp_path / "layer.py").write_text(_JOIN_LAYER, "utf-8")
    monkeypatch.chdir(tmp_path)
    done = extract(["layer.py:layer"], [], None)
    assert "        after: [q_proj, k_proj]\n" in done.text, done.text
    plan = tmp_path / "plan.yaml"
    plan.write_text(done.text, "utf-8")
    found = [(d.code, d.message) for d in validate_paths([str(plan)]).diagnostics]
    assert [c for c, _ in found if c.startswith("PC2")] == [], found


def test_extract_writes_a_stacked_weight_from_its_annotation_and_offset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`w: [LAYERS * ROWS, COLS]`, read from `layer_idx * ROWS`: one layer's slab of a
    stack; `x` (16 rows, no offset scaled by ROWS) is not."""
    from plancc.source.extract import extract

    (tmp_path / "layer.py").write_text(_STACKED_LAYER, "utf-8")
    monkeypatch.chdir(tmp_path)
    done = extract(["layer.py:layer"], [], None)
    assert "  x: {shape: [16, ROWS], dtype: bf16}\n" in done.text, done.text
    assert (
        "  w: {shape: [ROWS, COLS], dtype: bf16, stacked: {layers: LAYERS, index: layer_idx}}\n"
        in done.text
    ), done.text
    plan = tmp_path / "plan.yaml"
    plan.write_text(done.text, "utf-8")
    assert validate_paths([str(plan)]).diagnostics == []


def test_docs_models_shows_suggests_table_exactly() -> None:
    done = CliRunner().invoke(
        app, ["suggest", str(PLAN), "--format", "markdown", "--top", "5"], env={"NO_COLOR": "1"}
    )
    assert done.exit_code == 0, done.output
    table = "".join(line + "\n" for line in done.output.splitlines() if line.startswith("|"))
    assert table.count("\n") == 7  # the header, its rule, five rows
    # The new forms among them: the next layer's q/k/v, the plan's guarded join.
    assert "| 1 | gain | dcr_xgamma | next: wk, wq, wv |" in table
    assert "| q_proj+k_proj+v_proj | wo if CTX <= 2272 |" in table
    assert table in (ROOT / "docs" / "models.md").read_text("utf-8")

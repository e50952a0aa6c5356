"""The warm forms no single layer holds (issue 43): a cross-layer warm (`next_layer`), a
prefix (`rows`) and a guarded warm (`guard`), from the plan to the generated code.

The fixtures, one per form, are tests/data/forms/*.yaml; their build is
tests/golden/forms/ (`make golden`). The rules' findings on each form are the cases of
tests/cases/forms/. Here: the goldens are current, the generated code has exactly the
forms pypto-facts.md verified (by AST), the manifest says how a harness calls each warm,
and the numbers (bytes, issues per forward) count each form right.
"""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from plancc import ir
from plancc.api import build, validate_paths
from plancc.check import lookup
from plancc.facts.metrics import forward_numbers
from plancc.runtime import load_manifest

ROOT = Path(__file__).resolve().parent.parent
FORMS = ROOT / "tests" / "data" / "forms"
GOLDEN = ROOT / "tests" / "golden" / "forms"
SCHEMA = json.loads((ROOT / "schemas" / "manifest.schema.json").read_text("utf-8"))


def _plan(name: str) -> ir.Plan:
    result = validate_paths([str(FORMS / f"{name}.yaml")])
    assert result.errors == 0, [d.message for d in result.diagnostics]
    plan = result.results[0].plan
    assert plan is not None
    return plan


def _module(model: str) -> ast.Module:
    return ast.parse((GOLDEN / f"{model}_warms.py").read_text("utf-8"))


def _manifest(model: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((GOLDEN / f"{model}_warms.manifest.json").read_text("utf-8"))
    return data


def _function(tree: ast.Module, name: str) -> ast.FunctionDef:
    return next(f for f in tree.body if isinstance(f, ast.FunctionDef) and f.name == name)


def _body(fn: ast.FunctionDef) -> list[ast.stmt]:
    """The statements after the docstring."""
    return fn.body[1:]


# -- goldens ---------------------------------------------------------------------------------


def test_the_forms_goldens_are_current() -> None:
    plans = sorted(FORMS.glob("*.yaml"))
    assert [p.stem for p in plans] == [
        "guarded",
        "next_layer_slices",
        "next_layer_stacked",
        "prefix",
    ]
    result = build([str(p) for p in plans], str(GOLDEN), compare=True)
    assert not result.failed, [d.message for d in result.report.diagnostics]
    stale = [f"{f.path.name}: {f.status.value}" for f in result.out_of_date]
    assert not stale, f"golden files out of date (run `make golden` and review): {stale}"


@pytest.mark.parametrize("plan", sorted(FORMS.glob("*.yaml")), ids=lambda p: p.stem)
def test_each_fixture_is_clean(plan: Path) -> None:
    result = validate_paths([str(plan)])
    assert [(d.code, d.message) for d in result.diagnostics] == []


@pytest.mark.parametrize(
    "model", ["forms_guarded", "forms_next_slices", "forms_next_stacked", "forms_prefix"]
)
def test_each_manifest_matches_its_schema_and_loads(model: str) -> None:
    Draft202012Validator(SCHEMA).validate(_manifest(model))
    loaded = load_manifest(GOLDEN / f"{model}_warms.manifest.json")  # its module beside it
    assert loaded.warms


def _ruff() -> str:
    found = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if found is None:
        pytest.skip("ruff is not installed")
    return found


def test_the_modules_are_formatted_and_lint_clean() -> None:
    ruff = _ruff()
    files = [str(p) for p in sorted(GOLDEN.glob("*.py"))]
    fmt = subprocess.run(
        [ruff, "format", "--check", "--diff", "--isolated", *files],
        capture_output=True,
        text=True,
        check=False,
    )
    assert fmt.returncode == 0, fmt.stdout + fmt.stderr
    lint = subprocess.run(
        [ruff, "check", "--no-cache", "--isolated", *files],
        capture_output=True,
        text=True,
        check=False,
    )
    assert lint.returncode == 0, lint.stdout + lint.stderr


# -- a prefix ---------------------------------------------------------------------------------


def test_a_prefix_is_an_annotated_leading_dim_slice_then_a_flat_reshape_before_the_scope() -> None:
    fn = _function(_module("forms_prefix"), "prefetch_wo_a_head")
    sliced, reshape, scope = _body(fn)
    # wo_a_rows: pl.Tensor[[HALF, O_LORA, GROUP_IN], pl.BF16] = pl.slice(wo_a, [...], [0, 0, 0])
    assert isinstance(sliced, ast.AnnAssign)
    assert ast.unparse(sliced.target) == "wo_a_rows"
    assert ast.unparse(sliced.annotation) == "pl.Tensor[[HALF, O_LORA, GROUP_IN], pl.BF16]"
    assert ast.unparse(sliced.value) == "pl.slice(wo_a, [HALF, O_LORA, GROUP_IN], [0, 0, 0])"
    assert isinstance(reshape, ast.Assign)
    assert ast.unparse(reshape) == "wo_a_flat = pl.reshape(wo_a_rows, [HALF * O_LORA * GROUP_IN])"
    assert isinstance(scope, ast.With)
    assert ast.unparse(scope.body[1]) == "pl.prefetch.async_prefetch(wo_a_flat, warm_ctx)"


def test_a_stack_s_prefixes_slice_the_slab_at_the_index_rows_and_only_the_first_dim() -> None:
    fn = _function(_module("forms_prefix"), "prefetch_gate_groups")
    first, second, flat, flat_1, scope = _body(fn)
    assert isinstance(first, ast.AnnAssign)
    assert isinstance(second, ast.AnnAssign)
    assert ast.unparse(first.value) == "pl.slice(w_gate, [2, 512, D], [layer * GROUPS, 0, 0])"
    # A second range of one tensor: its own variables, and its count as a number.
    assert ast.unparse(second.target) == "w_gate_1_rows"
    assert (
        ast.unparse(second.value) == "pl.slice(w_gate, [2, 512, D], [layer * GROUPS + HALF, 0, 0])"
    )
    for stmt in (first, second):  # every offset but the first dim's is 0: whole rows only
        assert isinstance(stmt.value, ast.Call)
        offset = stmt.value.args[2]
        assert isinstance(offset, ast.List)
        assert [ast.unparse(e) for e in offset.elts[1:]] == ["0", "0"]
    assert ast.unparse(flat) == "w_gate_flat = pl.reshape(w_gate_rows, [2 * 512 * D])"
    assert ast.unparse(flat_1) == "w_gate_1_flat = pl.reshape(w_gate_1_rows, [2 * 512 * D])"
    assert isinstance(scope, ast.With)
    calls = [ast.unparse(s) for s in scope.body[1:]]
    assert calls == [
        "pl.prefetch.async_prefetch(w_gate_flat, warm_ctx)",
        "pl.prefetch.async_prefetch(w_gate_1_flat, warm_ctx)",
    ]


def test_a_prefix_counts_its_rows_bytes() -> None:
    plan = _plan("prefix")
    head = next(w for w in plan.warms if w.name == "prefetch_wo_a_head")
    (entry,) = head.entries
    assert entry.rows is not None
    assert (entry.rows.lo, entry.rows.hi) == (0, 8)
    assert entry.tensor.bytes == 134_217_728
    assert entry.bytes == head.bytes == 67_108_864  # 8 of 16 groups
    manifest = _manifest("forms_prefix")
    tensors = manifest["warms"][0]["tensors"]
    assert tensors == [
        {
            "name": "wo_a",
            "dtype": "bf16",
            "shape": [16, 1024, 4096],
            "flat": [33_554_432],
            "bytes": 67_108_864,
            "rows": [0, 8],
        }
    ]
    assert [t["rows"] for t in manifest["warms"][1]["tensors"]] == [[0, 2], [8, 10]]
    assert manifest["warms"][1]["bytes"] == 2 * 8_388_608


# -- a guard ---------------------------------------------------------------------------------


def test_a_guard_is_an_int32_parameter_and_nested_ifs_around_the_scope() -> None:
    tree = _module("forms_guarded")
    fn = _function(tree, "prefetch_up")
    assert [(a.arg, ast.unparse(a.annotation) if a.annotation else "") for a in fn.args.args] == [
        ("w_up", "pl.Tensor[[HIDDEN, HIDDEN], pl.BF16]"),
        ("ctx_len", "pl.Scalar[pl.INT32]"),  # CTX's `source`
        ("batch", "pl.Scalar[pl.INT32]"),  # BATCH's, its name in lower case by default
        ("after", "pl.Scalar[pl.TASK_ID]"),
    ]
    reshape, outer = _body(fn)
    assert isinstance(reshape, ast.Assign)  # the reshape stays before the ifs
    assert isinstance(outer, ast.If)
    assert ast.unparse(outer.test) == "ctx_len >= 64"
    (inner,) = outer.body
    assert isinstance(inner, ast.If)
    assert ast.unparse(inner.test) == "batch <= 8"
    (scope,) = inner.body
    assert isinstance(scope, ast.With)
    assert not outer.orelse
    assert not inner.orelse
    for node in ast.walk(tree):  # `and` in a guard fails in PyPTO's code generation
        assert not isinstance(node, ast.BoolOp)
    single = _function(tree, "prefetch_wo")
    _, guard = _body(single)
    assert isinstance(guard, ast.If)
    assert ast.unparse(guard.test) == "ctx_len <= 2272"
    assert isinstance(guard.body[0], ast.With)


def test_the_manifest_names_each_guard_and_its_source() -> None:
    manifest = _manifest("forms_guarded")
    up = manifest["warms"][1]
    assert up["guards"] == [
        {"param": "CTX", "op": ">=", "bound": 64, "source": "ctx_len"},
        {"param": "BATCH", "op": "<=", "bound": 8, "source": "batch"},
    ]
    assert up["parameters"] == [
        {"name": "w_up", "kind": "tensor", "dtype": "bf16", "shape": [5120, 5120], "layer": "this"},
        {"name": "ctx_len", "kind": "guard", "type": "int32", "param": "CTX"},
        {"name": "batch", "kind": "guard", "type": "int32", "param": "BATCH"},
        {"name": "after", "kind": "task", "stage": "attn", "task": "attn_tid"},
    ]
    # A guard may skip its warm: the forward's counts are the most it issues.
    assert manifest["forward"]["warm_issues"] == 80
    assert manifest["forward"]["guarded_warm_issues"] == 80
    loaded = load_manifest(GOLDEN / "forms_guarded_warms.manifest.json")
    assert loaded.warms[0].guards == (("CTX", "<=", 2272, "ctx_len"),)


def test_a_guarded_warm_is_judged_at_the_values_its_guard_admits(tmp_path: Path) -> None:
    text = (FORMS / "guarded.yaml").read_text("utf-8")
    # At 2,272 tokens the warm and the KV stream fill L2 exactly; a token more evicts it.
    for bound, found in (("2272", []), ("2273", [("PC106", "at CTX=2273")])):
        path = tmp_path / f"g{bound}.yaml"
        path.write_text(text.replace("CTX <= 2272", f"CTX <= {bound}"), encoding="utf-8")
        result = validate_paths([str(path)])
        got = [(d.code, d.message[d.message.rindex("at ") :]) for d in result.diagnostics]
        assert got == found
    # `--set` fixes a value the guard skips: the warm is not judged in that run.
    result = validate_paths([str(FORMS / "guarded.yaml")], overrides={"CTX": 4096})
    assert result.diagnostics == []


def test_summary_says_up_to_for_guarded_issues() -> None:
    from plancc.formats.summary import summary_line

    result = validate_paths([str(FORMS / "guarded.yaml")]).results[0]
    assert result.facts is not None
    line = summary_line(result.facts)
    assert line.endswith(
        "forward 40 layers, up to 80 warm issues (80 behind a guard), up to 4,194,304,000 B"
    )


# -- a cross-layer warm ------------------------------------------------------------------------


def _docstring(fn: ast.FunctionDef) -> str:
    doc = ast.get_docstring(fn, clean=True)
    assert doc is not None
    return doc


def test_a_next_layer_slab_is_called_with_the_next_index_under_an_if() -> None:
    fn = _function(_module("forms_next_stacked"), "prefetch_next_wq")
    # The function is a stacked warm's like any other: the slab at the index it is given.
    slab, _, _ = _body(fn)
    assert isinstance(slab, ast.AnnAssign)
    assert ast.unparse(slab.value) == "pl.slice(wq, [HIDDEN, HIDDEN], [layer_idx * HIDDEN, 0])"
    doc = _docstring(fn)
    call = textwrap.dedent(doc[doc.rindex("\n", 0, doc.index("if layer_idx")) + 1 :])
    assert call == "if layer_idx < LAYERS - 1:\n    prefetch_next_wq(wq, layer_idx + 1, down_tid)"
    tree = ast.parse(call)  # the example is code, with the guard that keeps the last
    (guard,) = tree.body  # layer from addressing a slab past the stack
    assert isinstance(guard, ast.If)
    assert "in every layer but the last" in doc


def test_a_next_layer_warm_of_slices_is_called_with_the_next_layer_s_tensors() -> None:
    fn = _function(_module("forms_next_slices"), "prefetch_next_qkv_swa")
    doc = _docstring(fn)
    assert doc.endswith(
        "    if layer_idx < NUM_LAYERS - 1:\n"
        "        prefetch_next_qkv_swa(wq_a_next, wkv_next, moe_tid)"
    )
    assert "Consumers in swa: kv_proj (wkv), qr_proj (wq_a)." in doc
    assert "Consumers in csa: kv_proj (wkv), qr_proj (wq_a)." in doc


def test_the_manifest_gives_a_cross_layer_warm_s_span_and_call() -> None:
    manifest = _manifest("forms_next_slices")
    swa, csa = manifest["warms"]
    assert swa["next_layer"] is True
    assert swa["consumed_in"] == ["swa", "csa"]
    assert csa["consumed_in"] == ["swa"]
    # [swa, swa, csa, swa, csa]: swa issues it 3 times; csa once, not in the last layer.
    assert (swa["issues"], csa["issues"]) == (3, 1)
    assert manifest["forward"]["warm_issues"] == 2 * 4
    # Each next kind's, in schedule order (start step, then name): both start together.
    assert swa["consumers"] == [
        {"stage": "kv_proj", "layer": "swa", "kernel": None},
        {"stage": "qr_proj", "layer": "swa", "kernel": None},
        {"stage": "kv_proj", "layer": "csa", "kernel": None},
        {"stage": "qr_proj", "layer": "csa", "kernel": None},
    ]
    assert [p["layer"] for p in swa["parameters"] if p["kind"] == "tensor"] == ["next", "next"]
    stacked = _manifest("forms_next_stacked")["warms"][1]
    assert stacked["parameters"] == [
        {
            "name": "wq",
            "kind": "tensor",
            "dtype": "bf16",
            "shape": [16_384, 2048],
            "layer": "stack",
        },
        {"name": "layer_idx", "kind": "index", "type": "int32", "value": "layer_idx + 1"},
        {"name": "after", "kind": "task", "stage": "down_proj", "task": "down_tid"},
    ]
    loaded = load_manifest(GOLDEN / "forms_next_stacked_warms.manifest.json")
    assert [w.next_layer for w in loaded.warms] == [False, True]


def test_the_last_layer_issues_no_cross_layer_warm() -> None:
    plan = _plan("next_layer_stacked")
    fwd = forward_numbers(plan)
    assert fwd is not None
    # 8 layers: the o-projection warm in each, the next layer's wq in all but the last.
    assert fwd["warm_issues"] == 8 + 7
    assert fwd["warm_bytes"] == (8 + 7) * 8_388_608


def test_a_cross_layer_warm_holds_l2_in_both_layers_it_spans() -> None:
    from plancc.facts.crossing import crossings, kind_peak

    plan = _plan("next_layer_slices")
    pairs = [(c.source.name, c.target.name) for c in crossings(plan)]
    assert pairs == [("swa", "swa"), ("swa", "csa"), ("csa", "swa")]
    c = next(iter(crossings(plan)))
    # The joined kind: swa's stages, then the next layer's, named next.*, its first
    # stages waiting for swa's last.
    names = [s.name for s in c.joined.stages]
    assert names[:9] == [s.name for s in plan.layers["swa"].stages]
    assert names[9:11] == ["next.hc_pre", "next.rms_norm"]
    assert c.joined.stages[9].deps == (8,)  # hc_pre (deps []) waits for moe_combine
    # Alive from its anchor's finish (the next layer's entry) through its consumers.
    sched = c.joined.schedule
    alive = [s.name for s in c.joined.stages if c.warm.alive_at(sched.start[s.index])]
    assert alive == ["next.hc_pre", "next.rms_norm", "next.qr_proj", "next.kv_proj"]
    # In its own layer kind it holds L2 from the anchor to the end (none after moe_combine);
    # in the next one from the entry to its consumers, beside that kind's own warm.
    csa = plan.layers["csa"]
    found = kind_peak(plan, csa)
    assert found.before == "swa"
    assert [w.name for w in found.peak.warms] == ["prefetch_next_qkv_swa"]
    assert found.peak.bytes == 12_582_912
    assert csa.warms[0].live == (csa.schedule.finish(9), csa.schedule.steps - 1)


# -- the new codes ---------------------------------------------------------------------------


@pytest.mark.parametrize("code", ["PC043", "PC044"])
def test_the_guard_codes_are_explained(code: str) -> None:
    found = lookup(code)
    assert found is not None
    assert "guard" in found.doc
    assert "Fix:" in found.doc
    assert f"[{code}](#{code.lower()})" in (ROOT / "docs" / "rules.md").read_text("utf-8")


# -- fmt ----------------------------------------------------------------------------------


def test_fmt_writes_the_new_keys_in_the_format_s_order() -> None:
    from plancc.fmt import format_plan

    messy = (
        "plancc: 1\nmodel: m\nplatform: a2a3\n"
        "params:\n  CTX: {source: ctx_len, range: [1, 4096], default: 2048}\n"
        "tensors:\n  w: {shape: [8, 64], dtype: bf16}\n"
        "layers:\n  k:\n    stages: [{name: s0, task: t0}, {name: s1, reads: [w]}]\n"
        "    warms:\n"
        "      - tensors: [{rows: [0, 4], tensor: w}]\n"
        "        guard: CTX <= 2272\n        next_layer: true\n        after: s0\n"
        "        name: w0\n"
    )
    out = format_plan("p.yaml", messy.encode())
    assert isinstance(out, bytes)
    assert out.decode().endswith(
        "params:\n  CTX:\n    default: 2048\n    range: [1, 4096]\n    source: ctx_len\n\n"
        "tensors:\n  w: {shape: [8, 64], dtype: bf16}\n\n"
        "layers:\n  k:\n    stages:\n      - {name: s0, task: t0}\n      - {name: s1, reads: [w]}\n"
        "    warms:\n      - name: w0\n        after: s0\n        next_layer: true\n"
        "        guard: CTX <= 2272\n        tensors:\n          - {tensor: w, rows: [0, 4]}\n"
    )
    assert format_plan("p.yaml", out) == out


# -- the report -------------------------------------------------------------------------------


def _report(name: str) -> str:
    from plancc.api import diagnose_plan
    from plancc.load.inputs import PlanInput
    from plancc.report_html import render

    path = FORMS / f"{name}.yaml"
    return render(diagnose_plan(PlanInput(str(path), path), path.read_bytes()))


def test_the_report_draws_a_cross_layer_warm_across_the_boundary() -> None:
    page = _report("next_layer_slices")
    # In its own kind the bar runs on to the layer's end with an arrow; in the next kind
    # the warm of the layer before comes in at the entry, held to its consumers there.
    assert page.count("<title>runs on into the next layer</title>") == 2  # swa's and csa's
    assert page.count("<title>comes in from the layer before</title>") == 2
    assert "from swa, the layer before · 2 tensors, 12.6 MB" in page
    assert "after moe_combine · 2 tensors, 12.6 MB · for the next layer" in page
    assert (
        "For the next layer (swa and the other kinds after it): its first consumer there is "
        "kv_proj" in page
    )
    # Its consumers are marked in the next kind's figure, not in its own.
    assert "Issued by the layer before (swa) for this one" in page


def test_the_report_marks_a_guarded_warm_and_a_prefix_s_rows() -> None:
    guarded = _report("guarded")
    assert guarded.count('class="bar guarded"') == 2
    assert "after qkv_proj · 1 tensor, 52.4 MB · when CTX &lt;= 2272" in guarded
    assert "when CTX &gt;= 64 and BATCH &lt;= 8" in guarded
    prefix = _report("prefix")
    assert "1 <code>wo_a</code> rows [0, 8) 67.1 MB" in prefix
    assert "1 w_gate rows [0, 2) → 2 w_gate rows [8, 10)" in prefix

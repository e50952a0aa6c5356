"""plancc's generated code, compiled in PyPTO (issue 43 point 6, issue 44 point 3).

Opt-in: the compile tests run only when ``PLANCC_PYPTO_PY`` names a Python interpreter
with PyPTO installed (docs/build.md says how to build one), and are skipped otherwise.
For every plan in ``plans/`` and every fixture plan of a code form (``tests/data/pypto/``:
a plain warm, a join, a stacked slab; ``tests/data/forms/``: the cross-layer, prefix and
guarded warms), the plan is built, and ``tests/pypto_harness.py`` writes a harness that
calls each warm as its docstring says after producer scopes for its anchor tasks; that
interpreter lowers and compiles it (``PYPTO_PROG_BUILD_DIR`` in a temporary directory).
Each form has a negative control, so a harness that compiled nothing could not pass: its
flat views moved inside the scope, which PyPTO refuses.

The harness generator's own tests below need no PyPTO and always run, on the forms'
goldens (tests/golden/forms, which tests/test_forms.py keeps equal to their build).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from plancc.api import build
from tests import pypto_harness as harness
from tests.pypto_harness import HarnessError

ROOT = Path(__file__).resolve().parent.parent
PLANS = sorted((ROOT / "plans").glob("*.yaml"))
FIXTURES = ROOT / "tests" / "data" / "pypto"
# One fixture plan per code form: plancc's first three here, and the forms of issue 43
# (tests/data/forms, whose builds are the goldens in tests/golden/forms).
FORMS = sorted(FIXTURES.glob("*.yaml")) + sorted((ROOT / "tests" / "data" / "forms").glob("*.yaml"))
GOLDEN_FORMS = ROOT / "tests" / "golden" / "forms"
PYPTO_PY = os.environ.get("PLANCC_PYPTO_PY")
needs_pypto = pytest.mark.skipif(
    not PYPTO_PY,
    reason="PLANCC_PYPTO_PY is not set: it names a Python with PyPTO installed (docs/build.md)",
)
# PyPTO's message for a flat view assigned inside the scope (pypto-facts, "Reshape
# outside the scope"): the view became a tile, which the prefetch refuses.
RESHAPE_IN_SCOPE = "expects src to be a GM Tensor"


def _built(plan: Path, out: Path) -> tuple[str, str, dict[str, Any]]:
    """Build one plan; its module's name, its text and its manifest."""
    result = build([str(plan)], str(out))
    assert not result.report.failed(False), [d.message for d in result.report.diagnostics]
    (manifest_path,) = out.glob("*_warms.manifest.json")
    manifest = json.loads(manifest_path.read_text("utf-8"))
    name = manifest["module"]["file"].removesuffix(".py")
    return name, (out / f"{name}.py").read_text("utf-8"), manifest


def _golden(form: str) -> tuple[str, str, dict[str, Any]]:
    """A form's build as tests/golden/forms holds it: its module's name, text, manifest."""
    name = f"forms_{form}_warms"
    module = (GOLDEN_FORMS / f"{name}.py").read_text("utf-8")
    manifest = json.loads((GOLDEN_FORMS / f"{name}.manifest.json").read_text("utf-8"))
    return name, module, manifest


Outcome = tuple[str, str | None, str | None, list[str]]


def _compile(work: Path, name: str, module: str, manifest: dict[str, Any]) -> list[Outcome]:
    """Run the harness of ``module`` in PyPTO: per warm, (warm, the step that failed,
    PyPTO's message, the compiled kernels that issue a prefetch)."""
    assert PYPTO_PY is not None
    work.mkdir(parents=True, exist_ok=True)
    (work / f"{name}.py").write_text(module, "utf-8")
    (work / "harness.py").write_text(harness.harness(module, name, manifest), "utf-8")
    env = {**os.environ, "PYPTO_PROG_BUILD_DIR": str(work / "pypto-build")}
    proc = subprocess.run(
        [PYPTO_PY, "harness.py"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=3600,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return [
        (r["warm"], r["failed"], r["error"], r["kernels"]) for r in harness.results(proc.stdout)
    ]


def _warms(manifest: dict[str, Any]) -> list[str]:
    return [w["name"] for w in manifest["warms"]]


def _compiled(manifest: dict[str, Any]) -> list[Outcome]:
    """Every warm lowered and compiled, into one prefetching kernel named by its hint."""
    return [(w["name"], None, None, [w["name_hint"]]) for w in manifest["warms"]]


def _refused(results: list[Outcome], message: str) -> list[str]:
    """The warms whose harness failed with ``message``."""
    return [warm for warm, failed, error, _ in results if failed and message in (error or "")]


# -- compiled in PyPTO (opt-in) ------------------------------------------------------------


@needs_pypto
@pytest.mark.parametrize("plan", PLANS, ids=lambda p: p.stem)
def test_every_shipped_plan_compiles(plan: Path, tmp_path: Path) -> None:
    name, module, manifest = _built(plan, tmp_path / "out")
    results = _compile(tmp_path / "run", name, module, manifest)
    assert results == _compiled(manifest)


def _form_id(plan: Path) -> str:
    return f"{plan.parent.name}/{plan.stem}"


@needs_pypto
@pytest.mark.parametrize("form", FORMS, ids=_form_id)
def test_each_code_form_compiles(form: Path, tmp_path: Path) -> None:
    name, module, manifest = _built(form, tmp_path / "out")
    results = _compile(tmp_path / "run", name, module, manifest)
    assert results == _compiled(manifest)


@needs_pypto
@pytest.mark.parametrize("form", FORMS, ids=_form_id)
def test_each_code_form_with_its_views_in_the_scope_is_refused(form: Path, tmp_path: Path) -> None:
    name, module, manifest = _built(form, tmp_path / "out")
    results = _compile(tmp_path / "run", name, harness.reshape_in_scope(module), manifest)
    assert _refused(results, RESHAPE_IN_SCOPE) == _warms(manifest)


@needs_pypto
def test_two_guards_joined_by_and_fail_in_code_generation(tmp_path: Path) -> None:
    """Nested `if`s compile and `and` does not; the failure is code generation's, so the
    harness runs `compile` past `lower`. On plancc's build of the guarded fixture plan,
    whose second warm has two guards."""
    plan = ROOT / "tests" / "data" / "forms" / "guarded.yaml"
    name, module, manifest = _built(plan, tmp_path / "out")
    results = _compile(tmp_path / "run", name, harness.guards_joined(module), manifest)
    one, two = _warms(manifest)
    assert [(warm, failed) for warm, failed, _, _ in results] == [(one, None), (two, "compile")]
    assert _refused(results, "not implemented for expression type: And") == [two]


# -- the harness generator (no PyPTO needed) -----------------------------------------------


def test_the_harness_of_a_guarded_stacked_join_is_its_docstrings_call_after_its_producers(
    tmp_path: Path,
) -> None:
    """Qwen3-14B's warm: the stack whole, the layer index a loop variable, one producer
    per task of the join, the guard's variable a run-time scalar (so it compiles from
    its signature), and the call as the docstring writes it."""
    _, module, manifest = _built(ROOT / "plans" / "qwen3_14b.yaml", tmp_path)
    (warm,) = manifest["warms"]
    entry, imports = harness.entry(
        warm, harness.warm_docs(module)["prefetch_wo"], harness.module_names(module)
    )
    producer = (
        "        with pl.at(level=pl.Level.CORE_GROUP, name_hint={stage!r}) as {task}:\n"
        "            harness_tile = pl.load(harness_in, [0, 0], [16, 128])\n"
        "            harness_out = pl.store(harness_tile, [0, 0], harness_out)\n"
    )
    assert entry.source == (
        "@pl.jit\n"
        "def compile_prefetch_wo(\n"
        "    wo: pl.Tensor[[204800, 5120], pl.BF16],\n"
        "    harness_in: pl.Tensor[[16, 128], pl.FP32],\n"
        "    harness_out: pl.Out[pl.Tensor[[16, 128], pl.FP32]],\n"
        "    ctx_len: pl.Scalar[pl.INT32] = pl.RUNTIME,\n"
        "):\n"
        "    for layer_idx in pl.range(40):\n"
        + producer.format(stage="q_proj", task="q_proj_tid")
        + producer.format(stage="k_proj", task="k_proj_tid")
        + producer.format(stage="v_proj", task="v_proj_tid")
        + "        prefetch_wo(wo, layer_idx, ctx_len, q_proj_tid, k_proj_tid, v_proj_tid)\n"
        "    return harness_out\n"
    )
    assert imports == {"prefetch_wo"}
    assert entry.signature


def test_a_guarded_warm_compiles_from_its_signature_with_the_guard_a_runtime_scalar() -> None:
    _, module, manifest = _golden("guarded")
    entry, _ = harness.entry(
        manifest["warms"][1],
        harness.warm_docs(module)["prefetch_up"],
        harness.module_names(module),
    )
    assert entry.signature
    assert "    ctx_len: pl.Scalar[pl.INT32] = pl.RUNTIME,\n" in entry.source
    assert "    batch: pl.Scalar[pl.INT32] = pl.RUNTIME,\n" in entry.source


def test_a_cross_layer_warm_of_unstacked_tensors_gets_the_next_layers_slices() -> None:
    """The model holds the stacks and slices the next layer's inside the call's `if`;
    the layer count the docstring names is the forward's."""
    _, module, manifest = _golden("next_slices")
    entry, imports = harness.entry(
        manifest["warms"][0],
        harness.warm_docs(module)["prefetch_next_qkv_swa"],
        harness.module_names(module),
        manifest["forward"]["layers"],
    )
    assert [(t.name, t.shape) for t in entry.tensors] == [
        ("wq_a", (20480, 1024)),
        ("wkv", (20480, 512)),
    ]
    assert entry.constants == (("NUM_LAYERS", 5),)
    assert imports == {"prefetch_next_qkv_swa"}
    assert (
        "    for layer_idx in pl.range(5):\n"
        "        with pl.at(level=pl.Level.CORE_GROUP, name_hint='moe_combine') as moe_tid:\n"
        "            harness_tile = pl.load(harness_in, [0, 0], [16, 128])\n"
        "            harness_out = pl.store(harness_tile, [0, 0], harness_out)\n"
        "        if layer_idx < NUM_LAYERS - 1:\n"
        "            wq_a_next: pl.Tensor[[4096, 1024], pl.BF16] = pl.slice(wq_a, [4096, 1024], "
        "[(layer_idx + 1) * 4096, 0])\n"
        "            wkv_next: pl.Tensor[[4096, 512], pl.BF16] = pl.slice(wkv, [4096, 512], "
        "[(layer_idx + 1) * 4096, 0])\n"
        "            prefetch_next_qkv_swa(wq_a_next, wkv_next, moe_tid)\n"
    ) in entry.source


def test_a_cross_layer_warm_of_a_stack_called_with_no_if_is_refused() -> None:
    _, module, manifest = _golden("next_stacked")
    guarded = harness.warm_docs(module)["prefetch_next_wq"]
    unguarded = guarded.replace("    if layer_idx < LAYERS - 1:\n        prefetch", "    prefetch")
    assert unguarded != guarded
    with pytest.raises(HarnessError, match="called with no `if INDEX < LAYERS - 1:`"):
        harness.entry(manifest["warms"][1], unguarded, harness.module_names(module))


def test_a_cross_layer_warm_called_with_this_layers_tensor_is_refused() -> None:
    _, module, manifest = _golden("next_slices")
    doc = harness.warm_docs(module)["prefetch_next_qkv_swa"].replace("(wq_a_next,", "(wq_a,")
    with pytest.raises(HarnessError, match="its call uses 'wq_a', which is neither"):
        harness.entry(manifest["warms"][0], doc, harness.module_names(module), 5)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        ("prefetch_wo_a_head(wo_a, q_tid, extra)", "its call uses 'extra', which is neither"),
        ("prefetch_wo_a_head(wo_a)", "its call passes no q_tid"),
        ("prefetch_wo_a_head(harness_in, q_tid)", "'harness_in', a name the harness keeps"),
    ],
)
def test_a_call_the_manifest_does_not_explain_is_refused(call: str, message: str) -> None:
    _, module, manifest = _golden("prefix")
    doc = harness.warm_docs(module)["prefetch_wo_a_head"]
    doc = doc.replace("prefetch_wo_a_head(wo_a, q_tid)", call)
    with pytest.raises(HarnessError, match=message):
        harness.entry(manifest["warms"][0], doc, harness.module_names(module))


def test_a_docstring_without_a_call_is_refused() -> None:
    with pytest.raises(HarnessError, match="no 'Call it' line"):
        harness.call_block("Warm wo into L2.\n")


def test_the_negative_control_moves_every_flat_view_into_the_scope() -> None:
    _, module, _ = _golden("guarded")
    mutated = harness.reshape_in_scope(module)
    assert mutated.count("= pl.reshape(") == module.count("= pl.reshape(") == 2
    for body in mutated.split("@pl.jit.inline")[1:]:
        scope = body.index("with pl.at(")
        assert body.index("_flat = pl.reshape(") > scope


def test_the_guard_control_joins_the_two_nested_guards_only() -> None:
    _, module, _ = _golden("guarded")
    joined = harness.guards_joined(module)
    assert "if ctx_len >= 64 and batch <= 8:" in joined
    assert "if ctx_len <= 2272:" in joined
    with pytest.raises(HarnessError, match="no two nested guards"):
        harness.guards_joined(_golden("prefix")[1])

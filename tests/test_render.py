"""The generated module, checked by its AST: the PyPTO form of docs/pypto-facts, exactly.

Golden text (test_build.py) catches drift; these tests say what must hold for
every plan: the decorator, the parameters and their annotations, the flat
views assigned before the one scope and *evaluating* to the plan's flat views
with the module's own constants, the scope's keywords, one context, the
prefetch order, no wait. And the text passes ``ruff format --check`` and
``ruff check``.
"""

from __future__ import annotations

import ast
import random
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from plancc import ir, render
from plancc.api import validate_paths

ROOT = Path(__file__).resolve().parent.parent
FLASH = ROOT / "plans" / "deepseek_v4_flash.yaml"

# Dims from a config (lowercase keys used directly in shapes), a [1, N] and a
# [1, 1, N] override, a tensor that is already flat, a 4-bit dtype, two layer
# kinds, two warms in one kind, a tensor in two warms.
MIXED = """\
plancc: 1
model: mixed
platform: a2a3
config: config.json
dims:
  D: hidden_size
  E: 16
  F: D * 2 + E
  UNUSED: 3
tensors:
  wa: {shape: [D, F], dtype: bf16}
  wb: {shape: [E, hidden_size // E, 2 * F], dtype: int4, flat: [1, D * (2 * F)]}
  wc: {shape: [vocab_size], dtype: fp32}
  wd: {shape: [E, E], dtype: fp8e4m3fn}
layers:
  one:
    stages:
      - {name: s0, task: t0}
      - {name: s1, task: t1, reads: [wd]}
      - {name: s2, reads: [wa, wb]}
      - {name: s3, reads: [wc]}
    warms:
      - name: w_ab
        name_hint: warm_ab
        after: s0
        tensors: [wa, {tensor: wb, flat: [1, 1, D * F * 2]}]
        allow: [PC104, PC107]
        reason: test
      - name: w_c
        after: s1
        tensors: [wc]
        allow: [PC104, PC107]
        reason: test
  two:
    stages:
      - {name: a, task: a_tid}
      - {name: b, reads: [wd, wa]}
    warms:
      - name: w_d
        after: a
        tensors: [wd, wa]
        allow: [PC107, PC030, PC032]
        reason: test
"""
MIXED_CONFIG = '{"hidden_size": 64, "vocab_size": 1000, "num_layers": 2}'

# Long names force the statements past the line length.
LONG = """\
plancc: 1
model: long_names
platform: a2a3
budget: {l2_fraction: 1}
dims:
  NUMBER_OF_ROUTED_EXPERTS_IN_LAYER: 2
  MOE_INTERMEDIATE_SIZE_PER_EXPERT: 3
  HIDDEN_SIZE_OF_THE_MODEL_EMBEDDING: 5
tensors:
  routed_expert_gate_projection_weight:
    shape: [NUMBER_OF_ROUTED_EXPERTS_IN_LAYER, MOE_INTERMEDIATE_SIZE_PER_EXPERT * 2,
            HIDDEN_SIZE_OF_THE_MODEL_EMBEDDING + NUMBER_OF_ROUTED_EXPERTS_IN_LAYER]
    dtype: bf16
  second_weight:
    shape: [HIDDEN_SIZE_OF_THE_MODEL_EMBEDDING, MOE_INTERMEDIATE_SIZE_PER_EXPERT]
    dtype: int8
    flat: [1, HIDDEN_SIZE_OF_THE_MODEL_EMBEDDING * MOE_INTERMEDIATE_SIZE_PER_EXPERT]
layers:
  decoder_layer_kind:
    stages:
      - {name: anchor_stage_with_a_long_name, task: anchor_stage_task_identifier}
      - {name: consumer, reads: [routed_expert_gate_projection_weight, second_weight]}
    warms:
      - name: prefetch_routed_expert_gate_projection_weight_and_second_weight
        name_hint: prefetch_routed_expert_gate_projection_weight_and_second
        after: anchor_stage_with_a_long_name
        tensors: [routed_expert_gate_projection_weight, second_weight]
        allow: [PC107]
        reason: test
"""

NO_WARMS = """\
plancc: 1
model: nothing
platform: a5
tensors:
  w: {shape: [4], dtype: bf16}
layers:
  only:
    stages: [{name: s, reads: [w]}]
"""


@pytest.fixture
def plans(tmp_path: Path) -> dict[str, ir.Plan]:
    (tmp_path / "config.json").write_text(MIXED_CONFIG, encoding="utf-8")
    texts = {"mixed": MIXED, "long": LONG, "none": NO_WARMS}
    for name, text in texts.items():
        (tmp_path / f"{name}.yaml").write_text(text, encoding="utf-8")
    out = {"flash": _plan(FLASH)}
    out |= {name: _plan(tmp_path / f"{name}.yaml") for name in texts}
    return out


def _plan(path: Path) -> ir.Plan:
    report = validate_paths([str(path)])
    assert report.errors == 0, [d.message for d in report.diagnostics]
    plan = report.results[0].plan
    assert plan is not None
    return plan


def _module(plan: ir.Plan) -> tuple[str, ast.Module]:
    text = render.render_module(plan, "../plans/x.yaml")
    return text, ast.parse(text)


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    assert isinstance(node, ast.Attribute), ast.dump(node)
    return f"{_dotted(node.value)}.{node.attr}"


def _eval(node: ast.expr, constants: dict[str, int]) -> int:
    """An integer expression of the module, with its constants (and nothing else)."""
    code = compile(ast.Expression(node), "<generated>", "eval")
    value = eval(code, {"__builtins__": {}}, dict(constants))
    assert isinstance(value, int)
    return value


def _constants(tree: ast.Module) -> dict[str, int]:
    out = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign):
            (target,) = stmt.targets
            assert isinstance(target, ast.Name)
            assert isinstance(stmt.value, ast.Constant)
            assert type(stmt.value.value) is int
            out[target.id] = stmt.value.value
    return out


# -- the module, by AST ---------------------------------------------------------------------


@pytest.mark.parametrize("name", ["flash", "mixed", "long", "none"])
def test_module_has_the_contract_form(plans: dict[str, ir.Plan], name: str) -> None:
    plan = plans[name]
    text, tree = _module(plan)
    body = list(tree.body)
    doc = ast.get_docstring(tree, clean=False)
    assert doc is not None
    assert "Do not edit" in doc
    assert f"Plan sha256: {plan.sha256}" in doc
    assert "Plan: ../plans/x.yaml" in doc
    assert "plancc build ../plans/x.yaml --out ." in doc
    imports = [s for s in body if isinstance(s, ast.Import | ast.ImportFrom)]
    assert len(imports) == 1
    assert isinstance(imports[0], ast.Import)
    assert [(a.name, a.asname) for a in imports[0].names] == [("pypto.language", "pl")]
    # Only the docstring, the import, constants and the warm functions.
    kinds = [type(s).__name__ for s in body]
    assert kinds == ["Expr", "Import"] + ["Assign"] * len(_constants(tree)) + ["FunctionDef"] * len(
        plan.warms
    )
    functions = [s for s in body if isinstance(s, ast.FunctionDef)]
    assert [f.name for f in functions] == [w.name for w in plan.warms]
    constants = _constants(tree)
    for function, warm in zip(functions, plan.warms, strict=True):
        _check_function(function, warm, constants, plan)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            assert node.attr not in ("wait", "session")
    assert text.isascii()
    assert text.endswith("\n")
    assert not text.endswith("\n\n")


def _check_function(
    fn: ast.FunctionDef, warm: ir.Warm, constants: dict[str, int], plan: ir.Plan
) -> None:
    assert [_dotted(d) for d in fn.decorator_list] == ["pl.jit.inline"]
    assert fn.returns is None
    args = fn.args
    assert [args.posonlyargs, args.kwonlyargs, args.defaults, args.kw_defaults] == [[]] * 4
    assert args.vararg is None
    assert args.kwarg is None
    tensors = [e.tensor for e in warm.entries]
    assert [a.arg for a in args.args] == [t.name for t in tensors] + ["after"]
    for arg, tensor in zip(args.args[:-1], tensors, strict=True):
        ann = arg.annotation
        assert isinstance(ann, ast.Subscript)
        assert _dotted(ann.value) == "pl.Tensor"
        assert isinstance(ann.slice, ast.Tuple)
        shape, dtype = ann.slice.elts
        assert isinstance(shape, ast.List)
        assert [_eval(e, constants) for e in shape.elts] == list(tensor.shape)
        assert [ast.unparse(e) for e in shape.elts] == list(tensor.shape_source)
        assert _dotted(dtype) == f"pl.{tensor.dtype.name.upper()}"
    after = args.args[-1].annotation
    assert after is not None
    assert ast.unparse(after) == "pl.Scalar[pl.TASK_ID]"

    doc, *stmts = fn.body
    assert isinstance(doc, ast.Expr)
    assert isinstance(doc.value, ast.Constant)
    assert isinstance(doc.value.value, str)
    _check_docstring(doc.value.value, warm, plan)
    *reshapes, scope = stmts
    # One flat view per tensor, in issue order, assigned before the scope.
    assert len(reshapes) == len(warm.entries)
    for stmt, entry in zip(reshapes, warm.entries, strict=True):
        assert isinstance(stmt, ast.Assign)
        (target,) = stmt.targets
        assert isinstance(target, ast.Name)
        assert target.id == f"{entry.tensor.name}_flat"
        call = stmt.value
        assert isinstance(call, ast.Call)
        assert _dotted(call.func) == "pl.reshape"
        assert not call.keywords
        src, view = call.args
        assert isinstance(src, ast.Name)
        assert src.id == entry.tensor.name
        assert isinstance(view, ast.List)
        assert entry.flat is not None
        values = [_eval(e, constants) for e in view.elts]
        assert values == list(entry.flat.values)
        assert all(v == 1 for v in values[:-1])
        assert 1 <= len(values) <= 3
        product = 1
        for v in values:
            product *= v
        assert product == entry.tensor.elements
    # The one scope: pl.at(level=CORE_GROUP, name_hint=..., deps=[after]), no `as`.
    assert isinstance(scope, ast.With)
    (item,) = scope.items
    assert item.optional_vars is None
    at = item.context_expr
    assert isinstance(at, ast.Call)
    assert _dotted(at.func) == "pl.at"
    assert not at.args
    keywords = {k.arg: k.value for k in at.keywords}
    assert list(keywords) == ["level", "name_hint", "deps"]
    assert _dotted(keywords["level"]) == "pl.Level.CORE_GROUP"
    hint = keywords["name_hint"]
    assert isinstance(hint, ast.Constant)
    assert hint.value == warm.name_hint
    deps = keywords["deps"]
    assert isinstance(deps, ast.List)
    assert [ast.unparse(d) for d in deps.elts] == ["after"]
    context, *prefetches = scope.body
    assert ast.unparse(context) == "warm_ctx = pl.prefetch.make_context()"
    assert [ast.unparse(p) for p in prefetches] == [
        f"pl.prefetch.async_prefetch({e.tensor.name}_flat, warm_ctx)" for e in warm.entries
    ]


def _check_docstring(doc: str, warm: ir.Warm, plan: ir.Plan) -> None:
    flat = " ".join(doc.split())
    layer = plan.layers[warm.layer]
    anchor = layer.stages[warm.anchor]
    assert f"{warm.bytes:,} B" in flat
    assert plan.platform is not None
    assert plan.platform.l2_bytes is not None
    assert f"{warm.bytes / plan.platform.l2_bytes:.2f}x L2" in flat
    assert f"stage {anchor.name}" in flat
    assert f"TaskId is {anchor.task}" in flat
    for stage in layer.stages[warm.anchor + 1 :]:
        if any(e.tensor.name in stage.reads for e in warm.entries):
            assert stage.name in flat.split("Consumers:")[1]
    # The call example: a code block at the end, in the layout of the code.
    example = textwrap.dedent(doc.split("returns its TaskId:\n")[1])
    names = ", ".join(e.tensor.name for e in warm.entries)
    assert ast.unparse(ast.parse(example)) == f"{warm.name}({names}, {anchor.task})"


def test_constants_are_the_used_names_in_order(plans: dict[str, ir.Plan]) -> None:
    _, tree = _module(plans["mixed"])
    # Dims in plan order (UNUSED is not used), then the config keys in sorted order.
    assert _constants(tree) == {"D": 64, "E": 16, "F": 144, "hidden_size": 64, "vocab_size": 1000}
    assert list(_constants(tree)) == ["D", "E", "F", "hidden_size", "vocab_size"]
    used = {
        n.id
        for fn in tree.body
        if isinstance(fn, ast.FunctionDef)
        for n in ast.walk(fn)
        if isinstance(n, ast.Name)
    }
    assert set(_constants(tree)) <= used


def test_flash_module_text(plans: dict[str, ir.Plan]) -> None:
    text, _ = _module(plans["flash"])
    assert "    wo_a: pl.Tensor[[O_GROUPS, O_LORA, O_GROUP_IN], pl.BF16],\n" in text
    assert "    wo_a_flat = pl.reshape(wo_a, [O_GROUPS * O_LORA * O_GROUP_IN])\n" in text
    assert (
        '    with pl.at(level=pl.Level.CORE_GROUP, name_hint="prefetch_o_proj_w", deps=[after]):\n'
        "        warm_ctx = pl.prefetch.make_context()\n"
        "        pl.prefetch.async_prefetch(wo_a_flat, warm_ctx)\n"
        "        pl.prefetch.async_prefetch(wo_b_flat, warm_ctx)\n"
    ) in text


def test_long_lines_are_split(plans: dict[str, ir.Plan]) -> None:
    text, _ = _module(plans["long"])
    assert max(len(line) for line in text.splitlines()) <= render.LINE_LENGTH
    assert "    with pl.at(\n        level=pl.Level.CORE_GROUP,\n" in text


def test_no_warms(plans: dict[str, ir.Plan]) -> None:
    text, tree = _module(plans["none"])
    assert "import pypto.language as pl  # noqa: F401\n" in text
    assert not [s for s in tree.body if isinstance(s, ast.FunctionDef | ast.Assign)]


def test_render_is_deterministic(plans: dict[str, ir.Plan]) -> None:
    for plan in plans.values():
        assert render.render(plan, "p.yaml") == render.render(plan, "p.yaml")


# -- ruff ----------------------------------------------------------------------------------


def _ruff() -> str:
    found = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if found is None:
        pytest.skip("ruff is not installed")
    return found


def _run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, input=stdin, capture_output=True, text=True, check=False)


@pytest.mark.parametrize(
    "config", [["--isolated"], ["--config", str(ROOT / "pyproject.toml")]], ids=["default", "repo"]
)
def test_ruff_accepts_the_module(
    plans: dict[str, ir.Plan], tmp_path: Path, config: list[str]
) -> None:
    ruff = _ruff()
    files = []
    for name, plan in plans.items():
        path = tmp_path / "out" / f"{name}_warms.py"
        path.parent.mkdir(exist_ok=True)
        path.write_text(render.render_module(plan, "../plans/x.yaml"), encoding="utf-8")
        files.append(str(path))
    fmt = _run(ruff, "format", "--check", "--diff", *config, *files)
    assert fmt.returncode == 0, fmt.stdout + fmt.stderr
    lint = _run(ruff, "check", "--no-cache", *config, *files)
    assert lint.returncode == 0, lint.stdout + lint.stderr


def _name(r: random.Random) -> str:
    size = r.choice([1, 2, 4, 8, 12, 20, 28, 36, 44])
    return r.choice("ABCDEFGHabcdefgh") + "".join(
        r.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789") for _ in range(size - 1)
    )


def _expr(r: random.Random, depth: int = 0) -> str:
    if depth > 3 or r.random() < 0.35:
        return r.choice([_name(r), _name(r), str(r.choice([1, 2, 128, 4096]))])
    left, right = _expr(r, depth + 1), _expr(r, depth + 1)
    left = f"({left})" if r.random() < 0.3 else left
    right = f"({right})" if r.random() < 0.3 else right
    return f"{left} {r.choice(['+', '-', '*', '//', '%'])} {right}"


def _statements(seed: int, count: int) -> str:
    r = random.Random(seed)
    params, body = [], []
    for _ in range(count):
        kind, t = r.random(), _name(r)
        if kind < 0.3:
            shape = ", ".join(_expr(r) for _ in range(r.randint(1, 4)))
            params.append(f"    {t}: pl.Tensor[[{shape}], pl.BF16],")
        elif kind < 0.6:
            flat = ", ".join(_expr(r) for _ in range(r.randint(1, 3)))
            body.append(f"    {t}_flat = pl.reshape({t}, [{flat}])")
        elif kind < 0.8:
            hint = render.py_str(_name(r))
            body.append(
                f"    with pl.at(level=pl.Level.CORE_GROUP, name_hint={hint}, deps=[after]):"
            )
            body.append("        warm_ctx = pl.prefetch.make_context()")
        else:
            body.append(f"    pl.prefetch.async_prefetch({t}_flat, warm_ctx)")
    lines = ["def f(", *params, "    after: pl.Scalar[pl.TASK_ID],", "):", *body]
    return "\n".join(lines) + "\n"


def test_line_fitting_matches_ruff() -> None:
    """fit_lines breaks long statements exactly as ruff format does (ruff is the oracle)."""
    ruff = _ruff()
    text = "\n\n".join(_statements(seed, 40) for seed in range(60))
    formatted = _run(ruff, "format", "--isolated", "-", stdin=text)
    assert formatted.returncode == 0, formatted.stderr
    assert sum(len(line) > render.LINE_LENGTH for line in text.splitlines()) > 500
    mine = render.fit_lines(text)
    assert mine == formatted.stdout


# -- literals ------------------------------------------------------------------------------


@given(st.text())
def test_py_str_is_a_literal_of_its_value(value: str) -> None:
    literal = render.py_str(value)
    assert literal.isascii()
    assert "\n" not in literal
    assert ast.literal_eval(literal) == value


@given(st.text())
def test_doc_escape_round_trips_in_a_docstring(value: str) -> None:
    escaped = render.doc_escape(value)
    assert escaped.isascii()
    assert '"""' not in escaped
    assert ast.literal_eval(f'"""{escaped}"""') == value


def test_py_str_prefers_double_quotes() -> None:
    assert render.py_str("prefetch_o_proj_w") == '"prefetch_o_proj_w"'
    assert render.py_str('say "hi"') == "'say \"hi\"'"


def test_hostile_plan_path_stays_inside_the_docstring(
    tmp_path: Path, plans: dict[str, ir.Plan]
) -> None:
    ruff = _ruff()
    path = 'we"ird\\dir\n"""; import os #/caf\u00e9 \U0001f600/plan.yaml'
    text = render.render_module(plans["flash"], path)
    tree = ast.parse(text)
    assert [type(s).__name__ for s in tree.body[:2]] == ["Expr", "Import"]
    doc = ast.get_docstring(tree, clean=False)
    assert doc is not None
    assert f"Plan: {path}\n" in doc
    assert text.isascii()
    out = tmp_path / "weird_warms.py"
    out.write_text(text, encoding="utf-8")
    for args in (["format", "--check"], ["check", "--no-cache"]):
        result = _run(ruff, *args, "--isolated", str(out))
        assert result.returncode == 0, result.stdout + result.stderr


# -- the manifest --------------------------------------------------------------------------


def test_manifest_key_order_and_numbers(plans: dict[str, ir.Plan]) -> None:
    plan = plans["flash"]
    data: dict[str, Any] = render.manifest(plan, "../plans/deepseek_v4_flash.yaml")
    assert list(data)[:7] == [
        "format",
        "model",
        "platform",
        "source",
        "runtime",
        "l2",
        "warms",
    ]
    assert data["source"] == {"plan": "../plans/deepseek_v4_flash.yaml", "sha256": plan.sha256}
    assert data["runtime"] == {"enable_sdma": True}
    l2 = data["l2"]
    assert l2["peak_fraction"] == l2["peak_bytes"] / l2["capacity_bytes"]
    for warm, entry in zip(data["warms"], plan.warms, strict=True):
        assert list(warm) == ["name", "layer", "name_hint", "after", "task", "bytes", "tensors"]
        assert warm["bytes"] == sum(t["bytes"] for t in warm["tensors"]) == entry.bytes
        for t in warm["tensors"]:
            assert list(t) == ["name", "dtype", "shape", "flat", "bytes"]


def test_manifest_without_warms_or_forward(plans: dict[str, ir.Plan]) -> None:
    data = render.manifest(plans["none"], "none.yaml")
    assert data["runtime"] == {"enable_sdma": False}
    assert data["warms"] == []
    assert data["l2"]["capacity_bytes"] is None
    assert "forward" not in data
    assert "measure" not in data


def test_manifest_text_is_json_with_inline_number_lists(plans: dict[str, ir.Plan]) -> None:
    import json

    text = render.render_manifest(plans["flash"], "p.yaml")
    assert json.loads(text) == render.manifest(plans["flash"], "p.yaml")
    assert '"shape": [8, 1024, 4096],' in text
    assert text.endswith("}\n")


def test_jinja_stays_off_the_validate_path() -> None:
    code = "import sys, plancc.cli, plancc.api, plancc.report; print('jinja2' in sys.modules)"
    result = _run(sys.executable, "-c", code)
    assert result.stdout.strip() == "False", result.stderr

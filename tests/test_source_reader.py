"""The model-code reader on code no plan was tuned to (issue 41, docs/sources.md).

Each case is a small fixture in pypto-lib's idioms, written for these tests:

- calls/: calls and callers resolved as Python resolves them (the module's own scope,
  then its imports), beside a sibling module whose functions bear the same names;
  a call resolved to nothing readable is a notice, never a guess.
- flow/: order carried by values: a tile one scope computes and the next assembles, a
  row assembled into a tensor outside any kernel and read by a later one, a tensor a
  helper called inside a kernel fills; no order where a scope binds the name again
  first, or uses it as a comprehension's own.
- unroll/: an MLP in Qwen3-14B's form: scopes of `pl.unroll` bodies copied and named
  as PyPTO names them, a copy in its first copy's run; tasks bound per iteration of a
  loop, whatever else it runs (PC209), and hints that name the line after the block.
- generated/: the warm `plancc build` generates (a join over a stacked weight's slab)
  called as its docstring says from its module, called as a copy of its definition,
  and written out in the layer: each read back as the plan's warm.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from plancc import api
from plancc.cli.app import app
from plancc.diagnostics import Diagnostic
from plancc.source import warm_forms
from plancc.source.modules import load_module
from plancc.source.reader import read_layer
from plancc.source.reading import Condition, WarmEntry
from plancc.source.resolver import Resolver

DATA = Path(__file__).parent / "data" / "source"
GOLDEN = Path(__file__).parent / "golden"


def test_callers_are_the_functions_python_would_call() -> None:
    """`w` takes the host's shape through this module's own `device_fwd`, `v` an entry's
    that calls `lay._layer` (`import layer as lay`); never the shapes of a_decoy.py,
    whose `_layer` and `device_fwd` are its own, though read first."""
    work = DATA / "calls"
    r = read_layer(str(work / "layer.py"), "_layer", str(work))
    shapes = {n: (p.values, p.dtype, p.origin) for n, p in r.params.items() if p.bare}
    assert shapes == {
        "w": ((64, 64), "bf16", "layer.py:41"),
        "v": ((64, 64), "bf16", "c_entry.py:15"),
        "scratch": ((), None, ""),
    }
    # `kern.proj` is the helper of the module imported whole; `ghost.log` resolves to
    # nothing: one kernel that may touch what it is given, and a notice.
    assert [(k.name, k.opaque) for k in r.kernels] == [("proj", False), ("mix", False), ("", True)]
    assert [(u.file, u.line, u.what) for u in r.unresolved] == [
        ("layer.py", 29, "call of 'ghost.log' is resolved to no function the reader can read"),
        (
            "b_late.py",
            22,
            "call of '_layer' in late_host() is resolved to no function the reader can read",
        ),
    ]
    assert r.unresolved[1].effect == "the shapes it may pass are not taken"


def test_a_star_import_binds_the_public_names_of_its_module(tmp_path: Path) -> None:
    """`from base import *` (PR #933's decode_fwd_mtp.py): `D` and `proj` are base's, read
    through it; `_hidden`, private, is not bound, so the call of it is a notice."""
    (tmp_path / "base.py").write_text(
        "import pypto.language as pl\n\nD = 64\n\n\n@pl.jit.inline\n"
        "def proj(x: pl.Tensor, y: pl.Tensor):\n"
        '    with pl.at(level=pl.Level.CORE_GROUP, name_hint="proj"):\n'
        "        y[:, :] = pl.mul(x, 2.0)\n\n\n"
        "def _hidden(x):\n    return x\n",
        encoding="utf-8",
    )
    (tmp_path / "m.py").write_text(
        "import pypto.language as pl\n\nfrom base import *\n\n\n@pl.jit\n"
        "def layer(x: pl.Tensor[[D, D], pl.BF16], y: pl.Tensor[[D, D], pl.BF16]):\n"
        "    proj(x, y)\n    _hidden(y)\n",
        encoding="utf-8",
    )
    r = read_layer(str(tmp_path / "m.py"), "layer", str(tmp_path))
    assert r.params["x"].values == (64, 64)
    assert [(k.name, k.opaque) for k in r.kernels] == [("proj", False), ("", True)]
    assert [(u.line, u.what) for u in r.unresolved] == [
        (9, "call of '_hidden' is resolved to no function the reader can read")
    ]


def test_order_through_values() -> None:
    work = DATA / "flow"
    r = read_layer(str(work / "layer.py"), "attend", str(work))
    names = [k.name for k in r.kernels]
    assert names == ["scale", "q_proj", "q_write", "k_proj", "score", "out_proj"]
    waits = {k.name: sorted(names[i] for i in k.deps | k.after) for k in r.kernels}
    assert waits == {
        "scale": [],
        "q_proj": ["scale"],  # `xs`, which `_scale_rows` fills inside scale's kernel
        "q_write": ["q_proj"],  # `acc`, computed in q_proj
        "k_proj": [],  # its own `acc` and `k0`, bound before they are used; a comprehension's `k0`
        "score": ["k_proj", "q_write"],
        "out_proj": ["score"],  # `attn`, assembled outside kernels from `row`
    }


def test_unrolled_copies_are_named_as_pypto_names_them() -> None:
    """Each `pl.unroll` copy is a kernel: the first keeps its name_hint, later ones take
    `_0`, `_1`, … counted per name across the function; the deferred loop's scopes come
    after them (`gate_proj_3`), and a helper called twice gives `rms`, `rms_0`."""
    work = DATA / "unroll"
    r = read_layer(str(work / "layer.py"), "mlp", str(work))
    assert [(k.name, k.copy_of) for k in r.kernels] == [
        ("rms", None),
        ("residual_cast", None),
        ("residual_cast_0", 1),
        ("residual_cast_1", 1),
        ("residual_cast_2", 1),
        ("gate_proj", None),
        ("up_proj", None),
        ("gate_proj_0", 5),
        ("up_proj_0", 6),
        ("gate_proj_1", 5),
        ("up_proj_1", 6),
        ("gate_proj_2", 5),
        ("up_proj_2", 6),
        ("gate_proj_3", None),
        ("up_proj_3", None),
        ("silu", None),
        ("down_proj", None),
        ("rms_0", None),
    ]
    # A task bound in a copy holds the last copy's; the variable ends after the loop.
    spmd = r.tasks["gate_spmd_tid"]
    assert (sorted(spmd.kernels), spmd.after) == ([11], "layer.py:67")
    assert r.tasks["gate_tid"].after == "layer.py:94"  # the outer loop's end
    assert r.tasks["silu_tid"].after == "layer.py:99"  # the `with` block's end


def _plan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, source: str) -> Path:
    work = tmp_path / name
    shutil.copytree(DATA / name, work)
    monkeypatch.chdir(work)
    result = CliRunner().invoke(app, ["extract", source])
    assert result.exit_code == 0, result.output
    plan = work / "plan.yaml"
    plan.write_text(result.stdout, encoding="utf-8")
    return plan


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def _found(plan: Path) -> list[Diagnostic]:
    return [d for d in api.validate_paths([str(plan)]).diagnostics if d.code.startswith("PC2")]


def test_a_task_bound_per_iteration_whatever_the_loop_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PC209 for `gate_tid`, bound in a loop that also runs up_proj_3's kernel (another
    stage), and for `gate_spmd_tid`, bound in each unrolled copy; the join goes after
    the outermost loop, never inside it."""
    plan = _plan(tmp_path, monkeypatch, "unroll", "layer.py:mlp")
    assert _found(plan) == []
    _edit(
        plan, "      - name: gate_proj\n", "      - name: gate_proj\n        task: gate_spmd_tid\n"
    )
    _edit(
        plan, "      - name: gate_proj_3\n", "      - name: gate_proj_3\n        task: gate_tid\n"
    )
    found = [(d.code, d.line, d.message, d.hint) for d in _found(plan)]
    assert found == [
        (
            "PC209",
            28,
            "stage 'gate_proj': task 'gate_spmd_tid' is bound at layer.py:55, inside the loop "
            "`for k_split in …` (layer.py:53): it holds the last iteration's task, so a warm "
            "anchored on it waits for that iteration, not the stage",
            "join the loop: `tids[k_split] = …` into a task array (`tids = pl.array.create(N, "
            "pl.TASK_ID)`) in the loop, then `gate_spmd_tid = pl.system.task_dummy(deps=[tids])` "
            "once the loop ends (after layer.py:67)",
        ),
        (
            "PC209",
            39,
            "stage 'gate_proj_3': task 'gate_tid' is bound at layer.py:73, inside the loop "
            "`for k_split in …` (layer.py:71): it holds the last iteration's task, so a warm "
            "anchored on it waits for that iteration, not the stage",
            "join the loop: `tids[…] = …` into a task array (`tids = pl.array.create(N, "
            "pl.TASK_ID)`) in the loop, then `gate_tid = pl.system.task_dummy(deps=[tids])` "
            "once the loop ends (after layer.py:94)",
        ),
    ]


def test_the_call_site_hint_names_the_line_after_the_block(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan = _plan(tmp_path, monkeypatch, "unroll", "layer.py:mlp")
    _edit(
        plan,
        "        kernel: rms_0\n",
        "        kernel: rms_0\n    warms:\n      - {name: prefetch_down, after: silu, "
        "tensors: [w_down]}\n",
    )
    (d,) = _found(plan)
    assert (d.code, d.hint) == (
        "PC206",
        "call prefetch_down(w_down, silu_tid) after layer.py:99, the end of the block that "
        "binds silu_tid, or remove the warm",
    )


_JOIN = """\
    warms:
      - name: prefetch_wo
        after: [q_proj, k_proj, v_proj]
        tensors: [wo]
"""


@pytest.mark.parametrize(
    ("function", "warm"),
    [
        ("attention", _JOIN),
        (
            "attention_copied",
            _JOIN.replace("prefetch_wo\n", "prefetch_wo_copy\n        name_hint: prefetch_wo\n"),
        ),
        (
            "attention_inlined",
            _JOIN.replace("prefetch_wo\n", "prefetch_wo\n        name_hint: prefetch_wo\n"),
        ),
    ],
)
def test_a_generated_warm_reads_back_as_the_plans(
    function: str, warm: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Called from its generated module (not there to read), called as a copy of its
    definition, or written out: the join of q, k and v over one layer's slab of the
    stacked `wo`, and the skeleton validates against the code with nothing to say."""
    plan = _plan(tmp_path, monkeypatch, "generated", f"layer.py:{function}")
    text = plan.read_text(encoding="utf-8")
    assert (
        "  wo: {shape: [D, D], dtype: bf16, stacked: {layers: LAYERS, index: layer_idx}}\n" in text
    )
    assert text.endswith(warm)
    assert _found(plan) == []


def test_the_generated_module_called_as_its_docstring_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Qwen plan's generated module itself beside the layer: its function is read
    (the template's form: the stack, its index, the guard's `ctx_len`, the join's tasks,
    the scope inside `if ctx_len <= 2272:`), and the call gives the plan's guarded warm,
    no PC206."""
    work = tmp_path / "generated"
    shutil.copytree(DATA / "generated", work)
    _guarded_call(work)
    r = read_layer(str(work / "layer.py"), "attention", str(work))
    (call,) = r.calls
    assert (call.function, call.read, call.name_hint, call.tasks) == (
        "prefetch_wo",
        True,
        "prefetch_wo",
        ("q_tid", "k_tid", "v_tid"),
    )
    assert call.entries == (WarmEntry("wo", "layer_idx"),)
    assert call.conditions == (Condition("ctx_len", "<=", 2272, "ctx_len <= 2272"),)
    plan = _plan(tmp_path / "again", monkeypatch, "generated", "layer.py:attention")
    _guarded_call(plan.parent)
    _edit(plan, "plancc: 1\n", "plancc: 1\n" + CTX)
    assert _said(plan) == [
        (
            "PC206",
            "warm 'prefetch_wo' is called at layer.py:63 under `if ctx_len <= 2272`, which "
            "the plan's warm 'prefetch_wo' does not guard",
            "call it as prefetch_wo(wo, layer_idx, q_tid, k_tid, v_tid), or change its guards",
        )
    ]
    _edit(plan, "        tensors: [wo]\n", "        guard: CTX <= 2272\n        tensors: [wo]\n")
    assert _found(plan) == []
    _edit(plan, "guard: CTX <= 2272", "guard: CTX <= 2048")
    assert _said(plan) == [
        (
            "PC206",
            "warm 'prefetch_wo' is called at layer.py:63 without its guard 'CTX <= 2048' "
            "(`if ctx_len <= 2048:`)",
            "call it as prefetch_wo(wo, layer_idx, ctx_len, q_tid, k_tid, v_tid), or change "
            "its guards",
        )
    ]


def _said(plan: Path) -> list[tuple[str, str, str | None]]:
    return [(d.code, d.message, d.hint) for d in _found(plan)]


CTX = "params:\n  CTX: {default: 2048, range: [1, 4096], source: ctx_len}\n"


def _guarded_call(work: Path) -> None:
    """The layer calls the Qwen plan's guarded warm as its docstring says."""
    shutil.copy(GOLDEN / "qwen3_14b_warms.py", work / "qwen3_14b_warms.py")
    _edit(work / "layer.py", "from tiny_warms import", "from qwen3_14b_warms import")
    _edit(
        work / "layer.py",
        "    layer_idx: pl.Scalar[pl.INT32],\n):\n    base = layer_idx * D\n    q = ",
        "    layer_idx: pl.Scalar[pl.INT32],\n    ctx_len: pl.Scalar[pl.INT32],\n):\n"
        "    base = layer_idx * D\n    q = ",
    )
    _edit(
        work / "layer.py",
        "prefetch_wo(wo, layer_idx, q_tid, k_tid, v_tid)",
        "prefetch_wo(wo, layer_idx, ctx_len, q_tid, k_tid, v_tid)",
    )


def test_the_generated_module_imported_whole(tmp_path: Path) -> None:
    """`import tiny_warms as warms` and `warms.prefetch_wo(...)`: the same call."""
    work = tmp_path / "generated"
    shutil.copytree(DATA / "generated", work)
    _edit(work / "layer.py", "from tiny_warms import prefetch_wo", "import tiny_warms as warms")
    _edit(work / "layer.py", "    prefetch_wo(wo,", "    warms.prefetch_wo(wo,")
    r = read_layer(str(work / "layer.py"), "attention", str(work))
    (call,) = r.calls
    assert (call.function, call.read, call.tasks, call.scalars) == (
        "prefetch_wo",
        False,
        ("q_tid", "k_tid", "v_tid"),
        ("layer_idx",),
    )


@pytest.mark.parametrize("function", ["attention", "attention_inlined"])
def test_a_warm_in_an_unrolled_loop_is_one_warm(
    function: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Copied per iteration, the call (or scope) is one plan warm: the first copy stands
    for the others, which are neither a second warm nor undeclared (PC205)."""
    work = tmp_path / "generated"
    shutil.copytree(DATA / "generated", work)
    text = (work / "layer.py").read_text(encoding="utf-8")
    if function == "attention":
        old = "    prefetch_wo(wo, layer_idx, q_tid, k_tid, v_tid)\n"
        new = (
            "    for u in pl.unroll(2):\n        prefetch_wo(wo, layer_idx, q_tid, k_tid, v_tid)\n"
        )
    else:
        start = text.index("    wo_slab: pl.Tensor")
        end = text.index("    attend(", start)
        old = text[start:end]
        new = "    for u in pl.unroll(2):\n" + "".join(
            "    " + line for line in old.splitlines(keepends=True)
        )
    (work / "layer.py").write_text(text.replace(old, new, 1), encoding="utf-8")
    r = read_layer(str(work / "layer.py"), function, str(work))
    found = r.calls if function == "attention" else r.warms
    assert [w.copy for w in found] == [False, True]
    monkeypatch.chdir(work)
    result = CliRunner().invoke(app, ["extract", f"layer.py:{function}"])
    assert result.exit_code == 0, result.output
    assert result.stdout.count("      - name: prefetch_wo\n") == 1
    (work / "plan.yaml").write_text(result.stdout, encoding="utf-8")
    assert _found(work / "plan.yaml") == []


def test_every_generated_function_has_the_form_the_reader_knows() -> None:
    """The template and the reader agree: each function of each golden module (the
    shipped plans' and the forms') is read as a generated warm, its entries, prefixes,
    guards and anchors as the plan has them."""
    import ast

    found = {}
    for module in sorted([*GOLDEN.glob("*_warms.py"), *GOLDEN.glob("forms/*_warms.py")]):
        mod = load_module(str(module))
        resolver = Resolver(str(module.parent))
        for fn in mod.tree.body:
            if isinstance(fn, ast.FunctionDef):
                sig = warm_forms.signature(fn, lambda n, m=mod, r=resolver: r.const(m, n))
                assert sig is not None, fn.name
                found[fn.name] = (sig.name_hint, sig.issued, sig.rows, sig.guards, len(sig.anchors))
    assert found["prefetch_wo"] == (
        "prefetch_wo",
        (("wo", "layer_idx"),),
        (),
        (Condition("ctx_len", "<=", 2272, "ctx_len <= 2272"),),
        3,
    )
    assert found["prefetch_o_proj_w_csa"] == (
        "prefetch_o_proj_w",
        (("wo_a", None), ("wo_b", None)),
        (),
        (),
        1,
    )
    assert found["prefetch_o_proj_wo_a_csa"][1:3] == ((("wo_a", None),), ((0, 8),))
    assert found["prefetch_gate_groups"][1:3] == (
        (("w_gate", "layer"), ("w_gate", "layer")),
        ((0, 2), (8, 10)),
    )
    assert [g.text for g in found["prefetch_up"][3]] == ["ctx_len >= 64", "batch <= 8"]
    assert found["prefetch_next_wq"][1] == (("wq", "layer_idx"),)  # layer_idx + 1 at its call
    assert len(found) == 13


@pytest.mark.parametrize(
    ("new", "line", "message"),
    [
        (
            "prefetch_wo(wo, layer_idx, q_tid, k_tid, k_tid)",
            33,
            "warm 'prefetch_wo' is called at layer.py:62 after 'q_tid', 'k_tid', 'k_tid', not "
            "after its anchor's tasks 'q_tid, k_tid, v_tid'",
        ),
        (
            "prefetch_wo(wq, layer_idx, q_tid, k_tid, v_tid)",
            34,
            "warm 'prefetch_wo' is called at layer.py:62 with [wq], not [wo]",
        ),
        (
            "prefetch_wo(wo, 0, q_tid, k_tid, v_tid)",
            34,
            "warm 'prefetch_wo' is called at layer.py:62 with the index '0', not the "
            "stack's index 'layer_idx'",
        ),
    ],
)
def test_a_generated_call_that_differs_from_the_plan(
    new: str, line: int, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan = _plan(tmp_path, monkeypatch, "generated", "layer.py:attention")
    _edit(plan.parent / "layer.py", "prefetch_wo(wo, layer_idx, q_tid, k_tid, v_tid)", new)
    assert [(d.code, d.line, d.message) for d in _found(plan)] == [("PC206", line, message)]


def test_a_written_out_warm_of_another_slice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan = _plan(tmp_path, monkeypatch, "generated", "layer.py:attention_inlined")
    _edit(plan.parent / "layer.py", "[layer_idx * D, 0])", "[0, 0])")
    assert [(d.code, d.message) for d in _found(plan)] == [
        (
            "PC206",
            "warm 'prefetch_wo': the scope 'prefetch_wo' at layer.py:102 warms [wo rows [0, "
            "128)], not [wo (slab at layer_idx)]",
        )
    ]


def test_unrolled_copies_are_bounded(tmp_path: Path) -> None:
    """Past 1,024 copies (or a count that is no constant) the body is read once, named;
    nested unrolls of 1,000 each stop at a bound of the reading (its kernels here)."""
    head = (
        "import pypto.language as pl\n\nN = 5000\n\n\n@pl.jit\ndef f(a: pl.Tensor[[4], pl.FP32]):\n"
    )
    scope = '{pad}with pl.at(level=pl.Level.CORE_GROUP, name_hint="k"):\n{pad}    a[0:1] = 1\n'
    (tmp_path / "m.py").write_text(
        head + "    for i in pl.unroll(N):\n" + scope.format(pad="        "), encoding="utf-8"
    )
    r = read_layer(str(tmp_path / "m.py"), "f", str(tmp_path))
    assert [k.name for k in r.kernels] == ["k"]
    assert [(u.line, u.what, u.effect) for u in r.unresolved] == [
        (
            8,
            "an unrolled loop whose count is no known constant (or past 1,024 copies)",
            "read once: its later copies are not named",
        )
    ]
    nested = "    for i in pl.unroll(1000):\n        for j in pl.unroll(1000):\n"
    (tmp_path / "m.py").write_text(head + nested + scope.format(pad="            "), "utf-8")
    r = read_layer(str(tmp_path / "m.py"), "f", str(tmp_path))
    assert r.unresolved[-1].what == "f() needs more than 20,000 kernels"

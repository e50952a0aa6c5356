"""The source checks on the newer forms of a warm (issue 43 point 4, docs/sources.md):
`extract`, PC205 and PC206 read a prefix's annotated leading-dim slice, a guard's `if`
on a `pl.Scalar[pl.INT32]`, and a cross-layer warm's call under the `if` that spares
the last layer, with the next layer's index or slices, inside the layer function or
between one layer and the next (tests/data/source/forms, in pypto-lib's idioms)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from plancc import api
from plancc.cli.app import app
from plancc.source.reader import read_layer
from plancc.source.reading import Condition, WarmEntry

DATA = Path(__file__).parent / "data" / "source" / "forms"


def _work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    work = tmp_path / "forms"
    shutil.copytree(DATA, work)
    monkeypatch.chdir(work)
    return work


def _extract(function: str, file: str = "layer.py") -> tuple[str, str]:
    result = CliRunner().invoke(app, ["extract", f"{file}:{function}"])
    assert result.exit_code == 0, result.output
    return result.stdout, result.stderr


def _warms(text: str) -> str:
    return text[text.index("    warms:\n") :] if "    warms:\n" in text else ""


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def _said(plan: Path) -> list[tuple[str, str, str | None]]:
    found = api.validate_paths([str(plan)]).diagnostics
    return [(d.code, d.message, d.hint) for d in found if d.code.startswith("PC2")]


CTX = "params:\n  CTX: {default: 2048, range: [1, 4096], source: ctx_len}\n"


def _plan(work: Path, function: str) -> Path:
    text, _ = _extract(function)
    plan = work / f"{function}.yaml"
    plan.write_text(text, encoding="utf-8")
    return plan


# -- what the reader gives ----------------------------------------------------------------


def test_each_form_is_read_into_entries_and_conditions() -> None:
    root = str(DATA)
    r = read_layer(str(DATA / "layer.py"), "attention_prefix", root)
    (w,) = r.warms
    assert (w.entries, w.part, w.conditions) == ((WarmEntry("wo_a", None, (0, 8)),), False, ())
    r = read_layer(str(DATA / "layer.py"), "attention_guarded", root)
    (w,) = r.warms
    assert w.conditions == (Condition("ctx_len", "<=", 2272, "ctx_len <= 2272"),)
    assert [u.what for u in r.unresolved] == []  # the `if` is a guard, not an opaque branch
    r = read_layer(str(DATA / "layer.py"), "decoder", root)
    (c,) = r.calls
    assert (c.scalars, c.conditions) == (
        ("layer_idx + 1",),
        (Condition("layer_idx", "<", 3, "layer_idx < LAYERS - 1"),),
    )
    r = read_layer(str(DATA / "layer.py"), "decoder_inlined", root)
    (w,) = r.warms
    assert w.entries == (WarmEntry("wq", "layer_idx + 1"),)
    assert w.conditions == (Condition("layer_idx", "<", 3, "layer_idx < LAYERS - 1"),)


def test_a_slice_of_an_inner_dim_is_no_prefix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # It compiles, but prefetches other bytes than the rows (pypto-facts.md): a part no
    # plan warm can declare, never taken for a prefix.
    work = _work(tmp_path, monkeypatch)
    _edit(
        work / "layer.py",
        "wo_a, [HALF, O_LORA, GROUP_IN], [0, 0, 0]",
        "wo_a, [GROUPS, O_LORA // 2, GROUP_IN], [0, 0, 0]",
    )
    r = read_layer(str(work / "layer.py"), "attention_prefix", str(work))
    (w,) = r.warms
    assert w.part
    _, notices = _extract("attention_prefix")
    assert "warm 'prefetch_wo_a_head' left out: it warms a slice" in notices


def test_an_if_holding_more_than_warms_stays_a_branch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = _work(tmp_path, monkeypatch)
    _edit(
        work / "layer.py",
        "    if ctx_len <= 2272:\n",
        "    if ctx_len <= 2272:\n        y[:, :] = pl.mul(y, 1.0)\n",
    )
    r = read_layer(str(work / "layer.py"), "attention_guarded", str(work))
    assert r.warms == []
    assert [u.what for u in r.unresolved] == ["a branch on something not constant"]


# -- extract ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("function", "warms"),
    [
        (
            "attention_prefix",
            "    warms:\n      - name: prefetch_wo_a_head\n        name_hint: prefetch_wo_a_head\n"
            "        after: q_proj\n        tensors:\n          - {tensor: wo_a, rows: [0, 8]}\n",
        ),
        (
            "decoder",
            "    warms:\n      - name: prefetch_next_wq\n        after: down_proj\n"
            "        next_layer: true\n        tensors: [wq]\n",
        ),
        (
            "decoder_inlined",
            "    warms:\n      - name: prefetch_next_wq\n        name_hint: prefetch_next_wq\n"
            "        after: down_proj\n        next_layer: true\n        tensors: [wq]\n",
        ),
    ],
)
def test_extract_writes_the_forms_and_they_check_clean(
    function: str, warms: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = _work(tmp_path, monkeypatch)
    text, notices = _extract(function)
    assert _warms(text).endswith(warms)
    assert notices == ""
    plan = work / "plan_x.yaml"
    plan.write_text(text, encoding="utf-8")
    assert _said(plan) == []


GUARDED_PARAM = (
    "params:\n"
    "  # The guards' run-time values, ranged only across the bounds the code compares\n"
    "  # them with: give each the range the model serves.\n"
    "  CTX_LEN:\n"
    "    default: 2272\n"
    "    range: [2272, 2273]\n"
)


@pytest.mark.parametrize(
    ("function", "warm"),
    [
        (
            "attention_guarded",
            "      - name: prefetch_wo\n        name_hint: prefetch_wo\n        after: q_proj\n"
            "        guard: CTX_LEN <= 2272\n        tensors: [wo]\n",
        ),
        (
            # Under the test that spares the last layer, a guard of its own: the one is
            # the stack's index, the other the guard (both `<` or `<=`).
            "decoder_guarded",
            "      - name: prefetch_next_wq\n        name_hint: prefetch_next_wq\n"
            "        after: down_proj\n        next_layer: true\n"
            "        guard: CTX_LEN <= 2272\n        tensors: [wq]\n",
        ),
    ],
)
def test_extract_writes_a_guarded_warm_on_a_param_it_declares(
    function: str, warm: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = _work(tmp_path, monkeypatch)
    text, notices = _extract(function)
    assert notices == ""
    assert GUARDED_PARAM + "\ntensors:\n" in text
    assert _warms(text) == "    warms:\n" + warm
    plan = _plan(work, function)
    assert _said(plan) == []
    _edit(plan, "guard: CTX_LEN <= 2272", "guard: CTX_LEN <= 2048")
    ((code, message, _),) = _said(plan)
    assert code == "PC206"
    assert message.endswith(
        "is issued without its guard 'CTX_LEN <= 2048' (`if ctx_len <= 2048:`)"
    ), message


GUARDED_DEFINITION = """\
import pypto.language as pl

D = 128


@pl.jit.inline
def prefetch_wo(
    wo: pl.Tensor[[D, D], pl.BF16],
    ctx_len: pl.Scalar[pl.INT32],
    after: pl.Scalar[pl.TASK_ID],
):
    wo_flat = pl.reshape(wo, [D * D])
    if ctx_len <= 2272:
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="prefetch_wo", deps=[after]):
            warm_ctx = pl.prefetch.make_context()
            pl.prefetch.async_prefetch(wo_flat, warm_ctx)
"""


def test_extract_writes_the_guard_of_a_called_generated_function(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The generated module is read: its `if` on the scalar the caller passes is the guard.
    work = _work(tmp_path, monkeypatch)
    (work / "tiny_forms_warms.py").write_text(GUARDED_DEFINITION, encoding="utf-8")
    text, notices = _extract("attention_guarded_called")
    assert notices == ""
    assert GUARDED_PARAM in text
    assert _warms(text) == (
        "    warms:\n      - name: prefetch_wo\n        after: q_proj\n"
        "        guard: CTX_LEN <= 2272\n        tensors: [wo]\n"
    )
    assert _said(_plan(work, "attention_guarded_called")) == []


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("    if ctx_len <= 2272:\n", "    if 2272 >= ctx_len:\n"),
        ("    if ctx_len <= 2272:\n", "    if T * 284 >= ctx_len:\n"),
    ],
)
def test_a_guard_written_the_other_way_round_is_the_same_guard(
    old: str, new: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `2272 >= ctx_len` was a branch on something not constant (PC208): the warm was lost,
    # and the scope's read of wo fell to q_proj.
    work = _work(tmp_path, monkeypatch)
    before = _plan(work, "attention_guarded").read_text(encoding="utf-8")
    _edit(work / "layer.py", old, new)
    r = read_layer(str(work / "layer.py"), "attention_guarded", str(work))
    (w,) = r.warms
    assert w.conditions == (Condition("ctx_len", "<=", 2272, new.strip()[3:-1]),)
    assert [u.what for u in r.unresolved] == []
    plan = _plan(work, "attention_guarded")
    assert plan.read_text(encoding="utf-8") == before
    assert _said(plan) == []


def test_a_guard_that_admits_no_param_value_is_written_and_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A param is at least 1: `ctx_len < 1` admits none. The skeleton stays a plan (its
    # default inside its range), and validate says what the code's guard does (PC043).
    work = _work(tmp_path, monkeypatch)
    _edit(work / "layer.py", "    if ctx_len <= 2272:\n", "    if ctx_len < 1:\n")
    plan = _plan(work, "attention_guarded")
    assert "  CTX_LEN:\n    default: 1\n    range: [1, 1]\n" in plan.read_text(encoding="utf-8")
    found = api.validate_paths([str(plan)]).diagnostics
    assert [d.code for d in found if d.severity == "error"] == ["PC043"]


def test_a_guarded_warm_not_declared_is_declared_by_its_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = _work(tmp_path, monkeypatch)
    plan = _plan(work, "attention_guarded")
    text = plan.read_text(encoding="utf-8")
    text = text.replace(GUARDED_PARAM + "\n", "")
    plan.write_text(text[: text.index("    warms:\n")], encoding="utf-8")
    message = (
        "layer.py:69 runs warm 'prefetch_wo' (wo) after q_tid under `if ctx_len <= 2272`, "
        "which layer kind 'attention_guarded' does not declare"
    )
    assert _said(plan) == [
        (
            "PC205",
            message,
            "declare a param whose `source` is ctx_len and it under "
            "layers.attention_guarded.warms ({name: prefetch_wo, after: q_proj, guard: PARAM "
            "<= 2272, tensors: [wo]}), or remove the scope at layer.py:69",
        )
    ]
    _edit(plan, "plancc: 1\n", "plancc: 1\n" + CTX)
    found = api.validate_paths([str(plan)]).diagnostics
    (pc205,) = [d for d in found if d.code == "PC205"]
    assert pc205.hint == (
        "declare it under layers.attention_guarded.warms ({name: prefetch_wo, after: q_proj, "
        "guard: CTX <= 2272, tensors: [wo]}), or remove the scope at layer.py:69"
    )
    assert pc205.fix is not None  # declared as the hint says, by validate --fix
    result = CliRunner().invoke(app, ["validate", "--fix", "--unsafe-fixes", str(plan)])
    assert '        guard: "CTX <= 2272"\n' in plan.read_text(encoding="utf-8"), result.output
    assert _said(plan) == []
    _edit(plan, 'guard: "CTX <= 2272"', "guard: CTX <= 2048")
    assert _said(plan) == [
        (
            "PC206",
            "warm 'prefetch_wo': the scope 'prefetch_wo' at layer.py:69 is issued without its "
            "guard 'CTX <= 2048' (`if ctx_len <= 2048:`)",
            "change the `if`s around the scope, or the warm's guards",
        )
    ]


# -- PC206 ------------------------------------------------------------------------------


def test_a_prefix_of_other_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work = _work(tmp_path, monkeypatch)
    plan = _plan(work, "attention_prefix")
    _edit(plan, "rows: [0, 8]", "rows: [0, 4]")
    assert _said(plan) == [
        (
            "PC206",
            "warm 'prefetch_wo_a_head': the scope 'prefetch_wo_a_head' at layer.py:34 warms "
            "[wo_a rows [0, 8)], not [wo_a rows [0, 4)]",
            "tensors: [wo_a], or change the scope",
        )
    ]


def test_a_guarded_call_of_a_module_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Its definition is not read: the guard's variable among its arguments stands for
    # the guard; without the variable, the hint gives it.
    work = _work(tmp_path, monkeypatch)
    plan = _plan(work, "attention_guarded_called")
    _edit(
        plan,
        "plancc: 1\n",
        "plancc: 1\nparams:\n  CTX: {default: 2048, range: [1, 4096], source: ctx_len}\n",
    )
    _edit(plan, "        tensors: [wo]\n", "        guard: CTX <= 2272\n        tensors: [wo]\n")
    assert _said(plan) == []
    _edit(work / "layer.py", "prefetch_wo(wo, ctx_len, q_tid)", "prefetch_wo(wo, q_tid)")
    assert _said(plan) == [
        (
            "PC206",
            "warm 'prefetch_wo' is called at layer.py:87 without its guard 'CTX <= 2272' "
            "(`if ctx_len <= 2272:`)",
            "call it as prefetch_wo(wo, ctx_len, q_tid), or change its guards",
        )
    ]
    _edit(work / "layer.py", "    prefetch_wo(wo, q_tid)\n", "")
    ((code, _, hint),) = _said(plan)
    assert (code, hint) == (
        "PC206",
        "call prefetch_wo(wo, ctx_len, q_tid) after layer.py:86, the end of the block that "
        "binds q_tid, or remove the warm",
    )


@pytest.mark.parametrize(
    ("call", "said"),
    [
        # The call of the signature before the guard: the guard's variable left out, not
        # the TaskId its place shifts to.
        (
            "prefetch_wo(wo, q_tid)",
            "with 2 arguments, but prefetch_wo(wo, ctx_len, after) takes 3: no argument for "
            "'ctx_len'",
        ),
        (
            "prefetch_wo(wo, ctx_len)",
            "with 2 arguments, but prefetch_wo(wo, ctx_len, after) takes 3: no argument for "
            "'after'",
        ),
        (
            "prefetch_wo(q_tid)",
            "with 1 argument, but prefetch_wo(wo, ctx_len, after) takes 3: no argument for "
            "'wo', 'ctx_len'",
        ),
        (
            "prefetch_wo(ctx_len=ctx_len, wo=wo)",
            "with 2 arguments, but prefetch_wo(wo, ctx_len, after) takes 3: no argument for "
            "'after'",
        ),
        (
            "prefetch_wo(wo, ctx_len, q_tid, q_tid)",
            "with 4 arguments, but prefetch_wo(wo, ctx_len, after) takes 3",
        ),
        (
            "prefetch_wo(wo, ctx_len, tid=q_tid)",
            "with tid=, which prefetch_wo(wo, ctx_len, after) does not take",
        ),
    ],
)
def test_a_call_of_the_generated_module_with_other_arguments(
    call: str, said: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The generated module beside the code (its definition read): a call whose arguments
    do not fit its parameters names the ones missing or extra, not a '?'."""
    work = _work(tmp_path, monkeypatch)
    plan = _plan(work, "attention_guarded_called")
    _edit(plan, "plancc: 1\nmodel: layer\n", f"plancc: 1\nmodel: tiny_forms\n{CTX}")
    _edit(plan, "        tensors: [wo]\n", "        guard: CTX <= 2272\n        tensors: [wo]\n")
    result = CliRunner().invoke(app, ["build", str(plan), "--out", str(work)])
    assert result.exit_code == 0, result.output
    assert (work / "tiny_forms_warms.py").is_file()
    assert _said(plan) == []
    _edit(work / "layer.py", "prefetch_wo(wo, ctx_len, q_tid)", call)
    assert _said(plan) == [
        (
            "PC206",
            f"warm 'prefetch_wo' is called at layer.py:87 {said}",
            "call it as prefetch_wo(wo, ctx_len, q_tid)",
        )
    ]


def _unparam(layer: Path, binding: str) -> None:
    """`attention_guarded_called` without its `ctx_len` parameter, ``binding`` first."""
    head, called = layer.read_text(encoding="utf-8").split("def attention_guarded_called(")
    old = "    ctx_len: pl.Scalar[pl.INT32],\n):\n    q = "
    assert old in called
    called = called.replace(old, f"):\n{binding}    q = ", 1)
    layer.write_text(f"{head}def attention_guarded_called({called}", encoding="utf-8")


@pytest.mark.parametrize(
    ("binding", "said"),
    [
        ("", ["PC206"]),  # nothing binds it: Python raises NameError at the call
        ("    ctx_len = 2048\n", []),  # a local
        ("    ctx_len, _ = 2048, 0\n", []),  # a local, unpacked
        ("    global ctx_len\n    ctx_len = 2048\n", []),  # a global the function binds
    ],
)
def test_a_guard_variable_nothing_binds_is_a_name_error(
    binding: str, said: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The generated docstring says to pass the guard's variable; where the calling
    function has none (pypto-lib has no context length as a scalar), the call it writes
    fails in PyPTO. Bound in any way Python binds a name, it is not reported."""
    work = _work(tmp_path, monkeypatch)
    plan = _plan(work, "attention_guarded_called")
    _edit(plan, "plancc: 1\nmodel: layer\n", f"plancc: 1\nmodel: tiny_forms\n{CTX}")
    _edit(plan, "        tensors: [wo]\n", "        guard: CTX <= 2272\n        tensors: [wo]\n")
    result = CliRunner().invoke(app, ["build", str(plan), "--out", str(work)])
    assert result.exit_code == 0, result.output
    _unparam(work / "layer.py", binding)
    call = 87 - 1 + binding.count("\n")
    assert [d[0] for d in _said(plan)] == said
    if said:
        assert _said(plan) == [
            (
                "PC206",
                f"warm 'prefetch_wo' is called at layer.py:{call} with 'ctx_len', which "
                "nothing binds there (Python raises NameError)",
                "bind ctx_len (param CTX's value at run time) before the call",
            )
        ]


def test_a_module_level_name_binds_a_guard_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A name bound at module level, in a block too, is bound in every function."""
    work = _work(tmp_path, monkeypatch)
    plan = _plan(work, "attention_guarded_called")
    _edit(plan, "plancc: 1\nmodel: layer\n", f"plancc: 1\nmodel: tiny_forms\n{CTX}")
    _edit(plan, "        tensors: [wo]\n", "        guard: CTX <= 2272\n        tensors: [wo]\n")
    assert CliRunner().invoke(app, ["build", str(plan), "--out", str(work)]).exit_code == 0
    _unparam(work / "layer.py", "")
    _edit(work / "layer.py", "LAYERS = 4\n", "LAYERS = 4\nif LAYERS:\n    ctx_len = 2048\n")
    assert _said(plan) == []


@pytest.mark.parametrize(
    ("old", "new", "said"),
    [
        (
            "    if layer_idx < LAYERS - 1:\n"
            "        prefetch_next_wq(wq, layer_idx + 1, down_tid)\n",
            "    prefetch_next_wq(wq, layer_idx + 1, down_tid)\n",
            (
                "warm 'prefetch_next_wq' is called at layer.py:106 without `if layer_idx < "
                "LAYERS - 1:` around it: the last layer would warm one slab past the stack",
                "call it as `if layer_idx < LAYERS - 1: prefetch_next_wq(wq, layer_idx + 1, "
                "down_tid)`, or change its guards",
            ),
        ),
        (
            "prefetch_next_wq(wq, layer_idx + 1, down_tid)",
            "prefetch_next_wq(wq, layer_idx, down_tid)",
            (
                "warm 'prefetch_next_wq' is called at layer.py:107 with the index 'layer_idx', "
                "not the stack's index 'layer_idx + 1'",
                "call it as `if layer_idx < LAYERS - 1: prefetch_next_wq(wq, layer_idx + 1, "
                "down_tid)`, or change its tensors",
            ),
        ),
        (
            "    if layer_idx < LAYERS - 1:\n",
            "    if layer_idx < LAYERS:\n",
            (
                "warm 'prefetch_next_wq' is called at layer.py:107 without `if layer_idx < "
                "LAYERS - 1:` around it: the last layer would warm one slab past the stack",
                "call it as `if layer_idx < LAYERS - 1: prefetch_next_wq(wq, layer_idx + 1, "
                "down_tid)`, or change its guards",
            ),
        ),
    ],
)
def test_a_cross_layer_call_that_differs_from_the_plan(
    old: str, new: str, said: tuple[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = _work(tmp_path, monkeypatch)
    plan = _plan(work, "decoder")
    assert _said(plan) == []
    _edit(work / "layer.py", old, new)
    assert _said(plan) == [("PC206", *said)]


def test_a_cross_layer_call_between_one_layer_and_the_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Flash's form: the layer function takes its slices, and the warm of the next layer's
    # is called in the forward, after the MoE whose TaskId it waits for (bound there).
    work = _work(tmp_path, monkeypatch)
    plan = work / "plan.yaml"
    assert _said(plan) == []
    _edit(work / "fwd.py", "        if layer < LAYERS - 1:\n", "        if True:\n")
    assert _said(plan) == [
        (
            "PC206",
            "warm 'prefetch_next_qkv' is called at fwd.py:58 (decode_fwd) without `if "
            "layer_idx < NUM_LAYERS - 1:` around it: the last layer has no next one to warm",
            "call it as `if layer_idx < NUM_LAYERS - 1: prefetch_next_qkv(wq_a_next, wkv_next, "
            "moe_tid)`",
        )
    ]
    _edit(
        work / "fwd.py",
        "            prefetch_next_qkv(wq_a_next, wkv_next, moe_tid)\n",
        "            pass\n",
    )
    said = _said(plan)
    assert [(code, message) for code, message, _ in said] == [
        (
            "PC201",
            "stage 'moe_combine': task 'moe_tid' is bound by no scope or helper return of "
            "attention() (fwd.py)",
        ),
        (
            "PC206",
            "warm 'prefetch_next_qkv' has no call site in attention() (fwd.py) nor in a "
            "function of its directory: neither a call of prefetch_next_qkv() nor a scope "
            "named 'prefetch_next_qkv'",
        ),
    ]


# -- a forward handing each layer its rows of a stack -----------------------------------

_FORWARD = """\
import pypto.language as pl

T = 8
D = 128
Q_LORA = 64
LAYERS = 2


@pl.jit.inline
def attention(
    x: pl.Tensor[[T, D], pl.BF16],
    wq_a: pl.Tensor[[D, Q_LORA], pl.BF16],
    y: pl.Out[pl.Tensor[[T, Q_LORA], pl.BF16]],
):
    normed = pl.create_tensor([T, D], dtype=pl.BF16)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="rms_norm") as rms_tid:
        normed[:, :] = pl.mul(x, 0.5)
    wq_a_flat = pl.reshape(wq_a, [D * Q_LORA])
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="prefetch_attn_w", deps=[rms_tid]):
        warm_ctx = pl.prefetch.make_context()
        pl.prefetch.async_prefetch(wq_a_flat, warm_ctx)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="qr_proj"):
        y[:, :] = pl.matmul(normed, wq_a)


@pl.jit
def decode_fwd(
    x: pl.Tensor[[T, D], pl.BF16],
    wq_a: pl.Tensor[[LAYERS * D, Q_LORA], pl.BF16],
    y: pl.Out[pl.Tensor[[T, Q_LORA], pl.BF16]],
):
    wq_a_l0: pl.Tensor[[D, Q_LORA], pl.BF16] = pl.slice(wq_a, [D, Q_LORA], [0 * D, 0])
    attention(x, wq_a_l0, y)
    wq_a_l1: pl.Tensor[[D, Q_LORA], pl.BF16] = pl.slice(wq_a, [D, Q_LORA], [1 * D, 0])
    attention(x, wq_a_l1, y)
"""


@pytest.mark.parametrize("layers", [1, 2])
def test_each_layers_rows_of_a_stack_are_one_layers_slice(
    layers: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Flash's `decode_fwd`: the forward slices each layer's rows of `wq_a` and the layer
    warms what it is given. Two layers' rows are one layer's slice each, which no plan
    warm declares (its rows would be consumed by both layers' readers: PC030, PC040):
    left out and named, and the skeleton keeps the promise. One layer's are a plan's
    `rows`."""
    first = _FORWARD.index("    wq_a_l0: ")
    code = _FORWARD if layers == 2 else _FORWARD[:first] + _FORWARD[first:].split("\n", 2)[2]
    (tmp_path / "fwd.py").write_text(code, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    text, notices = _extract("decode_fwd", "fwd.py")
    if layers == 2:
        assert "warms:" not in text
        assert notices == (
            "notice PC208: fwd.py:19: warm 'prefetch_attn_w' left out: it warms a slice\n"
        )
    else:
        assert _warms(text) == (
            "    warms:\n"
            "      - name: prefetch_attn_w\n"
            "        name_hint: prefetch_attn_w\n"
            "        after: rms_norm\n"
            "        tensors:\n"
            "          - {tensor: wq_a, rows: [128, 256]}\n"
        )
        assert notices == ""
    plan = tmp_path / "plan.yaml"
    plan.write_text(text, encoding="utf-8")
    found = api.validate_paths([str(plan)]).diagnostics
    assert [d.code for d in found if d.severity.value == "error"] == []
    slice_of = (
        "fwd.py:19: warm 'prefetch_attn_w' warms a slice of wq_a (one layer's part of a "
        "stacked tensor, say), which no plan warm can declare: not compared"
    )
    said = [(d.code, d.message) for d in found if d.code.startswith("PC2")]
    assert said == ([("PC208", slice_of)] * 2 if layers == 2 else [])

"""The source reader, `plancc extract` and the source checks PC200-PC208.

Fixtures under tests/data/source/ are model code written for these tests in
the idioms of pypto-lib: inline helpers across modules, `as tid`, tasks
returned (one and a tuple), a `task_dummy` barrier, reshape/slice aliases, a
repeated name_hint, a constant branch, a warm scope (attn/); a helper chosen
at import time from an environment variable, met in a layer and in a helper the
layer runs three times (envbound/); a call of a generated warm function
(warmcall/); names the plan's rules refuse or YAML misreads, private
tasks, a kernel without a name_hint inside a run, a constant bound again under its own
name in another module (private/); an SPMD kernel and a parallel loop reading 6/17 and
11/17 of one weight's columns, and a slice of another form read whole (share/); calls
resolved as Python resolves them, callers too, beside a sibling module's functions of the
same names (calls/); order carried by values between scopes and outside them (flow/);
unrolled copies and tasks bound per iteration (unroll/); a generated warm's join over a
stacked weight, called from its module, copied, or written out (generated/; the cases
are in tests/test_source_reader.py). Each
has its golden `extract.yaml` (``PLANCC_REGEN=1 pytest tests/test_source.py`` rewrites them).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from plancc import api
from plancc.cli.app import app
from plancc.diagnostics import Diagnostic
from plancc.source.modules import MAX_BYTES, SourceError
from plancc.source.reader import read_layer

DATA = Path(__file__).parent / "data" / "source"
FIXTURES = {
    "attn": ("layer.py:attention", ["--kind", "attn", "--config", "config.json"]),
    "envbound": ("layer.py:mixed_layer", []),
    "warmcall": ("layer.py:mlp", []),
    "private": ("layer.py:_mix_layer", []),
    "share": ("layer.py:mlp", []),
    "collective": ("layer.py:tp_layer", []),
    "calls": ("layer.py:_layer", []),
    "flow": ("layer.py:attend", []),
    "unroll": ("layer.py:mlp", []),
    "generated": ("layer.py:attention", []),
}
# The notices (PC208) a fixture's skeleton keeps against its code: what is not resolved.
NOTICES = {"envbound": 1, "calls": 2}
SOURCE_CODES = {f"PC20{i}" for i in range(9)}


def _extract(name: str, monkeypatch: pytest.MonkeyPatch, where: Path | None = None) -> str:
    source, options = FIXTURES[name]
    monkeypatch.chdir(where or DATA / name)
    result = CliRunner().invoke(app, ["extract", source, *options])
    assert result.exit_code == 0, result.output
    return result.stdout


def _validate(plan: Path, source_root: Path | None = None) -> list[Diagnostic]:
    report = api.validate_paths([str(plan)], source_root=str(source_root) if source_root else None)
    return report.diagnostics


def _codes(ds: list[Diagnostic]) -> list[str]:
    return sorted(d.code for d in ds if d.code in SOURCE_CODES)


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_extract_golden(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    out = _extract(name, monkeypatch)
    golden = DATA / name / "extract.yaml"
    if os.environ.get("PLANCC_REGEN"):
        golden.write_text(out, encoding="utf-8")
    assert out == golden.read_text(encoding="utf-8")


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_round_trip(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """extract -> validate: no source finding (the import-time helper is its one notice)."""
    work = tmp_path / name
    shutil.copytree(DATA / name, work)
    plan = work / "plan.yaml"
    plan.write_text(_extract(name, monkeypatch, work), encoding="utf-8")
    found = _validate(plan)
    assert _codes(found) == ["PC208"] * NOTICES.get(name, 0)
    assert not [d for d in found if d.severity.value == "error"]


def test_reader_fixture() -> None:
    r = read_layer(str(DATA / "attn" / "layer.py"), "attention", str(DATA / "attn"))
    kernels = [(k.name, k.file, k.line, k.task) for k in r.kernels]
    assert kernels == [
        ("rms_norm", "norm.py", 19, "norm_tid"),
        ("qa_matmul", "proj.py", 27, None),
        ("qb_matmul", "proj.py", 31, "q_tid"),
        ("kv_matmul", "proj.py", 35, "kv_tid"),
        ("attend", "layer.py", 49, "attn_tid"),
        ("group_mm", "oproj.py", 24, None),  # a name_hint used again: `_0`, as PyPTO
        ("group_mm_0", "oproj.py", 30, None),
    ]
    # The layer's tasks: returned by a helper, a tuple unpacked, a barrier, `as`.
    assert {n: sorted(t.kernels) for n, t in r.tasks.items()} == {
        "rms_tid": [0],
        "late_dep": [0],
        "q_tid": [2],
        "kv_tid": [3],
        "attn_tid": [4],
    }
    reads = [sorted(r.params_of(k.reads)) for k in r.kernels]
    assert reads == [["norm_w", "x"], ["wq_a"], ["wq_b"], ["wkv"], [], ["wo_a"], ["wo_b"]]
    assert [sorted(r.params_of(k.writes)) for k in r.kernels][-1] == ["out"]
    # kv_matmul waits for the barrier over rms_norm; attend for kv_tid and what it reads.
    assert r.kernels[3].deps == {0}
    assert r.kernels[4].deps == {3}
    assert r.kernels[4].after == {2, 3}
    (warm,) = r.warms
    assert (warm.name_hint, warm.tensors, warm.deps, warm.line) == (
        "prefetch_o",
        ("wo_a", "wo_b"),
        frozenset({2}),
        44,
    )
    assert r.unresolved == []  # `if USE_SHIFT:` is a constant branch, not taken
    assert r.params["wo_a"].values == (2, 64, 128)


def test_kernel_names_repeat_as_pypto(tmp_path: Path) -> None:
    """The first keeps its name; each repeat takes the smallest free `_N`."""
    src = tmp_path / "m.py"
    src.write_text(
        "import pypto.language as pl\n\n@pl.jit.inline\ndef f(a: pl.Tensor[[4], pl.FP32]):\n"
        + "".join(
            f'    with pl.at(level=pl.Level.CORE_GROUP, name_hint="{h}"):\n        a[0:1] = 1\n'
            for h in ("k", "k", "k_0", "k", "s_spmd")
        )
        + '    for i in pl.spmd(2, name_hint="s_spmd"):\n        a[0:1] = 2\n',
        encoding="utf-8",
    )
    r = read_layer(str(src), "f")
    assert [k.name for k in r.kernels] == ["k", "k_0", "k_0_0", "k_1", "s_spmd", "s"]


def test_unresolved_is_named_not_guessed(tmp_path: Path) -> None:
    src = tmp_path / "m.py"
    src.write_text(
        "import pypto.language as pl\n\n"
        "@pl.jit.inline\ndef again(a: pl.Tensor[[4], pl.FP32]):\n    again(a)\n\n"
        "@pl.jit.inline\ndef f(a: pl.Tensor[[4], pl.FP32], n: pl.Scalar[pl.INDEX]):\n"
        "    if n > 2:\n"
        '        with pl.at(level=pl.Level.CORE_GROUP, name_hint="maybe"):\n'
        "            a[0:1] = 1\n"
        "    again(a)\n",
        encoding="utf-8",
    )
    r = read_layer(str(src), "f")
    assert [(u.line, u.what) for u in r.unresolved] == [
        (9, "a branch on something not constant"),
        (5, "helper 'again' calls itself"),
    ]
    assert [k.opaque for k in r.kernels] == [True, True]
    assert r.possible == {"maybe"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("def f(:\n", "m.py:1: does not parse: invalid syntax"),
        ("x = 1\n", "m.py defines no function 'f'"),
        ("(" * 300 + ")" * 300 + "\n", "m.py:1: does not parse: too many nested parentheses"),
    ],
)
def test_unreadable_source(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "m.py").write_text(text, encoding="utf-8")
    with pytest.raises(SourceError) as exc:
        read_layer(str(tmp_path / "m.py"), "f", str(tmp_path))
    assert str(exc.value).replace(str(tmp_path) + os.sep, "").startswith(message)


def test_large_source(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_bytes(b"#" * (MAX_BYTES + 1))
    with pytest.raises(SourceError, match="larger than 4 MiB"):
        read_layer(str(tmp_path / "m.py"), "f")


def test_import_cycle(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("from b import X\nY = X\n", encoding="utf-8")
    (tmp_path / "b.py").write_text("from a import Y\nX = Y\n", encoding="utf-8")
    (tmp_path / "m.py").write_text(
        "import pypto.language as pl\nfrom a import Y\n\n"
        "@pl.jit.inline\ndef f(a: pl.Tensor[[Y, 4], pl.FP32]):\n    pass\n",
        encoding="utf-8",
    )
    r = read_layer(str(tmp_path / "m.py"), "f")
    assert r.params["a"].values == (None, 4)


# ---------------------------------------------------------------------------
# Mutations: each edit of the code gives its code, at the plan node at fault.


@pytest.fixture
def attn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    work = tmp_path / "attn"
    shutil.copytree(DATA / "attn", work)
    (work / "plan.yaml").write_text(_extract("attn", monkeypatch, work), encoding="utf-8")
    return work


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def _at(work: Path, code: str) -> list[tuple[int, str]]:
    plan = (work / "plan.yaml").read_text(encoding="utf-8").splitlines()
    return [
        (d.line, plan[d.line - 1].strip()) for d in _validate(work / "plan.yaml") if d.code == code
    ]


def test_mutation_rename_name_hint(attn: Path) -> None:
    _edit(attn / "proj.py", '"qb_matmul"', '"qb_mm"')
    assert _at(attn, "PC202") == [(41, "kernel: qb_matmul")]
    (d,) = [d for d in _validate(attn / "plan.yaml") if d.code == "PC202"]
    # Not 'qa_matmul', closer by spelling, which stage 'qa_matmul' names already.
    assert d.hint == "did you mean 'qb_mm'?"


def test_mutation_stop_returning_a_task(attn: Path) -> None:
    _edit(attn / "proj.py", "return q_tid, kv_tid", "return q, kv")
    lines = [line for line, _ in _at(attn, "PC201")]
    assert lines == [38, 43]  # q_tid and kv_tid: the stages that name them
    ds = _validate(attn / "plan.yaml")
    (d,) = [d for d in ds if d.code == "PC201" and d.line == 38]
    assert "task 'q_tid' is bound by no scope or helper return of attention()" in d.message
    assert d.hint is not None
    assert "'q_tid' is bound at proj.py:31, inside a helper" in d.hint


def test_mutation_swap_two_kernels(attn: Path) -> None:
    """qb_matmul moved above qa_matmul no longer waits for the qr it reads, nor so for the
    norm before it."""
    text = (attn / "proj.py").read_text(encoding="utf-8")
    qa = text[text.index("    for n in pl.spmd") : text.index("    with pl.spmd(Q_DIM")]
    qb = text[text.index("    with pl.spmd(Q_DIM") : text.index("    # Off the critical")]
    (attn / "proj.py").write_text(text.replace(qa + qb, qb + qa), encoding="utf-8")
    found = [d for d in _validate(attn / "plan.yaml") if d.code == "PC204"]
    (d,) = [d for d in found if d.line == 41]
    assert d.message == (
        "stage 'qb_matmul' runs after 'rms_norm' in the plan, but in the source its run "
        "(kernel qb_matmul, proj.py:27) runs beside that of 'rms_norm' (kernel rms_norm, "
        "norm.py:19)"
    )


def test_mutation_add_a_read(attn: Path) -> None:
    _edit(attn / "layer.py", "kv[row : row + 1, 0:1])", "kv[row : row + 1, 0:1], wkv[0:1, 0:1])")
    ds = [d for d in _validate(attn / "plan.yaml") if d.code == "PC203"]
    assert [(d.line, d.message) for d in ds] == [
        (47, "stage 'attend' (kernel attend, layer.py:49): the plan misses wkv")
    ]
    assert ds[0].hint == "reads: [wkv]"


def test_mutation_change_an_annotation(attn: Path) -> None:
    _edit(
        attn / "layer.py",
        "wq_b: pl.Tensor[[Q_RANK, Q_DIM], pl.INT8]",
        "wq_b: pl.Tensor[[Q_RANK, Q_DIM], pl.BF16]",
    )
    _edit(attn / "layer.py", "wkv: pl.Tensor[[D, HEAD_DIM]", "wkv: pl.Tensor[[D, 2 * HEAD_DIM]")
    ds = [d for d in _validate(attn / "plan.yaml") if d.code == "PC207"]
    assert [(d.line, d.col, d.message) for d in ds] == [
        (
            25,
            41,
            "tensor 'wq_b' is int8; its source parameter wq_b (layer.py:26, attention) is bf16",
        ),
        (
            26,
            16,
            "tensor 'wkv' has shape [256, 64]; its source parameter wkv (layer.py:27, "
            "attention) has [256, 128]",
        ),
    ]
    assert all(d.severity.value == "error" for d in ds)


def test_mutation_add_a_warm_scope(attn: Path) -> None:
    _edit(
        attn / "layer.py",
        "    attn = pl.create_tensor(",
        "    wkv_flat = pl.reshape(wkv, [D * HEAD_DIM])\n"
        '    with pl.at(level=pl.Level.CORE_GROUP, name_hint="prefetch_kv", deps=[rms_tid]):\n'
        "        ctx = pl.prefetch.make_context()\n"
        "        pl.prefetch.async_prefetch(wkv_flat, ctx)\n"
        "    attn = pl.create_tensor(",
    )
    ds = [d for d in _validate(attn / "plan.yaml") if d.code == "PC205"]
    assert [(d.line, d.message) for d in ds] == [
        (
            50,
            "layer.py:49 runs warm 'prefetch_kv' (wkv) after rms_tid, which layer kind 'attn' "
            "does not declare",
        )
    ]


def test_mutation_remove_a_call_site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work = tmp_path / "warmcall"
    shutil.copytree(DATA / "warmcall", work)
    (work / "plan.yaml").write_text(_extract("warmcall", monkeypatch, work), encoding="utf-8")
    assert _at(work, "PC206") == []
    _edit(work / "layer.py", "    prefetch_w_up(w_up, gate_tid)\n", "")
    assert _at(work, "PC206") == [(26, "- name: prefetch_w_up")]


def test_mutation_delete_the_file(attn: Path) -> None:
    (attn / "layer.py").unlink()
    ds = [d for d in _validate(attn / "plan.yaml") if d.code in SOURCE_CODES]
    assert [(d.code, d.line, d.severity.value) for d in ds] == [("PC200", 33, "warning")]
    assert "source of layer kind 'attn' not checked: cannot read" in ds[0].message


def test_missing_source_root_is_one_warning(attn: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Through the API (an editor's setting): one PC200 naming the resolved path, from
    where the user is."""
    monkeypatch.chdir(attn)
    ds = [d for d in _validate(attn / "plan.yaml", attn / "nowhere") if d.code in SOURCE_CODES]
    assert [(d.code, d.line) for d in ds] == [("PC200", 33)]
    assert ds[0].message == (
        f"--source-root {attn / 'nowhere'} is not a directory (nowhere): the sources of attn "
        "were not checked"
    )


def test_a_plans_own_missing_source_root_names_where_it_looked(
    attn: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(attn.parent)
    plan = attn / "plan.yaml"
    text = plan.read_text(encoding="utf-8").replace('source_root: "."', "source_root: gone")
    plan.write_text(text, encoding="utf-8")
    result = CliRunner().invoke(app, ["validate", str(plan), "--format", "json"])
    assert result.exit_code == 0, result.output
    (d,) = json.loads(result.stdout)["diagnostics"]
    assert (d["code"], d["severity"]) == ("PC200", "warning")
    assert d["message"] == (
        "source_root 'gone' is not a directory (attn/gone): the sources of attn were not checked"
    )


@pytest.mark.parametrize("command", ["validate", "build", "report"])
def test_no_source_skips_the_checks_with_one_notice(
    attn: Path, command: str, tmp_path: Path
) -> None:
    out = ["--out", str(tmp_path / "out")] if command == "build" else []
    out = ["--out", str(tmp_path / "r.html")] if command == "report" else out
    args = [command, str(attn / "plan.yaml"), "--no-source", *out]
    if command == "validate":
        args += ["--format", "json"]
    (attn / "layer.py").unlink()  # nothing is read
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    if command == "validate":
        (d,) = json.loads(result.stdout)["diagnostics"]
        assert (d["code"], d["severity"], d["line"]) == ("PC208", "notice", 33)
        assert d["message"] == (
            "the sources of attn were not read (--no-source): the source checks are skipped"
        )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--source-root", "nowhere"], "plancc: --source-root nowhere: not a directory\n"),
        (["--no-source", "--source-root", "."], "plancc: --no-source: not with --source-root\n"),
    ],
)
@pytest.mark.parametrize("command", ["validate", "build", "report"])
def test_an_explicit_source_root_must_be_a_directory(
    attn: Path, command: str, options: list[str], message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(attn)
    out = ["--out", "out"] if command != "validate" else []
    result = CliRunner().invoke(app, [command, "plan.yaml", *options, *out])
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", message)
    assert not (attn / "out").exists()


def test_the_server_setting_no_source() -> None:
    from lsprotocol import types as lsp

    from plancc.lsp.settings import SETTING, Settings
    from plancc.source.root import NO_SOURCE

    settings = Settings()
    settings.initialize(
        lsp.InitializeParams(lsp.ClientCapabilities(), initialization_options={"noSource": True})
    )
    assert settings.source_root == NO_SOURCE
    settings.initialize(
        lsp.InitializeParams(lsp.ClientCapabilities(), initialization_options={"sourceRoot": "x"})
    )
    assert settings.source_root is not None
    assert settings.source_root.endswith("x")
    # `~someone` with no such user: taken as written, as a shell does, not an error.
    settings.root_dir = Path("/work")
    assert settings.give(SETTING, "~no-such-user-of-plancc/models")
    assert settings.source_root == "/work/~no-such-user-of-plancc/models"


def test_extract_says_each_notice_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A helper inlined at three calls meets its import-time helper and its branch on a
    run-time value three times (pypto-lib's Flash decode_fwd met its gate's five times):
    `extract` says each once, in the order first met."""
    monkeypatch.chdir(DATA / "envbound")
    result = CliRunner().invoke(app, ["extract", "routed.py:routed_layer"])
    assert result.exit_code == 0, result.output
    assert result.stderr == (
        "notice PC208: routed.py:15: helper 'mix' is chosen at import time (mix.py:43, on "
        "environment variable TINY_MIX_IMPL)\n"
        "notice PC208: routed.py:16: a branch on something not constant\n"
    )
    for kernel in ("gate_proj", "gate_proj_0", "gate_proj_1"):  # each call is read
        assert f"kernel: {kernel}}}\n" in result.stdout


def test_notice_never_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work = tmp_path / "envbound"
    shutil.copytree(DATA / "envbound", work)
    (work / "plan.yaml").write_text(_extract("envbound", monkeypatch, work), encoding="utf-8")
    for fmt in ("text", "json", "github", "sarif"):
        result = CliRunner().invoke(
            app, ["validate", "--strict", "-f", fmt, str(work / "plan.yaml")]
        )
        assert result.exit_code == 0, result.output
        assert "PC208" in result.stdout
    result = CliRunner().invoke(app, ["validate", str(work / "plan.yaml")])
    assert "notice PC208: layer.py:18: helper 'mix' is chosen at import time" in result.stdout
    assert result.stdout.endswith("0 errors, 0 warnings, 1 notice in 1 plan\n")
    # The report counts it as a notice too, not as a warning.
    page = work / "page.html"
    result = CliRunner().invoke(app, ["report", str(work / "plan.yaml"), "--out", str(page)])
    assert result.exit_code == 0, result.output
    assert ": 0 errors, 0 warnings, 1 notice -> written: " in result.stdout
    assert "no errors</span> · 0 warnings · 1 notice · 0 allowed warnings" in page.read_text()


def test_plan_without_source_is_unchanged(tmp_path: Path) -> None:
    """The shipped plans' checks, without their `source` keys, are today's."""
    keys = ("source:", "source_params:", "source_root:", "source_defines:")
    for plan in sorted((Path(__file__).parent.parent / "plans").glob("*.yaml")):
        kept, dropping = "", -1  # the indent of a dropped key whose block follows
        for line in plan.read_text(encoding="utf-8").splitlines():
            indent = len(line) - len(line.lstrip())
            if line.strip() and indent <= dropping:
                dropping = -1
            if line.lstrip().startswith(keys):
                dropping = indent
            elif dropping < 0:
                kept += line + "\n"
        copy = tmp_path / plan.name
        copy.write_text(kept, encoding="utf-8")
        shutil.copytree(plan.parent / "configs", tmp_path / "configs", dirs_exist_ok=True)
        assert [d.code for d in _validate(copy)] == []


# ---------------------------------------------------------------------------
# pypto-lib itself, where a checkout is beside this one (not in plancc's CI).

# Run them with the checkouts named (docs/sources.md): PLANCC_PYPTO_LIB=pypto-lib main
# at 634e77bd, PLANCC_PYPTO_LIB_FORK=the same with pypto-lib-o-proj-warm.patch applied,
# PLANCC_PYPTO_LIB_NEXT=the head of pypto-lib's PR #933 (the next Qwen3 decode: code no
# plan was written against).
PYPTO_LIB = os.environ.get("PLANCC_PYPTO_LIB")
PYPTO_FORK = os.environ.get("PLANCC_PYPTO_LIB_FORK")
PYPTO_NEXT = os.environ.get("PLANCC_PYPTO_LIB_NEXT")
PLANS = Path(__file__).parent.parent / "plans"
FLASH = PLANS / "deepseek_v4_flash.yaml"
PRO = PLANS / "deepseek_v4_pro.yaml"
QWEN = PLANS / "qwen3_14b.yaml"
needs_main = pytest.mark.skipif(not PYPTO_LIB, reason="PLANCC_PYPTO_LIB is not set")
needs_fork = pytest.mark.skipif(not PYPTO_FORK, reason="PLANCC_PYPTO_LIB_FORK is not set")
needs_next = pytest.mark.skipif(not PYPTO_NEXT, reason="PLANCC_PYPTO_LIB_NEXT is not set")


def _by_kind(plan: Path, root: str | None) -> list[tuple[str, str]]:
    """Every finding as (code, layer kind), the kind from the plan line it is at (a
    finding outside `layers` is the kind before it, or none)."""
    assert root is not None
    assert Path(root).is_dir(), root
    starts: list[tuple[int, str]] = []
    in_layers = False
    for n, line in enumerate(plan.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not line.startswith(" "):
            in_layers = line.startswith("layers:")
        elif in_layers and line.startswith("  ") and not line.startswith("   "):
            starts.append((n, line.split(":")[0].strip()))
    found = []
    for d in _validate(plan, Path(root)):
        kind = [k for n, k in starts if n <= d.line][-1:] or ["-"]
        found.append((d.code, kind[0]))
    return sorted(found)


def _each(kinds: list[str], codes: list[str]) -> list[tuple[str, str]]:
    return sorted((c, k) for k in kinds for c in codes)


@needs_main
def test_flash_against_pypto_lib_main() -> None:
    """The real drift, in each attention kind: q_rope_tid bound nowhere (PC201), the code's
    prefetch_attn_w undeclared (PC205), the plan's warm never called (PC206); and the
    notice of hc_pre, chosen at import time from DSV4_HC_PRE_IMPL."""
    assert _by_kind(FLASH, PYPTO_LIB) == _each(
        ["swa", "csa", "hca"], ["PC201", "PC205", "PC206", "PC208"]
    )
    ds = _validate(FLASH, Path(PYPTO_LIB or "."))
    assert all("q_rope_tid" in d.message for d in ds if d.code == "PC201")
    assert all("'prefetch_attn_w'" in d.message for d in ds if d.code == "PC205")


@needs_fork
def test_flash_against_the_fork() -> None:
    """The form the plan was measured on: nothing but hc_pre's notice, per kind."""
    assert _by_kind(FLASH, PYPTO_FORK) == _each(["swa", "csa", "hca"], ["PC208"])


@needs_main
def test_pro_against_pypto_lib_main() -> None:
    """Pro's code binds no q_rope_tid and has no o-projection warm (PC201, PC206; the fork
    patch is Flash's only); its dims come from a config variant chosen from an environment
    variable, and hc_pre as in Flash: two notices per kind."""
    assert _by_kind(PRO, PYPTO_LIB) == _each(["csa", "hca"], ["PC201", "PC206", "PC208", "PC208"])


@needs_fork
def test_pro_against_the_fork() -> None:
    assert _by_kind(PRO, PYPTO_FORK) == _each(["csa", "hca"], ["PC201", "PC206", "PC208", "PC208"])


@needs_main
def test_the_generated_qwen_warm_called_where_the_hint_says(tmp_path: Path) -> None:
    """PC206's hint followed in a copy of pypto-lib's Qwen3-14B: the import of the
    generated module and the call as its docstring says, on the line after v_proj's
    block. The warm is found (a join over wo's slab), and nothing else is said; the
    same with the generated module itself beside the code (its function read)."""
    (d,) = [d for d in _validate(QWEN, Path(PYPTO_LIB or ".")) if d.code == "PC206"]
    assert d.hint is not None
    after = int(d.hint.split("decode_fwd.py:")[1].split(",")[0])
    call = "prefetch_wo(wo, layer_idx, ctx_len, q_proj_tid, k_proj_tid, v_proj_tid)"
    assert f"call {call} after " in d.hint
    root = tmp_path / "pypto-lib"
    shutil.copytree(Path(PYPTO_LIB or ".") / "models" / "qwen3_14b", root / "models" / "qwen3_14b")
    layer = root / "models" / "qwen3_14b" / "decode_fwd.py"
    lines = layer.read_text(encoding="utf-8").splitlines(keepends=True)
    block = next(i for i in range(after - 1, 0, -1) if "as v_proj_tid" in lines[i])
    head = next(i for i in range(block, 0, -1) if lines[i].lstrip().startswith("with "))
    indent = lines[head][: len(lines[head]) - len(lines[head].lstrip())]
    lines.insert(after, f"{indent}{call}\n")
    lines.insert(0, "from qwen3_14b_warms import prefetch_wo\n")
    layer.write_text("".join(lines), encoding="utf-8")
    # pypto-lib has no context length as a scalar: the call as written is a NameError.
    (d,) = _validate(QWEN, root)
    assert (d.code, d.message.split(" with ", 1)[1], d.hint) == (
        "PC206",
        "'ctx_len', which nothing binds there (Python raises NameError)",
        "bind ctx_len (param CTX's value at run time) before the call",
    )
    lines.insert(after + 1, f"{indent}ctx_len = 2048\n")
    layer.write_text("".join(lines), encoding="utf-8")
    assert _by_kind(QWEN, str(root)) == []
    shutil.copy(Path(__file__).parent / "golden" / "qwen3_14b_warms.py", layer.parent)
    assert _by_kind(QWEN, str(root)) == []
    # The call written before the warm was guarded (without ctx_len): what it misses.
    layer.write_text(
        layer.read_text(encoding="utf-8").replace(call, call.replace("ctx_len, ", "")),
        encoding="utf-8",
    )
    (d,) = _validate(QWEN, root)
    assert (d.code, d.message.split(" with ", 1)[1], d.hint) == (
        "PC206",
        "5 arguments, but prefetch_wo(wo, layer_idx, ctx_len, q_proj_tid, k_proj_tid, "
        "v_proj_tid) takes 6: no argument for 'ctx_len'",
        f"call it as {call}",
    )


# What the code says, read by hand: for a stage of each family, the deps its kernel must
# have in the skeleton (`plancc extract`), the cases of issue 41 among them.
TRUTH = [
    # DeepSeek V3.2: `q_out_acc` is a tile q_head_proj computes and q_head_proj_write
    # assembles into q_proj; `kv_acc` likewise; q_rope rotates the q_proj the write made.
    (
        "models/deepseek_v3_2/decode_front.py:DeepSeekV32DecodeFrontScope1234",
        {
            "q_head_proj_write": ["q_head_proj"],
            "kv_a_write": ["kv_a_proj"],
            "q_rope": ["q_head_proj_write"],
            "kv_rmsnorm": ["kv_a_write"],
        },
    ),
    # Qwen3-32B: attn_out is assembled outside kernels from the attn_row online_softmax
    # wrote; out_proj_residual reads attn_out.
    (
        "models/qwen3_32b/decode.py:Qwen3Decode",
        {
            "out_proj_residual": ["online_softmax"],
            "qk_matmul": ["rope_kv_cache"],
            "post_rmsnorm": ["out_proj_residual"],
        },
    ),
    # Qwen3-14B: the MLP's `pl.unroll(5)` copies named as PyPTO names them, the deferred
    # tiles' scopes `gate_proj_4`/`up_proj_4`; silu's explicit deps are reduce_tid and
    # every gate and up task.
    (
        "models/qwen3_14b/decode_fwd.py:_decode_layer",
        {
            "silu": ["post_rms_reduce", "gate_proj", "up_proj", "gate_proj_4", "up_proj_4"],
            "gate_proj_4": ["residual_rms_cast"],
            "residual_rms_cast": ["out_proj", "out_proj_0"],
            "dcr_xgamma": ["down_proj"],
        },
    ),
    # Flash: the dequant reads the rope rows q_rope_prepare builds and q_proj_i32 from
    # qproj_matmul; kv_rms_norm_rope reads kv_fp32 and the same rope rows.
    (
        "models/deepseek_v4_flash_mtp/decode_csa.py:attention_csa",
        {
            "qproj_dequant_rms_nope_rope": ["q_rope_prepare", "qproj_matmul"],
        },
    ),
    # Pro: as Flash's q chain.
    (
        "models/deepseek_v4_pro/decode_attention_csa.py:attention_csa",
        {
            "qproj_dequant_rms_nope_rope": ["q_rope_prepare", "qproj_matmul"],
        },
    ),
]
TRUTH_MAIN = [
    *TRUTH,
    (
        "models/qwen3_14b/decode_fwd.py:_decode_layer",
        {
            "fa_fused": [
                "attn_out_seed",
                "rms_recip",
                "q_proj",
                "mlp_out_seed",
                "k_proj",
                "v_proj",
            ],
        },
    ),
    (
        "models/deepseek_v4_flash_mtp/decode_csa.py:attention_csa",
        {
            "kv_rms_norm_rope": ["q_rope_prepare", "kv_proj_matmul"],
        },
    ),
    # dspark: tp_o_a projects the rows the o_group_a2a exchange (@pl.jit.incore) wrote.
    ("models/deepseek_v4_flash_dspark/decode_csa.py:decode_csa", {"tp_o_a": ["o_group_a2a"]}),
]
TRUTH_NEXT = [
    *TRUTH,
    # PR #933: PyPTO's paged attention replaces fa_fused, with its deps; the kv partial
    # sums are reduced (kv_proj_reduce) before the norm reads kv_fp32.
    (
        "models/qwen3_14b/decode_fwd.py:_decode_layer",
        {
            "attn_swpipe_spmd": [
                "attn_out_seed",
                "rms_recip",
                "q_proj",
                "mlp_out_seed",
                "k_proj",
                "v_proj",
            ],
        },
    ),
    (
        "models/deepseek_v4_flash_mtp/decode_csa.py:attention_csa",
        {
            "kv_rms_norm_rope": ["q_rope_prepare", "kv_proj_reduce"],
        },
    ),
    # dspark's layer is `attention_csa` now, its o-projection on one rank: its q chain.
    (
        "models/deepseek_v4_flash_dspark/decode_csa.py:attention_csa",
        {"qproj_dequant_rms_nope_rope": ["q_rope_prepare", "qproj_matmul"]},
    ),
]


def _deps(root: str, source: str) -> dict[str, list[str]]:
    from ruamel.yaml import YAML

    from plancc.source.extract import extract

    path, function = source.split(":")
    data = YAML(typ="safe").load(extract([f"{root}/{path}:{function}"]).text)
    (layer,) = data["layers"].values()
    return {s["name"]: s["deps"] for s in layer["stages"]}


@needs_main
@pytest.mark.parametrize(("source", "expected"), TRUTH_MAIN)
def test_the_order_read_by_hand_in_pypto_lib_main(
    source: str, expected: dict[str, list[str]]
) -> None:
    deps = _deps(PYPTO_LIB or ".", source)
    assert {s: deps.get(s) for s in expected} == expected


@needs_next
@pytest.mark.parametrize(("source", "expected"), TRUTH_NEXT)
def test_the_order_read_by_hand_in_the_next_qwen3(
    source: str, expected: dict[str, list[str]]
) -> None:
    deps = _deps(PYPTO_NEXT or ".", source)
    assert {s: deps.get(s) for s in expected} == expected


@needs_main
def test_every_decorated_function_of_pypto_lib_keeps_the_promise() -> None:
    """Issue 34's sweep (tests/source_sweep.py): every `@pl.jit…` function and `@pl.program`
    class of every model file: no internal error; the skeleton validates without error and
    reports no PC200-PC207/PC209 against its code, or extract refuses it in one line."""
    from tests.source_sweep import sweep

    results = sweep(Path(PYPTO_LIB or "."))
    broken = [
        f"{r.status} {r.source}: {r.findings[:2]}"
        for r in results
        if r.status in {"failing", "crash"}
    ]
    assert len(results) >= 400
    assert broken == []


# Every shipped plan against pypto-lib main (634e77bd): its exact findings, (code, layer
# kind), the rules' with the source checks', all of them drift. Flash and Pro: the drift
# above. Qwen3-14B: its warm has no call site yet (PC206). dspark: no warm (each
# o-projection warm would span the heads' all-to-all, PC105: docs/models.md); TP_SIZE
# taken from `source_defines` and hc_pre chosen at import time (PC208). V3.2 and
# Qwen3-32B: none. The reader follows the orders
# it once missed (issue 41): V3.2's tiles handed from one scope to the next, Qwen3-32B's
# attn_out assembled at orchestration level, dspark's rms_norm writing its output through
# a helper called inside its kernel.
SHIPPED = {
    "deepseek_v3_2.yaml": [],
    "deepseek_v4_flash.yaml": _each(["swa", "csa", "hca"], ["PC201", "PC205", "PC206", "PC208"]),
    "deepseek_v4_flash_dspark.yaml": sorted(
        [*_each(["swa", "csa", "hca"], ["PC208", "PC208"]), ("PC208", "hca")]
    ),  # decode_hca.py reads --tp itself too
    "deepseek_v4_pro.yaml": _each(["csa", "hca"], ["PC201", "PC206", "PC208", "PC208"]),
    "qwen3_14b.yaml": [("PC206", "decode_layer")],
    "qwen3_32b.yaml": [],
}
# Against PR #933's head, only the real drift: Qwen3-14B's `fa_fused` is PyPTO's paged
# attention now (PC202; no PC204 on v_proj, whose run the unnamed `attn_swpipe_spmd` would
# join only by waiting on it last: the code gives v_proj `deps=[kv_seed_tid]`), and the
# warm is still not called (PC206), with no PC207 (the host's shapes are its own
# module's `decode_fwd`'s, not decode_layer_a8w8.py's); dspark's layer functions are
# renamed (`decode_csa` is `attention_csa`: PC200); the others as against main.
SHIPPED_NEXT = {
    **SHIPPED,
    "deepseek_v4_flash_dspark.yaml": _each(["swa", "csa", "hca"], ["PC200"]),
    "qwen3_14b.yaml": _each(["decode_layer"], ["PC202", "PC206"]),
}


def test_every_shipped_plan_has_its_expected_findings() -> None:
    names = sorted(p.name for p in PLANS.glob("*.yaml"))
    assert sorted(SHIPPED) == sorted(SHIPPED_NEXT) == names


@needs_main
def test_every_shipped_plan_against_pypto_lib_main() -> None:
    """The sweep's second half (tests/source_sweep.py): each plan of plans/ validated
    against the checkout finds exactly its drift."""
    from tests.source_sweep import shipped

    found = shipped(Path(PYPTO_LIB or "."))
    assert sorted(found) == sorted(SHIPPED)
    for name, expected in SHIPPED.items():
        assert _by_kind(PLANS / name, PYPTO_LIB) == sorted(expected), name


@needs_next
def test_every_shipped_plan_against_the_next_qwen3() -> None:
    """PR #933's head, code no plan was written against: only the real drift."""
    for name, expected in SHIPPED_NEXT.items():
        assert _by_kind(PLANS / name, PYPTO_NEXT) == sorted(expected), name
    ds = _validate(QWEN, Path(PYPTO_NEXT or "."))
    assert [d.message.split(":")[0] for d in ds if d.code == "PC202"] == ["stage 'fa_fused'"]


@needs_next
def test_every_decorated_function_of_the_next_qwen3_keeps_the_promise() -> None:
    """The same sweep on PR #933's head: code the reader was not written against."""
    from tests.source_sweep import sweep

    results = sweep(Path(PYPTO_NEXT or "."))
    broken = [
        f"{r.status} {r.source}: {r.findings[:2]}"
        for r in results
        if r.status in {"failing", "crash"}
    ]
    assert len(results) >= 370
    assert broken == []


def test_a_module_is_parsed_again_only_when_it_changes(tmp_path: Path) -> None:
    from plancc.source.modules import load_module

    src = tmp_path / "m.py"
    src.write_text("X = 1\n", encoding="utf-8")
    first = load_module(str(src))
    assert load_module(str(src)) is first  # unchanged: the parsed module is kept
    src.write_text("X = 22\n", encoding="utf-8")  # another size
    second = load_module(str(src))
    assert second is not first
    assert "X" in second.globals


def test_source_params_name_what_exists(attn: Path) -> None:
    plan = attn / "plan.yaml"
    text = plan.read_text(encoding="utf-8")
    text = text.replace(
        "    source: layer.py:attention\n",
        "    source: layer.py:attention\n    source_params: {wq_b: w_q_b, nothing: wkv}\n",
    )
    plan.write_text(text, encoding="utf-8")
    ds = [d for d in _validate(plan) if d.code == "PC010"]
    assert [(d.line, d.col, d.message) for d in ds] == [
        (34, 27, "'w_q_b' is no tensor parameter of attention() (layer.py)"),
        (34, 34, "source_params names 'nothing', which is no tensor of the plan"),
    ]
    assert ds[0].hint == "did you mean 'wq_b'?"


@pytest.mark.slow
def test_no_edit_of_the_code_gives_a_traceback(tmp_path: Path) -> None:
    """Every other line of every fixture module deleted, and each module cut short every
    fifth line: the reader returns or raises SourceError (PC200), never anything else."""
    n = 0
    for fixture, (source, _) in sorted(FIXTURES.items()):
        path, function = source.split(":")
        for module in sorted((DATA / fixture).glob("*.py")):
            lines = module.read_text(encoding="utf-8").splitlines(keepends=True)
            for i in range(len(lines)):
                texts = [] if i % 2 else ["".join(lines[:i] + lines[i + 1 :])]
                texts += [] if i % 5 else ["".join(lines[:i])]
                for text in texts:
                    n += 1
                    work = tmp_path / str(n)
                    shutil.copytree(DATA / fixture, work)
                    (work / module.name).write_text(text, encoding="utf-8")
                    with contextlib.suppress(SourceError):
                        read_layer(str(work / path), function, str(work))


def test_a_task_bound_nowhere_names_the_kernel_to_bind_it_on(attn: Path) -> None:
    """As pypto-lib main's qkv_proj_rope: the stage's kernel is a `for` form, no task."""
    _edit(
        attn / "proj.py",
        '    with pl.spmd(Q_DIM // N_TILE, name_hint="qb_matmul") as q_tid:\n'
        "        col = pl.tile.get_block_idx() * N_TILE\n",
        '    for qb in pl.spmd(Q_DIM // N_TILE, name_hint="qb_matmul"):\n'
        "        col = qb * N_TILE\n",
    )
    _edit(attn / "proj.py", "return q_tid, kv_tid", "return q, kv_tid")
    (d,) = [d for d in _validate(attn / "plan.yaml") if d.code == "PC201"]
    assert d.line == 38
    assert d.hint == (
        "bind it: `with pl.spmd(...) as q_tid:` on qb_matmul (proj.py:31), returned by its "
        "helper; or name a task attention() binds: rms_tid, late_dep, kv_tid, attn_tid"
    )


def test_a_warm_may_allow_its_source_finding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PC206 is about a warm: its `allow` silences it (with a reason), as for the rules."""
    work = tmp_path / "warmcall"
    shutil.copytree(DATA / "warmcall", work)
    plan = work / "plan.yaml"
    plan.write_text(_extract("warmcall", monkeypatch, work), encoding="utf-8")
    _edit(work / "layer.py", "    prefetch_w_up(w_up, gate_tid)\n", "")
    _edit(
        plan,
        "        tensors: [w_up]\n",
        "        tensors: [w_up]\n        allow: [PC206]\n        reason: called downstream\n",
    )
    report = api.validate_paths([str(plan)])
    assert [d.code for d in report.diagnostics if d.code in SOURCE_CODES] == []
    assert [(a.diagnostic.code, a.warm, a.reason) for a in report.allowed] == [
        ("PC206", "prefetch_w_up", "called downstream")
    ]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (
            ["layer.py:_mix_layer", "--kind", "x: ["],
            "plancc: --kind 'x: [': layer kind 'x: [' is not an identifier (letters, digits "
            "and '_', starting with a letter); name it with --kind\n",
        ),
        (
            ["layer.py:_mix_layer", "layer.py:_no_kernels", "--kind", "a"],
            "plancc: --kind given 1 time for 2 sources: name the kind of every source, in "
            "order, or of none\n",
        ),
        (
            ["layer.py:_mix_layer", "layer.py:_mix_layer"],
            "plancc: two sources make layer kind 'mix_layer': name them with --kind\n",
        ),
    ],
)
def test_extract_kinds_are_checked(
    arguments: list[str], message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(DATA / "private")
    result = CliRunner().invoke(app, ["extract", *arguments])
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", message)


@pytest.mark.parametrize(
    ("source", "why"),
    [
        (
            "layer.py:_no_kernels",
            "_no_kernels() has no kernel (no pl.at or pl.spmd scope with a name_hint)",
        ),
        (
            "layer.py:_unshaped",
            "no tensor parameter has a shape that is known (a bare pl.Tensor no caller "
            "annotates, say)",
        ),
    ],
)
def test_extract_refuses_what_gives_no_skeleton(
    source: str, why: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Never an empty skeleton (PC002 when validated): one line, exit 1."""
    monkeypatch.chdir(DATA / "private")
    result = CliRunner().invoke(app, ["extract", source])
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == f"plancc: {source}: {why}: there is no plan skeleton to write\n"


@pytest.mark.parametrize(
    ("argument", "message"),
    [
        ("layer.py", "plancc: layer.py: not PATH:FUNCTION (a Python file and a function in it)\n"),
        ("nope.py:f", "plancc: cannot read {tmp}/nope.py: No such file or directory\n"),
    ],
)
def test_extract_usage_errors(
    argument: str, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["extract", argument])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == message.format(tmp=tmp_path)


# ---------------------------------------------------------------------------
# A stage's run of kernels, and the order of runs (docs/sources.md, "How a plan maps
# to the code"): chain a (a_mm -> a_rope) is written around chain b's b_mm, and only
# its second kernel waits for the rope table.

_RUNS_SOURCE = """\
import pypto.language as pl

T = 16
D = 64
TD = pl.dynamic("TD")


@pl.jit.inline
def layer(
    x: pl.Tensor[[T, D], pl.BF16],
    tab: pl.Tensor[[TD, D], pl.BF16],
    w1: pl.Tensor[[D, D], pl.BF16],
    w2: pl.Tensor[[D, D], pl.BF16],
    w3: pl.Tensor[[D, D], pl.BF16],
    out: pl.Tensor[[T, D], pl.BF16],
):
    r = pl.create_tensor([T, D], dtype=pl.BF16)
    a = pl.create_tensor([T, D], dtype=pl.BF16)
    b = pl.create_tensor([T, D], dtype=pl.BF16)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="rope"):
        r[:, :] = pl.add(tab[0:T, :], 0.0)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="a_mm"):
        a[:, :] = pl.matmul(x, w1)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="b_mm") as b_tid:
        b[:, :] = pl.matmul(x, w2)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="a_rope") as a_tid:
        a[:, :] = pl.add(pl.matmul(a, w3), r)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="join"):
        out[:, :] = pl.add(a, b)
    return out
"""

_RUNS_PLAN = """\
plancc: 1
model: runs
platform: a2a3
source_root: "."
dims: {T: 16, D: 64}
tensors:
  x: {shape: [dynamic, D], dtype: bf16}
  tab: {shape: [dynamic, D], dtype: bf16}
  w1: {shape: [D, D], dtype: bf16}
  w2: {shape: [D, D], dtype: bf16}
  w3: {shape: [D, D], dtype: bf16}
  out: {shape: [T, D], dtype: bf16}
layers:
  l:
    source: m.py:layer
    stages:
      - {name: rope, deps: [], reads: [tab], kernel: rope}
      - {name: a, task: a_tid, deps: [rope], reads: [w1, w3], kernel: a_mm}
      - {name: b, deps: [], reads: [w2], kernel: b_mm}
      - {name: join, deps: [a, b], kernel: join}
"""


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    (tmp_path / "m.py").write_text(_RUNS_SOURCE, encoding="utf-8")
    (tmp_path / "plan.yaml").write_text(_RUNS_PLAN, encoding="utf-8")
    return tmp_path


def _findings(work: Path) -> list[tuple[str, int, str]]:
    return sorted(
        (d.code, d.line, d.message) for d in _validate(work / "plan.yaml") if d.code in SOURCE_CODES
    )


def test_a_run_is_not_cut_by_interleaved_kernels(runs: Path) -> None:
    """a_rope belongs to 'a' (the last head it waits on), not to 'b' written before it: the
    reads are a's, the task is a's, and 'a' runs after 'rope' though a_mm does not wait
    for it. A `dynamic` dim of the plan accepts a fixed annotation (x is [T, D])."""
    assert _findings(runs) == []


def test_a_run_by_program_order_would_be_wrong(runs: Path) -> None:
    """The plan that cuts the runs by program order is told so: b does not read w3, and a
    does not run after rope without a_rope."""
    _edit(runs / "plan.yaml", "reads: [w1, w3], kernel: a_mm", "reads: [w1], kernel: a_mm")
    _edit(runs / "plan.yaml", "reads: [w2], kernel: b_mm", "reads: [w2, w3], kernel: b_mm")
    _edit(
        runs / "plan.yaml", "{name: a, task: a_tid, deps: [rope]", "{name: a, task: a_tid, deps: []"
    )
    assert _findings(runs) == [
        (
            "PC203",
            18,
            "stage 'a' (kernels a_mm, a_rope, m.py:22): the plan misses w3",
        ),
        (
            "PC203",
            19,
            "stage 'b' (kernel b_mm, m.py:24): no kernel of it reads w3",
        ),
        (
            "PC204",
            18,
            "stage 'a' runs beside 'rope' in the plan, but in the source its run (kernels "
            "a_mm, a_rope, m.py:22) runs after that of 'rope' (kernel rope, m.py:20)",
        ),
    ]  # and not at 'join', which waits on 'a': one dropped dep is one PC204, where dropped


def test_a_missing_kernel_is_one_finding(runs: Path) -> None:
    """`join`'s kernel renamed in the code (PR #933's `fa_fused`): PC202, and nothing that
    follows only from it. The kernel no stage names would fold into b's run (b_mm is the
    last head it waits on) and order b after a: a false PC204 whose hint undid b's deps."""
    _edit(runs / "plan.yaml", "kernel: join}", "kernel: joined}")
    assert _findings(runs) == [
        ("PC202", 20, "stage 'join': kernel 'joined' is no kernel of layer() (m.py)"),
    ]
    _edit(
        runs / "plan.yaml", "{name: a, task: a_tid, deps: [rope]", "{name: a, task: a_tid, deps: []"
    )
    assert _findings(runs) == [  # a real drift is still found, with the code's deps
        ("PC202", 20, "stage 'join': kernel 'joined' is no kernel of layer() (m.py)"),
        (
            "PC204",
            18,
            "stage 'a' runs beside 'rope' in the plan, but in the source its run (kernels "
            "a_mm, a_rope, m.py:22) runs after that of 'rope' (kernel rope, m.py:20)",
        ),
    ]


def test_a_task_of_another_run(runs: Path) -> None:
    _edit(runs / "plan.yaml", "task: a_tid", "task: b_tid")
    assert _findings(runs) == [
        (
            "PC202",
            18,
            "stage 'a': task 'b_tid' is the task of kernel b_mm (m.py:24), which is in the run "
            "of stage 'b', not in the stage's (kernels a_mm, a_rope)",
        )
    ]


def test_a_fixed_dim_where_the_code_has_a_dynamic_one(runs: Path) -> None:
    _edit(runs / "plan.yaml", "tab: {shape: [dynamic, D]", "tab: {shape: [T, D]")
    assert _findings(runs) == [
        (
            "PC207",
            8,
            "tensor 'tab' has shape [16, 64]; its source parameter tab (m.py:11, layer) has "
            "[dynamic, 64]",
        )
    ]


def test_two_stages_naming_one_kernel(runs: Path) -> None:
    """The later stage's run takes it; the other has no run and is not compared (no
    traceback on its empty run)."""
    _edit(runs / "plan.yaml", "reads: [w2], kernel: b_mm", "reads: [w2], kernel: a_mm")
    assert [(code, line) for code, line, _ in _findings(runs)] == [
        ("PC203", 19),
        ("PC204", 19),
    ]


# ---------------------------------------------------------------------------
# Entries that inline a layer (forward/): a test entry keeps the layer's warm, anchored
# on the task its helper binds; a forward over stacked weights warms one slice per
# layer, which no plan warm can declare (a notice); a task bound once per tile (PC209).


def _skeleton(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str) -> tuple[Path, str]:
    work = tmp_path / "forward"
    shutil.copytree(DATA / "forward", work)
    monkeypatch.chdir(work)
    result = CliRunner().invoke(app, ["extract", source])
    assert result.exit_code == 0, result.output
    plan = work / "plan.yaml"
    plan.write_text(result.stdout, encoding="utf-8")
    return plan, result.stderr


def test_a_test_entry_keeps_the_warm_of_the_layer_it_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan, notices = _skeleton(tmp_path, monkeypatch, "block.py:block_test")
    text = plan.read_text(encoding="utf-8")
    assert "{name: norm, task: norm_tid, deps: [], reads: [x, w_norm], kernel: norm}" in text
    assert "        after: norm\n        tensors: [w_down]\n" in text
    assert (notices, _validate(plan)) == ("", [])


def test_a_forward_over_stacked_weights(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plan, notices = _skeleton(tmp_path, monkeypatch, "block.py:forward")
    assert notices == "notice PC208: block.py:25: warm 'prefetch_down' left out: it warms a slice\n"
    found = _validate(plan)
    assert [(d.code, d.line) for d in found] == [("PC208", 22)]  # at `source`
    assert found[0].message == (
        "block.py:25: warm 'prefetch_down' warms a slice of w_down (one layer's part of a "
        "stacked tensor, say), which no plan warm can declare: not compared"
    )


def test_a_task_bound_once_per_tile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """PC209: out_tid holds the last tile's task; extract leaves it out and says why."""
    plan, notices = _skeleton(tmp_path, monkeypatch, "block.py:tiled")
    assert notices == (
        "notice PC208: block.py:73: task 'out_tid' left out: bound once per iteration of the "
        "loop at block.py:72 (PC209)\n"
    )
    assert _validate(plan) == []
    text = plan.read_text(encoding="utf-8")
    plan.write_text(text.replace("{name: out_tile,", "{name: out_tile, task: out_tid,"), "utf-8")
    (d,) = _validate(plan)
    assert (d.code, d.line, d.col) == ("PC209", 22, 32)
    assert d.message == (
        "stage 'out_tile': task 'out_tid' is bound at block.py:73, inside the loop `for t in …` "
        "(block.py:72): it holds the last iteration's task, so a warm anchored on it waits for "
        "that iteration, not the stage"
    )
    assert d.hint == (
        "join the loop: `tids[t] = …` into a task array (`tids = pl.array.create(N, "
        "pl.TASK_ID)`) in the loop, then `out_tid = pl.system.task_dummy(deps=[tids])` once "
        "the loop ends (after block.py:74)"
    )


def test_an_incore_call_is_a_kernel_ordered_by_what_it_takes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`exchange` (@pl.jit.incore) reads `part`, writes `full` (InOut): proj_b waits on it,
    as the runtime orders them; never `deps: []` for what follows an unread call."""
    plan, notices = _skeleton(tmp_path, monkeypatch, "comm.py:tp_layer")
    stages = plan.read_text(encoding="utf-8").split("stages:\n")[1]
    assert stages == (
        "      - {name: proj_a, task: a_tid, deps: [], reads: [x, w_a], kernel: proj_a}\n"
        "      # collective: pld.tensor.put (TPUT through a UB tile, vector-core MTE)\n"
        "      - {name: exchange, deps: [proj_a], collective: mte, kernel: exchange}\n"
        "      - {name: proj_b, deps: [exchange], reads: [w_b, y], kernel: proj_b}\n"
        "      - {name: proj_c, deps: [], reads: [x, w_c], kernel: proj_c}\n"
    )
    assert notices == (
        "notice PC208: comm.py:43: 'log_rows' is not a @pl.jit.inline helper the reader can "
        "follow\n"
    )
    assert [d.code for d in _validate(plan)] == ["PC208"]
    r = read_layer(str(plan.parent / "comm.py"), "tp_layer")
    unread = r.kernels[3]
    assert (unread.opaque, unread.after) == (True, {0, 1, 2})  # it waits for all before it


def test_a_collective_says_its_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each kernel that calls an inter-rank primitive (also through a helper: the barrier's
    notify and wait) is a stage with `collective: mte`, under a comment naming what runs
    each primitive; none of PyPTO's is SDMA, so no stage gets `sdma: true` (docs/sources.md,
    "Collectives")."""
    r = read_layer(str(DATA / "collective" / "layer.py"), "tp_layer")
    assert [(k.name, k.collectives) for k in r.kernels] == [
        ("heads_a2a", ("pld.tensor.put", "pld.system.notify", "pld.system.wait")),
        ("o_proj", ()),
        ("reduce_scatter", ("pld.tensor.put",)),
    ]
    text = _extract("collective", monkeypatch)
    assert "sdma" not in text
    assert text.count("collective: mte") == 2


def test_an_sdma_collective_is_an_sdma_collective_stage(monkeypatch: pytest.MonkeyPatch) -> None:
    """Were a primitive to move its data by SDMA, its stage would be `collective: sdma`;
    PC105 judges a warm alive across it as across any collective."""
    from plancc.source import collectives

    sdma_put = collectives.Primitive("by SDMA", engine="sdma")
    monkeypatch.setitem(collectives.PRIMITIVES, "pld.tensor.put", sdma_put)
    stages = _extract("collective", monkeypatch).split("stages:\n")[1]
    assert stages == (
        "      # collective: pld.tensor.put (by SDMA), pld.system.notify (TNOTIFY, a scalar "
        "store), pld.system.wait (TWAIT, a poll)\n"
        "      - {name: heads_a2a, deps: [], reads: [x], collective: sdma, kernel: heads_a2a}\n"
        "      - {name: o_proj, task: o_tid, deps: [heads_a2a], reads: [w_o], kernel: o_proj}\n"
        "      # collective: pld.tensor.put (by SDMA)\n"
        "      - {name: reduce_scatter, deps: [o_proj], collective: sdma, kernel: reduce_scatter}\n"
    )


def test_a_warm_across_an_extracted_collective_is_judged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The skeleton with a warm of w_o from layer entry: alive across heads_a2a, the MTE
    collective extract marked, PC105 names it with its engine."""
    work = tmp_path / "collective"
    shutil.copytree(DATA / "collective", work)
    plan = work / "plan.yaml"
    text = _extract("collective", monkeypatch, work)
    text = text.replace(
        "      - {name: heads_a2a, deps: [], ",
        "      - {name: entry, task: entry_tid, deps: []}\n"
        "      - {name: heads_a2a, deps: [entry], ",
    )
    plan.write_text(
        text + "    warms:\n      - {name: prefetch_w_o, after: entry, tensors: [w_o]}\n",
        encoding="utf-8",
    )
    (d,) = [d for d in _validate(plan, work) if d.code == "PC105"]
    assert d.message == (
        "warm 'prefetch_w_o' is alive (stages 'heads_a2a' to 'o_proj') while collective "
        "'heads_a2a' (vector-core MTE) runs"
    )


def test_bare_tensor_parameters_take_their_callers_shapes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`w_proj` is annotated on the host entry, two calls up; `scratch` nowhere: a notice,
    never a silent drop. The shape found is compared as any annotation is (PC207)."""
    plan, notices = _skeleton(tmp_path, monkeypatch, "host.py:_layer")
    text = plan.read_text(encoding="utf-8")
    assert "  w_proj: {shape: [D, D], dtype: bf16}\n  y: {shape: [T, D], dtype: bf16}\n" in text
    assert notices == (
        "notice PC208: host.py:14: parameter 'scratch' is a bare pl.Tensor whose shape no "
        "caller annotates: left out\n"
    )
    assert _validate(plan) == []
    plan.write_text(text.replace("w_proj: {shape: [D, D]", "w_proj: {shape: [D, T]"), "utf-8")
    assert [(d.code, d.message) for d in _validate(plan)] == [
        (
            "PC207",
            "tensor 'w_proj' has shape [64, 8]; its source parameter w_proj (host.py:13, "
            "_layer), annotated at host.py:31, has [64, 64]",
        )
    ]


def _fix(plan: Path) -> list[Diagnostic]:
    """``plan`` through `validate --fix --unsafe-fixes`: the diagnostics left."""
    result = CliRunner().invoke(app, ["validate", "--fix", "--unsafe-fixes", str(plan)])
    assert result.exit_code in (0, 1), result.output
    return _validate(plan)


def test_pc201_fix_names_the_one_task_the_run_binds(attn: Path) -> None:
    _edit(attn / "plan.yaml", "task: q_tid", "task: q_tidd")
    (d,) = [d for d in _validate(attn / "plan.yaml") if d.code == "PC201"]
    assert d.fix is not None
    assert (d.fix.title, d.fix.safety.value) == ("name task 'q_tid'", "unsafe")
    assert [d.code for d in _fix(attn / "plan.yaml") if d.code in SOURCE_CODES] == []
    assert "task: q_tid\n" in (attn / "plan.yaml").read_text(encoding="utf-8")


def test_pc205_fix_declares_the_warm_its_hint_prints(attn: Path) -> None:
    _edit(
        attn / "layer.py",
        "    attn = pl.create_tensor(",
        "    wkv_flat = pl.reshape(wkv, [D * HEAD_DIM])\n"
        '    with pl.at(level=pl.Level.CORE_GROUP, name_hint="prefetch_kv", deps=[rms_tid]):\n'
        "        ctx = pl.prefetch.make_context()\n"
        "        pl.prefetch.async_prefetch(wkv_flat, ctx)\n"
        "    attn = pl.create_tensor(",
    )
    (d,) = [d for d in _validate(attn / "plan.yaml") if d.code == "PC205"]
    assert d.fix is not None
    assert d.fix.title == "declare warm 'prefetch_kv'"
    left = _fix(attn / "plan.yaml")
    assert "PC205" not in [d.code for d in left]
    assert "- name: prefetch_kv\n        after: rms_norm\n        tensors: [wkv]\n" in (
        attn / "plan.yaml"
    ).read_text(encoding="utf-8")


# ---------------------------------------------------------------------------
# Run-time choices (preset/): a variant from the environment or `--variant`, a preset
# table indexed by it, a TP size from `--tp`; each taken at its default, or defined.


def _preset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *defines: str) -> tuple[Path, str]:
    work = tmp_path / "preset"
    shutil.copytree(DATA / "preset", work)
    monkeypatch.chdir(work)
    args = [a for d in defines for a in ("--define", d)]
    result = CliRunner().invoke(app, ["extract", "layer.py:toy", *args])
    assert result.exit_code == 0, result.output
    plan = work / "plan.yaml"
    plan.write_text(result.stdout, encoding="utf-8")
    return plan, result.stderr


def test_run_time_choices_take_their_defaults(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan, notices = _preset(tmp_path, monkeypatch)
    text = plan.read_text(encoding="utf-8")
    assert "  D: 1024\n  LOCAL_D: D // TP\n  TP: 2\n" in text  # the large preset, TP 2
    assert notices == (
        "notice PC208: presets.py:35: VARIANT is chosen at run time (environment variable "
        "TOY_VARIANT): taken as 'large', its default\n"
        "notice PC208: layer.py:19: TP is chosen at run time (command-line option --tp): "
        "taken as 2, its default\n"
    )
    found = _validate(plan)
    assert [d.code for d in found] == ["PC208", "PC208"]
    assert found[0].hint == (
        "`--define tp=VALUE` (extract) or `source_defines: {tp: VALUE}` picks another"
    )


def test_defines_pick_another_choice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`--define` reads the code so, and the skeleton keeps them as `source_defines`, so that
    its checks read the code as it was extracted; without them the shapes differ."""
    plan, notices = _preset(tmp_path, monkeypatch, "variant=small", "TP=4")
    text = plan.read_text(encoding="utf-8")
    assert "source_defines:\n  variant: small\n  TP: 4\n" in text
    assert "  D: 256\n  LOCAL_D: D // TP\n  TP: 4\n" in text
    assert "taken as 'small', as defined (variant=small)" in notices
    assert [d.code for d in _validate(plan)] == ["PC208", "PC208"]
    plan.write_text(text.replace("source_defines:\n  variant: small\n  TP: 4\n", ""), "utf-8")
    assert sorted(d.code for d in _validate(plan)) == ["PC207", "PC207", "PC207", "PC208", "PC208"]


def test_a_define_must_be_name_equals_value(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(DATA / "preset")
    result = CliRunner().invoke(app, ["extract", "layer.py:toy", "--define", "tp"])
    assert (result.exit_code, result.stderr) == (2, "plancc: --define tp: not NAME=VALUE\n")
    result = CliRunner().invoke(app, ["extract", "layer.py:toy", "--define", "tp=" + "9" * 4301])
    assert (result.exit_code, result.stderr) == (
        2,
        "plancc: --define tp: an integer of more than 4,300 digits\n",
    )
    result = CliRunner().invoke(app, ["extract", "layer.py:toy", "--define", "tp=²"])
    assert result.exit_code == 0, result.stderr  # a string: isdigit() is no integer's test


@pytest.mark.parametrize("name", ["Step", "build_step_program"])
def test_a_program_class_is_read_by_its_name_or_its_builders(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan, notices = _skeleton(tmp_path, monkeypatch, f"program.py:{name}")
    stages = plan.read_text(encoding="utf-8").split("stages:\n")[1]
    assert stages == (
        "      - {name: step_mm, task: mm_tid, deps: [], reads: [x, w], kernel: step_mm}\n"
    )
    assert (notices, _validate(plan)) == ("", [])


def test_suggest_takes_the_source_options(attn: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A source error (PC201) stops `suggest` as it stops `validate`; `--no-source` skips the
    source checks there too, and an explicit `--source-root` must be a directory."""
    _edit(attn / "plan.yaml", "task: q_tid", "task: q_tid_gone")
    plan = str(attn / "plan.yaml")
    stopped = CliRunner().invoke(app, ["suggest", plan])
    assert stopped.exit_code == 1
    assert "error PC201" in stopped.stderr
    assert stopped.stderr.endswith("has errors: nothing suggested\n")
    skipped = CliRunner().invoke(app, ["suggest", plan, "--no-source", "--format", "json"])
    assert skipped.exit_code == 0, skipped.output
    assert [layer["layer"] for layer in json.loads(skipped.stdout)["layers"]] == ["attn"]
    monkeypatch.chdir(attn)
    bad = CliRunner().invoke(app, ["suggest", plan, "--source-root", "nowhere"])
    assert (bad.exit_code, bad.stderr) == (2, "plancc: --source-root nowhere: not a directory\n")


def test_extract_shares_of_column_ranges(monkeypatch: pytest.MonkeyPatch) -> None:
    """An SPMD kernel over block indices 0..5 and a parallel loop over 6..16, each
    slicing `X : X + TN` with X = index * TN, read 6/17 and 11/17 of w_gate; a loop of
    step 2 is no such form: w_down stays a whole read."""
    lines = _extract("share", monkeypatch).splitlines()
    assert lines.count("          - {tensor: w_gate, share: 6/17}") == 1
    assert lines.count("          - {tensor: w_gate, share: 11/17}") == 1
    down = "      - {name: down_proj, deps: [gate_proj_0], reads: [x, w_down], kernel: down_proj}"
    assert down in lines
    r = read_layer(str(DATA / "share" / "layer.py"), "mlp", str(DATA / "share"))
    assert [k.columns for k in r.kernels] == [{"w_gate": (0, 768)}, {"w_gate": (768, 2176)}, {}]


@pytest.mark.parametrize(
    ("before", "body"),
    [
        ("", "w = w_gate[0:8, c0 : c0 + TN]\n        v = w_gate[0:8, 0:TN]"),  # a second form
        ("", "w = w_gate[0:8, c0 : c0 + 2 * TN]"),  # a width that is not the step
        ("", "w = pl.slice(w_gate, [8, TN], [0, c0])"),  # not a subscript
        ("w_gate = pl.reshape(w_gate, [16, 64])\n    ", "w = w_gate[0:8, c0 : c0 + TN]"),
    ],
)
def test_other_slices_are_whole_reads(before: str, body: str, tmp_path: Path) -> None:
    (tmp_path / "layer.py").write_text(
        "import pypto.language as pl\n\nTN = 16\n\n\n@pl.jit.inline\n"
        "def mlp(w_gate: pl.Tensor[[8, 128], pl.BF16]):\n"
        f"    {before}with pl.spmd(4, name_hint='gate_proj'):\n"
        "        c0 = pl.get_block_idx() * TN\n"
        f"        {body}\n",
        encoding="utf-8",
    )
    r = read_layer(str(tmp_path / "layer.py"), "mlp", str(tmp_path))
    assert [(k.name, k.reads, k.columns) for k in r.kernels] == [("gate_proj", {"w_gate"}, {})]


def test_spmd_block_index_share(tmp_path: Path) -> None:
    """The form the cases above break: 4 blocks of 16 columns of 128."""
    (tmp_path / "layer.py").write_text(
        "import pypto.language as pl\n\nTN = 16\n\n\n@pl.jit.inline\n"
        "def mlp(w_gate: pl.Tensor[[8, 128], pl.BF16]):\n"
        "    with pl.spmd(4, name_hint='gate_proj'):\n"
        "        c0 = pl.get_block_idx() * TN\n"
        "        w = w_gate[0:8, c0 : c0 + TN]\n",
        encoding="utf-8",
    )
    r = read_layer(str(tmp_path / "layer.py"), "mlp", str(tmp_path))
    assert [k.columns for k in r.kernels] == [{"w_gate": (0, 64)}]

"""`plancc build`: what it writes, when it writes nothing, and how `--check` sees the outputs."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator
from typer.testing import CliRunner

from plancc import write
from plancc.api import UsageError, build
from plancc.cli.app import app
from plancc.runtime import load_manifest
from plancc.tables.names import MAX_NAME
from plancc.tables.platforms import PLATFORMS

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden"
SCHEMA = json.loads((ROOT / "schemas" / "manifest.schema.json").read_text("utf-8"))

# The contract's example, with a forward.
PLAN = """\
plancc: 1
model: demo
platform: a2a3
dims:
  D: 4096
  H: 64
  HEAD_DIM: 512
  Q_LORA: 1024
  O_LORA: 1024
  O_GROUPS: 8
  O_GROUP_IN: H * HEAD_DIM // O_GROUPS
  KV_BLOCKS: dynamic
tensors:
  wq_a: {shape: [D, Q_LORA], dtype: bf16}
  wq_b: {shape: [Q_LORA, H * HEAD_DIM], dtype: int8}
  wo_a: {shape: [O_GROUPS, O_LORA, O_GROUP_IN], dtype: bf16}
  wo_b: {shape: [D, O_GROUPS * O_LORA], dtype: int8}
  kv_cache: {shape: [KV_BLOCKS, 128, 1, HEAD_DIM], dtype: bf16}
layers:
  csa:
    stages:
      - {name: rms_norm, task: rms_tid}
      - {name: q_proj, task: q_rope_tid, reads: [wq_a, wq_b]}
      - {name: sparse_attn, reads: [kv_cache]}
      - {name: o_proj_a, reads: [wo_a], group: o_proj, kernel: proj_a_mm}
      - {name: o_proj_b, reads: [wo_b], group: o_proj}
      - {name: moe, streams: 427.8 MB, sdma: true}
    warms:
      - name: prefetch_o_proj_w
        after: q_proj
        tensors: [wo_a, wo_b]
forward:
  - {layer: csa, repeat: 43}
"""
BROKEN = PLAN.replace("tensors: [wo_a, wo_b]", "tensors: [wo_a, wo_c]")  # PC010
WARNS = PLAN.replace("tensors: [wo_a, wo_b]", "tensors: [wo_a]")  # PC103: wo_b left out
OUTPUTS = ["demo_warms.manifest.json", "demo_warms.py"]

runner = CliRunner()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """tmp/plans/demo.yaml and an empty tmp/out."""
    (tmp_path / "plans").mkdir()
    (tmp_path / "plans" / "demo.yaml").write_text(PLAN, encoding="utf-8")
    (tmp_path / "out").mkdir()
    return tmp_path


def _listing(directory: Path) -> dict[str, tuple[bytes, int]]:
    return {
        p.name: (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(directory.iterdir())
        if p.is_file()
    }


def _build(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["build", *args])
    return result.exit_code, result.stdout, result.stderr


# -- writing -------------------------------------------------------------------------------


def test_build_writes_module_and_manifest(repo: Path) -> None:
    code, out, err = _build(str(repo / "plans" / "demo.yaml"), "--out", str(repo / "out"))
    assert code == 0, out + err
    assert sorted(os.listdir(repo / "out")) == OUTPUTS
    lines = out.splitlines()
    assert "1 warm, 100,663,296 B warmed, L2 peak 0.50× L2 -> written: " in lines[0]
    assert lines[-1] == "0 errors, 0 warnings in 1 plan; 2 written, 0 unchanged"
    manifest = json.loads((repo / "out" / "demo_warms.manifest.json").read_text("utf-8"))
    assert manifest["source"]["plan"] == "../plans/demo.yaml"
    raw = (repo / "plans" / "demo.yaml").read_bytes()
    assert manifest["source"]["sha256"] == hashlib.sha256(raw).hexdigest()
    module = (repo / "out" / "demo_warms.py").read_text("utf-8")
    assert "Plan: ../plans/demo.yaml\n" in module
    assert "plancc build ../plans/demo.yaml --out .\n" in module


def test_the_build_line_does_not_read_inside_a_budget_it_exceeds(tmp_path: Path) -> None:
    # 151,817,400 B is 0.754080… × L2: a PC032 warning, which builds; "0.75×" would hide it.
    plan = tmp_path / "m.yaml"
    plan.write_text(
        "plancc: 1\nmodel: m\nplatform: a2a3\nbudget: {l2_fraction: 0.754}\n"
        "tensors: {a: {shape: [151817400], dtype: int8}}\n"
        "layers: {l: {stages: [{name: s0, task: t0}, {name: g}, {name: s1, reads: [a]}], "
        "warms: [{name: wa, after: s0, tensors: [a]}]}}\n",
        encoding="utf-8",
    )
    code, out, _ = _build(str(plan), "--out", str(tmp_path), "-f", "text")
    assert code == 0
    assert (
        f"{plan.as_posix()}: 1 warm, 151,817,400 B warmed, L2 peak 0.7541× L2 -> written: "
        in out.splitlines()[-2]
    )


def test_manifest_matches_the_contract(repo: Path) -> None:
    build([str(repo / "plans" / "demo.yaml")], str(repo / "out"))
    manifest = json.loads((repo / "out" / "demo_warms.manifest.json").read_text("utf-8"))
    Draft202012Validator.check_schema(SCHEMA)
    Draft202012Validator(SCHEMA).validate(manifest)
    sha = manifest["source"]["sha256"]
    module_sha = hashlib.sha256((repo / "out" / "demo_warms.py").read_bytes()).hexdigest()
    assert manifest == {
        "format": "plancc-manifest/1",
        "model": "demo",
        "platform": "a2a3",
        "source": {"plan": "../plans/demo.yaml", "sha256": sha},
        "module": {"file": "demo_warms.py", "sha256": module_sha},
        "runtime": {"enable_sdma": True},
        "l2": {
            "capacity_bytes": 201326592,
            "peak_bytes": 100663296,
            "peak_fraction": 0.5,
            "budget_fraction": 0.75,
        },
        "warms": [
            {
                "name": "prefetch_o_proj_w",
                "layer": "csa",
                "name_hint": "prefetch_o_proj_w",
                "after": "q_proj",
                "task": "q_rope_tid",
                "bytes": 100663296,
                "next_layer": False,
                "consumed_in": ["csa"],
                "issues": 43,
                "guards": [],
                "consumers": [
                    {"stage": "o_proj_a", "layer": "csa", "kernel": "proj_a_mm"},
                    {"stage": "o_proj_b", "layer": "csa", "kernel": None},
                ],
                "tensors": [
                    {
                        "name": "wo_a",
                        "dtype": "bf16",
                        "shape": [8, 1024, 4096],
                        "flat": [33554432],
                        "bytes": 67108864,
                    },
                    {
                        "name": "wo_b",
                        "dtype": "int8",
                        "shape": [4096, 8192],
                        "flat": [33554432],
                        "bytes": 33554432,
                    },
                ],
                "parameters": [
                    {
                        "name": "wo_a",
                        "kind": "tensor",
                        "dtype": "bf16",
                        "shape": [8, 1024, 4096],
                        "layer": "this",
                    },
                    {
                        "name": "wo_b",
                        "kind": "tensor",
                        "dtype": "int8",
                        "shape": [4096, 8192],
                        "layer": "this",
                    },
                    {"name": "after", "kind": "task", "stage": "q_proj", "task": "q_rope_tid"},
                ],
            }
        ],
        "forward": {
            "layers": 43,
            "warm_issues": 86,
            "warm_bytes": 4328521728,
            "kinds": ["csa"] * 43,
        },
        "measure": manifest["measure"],
    }
    assert manifest["measure"]["warm_issues_per_round"] == 86


def test_schema_enums_follow_the_tables() -> None:
    from plancc.tables.dtypes import DTYPES

    assert SCHEMA["properties"]["platform"]["enum"] == list(PLATFORMS)
    tensor = SCHEMA["$defs"]["warm"]["properties"]["tensors"]["items"]
    assert tensor["properties"]["dtype"]["enum"] == list(DTYPES)


def test_schema_rejects_a_broken_manifest(repo: Path) -> None:
    build([str(repo / "plans" / "demo.yaml")], str(repo / "out"))
    manifest = json.loads((repo / "out" / "demo_warms.manifest.json").read_text("utf-8"))
    validator = Draft202012Validator(SCHEMA)
    for path, value in [
        (("runtime", "enable_sdma"), "yes"),
        (("l2", "peak_bytes"), 1.5),
        (("source", "plan"), "/abs/plan.yaml"),
        (("platform",), "a6"),
        (("format",), "plancc-manifest/2"),
    ]:
        broken = json.loads(json.dumps(manifest))
        node = broken
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
        assert not validator.is_valid(broken), path


def test_two_builds_are_byte_identical_from_any_directory(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = repo / "out"
    second = repo / "out2"
    second.mkdir()
    monkeypatch.chdir(repo)
    assert build(["plans/demo.yaml"], "out").exit_code == 0
    monkeypatch.chdir("/")
    assert build([str(repo / "plans" / "demo.yaml")], str(second)).exit_code == 0
    for name in OUTPUTS:
        assert (first / name).read_bytes() == (second / name).read_bytes()


def test_output_is_independent_of_argument_order(repo: Path) -> None:
    other = PLAN.replace("model: demo", "model: other")
    (repo / "plans" / "other.yaml").write_text(other, encoding="utf-8")
    plans = [str(repo / "plans" / "demo.yaml"), str(repo / "plans" / "other.yaml")]
    build(plans, str(repo / "out"))
    (repo / "out2").mkdir()
    build(plans[::-1], str(repo / "out2"))
    assert _listing(repo / "out").keys() == _listing(repo / "out2").keys()
    for name in _listing(repo / "out"):
        assert (repo / "out" / name).read_bytes() == (repo / "out2" / name).read_bytes()


def test_rebuild_touches_nothing(repo: Path) -> None:
    args = (str(repo / "plans" / "demo.yaml"), "--out", str(repo / "out"))
    assert _build(*args)[0] == 0
    for name in OUTPUTS:
        os.utime(repo / "out" / name, ns=(1_000_000_000, 1_000_000_000))
    before = _listing(repo / "out")
    inodes = {name: (repo / "out" / name).stat().st_ino for name in OUTPUTS}
    code, out, _ = _build(*args)
    assert code == 0
    assert "-> unchanged: " in out
    assert out.splitlines()[-1].endswith("0 written, 2 unchanged")
    assert _listing(repo / "out") == before
    assert {name: (repo / "out" / name).stat().st_ino for name in OUTPUTS} == inodes


def test_a_changed_output_is_replaced_atomically(repo: Path) -> None:
    args = (str(repo / "plans" / "demo.yaml"), "--out", str(repo / "out"))
    _build(*args)
    module = repo / "out" / "demo_warms.py"
    good = module.read_bytes()
    module.write_bytes(b"edited\n")
    module.chmod(0o640)
    code, out, _ = _build(*args)
    assert code == 0
    assert f"written: {module.as_posix()}; unchanged: " in out
    assert module.read_bytes() == good
    assert module.stat().st_mode & 0o777 == 0o640  # the mode of the file it replaced
    assert sorted(os.listdir(repo / "out")) == OUTPUTS  # no temporary file left


def test_the_longest_model_name_builds_and_one_more_character_is_pc013(repo: Path) -> None:
    plan = repo / "plans" / "demo.yaml"
    plan.write_text(PLAN.replace("model: demo", f"model: {'m' * MAX_NAME}"))
    code, out, err = _build(str(plan), "--out", str(repo / "out"))
    assert (code, err) == (0, ""), out
    names = [f"{'m' * MAX_NAME}_warms.manifest.json", f"{'m' * MAX_NAME}_warms.py"]
    assert sorted(os.listdir(repo / "out")) == names  # no temporary file left

    plan.write_text(PLAN.replace("model: demo", f"model: {'m' * (MAX_NAME + 1)}"))
    code, out, err = _build(str(plan), "--out", str(repo / "out"))
    assert code == 1
    assert f"error PC013: model '{'m' * 40}…' is 101 characters long; a name has at most 100" in out


def test_a_symlinked_output_is_written_through(repo: Path) -> None:
    """As every file plancc writes (tests/test_writing.py): the link stays, its target
    gets the bytes."""
    outside = repo / "outside.py"
    outside.write_bytes(b"an older build\n")
    (repo / "out" / "demo_warms.py").symlink_to(outside)
    assert build([str(repo / "plans" / "demo.yaml")], str(repo / "out")).exit_code == 0
    assert outside.read_text("utf-8").startswith('"""L2 warms')
    assert (repo / "out" / "demo_warms.py").is_symlink()


def test_output_names_cannot_leave_the_directory(tmp_path: Path) -> None:
    for name in ["../x.py", "a/b.py", "..", ".", "", ".hidden", "a\\b.py", "/abs.py"]:
        with pytest.raises(ValueError, match="bare output file name"):
            write.target(tmp_path, name)
    assert write.target(tmp_path, "m_warms.py") == tmp_path / "m_warms.py"


# -- --check -------------------------------------------------------------------------------


def test_check_fresh_stale_and_missing(repo: Path) -> None:
    plan, out_dir = str(repo / "plans" / "demo.yaml"), repo / "out"
    code, out, _ = _build(plan, "--out", str(out_dir), "--check")
    assert code == 1
    assert "missing: " in out
    assert os.listdir(out_dir) == []  # --check writes nothing

    _build(plan, "--out", str(out_dir))
    code, out, _ = _build(plan, "--out", str(out_dir), "--check")
    assert code == 0, out
    assert out.splitlines()[-1].endswith("all 2 outputs up to date")

    module = out_dir / "demo_warms.py"
    module.write_text(module.read_text("utf-8") + "# edited\n", encoding="utf-8")
    (out_dir / "demo_warms.manifest.json").unlink()
    before = _listing(out_dir)
    code, out, _ = _build(plan, "--out", str(out_dir), "--check")
    assert code == 1
    assert f"stale: {module.as_posix()}" in out
    assert f"missing: {(out_dir / 'demo_warms.manifest.json').as_posix()}" in out
    assert "2 of 2 outputs missing or out of date" in out
    assert _listing(out_dir) == before

    code, out, _ = _build(plan, "--out", str(out_dir), "--check", "--quiet")
    assert code == 1
    assert out.splitlines() == [
        f"{module.as_posix()}: stale",
        f"{(out_dir / 'demo_warms.manifest.json').as_posix()}: missing",
    ]


def test_a_symlinked_or_respelled_output_directory_gives_the_same_bytes(repo: Path) -> None:
    plan, out_dir = str(repo / "plans" / "demo.yaml"), repo / "out"
    _build(plan, "--out", str(out_dir))
    real = _listing(out_dir)
    module = (out_dir / "demo_warms.py").read_text("utf-8")
    manifest = json.loads((out_dir / "demo_warms.manifest.json").read_text("utf-8"))
    assert manifest["source"]["plan"] == "../plans/demo.yaml"
    assert "plancc build ../plans/demo.yaml --out .\n" in module
    # The same directory by a symlink elsewhere, and through a `..` after that symlink.
    (repo / "elsewhere" / "deeper").mkdir(parents=True)
    link = repo / "elsewhere" / "deeper" / "link"
    link.symlink_to(out_dir, target_is_directory=True)
    (out_dir / "sub").mkdir()
    (repo / "elsewhere" / "jump").symlink_to(out_dir / "sub", target_is_directory=True)
    spellings = [str(link), str(repo / "elsewhere" / "jump" / ".."), f"{link}/."]
    for spelled in spellings:
        code, out, _ = _build(plan, "--out", spelled, "--check")
        assert code == 0, out
        assert out.splitlines()[-1].endswith("all 2 outputs up to date")
        code, out, _ = _build(plan, "--out", spelled)
        assert code == 0, out
        assert out.splitlines()[-1].endswith("0 written, 2 unchanged")
    assert _listing(out_dir) == real  # mtimes too: nothing was rewritten


def test_check_in_github_actions_annotates_stale_files(repo: Path) -> None:
    plan, out_dir = str(repo / "plans" / "demo.yaml"), str(repo / "out")
    result = runner.invoke(
        app, ["build", plan, "--out", out_dir, "--check"], env={"GITHUB_ACTIONS": "true"}
    )
    assert result.exit_code == 1
    assert "::error file=" in result.stdout
    assert "demo_warms.py is missing; run plancc build" in result.stdout


def test_golden_files_are_up_to_date() -> None:
    """tests/golden holds the build of every plan in plans/; `make golden` updates it."""
    plans = sorted((ROOT / "plans").glob("*.yaml"))
    result = build([str(p) for p in plans], str(GOLDEN), compare=True)
    assert not result.failed, [d.message for d in result.report.diagnostics]
    stale = [f"{f.path.name}: {f.status.value}" for f in result.out_of_date]
    assert not stale, f"golden files out of date (run `make golden` and review): {stale}"
    assert sorted(p.name for p in GOLDEN.iterdir()) == sorted(
        [f"{p.stem}_warms{suffix}" for p in plans for suffix in (".py", ".manifest.json")]
        + ["deepseek_v4_flash_report.html"]  # tests/test_report_html.py compares it
        + ["forms"]  # the warm forms' fixtures: tests/test_forms.py compares them
    )
    for plan in plans:
        manifest = json.loads((GOLDEN / f"{plan.stem}_warms.manifest.json").read_text("utf-8"))
        Draft202012Validator(SCHEMA).validate(manifest)


# -- writing nothing -----------------------------------------------------------------------


def test_an_error_writes_nothing_and_reports_as_validate(repo: Path) -> None:
    out_dir = repo / "out"
    build([str(repo / "plans" / "demo.yaml")], str(out_dir))
    (out_dir / "demo_warms.py").write_bytes(b"old\n")
    (out_dir / "unrelated.txt").write_bytes(b"x\n")
    before = _listing(out_dir)
    (repo / "plans" / "demo.yaml").write_text(BROKEN, encoding="utf-8")
    (repo / "plans" / "good.yaml").write_text(PLAN.replace("demo", "good"), encoding="utf-8")
    plans = [str(repo / "plans" / "demo.yaml"), str(repo / "plans" / "good.yaml")]
    for check in ([], ["--check"]):
        code, out, _ = _build(*plans, "--out", str(out_dir), *check)
        validate = runner.invoke(app, ["validate", *plans])
        assert code == 1
        done = "nothing compared with" if check else "nothing written to"
        assert out == validate.stdout + f"plancc build: {done} {out_dir}: 1 error\n"
        assert "error PC010" in out
        assert _listing(out_dir) == before


def test_a_warning_under_strict_writes_nothing(repo: Path) -> None:
    (repo / "plans" / "demo.yaml").write_text(WARNS, encoding="utf-8")
    plan, out_dir = str(repo / "plans" / "demo.yaml"), str(repo / "out")
    code, out, _ = _build(plan, "--out", out_dir, "--strict")
    assert code == 1
    assert "warning PC103" in out
    assert os.listdir(out_dir) == []
    code, out, _ = _build(plan, "--out", out_dir)  # without --strict: written, warning shown
    assert code == 0
    assert "warning PC103" in out
    assert sorted(os.listdir(out_dir)) == OUTPUTS


def test_a_missing_output_directory_is_created(repo: Path) -> None:
    missing = repo / "new" / "deeper"
    plan = str(repo / "plans" / "demo.yaml")
    code, out, _ = _build(plan, "--out", str(missing), "--check")
    assert code == 1  # --check creates nothing: every output is missing
    assert not (repo / "new").exists()
    assert (
        f"{missing}/demo_warms.py: missing" in _build(plan, "-o", str(missing), "--check", "-q")[1]
    )
    code, out, _ = _build(plan, "--out", str(missing))
    assert code == 0, out
    assert sorted(p.name for p in missing.iterdir()) == [
        "demo_warms.manifest.json",
        "demo_warms.py",
    ]
    assert _build(plan, "--out", str(missing), "--check")[0] == 0


def test_an_output_directory_that_cannot_be_created_is_exit_2(repo: Path) -> None:
    (repo / "file").write_text("x")
    code, out, err = _build(str(repo / "plans" / "demo.yaml"), "--out", str(repo / "file" / "o"))
    assert (code, out) == (2, "")
    assert (
        err
        == f"plancc: {repo / 'file' / 'o'}: cannot create the output directory: Not a directory\n"
    )


def test_a_build_refused_under_strict_says_nothing_was_written(repo: Path) -> None:
    (repo / "plans" / "demo.yaml").write_text(WARNS, encoding="utf-8")
    plan, out_dir = str(repo / "plans" / "demo.yaml"), str(repo / "new")
    code, out, err = _build(plan, "--out", out_dir, "--strict")
    assert code == 1
    assert out.endswith(f"plancc build: nothing written to {out_dir}: 1 warning under --strict\n")
    assert not (repo / "new").exists()
    code, out, err = _build(plan, "--out", out_dir, "--strict", "-f", "json")
    assert json.loads(out)["warnings"] == 1
    assert err == f"plancc build: nothing written to {out_dir}: 1 warning under --strict\n"


@pytest.mark.parametrize("check", [[], ["--check"]])
def test_empty_output_directory_is_a_usage_error(
    repo: Path, check: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo / "out")
    code, out, err = _build(str(repo / "plans" / "demo.yaml"), "--out", "", *check)
    assert code == 2
    assert out == ""
    assert err == "plancc: --out '': empty output directory (use --out . for this directory)\n"
    assert os.listdir(repo / "out") == []


def test_output_path_that_is_a_file_is_a_usage_error(repo: Path) -> None:
    (repo / "file").write_text("x", encoding="utf-8")
    code, out, err = _build(str(repo / "plans" / "demo.yaml"), "--out", str(repo / "file"))
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1
    assert "not a directory" in err


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root writes anywhere")
def test_unwritable_output_directory_is_a_usage_error(repo: Path) -> None:
    out_dir = repo / "out"
    out_dir.chmod(0o500)
    try:
        code, out, err = _build(str(repo / "plans" / "demo.yaml"), "--out", str(out_dir))
    finally:
        out_dir.chmod(0o700)
    assert code == 2
    assert out == ""
    assert "cannot write" in err
    assert err.count("\n") == 1
    assert os.listdir(out_dir) == []


def test_a_write_failure_becomes_a_usage_error(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(src: str, dst: str) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(UsageError, match=r"demo_warms.*cannot write: Permission denied"):
        build([str(repo / "plans" / "demo.yaml")], str(repo / "out"))
    assert os.listdir(repo / "out") == []  # the staged temporary files are gone


# -- formats and the entry point -----------------------------------------------------------


def test_json_format_lists_the_outputs(repo: Path) -> None:
    code, out, _ = _build(
        str(repo / "plans" / "demo.yaml"), "--out", str(repo / "out"), "-f", "json"
    )
    assert code == 0
    data = json.loads(out)
    assert data["errors"] == 0
    assert [(o["file"].rsplit("/", 1)[1], o["status"]) for o in data["outputs"]] == [
        ("demo_warms.py", "written"),
        ("demo_warms.manifest.json", "written"),
    ]


def test_plan_without_warms_builds(tmp_path: Path) -> None:
    plan = tmp_path / "a5.yaml"
    plan.write_text(
        "plancc: 1\nmodel: quiet\nplatform: a5\ntensors:\n  w: {shape: [4], dtype: bf16}\n"
        "layers:\n  k:\n    stages: [{name: s, reads: [w]}]\n",
        encoding="utf-8",
    )
    result = build([str(plan)], str(tmp_path))
    assert result.exit_code == 0
    manifest = json.loads((tmp_path / "quiet_warms.manifest.json").read_text("utf-8"))
    Draft202012Validator(SCHEMA).validate(manifest)
    assert manifest["runtime"] == {"enable_sdma": False}
    assert "forward" not in manifest


def test_python_dash_m_plancc_build(repo: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "plancc", "build", "plans/demo.yaml", "--out", "out"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert sorted(os.listdir(repo / "out")) == OUTPUTS


def _from_a_pipe(*args: str, fd: int = 200) -> tuple[int, str, str]:
    read, write = os.pipe()
    os.write(write, PLAN.encode("utf-8"))
    os.close(write)
    os.dup2(read, fd)
    os.close(read)
    try:
        return _build(f"/dev/fd/{fd}", *args)
    finally:
        os.close(fd)


@pytest.mark.skipif(not Path("/dev/fd").is_dir(), reason="needs /dev/fd")
def test_a_plan_from_a_pipe_builds_the_same_bytes_every_time(repo: Path) -> None:
    # `plancc build <(generate-plan)`: each run reads a new pipe, whose real path
    # (/proc/<pid>/fd/pipe:[inode]) differs; the header names the path as given.
    outputs = []
    for _ in range(2):  # one descriptor number for both runs, as a shell gives
        code, out, err = _from_a_pipe("--out", str(repo / "out"))
        assert code == 0, out + err
        outputs.append({p.name: p.read_bytes() for p in (repo / "out").iterdir()})
    assert outputs[0] == outputs[1]
    assert b"/dev/fd/200" in outputs[0]["demo_warms.py"]


@pytest.mark.skipif(not Path("/dev/fd").is_dir(), reason="needs /dev/fd")
def test_a_plan_from_a_pipe_is_recorded_the_same_whatever_the_output_directory(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # docs/build.md: `<(generate-plan)` is `-` in source.plan and `/dev/fd/63` in
    # the header, not `../../../dev/fd/63`, which changed with the depth of --out.
    monkeypatch.chdir(repo)
    outputs = []
    for out in ("out", "a/b/c/out"):
        code, text, err = _from_a_pipe("--out", out)
        assert code == 0, text + err
        outputs.append({p.name: p.read_bytes() for p in (repo / out).iterdir()})
    assert outputs[0] == outputs[1]
    manifest = json.loads(outputs[0]["demo_warms.manifest.json"])
    assert manifest["source"]["plan"] == "-"  # no path: the manifest's schema takes it
    assert load_manifest(repo / "out" / "demo_warms.manifest.json").model == "demo"
    module = outputs[0]["demo_warms.py"].decode()
    assert "\nPlan: /dev/fd/200\n" in module
    assert "\n    plancc build - --stdin-filename /dev/fd/200 --out .\n" in module
    # The Regenerate line, pasted in the output directory, rebuilds the same bytes.
    monkeypatch.chdir(repo / "out")
    args = ["build", "-", "--stdin-filename", "/dev/fd/200", "--out", "."]
    result = runner.invoke(app, args, input=PLAN)
    assert result.stdout.endswith("; 0 written, 2 unchanged\n"), result.stdout


@pytest.mark.parametrize("check", [[], ["--check"]])
@pytest.mark.parametrize("output", OUTPUTS)
def test_a_plan_that_is_one_of_the_outputs_is_refused(
    tmp_path: Path, output: str, check: list[str]
) -> None:
    # The plan is saved under the name its own build would write: refused before
    # anything is written, the plan untouched.
    plan = tmp_path / output
    plan.write_text(PLAN, encoding="utf-8")
    code, out, err = _build(str(plan), "--out", str(tmp_path), *check)
    assert code == 2
    assert out == ""
    assert err == (
        f"plancc: {plan}: this plan is the output {tmp_path.as_posix()}/{output} of the build, "
        "which would overwrite it; choose another --out\n"
    )
    assert plan.read_text("utf-8") == PLAN
    assert os.listdir(tmp_path) == [output]


def test_check_names_each_orphaned_output_in_its_default_output(repo: Path) -> None:
    plan, out_dir = repo / "plans" / "demo.yaml", repo / "out"
    assert _build(str(plan), "--out", str(out_dir))[0] == 0
    plan.write_text(PLAN.replace("model: demo", "model: renamed"), encoding="utf-8")
    assert _build(str(plan), "--out", str(out_dir))[0] == 0
    code, out, _ = _build(str(plan), "--out", str(out_dir), "--check")
    assert code == 1
    assert out.splitlines()[-3:] == [
        f"{(out_dir / name).as_posix()} is produced by no plan any more; delete it"
        for name in OUTPUTS
    ] + ["0 errors, 0 warnings in 1 plan; all 2 outputs up to date, 2 orphaned"]

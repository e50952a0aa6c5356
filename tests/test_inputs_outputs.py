"""Inputs and outputs as other tools take them: `-` for standard input, the Regenerate
line of a plan from a pipe or with a non-ASCII path, the config in the manifest, orphaned
outputs under `build --check`."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_build import PLAN
from typer.testing import CliRunner

from plancc.cli.app import app

runner = CliRunner()
BASH = shutil.which("bash")


def _run(*args: str, stdin: bytes | None = None) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args), input=stdin, env={"GITHUB_ACTIONS": ""})
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "plans").mkdir()
    (tmp_path / "plans" / "demo.yaml").write_text(PLAN, encoding="utf-8")
    return tmp_path


# -- standard input ------------------------------------------------------------------------


def test_validate_reads_a_plan_from_standard_input(repo: Path) -> None:
    broken = PLAN.replace("tensors: [wo_a, wo_b]", "tensors: [wo_a, wo_c]")
    code, out, _ = _run("validate", "-q", "-", stdin=broken.encode())
    assert code == 1
    # The typo alone: what follows from it (the warm "covers wo_a but not wo_b") waits.
    assert out == "<stdin>:31:25: error PC010: unknown tensor 'wo_c'\n    did you mean 'wo_b'?\n"
    code, out, _ = _run("validate", "-q", "-", "--stdin-filename", "p.yaml", stdin=broken.encode())
    assert out.startswith("p.yaml:31:25: error PC010: unknown tensor 'wo_c'\n")


def test_standard_input_is_read_once_beside_files(repo: Path) -> None:
    _, out, _ = _run("validate", "-f", "json", "-", "plans/demo.yaml", "-", stdin=b"x: [")
    data = json.loads(out)
    assert [p["file"] for p in data["plans"]] == ["plans/demo.yaml"]
    assert [(d["file"], d["code"]) for d in data["diagnostics"]] == [("<stdin>", "PC001")]


def test_a_config_is_found_beside_the_stdin_filename(repo: Path) -> None:
    (repo / "plans" / "c.json").write_text('{"hidden_size": 4096}')
    plan = PLAN.replace("  D: 4096\n", "  D: hidden_size\n").replace(
        "platform: a2a3\n", "platform: a2a3\nconfig: c.json\n"
    )
    code, out, _ = _run("validate", "-", "--stdin-filename", "plans/new.yaml", stdin=plan.encode())
    assert code == 0, out
    code, out, _ = _run("validate", "-q", "-", stdin=plan.encode())
    assert "<stdin>:4:9: error PC005: cannot read config 'c.json'" in out


def test_build_from_standard_input_needs_a_name(repo: Path) -> None:
    code, out, err = _run("build", "-", "--out", "out", stdin=PLAN.encode())
    assert (code, out) == (2, "")
    assert err == (
        "plancc: -: build records the plan's path in its outputs; name the plan read from "
        "standard input with --stdin-filename PATH\n"
    )
    assert not (repo / "out").exists()


def test_build_from_standard_input_records_the_name_and_reads_it_again(repo: Path) -> None:
    args = ("build", "-", "--stdin-filename", "plans/gen.yaml", "--out", "out")
    code, out, _ = _run(*args, stdin=PLAN.encode())
    assert code == 0, out
    manifest = json.loads((repo / "out" / "demo_warms.manifest.json").read_text())
    assert manifest["source"] == {
        "plan": "../plans/gen.yaml",
        "sha256": hashlib.sha256(PLAN.encode()).hexdigest(),
    }
    module = (repo / "out" / "demo_warms.py").read_text()
    assert (
        "Regenerate from this file's directory, with the plan on standard input:\n\n"
        "    plancc build - --stdin-filename ../plans/gen.yaml --out .\n"
    ) in module
    assert _run(*args, "--check", stdin=PLAN.encode())[0] == 0
    # The Regenerate line, pasted in the output directory with the plan on its input:
    os.chdir(repo / "out")
    code, out, _ = _run(
        "build", "-", "--stdin-filename", "../plans/gen.yaml", "--out", ".", stdin=PLAN.encode()
    )
    assert "2 unchanged" in out


@pytest.mark.skipif(BASH is None or sys.platform == "win32", reason="needs bash")
def test_the_regenerate_line_works_pasted_for_a_non_ascii_path(repo: Path) -> None:
    odd = repo / "plans" / "café 'x'"
    odd.mkdir()
    (odd / "pläne.yaml").write_text(PLAN, encoding="utf-8")
    out = repo / "out"
    assert _run("build", str(odd / "pläne.yaml"), "--out", str(out))[0] == 0
    module = (out / "demo_warms.py").read_text("ascii")
    assert module.startswith('r"""')
    command = module.split("Regenerate from this file's directory:\n\n    ")[1].split("\n")[0]
    assert command == "plancc build $'../plans/caf\\xc3\\xa9 \\'x\\'/pl\\xc3\\xa4ne.yaml' --out ."
    before = {p.name: p.stat().st_mtime_ns for p in out.iterdir()}
    plancc = Path(sys.executable).parent / "plancc"
    pasted = command.replace("plancc", str(plancc), 1) + " --check"
    done = subprocess.run(
        [BASH, "-c", pasted], cwd=out, check=False, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "all 2 outputs up to date" in done.stdout
    assert {p.name: p.stat().st_mtime_ns for p in out.iterdir()} == before


@pytest.mark.skipif(BASH is None or sys.platform == "win32", reason="needs bash")
def test_a_plan_from_a_pipe_gets_a_regenerate_line_from_standard_input(repo: Path) -> None:
    plancc = Path(sys.executable).parent / "plancc"
    done = subprocess.run(
        [BASH, "-c", f"{plancc} build <(cat plans/demo.yaml) --out out"],
        check=False,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    module = (repo / "out" / "demo_warms.py").read_text()
    assert ", with the plan on standard input:\n\n    plancc build - --stdin-filename " in module


# -- the config in the manifest ------------------------------------------------------------


def test_the_manifest_records_the_config_and_check_notices_it_change(repo: Path) -> None:
    config = repo / "plans" / "configs" / "demo.json"
    config.parent.mkdir()
    config.write_text('{"hidden_size": 4096, "unused": 1}')
    plan = PLAN.replace("  D: 4096\n", "  D: hidden_size\n").replace(
        "platform: a2a3\n", "platform: a2a3\nconfig: configs/demo.json\n"
    )
    (repo / "plans" / "demo.yaml").write_text(plan)
    assert _run("build", "plans/demo.yaml", "--out", "build/gen")[0] == 0
    manifest = json.loads((repo / "build" / "gen" / "demo_warms.manifest.json").read_text())
    assert manifest["source"]["config"] == {
        "path": "../../plans/configs/demo.json",
        "sha256": hashlib.sha256(config.read_bytes()).hexdigest(),
    }
    assert list(manifest["source"]) == ["plan", "sha256", "config"]
    config.write_text('{"hidden_size": 4096, "unused": 2}')  # no value the plan uses changes
    code, out, _ = _run("build", "plans/demo.yaml", "--out", "build/gen", "--check", "-q")
    assert code == 1
    assert out == "build/gen/demo_warms.manifest.json: stale\n"


def test_a_plan_without_config_has_no_source_config(repo: Path) -> None:
    assert _run("build", "plans/demo.yaml", "--out", "out")[0] == 0
    manifest = json.loads((repo / "out" / "demo_warms.manifest.json").read_text())
    assert "config" not in manifest["source"]


# -- orphaned outputs ----------------------------------------------------------------------


def test_check_lists_outputs_no_plan_produces_any_more(repo: Path) -> None:
    other = repo / "plans" / "other.yaml"
    other.write_text(PLAN.replace("model: demo", "model: other"))
    assert _run("build", "plans", "--out", "out")[0] == 0
    # demo is renamed, other is deleted: four outputs are left behind
    (repo / "plans" / "demo.yaml").write_text(PLAN.replace("model: demo", "model: renamed"))
    other.unlink()
    (repo / "out" / "notes_warms.py").write_text("# mine, not plancc's\n")
    code, out, _ = _run("build", "plans", "--out", "out", "--check")
    assert code == 1
    lines = out.splitlines()
    assert lines[-1] == (
        "0 errors, 0 warnings in 1 plan; 2 of 2 outputs missing or out of date, 4 orphaned"
    )
    code, out, _ = _run("build", "plans", "--out", "out", "--check", "-q")
    assert out.splitlines() == [
        "out/renamed_warms.py: missing",
        "out/renamed_warms.manifest.json: missing",
        "out/demo_warms.manifest.json: orphaned",
        "out/demo_warms.py: orphaned",
        "out/other_warms.manifest.json: orphaned",
        "out/other_warms.py: orphaned",
    ]
    code, out, _ = _run("build", "plans", "--out", "out", "--check", "-f", "github")
    assert (
        "::error file=out/demo_warms.py,title=plancc build --check::"
        "out/demo_warms.py is produced by no plan any more; delete it\n"
    ) in out
    sarif = json.loads(_run("build", "plans", "--out", "out", "--check", "-f", "sarif")[1])
    texts = [r["message"]["text"] for r in sarif["runs"][0]["results"]]
    assert "out/other_warms.manifest.json is produced by no plan any more; delete it" in texts
    data = json.loads(_run("build", "plans", "--out", "out", "--check", "-f", "json")[1])
    assert {"plan": None, "file": "out/other_warms.py", "status": "orphaned"} in data["outputs"]


def test_outputs_of_plans_outside_the_run_are_not_orphans(repo: Path) -> None:
    (repo / "plans" / "other.yaml").write_text(PLAN.replace("model: demo", "model: other"))
    assert _run("build", "plans", "--out", "out")[0] == 0
    code, out, _ = _run("build", "plans/demo.yaml", "--out", "out", "--check")
    assert code == 0, out
    assert out.endswith("; all 2 outputs up to date\n")


def test_a_module_without_its_manifest_is_an_orphan(repo: Path) -> None:
    assert _run("build", "plans", "--out", "out")[0] == 0
    (repo / "plans" / "demo.yaml").write_text(PLAN.replace("model: demo", "model: renamed"))
    (repo / "out" / "demo_warms.manifest.json").unlink()
    assert _run("build", "plans", "--out", "out")[0] == 0
    code, out, _ = _run("build", "plans", "--out", "out", "--check", "-q")
    assert (code, out) == (1, "out/demo_warms.py: orphaned\n")


def test_the_runtime_checks_source_config() -> None:
    from plancc.runtime import MalformedManifestError, load_manifest

    golden = Path(__file__).parent / "golden" / "deepseek_v4_flash_warms.manifest.json"
    data = json.loads(golden.read_text("utf-8"))
    assert load_manifest(data).model == "deepseek_v4_flash"
    data["source"]["config"] = {"path": "/abs/config.json", "sha256": "0" * 64}
    with pytest.raises(MalformedManifestError, match="at /source/config/path"):
        load_manifest(data)
    data["source"]["config"] = {"path": "c.json"}
    with pytest.raises(MalformedManifestError, match="'sha256' is a required property"):
        load_manifest(data)

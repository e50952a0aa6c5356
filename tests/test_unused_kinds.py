"""Layer kinds that `forward` does not use: checked, and named in the summary."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_build import PLAN
from typer.testing import CliRunner

from plancc.cli.app import app

runner = CliRunner()
TWO_UNUSED = PLAN.replace(
    "layers:\n  csa:\n",
    "layers:\n  swa:\n    stages: [{name: s}]\n  mla:\n    stages: [{name: s}]\n  csa:\n",
)


@pytest.fixture
def plan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "p.yaml"
    path.write_text(TWO_UNUSED, encoding="utf-8")
    return path


def _run(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args), env={"GITHUB_ACTIONS": "", "NO_COLOR": "1"})
    return result.exit_code, result.stdout


def test_the_summary_names_unused_kinds(plan: Path) -> None:
    code, out = _run("validate", "p.yaml")
    assert code == 0, out
    assert out.splitlines()[-2].endswith(
        ", forward 43 layers, 86 warm issues, 4,328,521,728 B"
        "; layer kinds swa, mla are not in forward (checked, not counted)"
    )
    plan.write_text(TWO_UNUSED.replace("  mla:\n    stages: [{name: s}]\n", ""))
    assert (
        _run("validate", "p.yaml")[1]
        .splitlines()[-2]
        .endswith("; layer kind swa is not in forward (checked, not counted)")
    )


def test_json_lists_unused_kinds(plan: Path) -> None:
    data = json.loads(_run("validate", "-f", "json", "p.yaml")[1])
    assert data["plans"][0]["unused_kinds"] == ["swa", "mla"]


def test_no_notice_when_forward_uses_every_kind_or_is_absent(plan: Path) -> None:
    plan.write_text(PLAN)
    out = _run("validate", "p.yaml")[1]
    assert "not in forward" not in out
    assert json.loads(_run("validate", "-f", "json", "p.yaml")[1])["plans"][0]["unused_kinds"] == []
    plan.write_text(PLAN.split("forward:")[0])
    data = json.loads(_run("validate", "-f", "json", "p.yaml")[1])
    assert "unused_kinds" not in data["plans"][0]


def test_the_build_line_names_unused_kinds(plan: Path) -> None:
    code, out = _run("build", "p.yaml", "--out", "out")
    assert code == 0, out
    assert "; layer kinds swa, mla are not in forward (checked, not counted) -> written: " in out

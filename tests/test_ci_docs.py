"""The pre-commit hooks and the GitHub Actions workflow of docs/ci.md do what they say."""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import pytest
from ruamel.yaml import YAML
from typer.testing import CliRunner

from plancc.cli.app import app

ROOT = Path(__file__).resolve().parent.parent
runner = CliRunner()


def _yaml(text: str) -> object:
    return YAML(typ="safe", pure=True).load(text)


def _plancc(args: list[str]) -> int:
    assert args[0] == "plancc"
    return runner.invoke(app, args[1:], env={"GITHUB_ACTIONS": ""}).exit_code


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository with this one's plans (and configs), and their outputs built."""
    shutil.copytree(ROOT / "plans", tmp_path / "plans")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _hooks() -> dict[str, dict[str, object]]:
    data = _yaml((ROOT / ".pre-commit-hooks.yaml").read_text("utf-8"))
    assert isinstance(data, list)
    return {h["id"]: h for h in data}


def _hook_command(hook: dict[str, object], files: list[str]) -> list[str]:
    entry = shlex.split(str(hook["entry"]))
    args = [str(a) for a in hook.get("args", [])]  # type: ignore[attr-defined]
    return [*entry, *args, *([] if hook.get("pass_filenames") is False else files)]


def test_the_five_hooks() -> None:
    hooks = _hooks()
    assert list(hooks) == [
        "plancc-validate",
        "plancc-validate-fix",
        "plancc-fmt",
        "plancc-build-check",
        "plancc-check-source",
    ]
    for hook in hooks.values():
        assert hook["language"] == "python"
        assert re.search(str(hook["files"]), "plans/deepseek_v4_flash.yaml")
        assert re.search(str(hook["files"]), "plans/new.yml")
    assert re.search(str(hooks["plancc-build-check"]["files"]), "plans/configs/x.config.json")
    assert re.search(str(hooks["plancc-check-source"]["files"]), "models/x/decode_csa.py")


def test_the_hooks_pass_on_good_plans_and_fail_on_bad_ones(repo: Path) -> None:
    hooks = _hooks()
    plans = sorted(str(p.relative_to(repo)) for p in (repo / "plans").glob("*.yaml"))
    assert _plancc(["plancc", "build", "plans", "--out", "build"]) == 0
    for hook in hooks.values():
        assert _plancc(_hook_command(hook, plans)) == 0, hook["id"]
    flash = repo / "plans" / "deepseek_v4_flash.yaml"
    flash.write_text(flash.read_text().replace("platform: a2a3\n", "platform: a2a3\n\n\n"))
    assert _plancc(_hook_command(hooks["plancc-build-check"], plans)) == 1  # sha256 changed
    assert _plancc(_hook_command(hooks["plancc-fmt"], plans)) == 0  # rewrites it …
    assert "platform: a2a3\nconfig:" in flash.read_text()  # … back to the canonical layout
    flash.write_text(flash.read_text().replace("platform: a2a3", "platform: a9"))
    assert _plancc(_hook_command(hooks["plancc-validate"], plans)) == 1
    flash.write_text(flash.read_text().replace("platform: a9", "platform: a2a3"))
    twice = flash.read_text().replace("tensors: [wo_a, wo_b]", "tensors: [wo_b, wo_a]", 1)
    assert twice != flash.read_text()
    flash.write_text(twice)
    assert _plancc(_hook_command(hooks["plancc-validate-fix"], plans)) == 0  # fixed in place
    assert "tensors: [wo_a, wo_b]" in flash.read_text()


def _workflow() -> dict[str, object]:
    text = (ROOT / "docs" / "ci.md").read_text("utf-8")
    block = text.split("```yaml\n# .github/workflows/plans.yml\n", 1)[1].split("```", 1)[0]
    data = _yaml(block)
    assert isinstance(data, dict)
    return data


def test_the_workflow_steps_run_as_documented(repo: Path) -> None:
    workflow = _workflow()
    assert workflow["permissions"] == {"contents": "read", "security-events": "write"}
    steps = workflow["jobs"]["plans"]["steps"]  # type: ignore[index]
    runs = [s["run"] for s in steps if "run" in s and s["run"].startswith("plancc ")]
    assert runs == [
        "plancc validate plans/",
        "plancc fmt --check plans/",
        "plancc build plans/ --out model/generated --check",
        "plancc validate plans/ --format sarif > plancc.sarif || true",
    ]
    upload = next(s for s in steps if s.get("uses", "").startswith("github/codeql-action/"))
    assert upload["uses"] == "github/codeql-action/upload-sarif@v3"
    assert upload["with"]["sarif_file"] == "plancc.sarif"
    assert upload["if"] == "always()"
    # Each check passes on this repository's plans once their outputs are committed.
    assert _plancc(["plancc", "build", "plans/", "--out", "model/generated"]) == 0
    for run in runs[:3]:
        assert _plancc(shlex.split(run)) == 0, run
    sarif = runner.invoke(app, ["validate", "plans/", "--format", "sarif"])
    assert '"version": "2.1.0"' in sarif.stdout


def test_the_pre_commit_example_names_the_declared_hooks() -> None:
    text = (ROOT / "docs" / "ci.md").read_text("utf-8")
    block = text.split("```yaml\n# .pre-commit-config.yaml\n", 1)[1].split("```", 1)[0]
    config = _yaml(block)
    assert isinstance(config, dict)
    ids = [h["id"] for h in config["repos"][0]["hooks"]]
    # plancc-check-source is for model repositories: docs/sources.md shows it.
    assert ids == [h for h in _hooks() if h != "plancc-check-source"]
    text = (ROOT / "docs" / "sources.md").read_text("utf-8")
    block = text.split("```yaml\n# .pre-commit-config.yaml", 1)[1].split("\n", 1)[1]
    config = _yaml(block.split("```", 1)[0])
    assert isinstance(config, dict)
    assert [h["id"] for h in config["repos"][0]["hooks"]] == ["plancc-check-source"]

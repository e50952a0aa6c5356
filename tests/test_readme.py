"""The README's tour shows real output: each console block is run and compared."""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from plancc.cli.app import app

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text("utf-8")
BLOCKS = re.findall(
    r"```console\n(\$ mkdir -p build\n)?\$ \.venv/bin/plancc ([^\n]*)\n(.*?)```", README, re.S
)
# The tour's edits of the CSA warm, each applied before the block that shows it:
# block -> (where the warm starts, the text replaced, its replacement).
EDITS = {
    1: ("after: q_proj", "tensors: [wo_a, wo_b]", "tensors: [wo_a, wo_b, wq_b]"),  # break it
    2: ("name: prefetch_o_proj_w_csa", "after: q_proj", "after: rms_norm"),  # anchor early
}


def test_the_tour_has_its_blocks() -> None:
    assert [args.split()[0] for _, args, _ in BLOCKS] == [
        "validate",
        "validate",
        "validate",
        "explain",
        "suggest",
        "build",
        "measure",
        "report",
    ]


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_a_tour_block_prints_what_the_readme_shows(
    index: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(ROOT / "plans", tmp_path / "plans")  # a clean checkout: no build/ yet
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    mkdir, args, shown = BLOCKS[index]
    if args.startswith("measure"):  # the tour's build step came first
        (tmp_path / "build").mkdir()
        built = CliRunner().invoke(app, ["build", "plans/deepseek_v4_flash.yaml", "--out", "build"])
        assert built.exit_code == 0, built.stdout
    if mkdir:
        (tmp_path / "build").mkdir()
    if index in EDITS:
        start, old, new = EDITS[index]
        plan = tmp_path / "plans" / "deepseek_v4_flash.yaml"
        text = plan.read_text("utf-8")
        warm = text.index(start, text.index("csa:"))
        at = text.index(old, warm)
        plan.write_text(text[:at] + new + text[at + len(old) :], "utf-8")
    argv = [a for arg in shlex.split(args) for a in sorted(map(str, Path().glob(arg))) or [arg]]
    result = CliRunner().invoke(app, argv, env={"NO_COLOR": "1", "GITHUB_ACTIONS": ""})
    if shown:  # a block without output only promises the command runs cleanly
        assert result.stdout == shown
    assert result.exit_code == (1 if index == 1 else 0), result.stdout

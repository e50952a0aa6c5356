"""A real editor: headless Neovim starts `plancc lsp` with its built-in LSP client,
opens a broken plan, and writes the diagnostics it received to a file."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # `make test` skips it; .ci/run runs it

DATA = Path(__file__).parent / "data" / "lsp"
NVIM = shutil.which("nvim")


def _diagnostics(tmp_path: Path, text: str) -> list[dict[str, object]]:
    """What Neovim's own client received for a plan holding ``text``."""
    assert NVIM is not None
    shutil.copy(DATA / "demo.config.json", tmp_path / "demo.config.json")
    plan = tmp_path / "plan.yaml"
    plan.write_text(text, "utf-8")
    out = tmp_path / "diagnostics.json"
    env = {
        "PLANCC_PLAN": str(plan),
        "PLANCC_OUT": str(out),
        "PLANCC_PYTHON": sys.executable,
        "HOME": str(tmp_path),  # no user configuration, shada or state from this machine
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "PATH": "/usr/bin:/bin",
    }
    script = DATA / "nvim.lua"
    subprocess.run(
        [NVIM, "--headless", "-u", "NONE", "-i", "NONE", "-c", f"luafile {script}"],
        env=env,
        cwd=tmp_path,
        timeout=120,
        check=True,
        capture_output=True,
    )
    got = json.loads(out.read_text("utf-8"))
    assert got["received"] is True
    diagnostics: list[dict[str, object]] = got["diagnostics"]
    return diagnostics


def _spans(diagnostics: list[dict[str, object]]) -> list[tuple[object, ...]]:
    """Code, 1-based line, start and end column of each, as `plancc validate` counts."""
    return sorted(
        (d["code"], int(d["lnum"]) + 1, int(d["col"]) + 1, int(d["end_col"]) + 1)  # type: ignore[call-overload]
        for d in diagnostics
    )


@pytest.mark.skipif(NVIM is None, reason="Neovim (nvim) is not installed; .ci/run installs it")
def test_neovim_receives_the_warnings_with_their_ranges(tmp_path: Path) -> None:
    got = _diagnostics(tmp_path, (DATA / "demo.yaml").read_text("utf-8"))
    assert _spans(got) == [
        ("PC102", 32, 19, 23),  # wo_b
        ("PC103", 32, 18, 30),  # the whole list
        ("PC104", 31, 16, 22),  # q_proj
    ]
    assert {d["severity"] for d in got} == {2}  # vim.diagnostic.severity.WARN


@pytest.mark.skipif(NVIM is None, reason="Neovim (nvim) is not installed; .ci/run installs it")
def test_neovim_receives_the_error_and_not_what_it_may_cause(tmp_path: Path) -> None:
    # 'wkk' may be any tensor of the kind, so the group warnings wait for the error.
    text = (DATA / "demo.yaml").read_text("utf-8").replace("[wk]", "[wkk]")
    got = _diagnostics(tmp_path, text)
    assert _spans(got) == [("PC010", 25, 45, 48)]  # wkk
    assert got[0]["severity"] == 1  # vim.diagnostic.severity.ERROR
    assert str(got[0]["message"]).startswith("unknown tensor 'wkk'")

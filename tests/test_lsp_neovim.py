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


@pytest.mark.skipif(NVIM is None, reason="Neovim (nvim) is not installed; .ci/run installs it")
def test_neovim_receives_the_diagnostics(tmp_path: Path) -> None:
    assert NVIM is not None
    shutil.copy(DATA / "demo.config.json", tmp_path / "demo.config.json")
    plan = tmp_path / "broken.yaml"
    plan.write_text((DATA / "demo.yaml").read_text("utf-8").replace("[wk]", "[wkk]"), "utf-8")
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
    found = sorted(
        (d["code"], d["lnum"] + 1, d["col"] + 1, d["end_col"] + 1) for d in got["diagnostics"]
    )
    assert found == [
        ("PC010", 25, 45, 48),  # wkk
        ("PC102", 32, 19, 23),
        ("PC103", 32, 18, 30),
    ]
    pc010 = next(d for d in got["diagnostics"] if d["code"] == "PC010")
    assert pc010["severity"] == 1  # vim.diagnostic.severity.ERROR
    assert pc010["message"].startswith("unknown tensor 'wkk'")

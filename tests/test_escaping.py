"""Plan text is escaped the same way in every output format.

A name, a warm's `reason` or the plan's file name may hold a line break or a
terminal escape. Each format shows it as a Python literal escapes it
(`a\\nb`, `\\x1b[31m`): the text and github formats in their lines, JSON and
SARIF in their strings (which JSON then encodes once more, as it must). JSON
and SARIF carry the reason alone.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from plancc.cli.app import app

REASON = "measured\nat ep2 \x1b[31mred"
SHOWN = "measured\\nat ep2 \\x1b[31mred"  # as every format shows it
PLAN = """\
plancc: 1
model: m
platform: a2a3
tensors: {a: {shape: [1048576], dtype: int8}}
layers:
  k:
    stages:
      - {name: s0, task: t0}
      - {name: s1, reads: [a]}
    warms:
      - name: w
        after: s0
        tensors: [a]
        allow: [PC107]
        reason: "measured\\nat ep2 \\e[31mred"
"""


@pytest.fixture
def plan(tmp_path: Path) -> Path:
    path = tmp_path / "odd\nname.yaml"  # a line break in the file name
    path.write_text(PLAN, encoding="utf-8")
    return path


def _run(plan: Path, fmt: str) -> str:
    result = CliRunner().invoke(app, ["validate", str(plan), "--format", fmt, "--show-allowed"])
    assert result.exit_code == 0, result.output
    return result.stdout


def test_the_reason_and_the_file_name_are_escaped_alike(plan: Path) -> None:
    file = str(plan).replace("\n", "\\n")
    text = _run(plan, "text").splitlines()
    assert text[0].startswith(f"{file}:12:16: allowed warning PC107:")
    assert text[1] == f"    reason: allow on warm 'w': {SHOWN}"

    data = json.loads(_run(plan, "json"))
    (allowed,) = data["allowed"]
    assert allowed["file"] == file
    assert (allowed["warm"], allowed["reason"]) == ("w", SHOWN)  # the reason alone

    github = _run(plan, "github")
    assert f"file={file.replace(':', '%3A')}," in github
    assert github.rstrip("\n").endswith(f"allowed: allow on warm 'w': {SHOWN}")

    sarif = json.loads(_run(plan, "sarif"))
    (result,) = sarif["runs"][0]["results"]
    assert result["suppressions"] == [{"kind": "inSource", "justification": SHOWN}]
    assert "\x1b" not in "".join(text)
    assert "\x1b" not in github

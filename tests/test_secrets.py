"""No value of a plan's `config` file reaches any output but a number: a plan names any JSON
file on the machine that checks it (a CI runner's credentials, say), so its messages name
a key and the value's type, in every output format, the report and the editor."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from plancc.api import validate_paths
from plancc.cli.app import app
from plancc.text import json_kind

SECRET = "ghp_SECRETtoken0123456789"
CONFIG = {
    "hidden_size": SECRET,  # a string used as a dim
    "flag": True,
    "nothing": None,
    "nested": {"token": SECRET},
    "listed": [SECRET],
    "ratio": 1.5,  # a number: said as it is
    "mixed": [4, SECRET, 4],  # a forward list with a string in it
}
PLAN = """\
plancc: 1
model: m
platform: a2a3
config: c.json
dims: {D: hidden_size, F: flag, N: nothing, O: nested, L: listed, R: ratio}
tensors: {w: {shape: [64], dtype: bf16}}
layers: {a: {stages: [{name: s, reads: [w]}]}}
forward: {from_config: mixed, kinds: {4: a}}
"""
PLAN_OBJECT_FORWARD = PLAN.replace("from_config: mixed", "from_config: nested")
MESSAGES = [
    ("PC005", 4, 9, "config key 'flag' is used as a dim but is a boolean, not an integer"),
    ("PC005", 4, 9, "config key 'hidden_size' is used as a dim but is a string, not an integer"),
    ("PC005", 4, 9, "config key 'listed' is used as a dim but is a list, not an integer"),
    ("PC005", 4, 9, "config key 'nested' is used as a dim but is an object, not an integer"),
    ("PC005", 4, 9, "config key 'nothing' is used as a dim but is null, not an integer"),
    ("PC005", 4, 9, "config key 'ratio' is used as a dim but is 1.5, not an integer"),
    ("PC014", 8, 24, "'mixed' value at layer 1 is a string, not an integer"),
]


@pytest.fixture
def plan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.json").write_text(json.dumps(CONFIG), "utf-8")
    (tmp_path / "p.yaml").write_text(PLAN, "utf-8")
    return tmp_path / "p.yaml"


def test_messages_name_the_key_and_the_type(plan: Path) -> None:
    report = validate_paths(["p.yaml"])
    assert [(d.code, d.line, d.col, d.message) for d in report.diagnostics] == MESSAGES


def test_a_forward_key_that_is_an_object_is_named_by_its_type(plan: Path) -> None:
    plan.write_text(PLAN_OBJECT_FORWARD, "utf-8")
    report = validate_paths(["p.yaml"])
    assert ("PC014", 8, 24, "config key 'nested' is an object, not a list of integers") in [
        (d.code, d.line, d.col, d.message) for d in report.diagnostics
    ]
    assert all(SECRET not in d.message for d in report.diagnostics)


@pytest.mark.parametrize("fmt", ["text", "json", "github", "sarif"])
@pytest.mark.parametrize("text", [PLAN, PLAN_OBJECT_FORWARD], ids=["list", "object"])
def test_no_output_format_prints_a_config_string(plan: Path, fmt: str, text: str) -> None:
    plan.write_text(text, "utf-8")
    run = CliRunner().invoke(app, ["validate", "--format", fmt, "p.yaml"], env={"NO_COLOR": "1"})
    assert run.exit_code == 1, run.output
    assert "PC005" in run.output
    assert SECRET not in run.output
    assert "ghp_" not in run.output


def test_the_report_prints_no_config_string(plan: Path) -> None:
    run = CliRunner().invoke(app, ["report", "p.yaml", "-o", "r.html"])
    assert run.exit_code == 1, run.output
    page = (plan.parent / "r.html").read_text("utf-8")
    assert "config key &#39;hidden_size&#39; is used as a dim but is a string" in page
    assert "ghp_" not in page
    assert "ghp_" not in run.output


@pytest.mark.parametrize(
    ("value", "said"),
    [
        (3, "3"),
        (-2, "-2"),
        (1.5, "1.5"),
        (1e400, "inf"),
        (True, "a boolean"),
        (None, "null"),
        ("x", "a string"),
        ([], "a list"),
        ({}, "an object"),
    ],
)
def test_json_kind(value: Any, said: str) -> None:
    assert json_kind(value) == said

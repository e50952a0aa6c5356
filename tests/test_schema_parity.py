"""The editor schema accepts exactly what plancc accepts, wherever a schema can judge.

A JSON Schema sees one node at a time: it cannot know that a name refers to
nothing (PC010), that dims form a cycle (PC012) or that warms overflow L2
(PC030). What it can judge — structure (PC002), the version (PC003), a name's
form (PC013), a dtype (PC023), an empty forward (PC014) — it must judge as
plancc does, so that an editor shows the same mistakes `plancc validate` does.

The schema is applied to the plan as YAML types it: `1.0` is a float, not an
integer. (JSON has one number for 1 and 1.0, so a validator that reads the
plan as JSON numbers accepts `plancc: 1.0`; that is the one known gap, see
docs/cli.md.)
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator, validators

from plancc.api import validate_paths
from plancc.diagnostics import Diagnostic, Severity
from plancc.load import load
from plancc.validate import yaml_type_checker

ROOT = Path(__file__).resolve().parent.parent
CASES = sorted((ROOT / "tests" / "cases").rglob("*.yaml"))
SCHEMA = json.loads((ROOT / "schemas" / "warm-plan.schema.json").read_text("utf-8"))
YAML_TYPED = validators.extend(Draft202012Validator, type_checker=yaml_type_checker())(SCHEMA)
JSON_TYPED = Draft202012Validator(SCHEMA)


def _judged_by_a_schema(d: Diagnostic) -> bool:
    if d.severity is not Severity.ERROR:
        return False
    # A guard's default variable (its param's name in lower case) is PC013 only where a
    # guard uses it: no schema of the param's name can say so.
    return d.code in {"PC002", "PC003", "PC023"} or (
        (d.code == "PC013" and not d.message.startswith("guard "))
        or (d.code == "PC014" and d.message.startswith("forward is empty"))
    )


def _data(path: Path) -> Any:
    doc = load(str(path), path.read_bytes())
    assert not isinstance(doc, Diagnostic)
    return doc.data


def _yaml(plan: Path) -> bool:
    """A case that is not YAML (PC001) reaches no schema, so it has nothing to compare."""
    return not isinstance(load(str(plan), plan.read_bytes()), Diagnostic)


@pytest.mark.parametrize(
    "plan",
    [p for p in CASES if _yaml(p)],
    ids=lambda p: str(p.relative_to(ROOT / "tests" / "cases")),
)
def test_the_schema_rejects_a_case_exactly_when_plancc_does(plan: Path) -> None:
    doc = _data(plan)
    rejected = [d for d in validate_paths([str(plan)]).diagnostics if _judged_by_a_schema(d)]
    assert YAML_TYPED.is_valid(doc) == (not rejected), rejected


BASE = """\
plancc: 1
model: m
platform: a2a3
dims: {D: 64}
tensors: {w: {shape: [D], dtype: bf16}}
layers:
  k:
    stages:
      - {name: s0, task: t0}
      - {name: gap}
      - {name: s1, reads: [w]}
    warms:
      - {name: wm, after: s0, tensors: [w]}
"""
LONG = "n" * 101


# One fault each: (what, the fault applied to BASE, the code plancc reports).
FAULTS: list[tuple[str, Callable[[str], str], str]] = [
    ("a 101-character model", lambda t: t.replace("model: m", f"model: {LONG}"), "PC013"),
    ("a 101-character dim", lambda t: t.replace("{D: 64}", f"{{D: 64, {LONG}: 2}}"), "PC013"),
    ("a 101-character stage", lambda t: t.replace("name: gap", f"name: {LONG}"), "PC013"),
    ("a 101-character task", lambda t: t.replace("task: t0", f"task: {LONG}"), "PC013"),
    ("a 101-character warm", lambda t: t.replace("name: wm", f"name: {LONG}"), "PC013"),
    ("a dim named pl", lambda t: t.replace("{D: 64}", "{D: 64, pl: 2}"), "PC013"),
    (
        "a tensor named *_flat",
        lambda t: t.replace("{w: {", "{v_flat: {shape: [D], dtype: bf16}, w: {"),
        "PC013",
    ),
    ("a warm named warm_ctx", lambda t: t.replace("name: wm", "name: warm_ctx"), "PC013"),
    ("a keyword stage", lambda t: t.replace("name: gap", "name: class"), "PC013"),
    (
        "reason without allow",
        lambda t: t.replace("tensors: [w]}", "tensors: [w], reason: x}"),
        "PC002",
    ),
    (
        "allow without reason",
        lambda t: t.replace("tensors: [w]}", "tensors: [w], allow: [PC107]}"),
        "PC002",
    ),
    ("an empty forward", lambda t: t + "forward: []\n", "PC014"),
    ("a dtype spelled float32", lambda t: t.replace("dtype: bf16", "dtype: float32"), "PC023"),
    ("version 2", lambda t: t.replace("plancc: 1", "plancc: 2"), "PC003"),
    ("version 1.0", lambda t: t.replace("plancc: 1", "plancc: 1.0"), "PC003"),
]


def test_the_base_plan_is_accepted_by_both(write_plan: Callable[..., Path]) -> None:
    path = write_plan(BASE)
    assert not validate_paths([str(path)]).failed()
    assert YAML_TYPED.is_valid(_data(path))
    assert JSON_TYPED.is_valid(_data(path))
    hundred = write_plan(BASE.replace("model: m", f"model: {'n' * 100}"), "hundred.yaml")
    assert not validate_paths([str(hundred)]).failed()
    assert YAML_TYPED.is_valid(_data(hundred))


@pytest.mark.parametrize(("what", "fault", "code"), FAULTS, ids=[f[0] for f in FAULTS])
def test_each_fault_is_rejected_by_both(
    write_plan: Callable[..., Path], what: str, fault: Callable[[str], str], code: str
) -> None:
    path = write_plan(fault(BASE))
    report = validate_paths([str(path)])
    assert code in {d.code for d in report.diagnostics if d.severity is Severity.ERROR}, what
    assert not YAML_TYPED.is_valid(_data(path)), what
    if what != "version 1.0":  # JSON cannot tell 1.0 from 1: the documented gap
        assert not JSON_TYPED.is_valid(_data(path)), what

"""The plan format's JSON Schema: generated from the models, valid, shipped, usable by editors."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from typer.testing import CliRunner

from plancc.cli.app import app
from plancc.load import Document, load
from plancc.schema.declared import json_schema_text
from plancc.validate import plan_schema_text

ROOT = Path(__file__).parent.parent
SCHEMA_FILE = ROOT / "schemas" / "warm-plan.schema.json"
SHIPPED = sorted((ROOT / "plans").glob("*.yaml"))
VALID = sorted((ROOT / "tests" / "cases" / "valid").glob("*.yaml"))
MODELINE = re.compile(r"# yaml-language-server: \$schema=(?P<path>\S+)\n")


def _schema() -> dict[str, Any]:
    schema: dict[str, Any] = json.loads(SCHEMA_FILE.read_text("utf-8"))
    return schema


def _data(path: Path) -> Any:
    doc = load(str(path), path.read_bytes())
    assert isinstance(doc, Document), doc
    return doc.data


def test_committed_schema_matches_the_models() -> None:
    # Regenerate with: plancc schema --out schemas/warm-plan.schema.json (after changing model.py)
    assert SCHEMA_FILE.read_text("utf-8") == json_schema_text()


def test_the_schema_the_compiler_uses_is_the_committed_one() -> None:
    assert plan_schema_text() == SCHEMA_FILE.read_text("utf-8")


def test_schema_is_valid_draft_2020_12() -> None:
    schema = _schema()
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"].endswith("/warm-plan.schema.json")
    assert schema["additionalProperties"] is False
    assert sorted(schema["required"]) == ["layers", "model", "plancc", "platform", "tensors"]


def test_there_are_plans_to_check() -> None:
    assert SHIPPED
    assert VALID


@pytest.mark.parametrize("plan", SHIPPED + VALID, ids=lambda p: p.name)
def test_every_shipped_and_valid_plan_validates(plan: Path) -> None:
    errors = list(Draft202012Validator(_schema()).iter_errors(_data(plan)))
    assert errors == []


@pytest.mark.parametrize("plan", SHIPPED, ids=lambda p: p.name)
def test_every_shipped_plan_names_the_schema_for_editors(plan: Path) -> None:
    first = plan.read_text("utf-8").splitlines(keepends=True)[0]
    m = MODELINE.fullmatch(first)
    assert m, f"{plan.name} must start with '# yaml-language-server: $schema=…'"
    assert (plan.parent / m["path"]).resolve() == SCHEMA_FILE.resolve()


@pytest.mark.parametrize(
    ("key", "value"),
    [("plancc", "1"), ("plancc", 2), ("model", "class"), ("model", "_m"), ("platform", "cuda")],
)
def test_editors_see_what_the_compiler_reports(key: str, value: object) -> None:
    # The compiler reports these as PC003/PC013/PC002; the schema flags them too, for editors.
    plan = _data(VALID[0])
    plan[key] = value
    assert not Draft202012Validator(_schema()).is_valid(plan)


def test_editors_see_a_bad_dtype_and_a_bad_tensor_name() -> None:
    plan = _data(VALID[0])
    plan["tensors"]["wq_a"]["dtype"] = "BF16"
    assert not Draft202012Validator(_schema()).is_valid(plan)
    plan = _data(VALID[0])
    plan["tensors"]["not-a-name"] = plan["tensors"].pop("wq_a")
    assert not Draft202012Validator(_schema()).is_valid(plan)


def test_allow_needs_reason_in_the_schema() -> None:
    plan = _data(VALID[0])
    warm = plan["layers"]["csa"]["warms"][0]
    warm["allow"] = ["PC102"]
    assert not Draft202012Validator(_schema()).is_valid(plan)
    warm["reason"] = "measured"
    assert Draft202012Validator(_schema()).is_valid(plan)


def test_plancc_schema_prints_it() -> None:
    result = CliRunner().invoke(app, ["schema"])
    assert result.exit_code == 0
    assert result.stdout == SCHEMA_FILE.read_text("utf-8")


def test_plancc_schema_out_writes_it(tmp_path: Path) -> None:
    out = tmp_path / "schema.json"
    result = CliRunner().invoke(app, ["schema", "--out", str(out)])
    assert result.exit_code == 0
    assert result.stdout == ""
    assert out.read_bytes() == SCHEMA_FILE.read_bytes()


def test_plancc_schema_out_to_a_missing_directory_is_exit_2(tmp_path: Path) -> None:
    out = tmp_path / "no" / "such" / "schema.json"
    result = CliRunner().invoke(app, ["schema", "--out", str(out)])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.startswith(f"plancc: {out}: cannot write: ")
    assert result.stderr.count("\n") == 1

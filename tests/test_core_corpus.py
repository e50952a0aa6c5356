"""The core rule corpus (tests/cases/core) covers every front-end code in both YAML styles.

The cases themselves run in test_cases.py; this checks the corpus is complete, and
adds the PC001 inputs that are better made as bytes than kept as files.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from plancc.api import validate_paths
from plancc.cli.app import app
from plancc.codes import SOURCE_CODES, STAGE_CODES, UNUSED_SILENCE

CORE = Path(__file__).parent / "cases" / "core"
# Every code of the stages (plancc.codes), but PC006: a silence that silences nothing
# has its one case, pc006_stale_silences.yaml, in no particular style; and the source
# checks, whose cases need model code beside the plan (tests/test_source.py).
CODES = [c.id for c in STAGE_CODES if c is not UNUSED_SILENCE and c not in SOURCE_CODES]


def _expected_codes(plan: Path) -> list[str]:
    lines = plan.with_suffix(".expected").read_text("utf-8").splitlines()
    return [line.split()[0] for line in lines if line.strip() and not line.startswith("#")]


@pytest.mark.parametrize("style", ["block", "flow"])
@pytest.mark.parametrize("code", CODES)
def test_every_code_has_a_case_in_each_style(code: str, style: str) -> None:
    cases = [
        p.name for p in CORE.glob(f"{code.lower()}_*{style}.yaml") if code in _expected_codes(p)
    ]
    assert cases, f"no {style}-style case for {code} in {CORE}"


@pytest.mark.parametrize("plan", sorted(CORE.glob("pc*.yaml")), ids=lambda p: p.name)
def test_a_case_expects_the_code_it_is_named_after(plan: Path) -> None:
    code = plan.name[:5].upper()
    if plan.stem.endswith("_clean"):
        assert _expected_codes(plan) == []
    else:
        assert code in _expected_codes(plan)


@pytest.mark.parametrize("style", ["block", "flow"])
def test_a_schema_error_does_not_hide_the_rest(style: str) -> None:
    codes = set(_expected_codes(CORE / f"pc002_keeps_checking_{style}.yaml"))
    assert {"PC002", "PC010", "PC012"} <= codes


def _validate_json(path: Path) -> tuple[int, dict[str, Any]]:
    result = CliRunner().invoke(app, ["validate", "--format", "json", str(path)])
    return result.exit_code, json.loads(result.stdout)


def test_not_utf8_through_the_cli(tmp_path: Path) -> None:
    plan = tmp_path / "latin1.yaml"
    plan.write_bytes("plancc: 1\nmodel: café\n".encode("latin-1"))
    code, data = _validate_json(plan)
    assert code == 1
    assert data["diagnostics"] == [
        {
            "file": plan.as_posix(),
            "line": 2,
            "col": 11,
            "severity": "error",
            "code": "PC001",
            "message": "file is not valid UTF-8",
        }
    ]


def test_over_4_mib_through_the_cli(tmp_path: Path) -> None:
    plan = tmp_path / "big.yaml"
    plan.write_bytes(b"plancc: 1\n" + b"# padding\n" * (420 * 1024))
    code, data = _validate_json(plan)
    assert code == 1
    assert [(d["code"], d["line"], d["col"]) for d in data["diagnostics"]] == [("PC001", 1, 1)]


def test_every_pc001_file_is_nothing_else(tmp_path: Path) -> None:
    # A file that does not load is reported once, with PC001 only.
    for plan in sorted(CORE.glob("pc001_*.yaml")):
        codes = [d.code for d in validate_paths([str(plan)]).diagnostics]
        assert codes in ([], ["PC001"]), plan.name

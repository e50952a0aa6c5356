"""The rule corpus: every tests/cases/**/*.yaml with its expected diagnostics beside it.

``NAME.expected`` holds one line per diagnostic, ``CODE LINE COL``, in report
order (by position); an empty file means the plan must be clean. The whole
list must match exactly: a missing, extra or misplaced diagnostic fails.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from plancc.api import validate_paths

CASES = Path(__file__).parent / "cases"
PLANS = sorted(CASES.rglob("*.yaml"))


def _expected(plan: Path) -> list[tuple[str, int, int]]:
    text = plan.with_suffix(".expected").read_text("utf-8")
    out = []
    for line in text.splitlines():
        if line.strip() and not line.startswith("#"):
            code, row, col = line.split()
            out.append((code, int(row), int(col)))
    return out


@pytest.mark.parametrize("plan", PLANS, ids=[str(p.relative_to(CASES)) for p in PLANS])
def test_case(plan: Path) -> None:
    report = validate_paths([str(plan)])
    got = [(d.code, d.line, d.col) for d in report.diagnostics]
    assert got == _expected(plan), "\n".join(
        f"{d.line}:{d.col} {d.code} {d.message}" for d in report.diagnostics
    )


def test_every_case_has_expectations() -> None:
    assert PLANS, "no cases found"
    missing = [p.name for p in PLANS if not p.with_suffix(".expected").exists()]
    assert not missing

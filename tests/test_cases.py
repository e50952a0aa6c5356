"""The rule corpus: every tests/cases/**/*.yaml with its expected diagnostics beside it.

``NAME.expected`` holds one line per diagnostic, ``CODE LINE COL``, in report
order (by position); an empty file means the plan must be clean. The whole
list must match exactly: a missing, extra or misplaced diagnostic fails.
Anything after ``CODE LINE COL`` on a line is text that the diagnostic's
message or hint must contain (``PC012 9 6 dims form a cycle: F -> G -> F``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from plancc.api import validate_paths

CASES = Path(__file__).parent / "cases"
PLANS = sorted(CASES.rglob("*.yaml"))


def _expected(plan: Path) -> list[tuple[str, int, int, str]]:
    text = plan.with_suffix(".expected").read_text("utf-8")
    out = []
    for line in text.splitlines():
        if line.strip() and not line.startswith("#"):
            code, row, col, *words = line.split(maxsplit=3)
            out.append((code, int(row), int(col), words[0] if words else ""))
    return out


@pytest.mark.parametrize("plan", PLANS, ids=[str(p.relative_to(CASES)) for p in PLANS])
def test_case(plan: Path) -> None:
    report = validate_paths([str(plan)])
    expected = _expected(plan)
    listing = "\n".join(
        f"{d.line}:{d.col} {d.code} {d.message} [{d.hint}]" for d in report.diagnostics
    )
    got = [(d.code, d.line, d.col) for d in report.diagnostics]
    assert got == [e[:3] for e in expected], listing
    for d, (*_, text) in zip(report.diagnostics, expected, strict=True):
        assert text in f"{d.message}\n{d.hint or ''}", listing


def test_every_case_has_expectations() -> None:
    assert PLANS, "no cases found"
    missing = [p.name for p in PLANS if not p.with_suffix(".expected").exists()]
    assert not missing

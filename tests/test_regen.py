"""Every derived file is current: `make regen` would change none of them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import regen

DERIVED = regen.derived()


@pytest.mark.parametrize("path", sorted(DERIVED), ids=lambda p: p.name)
def test_derived_file_is_current(path: Path) -> None:
    assert path.read_text("utf-8") == DERIVED[path], f"{path.name} is stale: run make regen"


def test_the_lists_follow_the_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    # A new dtype or platform reaches every derived list (and so fails the test above
    # until `make regen` has run).
    from plancc import dtypes, platforms

    monkeypatch.setitem(dtypes.DTYPES, "fp64", dtypes.DType("fp64", "FP64", 64))
    monkeypatch.setitem(platforms.PLATFORMS, "a9", platforms.Platform("a9", None, False, None, ""))
    schema = ROOT_SCHEMA.read_text("utf-8")
    assert '"uint64", "bool", "fp64"]' in regen._manifest_schema(schema)
    assert '"a5sim", "a9"]' in regen._manifest_schema(schema)
    plan_format = regen._plan_format(PLAN_FORMAT.read_text("utf-8"))
    assert "uint64 bool fp64`" in plan_format
    assert "# a2a3 | a2a3sim | a5 | a5sim | a9\n" in plan_format


ROOT_SCHEMA = regen.ROOT / "schemas" / "manifest.schema.json"
PLAN_FORMAT = regen.ROOT / "docs" / "plan-format.md"

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest


@pytest.fixture
def write_plan(tmp_path: Path) -> Callable[..., Path]:
    """Write plan text to tmp_path/NAME and return its path."""

    def write(text: str, name: str = "plan.yaml") -> Path:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return path

    return write


@pytest.hookimpl(tryfirst=True)  # before `-m "not slow"` deselects
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The corpus's alias bombs (tests/cases/core/pc001_alias_bomb_*) take seconds in each
    sweep over the corpus, as long as the rest of the sweep: there they run with the slow
    tests. The tests of the limits themselves (tests/test_load.py) stay in the fast suite."""
    for item in items:
        callspec = getattr(item, "callspec", None)
        if callspec is not None and any(
            isinstance(v, Path) and v.name.startswith("pc001_alias_bomb")
            for v in callspec.params.values()
        ):
            item.add_marker(pytest.mark.slow)

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

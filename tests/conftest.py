from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

import plancc.source.root

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _no_sibling_pypto_lib(monkeypatch: pytest.MonkeyPatch) -> None:
    """Hermetic: the shipped plans' `source_root` (../../pypto-lib) finds no checkout
    beside this repository, as in CI; a test that wants one passes --source-root."""
    sibling = (ROOT.parent / "pypto-lib").resolve()
    real = plancc.source.root.checkout_at

    def checkout_at(path: str) -> bool:
        return Path(path).resolve() != sibling and real(path)

    monkeypatch.setattr(plancc.source.root, "checkout_at", checkout_at)


@pytest.fixture
def write_plan(tmp_path: Path) -> Callable[..., Path]:
    """Write plan text to tmp_path/NAME and return its path."""

    def write(text: str, name: str = "plan.yaml") -> Path:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return path

    return write

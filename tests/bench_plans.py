"""The plans ``bench/run.py`` generates (``spread``, ``anchored``), for the tests that
hold the loader and the rules to them: one generator for both."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

_RUN = Path(__file__).resolve().parent.parent / "bench" / "run.py"


def _module() -> Any:
    spec = importlib.util.spec_from_file_location("bench_run", _RUN)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_BENCH = _module()


def spread(warms: int) -> str:
    """Ten warms per layer kind, each at its own anchor."""
    text: str = _BENCH.spread(warms)
    return text


def anchored(warms: int) -> str:
    """One layer kind, every warm at its first stage."""
    text: str = _BENCH.anchored(warms)
    return text

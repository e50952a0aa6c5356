"""The model-code fuzz target, briefly: `make fuzz FUZZ_TARGET=source` runs it for as long
as asked."""

from __future__ import annotations

import fuzz_source  # tests/ is on sys.path (pytest prepends it)
import pytest

pytestmark = pytest.mark.slow  # `make test` skips it; .ci/run runs it


def test_fuzz_source_briefly() -> None:
    fuzz_source.run(30)
    assert fuzz_source.Figures.inputs >= 30

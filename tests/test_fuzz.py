"""The fuzz target, briefly: `make fuzz` runs it for as long as asked."""

from __future__ import annotations

import fuzz  # tests/ is on sys.path (pytest prepends it)
import pytest

pytestmark = pytest.mark.slow  # `make test` skips it; .ci/run runs it


def test_fuzz_briefly() -> None:
    fuzz.run(40)
    assert fuzz.Figures.inputs >= 40

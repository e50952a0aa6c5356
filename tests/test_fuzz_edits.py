"""The editor fuzz target (tests/fuzz_edits.py): briefly in `make test`, longer among the
slow tests; `make fuzz FUZZ_TARGET=edits` runs it for as long as asked."""

from __future__ import annotations

import fuzz_edits  # tests/ is on sys.path (pytest prepends it)
import pytest
from pygls.workspace import Workspace


def test_fuzz_edits_briefly() -> None:
    fuzz_edits.run(40)
    assert fuzz_edits.Figures.edits >= 40


@pytest.mark.slow
def test_fuzz_edits_longer() -> None:
    fuzz_edits.run(600, round_seed=1)


def test_pygls_alone_edits_another_text() -> None:
    """The target can fail: pygls's own buffer splits lines at U+2028 (as Python does), and
    an edit of the line after one lands a line early."""
    text = "# a\u2028b\nname: x\n"
    at = text.index("x")
    fuzz_edits.check(text, [(at, at + 1, "y")])
    with pytest.raises(AssertionError):
        fuzz_edits.check(text, [(at, at + 1, "y")], Workspace)

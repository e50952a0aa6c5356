"""Messages about this plan, short: every diagnostic of the corpus, in the plan's words.

One line saying what is wrong here (the fix is in the hint), within about 120
characters once the plan's own names are set aside; the seed's evidence lives
in `plancc explain`. No "0.0 MB" for a small tensor, and nothing of the YAML
library's or Python's vocabulary.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from plancc.api import validate_paths

CASES = sorted((Path(__file__).parent / "cases").rglob("*.yaml"))
# The parser's and the runtime's words, which a plan's author never wrote.
INTERNALS = (
    "set_int_max_str_digits",
    "found another document",
    "<block",
    "<stream",
    "token",
    "scalar",
    "tag:yaml.org",
    "Traceback",
)
QUOTED = re.compile(r"'[^']*'")


@pytest.mark.parametrize(
    "plan", CASES, ids=[str(p.relative_to(CASES[0].parents[1])) for p in CASES]
)
def test_every_message_is_short_and_in_the_plans_words(plan: Path) -> None:
    for d in validate_paths([str(plan)]).diagnostics:
        shown = f"{d.message}\n{d.hint or ''}"
        assert not any(word in shown for word in INTERNALS), d
        assert not re.search(r"\b0\.0 M", shown), d
        if d.code not in ("PC030", "PC032"):  # the contract has them name every warm, in 4 units
            assert len(QUOTED.sub("''", d.message)) <= 100, d.message

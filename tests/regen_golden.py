"""Regenerate the golden files under tests/golden: ``make golden``.

Equivalent to ``plancc build plans/*.yaml --out tests/golden``: every shipped plan.
Run it after an intended change to the plan, the template or the renderer,
then review the diff of tests/golden like any other change. tests/test_build.py
fails while the golden files differ from what a build would write.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden"
PLANS = sorted((ROOT / "plans").glob("*.yaml"))


def main() -> int:
    from plancc.api import build
    from plancc.formats.text import text

    result = build([str(p) for p in PLANS], str(GOLDEN))
    if result.failed:
        sys.stdout.write(text(result.report))
        return 1
    for plan in result.plans:
        for f in plan.files:
            print(f"{f.path.relative_to(ROOT).as_posix()}: {f.status.value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

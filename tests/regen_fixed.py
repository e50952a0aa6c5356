"""The fixed plan of every case with a fix: ``NAME.fixed`` beside ``NAME.yaml``.

``python -m tests.regen_fixed`` (run by ``make golden``) writes them; tests/test_fixes.py
fails while one is stale. Each is what `plancc validate --fix --unsafe-fixes` makes of
the case: review the diff like any other change.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "tests" / "cases"


def fixed(plan: Path) -> bytes | None:
    """The case's text once every fix is applied, or None when it has none."""
    from plancc.edits.apply import fix_plan
    from plancc.load.inputs import PlanInput

    relative = plan.relative_to(ROOT).as_posix()
    done = fix_plan(PlanInput(relative, plan), plan.read_bytes(), unsafe=True)
    return done.after if done.applied else None


def main() -> int:
    import os

    os.chdir(ROOT)  # the cases' labels, as the tests give them
    for plan in sorted(CASES.rglob("*.yaml")):
        target = plan.with_suffix(".fixed")
        text = fixed(plan)
        if text is None:
            if target.exists():
                target.unlink()
                print(f"{target.relative_to(ROOT).as_posix()}: removed")
            continue
        if not target.exists() or target.read_bytes() != text:
            target.write_bytes(text)
            print(f"{target.relative_to(ROOT).as_posix()}: written")
    return 0


if __name__ == "__main__":
    sys.exit(main())

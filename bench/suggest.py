"""`plancc suggest` on the shipped Flash plan, cold, against a cold `plancc validate` of it.

Each is its own process, as users run it; the two alternate, after one warm-up run
of each, so that a busy machine slows both alike; the median of each is taken. The
target is at most 2x (issue 33): suggest checks every candidate of every layer kind
(42 on this plan, "no warm" included) with the real rules, on the plan that validate resolves
once. Nothing here asserts a time.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PLAN = ROOT / "plans" / "deepseek_v4_flash.yaml"
PLANCC = str(Path(sys.executable).parent / "plancc")
TARGET = 2.0
RUNS = 15


def seconds(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def main() -> None:
    suggest = [PLANCC, "suggest", str(PLAN)]
    validate = [PLANCC, "validate", "-q", str(PLAN)]
    seconds(suggest)
    seconds(validate)
    ours, theirs = [], []
    for _ in range(RUNS):
        ours.append(seconds(suggest))
        theirs.append(seconds(validate))
    a, b = statistics.median(ours), statistics.median(theirs)
    print(
        f"suggest, Flash plan, cold: {a * 1000:.0f} ms; validate {b * 1000:.0f} ms; "
        f"{a / b:.2f}x (target <= {TARGET:g}x)"
    )


if __name__ == "__main__":
    main()

"""PC104 scales linearly: the rule alone on a layer of N stages and N warms, and on 2N.

Every warm is anchored at the first stage and consumed at the last, so the
old per-warm scan of the stages in between was quadratic (1,000 warms at one
stage took 6.5 s). Each size's time is the CPU time of its fastest run (the
machine may be shared); the ratio is printed: near 2 is linear, near 4
quadratic. Nothing here asserts a time.
"""

from __future__ import annotations

import time

from plancc.diagnostics import Diagnostic
from plancc.facts import facts_of
from plancc.load import load
from plancc.resolve import resolve
from plancc.rules import discover
from plancc.validate import validate


def plan_text(n: int) -> str:
    stages = ["      - {name: s0, task: t0}"]
    stages += [f"      - {{name: s{i}, task: t{i}, reads: [u{i}]}}" for i in range(1, n)]
    stages.append("      - {name: last, reads: [w]}")
    tensors = "".join(f"  u{i}: {{shape: [16], dtype: int8}}\n" for i in range(1, n))
    warms = "".join(f"      - {{name: w{j}, after: s0, tensors: [w]}}\n" for j in range(n))
    return (
        "plancc: 1\nmodel: m\nplatform: a2a3\ntensors:\n  w: {shape: [16], dtype: int8}\n"
        f"{tensors}layers:\n  k:\n    stages:\n" + "\n".join(stages) + "\n    warms:\n" + warms
    )


def pc104_seconds(n: int, runs: int = 7) -> float:
    doc = load("bench.yaml", plan_text(n).encode())
    assert not isinstance(doc, Diagnostic)
    plan, _ = resolve(validate(doc))
    assert plan is not None
    (rule,) = [r for r in discover() if r.id == "PC104"]
    facts = facts_of(plan)  # built once per check, for every rule: not PC104's time
    times = []
    for _ in range(runs):
        start = time.process_time()
        found = sum(1 for _ in rule.check(plan, facts))
        times.append(time.process_time() - start)
    assert found == n
    return min(times)  # CPU time, the least disturbed run: the machine may be shared


def main() -> None:
    small, large = pc104_seconds(2000), pc104_seconds(4000)
    print(f"PC104, 2,000 stages x 2,000 warms: {small * 1000:.0f} ms")
    print(f"PC104, 4,000 stages x 4,000 warms: {large * 1000:.0f} ms ({large / small:.1f}x)")


if __name__ == "__main__":
    main()

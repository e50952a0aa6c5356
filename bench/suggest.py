"""`plancc suggest`, cold, against a cold `plancc validate` of the same plan.

First the shipped Flash plan: each command its own process, as users run it; the two
alternate, after one warm-up run of each, so that a busy machine slows both alike; the
median of each is taken. The target is at most 2x (issue 33): suggest checks every
candidate of every layer kind with the real check, on the plan that validate resolves
once.

Then long layers (issue 40): one layer kind of N stages, each with a task and a
16.8 MB weight of its own, as a chain (each stage after the one before) and as a fan
(every stage beside every other, one last stage reading a weight after them all: every
pair of stages is a join), and a bare fan (the fan without its last stage: nothing to
warm in the kind, each next layer's weight read where no anchor of it lands it).
suggest stops at its bound of generated candidates; what it must not do is test every
pair of stages first, or check each candidate at the cost of the whole layer. Its time
and peak memory beside validate's: the target is a few times validate's (3x), at every
N. Nothing here asserts a time.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PLAN = ROOT / "plans" / "deepseek_v4_flash.yaml"
PLANCC = str(Path(sys.executable).parent / "plancc")
TARGET = 2.0
LONG_TARGET = 3.0
RUNS = 15
SIZES = (4000, 16000)


def seconds(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def child(cmd: list[str]) -> tuple[float, int]:
    """Wall seconds and peak RSS in MiB of one process running ``cmd``."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, _, usage = os.wait4(proc.pid, 0)
    return time.perf_counter() - start, usage.ru_maxrss // 1024


def long_layer(n: int, shape: str) -> str:
    """A layer kind of ``n`` tasked stages, each reading its own weight: a ``chain``, a
    ``fan`` (all beside each other, then one stage reading ``w`` after them all), or a
    ``bare fan`` (nothing after them: no candidate of the kind, every one of the next
    layer's weights unlandable)."""
    deps = "" if shape == "chain" else ", deps: []"
    stages = [f"      - {{name: s{i}, task: t{i}{deps}, reads: [u{i}]}}" for i in range(n)]
    if shape == "fan":
        every = ", ".join(f"s{i}" for i in range(n))
        stages.append(f"      - {{name: last, deps: [{every}], reads: [w]}}")
    tensors = "".join(f"  u{i}: {{shape: [4096, 4096], dtype: int8}}\n" for i in range(n))
    return (
        "plancc: 1\nmodel: m\nplatform: a2a3\ntensors:\n"
        "  w: {shape: [4096, 4096], dtype: int8}\n"
        f"{tensors}layers:\n  k:\n    stages:\n" + "\n".join(stages) + "\n"
    )


def flash() -> None:
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


def long_layers() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for shape in ("chain", "fan", "bare fan"):
            for n in SIZES:
                plan = Path(tmp) / f"{shape.replace(' ', '_')}{n}.yaml"
                plan.write_text(long_layer(n, shape), "utf-8")
                v_s, v_mib = child([PLANCC, "validate", "-q", str(plan)])
                s_s, s_mib = child([PLANCC, "suggest", str(plan), "--top", "3"])
                ratio = s_s / v_s
                verdict = "ok" if ratio <= LONG_TARGET else "OVER"
                print(
                    f"suggest, {n:,} tasked stages ({shape}): {s_s:.1f} s, {s_mib} MiB; "
                    f"validate {v_s:.1f} s, {v_mib} MiB; {ratio:.2f}x "
                    f"(target <= {LONG_TARGET:g}x) {verdict}"
                )


def main() -> None:
    flash()
    long_layers()


if __name__ == "__main__":
    main()

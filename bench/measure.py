"""Benchmark for `make bench`: `plancc measure` on a forward-sized swimlane trace.

A synthetic 43-layer DeepSeek V4 Flash trace in the converter's exact form
(tests/measure_fixtures.py: the warm, its consumers and padding tasks per layer,
a Worker and a Scheduler View of each) is generated here, at the size a real
forward produces (> 20 MB) and at 50 MB, never committed. Each run is a fresh
process; its wall time and peak resident memory (from wait4) are reported beside
those of a process that only `json.load`s the same file, as ratios. Nothing here
asserts a time.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # the test helpers, as pytest imports them

import measure_example as ex  # noqa: E402
import measure_fixtures as fx  # noqa: E402  (the converter-form writer)

MANIFEST = ROOT / "tests" / "golden" / "deepseek_v4_flash_warms.manifest.json"
RUNS = 3


def child(cmd: list[str]) -> tuple[float, int]:
    """Wall seconds and peak RSS in KiB of one process running ``cmd``."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{cmd[:3]}… exited {proc.returncode}: {proc.stderr.read().decode()}")
    return seconds, usage.ru_maxrss


def median_of(cmd: list[str]) -> tuple[float, int]:
    runs = [child(cmd) for _ in range(RUNS)]
    return statistics.median(r[0] for r in runs), max(r[1] for r in runs)


def kinds() -> list[str]:
    found: list[str] = json.loads(MANIFEST.read_text("utf-8"))["forward"]["kinds"]
    return found


def write(path: str, fillers: int) -> None:
    """Run in its own process: the generator's memory must not be counted as the
    measured processes' (a forked child starts with its parent's resident pages)."""
    fx.write_trace(Path(path), fx.forward_tasks(kinds(), fillers=fillers))


def main() -> None:
    print(f"plancc measure on a {len(kinds())}-layer swimlane trace, median of {RUNS} processes")
    print(f"{'trace':>10}  {'measure':>9}  {'peak RSS':>9}  {'json.load':>9}  {'peak RSS':>9}")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        ex.write_example(root, kinds())  # the logs and slot lines of the tour
        for fillers in (520, 1300):
            trace = root / "dfx" / "merged_swimlane_20261203_101500.json"
            subprocess.run(
                [sys.executable, __file__, "write", str(trace), str(fillers)], check=True
            )
            size = trace.stat().st_size
            measure = [
                str(Path(sys.executable).parent / "plancc"),
                *ex.example_args(str(MANIFEST), str(root)),
            ]
            measure[measure.index(f"{root}/dfx_outputs")] = str(trace.parent)
            load = [sys.executable, "-c", f"import json; json.load(open({str(trace)!r}))"]
            m_s, m_kib = median_of(measure)
            l_s, l_kib = median_of(load)
            print(
                f"{size / 1e6:>7.1f} MB  {m_s:>7.2f} s  {m_kib / 1024:>6.0f} MiB  "
                f"{l_s:>7.2f} s  {l_kib / 1024:>6.0f} MiB   "
                f"time x{m_s / l_s:.2f}, memory x{m_kib / l_kib:.2f} of json.load"
            )


if __name__ == "__main__":
    if sys.argv[1:2] == ["write"]:
        write(sys.argv[2], int(sys.argv[3]))
    else:
        main()

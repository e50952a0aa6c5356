"""Benchmark for `make bench`: `plancc measure` bounded in every dimension.

Inputs are generated here in PyPTO's exact forms (tests/measure_fixtures.py), never
committed, and each `plancc measure` runs as a fresh process; its wall time and peak
resident memory (from wait4) are printed. Nothing here asserts a time.

- **traces**: a synthetic 43-layer DeepSeek V4 Flash trace in the converter's form
  (the warm, its consumers and padding tasks per layer, a Worker and a Scheduler
  View of each) at the size a real forward produces (> 20 MB) and at 50 MB, beside a
  process that only `json.load`s the same file; then the same forward padded with
  other tasks' events to ~300 MB (no `json.load` beside it: that takes GiBs).
- **bootstrap**: two benchmark logs of 2 ranks × 10³, 10⁴ and 10⁵ raw samples each.
- **slots**: `[STRACE]` slot files of 10⁵, 10⁶ and 3 × 10⁶ lines.
- **durations**: `plancc validate --trace` (and `suggest --trace`) on a generated plan
  of two layer kinds of 16 timed stages each and a forward of 400 to 4,000 layers,
  beside `validate` without the trace and a process that only `json.load`s it: the
  trace holds one SPMD task of four cores per stage and layer, a Worker and a
  Scheduler View event per core (the converter's form), every event a stage's.

`python bench/measure.py [traces|bootstrap|slots|durations]` runs one group (default:
all).
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
RUNS = int(os.environ.get("MEASURE_BENCH_RUNS", "3"))
PLANCC = str(Path(sys.executable).parent / "plancc")


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


def median_of(cmd: list[str], runs: int = RUNS) -> tuple[float, int]:
    done = [child(cmd) for _ in range(runs)]
    return statistics.median(r[0] for r in done), max(r[1] for r in done)


def measure_logs(base: Path, warm: Path, *more: str) -> list[str]:
    """`plancc measure` of two bench logs against the Flash manifest."""
    return [
        PLANCC,
        "measure",
        "--manifest",
        str(MANIFEST),
        "--baseline",
        str(base),
        "--warm",
        str(warm),
        *more,
    ]


def kinds() -> list[str]:
    found: list[str] = json.loads(MANIFEST.read_text("utf-8"))["forward"]["kinds"]
    return found


def write(path: str, fillers: int, pad_mb: int) -> None:
    """Run in its own process: the generator's memory must not be counted as the
    measured processes' (a forked child starts with its parent's resident pages).
    ``pad_mb``: append other tasks' events, one at a time, until the file is that big."""
    fx.write_trace(Path(path), fx.forward_tasks(kinds(), fillers=fillers))
    if not pad_mb:
        return
    text = Path(path).read_text("utf-8")
    head, tail = text.rsplit("\n  ]", 1)
    pad = fx.trace_events(
        [
            fx.Task(
                f"moe_expert_ffn_{i}_spmd", 90000 + i, 9, (30 + i % 40,), 9.5, 10.0, 25.0, 9.0, 25.4
            )
            for i in range(64)
        ]
    )["traceEvents"]
    block = "".join(",\n    " + json.dumps(e, indent=2).replace("\n", "\n    ") for e in pad)
    with open(path, "w", encoding="utf-8") as f:
        f.write(head)
        written = len(head)
        while written < pad_mb * 1_000_000:
            f.write(block)
            written += len(block)
        f.write("\n  ]" + tail)


def traces(root: Path) -> None:
    print(f"\ntraces: the tour's `plancc measure` on a {len(kinds())}-layer swimlane trace")
    print(f"{'trace':>10}  {'measure':>9}  {'peak RSS':>9}  {'json.load':>9}  {'peak RSS':>9}")
    for fillers, pad_mb in ((520, 0), (1300, 0), (520, 300)):
        trace = root / "dfx" / "merged_swimlane_20261203_101500.json"
        subprocess.run(
            [sys.executable, __file__, "write", str(trace), str(fillers), str(pad_mb)], check=True
        )
        size = trace.stat().st_size
        measure = [PLANCC, *ex.example_args(str(MANIFEST), str(root))]
        measure[measure.index(f"{root}/dfx_outputs")] = str(trace.parent)
        m_s, m_kib = median_of(measure, RUNS if not pad_mb else 1)
        line = f"{size / 1e6:>7.1f} MB  {m_s:>7.2f} s  {m_kib / 1024:>6.0f} MiB"
        if not pad_mb:
            load = [sys.executable, "-c", f"import json; json.load(open({str(trace)!r}))"]
            l_s, l_kib = median_of(load)
            line += (
                f"  {l_s:>7.2f} s  {l_kib / 1024:>6.0f} MiB   "
                f"time x{m_s / l_s:.2f}, memory x{m_kib / l_kib:.2f} of json.load"
            )
        print(line, flush=True)
        trace.unlink()


def bootstrap(root: Path) -> None:
    print("\nbootstrap: the verdict on two logs of 2 ranks each, every raw sample printed")
    print(f"{'samples/rank':>12}  {'log':>9}  {'measure':>9}  {'peak RSS':>9}")
    for n in (1_000, 10_000, 100_000):
        step = 40.0 / n  # the same spread of rounds whatever their number
        base = root / f"b{n}.log"
        warm = root / f"w{n}.log"
        base.write_text(
            fx.bench_log({1: fx.spread(34423.7, n, step), 2: fx.spread(34461.3, n, step)}), "utf-8"
        )
        warm.write_text(
            fx.bench_log({3: fx.spread(33424.2, n, step), 4: fx.spread(33452.9, n, step)}), "utf-8"
        )
        s, kib = median_of(measure_logs(base, warm))
        print(
            f"{n:>12,}  {base.stat().st_size / 1e6:>6.1f} MB  {s:>7.2f} s  {kib / 1024:>6.0f} MiB",
            flush=True,
        )


def slots(root: Path) -> None:
    print("\nslots: stage windows from one [STRACE] slot file (two slots per invocation)")
    print(f"{'lines':>10}  {'file':>9}  {'measure':>9}  {'peak RSS':>9}")
    base, warm = root / "b.log", root / "w.log"
    base.write_text(fx.bench_log({41237: fx.spread(34423.7)}), "utf-8")
    warm.write_text(fx.bench_log({41301: fx.spread(33424.2)}), "utf-8")
    for lines in (100_000, 1_000_000, 3_000_000):
        path = root / "strace-bench.log"  # not the tour's stderr-warm.log
        with path.open("w", encoding="utf-8") as f:
            for inv in range(1, lines // 2 + 1):
                at = 1_000_000 * inv
                f.write(fx.strace(41301, inv, 3, at, 200_000) + "\n")
                f.write(fx.strace(41301, inv, 4, at + 150_000, 403_000 + inv % 5000) + "\n")
        cmd = measure_logs(base, warm, "--slots", f"warm={path}", "--window", "csa=3:4")
        s, kib = median_of(cmd, RUNS if lines < 3_000_000 else 1)
        print(
            f"{lines:>10,}  {path.stat().st_size / 1e6:>6.0f} MB  {s:>7.2f} s  "
            f"{kib / 1024:>6.0f} MiB",
            flush=True,
        )
        path.unlink()


STAGES = 16  # per layer kind in the durations plan
CORES = (24, 25, 26, 27)  # an SPMD task's


def durations_plan(layers: int) -> str:
    """Two layer kinds of STAGES timed stages, each with its own kernel; ``layers`` of them."""
    lines = ["plancc: 1", "model: timed", "platform: a2a3", "tensors:"]
    lines += ["  w: {shape: [1048576], dtype: bf16}", "layers:"]
    for kind in ("a", "b"):
        lines += [f"  {kind}:", "    stages:"]
        for i in range(STAGES):
            reads = ", reads: [w]" if i == STAGES - 1 else ""
            task = ", task: s0_tid" if i == 0 else ""
            lines.append(f"      - {{name: s{i}, kernel: {kind}_k{i}{task}{reads}}}")
        lines += ["    warms: [{name: warm_" + kind + ", after: s0, tensors: [w]}]"]
    lines.append(f"forward: [{', '.join('ab'[i % 2] for i in range(layers))}]")
    return "\n".join(lines) + "\n"


def write_durations(path: str, layers: int) -> None:
    """Run in its own process, as ``write``: the trace of ``durations_plan(layers)``."""
    tasks = []
    for layer in range(layers):
        kind = "ab"[layer % 2]
        t0 = 100.0 + layer * 400.0
        for i in range(STAGES):
            start = t0 + 20.0 * i + (layer % 7)
            n = len(tasks) + 1
            tasks.append(
                fx.Task(
                    f"{kind}_k{i}",
                    n,
                    10 + i,
                    CORES,
                    start - 0.5,
                    start,
                    start + 15.0,
                    start - 0.9,
                    start + 15.4,
                )
            )
    fx.write_trace(Path(path), tasks)


def durations(root: Path) -> None:
    print("\ndurations: `plancc validate --trace` on a plan of 2 × 16 timed stages")
    print(
        f"{'layers':>7}  {'trace':>9}  {'events':>9}  {'validate':>9}  {'peak RSS':>9}  "
        f"{'no trace':>9}  {'json.load':>9}  {'peak RSS':>9}"
    )
    for layers in (400, 4000):
        plan = root / "timed.yaml"
        plan.write_text(durations_plan(layers), "utf-8")
        trace = root / "timed_swimlane.json"
        subprocess.run(
            [sys.executable, __file__, "write-durations", str(trace), str(layers)], check=True
        )
        events = layers * STAGES * len(CORES) * 2
        v_s, v_kib = median_of(
            [PLANCC, "validate", "--no-source", "--trace", str(trace), str(plan)]
        )
        _, n_kib = median_of([PLANCC, "validate", "--no-source", str(plan)])
        load = [sys.executable, "-c", f"import json; json.load(open({str(trace)!r}))"]
        l_s, l_kib = median_of(load)
        print(
            f"{layers:>7,}  {trace.stat().st_size / 1e6:>6.1f} MB  {events:>9,}  {v_s:>7.2f} s  "
            f"{v_kib / 1024:>5.0f} MiB  {n_kib / 1024:>5.0f} MiB  {l_s:>7.2f} s  "
            f"{l_kib / 1024:>5.0f} MiB   {(v_kib - n_kib) * 1024 / events:>5.0f} B per event",
            flush=True,
        )
        trace.unlink()


def main(groups: list[str]) -> None:
    print(f"plancc measure, fresh processes, median of {RUNS} (of 1 for the largest inputs)")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        ex.write_example(root, kinds())  # the logs and slot lines of the tour
        for name in groups or ["traces", "bootstrap", "slots", "durations"]:
            groups_by_name = {
                "traces": traces,
                "bootstrap": bootstrap,
                "slots": slots,
                "durations": durations,
            }
            groups_by_name[name](root)


if __name__ == "__main__":
    if sys.argv[1:2] == ["write"]:
        write(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    elif sys.argv[1:2] == ["write-durations"]:
        write_durations(sys.argv[2], int(sys.argv[3]))
    else:
        main(sys.argv[1:])

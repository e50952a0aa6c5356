"""Benchmarks for `make bench`: plancc against check-jsonschema, as ratios from one run.

check-jsonschema runs as users run it: its own process, with ruamel.yaml's C
loader installed (``make bench`` installs ``ruamel.yaml.clib``), against the
schema plancc ships. plancc runs the same way (a fresh process each time) and
does everything: schema, names, sizes, the L2 budget and every placement rule,
with a position for each diagnostic.

- cold start of every command on the shipped Flash plan (``validate``,
  ``build`` into an emptied directory, ``fmt --check``, ``report``, ``measure``
  on the example logs, ``explain``, ``rules``, ``schema``, ``--version``,
  ``--help``), each against check-jsonschema's cold validate of that plan;
- two series of generated plans, 10² and 10³ warms: ``spread`` (ten warms
  per layer kind, each at its own anchor) and ``anchored`` (every warm at one
  stage of one layer kind), each as a process and, for what an editor waits
  on, in process (``plancc.api.validate_paths``, after one untimed call);
- each process's peak memory (max RSS).

Medians of repeated runs, interleaved so that a busy machine slows both
sides alike. Nothing here asserts a time; the targets (every ratio ≤ 0.5×)
are printed beside the ratios and written, with every number, to
bench/results.json.
"""

from __future__ import annotations

import compileall
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
PLAN = ROOT / "plans" / "deepseek_v4_flash.yaml"
SCHEMA = ROOT / "schemas" / "warm-plan.schema.json"
RESULTS = ROOT / "bench" / "results.json"
EXAMPLE = ROOT / "examples" / "measure"
SIZES = (100, 1_000)
TIMEOUT = 150  # seconds for one process: past it a point is reported as a timeout
TARGET = 0.5  # every ratio to check-jsonschema

EXPONENT = 1.1  # the largest growth of in-process time with the warms that is linear enough


def spread(warms: int, per_kind: int = 10) -> str:
    """``warms`` warms, ten per layer kind, each anchored at its own stage."""
    lines = ["plancc: 1", "model: big", "platform: a2a3", "tensors:"]
    kinds = max(1, warms // per_kind)
    lines += [
        f"  t{k}_{j}: {{shape: [16, 4], dtype: bf16}}"
        for k in range(kinds)
        for j in range(per_kind)
    ]
    lines.append("layers:")
    for k in range(kinds):
        lines += [f"  k{k}:", "    stages:"]
        for j in range(per_kind):
            lines += [
                f"      - {{name: a{j}, task: a{j}_tid}}",
                f"      - {{name: g{j}}}",
                f"      - {{name: c{j}, reads: [t{k}_{j}]}}",
            ]
        lines.append("    warms:")
        lines += [
            f"      - {{name: w{k}_{j}, after: a{j}, tensors: [t{k}_{j}]}}" for j in range(per_kind)
        ]
    return "\n".join(lines) + "\n"


def anchored(warms: int) -> str:
    """``warms`` warms of one layer kind, all anchored at its first stage."""
    lines = ["plancc: 1", "model: big", "platform: a2a3", "tensors:"]
    lines += [f"  t{j}: {{shape: [16, 4], dtype: bf16}}" for j in range(warms)]
    lines += ["layers:", "  k:", "    stages:", "      - {name: a, task: a_tid}"]
    lines += ["      - {name: g}"]
    lines += [f"      - {{name: c{j}, reads: [t{j}]}}" for j in range(warms)]
    lines.append("    warms:")
    lines += [f"      - {{name: w{j}, after: a, tensors: [t{j}]}}" for j in range(warms)]
    return "\n".join(lines) + "\n"


def process(cmd: list[str]) -> tuple[float, int]:
    """Wall seconds and peak memory (max RSS, bytes) of one run of ``cmd``."""
    start = time.perf_counter()
    child = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    timer = threading.Timer(TIMEOUT, child.kill)
    timer.start()
    try:
        _, status, usage = os.wait4(child.pid, 0)
    finally:
        timer.cancel()
        child.returncode = 0  # reaped by wait4
    seconds = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code < 0:
        raise RuntimeError(f"timeout: over {TIMEOUT} s")
    if code > 1:
        raise RuntimeError(f"{' '.join(cmd)}: exit {code}")
    return seconds, usage.ru_maxrss * 1024


def side_by_side(ours: list[str], theirs: list[str], runs: int) -> dict[str, float]:
    """Both commands ``runs`` times, interleaved, after one warm-up run of each."""
    process(ours)
    process(theirs)
    mine, other, rss_mine, rss_other = [], [], 0, 0
    for _ in range(runs):
        t, rss = process(ours)
        mine.append(t)
        rss_mine = max(rss_mine, rss)
        t, rss = process(theirs)
        other.append(t)
        rss_other = max(rss_other, rss)
    a, b = statistics.median(mine), statistics.median(other)
    return {
        "plancc_s": a,
        "check_jsonschema_s": b,
        "ratio": a / b,
        "plancc_peak_rss": rss_mine,
        "check_jsonschema_peak_rss": rss_other,
    }


# In a child process, so that this one stays small: a child's max RSS counts its
# parent's at the fork, and a parent grown by 10^4 warms would be in every later row.
# One untimed call first: the first plan imports what the pipeline loads lazily
# (ruamel, the schema gate), start-up that is not the plan's.
_IN_PROCESS = """
import statistics, sys, time
from plancc.api import validate_paths
validate_paths([sys.argv[1]])
times = []
for _ in range(int(sys.argv[2])):
    start = time.perf_counter()
    validate_paths([sys.argv[1]])
    times.append(time.perf_counter() - start)
print(statistics.median(times))
"""


def in_process(path: Path, runs: int) -> float:
    """plancc's median time for ``path`` inside one process, without its start-up."""
    out = subprocess.run(
        [sys.executable, "-c", _IN_PROCESS, str(path), str(runs)],
        capture_output=True,
        text=True,
        check=True,
        timeout=TIMEOUT * runs,
    )
    return float(out.stdout)


def _commands(plancc: str, tmp: Path) -> dict[str, list[str]]:
    """Each command, as a user runs it on the Flash plan (a build into an emptied directory,
    so that every run writes both files)."""
    out = tmp / "out"
    out.mkdir()
    manifest = ROOT / "tests" / "golden" / "deepseek_v4_flash_warms.manifest.json"
    measure = [
        *("--manifest", str(manifest), "--baseline", str(EXAMPLE / "bench-nowarm.log")),
        *("--warm", str(EXAMPLE / "bench-warm.log"), "--trace", str(EXAMPLE / "dfx_outputs")),
    ]
    fresh_build = f'rm -f "{out}"/*; exec "{plancc}" build -q "{PLAN}" --out "{out}"'
    return {
        "validate": [plancc, "validate", "-q", str(PLAN)],
        "build": ["sh", "-c", fresh_build],
        "fmt --check": [plancc, "fmt", "--check", str(PLAN)],
        "report": [plancc, "report", str(PLAN), "-o", str(tmp / "report.html")],
        "measure": [plancc, "measure", *measure],
        "explain": [plancc, "explain", "PC107"],
        "rules": [plancc, "rules"],
        "schema": [plancc, "schema"],
        "--version": [plancc, "--version"],
        "--help": [plancc, "--help"],
    }


def cold_starts(
    commands: dict[str, list[str]], against: list[str], runs: int
) -> dict[str, dict[str, float]]:
    """Each command ``runs`` times, in rounds that run ``against`` too, after a warm-up
    round; each command's median against the median of ``against``."""
    names = [*commands, ""]
    times: dict[str, list[float]] = {name: [] for name in names}
    rss = dict.fromkeys(names, 0)
    for round_ in range(runs + 1):
        for name in names:
            seconds, peak = process(commands.get(name, against))
            if round_:
                times[name].append(seconds)
                rss[name] = max(rss[name], peak)
    theirs = statistics.median(times[""])
    return {
        name: {
            "plancc_s": statistics.median(times[name]),
            "check_jsonschema_s": theirs,
            "ratio": statistics.median(times[name]) / theirs,
            "plancc_peak_rss": rss[name],
            "check_jsonschema_peak_rss": rss[""],
        }
        for name in commands
    }


def c_loader() -> str:
    """Which parser check-jsonschema's ``YAML(typ="safe")`` gets here."""
    from ruamel.yaml import YAML
    from ruamel.yaml.main import CParser

    return "C (ruamel.yaml.clib)" if YAML(typ="safe").Parser is CParser else "pure Python"


def main() -> None:
    loader = c_loader()
    if not loader.startswith("C"):
        sys.exit(
            "bench: ruamel.yaml.clib is not installed: check-jsonschema would be measured slow"
        )
    # An installed plancc is byte-compiled (pip compiles a wheel's modules), as
    # check-jsonschema is; an editable one is compiled here, or a process with
    # PYTHONDONTWRITEBYTECODE set would compile every module on every run.
    compileall.compile_dir(ROOT / "plancc", quiet=1)
    plancc, cjs = str(BIN / "plancc"), str(BIN / "check-jsonschema")
    results: dict[str, Any] = {"check_jsonschema_loader": loader, "python": sys.version.split()[0]}
    rows: list[tuple[str, dict[str, float]]] = []

    with tempfile.TemporaryDirectory() as tmp:
        against = [cjs, "--schemafile", str(SCHEMA), str(PLAN)]
        results["commands"] = cold_starts(_commands(plancc, Path(tmp)), against, 7)
        rows += [(f"cold `plancc {name}`", r) for name, r in results["commands"].items()]

        for series, generate in (("spread", spread), ("anchored", anchored)):
            points = []
            for n in SIZES:
                path = Path(tmp) / f"{series}{n}.yaml"
                path.write_text(generate(n), encoding="utf-8")
                try:
                    point = side_by_side(
                        [plancc, "validate", "-q", str(path)],
                        [cjs, "--schemafile", str(SCHEMA), str(path)],
                        5,
                    )
                    point["in_process_s"] = in_process(path, {100: 9, 1_000: 5}[n])
                except RuntimeError as exc:
                    point = {"error": str(exc)}
                point["warms"] = n
                point["bytes"] = path.stat().st_size
                points.append(point)
                if "ratio" in point:
                    rows.append((f"{series}, {n:,} warms, validate (process)", point))
            results[series] = {"points": points, "exponent": _exponent(points)}

    RESULTS.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    _print(results, rows)


def _exponent(points: list[dict[str, Any]]) -> float | None:
    """How the in-process time grows with the warms: the slope of log time over log warms
    between the series' ends (issue 25: the rules on the graph stay linear, ≤ 1.1)."""
    timed = [p for p in points if "in_process_s" in p]
    if len(timed) < 2:
        return None
    first, last = timed[0], timed[-1]
    return math.log(last["in_process_s"] / first["in_process_s"]) / math.log(
        last["warms"] / first["warms"]
    )


def _print(results: dict[str, Any], rows: list[tuple[str, dict[str, float]]]) -> None:
    width = max(len(r[0]) for r in rows)
    print(f"check-jsonschema with the {results['check_jsonschema_loader']} loader")
    print(
        f"{'benchmark':<{width}}  {'plancc':>9}  {'c-jsonsch':>9}  {'ratio':>6}  target  peak RSS"
    )
    for name, r in rows:
        ok = "ok" if r["ratio"] <= TARGET else "OVER"
        print(
            f"{name:<{width}}  {r['plancc_s'] * 1e3:7.0f}ms  {r['check_jsonschema_s'] * 1e3:7.0f}ms"
            f"  {r['ratio']:5.2f}x  ≤{TARGET:.2f} {ok:>4}  {r['plancc_peak_rss'] / 2**20:5.0f} MiB"
            f" (c-j {r['check_jsonschema_peak_rss'] / 2**20:.0f} MiB)"
        )
    for series in ("spread", "anchored"):
        inproc = ", ".join(
            f"{p['warms']:,}: {p['in_process_s'] * 1e3:.0f} ms"
            if "in_process_s" in p
            else f"{p['warms']:,}: {p['error']}"
            for p in results[series]["points"]
        )
        slope = results[series]["exponent"]
        grows = (
            ""
            if slope is None
            else f"; exponent {slope:.2f} (≤{EXPONENT:.1f} {'ok' if slope <= EXPONENT else 'OVER'})"
        )
        print(f"{series}: plancc in process {inproc}{grows}")
    print(f"written to {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()

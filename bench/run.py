"""Benchmarks for `make bench`: plancc against check-jsonschema, as ratios side by side.

Cold start is what CI pays per plan: `plancc validate` (schema, names, budget
and every placement rule) against `check-jsonschema` (the schema alone) on the
same file, each run as a fresh process. Throughput is the in-process cost of
the whole front end on a large generated plan against a bare jsonschema pass
over the same data. Medians of repeated runs; nothing here asserts a time.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
PLAN = ROOT / "plans" / "deepseek_v4_flash.yaml"
SCHEMA = ROOT / "schemas" / "warm-plan.schema.json"


def median_seconds(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def run(cmd: list[str]) -> None:
    subprocess.run(cmd, check=True, capture_output=True)


def large_plan(kinds: int) -> str:
    lines = ["plancc: 1", "model: big", "platform: a2a3", "dims: {D: 4096, N: 1024}", "tensors:"]
    lines += [f"  w{i}: {{shape: [D, N], dtype: int8}}" for i in range(kinds)]
    lines.append("layers:")
    for i in range(kinds):
        lines += [
            f"  k{i}:",
            "    stages:",
            "      - {name: a, task: a_tid}",
            "      - {name: b}",
            f"      - {{name: c, reads: [w{i}]}}",
            f"    warms: [{{name: warm{i}, after: a, tensors: [w{i}]}}]",
        ]
    return "\n".join(lines) + "\n"


def main() -> None:
    rows: list[tuple[str, float, float]] = []
    plancc_cmd = [str(BIN / "plancc"), "validate", "-q", str(PLAN)]
    cjs_cmd = [str(BIN / "check-jsonschema"), "--schemafile", str(SCHEMA), str(PLAN)]
    run(plancc_cmd)
    run(cjs_cmd)
    rows.append(
        (
            "cold start, Flash plan (process)",
            median_seconds(lambda: run(plancc_cmd), 15),
            median_seconds(lambda: run(cjs_cmd), 15),
        )
    )

    import json

    import jsonschema
    from ruamel.yaml import YAML

    from plancc.api import validate_paths

    validator = jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text("utf-8")))
    with tempfile.TemporaryDirectory() as tmp:
        for kinds in (10, 200):
            path = Path(tmp) / f"big{kinds}.yaml"
            path.write_text(large_plan(kinds), encoding="utf-8")

            def schema_only(path: Path = path) -> None:
                data = YAML(typ="safe", pure=True).load(path.read_text("utf-8"))
                list(validator.iter_errors(data))

            rows.append(
                (
                    f"in-process, {kinds} layer kinds",
                    median_seconds(lambda p=path: validate_paths([str(p)]), 7),
                    median_seconds(schema_only, 7),
                )
            )

    width = max(len(r[0]) for r in rows)
    print(f"{'benchmark':<{width}}  {'plancc':>10}  {'schema only':>12}  {'ratio':>6}")
    for name, ours, theirs in rows:
        print(
            f"{name:<{width}}  {ours * 1e3:8.1f}ms  {theirs * 1e3:10.1f}ms  {ours / theirs:5.2f}x"
        )
    print("\n'schema only' is check-jsonschema for the process row and a bare jsonschema pass over")
    print("the same YAML for the in-process rows; plancc also resolves names, bytes, the L2")
    print("budget and every placement rule, with positions for each diagnostic.")


if __name__ == "__main__":
    main()

"""The shipped measurement example: examples/measure/, the README tour's `plancc
measure` step, and the golden reports tests/data/measure/report.{txt,md}.

Written by ``make golden`` from the fixture writer (tests/measure_fixtures.py);
tests/test_measure.py fails while the committed files differ from it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from measure_fixtures import bench_log, forward_tasks, slot_lines, spread, trace_events

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "measure"
EXAMPLE_TRACE = "dfx_outputs/merged_swimlane_20261203_101500.json"
BASE_PIDS, WARM_PIDS = (41237, 41238), (41301, 41302)


def example_files(kinds: Sequence[str]) -> dict[str, str]:
    """The seed's ep2 measurement of the Flash plan at warmup 500: fast-rank p50
    34423.7 -> 33424.2 µs; a swimlane where one HCA layer's warm lands late; the CSA
    window of one layer (slots 3 and 4) with and without the warm."""
    base = {BASE_PIDS[0]: spread(34423.7), BASE_PIDS[1]: spread(34461.3)}
    warm = {WARM_PIDS[0]: spread(33424.2), WARM_PIDS[1]: spread(33452.9)}
    tasks = forward_tasks(kinds, late=(kinds.index("hca") + 2,), anchor=False)
    return {
        "bench-nowarm.log": bench_log(base),
        "bench-warm.log": bench_log(warm),
        "stderr-nowarm.log": slot_lines(BASE_PIDS[0], [374.3, 375.1, 376.0, 374.8]),
        "stderr-warm.log": slot_lines(WARM_PIDS[0], [351.4, 353.2, 354.9, 352.6]),
        EXAMPLE_TRACE: json.dumps(trace_events(tasks), indent=2),
    }


def write_example(root: Path, kinds: Sequence[str]) -> list[Path]:
    written = []
    for name, text in example_files(kinds).items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.read_text("utf-8") != text:
            path.write_text(text, encoding="utf-8")
            written.append(path)
    return written


def example_args(manifest: str, root: str = "examples/measure") -> list[str]:
    return [
        "measure",
        "--manifest",
        manifest,
        "--baseline",
        f"{root}/bench-nowarm.log",
        "--warm",
        f"{root}/bench-warm.log",
        "--trace",
        f"{root}/dfx_outputs",
        "--slots",
        f"{root}/stderr-nowarm.log",
        "--slots",
        f"{root}/stderr-warm.log",
        "--window",
        "csa=3:4",
        "--standalone",
        "csa=347.0",
    ]

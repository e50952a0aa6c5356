"""Stage durations from a swimlane (`--trace` on suggest and validate)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from measure_fixtures import Task, trace_events
from typer.testing import CliRunner

from plancc import api
from plancc.cli import app
from plancc.inputs import PlanInput
from plancc.measure.durations import apply, durations
from plancc.measure.errors import InputError

PLAN = """\
plancc: 1
model: timed
platform: a2a3
tensors:
  w: {shape: [1048576], dtype: bf16}
  v: {shape: [1048576], dtype: bf16}
layers:
  a:
    stages:
      - {name: norm, task: norm_tid, kernel: rms_norm, duration_us: 99}
      - {name: proj, kernel: proj_mm, reads: [v]}
      - {name: gone, kernel: not_in_trace, duration_us: 7}
      - {name: use, reads: [w], kernel: use_mm}
    warms:
      - {name: warm_w, after: norm, tensors: [w]}
  b:
    stages:
      - {name: norm, task: norm_tid, kernel: rms_norm}
      - {name: use, reads: [w], kernel: use_b}
forward: [a, b, a]
"""


def _task(kernel: str, n: int, start: float, us: float, cores: tuple[int, ...] = (0,)) -> Task:
    return Task(kernel, n, 10, cores, start - 0.5, start, start + us, start - 0.9, start + us + 0.4)


def _trace(tmp_path: Path, tasks: list[Task]) -> str:
    path = tmp_path / "merged_swimlane.json"
    path.write_text(json.dumps(trace_events(tasks), indent=2), "utf-8")
    return str(path)


def _plan(tmp_path: Path) -> api.PlanResult:
    path = tmp_path / "timed.yaml"
    path.write_text(PLAN, "utf-8")
    return api.diagnose_plan(PlanInput(str(path), path), PLAN.encode())


def _layers(tmp_path: Path) -> list[Task]:
    tasks = []
    n = 0
    for layer, t0 in enumerate((100.0, 1100.0, 2100.0)):
        n += 1
        tasks.append(_task("rms_norm", n, t0, 4.0 + layer))  # 4, 5, 6 µs
        if layer != 1:
            # proj: an SPMD task on two cores, then a second task: first start to last end
            n += 1
            tasks.append(_task("proj_mm", n, t0 + 10, 20.0 * (layer + 1), (24, 25)))
            n += 1
            tasks.append(_task("proj_mm", n, t0 + 40 * (layer + 1), 5.0))
    return tasks


def test_each_stage_is_the_median_of_its_kinds_spans(tmp_path: Path) -> None:
    plan = _plan(tmp_path).plan
    assert plan is not None
    found = durations(_trace(tmp_path, _layers(tmp_path)), plan)
    assert found.by_stage == {
        ("a", "norm"): pytest.approx(5.0),  # layers 0 and 2: 4 and 6 µs
        ("b", "norm"): pytest.approx(5.0),
        ("a", "proj"): pytest.approx(((45.0 - 10) + (125.0 - 10)) / 2),
    }
    assert found.notes == (
        "no not_in_trace event: its stage keeps its duration_us",
        "no use_b event: its stage keeps its duration_us",
        "no use_mm event: its stage keeps its duration_us",
    )
    timed, kinds = apply(plan, found)
    assert kinds == {"a", "b"}
    stages = {s.name: s.duration_us for s in timed.layers["a"].stages}
    assert stages == {
        "norm": pytest.approx(5.0),
        "proj": pytest.approx(75.0),
        "gone": 7,
        "use": None,
    }


def test_a_count_that_does_not_divide_by_layers_places_nothing(tmp_path: Path) -> None:
    plan = _plan(tmp_path).plan
    assert plan is not None
    tasks = [t for t in _layers(tmp_path) if t.task != 1]  # layer 0's rms_norm lost
    found = durations(_trace(tmp_path, tasks), plan)
    assert ("a", "norm") not in found.by_stage
    assert "2 rms_norm tasks over 3 layers that run it: not placed by layer" in found.notes[1]


def test_not_a_trace_is_an_input_error(tmp_path: Path) -> None:
    plan = _plan(tmp_path).plan
    assert plan is not None
    bad = tmp_path / "bad.json"
    bad.write_text("[]", "utf-8")
    with pytest.raises(InputError, match="not a Chrome Trace Event file"):
        durations(str(bad), plan)


def test_validate_trace_times_pc107_and_exits_2_on_a_bad_trace(tmp_path: Path) -> None:
    (tmp_path / "timed.yaml").write_text(PLAN.replace("[1048576]", "[8388608]"), "utf-8")
    plan = str(tmp_path / "timed.yaml")
    runner = CliRunner(env={"NO_COLOR": "1"})
    # Without the trace proj has no duration: PC107 cannot estimate, and is quiet.
    assert runner.invoke(app, ["validate", plan]).exit_code == 0
    # The trace gives proj 1 µs: with gone's 7 µs, 2.3 MB of w's 16.8 MB land.
    tasks = [_task("proj_mm", i, t0, 1.0) for i, t0 in ((1, 100.0), (2, 2100.0))]
    done = runner.invoke(app, ["validate", plan, "--trace", _trace(tmp_path, tasks)])
    assert "warning PC107: warm 'warm_w' cannot land: in the 8 µs before 'use'" in done.output
    bad = tmp_path / "bad.json"
    bad.write_text("{}", "utf-8")
    done = runner.invoke(app, ["validate", plan, "--trace", str(bad)])
    assert done.exit_code == 2
    assert 'bad.json: not a Chrome Trace Event file: no "traceEvents" list' in done.output

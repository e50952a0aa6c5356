"""Stage durations from a swimlane (`--trace` on suggest and validate)."""

from __future__ import annotations

import json
import random
import statistics
from pathlib import Path

import pytest
from measure_fixtures import Task, trace_events
from typer.testing import CliRunner

from plancc import api, ir
from plancc.cli.app import app
from plancc.load.inputs import PlanInput
from plancc.measure import trace as tr
from plancc.measure.durations import apply, durations
from plancc.measure.errors import InputError
from plancc.measure.scopes import instances

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
        "a: timed 2 of 4 stages: norm, proj",
        "b: timed 1 of 2 stages: norm",
        "no event of not_in_trace, use_b, use_mm: their stages keep their duration_us",
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
    assert "2 rms_norm tasks over 3 layers that run it: not placed by layer" in found.notes[3]


def test_a_directory_of_traces_is_read_as_measure_reads_it(tmp_path: Path) -> None:
    # A multi-card run: one swimlane per dispatch under rank<r>/d<k>/, each a forward.
    plan = _plan(tmp_path).plan
    assert plan is not None
    one = durations(_trace(tmp_path, _layers(tmp_path)), plan)
    runs = tmp_path / "dfx_outputs"
    for rank in (0, 1):
        where = runs / f"rank{rank}" / "d0"
        where.mkdir(parents=True)
        Path(_trace(tmp_path, _layers(tmp_path))).rename(
            where / "merged_swimlane_20261203_101500.json"
        )
    both = durations(str(runs), plan)
    assert both.by_stage == one.by_stage  # the same spans twice: the same medians
    assert both.notes == one.notes
    (runs / "empty").mkdir()
    with pytest.raises(InputError, match=r"no merged_swimlane_\*\.json under this directory"):
        durations(str(runs / "empty"), plan)


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
    fixed = runner.invoke(app, ["validate", plan, "--fix", "--trace", _trace(tmp_path, tasks)])
    assert fixed.exit_code == 2
    assert "--trace: not with --fix or --diff" in fixed.output
    bad = tmp_path / "bad.json"
    bad.write_text("{}", "utf-8")
    done = runner.invoke(app, ["validate", plan, "--trace", str(bad)])
    assert done.exit_code == 2
    assert 'bad.json: not a Chrome Trace Event file: no "traceEvents" list' in done.output


CHAIN = """\
plancc: 1
model: chain
platform: a2a3
tensors:
  wq_a: {shape: [4096, 1024], dtype: bf16}    # 8.4 MB
  wq_b: {shape: [1024, 32768], dtype: int8}   # 33.6 MB
  wkv: {shape: [4096, 512], dtype: bf16}      # 4.2 MB
  wo: {shape: [8192, 4096], dtype: bf16}      # 67.1 MB
layers:
  attn:
    stages:
      - {name: rms_norm, task: rms_tid, deps: [], kernel: rms}
      - {name: qr_proj, deps: [rms_norm], reads: [wq_a], kernel: qr}
      - {name: q_proj, task: q_tid, deps: [qr_proj], reads: [wq_b], kernel: q}
      - {name: kv_proj, task: kv_tid, deps: [rms_norm], reads: [wkv], kernel: kv}
      - {name: attention, deps: [q_proj, kv_proj], kernel: attn}
      - {name: proj, deps: [attention], reads: [wo], kernel: proj}
"""


def test_a_timed_schedule_overlaps_stages_by_time_not_by_step(tmp_path: Path) -> None:
    # The q chain (qr_proj, q_proj: 60 µs) runs three times as long as kv_proj (20 µs)
    # beside it. By steps, a warm after kv_proj has q_proj alone between it and its
    # consumer; timed, qr_proj is still running when kv_proj finishes: its weights
    # stream while the warm is in flight too.
    plan = tmp_path / "chain.yaml"
    plan.write_text(CHAIN, "utf-8")
    us = {"rms": 5.0, "qr": 30.0, "q": 30.0, "kv": 20.0, "attn": 400.0, "proj": 50.0}
    at = {"rms": 100.0, "qr": 105.0, "q": 135.0, "kv": 105.0, "attn": 165.0, "proj": 565.0}
    tasks = [_task(k, i, at[k], us[k]) for i, k in enumerate(us, start=1)]
    trace = _trace(tmp_path, tasks)
    given = ["--candidate", "attn:kv_proj:wo", "--candidate", "attn:q_proj:wo"]
    runner = CliRunner(env={"NO_COLOR": "1"})
    steps = runner.invoke(app, ["suggest", str(plan), *given])
    timed = runner.invoke(app, ["suggest", str(plan), "--trace", trace, *given])
    assert steps.exit_code == 0, steps.output
    assert timed.exit_code == 0, timed.output
    assert "attn (durations: the swimlane trace)" in timed.output
    assert "trace: attn: timed 6 of 6 stages: rms_norm, qr_proj, q_proj and 3 more\n" in (
        timed.output
    )  # every stage's kernel is in it: nothing else to say
    assert "33.6 MB (50 % of its 67.1 MB) of the layer's own weights stream" in steps.output
    assert "41.9 MB (62 % of its 67.1 MB) of the layer's own weights stream" in timed.output


def test_suggest_says_what_the_trace_gave_no_duration_for() -> None:
    root = Path(__file__).resolve().parent.parent
    trace = root / "examples/measure/dfx_outputs/merged_swimlane_20261203_101500.json"
    plan = root / "plans/deepseek_v4_flash.yaml"
    done = CliRunner(env={"NO_COLOR": "1"}).invoke(
        app, ["suggest", str(plan), "--layer", "csa", "--top", "1", "--trace", str(trace)]
    )
    assert done.exit_code == 0, done.output
    assert done.output.startswith("csa (durations: the swimlane trace)")  # proj_a, proj_b
    # Of the kind asked for only: 14 of csa's kernels, not the 20 of every kind's.
    assert (
        "trace: no event of csa_cache_writeback, csa_rope_step, hc_post and 11 more: their "
        "stages keep their duration_us\n"
    ) in done.output
    assert "trace: csa: timed 2 of 20 stages: proj_a, proj_b\n" in done.output
    assert "trace: swa:" not in done.output
    assert "trace: hca:" not in done.output
    every = CliRunner(env={"NO_COLOR": "1"}).invoke(
        app, ["suggest", str(plan), "--top", "1", "--trace", str(trace)]
    )
    assert "trace: swa: timed 2 of 15 stages: proj_a, proj_b\n" in every.output
    assert "hc_post and 17 more: their" in every.output
    # The directory `plancc measure --trace` takes: the same swimlane, the same output.
    folder = CliRunner(env={"NO_COLOR": "1"}).invoke(
        app, ["suggest", str(plan), "--layer", "csa", "--top", "1", "--trace", str(trace.parent)]
    )
    assert (folder.exit_code, folder.output) == (0, done.output)


# -- streamed: what `--trace` keeps is what it reports ---------------------------------------


def _reference(path: str, plan: ir.Plan) -> dict[tuple[str, str], float]:
    """Each stage's duration as the whole trace reads it (`plancc measure`'s reading: every
    event kept, grouped into instances), by the rule of ``durations``."""
    kernels: dict[str, list[tuple[str, str]]] = {}
    for kind, layer in plan.layers.items():
        for s in layer.stages:
            if s.kernel is not None:
                kernels.setdefault(s.kernel, []).append((kind, s.name))
    found = instances(tr.read(path, tr.name_pattern(kernels)))
    out: dict[tuple[str, str], list[float]] = {}
    for kernel, owners in kernels.items():
        got = [i for i in found.get(kernel, []) if i.problem is None]
        kinds = {k for k, _ in owners}
        layers = [k for k in (plan.forward.kinds if plan.forward else plan.layers) if k in kinds]
        if not got or len(got) % len(layers):
            continue
        size = len(got) // len(layers)
        for j, kind in enumerate(layers):
            run = got[j * size : (j + 1) * size]
            span = max(i.end for i in run) - min(i.start for i in run)
            for k, stage in owners:
                if k == kind:
                    out.setdefault((kind, stage), []).append(span)
    return {k: statistics.median(v) for k, v in out.items()}


def _random_tasks(rng: random.Random) -> list[Task]:
    """The plan's kernels over its three layers, in a shuffled order: SPMD tasks on up to
    eight cores, a stage of two tasks, starts that tie, impossible figures, other tasks."""
    tasks: list[Task] = []
    kernels = ["rms_norm", "proj_mm", "use_mm", "use_b", "other_kernel"]
    for layer in range(3):
        t0 = 100.0 + 1000.0 * layer
        for kernel in kernels:
            for _ in range(rng.choice((1, 1, 2))):
                start = t0 + rng.choice((10.0, 10.0, 20.0, rng.uniform(0, 500)))
                us = rng.choice((5.0, rng.uniform(0.5, 80)))
                cores = tuple(rng.sample(range(48), rng.choice((1, 2, 4, 8))))
                if rng.random() < 0.05:
                    us = -us  # impossible: flagged, never a figure
                tasks.append(_task(kernel, len(tasks) + 1, start, us, cores))
    rng.shuffle(tasks)
    return tasks


@pytest.mark.parametrize("seed", range(40))
def test_the_streamed_durations_are_those_of_the_whole_trace(tmp_path: Path, seed: int) -> None:
    plan = _plan(tmp_path).plan
    assert plan is not None
    trace = _trace(tmp_path, _random_tasks(random.Random(seed)))
    assert durations(trace, plan).by_stage == pytest.approx(_reference(trace, plan))


def test_a_task_is_kept_once_whatever_its_events(tmp_path: Path) -> None:
    """Eight cores' events of a task, and its Scheduler View twins: one entry of four
    figures; the other kernels' tasks none."""
    tasks = [_task("proj_mm", n, 100.0 * n, 5.0, tuple(range(8))) for n in range(1, 51)]
    tasks += [_task("other_kernel", n, 100.0 * n, 5.0) for n in range(51, 101)]
    kept = tr.spans(_trace(tmp_path, tasks), tr.name_pattern(["proj_mm", "rms_norm"]))
    assert kept.total == 4 + 8 * 2 + (50 * 8 + 50) * 2  # processes, lanes, events
    assert {k: len(v) for k, v in kept.kernels.items()} == {"proj_mm": 50}
    assert all(len(v) == 4 for v in kept.kernels["proj_mm"].values())

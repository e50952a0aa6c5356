"""Plans with thousands of mistakes stay cheap: no check is quadratic in them."""

from __future__ import annotations

import bisect
import gc
import sys
from collections import Counter
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from plancc import ir
from plancc.api import validate_paths
from plancc.facts.timeline import Timeline, bisect_exact, decimal
from plancc.tables.platforms import PLATFORMS
from tests import bench_plans

ROOT = Path(__file__).resolve().parent.parent


def test_did_you_mean_is_offered_for_the_first_hundred_unknown_names(
    write_plan: Callable[..., Path],
) -> None:
    # Each hint scans every candidate name; past 100 the hint is dropped, so
    # 5,000 typos against 5,000 tensors do not cost 25 million comparisons.
    n = 150
    lines = ["plancc: 1", "model: m", "platform: a2a3", "tensors:"]
    lines += [f"  tensor_{i}: {{shape: [4], dtype: bf16}}" for i in range(n)]
    lines += ["layers:", "  k:", "    stages:"]
    lines += [f"      - {{name: s{i}, reads: [tensr_{i}]}}" for i in range(n)]
    report = validate_paths([str(write_plan("\n".join(lines) + "\n"))])
    unknown = [d for d in report.diagnostics if d.code == "PC010"]
    assert len(unknown) == n
    assert [d.hint is not None for d in unknown] == [True] * 100 + [False] * 50
    assert unknown[0].hint == "did you mean 'tensor_0'?"


def test_many_schema_errors_are_each_reported_once(write_plan: Callable[..., Path]) -> None:
    n = 3000
    text = "plancc: 1\nmodel: m\nplatform: a2a3\nbudget:\n"
    text += "".join(f"  k{i}: 1\n" for i in range(n))
    text += "tensors: {}\nlayers: {k: {stages: [{name: s}]}}\n"
    report = validate_paths([str(write_plan(text))])
    assert [d.code for d in report.diagnostics] == ["PC002"] * n
    assert len({(d.line, d.col) for d in report.diagnostics}) == n


@given(
    st.lists(
        st.one_of(
            st.integers(0, 3),
            st.sampled_from([0.1, 0.2, 0.3, 1e-17, 36.8, 347.0]),
            st.fractions(0, 5, max_denominator=10**18),
        ),
        max_size=30,
    ),
    st.fractions(-1, 40, max_denominator=10**18),
)
def test_the_timeline_bisects_durations_exactly(durations: list[Any], target: Fraction) -> None:
    # PC104 bisects the duration sums through their floats (Fraction compares slowly):
    # the answer is the exact one, also for sums whose floats tie with the target's.
    exact = [Fraction(0)]
    for d in durations:
        exact.append(exact[-1] + (decimal(d) if isinstance(d, float) else Fraction(d)))
    floats = [float(x) for x in exact]
    for t in (target, *exact, *(x + Fraction(1, 10**30) for x in exact)):
        assert bisect_exact(exact, floats, t) == bisect.bisect_right(exact, t)


@given(
    st.lists(st.one_of(st.none(), st.sampled_from([0.0, 0.5, 1.0, 36.8, 100.0])), max_size=12),
    st.integers(1, 10**8),
)
def test_the_latest_landing_anchor_is_the_last_stage_pc107_lets_land(
    durations: list[float | None], warm_bytes: int
) -> None:
    # PC104 and PC107's hint bisect for it, with shortcuts (no estimate when the stage
    # before the consumer has no duration): each answer must be the brute-force one.
    stages = tuple(
        ir.Stage(f"s{i}", i, None, (), 0, False, None, d) for i, d in enumerate(durations)
    )
    plan = SimpleNamespace(tensors={}, platform=PLATFORMS["a2a3"])
    line = Timeline(plan, ir.Layer("k", stages, ()))  # type: ignore[arg-type]
    for first in range(1, len(stages)):  # a consumer comes after an anchor
        lands = [c for c in range(first - 1) if not line.landing(c, first, warm_bytes).fires]
        assert line.latest_landing(first, warm_bytes) == max(lands, default=-1)


def test_the_library_leaves_the_callers_collector_alone(
    write_plan: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    # An editor's worker thread calls the library on every keystroke: the cycle
    # collector's settings are the process's (the console script's), not the library's.
    path = write_plan("plancc: 1\nmodel: m\nplatform: a2a3\ntensors: {}\nlayers: {}\n")

    def interpreter_wide(*args: object) -> None:
        raise AssertionError("the library changed the cycle collector")

    for name in ("disable", "enable", "freeze", "unfreeze", "set_threshold"):
        monkeypatch.setattr(gc, name, interpreter_wide)
    assert validate_paths([str(path)]).results[0].plan is not None


def _calls(run: Callable[[], object], *functions: Any) -> Counter[str]:
    """How many times each of ``functions`` ran during ``run()``, whoever called it and by
    whatever name it was imported (counted by code object, on this thread)."""
    names = {f.__code__: f.__qualname__ for f in functions}
    seen: Counter[str] = Counter()

    def profile(frame: Any, event: str, arg: object) -> None:
        if event == "call" and frame.f_code in names:
            seen[names[frame.f_code]] += 1

    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
    return seen


@pytest.mark.parametrize("command", ["validate", "build"])
def test_one_command_works_out_each_fact_once(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One `validate` or `build` of the Flash plan (three layer kinds) builds each layer
    kind's timeline once, sweeps each L2 peak once and runs the analysis once: the check
    builds the facts and hands them to the rules, the manifest and the summary."""
    from typer.testing import CliRunner

    from plancc.cli.app import app
    from plancc.facts import analysis, facts_of, liveness, timeline

    monkeypatch.chdir(tmp_path)
    args = [command, str(ROOT / "plans" / "deepseek_v4_flash.yaml")]
    args += ["--out", "build"] if command == "build" else []

    def run() -> None:
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.stdout

    counted = _calls(
        run, facts_of, timeline.Timeline.__init__, liveness.layer_peak, analysis.analyse
    )
    assert counted == {"facts_of": 1, "Timeline.__init__": 3, "layer_peak": 3, "analyse": 1}
    if command == "build":
        assert sorted(p.name for p in (tmp_path / "build").iterdir()) == [
            "deepseek_v4_flash_warms.manifest.json",
            "deepseek_v4_flash_warms.py",
        ]


def test_a_clean_plans_positions_are_looked_up_only_when_asked_for(
    write_plan: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    # 80,000 lookups for a plan of 10,000 warms, of which a check that finds nothing
    # needs none: the IR keeps where to look, and looks when a diagnostic asks.
    from plancc import load

    asked: list[object] = []
    real = load.Positions.where  # every lookup: at, key_at, get, in, []

    def spy(self: load.Positions, path: Any) -> Any:
        asked.append(path)
        return real(self, path)

    monkeypatch.setattr(load.Positions, "where", spy)
    counts = []
    for warms in (10, 40):
        asked.clear()
        report = validate_paths([str(write_plan(bench_plans.spread(warms), f"p{warms}.yaml"))])
        assert report.results[0].diagnostics == ()
        counts.append(len(asked))
    assert counts[0] == counts[1]  # none per warm, stage or tensor


_SPOILED = """\
plancc: 1
model: m
platform: a2a3
tensors:
  bad: {shape: [2], dtype: bf16, extra: 1}
  w1: {shape: [64, 64], dtype: bf16}
  w2: {shape: [64, 64], dtype: bf16}
layers:
  k:
    stages:
      - {name: a, task: a_tid}
      - 7
      - {name: g}
      - {name: c, reads: [w1, w2]}
    warms:
      - {name: broken, after: a}
      - {name: w, after: a, tensors: [w1, {tensor: w2, flat: [4096]}]}
"""


@pytest.mark.parametrize("source", ["flash", "spoiled"])
def test_the_irs_positions_are_where_the_document_has_them(
    source: str, write_plan: Callable[..., Path]
) -> None:
    # "spoiled": a schema error drops a stage and a warm, so the IR's indices are not
    # the document's (Validated.doc_path maps them back).
    path = ROOT / "plans" / "deepseek_v4_flash.yaml" if source == "flash" else write_plan(_SPOILED)
    result = validate_paths([str(path)]).results[0]
    assert result.plan is not None
    assert result.doc is not None
    doc = result.doc
    checked = 0
    for kind, layer in result.plan.layers.items():
        for stage in layer.stages:
            standin = stage.name.startswith("<stage ")  # for an entry the schema refused
            want = None if standin else doc.at(("layers", kind, "stages", stage.index))
            assert stage.pos == want
        written = doc.data["layers"][kind]["warms"]
        for warm in layer.warms:
            i = next(i for i, w in enumerate(written) if w.get("name") == warm.name)
            path = ("layers", kind, "warms", i)
            assert warm.name_pos == doc.at((*path, "name"))
            assert warm.after_pos == doc.at((*path, "after"))
            assert warm.tensors_pos == doc.at((*path, "tensors"))
            for j, entry in enumerate(warm.entries):
                item = written[i]["tensors"][j]
                at = (
                    (*path, "tensors", j)
                    if isinstance(item, str)
                    else (*path, "tensors", j, "tensor")
                )
                assert entry.pos == doc.at(at)
                checked += 1
    for name, tensor in result.plan.tensors.items():
        if tensor.flat is None:
            continue  # a dynamic dim
        flat = ("tensors", name, "flat")
        assert tensor.flat.pos == (
            doc.at(flat) if tensor.flat.declared else doc.key_at(("tensors", name))
        )
    assert checked >= 2


def test_a_dropped_plan_is_freed_with_the_facts_of_its_check() -> None:
    # The check's facts are held by its result, not by a global that would keep the last
    # plan, its document and its IR alive; and nothing in them (nor in the plan) refers
    # back to them, so dropping the result frees both at once, without the collector.
    import weakref

    report = validate_paths([str(ROOT / "plans" / "deepseek_v4_flash.yaml")])
    plan, facts = report.results[0].plan, report.results[0].facts
    assert plan is not None
    assert facts is not None
    assert facts.plan is plan
    assert len(facts.timelines) == 3
    gone = weakref.ref(plan), weakref.ref(facts)
    gc.disable()
    try:
        del report, plan, facts
        assert [ref() for ref in gone] == [None, None]
    finally:
        gc.enable()


def test_a_failed_rule_import_leaves_discovery_to_try_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import importlib

    from plancc import rules

    def broken(name: str) -> Any:
        raise ImportError(name)

    monkeypatch.setattr(rules, "_discovered", False)
    monkeypatch.setattr(importlib, "import_module", broken)
    with pytest.raises(ImportError):
        rules.discover()
    assert rules._discovered is False
    monkeypatch.undo()
    assert rules.discover()


def test_the_rules_run_in_the_order_of_their_modules() -> None:
    # A module the rules share (timeline, placed) defines none, so importing it
    # never registers another module's rules early.
    from plancc.rules import discover

    modules = [r.check.__module__ for r in discover()]
    assert modules == sorted(modules)
    assert "plancc.rules.later_anchor" in modules

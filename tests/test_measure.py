"""`plancc measure` reproduces the seed's figures from inputs in PyPTO's exact forms."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import measure_example as ex
import measure_fixtures as fx
import pytest
from jsonschema import Draft202012Validator
from typer.testing import CliRunner

from plancc.cli.app import app

ROOT = Path(__file__).resolve().parent.parent
FLASH = ROOT / "tests" / "golden" / "deepseek_v4_flash_warms.manifest.json"
KINDS: list[str] = json.loads(FLASH.read_text("utf-8"))["forward"]["kinds"]
SCHEMA = json.loads((ROOT / "schemas" / "measure.schema.json").read_text("utf-8"))
GOLDEN = ROOT / "tests" / "data" / "measure"
MB = 1_000_000


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["measure", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def measure_json(*args: str) -> tuple[int, dict[str, Any]]:
    code, out, err = run(*args, "--format", "json")
    assert code in (0, 1), err
    data: dict[str, Any] = json.loads(out)
    Draft202012Validator(SCHEMA).validate(data)
    return code, data


def logs(
    tmp: Path, base: dict[int, list[float]], warm: dict[int, list[float]], **kw: Any
) -> list[str]:
    b = tmp / "bench-nowarm.log"
    w = tmp / "bench-warm.log"
    b.write_text(fx.bench_log(base), encoding="utf-8")
    w.write_text(fx.bench_log(warm, **kw), encoding="utf-8")
    return ["--baseline", str(b), "--warm", str(w)]


def flash_trace(tmp: Path, **kw: Any) -> list[str]:
    fx.write_trace(
        tmp / "dfx" / "merged_swimlane_20261203_101500.json", fx.forward_tasks(KINDS, **kw)
    )
    return ["--trace", str(tmp / "dfx")]


EP2 = (
    {41237: fx.spread(34423.7), 41238: fx.spread(34461.3)},
    {41301: fx.spread(33424.2), 41302: fx.spread(33452.9)},
)


# -- the wall time and the verdict ------------------------------------------------------


def test_ep2_fast_rank_p50_delta_is_the_seeds_and_ships(tmp_path: Path) -> None:
    code, out, _ = run("--manifest", str(FLASH), *logs(tmp_path, *EP2))
    assert code == 0
    assert "Δ fastest rank (41237 -> 41301): p50 −999.5 µs (−2.90 %)" in out
    assert "  rank 41237 *                 100   34403.9   34423.7" in out
    assert "verdict: ship: bootstrap 95 % interval" in out


def test_ep8_fast_rank_is_the_smallest_median_of_eight(tmp_path: Path) -> None:
    base = {50000 + i: fx.spread(35685.9 + 13.1 * ((i * 5) % 8)) for i in range(8)}
    warm = {51000 + i: fx.spread(34711.7 + 9.7 * ((i * 3) % 8)) for i in range(8)}
    code, data = measure_json("--manifest", str(FLASH), *logs(tmp_path, base, warm))
    assert code == 0
    assert data["baseline"]["fastest_rank"] == "50000"
    assert data["warm"]["fastest_rank"] == "51000"
    p50 = data["delta"]["fastest_rank"]["p50"]
    assert f"{p50['pct']:.2f}" == "-2.73"
    assert round(p50["us"], 1) == -974.2
    _, out, _ = run("--manifest", str(FLASH), *logs(tmp_path, base, warm))
    assert "p50 −974.2 µs (−2.73 %)" in out


def test_heavy_tail_is_a_warning_on_a_ship(tmp_path: Path) -> None:
    # The seed's MoE case: the median gains 1.63 %, the mean keeps only 1.04 %.
    base = fx.spread(34575.0)
    warm = fx.spread(34011.4, step=0.4)
    warm = [*warm[:90], *(x + 2040.0 for x in warm[90:])]
    code, out, _ = run("--manifest", str(FLASH), *logs(tmp_path, {1: base}, {2: warm}))
    assert code == 0
    assert "p50 −563.6 µs (−1.63 %), mean −359.6 µs (−1.04 %)" in out
    assert "  warning: heavy tail: the mean keeps −1.04 % of the median's −1.63 %" in out


def test_no_gain_is_no_ship_and_overlap_is_inconclusive(tmp_path: Path) -> None:
    code, data = measure_json(
        "--manifest", str(FLASH), *logs(tmp_path, {1: fx.spread(34000.0)}, {2: fx.spread(34100.0)})
    )
    assert (code, data["verdict"]["decision"]) == (1, "no-ship")
    code, data = measure_json(
        "--manifest",
        str(FLASH),
        *logs(tmp_path, {1: fx.spread(34000.0, step=20)}, {2: fx.spread(33999.0, step=20)}),
    )
    assert (code, data["verdict"]["decision"]) == (1, "inconclusive")
    lo, hi = data["verdict"]["interval_us"]
    assert lo < 0 < hi


def test_warmup_20_warns_with_the_seeds_spike_rates_and_counts_the_spikes(tmp_path: Path) -> None:
    warm = fx.spread(33424.2, n=300, step=0.1)
    for i in range(0, 300, 43)[:7]:  # 7 of 300 rounds stall ~250 µs: 2.3 %
        warm[i] += 250.0
    code, out, _ = run(
        "--manifest",
        str(FLASH),
        *logs(tmp_path, {1: fx.spread(34423.7, n=300, step=0.1)}, {2: warm}, warmup=20),
    )
    assert "warmup: 20 rounds × 86 warm issues = 1,720 warm issues (seed: at least 43,000)" in out
    assert (
        "  warning: warmup 20 rounds × 86 warm issues = 1,720 warm issues, below the seed's "
        "500 × 86 = 43,000: the SDMA start-up phase (a few percent of warm issues stalling "
        "~200-300 µs) is charged to the warm; seed spike rates 2.3 % at warmup 20, 1.3 % at "
        "100, 0.4 % at 500; measure with PYPTO_BENCH_WARMUP=500"
    ) in out
    assert (
        "  spikes (a round more than 200 µs above its rank's median): "
        "baseline 0 of 300 rounds (0.0 %), warm 7 of 300 rounds (2.3 %)"
    ) in out
    # Run at another warmup than the baseline: warned above, and no verdict.
    assert code == 1
    assert f"  mismatch: {tmp_path / 'bench-warm.log'}:3: the baseline ran at warmup 500 (" in out


def test_without_raw_samples_the_missing_figures_are_named_not_invented(tmp_path: Path) -> None:
    base, warm = tmp_path / "b.log", tmp_path / "w.log"
    base.write_text(fx.bench_log(EP2[0], raw=False), encoding="utf-8")
    warm.write_text(fx.bench_log(EP2[1], raw=False), encoding="utf-8")
    code, data = measure_json(
        "--manifest", str(FLASH), "--baseline", str(base), "--warm", str(warm)
    )
    assert code == 1
    assert data["verdict"]["decision"] == "inconclusive"
    assert data["verdict"]["interval_us"] is None
    assert "PYPTO_BENCH_RAW=1" in data["verdict"]["reason"]
    fast = data["baseline"]["ranks"][0]
    assert fast["source"] == "log"
    assert fast["figures"]["p90"] is None
    assert fast["figures"]["p50"] == 34423.7  # the rank line's median, as printed
    assert "p90 (needs PYPTO_BENCH_RAW=1)" in data["baseline"]["missing"]
    assert data["warmup"]["warm_issues"] is None
    assert data["delta"]["fastest_rank"]["p90"] is None


def test_fallback_flattened_flags_the_per_rank_figures(tmp_path: Path) -> None:
    code, out, _ = run("--manifest", str(FLASH), *logs(tmp_path, *EP2, flattened=True))
    assert code == 1
    assert "fallback_flattened=1: per-rank figures unreliable" in out
    assert "verdict: inconclusive: fallback_flattened=1 in" in out


def test_the_same_inputs_give_the_same_bytes(tmp_path: Path) -> None:
    args = ["--manifest", str(FLASH), *logs(tmp_path, *EP2), "--format", "json"]
    assert run(*args)[1] == run(*args)[1]


# -- the warm scopes ------------------------------------------------------------------------


def test_one_scope_one_stream_is_285_gb_s_and_lands_before_proj_a(tmp_path: Path) -> None:
    code, out, _ = run("--manifest", str(FLASH), *logs(tmp_path, *EP2), *flash_trace(tmp_path))
    assert code == 0
    assert (
        "  prefetch_o_proj_w_csa (csa, name_hint prefetch_o_proj_w), 100,663,296 B: 21 of 21 "
        "scopes, kernel p50 353.2 µs, mean 353.2 µs -> 285 GB/s\n"
        "    landed before its consumer proj_a_mm in 21 of 21 layers\n"
    ) in out
    assert "flag:" not in out


def test_a_35_us_warm_of_100_7_mb_is_implausible(tmp_path: Path) -> None:
    code, data = measure_json(
        "--manifest", str(FLASH), *logs(tmp_path, *EP2), *flash_trace(tmp_path, warm_us=35.0)
    )
    csa = data["scopes"][1]
    assert [f["flag"] for f in csa["flags"]] == ["implausible"]
    assert csa["flags"][0]["message"] == (
        "implausible bandwidth: 21 of 21 scopes faster than twice the a2a3 single-stream rate "
        "(570 GB/s), up to 100.7 MB in 35.0 µs = 2.9 TB/s: the weights were still in L2 from "
        "the previous round; the bench loop flatters the warm"
    )
    assert code == 0  # a flag explains; the wall time decides


def test_a_split_transfer_reports_each_bandwidth_and_the_aggregate(tmp_path: Path) -> None:
    # The seed's rule 1: wo_a and wo_b warmed from two scopes on two AIVs at once.
    doc = fx.manifest(
        [
            fx.ManifestWarm(
                "prefetch_wo_a", "csa", {"wo_a": 67_100_000}, consumers=[("proj_a", "proj_a_mm")]
            ),
            fx.ManifestWarm(
                "prefetch_wo_b", "csa", {"wo_b": 33_600_000}, consumers=[("proj_b", "proj_b_mm")]
            ),
        ],
        kinds=["csa"],
    )
    manifest = fx.write_json(tmp_path / "seed.manifest.json", doc)
    tasks = [
        fx.Task("prefetch_wo_b", 5, 21, (24,), 0.0, 0.5, 649.5, 0.0, 649.9),
        fx.Task("prefetch_wo_a", 4, 20, (26,), 108.1, 108.6, 660.7, 107.7, 661.1),
        fx.Task("proj_a_mm", 6, 47, (0,), 700.0, 700.5, 720.0, 699.6, 720.4),
        fx.Task("proj_b_mm", 7, 48, (1,), 730.0, 730.5, 750.0, 729.6, 750.4),
    ]
    trace = fx.write_trace(tmp_path / "merged_swimlane_20261203_101500.json", tasks)
    _, out, _ = run("--manifest", str(manifest), *logs(tmp_path, *EP2), "--trace", str(trace))
    assert "67,100,000 B: 1 of 1 scopes, kernel p50 552.1 µs, mean 552.1 µs -> 122 GB/s" in out
    assert "33,600,000 B: 1 of 1 scopes, kernel p50 649.0 µs, mean 649.0 µs -> 52 GB/s" in out
    assert (
        "  flag: split transfer: prefetch_wo_a, prefetch_wo_b overlap in time on 2 cores in 1 of "
        "1 layers: prefetch_wo_a 122 GB/s + prefetch_wo_b 52 GB/s, aggregate 100.7 MB / 660.2 µs "
        "= 153 GB/s against 285 GB/s for one stream: one scope, one context\n"
    ) in out


def test_a_late_warm_is_counted_per_layer(tmp_path: Path) -> None:
    late = [i for i, k in enumerate(KINDS) if k == "csa"][:3]
    _, data = measure_json(
        "--manifest", str(FLASH), *logs(tmp_path, *EP2), *flash_trace(tmp_path, late=late)
    )
    csa = data["scopes"][1]
    assert csa["landed"] == {
        "consumer": "proj_a_mm",
        "before": 18,
        "of": 21,
        "late": [{"layer": f"{i} (csa)", "by_us": pytest.approx(12.0)} for i in late],
    }
    assert csa["flags"][0]["message"] == (
        "late warm: landed before its consumer proj_a_mm in 18 of 21 layers; late in layer "
        f"{late[0]} (csa) by 12.0 µs, layer {late[1]} (csa) by 12.0 µs, layer {late[2]} (csa) "
        "by 12.0 µs; what lands late competes with the layer's own reads"
    )


def test_a_scope_missing_in_some_layers_is_flagged_in_its_layer(tmp_path: Path) -> None:
    # One of 43 scopes removed: PyPTO's _<N> names place the other 42 (never "42 of 2").
    _, out, _ = run(
        "--manifest", str(FLASH), *logs(tmp_path, *EP2), *flash_trace(tmp_path, missing=[17])
    )
    trace = tmp_path / "dfx" / "merged_swimlane_20261203_101500.json"
    assert "100,663,296 B: 2 of 2 scopes, kernel p50 353.2 µs" in out
    assert "100,663,296 B: 21 of 21 scopes, kernel p50 353.2 µs" in out
    assert (
        "100,663,296 B: 19 of 20 scopes, kernel p50 353.2 µs, mean 353.2 µs -> 285 GB/s\n"
        "    landed before its consumer proj_a_mm in 19 of 19 layers\n"
        "    flag: missing scope: no prefetch_o_proj_w event for layer 17 (hca) in "
        f"{trace}: the transfer never happened there\n"
    ) in out
    assert "unattributed" not in out


def test_scopes_without_a_layer_number_or_an_anchor_are_unattributed_not_credited_to_each_warm(
    tmp_path: Path,
) -> None:
    # Names without _<N> and scopes without an anchor edge are placed by order only when
    # the counts agree.
    _, data = measure_json(
        "--manifest",
        str(FLASH),
        *logs(tmp_path, *EP2),
        *flash_trace(tmp_path, missing=[5, 6], suffix=False, anchor=False),
    )
    assert [(s["instances"], s["expected"], s["kernel_us"]) for s in data["scopes"]] == [
        (0, 2, None),
        (0, 21, None),
        (0, 20, None),
    ]
    assert all(s["flags"] == [] and s["landed"] is None for s in data["scopes"])
    [u] = data["unattributed"]
    assert (u["scopes"], u["kernel_us"]["p50"]) == (41, pytest.approx(353.2))
    assert u["reason"] == (
        "41 scopes named prefetch_o_proj_w, the forward issues 43, and their names carry no "
        "_<N> to place them by"
    )
    _, out, _ = run(
        "--manifest",
        str(FLASH),
        *logs(tmp_path, *EP2),
        *flash_trace(tmp_path, missing=[5, 6], suffix=False, anchor=False),
    )
    assert (
        "  unattributed: 41 prefetch_o_proj_w scopes in "
        f"{tmp_path / 'dfx' / 'merged_swimlane_20261203_101500.json'}, kernel p50 353.2 µs, "
        "credited to none of prefetch_o_proj_w_swa, prefetch_o_proj_w_csa, "
        "prefetch_o_proj_w_hca: 41 scopes named"
    ) in out


def test_scopes_are_placed_by_the_anchor_task_they_waited_on(tmp_path: Path) -> None:
    # One scope of 43 missing, the names without _<N>: each of the 42 is placed at the
    # layer of its anchor (the q projection's k-th instance is the k-th layer), and the
    # missing layer is flagged at its index, not the last one.
    _, data = measure_json(
        "--manifest",
        str(FLASH),
        *logs(tmp_path, *EP2),
        *flash_trace(tmp_path, missing=[5], suffix=False),
    )
    assert KINDS[5] == "hca"
    assert [(s["instances"], s["expected"]) for s in data["scopes"]] == [(2, 2), (21, 21), (19, 20)]
    assert data["unattributed"] == []
    (flag,) = [f for s in data["scopes"] for f in s["flags"] if f["flag"] == "missing"]
    assert "no prefetch_o_proj_w event for layer 5 (hca)" in flag["message"]


def test_without_suffixes_a_complete_trace_is_placed_by_order(tmp_path: Path) -> None:
    _, data = measure_json(
        "--manifest", str(FLASH), *logs(tmp_path, *EP2), *flash_trace(tmp_path, suffix=False)
    )
    assert [(s["instances"], s["expected"]) for s in data["scopes"]] == [(2, 2), (21, 21), (20, 20)]
    assert data["unattributed"] == []


def test_a_single_scope_is_counted_once_not_three_times(tmp_path: Path) -> None:
    trace = fx.write_trace(tmp_path / "t.json", fx.example_tasks())
    _, data = measure_json("--manifest", str(FLASH), *logs(tmp_path, *EP2), "--trace", str(trace))
    assert [s["instances"] for s in data["scopes"]] == [0, 0, 0]
    assert [(u["scopes"], u["warms"]) for u in data["unattributed"]] == [
        (1, ["prefetch_o_proj_w_swa", "prefetch_o_proj_w_csa", "prefetch_o_proj_w_hca"])
    ]


def test_a_trace_without_the_scope_is_missing_it(tmp_path: Path) -> None:
    args = ["--manifest", str(FLASH), *logs(tmp_path, *EP2), *flash_trace(tmp_path)]
    empty = fx.write_trace(
        tmp_path / "dfx" / "rank1" / "d0" / "merged_swimlane_20261203_101501.json",
        [fx.Task("proj_a_mm", 1, 47, (0,), 0.0, 0.5, 21.0, 0.0, 21.4)],
    )
    _, data = measure_json(*args)
    assert data["traces"][-1] == str(empty)
    flag = data["scopes"][0]["flags"][0]
    assert flag == {
        "flag": "missing",
        "message": (
            f"missing scope: no prefetch_o_proj_w event in {empty}: the transfer never happened"
        ),
    }


def test_the_example_trace_matches_spmd_and_ring_forms(tmp_path: Path) -> None:
    doc = fx.manifest(
        [
            fx.ManifestWarm(
                "w",
                "k",
                {"t": 10 * MB},
                name_hint="qproj_dequant_rms_nope_rope",
                consumers=[("s", "proj_a_mm")],
            )
        ]
    )
    manifest = fx.write_json(tmp_path / "m.json", doc)
    tasks = fx.example_tasks()
    tasks[2] = fx.Task("proj_a_mm_3", 18, 47, (0,), 10.5, 11.0, 21.0, 10.0, 21.4, (16,), ring=2)
    trace = fx.write_trace(tmp_path / "t.json", tasks)
    _, data = measure_json(
        "--manifest", str(manifest), *logs(tmp_path, *EP2), "--trace", str(trace)
    )
    scope = data["scopes"][0]
    assert scope["instances"] == 1  # one SPMD task on two cores
    assert scope["kernel_us"]["p50"] == pytest.approx(7.0)
    assert scope["landed"] == {"consumer": "proj_a_mm", "before": 1, "of": 1, "late": []}


# -- stage windows ----------------------------------------------------------------------


def test_stage_windows_against_the_standalone_bound(tmp_path: Path) -> None:
    args = logs(tmp_path, *EP2)
    (tmp_path / "nowarm.err").write_text(fx.slot_lines(41238, [374.2, 376.0]), encoding="utf-8")
    (tmp_path / "warm.err").write_text(fx.slot_lines(41302, [351.0, 355.4]), encoding="utf-8")
    code, out, err = run(
        "--manifest",
        str(FLASH),
        *args,
        "--slots",
        str(tmp_path / "warm.err"),
        "--slots",
        f"baseline={tmp_path / 'nowarm.err'}",
        "--window",
        "csa=3:4",
        "--standalone",
        "csa=347.0",
    )
    assert code == 0, err
    assert out.endswith(
        "stage windows (finish-to-finish between two task-timing slots, µs)\n"
        "  csa (slots 3→4): with the warm 351–355 µs, without 374–376 µs, standalone 347.0 µs\n"
    )


def test_old_runtime_slot_names_and_slot_lines_inside_the_log(tmp_path: Path) -> None:
    args = logs(tmp_path, *EP2)
    warm = Path(args[3])
    old = fx.strace(41301, 1, 3, 1000, 500) + "\n" + fx.strace(41301, 1, 5, 2000, 353_700, old=True)
    warm.write_text(warm.read_text("utf-8") + old + "\n", encoding="utf-8")
    _, data = measure_json("--manifest", str(FLASH), *args)
    assert data["stage_windows"] == [
        {
            "window": "3:5",
            "slots": [3, 5],
            "baseline": None,
            "warm": {"min": 354.2, "max": 354.2, "p50": 354.2, "count": 1},
            "standalone_us": None,
            "note": None,
        }
    ]


# -- the golden reports -------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_golden_report(fmt: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    args = ex.example_args("tests/golden/deepseek_v4_flash_warms.manifest.json")
    result = CliRunner().invoke(app, [*args, "--format", fmt])
    assert result.exit_code == 0, result.stderr
    suffix = "txt" if fmt == "text" else "md"
    assert result.stdout == (GOLDEN / f"report.{suffix}").read_text("utf-8"), "run `make golden`"


def test_the_shipped_example_is_what_the_fixture_writer_writes() -> None:
    for name, text in ex.example_files(KINDS).items():
        assert (ex.EXAMPLE / name).read_text("utf-8") == text, f"{name}: run `make golden`"
        # Each says it is generated from the seed's figures, not measured.
        said = text.splitlines()[0] if name.endswith(".log") else json.loads(text)["metadata"]
        assert "generated by tests/measure_example.py" in str(said), name
        assert "not measured on a2a3" in str(said), name


def test_output_file_gets_the_report_and_stdout_nothing(tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    code, stdout, _ = run(
        "--manifest", str(FLASH), *logs(tmp_path, *EP2), "-f", "json", "-o", str(out)
    )
    assert (code, stdout) == (0, "")
    Draft202012Validator(SCHEMA).validate(json.loads(out.read_text("utf-8")))


def test_the_schema_is_valid_draft_2020_12() -> None:
    Draft202012Validator.check_schema(SCHEMA)


def test_heavy_tail_by_the_p90_and_no_warning_without_a_gain() -> None:
    from plancc.measure.verdict import heavy_tail
    from plancc.measure.wall import Delta

    p90_loses = {"p50": Delta(-500, -1.5), "mean": Delta(-450, -1.4), "p90": Delta(10, 0.03)}
    assert (
        heavy_tail(p90_loses) == "the p90 does not gain (+0.03 %) while the median does (−1.50 %)"
    )
    even = {"p50": Delta(-500, -1.5), "mean": Delta(-450, -1.4), "p90": Delta(-400, -1.2)}
    assert heavy_tail(even) is None
    loses = {"p50": Delta(500, 1.5), "mean": Delta(10, 0.1), "p90": None}
    assert heavy_tail(loses) is None


@pytest.mark.parametrize(
    ("bytes_per_us", "shown"),
    [
        (285_000.0, "285 GB/s"),
        (999_499.0, "999 GB/s"),
        (999_500.0, "1.0 TB/s"),
        (2_876_094.0, "2.9 TB/s"),
    ],
)
def test_bandwidth_is_printed_as_the_seed_prints_it(bytes_per_us: float, shown: str) -> None:
    from plancc.measure.units import bandwidth

    assert bandwidth(bytes_per_us) == shown


# -- `plancc report --measure`: only this plan's build ----------------------------------------


def test_report_shows_a_measurement_only_of_this_plans_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    build = CliRunner().invoke(
        app, ["build", "plans/deepseek_v4_flash.yaml", "--out", str(tmp_path / "b")]
    )
    assert build.exit_code == 0, build.stderr
    manifest = tmp_path / "b" / "deepseek_v4_flash_warms.manifest.json"
    result = tmp_path / "m.json"
    code, _, err = run(
        "--manifest", str(manifest), *logs(tmp_path, *EP2), "-f", "json", "-o", str(result)
    )
    assert code == 0, err

    def report(plan: str) -> tuple[int, str, str]:
        out = tmp_path / "r.html"
        r = CliRunner().invoke(app, ["report", plan, "--measure", str(result), "-o", str(out)])
        return r.exit_code, r.stderr, out.read_text("utf-8") if r.exit_code != 2 else ""

    code, _, html = report("plans/deepseek_v4_flash.yaml")
    assert code == 0
    assert "<strong>Verdict:</strong> ship: bootstrap 95 % interval" in html

    shutil.copytree(ROOT / "plans", tmp_path / "plans")  # the plan beside its config
    edited = tmp_path / "plans" / "deepseek_v4_flash.yaml"
    edited.write_text(edited.read_text("utf-8") + "# tuned\n", "utf-8")
    code, _, html = report(str(edited))
    assert code == 0
    assert (
        "<strong>Verdict:</strong> measured on another build of this plan (plan sha256 "
    ) in html
    assert "its figures may not hold for the plan drawn here. Its verdict: ship: " in html

    code, err, _ = report("plans/deepseek_v4_pro.yaml")
    assert (code, err) == (
        2,
        f"plancc: {result}: measures the build of model deepseek_v4_flash, not this plan's "
        "(deepseek_v4_pro): give the measurement of this plan's build\n",
    )


def test_report_notes_a_measurement_that_names_no_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    result = tmp_path / "m.json"
    result.write_text(json.dumps({"verdict": {"decision": "ship", "reason": "by hand"}}), "utf-8")
    out = tmp_path / "r.html"
    r = CliRunner().invoke(
        app, ["report", "plans/deepseek_v4_flash.yaml", "--measure", str(result), "-o", str(out)]
    )
    assert r.exit_code == 0, r.stderr
    assert (
        "<li>the measurement does not name the build it measured (manifest.model and "
        "manifest.plan_sha256 of `plancc measure`): make sure it is this plan&#39;s</li>"
    ) in out.read_text("utf-8")


@pytest.mark.parametrize("n", [7, 100, 101])
def test_the_exact_median_bootstrap_gives_the_classical_interval(n: int) -> None:
    """Each resample's median drawn from its exact distribution (O(1)) against drawing
    and sorting every resample: the same interval, within the precision it states."""
    import math
    import random
    import statistics

    from plancc.measure.stats import bootstrap_median_delta

    g = random.Random(n)
    base = [round(g.gauss(100, 5), 1) for _ in range(n)]
    warm = [round(g.gauss(98, 5), 1) for _ in range(n)]
    fast = bootstrap_median_delta(base, warm)
    rng = random.Random(1)
    deltas = sorted(
        statistics.median(rng.choices(warm, k=n)) - statistics.median(rng.choices(base, k=n))
        for _ in range(4000)
    )
    lo, hi = deltas[math.floor(0.025 * 4000)], deltas[math.ceil(0.975 * 4000) - 1]
    assert abs(fast.lo - lo) <= fast.precision + 0.1
    assert abs(fast.hi - hi) <= fast.precision + 0.1


def test_a_lone_scope_whose_warms_share_their_bytes_gets_its_figures(tmp_path: Path) -> None:
    # A single-layer test's trace: one scope, no _<N>, its layer unknown; the three Flash
    # warms sharing its hint all move 100.7 MB, so its bandwidth is the same whichever.
    trace = tmp_path / "dfx" / "merged_swimlane_20261203_101500.json"
    fx.write_trace(trace, fx.forward_tasks(["csa"], warm_us=35.0, suffix=False))
    _, data = measure_json("--manifest", str(FLASH), "--trace", str(trace))
    [u] = data["unattributed"]
    assert (u["scopes"], u["bytes"]) == (1, 100663296)
    assert u["gbps"] == pytest.approx(100663296 / 35.0 / 1000)
    assert [f["flag"] for f in u["flags"]] == ["implausible"]
    _, out, _ = run("--manifest", str(FLASH), "--trace", str(trace))
    assert "kernel p50 35.0 µs -> 2.9 TB/s, credited to none of" in out
    assert "    flag: implausible bandwidth: 1 of 1 scopes faster than twice" in out


# -- cross-layer and guarded warms (issue 43) ------------------------------------------


def _forms_manifest(tmp: Path, **warm: Any) -> Path:
    w = fx.ManifestWarm(
        "prefetch_next_qkv",
        "k",
        {"wq_a": 8 * MB, "wkv": 4 * MB},
        consumers=[("qr_proj", "qr_proj_mm")],
        **warm,
    )
    return fx.write_json(tmp / "build" / "seed_warms.manifest.json", fx.manifest([w], ["k"] * 8))


def _forms_trace(tmp: Path, **kw: Any) -> list[str]:
    fx.write_trace(
        tmp / "dfx" / "merged_swimlane_20261203_101500.json", fx.next_layer_tasks(8, **kw)
    )
    return ["--trace", str(tmp / "dfx")]


def test_a_cross_layer_warm_lands_for_the_next_layers_consumer(tmp_path: Path) -> None:
    # Issued in 7 of 8 layers (none in the last), each landing before the next layer's
    # qr_proj_mm: not 8 expected with the last one missing, not paired with its own
    # layer's qr_proj_mm (which ran 650 µs before it was issued).
    manifest = _forms_manifest(tmp_path, next_layer=True)
    _, data = measure_json("--manifest", str(manifest), *_forms_trace(tmp_path, late=[3]))
    (scope,) = data["scopes"]
    assert (scope["instances"], scope["expected"], scope["next_layer"]) == (7, 7, True)
    assert scope["landed"] == {
        "consumer": "qr_proj_mm",
        "before": 6,
        "of": 7,
        "late": [{"layer": "3 (k)", "by_us": pytest.approx(12.0)}],
    }
    assert [f["flag"] for f in scope["flags"]] == ["late"]
    assert data["manifest"]["warms"] == [
        {
            "name": "prefetch_next_qkv",
            "layer": "k",
            "after": ["q_proj"],
            "tensors": ["wq_a", "wkv"],
            "rows": [None, None],
            "next_layer": True,
            "guards": [],
        }
    ]


def test_without_next_layer_the_same_trace_misjudges_it(tmp_path: Path) -> None:
    # The control: read as a warm of one layer, the last layer's scope is missing and every
    # scope is paired with its own layer's consumer, which started before it: late in all.
    manifest = _forms_manifest(tmp_path)
    _, data = measure_json("--manifest", str(manifest), *_forms_trace(tmp_path))
    (scope,) = data["scopes"]
    assert (scope["instances"], scope["expected"]) == (7, 8)
    assert [f["flag"] for f in scope["flags"]] == ["missing", "late"]
    assert scope["landed"]["before"] == 0


def test_a_guarded_warms_absent_scopes_are_not_called_lost(tmp_path: Path) -> None:
    manifest = _forms_manifest(tmp_path, next_layer=True, guards=[("CTX", "<=", 2272)])
    args = ["--manifest", str(manifest), *_forms_trace(tmp_path, skipped=[2, 5])]
    _, data = measure_json(*args)
    (scope,) = data["scopes"]
    trace = tmp_path / "dfx" / "merged_swimlane_20261203_101500.json"
    assert (scope["instances"], scope["expected"], scope["guards"]) == (5, 7, ["CTX <= 2272"])
    assert scope["flags"] == []
    assert scope["notes"] == [
        "not issued: no prefetch_next_qkv event for layers 2 (k), 5 (k) in "
        f"{trace}: its guard CTX <= 2272 skipped it there, or it was lost"
    ]
    _, out, _ = run(*args)
    assert (
        "prefetch_next_qkv (k, name_hint prefetch_next_qkv), 12,000,000 B: 5 of up to 7 scopes"
        in out
    )
    # A second card's trace where the guard skipped it in every layer: noted, not flagged.
    other = fx.write_trace(
        tmp_path / "dfx" / "rank1" / "d0" / "merged_swimlane_20261203_101501.json",
        fx.next_layer_tasks(8, skipped=range(8)),
    )
    _, data = measure_json(*args)
    (scope,) = data["scopes"]
    assert scope["flags"] == []
    assert scope["notes"] == [
        f"not issued: no prefetch_next_qkv event in {other}: its guard CTX <= 2272 skipped it "
        "there, or it was lost",
        "not issued: no prefetch_next_qkv event for layers 2 (k), 5 (k) in "
        f"{trace}: its guard CTX <= 2272 skipped it there, or it was lost",
    ]
    # Only that trace: no scope of any warm, which a run whose guards skipped them all gives.
    code, _, err = run("--manifest", str(manifest), "--trace", str(other))
    assert code == 2
    assert err == (
        f"plancc: {other}: no scope named by the manifest's name_hints (prefetch_next_qkv) in "
        "the Worker View: a trace of another build, or of a run without the warm, or of a run "
        f"whose guards (CTX <= 2272) skipped every warm (manifest {manifest})\n"
    )

"""`plancc report`: the page's content, the command's outputs and exit codes, the golden page."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from plancc.api import PlanResult
from plancc.api import diagnose_plan as _diagnose
from plancc.cli import app
from plancc.inputs import PlanInput
from plancc.liveness import layer_peak
from plancc.report_html import render
from plancc.report_html.facts import facts
from plancc.report_html.layout import MIN_COLUMN, X0, X1, _fit, _timed_widths
from plancc.report_html.measure import parse, read


def diagnose_plan(path: Path, label: str) -> PlanResult:
    """The front end for one plan file, named ``label``."""
    return _diagnose(PlanInput(label, path), path.read_bytes())


ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "report"
FLASH = "plans/deepseek_v4_flash.yaml"
GOLDEN = ROOT / "tests" / "golden" / "deepseek_v4_flash_report.html"


def result(path: Path | str, monkeypatch: pytest.MonkeyPatch | None = None):  # type: ignore[no-untyped-def]
    label = path if isinstance(path, str) else path.relative_to(ROOT).as_posix()
    if monkeypatch is not None:
        monkeypatch.chdir(ROOT)
    return diagnose_plan(ROOT / label, label)


def page(path: Path | str, **kw: object) -> str:
    return render(result(path), **kw)  # type: ignore[arg-type]


def invoke(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(app, list(args), env={"NO_COLOR": "1"})


# -- the golden page -----------------------------------------------------------------------


def test_the_flash_page_is_the_golden_file(monkeypatch: pytest.MonkeyPatch) -> None:
    """`make golden` regenerates it; review its diff like any other change."""
    monkeypatch.chdir(ROOT)
    assert render(diagnose_plan(Path(FLASH), FLASH)) == GOLDEN.read_text("utf-8")


def test_the_same_plan_gives_the_same_bytes() -> None:
    assert page(DATA / "timed.yaml") == page(DATA / "timed.yaml")


def test_the_page_is_self_contained() -> None:
    """No script, and nothing loaded from anywhere: no src, no external link or import."""
    for plan in (FLASH, DATA / "timed.yaml", DATA / "broken.yaml"):
        html = page(plan)
        assert "<script" not in html
        assert not re.search(r"\bsrc=", html)
        assert not re.search(r"(href|xlink:href)=\"(?!#)", html)
        assert "@import" not in html
        assert "url(http" not in html
        assert "@font-face" not in html


# -- what the page shows -------------------------------------------------------------------


def test_header_names_model_platform_l2_peak_and_forward() -> None:
    html = page(FLASH)
    assert "<code>deepseek_v4_flash</code> — warm plan report" in html
    assert (
        "<code>a2a3</code> (the only platform where a warm runs), single-stream SDMA 285 GB/s"
        in html
    )
    assert "201,326,592 B = 192 MiB" in html
    assert "0.75 × L2 = 150,994,944 B" in html
    assert "100,663,296 B = 100.7 MB = 0.50× L2 over the forward" in html
    assert "43 layers · 86 warm issues · 4,328,521,728 B = 4328.5 MB warmed" in html


def test_every_stage_and_warm_is_labelled_in_real_text() -> None:
    html = page(FLASH)
    r = result(FLASH)
    assert r.plan is not None
    for layer in r.plan.layers.values():
        for stage in layer.stages:
            assert re.search(rf"<text [^>]*transform=\"rotate[^>]*>{stage.name}</text>", html)
        for warm in layer.warms:
            assert f'<tspan font-weight="700">{warm.name}</tspan>' in html


def test_a_layer_without_durations_is_drawn_not_to_scale() -> None:
    html = page(FLASH)
    caption = "stages in order (not to scale: equal widths, as not every stage has duration_us)"
    assert html.count(caption) == 3
    assert "No landing estimate: not every stage between q_proj and proj_a has duration_us." in html


def test_sdma_and_streams_stages_are_marked() -> None:
    html = page(FLASH)
    assert html.count('class="stage sdma"') == 6  # moe_dispatch and moe_combine, 3 kinds
    assert html.count('class="stage streams"') == 3
    assert "stage 15 moe_ffn: reads no tensor; streams 427.8 MB" in html


def test_stage_reads_are_named_under_each_stage() -> None:
    html = page(FLASH)
    for name in ("attn_norm_w", "wq_a", "wq_b", "wq_b_scale", "kv_cache", "wo_a", "wo_b"):
        assert re.search(rf'<text class="tiny" [^>]*>{name}</text>', html), name
    # CSA's indexer reads four tensors; a column of 61 px holds 10 characters of 9 px.
    assert re.search(r'<text class="tiny" [^>]*>weights_p…</text>', html)


def test_names_under_a_stage_fit_its_column() -> None:
    assert _fit(["wo_a", "weights_proj"], 61.25) == ("wo_a", "weights_p…")
    assert _fit(["a", "b", "c", "d", "e", "f", "g"], 61.25) == ("a", "b", "c", "d", "+3 more")
    assert _fit(["wo_a"], 18) == ()  # not even four characters: the table has them


def test_stage_reads_are_listed_with_their_bytes() -> None:
    html = page(FLASH)
    assert "<td>wq_a 8.4 MB, wq_b 33.6 MB, wq_b_scale 0.1 MB</td>" in html
    assert "<td>kv_cache dynamic</td>" in html


def test_timed_widths_are_to_scale_with_a_floor() -> None:
    widths = _timed_widths([12, 6, 9, 31, 10, 40, 110, 62, 37, 20.5, 9.5], X1 - X0)
    assert sum(widths) == pytest.approx(X1 - X0)
    assert min(widths) == MIN_COLUMN
    wide = [
        (w, d)
        for w, d in zip(widths, [12, 6, 9, 31, 10, 40, 110, 62, 37, 20.5, 9.5], strict=False)
        if w > MIN_COLUMN
    ]
    ratios = {round(w / d, 6) for w, d in wide}
    assert len(ratios) == 1  # every stage above the floor at one scale


def test_landing_is_plancc_pc107_arithmetic() -> None:
    """The page states what PC107 computes: the same window, rate and share."""
    r = result(DATA / "timed.yaml")
    html = render(r)
    pc107 = next(d for d in r.diagnostics if d.code == "PC107")
    assert "in the 9 µs before 'q_proj', 285 GB/s lands an estimated 6.1 %" in pc107.message
    assert "in the 9 µs before q_proj, 285 GB/s lands 2.6 MB = 6.1 % of 41.9 MB" in html
    assert "cannot land (PC107)" in html
    # wo_a + wo_b after q_proj: 10 + 40 + 110 = 160 µs, 45.6 MB of 100.7 MB: lands in time.
    assert "in the 160 µs before proj_a, 285 GB/s lands 45.6 MB = 45.2 % of 100.7 MB" in html
    assert "all of it after 353.2 µs: lands in time." in html
    assert html.count('class="deadline"') == 2
    assert html.count('class="land0"') == 2
    assert html.count('class="land1"') == 2


def test_occupancy_stacks_add_up_to_liveness() -> None:
    for plan in (FLASH, DATA / "timed.yaml", DATA / "broken.yaml"):
        pf = facts(result(plan))
        for lf in pf.layers:
            peak = layer_peak(lf.layer)
            assert max((sum(row) for row in lf.held), default=0) == peak.bytes
            if peak.stage is not None:
                assert sum(lf.held[peak.stage]) == peak.bytes


def test_occupancy_names_the_peak_against_capacity_and_budget() -> None:
    html = page(FLASH)
    assert "peak 100.7 MB = 0.50× L2 at kv_cache_write (prefetch_o_proj_w_csa)" in html
    assert html.count(">L2 capacity 192 MiB</text>") == 3
    assert html.count(">budget 0.75 × L2 = 144 MiB</text>") == 3


def test_the_forward_strip_colours_each_layer_by_kind() -> None:
    html = page(FLASH)
    assert html.count("<title>layer ") == 43
    assert "<title>layer 2: csa, 2 warm issues</title>" in html
    assert "43 layers · 86 warm issues · 4328.5 MB warmed per forward" in html


# -- diagnostics on the figures ------------------------------------------------------------


def entries(plan: Path | str):  # type: ignore[no-untyped-def]
    return {(e.diagnostic.code, e.status): e for e in facts(result(plan)).entries}


def test_pc104_and_pc107_are_drawn_on_the_stages_they_name() -> None:
    found = entries(DATA / "timed.yaml")
    pc107 = found["PC107", "warning"]  # the window: kv_proj, of warm 1
    assert (pc107.layer, pc107.figure, pc107.stages, pc107.warm) == ("csa", "timeline", (2,), 0)
    pc104 = found["PC104", "allowed"]  # the stage its message names: compressor, of warm 2
    assert "compressor streams 8.4 MB of weights before 'proj_a'" in pc104.diagnostic.message
    assert (pc104.figure, pc104.stages, pc104.warm) == ("timeline", (5,), 1)
    html = page(DATA / "timed.yaml")
    assert html.count('<path class="bracket warning"') == 1
    assert html.count('<path class="bracket allowed"') == 1


def test_pc030_is_drawn_on_the_peak() -> None:
    found = entries(DATA / "broken.yaml")
    pc030 = found["PC030", "error"]
    assert (pc030.layer, pc030.figure, pc030.stages) == ("moe", "occupancy", (1,))
    html = page(DATA / "broken.yaml")
    assert '<a href="#d3" class="badge error">' in html


def test_errors_without_a_rule_are_placed_by_position() -> None:
    found = entries(DATA / "broken.yaml")
    pc010 = found["PC010", "error"]  # an unknown tensor in warm prefetch_o
    assert (pc010.layer, pc010.figure, pc010.warm, pc010.stages) == ("attn", "timeline", 0, ())
    pc002 = found["PC002", "error"]  # on stage sparse_attn's duration
    assert (pc002.layer, pc002.figure, pc002.stages) == ("attn", "timeline", (1,))


def test_every_diagnostic_is_listed_with_its_explain_text() -> None:
    html = page(DATA / "broken.yaml")
    r = result(DATA / "broken.yaml")
    for d in r.diagnostics:
        assert f"<strong>{d.code}</strong>" in html
    assert html.count("<summary><code>plancc explain ") == len(r.diagnostics)
    assert "The warms alive at the same time hold more bytes than L2." in html


def test_allowed_warnings_are_listed_with_their_reasons() -> None:
    html = page(DATA / "timed.yaml")
    assert html.count('class="allowed"><span class="tag">') == 1
    assert (
        '<div class="reason">reason: the compressor&#39;s stream does not keep the pair from '
        "landing (illustrative)</div>"
    ) in html


def test_plan_text_is_escaped(tmp_path: Path) -> None:
    text = (DATA / "timed.yaml").read_text("utf-8")
    text = text.replace("reason: the compressor's", "reason: <script>alert(1)</script> & the")
    plan = tmp_path / "timed.yaml"
    plan.write_text(text, "utf-8")
    html = render(diagnose_plan(plan, "timed.yaml"))
    assert "<script" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; the" in html


# -- the command ---------------------------------------------------------------------------


def copy_plans(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    shutil.copytree(ROOT / "plans", tmp_path / "plans")
    shutil.copytree(DATA, tmp_path / "data")
    monkeypatch.chdir(tmp_path)


def test_report_writes_build_model_report_html(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy_plans(tmp_path, monkeypatch)
    run = invoke("report", FLASH)
    assert run.exit_code == 0, run.output
    assert run.stdout == (
        "plans/deepseek_v4_flash.yaml: 0 errors, 0 warnings -> written: "
        "build/deepseek_v4_flash_report.html\n"
    )
    written = (tmp_path / "build" / "deepseek_v4_flash_report.html").read_text("utf-8")
    assert written == GOLDEN.read_text("utf-8")
    again = invoke("report", FLASH)
    assert "-> unchanged: build/deepseek_v4_flash_report.html" in again.stdout


def test_report_to_a_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    copy_plans(tmp_path, monkeypatch)
    run = invoke("report", "data/timed.yaml", "-o", "out.html")
    assert run.exit_code == 0
    assert run.stdout == "data/timed.yaml: 0 errors, 1 warning -> written: out.html\n"
    assert (tmp_path / "out.html").read_text("utf-8").startswith("<!DOCTYPE html>")


def test_a_broken_plan_still_gets_its_page_and_exit_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy_plans(tmp_path, monkeypatch)
    run = invoke("report", "data/broken.yaml")
    assert run.exit_code == 1
    assert run.stdout == (
        "data/broken.yaml: 3 errors, 2 warnings -> written: build/broken_moe_report.html\n"
    )
    html = (tmp_path / "build" / "broken_moe_report.html").read_text("utf-8")
    assert '<span class="status fail">3 errors</span>' in html
    assert "Layer kind <code>attn</code>" in html
    assert "Layer kind <code>moe</code>" in html


def test_an_unreadable_plan_gets_a_page_named_after_its_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.yaml").write_text("plancc: 1\nmodel: [unclosed\n", "utf-8")
    run = invoke("report", "bad.yaml")
    assert run.exit_code == 1
    html = (tmp_path / "build" / "bad_report.html").read_text("utf-8")
    assert "could not be resolved: nothing to draw" in html
    assert "<strong>PC001</strong>" in html


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["plans"], "plancc: plans: report takes one plan file, not a directory\n"),
        (["nope.yaml"], "plancc: nope.yaml: no such file or directory\n"),
        (
            [FLASH, "-o", "no/such/dir/x.html"],
            "plancc: no/such/dir/x.html: directory no/such/dir does not exist\n",
        ),
        (
            [FLASH, "-o", FLASH],
            f"plancc: {FLASH}: is an input of this report; the page would replace it\n",
        ),
        (
            [FLASH, "--measure", "data/measure.json", "-o", "data/measure.json"],
            "plancc: data/measure.json: is an input of this report; the page would replace it\n",
        ),
        (
            [FLASH, "--measure", "nope.json"],
            "plancc: nope.json: cannot read: No such file or directory\n",
        ),
        (
            [FLASH, "--measure", "data/list.json"],
            "plancc: data/list.json: not a JSON object (a `plancc measure` result is one)\n",
        ),
    ],
)
def test_usage_and_io_errors_exit_2_and_write_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], message: str
) -> None:
    copy_plans(tmp_path, monkeypatch)
    (tmp_path / "data" / "list.json").write_text("[]", "utf-8")
    run = invoke("report", *args)
    assert run.exit_code == 2
    assert run.stderr == message
    assert not (tmp_path / "build").exists()


# -- --measure -----------------------------------------------------------------------------


def test_measure_fixture_is_read() -> None:
    m = read(str(DATA / "measure.json"))
    assert m.verdict == "ship: -2.90 % at ep2, the warm lands"
    assert [(d.name, d.value, d.unit) for d in m.deltas] == [
        ("forward p50", -997.5, "µs"),
        ("forward mean", -2.9, "%"),
    ]
    assert {n: a.gbps for n, a in m.achieved.items()} == {
        "prefetch_o_proj_w": 153.0,
        "prefetch_q_w": 240.0,
    }
    assert m.notes == ()


LANE_2_Y = "379"  # the second warm's measured line, in timed.yaml's timeline


def test_measure_is_shown_beside_the_estimate() -> None:
    html = page(DATA / "timed.yaml", measure=read(str(DATA / "measure.json")))
    assert "<strong>Verdict:</strong> ship: -2.90 % at ep2, the warm lands" in html
    assert '<td>forward p50</td><td class="num">-997.5 µs</td>' in html
    measured = "Measured: 153 GB/s, 54 % of the estimate&#39;s rate."
    # In the warm's lane, on the line under the estimate, and in the warms table beside it.
    assert f'font-weight="700" x="112" y="{LANE_2_Y}">{measured}</text>' in html
    assert f"lands in time.</td><td>{measured}</td>" in html


@pytest.mark.parametrize(
    ("doc", "verdict", "deltas", "achieved", "notes"),
    [
        ({"verdict": "keep"}, "keep", [], {}, ()),
        ({"verdict": {"verdict": "drop", "why": "slower"}}, "drop: slower", [], {}, ()),
        ({}, None, [], {}, ("no verdict in the measurement",)),
        (
            {"verdict": 3},
            None,
            [],
            {},
            ("the verdict is neither text nor an object with text: not shown",),
        ),
        (
            {"verdict": "x", "deltas": {"p50": -12, "p90": {"value": 4, "unit": "%"}}},
            "x",
            [("p50", -12.0, "µs"), ("p90", 4.0, "%")],
            {},
            (),
        ),
        (
            {"verdict": "x", "deltas": [{"name": "p50"}]},
            "x",
            [],
            {},
            ('a delta without a name or a number was skipped: {"name": "p50"}',),
        ),
        (
            {"verdict": "x", "warms": {"w": {"achieved_bytes_per_s": 2.85e11}}},
            "x",
            [],
            {"w": 285.0},
            (),
        ),
        (
            {"verdict": "x", "warms": [{"warm": "w", "bytes": 100.0e6, "duration_us": 500}]},
            "x",
            [],
            {"w": 200.0},
            (),
        ),
        (
            {"verdict": "x", "warms": [{"name": "w", "achieved_gbps": True}]},
            "x",
            [],
            {},
            ('no achieved bandwidth for warm "w" in the measurement',),
        ),
        (
            {"verdict": "x", "warms": [{"achieved_gbps": 3}]},
            "x",
            [],
            {},
            ('a warm without a name or an achieved bandwidth was skipped: {"achieved_gbps": 3}',),
        ),
        (
            {"verdict": "x", "warms": 7, "deltas": "no"},
            "x",
            [],
            {},
            (
                "deltas is neither a list nor an object: not shown",
                "warms is neither a list nor an object: no achieved bandwidth shown",
            ),
        ),
    ],
)
def test_measure_reader_is_tolerant(
    doc: dict[str, object],
    verdict: str | None,
    deltas: list[tuple[str, float, str]],
    achieved: dict[str, float],
    notes: tuple[str, ...],
) -> None:
    m = parse("m.json", doc)
    assert m.verdict == verdict
    assert [(d.name, d.value, d.unit) for d in m.deltas] == deltas
    assert {n: a.gbps for n, a in m.achieved.items()} == achieved
    assert m.notes == notes


def test_measure_notes_are_shown_on_the_page() -> None:
    html = page(DATA / "timed.yaml", measure=parse("m.json", {"deltas": "no"}))
    assert "<li>no verdict in the measurement</li>" in html
    assert "<strong>Verdict:</strong> none given" in html


def test_report_with_measure_from_the_command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy_plans(tmp_path, monkeypatch)
    run = invoke("report", "data/timed.yaml", "--measure", "data/measure.json", "-o", "m.html")
    assert run.exit_code == 0
    assert "Measured: 240 GB/s" in (tmp_path / "m.html").read_text("utf-8")


def test_measure_reads_the_plancc_measure_format() -> None:
    """The fields of `plancc measure`'s plancc-measure/1 the page shows."""
    m = read(str(DATA / "measure-v1.json"))
    assert m.verdict == (
        "ship: bootstrap 95 % interval of the fastest-rank median delta [−1040.5, −951.0] µs "
        "(2000 resamples, seed 0) lies below zero"
    )
    assert [(d.name, d.value, d.pct) for d in m.deltas] == [
        ("fastest rank p50", -997.5, -2.9),
        ("fastest rank mean", -900.25, -2.6),
        ("headline p50", -950.0, -2.75),
    ]
    assert {n: (a.gbps, a.landed) for n, a in m.achieved.items()} == {
        "prefetch_o_proj_w": (153.0, ("proj_a_mm", 2, 3)),
    }
    assert m.notes == ('no achieved bandwidth for warm "prefetch_q_w" in the measurement',)
    html = page(DATA / "timed.yaml", measure=m)
    assert "Landed before proj_a_mm in 2 of 3 layers measured." in html
    assert (
        '<td>fastest rank p50</td><td class="num">-997.5 µs</td><td class="num">-2.90 %</td>'
        in (html)
    )


RECOVERY = sorted((ROOT / "tests" / "cases" / "recovery").glob("*.yaml"))


@pytest.mark.slow
@pytest.mark.parametrize("case", RECOVERY, ids=[p.stem for p in RECOVERY])
def test_every_broken_case_gets_a_page_listing_each_diagnostic(case: Path) -> None:
    """The case corpus's schema-recovery plans: what resolved is drawn, all is listed."""
    r = diagnose_plan(case, case.name)
    html = render(r)
    for d in r.diagnostics:
        assert f"<strong>{d.code}</strong> {d.severity.value}" in html
        assert f"{d.file}:{d.line}:{d.col}" in html
    assert html.count('<li id="d') == len(r.diagnostics) + len(r.allowed)


def test_the_flash_page_reads_plancc_measure_output() -> None:
    """measure-flash.json is `plancc measure --format json` of branch i12's example (the
    seed's ep2 figures, one HCA layer's warm landing late), read as it was written."""
    m = read(str(DATA / "measure-flash.json"))
    assert m.notes == ()
    assert m.verdict is not None
    assert m.verdict.startswith("ship: bootstrap 95 % interval of the fastest-rank median")
    assert ("fastest rank p50", -999.5) in [(d.name, d.value) for d in m.deltas]
    html = page(FLASH, measure=m)
    # Each warm's lane and its row of the warms table.
    assert html.count("Measured: 285 GB/s, 100 % of the estimate&#39;s rate.") == 6
    assert "Landed before proj_a_mm in 19 of 20 layers measured." in html

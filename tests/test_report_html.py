"""`plancc report`: the page's content, the command's outputs and exit codes, the golden page."""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from plancc.api import PlanResult
from plancc.api import diagnose_plan as _diagnose
from plancc.cli.app import app
from plancc.facts.liveness import layer_peak
from plancc.load.inputs import PlanInput
from plancc.report_html import context, render
from plancc.report_html.facts import facts
from plancc.report_html.fmt import px
from plancc.report_html.layout import (
    EM,
    FONT,
    LABEL_PITCH,
    LINE,
    MAX_LABEL,
    MIN_COLUMN,
    X0,
    X1,
    _fit,
    _timed_widths,
    clip,
    distinct,
    spread,
    wrap,
)
from plancc.report_html.measure import parse, read


def diagnose_plan(path: Path, label: str) -> PlanResult:
    """The front end for one plan file, named ``label``."""
    return _diagnose(PlanInput(label, path), path.read_bytes())


ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "report"
FLASH = "plans/deepseek_v4_flash.yaml"
# Layout details are tested on fixtures of their own, not on the shipped plans (which
# change): the Flash plan as it was with its stages in list order, and a small graph.
LINEAR = DATA / "flash-linear.yaml"
GRAPH = DATA / "graph.yaml"
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


# -- plans that stress the layout (the browser test opens them too) ------------------------

PREFIX = "deepseek_v4_pro_model_layers_decode_attention_block_"


def stress_plan(stages: int = 2000) -> str:
    """Names alike but for their middle, a layer kind of ``stages`` stages and one of 60,
    and warms whose diagnostics sit side by side (issue 24: the label row of a
    2,000-stage layer was a black smear, its badges overlapped)."""
    tensors = [f"weight_tensor_with_a_long_name_{k}" for k in range(8)]
    out = ["plancc: 1", "model: stress", "platform: a2a3", "dims: {D: 4096}", "tensors:"]
    out += [f"  {t}: {{shape: [D, D], dtype: bf16}}" for t in tensors]
    out += ["forward:", "  - {layer: many, repeat: 3}", "  - medium", "layers:"]
    for kind, n in (("many", stages), ("medium", 60)):
        # Warm k is issued after stage 5 + 2k, whose next stage uses SDMA (PC105) and the
        # one after reads its tensor (PC107); the last stage reads them all (PC030).
        anchors = {5 + 2 * k: k for k in range(8)}
        out += [f"  {kind}:", "    stages:"]
        for i in range(n):
            fields = [f"name: {PREFIX}{i}_matmul_kernel", "duration_us: 0.01"]
            if i in anchors:
                fields.append(f"task: tid_{i}")
            if i - 2 in anchors:
                fields.append(f"reads: [{tensors[anchors[i - 2]]}]")
            if i - 1 in anchors:
                fields.append("sdma: true")
            if i == n - 1:
                fields.append(f"reads: [{', '.join(tensors)}]")
            out.append(f"      - {{{', '.join(fields)}}}")
        out.append("    warms:")
        for a, k in anchors.items():
            out += [
                f"      - name: prefetch_{kind}_the_weight_tensor_with_a_long_name_{k}",
                f"        after: {PREFIX}{a}_matmul_kernel",
                f"        tensors: [{tensors[k]}]",
            ]
        # One more at the first anchor: PC101, and PC102 (issued against consumer order).
        out += [
            f"      - name: prefetch_{kind}_the_weight_tensor_with_a_long_name_again",
            f"        after: {PREFIX}5_matmul_kernel",
            f"        tensors: [{tensors[7]}, {tensors[0]}]",
        ]
    return "\n".join(out) + "\n"


def stress_result(tmp: Path, stages: int = 2000) -> PlanResult:
    plan = tmp / "stress.yaml"
    plan.write_text(stress_plan(stages), "utf-8")
    return diagnose_plan(plan, "stress.yaml")


def timed_with_deps(tmp: Path, deps: dict[str, str]) -> PlanResult:
    """timed.yaml with `deps` written on the stages named in ``deps`` (stage -> its list)."""
    text = (DATA / "timed.yaml").read_text("utf-8")
    for stage, waits in deps.items():
        text = text.replace(f"{{name: {stage}, ", f"{{name: {stage}, deps: {waits}, ", 1)
    plan = tmp / "timed.yaml"
    plan.write_text(text, "utf-8")
    r = diagnose_plan(plan, "timed.yaml")
    assert r.plan is not None
    assert {s.name for s in r.plan.layers["csa"].stages if s.deps is not None} == set(deps)
    return r


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


CSP = (
    '<meta http-equiv="Content-Security-Policy" '
    "content=\"default-src 'none'; style-src 'unsafe-inline'\">"
)


def test_the_page_forbids_script_and_loads_by_its_content_security_policy() -> None:
    """So that a slip in escaping would run nothing (issue 27): the policy comes before
    anything it governs; the browser test checks that it holds and that the page still
    renders whole under it."""
    for plan in (FLASH, DATA / "broken.yaml"):
        html = page(plan)
        assert html.count(CSP) == 1
        assert html.index(CSP) < html.index("<style>") < html.index("<body>")


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
    note = " (not to scale: equal widths, as not every stage has duration_us)"
    linear = "stages in order" + note
    graph = "stages by step of the schedule, those that run beside each other in parallel lanes"
    html = page(LINEAR)
    assert html.count(linear) == 3
    assert graph not in html
    assert "No landing estimate: not every stage between q_proj and proj_a has duration_us." in html
    html = page(GRAPH)  # csa a graph, swa in list order
    assert (html.count(graph + note), html.count(linear)) == (1, 1)


def test_sdma_and_streams_stages_are_marked() -> None:
    html = page(LINEAR)
    assert html.count('class="stage sdma"') == 6  # moe_dispatch and moe_combine, 3 kinds
    assert html.count('class="stage streams"') == 3
    assert "stage 15 moe_ffn: reads no tensor; streams 427.8 MB" in html
    # The shipped plan's MoE: the seed's `sdma: true`, and the code's collective.
    flash = GOLDEN.read_text(encoding="utf-8")
    said = "stage 13 moe_dispatch: reads no tensor; uses SDMA; a collective (vector-core MTE)"
    assert said in flash


def test_stage_reads_are_named_under_each_stage() -> None:
    html = page(LINEAR)
    for name in ("attn_norm_w", "wq_a", "wq_b", "wq_b_scale", "kv_cache", "wo_a", "wo_b"):
        assert re.search(rf'<text class="tiny" [^>]*>{name}</text>', html), name
    # SWA's 14 columns of 70 px hold 11 characters of 9 px; CSA's 16 of 61 px, 10.
    assert re.search(r'<text class="tiny" [^>]*>attn_norm…</text>', html)
    assert re.search(r'<text class="tiny" [^>]*>weights_p…</text>', html)


def test_names_under_a_stage_fit_its_column() -> None:
    assert _fit(["wo_a", "weights_proj"], 61.25) == ("wo_a", "weights_p…")
    assert _fit(["a", "b", "c", "d", "e", "f", "g"], 61.25) == ("a", "b", "c", "d", "+3 more")
    assert _fit(["wo_a"], 18) == ()  # not even four characters: the table has them


def test_stage_reads_are_listed_with_their_bytes() -> None:
    html = page(LINEAR)
    assert "<td>wq_a 8.4 MB, wq_b 33.6 MB, wq_b_scale 0.1 MB</td>" in html
    assert "<td>attn_norm_w 8,192 B</td>" in html
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
    for plan in (FLASH, LINEAR, GRAPH, DATA / "timed.yaml", DATA / "broken.yaml"):
        pf = facts(result(plan))
        for lf in pf.layers:
            peak = layer_peak(lf.layer)
            assert max((sum(row) for row in lf.held), default=0) == peak.bytes
            if peak.stage is not None:
                assert sum(lf.held[peak.stage]) == peak.bytes


def test_occupancy_stacks_what_streams_beside_the_warms_held() -> None:
    # Qwen3-14B: the 52.4 MB warm is held while fa_fused streams 134.2 MB of KV cache;
    # gate_proj reads 6/17 of w_gate and streams that share, not the whole 178.3 MB.
    html = page("plans/qwen3_14b.yaml")
    assert "<title>fa_fused: 134.2 MB streams through L2 beside the warms</title>" in html
    assert "<title>fa_fused: prefetch_wo holds 52.4 MB</title>" in html
    assert "stage 14 gate_proj: reads w_gate 62.9 MB (6/17 of 178.3 MB)" in html
    pf = facts(result("plans/qwen3_14b.yaml"))
    (lf,) = pf.layers
    names = [s.name for s in lf.layer.stages]
    assert lf.streamed[names.index("gate_proj")] == -(-178_257_920 * 6 // 17)
    assert lf.streamed[names.index("out_proj")] == 0  # it reads wo, which the warm holds
    # Flash: the MoE's 427.8 MB, over twice L2, is drawn cut at the top of the plot.
    flash = page(FLASH)
    assert "moe_ffn: 427.8 MB streams through L2 beside the warms" in flash
    assert flash.count('fill="none" stroke="#000"/>') == 3  # one cut stack per layer kind


def test_occupancy_names_the_peak_against_capacity_and_budget() -> None:
    html = page(LINEAR)
    assert "peak 100.7 MB = 0.50× L2 at kv_cache_write (prefetch_o_proj_w_csa)" in html
    assert html.count(">L2 capacity 192 MiB</text>") == 3
    assert html.count(">budget 0.75 × L2 = 144 MiB</text>") == 3


def test_the_forward_strip_colours_each_layer_by_kind() -> None:
    html = page(LINEAR)
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
    assert "'compressor' streams 8.4 MB of weights before 'proj_a'" in pc104.diagnostic.message
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
        "plans/deepseek_v4_flash.yaml: 0 errors, 1 warning -> written: "
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
        "data/broken.yaml: 3 errors, 1 warning -> written: build/broken_moe_report.html\n"
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


def test_measure_is_shown_beside_the_estimate() -> None:
    html = page(DATA / "timed.yaml", measure=read(str(DATA / "measure.json")))
    assert "<strong>Verdict:</strong> ship: -2.90 % at ep2, the warm lands" in html
    assert '<td>forward p50</td><td class="num">-997.5 µs</td>' in html
    measured = "Measured: 153 GB/s, 54 % of the estimate&#39;s rate."
    # In the warm's lane, on the line under the estimate, and in the warms table beside it.
    estimate = re.search(r'<text x="112" y="([\d.]+)">PC107 estimate: in the 160 µs', html)
    shown = re.search(rf'<text font-weight="700" x="112" y="([\d.]+)">{measured}</text>', html)
    assert estimate is not None
    assert shown is not None
    assert float(shown[1]) == float(estimate[1]) + LINE
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


# -- layout: every label in a room of its own (the browser test measures it) ---------------


def svgs(html: str) -> list[str]:
    return re.findall(r'<svg class="fig".*?</svg>', html, re.S)


def turned(svg: str) -> list[str]:
    return re.findall(r'<text [^>]*transform="rotate[^>]*>([^<]*)</text>', svg)


def test_a_long_name_is_cut_in_its_middle() -> None:
    assert clip("kv_cache_write") == "kv_cache_write"
    name = PREFIX + "kv_cache_write"
    assert clip(name) == "deepseek_v4…_cache_write"
    assert len(clip(name)) == MAX_LABEL
    assert clip(name, 1) == "…"
    assert clip(name, 0) == ""


def test_names_alike_but_for_their_middle_get_distinct_labels() -> None:
    names = [f"{PREFIX}{i}_matmul_kernel" for i in range(120)]
    assert len({clip(n) for n in names}) == 1  # what the page showed: one label, 120 times
    labels = distinct(names, [MAX_LABEL] * len(names))
    assert len(set(labels)) == len(names)
    assert all(len(label) <= MAX_LABEL for label in labels)
    # Where they differ shows: the shared start gives way.
    assert labels[7] == "deepseek…7_matmul_kernel"
    assert labels[117] == "deepse…117_matmul_kernel"
    # Names alike at both ends: the middle and the end.
    long_end = [f"{PREFIX}{i}_{'x' * 40}" for i in range(3)]
    assert distinct(long_end, [MAX_LABEL] * 3) == [
        "…0_xxxxxxxxx…xxxxxxxxxxx",
        "…1_xxxxxxxxx…xxxxxxxxxxx",
        "…2_xxxxxxxxx…xxxxxxxxxxx",
    ]


def test_intervals_take_the_first_row_where_they_keep_their_gap() -> None:
    assert spread([(0, 10), (5, 20), (14, 30), (25, 40), (35, 50)]) == [0, 1, 0, 1, 0]
    assert spread([(0, 100)] * 3, gap=8) == [0, 1, 2]
    assert spread([]) == []


def test_text_wraps_at_spaces_to_its_width() -> None:
    assert wrap("aaa bbb ccc", 7.5 * FONT * EM) == ("aaa bbb", "ccc")
    assert wrap("abcdefghij", 4.5 * FONT * EM) == ("abcd", "efgh", "ij")
    assert wrap("", 100) == ("",)


def test_the_peak_is_named_above_the_plot_not_on_the_budget_label() -> None:
    """Pro's 134.2 MB peak sits 10 MB under its 144 MiB budget: its label was drawn over
    the budget's in both L2 figures."""
    html = page("plans/deepseek_v4_pro.yaml")
    figures = [s for s in svgs(html) if "L2 occupancy of layer kind" in s]
    assert len(figures) == 2
    for svg in figures:
        peak = re.search(r'<text font-weight="700" x="[\d.]+" y="([\d.]+)">peak ', svg)
        levels = re.findall(r'<line class="level \w+" x1="112" x2="1092" y1="([\d.]+)"', svg)
        assert peak is not None
        assert levels
        assert float(peak[1]) + 4 < min(float(y) for y in levels) - 12


def test_long_names_turned_labels_are_distinct_and_fit(tmp_path: Path) -> None:
    html = page(DATA / "long-names.yaml")
    for svg in svgs(html):
        labels = turned(svg)
        assert len(labels) == len(set(labels))
        assert all(len(label) <= MAX_LABEL for label in labels)
    # Whole in the tables and tooltips.
    assert f"<code>{PREFIX}kv_cache_write</code>" in html


@pytest.mark.slow
def test_a_2000_stage_layer_labels_only_the_stages_it_has_room_for(tmp_path: Path) -> None:
    r = stress_result(tmp_path)
    html = render(r)
    timelines = [s for s in svgs(html) if "Timeline of layer kind many" in s]
    assert len(timelines) == 1
    labels = turned(timelines[0])
    assert 20 < len(labels) <= (X1 - X0) / LABEL_PITCH + 1
    assert len(labels) == len(set(labels))
    assert timelines[0].count('<g class="col">') == 2000  # every stage is drawn, with its title
    assert f"stage 2000 {PREFIX}1999_matmul_kernel: reads " in timelines[0]


def test_badges_of_neighbouring_brackets_take_separate_rows(tmp_path: Path) -> None:
    """Windows one stage wide sit side by side; their badges are wider: a row each."""
    r = stress_result(tmp_path, stages=100)
    bracketed = [
        e for e in facts(r).entries if e.layer == "many" and e.figure == "timeline" and e.stages
    ]
    assert len(bracketed) >= 18  # PC105 and PC107 of each of 9 warms, at least
    html = render(r)
    svg = next(s for s in svgs(html) if "Timeline of layer kind many" in s)
    badges = re.findall(
        r'<path class="bracket \w+" d="M[\d.]+,[\d.]+ v-5 h[\d.]+ v5"/>\n'
        r'<a href="#d\d+" class="badge \w+"><title>[^<]*</title>'
        r'<rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)"',
        svg,
    )
    assert len(badges) == len(bracketed)
    boxes = [(float(x), float(y), float(x) + float(w)) for x, y, w in badges]
    for i, (x, y, end) in enumerate(boxes):
        for x2, y2, end2 in boxes[i + 1 :]:
            assert y != y2 or end + 4 <= x2 or end2 + 4 <= x


def test_the_warm_order_label_sits_on_a_backing_tall_enough_for_underscores() -> None:
    """`1 wo_a` read `1 wo a`: its white backing was 12 px, an 11 px font's em box is 12.8."""
    html = page(LINEAR)
    found = re.findall(
        r'<rect class="backing" x="[\d.]+" y="([\d.]+)" width="[\d.]+" height="([\d.]+)" '
        r'fill="#fff"/><text x="[\d.]+" y="([\d.]+)">1 wo_a → 2 wo_b</text>',
        html,
    )
    assert len(found) == 3
    for top, height, baseline in found:
        assert float(top) <= float(baseline) - 10.5  # the em box's ascent, rounded up
        assert float(baseline) + 2.6 <= float(top) + float(height)  # and its descent


def test_the_forward_strip_writes_marks_only_where_they_fit(tmp_path: Path) -> None:
    text = (DATA / "timed.yaml").read_text("utf-8").replace("repeat: 3", "repeat: 300")
    plan = tmp_path / "long.yaml"
    plan.write_text(text, "utf-8")
    html = render(diagnose_plan(plan, "long.yaml"))
    assert '<text class="cellmark"' not in html  # 3.3 px cells
    assert "<title>layer 299: csa, 4 warm issues</title>" in html
    assert '<text class="small" x="112" y="14">0</text>' in html
    ticks = re.findall(r'<text class="small" x="([\d.]+)" y="14">', html)
    assert all(float(b) - float(a) >= 30 for a, b in itertools.pairwise(ticks))


# -- the schedule: stages that run beside each other ---------------------------------------


def test_a_plan_without_deps_has_a_column_per_stage_in_one_lane() -> None:
    layers = context(result(LINEAR), None)["layers"]
    assert len(layers) == 3
    for layer in layers:
        grid = layer.timeline.grid
        assert grid.linear
        assert grid.rows == 1
        assert [s.stages for s in grid.steps] == [(c.stage.index,) for c in grid.columns]
    html = page(LINEAR)
    assert ">lane 1</text>" not in html
    assert ">stages</text>" in html
    assert '<th class="num">step</th><th>waits for</th>' not in html


def layers_of(r: PlanResult) -> dict[str, Any]:
    return {lf.facts.layer.name: lf for lf in context(r, None)["layers"]}


def test_stages_beside_each_other_are_drawn_in_parallel_lanes() -> None:
    r = result(GRAPH)
    layers = layers_of(r)
    grid = layers["csa"].timeline.grid
    at = {c.stage.name: c for c in grid.columns}
    # kv_proj, q_proj and the compressor start together, one lane each.
    assert {at[n].step.index for n in ("kv_proj", "q_proj", "compressor")} == {3}
    assert [at[n].row for n in ("kv_proj", "q_proj", "compressor")] == [0, 1, 2]
    assert at["indexer"].step is at["kv_cache_write"].step
    assert (grid.rows, len(grid.steps), len(grid.columns)) == (3, 13, 16)
    assert layers["swa"].timeline.grid.linear  # the kind without deps keeps its list order
    html = render(r)
    svg = next(s for s in svgs(html) if "Timeline of layer kind csa" in s)
    assert "16 stages in 13 steps and 3 lanes" in svg
    assert ">lane 3</text>" in svg
    rows = layers["csa"].timeline.rows
    assert rows[0].stage_y < rows[1].stage_y < rows[2].stage_y
    for name in ("kv_proj", "q_proj", "compressor"):
        x, y = at[name].x + at[name].step.inset, rows[at[name].row].stage_y
        assert re.search(rf'<rect class="stage[^"]*" x="{px(x)}" y="{px(y)}"', svg), name
    assert (
        "stage 5 q_proj: reads wq_a 8.4 MB, wq_b 33.6 MB, wq_b_scale 0.1 MB; waits for rms_norm"
        in svg
    )
    # The stages table says each stage's step and what it waits for.
    assert (
        '<td class="num">8</td><td><code>indexer</code></td><td class="num">5</td>'
        "<td><code>q_proj</code>, <code>compressor</code></td>"
    ) in html
    assert (
        '<td><code>proj_a</code></td><td class="num">7</td>'
        "<td><code>sparse_attn</code> (listed before it)</td>"
    ) in html
    # The occupancy figure's columns are the same steps, numbered by their stages.
    occupancy = next(s for s in svgs(html) if "L2 occupancy of layer kind csa" in s)
    assert 'text-anchor="middle">4,5,7</text>' in occupancy


def test_a_warm_runs_from_its_anchors_finish_to_its_last_consumer_on_the_schedule() -> None:
    """Its bar ends with the step its last consumer starts at: in the graph, proj_b is
    stage 11 at step 8 (its live interval counts steps, not stages)."""
    linear, graph = layers_of(result(LINEAR))["csa"], layers_of(result(GRAPH))["csa"]
    for lf in (linear, graph):
        t = lf.timeline
        at = {c.stage.name: c for c in t.columns}
        (lane,) = t.lanes
        assert lane.bar == (at["q_proj"].step.end, at["proj_b"].step.end)
        assert lane.marks == (at["proj_a"].x, at["proj_b"].x)
        assert lane.order is not None
        assert lane.order.text == "1 wo_a → 2 wo_b"
    at = {c.stage.name: c.step.index for c in graph.timeline.columns}
    assert (at["q_proj"], at["proj_b"]) == (3, 7)
    # q_proj, beside kv_proj, finishes a step earlier than listed after it.
    assert graph.timeline.lanes[0].bar[0] < linear.timeline.lanes[0].bar[0]
    svg = next(s for s in svgs(page(GRAPH)) if "Timeline of layer kind csa" in s)
    bar = graph.timeline.lanes[0].bar
    assert f'<rect class="bar" x="{px(bar[0])}" y=' in svg
    assert f'width="{px(bar[1] - bar[0])}" height="16"' in svg


def test_a_timed_step_lasts_as_long_as_its_longest_stage(tmp_path: Path) -> None:
    r = timed_with_deps(tmp_path, {"kv_proj": "[rms_norm]", "q_proj": "[rms_norm]"})
    (lf,) = context(r, None)["layers"]
    steps = lf.timeline.grid.steps
    assert [s.stages for s in steps[:4]] == [(0,), (1,), (2, 3), (4,)]
    assert steps[2].length == 31  # q_proj's 31 µs beside kv_proj's 9
    assert steps[3].t0 == 12 + 6 + 31
    ticks = [t.text for t in lf.timeline.ticks]
    assert "49 µs" in ticks  # listed in a line, kv_proj's 9 µs came first: 27 µs
    assert "27 µs" not in ticks


def test_a_warms_first_consumer_is_the_one_that_starts_first(tmp_path: Path) -> None:
    """On the schedule, not in the list: proj_b, waiting only for q_proj, starts before
    proj_a; the deadline is drawn at its start."""
    r = timed_with_deps(tmp_path, {"proj_b": "[q_proj]"})
    (lf,) = context(r, None)["layers"]
    warm = lf.facts.warms[1]
    assert warm.landing is not None
    assert warm.landing.first.name == "proj_b"
    at = {c.stage.name: c for c in lf.timeline.columns}
    assert lf.timeline.lanes[1].deadline == at["proj_b"].x < at["proj_a"].x
    linear = context(result(DATA / "timed.yaml"), None)["layers"][0]
    assert linear.facts.warms[1].landing.first.name == "proj_a"


def test_report_reads_the_model_code_from_source_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A checkout elsewhere than the plan's `source_root` says: `--source-root`, as for
    `validate`; without it, the page shows PC200 (the sources were not checked)."""
    layer = Path(__file__).parent / "data" / "source" / "warmcall"
    plan = tmp_path / "mlp.yaml"
    text = (layer / "extract.yaml").read_text("utf-8")
    plan.write_text(text.replace('source_root: "."', "source_root: nowhere"), "utf-8")
    monkeypatch.chdir(tmp_path)
    alone = invoke("report", "mlp.yaml", "-o", "alone.html")
    assert alone.stdout == "mlp.yaml: 0 errors, 2 warnings -> written: alone.html\n"
    assert "PC200" in (tmp_path / "alone.html").read_text("utf-8")
    run = invoke("report", "mlp.yaml", "-o", "out.html", "--source-root", str(layer))
    assert run.stdout == "mlp.yaml: 0 errors, 1 warning -> written: out.html\n"
    assert "PC200" not in (tmp_path / "out.html").read_text("utf-8")

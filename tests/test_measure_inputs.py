"""`plancc measure` reads PyPTO's exact forms, and refuses anything else in one line."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import measure_fixtures as fx
import pytest
from typer.testing import CliRunner

from plancc.cli.app import app
from plancc.measure import trace as tr

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "tests" / "data" / "swimlane-example.json"
FLASH = ROOT / "tests" / "golden" / "deepseek_v4_flash_warms.manifest.json"
EP2 = ({41237: fx.spread(34423.7)}, {41301: fx.spread(33424.2)})


def test_the_example_is_the_converters_own_output() -> None:
    # A copy of ../shared/data/swimlane-example.json (CI has no ../shared).
    digest = hashlib.sha256(EXAMPLE.read_bytes()).hexdigest()
    assert digest == "65a2d76a43bf853be6c78f7cb552a25495a04974f2f9dfd1aad2fc579dbe1234"


def test_the_fixture_writer_writes_the_converters_form_byte_for_byte() -> None:
    written = json.dumps(fx.trace_events(fx.example_tasks()), indent=2)
    assert written == EXAMPLE.read_text("utf-8")


def test_the_runner_forms_the_fixture_writes() -> None:
    log = fx.bench_log({41237: [34411.2, 34398.0], 41238: [34433.9, 34420.1]}, warmup=500)
    assert log.splitlines()[1:5] == [
        "[RUN]   effective_us (2 rounds) min=34420.1 median=34427.0 mean=34427.0 max=34433.9",
        "[RUN]   raw samples: ranks=2 rounds=2 warmup=500",
        "[RUN]     rank 41237 raw n=2 eff_us=[34411.2, 34398.0]",
        "[RUN]     rank 41238 raw n=2 eff_us=[34433.9, 34420.1]",
    ]
    assert (
        log.splitlines()[6]
        == "[RUN]     rank 41237: eff_us min=34398.0 median=34404.6 mean=34404.6 max=34411.2"
    )
    assert fx.strace(41237, 12, 3, 1203400, 265120) == (
        "[STRACE] v=1 pid=41237 tid=41237 inv=12 hid=7f3a depth=3 "
        "name=chip.run.runner_run.device_wall.task_slot_3 ts=1203400 dur=265120 clk=dev"
    )


def test_the_example_trace_reads_as_its_tasks() -> None:
    pattern = tr.name_pattern(["prefetch_o_proj_w", "proj_a_mm", "qproj_dequant_rms_nope_rope"])
    t = tr.read(str(EXAMPLE), pattern)
    assert t.total == 28
    assert t.worker_pid == 4
    assert [(e.kernel, e.task, t.lane(e.tid)) for e in t.worker_events()] == [
        ("qproj_dequant_rms_nope_rope", "t16", "AIV_24"),
        ("qproj_dequant_rms_nope_rope", "t16", "AIV_25"),
        ("prefetch_o_proj_w", "t17", "AIV_26"),
        ("proj_a_mm", "t18", "AIC_0"),
    ]
    warm = t.worker_events()[2]
    assert warm.kernel_us == pytest.approx(29.26)
    assert (warm.start, warm.end) == pytest.approx((9.0, 38.26))


@pytest.mark.parametrize(
    ("name", "kernel"),
    [
        ("prefetch_o_proj_w(t17)", "prefetch_o_proj_w"),
        ("prefetch_o_proj_w_12(t17)", "prefetch_o_proj_w"),
        ("prefetch_o_proj_w_spmd(t17)", "prefetch_o_proj_w"),
        ("prefetch_o_proj_w_3_spmd(r2t17)", "prefetch_o_proj_w"),
        ("prefetch_o_proj_w_x(t17)", None),
        ("decode_prefetch_o_proj_w(t17)", None),
        ("prefetch_o_proj_w(17)", None),
        ("w_1(t3)", "w_1"),
    ],
)
def test_scope_names_match_the_hint_forms(name: str, kernel: str | None) -> None:
    m = tr.name_pattern(["prefetch_o_proj_w", "w", "w_1"]).fullmatch(name)
    assert (m["k"] if m else None) == kernel


def test_a_stream_read_in_tiny_chunks_gives_the_same_events(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pattern = tr.name_pattern(["prefetch_o_proj_w", "proj_a_mm"])
    whole = tr.read(str(EXAMPLE), pattern)
    monkeypatch.setattr(tr, "CHUNK", 7)
    assert tr.read(str(EXAMPLE), pattern).events == whole.events


def test_only_matching_events_are_kept(tmp_path: Path) -> None:
    path = fx.write_trace(tmp_path / "t.json", fx.forward_tasks(["csa"] * 4, fillers=50))
    t = tr.read(str(path), tr.name_pattern(["prefetch_o_proj_w"]))
    assert t.total > 400
    assert len(t.events) == 4


# -- bad input: one line naming the file, exit 2, no traceback ----------------------------


def _run(
    tmp: Path, *, base: str | None = None, warm: str | None = None, extra: tuple[str, ...] = ()
) -> tuple[int, str]:
    b, w = tmp / "bench-nowarm.log", tmp / "bench-warm.log"
    b.write_text(base if base is not None else fx.bench_log(EP2[0]), encoding="utf-8")
    w.write_text(warm if warm is not None else fx.bench_log(EP2[1]), encoding="utf-8")
    result = CliRunner().invoke(
        app, ["measure", "--manifest", str(FLASH), "--baseline", str(b), "--warm", str(w), *extra]
    )
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.stderr
    if result.exit_code == 2:
        assert result.stdout == ""
        assert result.stderr.count("\n") == 1
    return result.exit_code, result.stderr.removeprefix("plancc: ").rstrip("\n")


LOG = fx.bench_log(EP2[1])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "[INFO] started\n[INFO] done\n",
            "no [RUN] timing line ('effective_us (N rounds) min=… median=… mean=… max=…'): "
            "not the log of a PYPTO_BENCH=1 run",
        ),
        (
            "[RUN]   effective_us unavailable: simulator\n",
            ":1: no timing captured ('effective_us unavailable: simulator'): "
            "a simulator or a non-profiling build measures nothing",
        ),
        (
            "[RUN]   benchmark unavailable: no profiling\n",
            ":1: no timing captured ('benchmark unavailable: no profiling')",
        ),
        (LOG.split("\n[INFO] golden")[0], ":6: cut off: the last [RUN] line has no line end"),
        (LOG + LOG, ":9: a second benchmark run (the first is at line 2): give one run per log"),
        (
            LOG.replace("raw n=100", "raw n=99"),
            ":4: rank 41301 announces n=99 raw samples and lists 100",
        ),
        (
            LOG.split("]\n")[0] + "\n",
            ":4: the raw samples of rank 41301 are cut off (no closing ']')",
        ),
        (
            LOG.replace("eff_us=[33404.4", "eff_us=[nan"),
            ":4: the raw samples of rank 41301 are not all numbers",
        ),
        (
            LOG.replace("median=33424.2 mean", "median=33,424.2 mean"),
            ":2: unreadable benchmark line: 'effective_us (100 rounds) min=33404.4 me…'",
        ),
    ],
)
def test_bad_logs(tmp_path: Path, text: str, message: str) -> None:
    code, err = _run(tmp_path, warm=text)
    assert code == 2
    assert err.startswith(str(tmp_path / "bench-warm.log"))
    assert message in err


def test_an_unreadable_log_or_manifest(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app,
        [
            "measure",
            "--manifest",
            str(FLASH),
            "--baseline",
            str(tmp_path / "nope.log"),
            "--warm",
            str(tmp_path),
        ],
    )
    assert result.exit_code == 2
    assert (
        result.stderr
        == f"plancc: {tmp_path / 'nope.log'}: cannot read: No such file or directory\n"
    )
    bad = tmp_path / "m.json"
    bad.write_text('{"format": "plancc-manifest/1"}', encoding="utf-8")
    result = CliRunner().invoke(
        app, ["measure", "--manifest", str(bad), "--baseline", str(bad), "--warm", str(bad)]
    )
    assert result.exit_code == 2
    assert result.stderr.startswith(f"plancc: {bad}: at /: 'model' is a required property")


TRACE = json.dumps(fx.trace_events(fx.example_tasks()), indent=2)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", ":1: empty file: not a trace"),
        ("[]", ':1: not a Chrome Trace Event file: expected an object {"traceEvents": [...]}'),
        ('{"metadata": {}}', ': not a Chrome Trace Event file: no "traceEvents" list'),
        ('{"traceEvents": {}}', ':1: "traceEvents" is not a list'),
        ('{"traceEvents": [1]}', ':1: traceEvents[0] is not a trace event (an object with "ph")'),
        (TRACE[: len(TRACE) // 2], ": cut off"),
        (TRACE[:-3], ":363: cut off: expected ',' or ']' in traceEvents"),
        (TRACE + "\n{}", ":365: more data after the trace object"),
        ("{'traceEvents': []}", ":1: not JSON: Expecting value"),
        (
            TRACE.replace(
                '"kernel-duration-us": 29.259999999999998', '"kernel-duration-us": "29.26"'
            ),
            ":117: event 'prefetch_o_proj_w(t17)' lacks a numeric ts, dur, tid or "
            "args.kernel-duration-us: not the PyPTO converter's form",
        ),
    ],
)
def test_bad_traces(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "merged_swimlane_20261203_101500.json"
    path.write_text(text, encoding="utf-8")
    code, err = _run(tmp_path, extra=("--trace", str(path)))
    assert code == 2
    assert err.startswith(str(path))
    assert message in err


def test_a_trace_that_is_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_bytes(b'{"traceEvents": [\xff]}')
    code, err = _run(tmp_path, extra=("--trace", str(path)))
    assert (code, err) == (2, f"{path}:1: not a trace: not UTF-8 text")


def test_a_manifest_of_another_build(tmp_path: Path) -> None:
    path = fx.write_trace(tmp_path / "t.json", fx.forward_tasks(["csa"], hint="prefetch_other"))
    code, err = _run(tmp_path, extra=("--trace", str(path)))
    assert code == 2
    assert err == (
        f"{path}: no scope named by the manifest's name_hints (prefetch_o_proj_w) in the Worker "
        f"View: a trace of another build, or of a run without the warm (manifest {FLASH})"
    )


def test_a_trace_directory_without_traces(tmp_path: Path) -> None:
    (tmp_path / "dfx").mkdir()
    code, err = _run(tmp_path, extra=("--trace", str(tmp_path / "dfx")))
    assert (code, err) == (2, f"{tmp_path / 'dfx'}: no merged_swimlane_*.json under this directory")


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            ("--standalone", "csa=347.0"),
            "--standalone: no stage window named 'csa' (windows: none: no slot lines); "
            "name one with --window csa=A:B",
        ),
        (("--window", "csa=3-4"), "--window: 'csa=3-4' is not NAME=A:B with slots 0-15"),
        (
            ("--window", "csa=3:4", "--standalone", "csa=fast"),
            "--standalone: 'csa=fast' is not NAME=µs (e.g. csa=347.0)",
        ),
    ],
)
def test_bad_window_options(tmp_path: Path, extra: tuple[str, ...], message: str) -> None:
    assert _run(tmp_path, extra=extra) == (2, message)


def test_slot_files_that_name_no_run(tmp_path: Path) -> None:
    err_file = tmp_path / "stderr.log"
    err_file.write_text(fx.slot_lines(99999, [350.0]), encoding="utf-8")
    code, err = _run(tmp_path, extra=("--slots", str(err_file)))
    assert code == 2
    assert err == (
        f"{err_file}: its [STRACE] pids (99999) match no rank of either benchmark log: "
        "name its run, --slots baseline=FILE or --slots warm=FILE"
    )
    err_file.write_text("[INFO] nothing\n", encoding="utf-8")
    assert _run(tmp_path, extra=("--slots", f"warm={err_file}")) == (
        2,
        f"{err_file}: no [STRACE] task_slot lines",
    )
    err_file.write_text(
        fx.strace(41301, 1, 3, 100, 5).replace("dur=5", "dur=x") + "\n", encoding="utf-8"
    )
    code, err = _run(tmp_path, extra=("--slots", f"warm={err_file}"))
    assert (code, err) == (
        2,
        f"{err_file}:1: unreadable [STRACE] slot line (pid, inv, ts and dur: integers of at "
        "most 19 digits; slot 0-15)",
    )


def test_no_message_is_longer_than_a_line(tmp_path: Path) -> None:
    code, err = _run(tmp_path, warm="[RUN] rank 1: eff_us " + "x" * 5000 + "\n")
    assert code == 2
    assert re.fullmatch(r".*: unreadable benchmark line: 'rank 1: eff_us x+…'", err)
    assert len(err) < 300


@pytest.mark.slow
def test_a_trace_cut_anywhere_is_refused_in_one_line(tmp_path: Path) -> None:
    from plancc.measure.errors import InputError

    pattern = tr.name_pattern(["prefetch_o_proj_w", "proj_a_mm"])
    path = tmp_path / "t.json"
    for cut in range(0, len(TRACE) - 1, 23):
        path.write_text(TRACE[:cut], encoding="utf-8")
        with pytest.raises(InputError) as exc:
            tr.read(str(path), pattern)
        assert str(exc.value).startswith(f"{path}:")
        assert "\n" not in str(exc.value)


def test_a_log_cut_anywhere_is_read_or_refused_never_guessed(tmp_path: Path) -> None:
    from plancc.measure import logs
    from plancc.measure.errors import InputError

    path = tmp_path / "bench.log"
    for cut in range(0, len(LOG), 11):
        path.write_text(LOG[:cut], encoding="utf-8")
        try:
            log = logs.read(str(path))
        except InputError as exc:
            message = str(exc)
        else:
            # Read only from whole lines: nothing is taken from a line that was cut.
            assert log.headline == (33404.4, 33424.2, 33424.2, 33444.0)
            assert all(r.samples is None or len(r.samples) == 100 for r in log.ranks)
            assert all(r.logged in (None, (33404.4, 33424.2, 33424.2, 33444.0)) for r in log.ranks)
            continue
        assert message.startswith(str(path))


# -- runs that cannot be compared: inconclusive, exit 1, the mismatch named -----------------

TWO = ({41237: fx.spread(34423.7), 41238: fx.spread(34461.3)},)
TWO_WARM = {41301: fx.spread(33424.2), 41302: fx.spread(33452.9)}


def _verdict(tmp: Path, base: str, warm: str) -> tuple[int, dict[str, object], str]:
    b, w = tmp / "bench-nowarm.log", tmp / "bench-warm.log"
    b.write_text(base, encoding="utf-8")
    w.write_text(warm, encoding="utf-8")
    args = ["measure", "--manifest", str(FLASH), "--baseline", str(b), "--warm", str(w)]
    result = CliRunner().invoke(app, [*args, "--format", "json"])
    assert result.exit_code == 1, result.stderr
    data = json.loads(result.stdout)
    text = CliRunner().invoke(app, args).stdout
    return result.exit_code, data["verdict"], text


def _cut_after_first_rank(log: str) -> str:
    """The log as a run killed after the first rank's raw line: whole lines, no more."""
    lines = log.splitlines(keepends=True)
    return "".join(lines[:4])


def test_a_warm_log_cut_off_after_its_first_rank_is_inconclusive(tmp_path: Path) -> None:
    warm = _cut_after_first_rank(fx.bench_log(TWO_WARM))
    _, v, out = _verdict(tmp_path, fx.bench_log(TWO[0]), warm)
    assert v["decision"] == "inconclusive"
    assert v["interval_us"] is None
    w = tmp_path / "bench-warm.log"
    assert (
        f"  mismatch: {w}:3: the raw samples header says ranks=2 and 1 rank lists samples "
        f"(rank 41301 at line 4): the log is cut off or a rank is missing\n"
    ) in out
    assert out.startswith("plancc measure")
    # No headline p90 from half the ranks (it came out below the headline's p50).
    assert "  headline                     100   33433.1   33452.9   33452.9         -" in out


def test_a_one_rank_warm_against_a_two_rank_baseline(tmp_path: Path) -> None:
    _, v, out = _verdict(tmp_path, fx.bench_log(TWO[0]), fx.bench_log({41301: fx.spread(33424.2)}))
    b, w = tmp_path / "bench-nowarm.log", tmp_path / "bench-warm.log"
    assert v["decision"] == "inconclusive"
    assert [m["text"] for m in v["mismatches"]] == [
        f"{w}:3: the baseline ran on 2 ranks ({b}:3), the warm 1 rank: not comparable"
    ]
    assert "verdict: inconclusive: the two runs cannot be compared: 1 mismatch\n" in out


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            ("raw samples: ranks=2 rounds=100", "raw samples: ranks=3 rounds=100"),
            ":3: the raw samples header says ranks=3 and 2 ranks list samples",
        ),
        (
            ("raw samples: ranks=2 rounds=100", "raw samples: ranks=2 rounds=90"),
            ":4: rank 41301 lists 100 raw samples, the raw samples header (line 3) rounds=90",
        ),
        (
            ("l3_resident=1 rounds=100 ranks=2", "l3_resident=1 rounds=100 ranks=4"),
            ":6: the benchmark line says ranks=4, the raw samples header (line 3) ranks=2",
        ),
        (
            ("l3_resident=1 rounds=100 ranks=2", "l3_resident=1 rounds=120 ranks=2"),
            ":6: the benchmark line says rounds=120, the raw samples header (line 3) rounds=100",
        ),
    ],
)
def test_a_header_that_disagrees_with_its_samples(
    tmp_path: Path, edit: tuple[str, str], message: str
) -> None:
    warm = fx.bench_log(TWO_WARM).replace(*edit)
    _, v, out = _verdict(tmp_path, fx.bench_log(TWO[0]), warm)
    assert v["decision"] == "inconclusive"
    assert f"  mismatch: {tmp_path / 'bench-warm.log'}{message}" in out


def test_a_warm_log_of_another_kernel(tmp_path: Path) -> None:
    warm = fx.bench_log(TWO_WARM, kernel="prefill_fwd")
    _, v, _ = _verdict(tmp_path, fx.bench_log(TWO[0]), warm)
    b, w = tmp_path / "bench-nowarm.log", tmp_path / "bench-warm.log"
    assert [m["text"] for m in v["mismatches"]] == [
        f"{w}:6: the baseline benchmarks kernel=decode_fwd ({b}:6), the warm "
        "kernel=prefill_fwd: not comparable"
    ]


def test_the_same_file_twice_is_one_run(tmp_path: Path) -> None:
    log = tmp_path / "bench.log"
    log.write_text(fx.bench_log(TWO[0]), encoding="utf-8")
    result = CliRunner().invoke(
        app, ["measure", "--manifest", str(FLASH), "--baseline", str(log), "--warm", str(log)]
    )
    assert result.exit_code == 1
    assert (
        "verdict: inconclusive: the two runs cannot be compared: 1 mismatch\n"
        f"  mismatch: {log}: both sides are one run: --baseline and --warm are the same file\n"
    ) in result.stdout
    copy = tmp_path / "copy.log"
    copy.write_text(log.read_text("utf-8"), encoding="utf-8")
    result = CliRunner().invoke(
        app, ["measure", "--manifest", str(FLASH), "--baseline", str(log), "--warm", str(copy)]
    )
    assert result.exit_code == 1
    assert (
        f"  mismatch: {copy}:2: both sides are one run: the warm log repeats the baseline's "
        f"figures ({log}:2) sample for sample\n"
    ) in result.stdout


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            (
                "effective_us (100 rounds) min=33433.1 median=33452.9",
                "effective_us (100 rounds) min=33460.0 median=33452.9",
            ),
            ":2: effective_us: min=33460.0 median=33452.9 mean=33452.9 max=33472.7 contradict "
            "each other (the median and the mean lie between min and max)",
        ),
        (
            (
                "rank 41301: eff_us min=33404.4 median=33424.2",
                "rank 41301: eff_us min=33404.4 median=33430.2",
            ),
            ":7: rank 41301's summary says median=33430.2, its samples (line 4) give 33424.2: "
            "the summary contradicts its samples",
        ),
        (
            (
                "effective_us (100 rounds) min=33433.1 median=33452.9",
                "effective_us (100 rounds) min=33433.1 median=33440.0",
            ),
            ":2: the headline says median=33440.0, its samples (2 raw lines) give 33452.9: "
            "the summary contradicts its samples",
        ),
        (
            ("eff_us=[33404.4,", "eff_us=[-33404.4,"),
            ":4: a raw sample of rank 41301: a negative time (-33404.4 µs)",
        ),
        (
            ("eff_us=[33404.4,", "eff_us=[" + "9" * 5000 + ".0,"),
            ":4: a raw sample of rank 41301: inf µs is not a time a round takes",
        ),
        (
            ("effective_us (100 rounds)", "effective_us (" + "1" * 5000 + " rounds)"),
            ":2: unreadable benchmark line",
        ),
    ],
)
def test_summary_lines_that_contradict_their_samples_are_input_errors(
    tmp_path: Path, edit: tuple[str, str], message: str
) -> None:
    warm = fx.bench_log(TWO_WARM).replace(*edit)
    assert warm != fx.bench_log(TWO_WARM)
    code, err = _run(tmp_path, base=fx.bench_log(TWO[0]), warm=warm)
    assert (code, err[: len(str(tmp_path / "bench-warm.log"))]) == (
        2,
        str(tmp_path / "bench-warm.log"),
    )
    assert message in err


def test_rounds_without_timing_are_left_out_as_the_runner_does(tmp_path: Path) -> None:
    from plancc.measure import compare, logs, wall

    path = tmp_path / "w.log"
    samples = fx.spread(33424.2)
    samples[10] = 0.0
    log = fx.bench_log({41301: samples})
    # The runner's summaries leave the 0.0 out: write them as it does.
    timed = [x for x in samples if x > 0]
    lines = log.splitlines(keepends=True)
    lines[1] = f"[RUN]   effective_us (99 rounds) {fx._figs(timed)}\n"
    lines[5] = f"[RUN]     rank 41301: eff_us {fx._figs(timed)}\n"
    path.write_text("".join(lines), encoding="utf-8")
    read = logs.read(str(path))
    assert compare.check(read) == []
    v = wall.variant(read)
    assert v.ranks[0].figures.rounds == 99
    assert "1 of rank 41301's 100 raw samples are 0.0" in v.missing[0]


# -- impossible figures in a trace: flagged with their line, never a crash or a figure ------


def _flash_doc() -> dict[str, object]:
    kinds = json.loads(FLASH.read_text("utf-8"))["forward"]["kinds"]
    return fx.trace_events(fx.forward_tasks(kinds))


def _warm_event(doc: dict[str, object], layer: int) -> dict[str, object]:
    events = doc["traceEvents"]
    assert isinstance(events, list)
    return next(
        e
        for e in events
        if e.get("pid") == 4 and str(e.get("name", "")).startswith(f"prefetch_o_proj_w_{layer}(")
    )


def _line_of(text: str, name: str) -> int:
    """The line an event starts on (its "{", indented as one element of traceEvents)."""
    at = text.index(f'"name": "{name}')
    return text.count("\n", 0, text.rindex("\n    {", 0, at) + 1) + 1


def _measure_trace(tmp: Path, doc: dict[str, object] | str, fmt: str = "text") -> tuple[str, Path]:
    path = tmp / "merged_swimlane_20261203_101500.json"
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc, indent=2), encoding="utf-8")
    base, warm = _write(tmp, "b.log", EP2[0]), _write(tmp, "w.log", EP2[1])
    result = CliRunner().invoke(
        app,
        [
            "measure",
            "--manifest",
            str(FLASH),
            "--baseline",
            str(base),
            "--warm",
            str(warm),
            "--trace",
            str(path),
            "--format",
            fmt,
        ],
    )
    assert result.exit_code == 0, result.stderr
    return result.stdout, path


@pytest.mark.parametrize(
    ("field", "value", "problem"),
    [
        ("kernel-duration-us", 0, "kernel-duration-us 0: no duration"),
        ("kernel-duration-us", -20.0, "a negative kernel-duration-us (-20 µs)"),
        ("kernel-duration-us", 1e308, "kernel-duration-us 1e+308 µs is not a time a task takes"),
        ("ts", -5.0, "a negative ts (-5 µs)"),
        ("ts", 1e300, "ts 1e+300 µs is not a time a task takes"),
        ("dur", -1.0, "a negative dur (-1 µs)"),
    ],
)
def test_an_impossible_figure_is_flagged_with_its_line_and_gives_no_bandwidth(
    tmp_path: Path, field: str, value: float, problem: str
) -> None:
    doc = _flash_doc()
    event = _warm_event(doc, 5)
    target = event if field in ("ts", "dur") else event["args"]
    assert isinstance(target, dict)
    target[field] = value
    out, path = _measure_trace(tmp_path, doc)
    line = _line_of(path.read_text("utf-8"), "prefetch_o_proj_w_5(")
    assert (
        "  prefetch_o_proj_w_hca (hca, name_hint prefetch_o_proj_w), 100,663,296 B: 20 of 20 "
        "scopes, kernel p50 353.2 µs, mean 353.2 µs -> 285 GB/s\n"
    ) in out
    assert (
        f"    flag: impossible figures in 1 of 20 scopes, left out of every figure: "
        f"{path}:{line}: {problem}\n"
    ) in out
    assert "TB/s" not in out
    assert "−" not in out.split("warm scopes")[1]
    data, _ = _measure_trace(tmp_path, doc, "json")
    json.loads(data, parse_constant=lambda c: pytest.fail(f"non-finite {c} in the JSON"))


def test_a_split_aggregate_takes_nothing_from_an_impossible_scope(tmp_path: Path) -> None:
    doc = fx.manifest(
        [
            fx.ManifestWarm("prefetch_wo_a", "csa", {"wo_a": 67_100_000}),
            fx.ManifestWarm("prefetch_wo_b", "csa", {"wo_b": 33_600_000}),
        ],
        kinds=["csa", "csa"],
    )
    manifest = fx.write_json(tmp_path / "seed.manifest.json", doc)
    tasks = []
    for layer in range(2):
        t0 = 1000.0 * layer
        tasks += [
            fx.Task(
                f"prefetch_wo_b_{layer}",
                5 + 2 * layer,
                21,
                (24,),
                t0,
                t0 + 0.5,
                t0 + 649.5,
                t0,
                t0 + 650,
            ),
            fx.Task(
                f"prefetch_wo_a_{layer}",
                6 + 2 * layer,
                20,
                (26,),
                t0 + 108.1,
                t0 + 108.6,
                t0 + 660.7,
                t0 + 108,
                t0 + 661,
            ),
        ]
    trace = fx.trace_events(tasks)
    for e in trace["traceEvents"]:
        if e.get("pid") == 4 and e.get("name", "").startswith("prefetch_wo_a_1("):
            e["args"]["kernel-duration-us"] = -552.1
    path = tmp_path / "t.json"
    path.write_text(json.dumps(trace, indent=2), encoding="utf-8")
    result = CliRunner().invoke(
        app,
        ["measure", "--manifest", str(manifest), "--trace", str(path), "--format", "json"],
    )
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    [split] = data["splits"]
    assert (split["layers"], split["of"]) == (1, 1)
    assert round(split["aggregate_gbps"]) == 153
    a = data["scopes"][0]
    assert (a["instances"], round(a["gbps"])) == (2, 122)
    assert [f["flag"] for f in a["flags"]] == ["impossible"]


def test_json_output_is_strict_even_where_a_figure_is_huge(tmp_path: Path) -> None:
    doc = _flash_doc()
    for layer in range(43):
        _warm_event(doc, layer)["args"]["kernel-duration-us"] = 1e308  # type: ignore[index]
    out, _ = _measure_trace(tmp_path, doc, "json")
    data = json.loads(out, parse_constant=lambda c: pytest.fail(f"non-finite {c}"))
    assert [s["gbps"] for s in data["scopes"]] == [None, None, None]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"traceEvents": [' + "[" * 2000 + "]" * 2000 + "]}", ":1: a value nested too deeply"),
        (
            '{"traceEvents": [{"ph": "X", "name": "prefetch_o_proj_w_3(t1)", "pid": 4, '
            '"tid": ' + "7" * 5000 + ', "ts": 1, "dur": 2, "args": {"kernel-duration-us": 1}}]}',
            ":1: event 'prefetch_o_proj_w_3(t1)' lacks a numeric ts, dur, tid",
        ),
    ],
)
def test_hostile_traces_are_input_errors_with_their_line(
    tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / "t.json"
    path.write_text(text, encoding="utf-8")
    code, err = _run(tmp_path, extra=("--trace", str(path)))
    assert code == 2
    assert err.startswith(f"{path}{message}")


def test_a_huge_integer_in_a_trace_is_an_impossible_figure(tmp_path: Path) -> None:
    doc = _flash_doc()
    _warm_event(doc, 7)["ts"] = 0
    text = json.dumps(doc, indent=2).replace(
        '"ts": 0,', '"ts": ' + "1" * 5000 + ",", 1
    )  # more digits than int() takes (4,300)
    out, path = _measure_trace(tmp_path, text)
    line = _line_of(text, "prefetch_o_proj_w_7(")
    assert f"{path}:{line}: ts inf µs is not a time a task takes" in out


# -- stage windows and slot files -----------------------------------------------------------


def test_a_window_from_a_later_slot_to_an_earlier_one_is_a_usage_error(tmp_path: Path) -> None:
    assert _run(tmp_path, extra=("--window", "csa=4:3")) == (
        2,
        "--window: 'csa=4:3': a window runs from an earlier slot to a later one (A < B)",
    )
    assert _run(tmp_path, extra=("--window", "csa=3:3"))[0] == 2


def test_a_window_whose_slot_never_appears_says_so(tmp_path: Path) -> None:
    err_file = tmp_path / "warm.err"
    err_file.write_text(fx.slot_lines(41301, [350.0]), encoding="utf-8")
    result = CliRunner().invoke(
        app,
        [
            "measure",
            "--manifest",
            str(FLASH),
            "--baseline",
            str(_write(tmp_path, "b.log", EP2[0])),
            "--warm",
            str(_write(tmp_path, "w.log", EP2[1])),
            "--slots",
            f"warm={err_file}",
            "--window",
            "csa=3:4",
            "--window",
            "mla=3:9",
        ],
    )
    assert result.stdout.endswith(
        "  csa (slots 3→4): with the warm 350 µs, without -\n"
        "  mla (slots 3→9): with the warm -, without - (note: slot 9 appears in no slot line)\n"
    )


def _write(tmp: Path, name: str, ranks: dict[int, list[float]]) -> Path:
    path = tmp / name
    path.write_text(fx.bench_log(ranks), encoding="utf-8")
    return path


def test_a_slot_dur_of_5000_digits_is_an_input_error(tmp_path: Path) -> None:
    err_file = tmp_path / "warm.err"
    err_file.write_text(fx.strace(41301, 1, 3, 100, 1).replace("dur=1", "dur=" + "9" * 5000) + "\n")
    code, err = _run(tmp_path, extra=("--slots", f"warm={err_file}"))
    assert (code, err) == (
        2,
        f"{err_file}:1: unreadable [STRACE] slot line (pid, inv, ts and dur: integers of at "
        "most 19 digits; slot 0-15)",
    )


def test_slot_lines_given_twice_are_refused_not_counted_twice(tmp_path: Path) -> None:
    err_file = tmp_path / "warm.err"
    err_file.write_text(fx.slot_lines(41301, [350.0, 351.0]), encoding="utf-8")
    code, err = _run(tmp_path, extra=("--slots", f"warm={err_file}", "--slots", f"warm={err_file}"))
    assert (code, err) == (
        2,
        f"{err_file}: the slot lines of pid 41301 (invocations 1-2) are also in {err_file} "
        "(invocations 1-2): give each file once",
    )


def test_slot_lines_of_one_process_out_of_order(tmp_path: Path) -> None:
    err_file = tmp_path / "warm.err"
    lines = fx.slot_lines(41301, [350.0, 351.0]).splitlines(keepends=True)
    err_file.write_text("".join([lines[2], lines[0], lines[1], lines[3]]), encoding="utf-8")
    code, err = _run(tmp_path, extra=("--slots", f"warm={err_file}"))
    assert (code, err) == (
        2,
        f"{err_file}:2: a slot line of invocation 1 after invocation 2's (pid 41301): the "
        "lines of one process are out of order",
    )


# -- a trace alone ---------------------------------------------------------------------------


def test_a_trace_alone_reports_scopes_and_flags_without_a_verdict(tmp_path: Path) -> None:
    kinds = json.loads(FLASH.read_text("utf-8"))["forward"]["kinds"]
    path = fx.write_trace(tmp_path / "t.json", fx.forward_tasks(kinds, late=[3]))
    result = CliRunner().invoke(app, ["measure", "--manifest", str(FLASH), "--trace", str(path)])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith(
        f"plancc measure: deepseek_v4_flash on a2a3 (manifest {FLASH})\n\n"
        "no benchmark logs: no verdict (give --baseline and --warm for one)\n\n"
        "warm scopes (1 trace)\n"
    )
    assert "flag: late warm: landed before its consumer proj_a_mm in 19 of 20 layers" in (
        result.stdout
    )
    assert "-> 285 GB/s" in result.stdout
    for args, message in (
        (
            ["--trace", str(path), "--warm", str(path)],
            "--warm: a verdict compares two runs: give --baseline too",
        ),
        ([], "--manifest: nothing to measure: give --baseline and --warm, or --trace"),
    ):
        result = CliRunner().invoke(app, ["measure", "--manifest", str(FLASH), *args])
        assert (result.exit_code, result.stderr) == (2, f"plancc: {message}\n")

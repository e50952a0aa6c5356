"""Run-time parameters (`params`): checked at the default and both ends of each range,
or at the value `--set NAME=VALUE` fixes, on validate, build and report."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from plancc import api
from plancc.cli.app import app

# The KV stream grows with the context: it passes the warm of wo only at 4096 tokens.
PLAN = """\
plancc: 1
model: ctx
platform: a2a3
dims: {H: 5120}
params:
  CTX: {default: 1024, range: [512, 4096]}
  BATCH: 16
tensors:
  wo: {shape: [H, H], dtype: bf16}
layers:
  dec:
    stages:
      - {name: q_proj, task: q_tid}
      - {name: attn, streams: 4096 * BATCH * CTX}
      - {name: o_proj, reads: [wo]}
    warms:
      - {name: warm_wo, after: q_proj, tensors: [wo]}
"""
PC106 = (
    "warm 'warm_wo' (52.4 MB) is evicted before 'o_proj': 'attn' streams 268.4 MB, 1.59× L2 in all"
)


def _run(*args: str) -> Any:
    return CliRunner().invoke(app, list(args), env={"GITHUB_ACTIONS": "", "NO_COLOR": "1"})


@pytest.fixture
def plan(write_plan: Callable[..., Path]) -> Path:
    return write_plan(PLAN, "ctx.yaml")


def _messages(path: Path, **sets: int) -> list[tuple[str, int, int, str]]:
    report = api.validate_paths([str(path)], overrides=sets)
    return [(d.code, d.line, d.col, d.message) for d in report.diagnostics]


def test_a_finding_only_at_a_range_end_names_the_value(plan: Path) -> None:
    assert _messages(plan) == [("PC106", 17, 16, PC106 + " at CTX=4096")]


def test_set_fixes_a_value_and_names_none(plan: Path) -> None:
    assert _messages(plan, CTX=4096) == [("PC106", 17, 16, PC106)]
    assert _messages(plan, CTX=512) == []


def test_a_finding_at_the_default_is_reported_once_without_a_value(
    write_plan: Callable[..., Path],
) -> None:
    path = write_plan(PLAN.replace("default: 1024", "default: 4096"), "ctx.yaml")
    assert _messages(path) == [("PC106", 17, 16, PC106)]


def test_a_finding_at_the_low_end_names_every_param_away_from_its_default(
    write_plan: Callable[..., Path],
) -> None:
    # Less context streams less: here the finding needs the low end of BATCH's range too.
    text = PLAN.replace("BATCH: 16", "BATCH: {default: 16, range: [1, 64]}")
    text = text.replace("4096 * BATCH * CTX", "100000000000 // (BATCH * CTX)")
    got = _messages(write_plan(text, "ctx.yaml"))
    assert [(c, m.rsplit(" at ", 1)[-1]) for c, _, _, m in got] == [("PC106", "CTX=512, BATCH=1")]


def test_the_cli_takes_set_on_validate_build_and_report(plan: Path, tmp_path: Path) -> None:
    done = _run("validate", str(plan), "--set", "CTX=512")
    assert done.exit_code == 0, done.output
    assert "PC106" not in done.output
    done = _run("validate", str(plan), "--set", "CTX=4096", "--strict")
    assert done.exit_code == 1
    assert PC106 + "\n" in done.output
    done = _run("build", str(plan), "--out", str(tmp_path / "out"), "--set", "CTX=512")
    assert done.exit_code == 0, done.output
    page = tmp_path / "page.html"
    done = _run("report", str(plan), "--out", str(page), "--set", "CTX=4096")
    assert done.exit_code == 0, done.output
    assert "1.59× L2 in all<" in page.read_text("utf-8")


def test_validate_fix_checks_at_the_set_value(plan: Path) -> None:
    done = _run("validate", str(plan), "--fix", "--set", "CTX=512")
    assert done.exit_code == 0, done.output
    assert "PC106" not in done.output
    done = _run("validate", str(plan), "--fix", "--set", "CTX=4096")
    assert PC106 + "\n" in done.output  # at the value set: no "at CTX=4096"


def test_build_renders_no_param(plan: Path, tmp_path: Path) -> None:
    # The generated module and the manifest are the same bytes at every value.
    outs = []
    for value in ("512", "4096"):
        out = tmp_path / value
        assert _run("build", str(plan), "--out", str(out), "--set", f"CTX={value}").exit_code == 0
        outs.append({p.name: p.read_bytes() for p in out.iterdir()})
    assert outs[0] == outs[1]
    assert b"CTX" not in outs[0]["ctx_warms.py"]


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ("CTX=8192", "--set CTX=8192: {plan}: param 'CTX' ranges over [512, 4096]"),
        ("CTX", "--set CTX: expected NAME=VALUE, e.g. --set CTX=4096"),
        ("=4", "--set =4: expected NAME=VALUE, e.g. --set CTX=4096"),
        ("CTX=0", "--set CTX=0: a param's value is an integer ≥ 1"),
        ("CTX=1e3", "--set CTX=1e3: a param's value is an integer ≥ 1"),
        ("CTX=" + "9" * 4301, "--set CTX: an integer of more than 4,300 digits"),
        ("CTXX=4", "--set CTXX: no plan given has a param 'CTXX'; did you mean 'CTX'?"),
    ],
)
def test_a_bad_set_is_a_usage_error(plan: Path, given: str, said: str) -> None:
    for command in (["validate"], ["build", "--out", str(plan.parent / "o")], ["report"]):
        done = _run(*command, str(plan), "--set", given)
        assert done.exit_code == 2, (command, done.output)
        assert done.output == f"plancc: {said.format(plan=plan)}\n", command


def test_a_plan_without_params_runs_the_checks_once(
    plan: Path, monkeypatch: pytest.MonkeyPatch, write_plan: Callable[..., Path]
) -> None:
    calls: list[str] = []
    real = api.resolve

    def spy(*args: Any, **kwargs: Any) -> Any:
        calls.append(kwargs.get("point", "default"))
        return real(*args, **kwargs)

    monkeypatch.setattr(api, "resolve", spy)
    api.validate_paths(
        [
            str(
                write_plan(
                    PLAN.replace("CTX: {default: 1024, range: [512, 4096]}", "CTX: 1024"),
                    "one.yaml",
                )
            )
        ]
    )
    assert calls == ["default"]
    api.validate_paths([str(plan)])
    assert calls == ["default", "default", "lo", "hi"]
    api.validate_paths([str(plan)], overrides={"CTX": 512})  # every range fixed: once
    assert calls == ["default", "default", "lo", "hi", "default"]


# -- fmt: the new keys in their declared order, small mappings on one line -----------------


def test_fmt_writes_the_new_keys_in_order_and_flow_style() -> None:
    from plancc.fmt import format_plan

    messy = """\
plancc: 1
model: m
platform: a2a3
tensors:
  w:
    dtype: bf16
    stacked:
      index: layer_idx
      layers: 40
    shape: [4, 4]
params:
  CTX:
    range: [1, 4096]
    default: 2048
dims: {D: 4}
layers:
  k:
    stages:
      - name: s0
        reads:
          - share: 6/17
            tensor: w
      - {name: s1, task: t1}
    warms:
      - {tensors: [w], after: [s0, s1], name: w1}
"""
    out = format_plan("p.yaml", messy.encode())
    assert isinstance(out, bytes)
    assert (
        out.decode()
        == """\
plancc: 1
model: m
platform: a2a3

dims:
  D: 4

params:
  CTX:
    default: 2048
    range: [1, 4096]

tensors:
  w: {shape: [4, 4], dtype: bf16, stacked: {layers: 40, index: layer_idx}}

layers:
  k:
    stages:
      - name: s0
        reads:
          - {tensor: w, share: 6/17}
      - {name: s1, task: t1}
    warms:
      - name: w1
        after: [s0, s1]
        tensors: [w]
"""
    )


def test_set_leaves_values_unchecked_so_no_silence_is_stale(
    write_plan: Callable[..., Path],
) -> None:
    # The allow silences PC106 at 4096 tokens; at 512 it silences nothing, but the run did
    # not look at 4096: no PC006. Over the whole range it is not stale either.
    text = PLAN.replace(
        "tensors: [wo]}", "tensors: [wo], allow: [PC106], reason: long contexts only}"
    )
    path = write_plan(text, "ctx.yaml")
    assert _messages(path, CTX=512) == []
    assert _messages(path) == []

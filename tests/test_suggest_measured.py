"""`plancc suggest --measured RESULT.json`: a verdict of `plancc measure` carried back."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from plancc.cli.app import app

ROOT = Path(__file__).resolve().parent.parent
FLASH = ROOT / "plans/deepseek_v4_flash.yaml"
EXAMPLE = ROOT / "examples/measure"


def _run(*args: str) -> Any:
    return CliRunner().invoke(app, list(args), env={"NO_COLOR": "1"})


def _plan(tmp_path: Path, csa_after: str = "q_proj") -> Path:
    """The Flash plan, its config found from anywhere; the CSA warm at ``csa_after``."""
    text = FLASH.read_text("utf-8").replace("config: configs/", f"config: {ROOT}/plans/configs/")
    if csa_after != "q_proj":
        at = text.index("name: prefetch_o_proj_w_csa")
        text = text[:at] + text[at:].replace("after: q_proj", f"after: {csa_after}", 1)
    plan = tmp_path / "flash.yaml"
    plan.write_text(text, "utf-8")
    return plan


def _measured(tmp_path: Path, plan: Path, *, warm_first: bool = False, same: bool = False) -> Path:
    """`plancc measure --format json` of the plan's build with the example's logs: a ship
    (-2.90 %), or with the logs swapped a no-ship (+2.99 %), or one log twice."""
    out = tmp_path / "build"
    assert _run("build", str(plan), "--out", str(out), "--no-source").exit_code == 0
    (manifest,) = out.glob("*.manifest.json")
    logs = [EXAMPLE / "bench-nowarm.log", EXAMPLE / "bench-warm.log"]
    base, warm = reversed(logs) if warm_first else logs
    if same:
        warm = base
    result = tmp_path / "result.json"
    done = _run(
        "measure", "--manifest", str(manifest), "--baseline", str(base), "--warm", str(warm),
        "-f", "json", "-o", str(result),
    )  # fmt: skip
    assert done.exit_code in (0, 1), done.output
    return result


def _csa(plan: Path, result: Path, *more: str) -> dict[str, Any]:
    done = _run(
        "suggest", str(plan), "--no-source", "--layer", "csa", "--format", "json",
        "--measured", str(result), *more,
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    (layer,) = json.loads(done.output)["layers"]
    return layer  # type: ignore[no-any-return]


def test_a_measured_ship_agrees_with_the_rules(tmp_path: Path) -> None:
    plan = _plan(tmp_path)
    first, *_ = _csa(plan, _measured(tmp_path, plan))["candidates"]
    assert (first["anchor"], first["tensors"], first["class"]) == (
        ["q_proj"],
        ["wo_a", "wo_b"],
        "gain",
    )
    assert first["measured"]["decision"] == "ship"
    assert first["measured"]["rules_rank"] == 1
    assert not first["measured"]["contradicted"]
    sha = hashlib.sha256(plan.read_bytes()).hexdigest()
    assert first["reason"].startswith(
        f"measured −2.90 % on plan {sha[:12]}…, as the rules rank it 1st (gain); by the rules:"
    )


def test_a_measured_loss_ranks_below_no_warm_and_says_it_contradicts(tmp_path: Path) -> None:
    plan = _plan(tmp_path)
    result = _measured(tmp_path, plan, warm_first=True)
    rows = _csa(plan, result)["candidates"]
    none = next(i for i, c in enumerate(rows) if c["class"] == "none")
    (at,) = [i for i, c in enumerate(rows) if c["measured"]]
    assert at > none
    row = rows[at]
    assert (row["tensors"], row["class"], row["measured"]["contradicted"]) == (
        ["wo_a", "wo_b"],
        "loss",
        True,
    )
    sha = hashlib.sha256(plan.read_bytes()).hexdigest()
    assert row["reason"].startswith(
        f"contradicted: measured +2.99 % on plan {sha[:12]}…, the rules rank it 1st (gain)"
    )
    # Shown whatever --top: the text says where the measurement contradicts the rules.
    text = _run(
        "suggest", str(plan), "--no-source", "--layer", "csa", "--top", "1",
        "--measured", str(result),
    ).output  # fmt: skip
    assert "measured loss  q_proj" in text
    assert "contradicted: measured +2.99 %" in text


def test_a_measured_gain_ranks_above_every_unmeasured_one(tmp_path: Path) -> None:
    # The CSA warm at rms_norm: PC104, a loss by the rules; measured a ship.
    plan = _plan(tmp_path, csa_after="rms_norm")
    result = _measured(tmp_path, plan)
    first, *rest = _csa(plan, result)["candidates"]
    assert (first["anchor"], first["class"]) == (["rms_norm"], "gain")
    assert first["measured"]["contradicted"]
    assert first["measured"]["rules_rank"] > 1
    assert first["reason"].startswith("contradicted: measured −2.90 % on plan")
    assert "the rules rank it" in first["reason"]
    assert all(c["measured"] is None for c in rest)
    # The plan edited since the build: its verdict is said to be of another build.
    edited = plan.read_text("utf-8").replace("# DeepSeek V4 Flash decode", "# edited", 1)
    plan.write_text(edited, "utf-8")
    first = _csa(plan, result)["candidates"][0]
    assert first["measured"]["this_plan"] is False
    assert ", another build of this plan, the rules rank it" in first["reason"]


def test_an_inconclusive_measurement_is_said_and_changes_nothing(tmp_path: Path) -> None:
    plan = _plan(tmp_path)
    first = _csa(plan, _measured(tmp_path, plan, same=True))["candidates"][0]
    assert (first["tensors"], first["class"], first["measured"]["decision"]) == (
        ["wo_a", "wo_b"],
        "gain",
        "inconclusive",
    )
    assert first["reason"].startswith("measured inconclusive (")


def test_a_result_it_cannot_use_is_a_usage_error(tmp_path: Path) -> None:
    plan = _plan(tmp_path)
    good = json.loads(_measured(tmp_path, plan).read_text("utf-8"))
    older = {k: v for k, v in good["manifest"].items() if k != "warms"}
    cases = {
        "not json": ("{", "not JSON"),
        "nested too deeply": ("[" * 100_000, "not JSON: nested too deeply"),
        "another model": (
            json.dumps({**good, "manifest": {**good["manifest"], "model": "qwen3_14b"}}),
            "measures the build of model qwen3_14b, not this plan's (deepseek_v4_flash)",
        ),
        "an older result": (
            json.dumps({**good, "manifest": older}),
            "its manifest lists no warms",
        ),
        "no verdict": (json.dumps({**good, "verdict": None}), "no verdict"),
    }  # fmt: skip
    for name, (text, said) in cases.items():
        bad = tmp_path / f"{name}.json"
        bad.write_text(text, "utf-8")
        done = _run("suggest", str(plan), "--no-source", "--measured", str(bad))
        assert done.exit_code == 2, name
        assert said in done.output, (name, done.output)

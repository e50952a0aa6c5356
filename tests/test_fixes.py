"""Fixes, tested the sqlfluff way.

Every case with a fix has its fixed plan beside it (``NAME.fixed``, written by
``make golden``): what `plancc validate --fix --unsafe-fixes` makes of it. A sweep
applies each fix of every case and shipped plan alone, re-validates, and asserts that
the finding's code fires fewer times and that no code fires more often than before:
no fix leads back to a finding.
"""

from __future__ import annotations

import collections
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from plancc.api import diagnose_plan
from plancc.cli.app import app
from plancc.edits.apply import _apply_bytes
from plancc.load.inputs import PlanInput
from tests import regen_fixed

ROOT = Path(__file__).resolve().parent.parent
CASES = sorted((ROOT / "tests" / "cases").rglob("*.yaml"))
PLANS = sorted((ROOT / "plans").glob("*.yaml"))

# Fixes of an error that let checks run which the error had stopped: what they find
# was in the plan all along (a config key's typo hid what its list holds; a warm whose
# anchor named no stage was placed nowhere).
UNCOVERS = {
    "config/forward_list_with_a_string.yaml": {"PC014"},
    "config/forward_missing_key.yaml": {"PC014"},
    "family/join.yaml": {"PC101", "PC108"},
}


def _ids(paths: list[Path]) -> list[str]:
    return [p.relative_to(ROOT).as_posix() for p in paths]


@pytest.mark.parametrize("plan", CASES, ids=_ids(CASES))
def test_the_fixed_plan_is_the_expected_one(plan: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    expected = plan.with_suffix(".fixed")
    got = regen_fixed.fixed(plan)
    if got is None:
        assert not expected.exists(), f"{expected.name}: the case has no fix any more"
    else:
        assert expected.exists(), f"{expected.name} is missing: run make golden"
        assert got == expected.read_bytes(), f"{expected.name} is stale: run make golden"


def _codes(source: PlanInput, raw: bytes) -> collections.Counter[str]:
    return collections.Counter(d.code for d in diagnose_plan(source, raw).diagnostics)


@pytest.mark.parametrize("plan", [*CASES, *PLANS], ids=_ids([*CASES, *PLANS]))
def test_every_fix_removes_its_finding_and_raises_none(plan: Path) -> None:
    source = PlanInput(str(plan), plan)
    raw = plan.read_bytes()
    result = diagnose_plan(source, raw)
    before = collections.Counter(d.code for d in result.diagnostics)
    uncovers = UNCOVERS.get(plan.relative_to(ROOT).as_posix().removeprefix("tests/cases/"), set())
    for d in result.diagnostics:
        if d.fix is None:
            continue
        after = _codes(source, _apply_bytes(raw, [d.fix]))
        assert after[d.code] < before[d.code], f"{d.code} {d.fix.title}: still there"
        new = {c for c, n in after.items() if n > before[c] and c not in uncovers}
        assert not new, f"{d.code} {d.fix.title}: raises {sorted(new)}"


def test_the_sweep_applies_fixes() -> None:
    # The sweep cannot pass vacuously: the cases hold fixes of every kind of edit.
    ops: collections.Counter[str] = collections.Counter()
    for plan in CASES:
        for d in diagnose_plan(PlanInput(str(plan), plan), plan.read_bytes()).diagnostics:
            if d.fix is not None:
                ops.update(e.op for e in d.fix.edits)
    assert set(ops) == {"replace", "reorder", "append", "remove"}


# -- validate --fix and --diff ---------------------------------------------------------------

runner = CliRunner()

GRAPH = (ROOT / "tests" / "cases" / "rules" / "pc102_graph_consumer_order.yaml").read_text()


def _validate(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["validate", *args])
    return result.exit_code, result.stdout, result.stderr


def test_fix_rewrites_the_plan_keeping_its_comments(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("p.yaml").write_text(GRAPH.replace("    warms:\n", "    warms:\n      # the pair\n"))
    code, out, err = _validate("--fix", "p.yaml")
    assert (code, err) == (0, "")
    assert out.splitlines()[0] == "p.yaml: fixed PC102: issue in consumer order: [b, a]"
    assert out.splitlines()[-1] == "0 errors, 0 warnings in 1 plan"
    text = Path("p.yaml").read_text()
    assert "    warms:\n      # the pair\n      - name: w\n" in text
    assert text.startswith("# PC102 on a graph")
    assert _validate("--fix", "p.yaml")[1].splitlines()[0].startswith("p.yaml: 1 warm")
    assert not list(tmp_path.glob(".plancc-*"))  # the atomic write left nothing behind


def test_diff_writes_nothing_and_exits_1_when_it_would_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("p.yaml").write_text(GRAPH)
    code, out, _ = _validate("--diff", "p.yaml")
    assert code == 1
    assert out.startswith("--- p.yaml\n+++ p.yaml\n")
    assert (
        "-      - {name: w, after: s0, tensors: [a, b], allow: [PC107], reason: s3 reads b" in out
    )
    assert "+        tensors: [b, a]\n" in out
    assert Path("p.yaml").read_text() == GRAPH
    Path("p.yaml").write_text(Path("p.yaml").read_text().replace("[a, b]", "[b, a]"))
    assert _validate("--diff", "p.yaml")[:2] == (0, "")


def test_unsafe_fixes_only_when_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    case = ROOT / "tests" / "cases" / "rules" / "pc104_rms_norm_anchor.yaml"
    Path("p.yaml").write_bytes(case.read_bytes())
    code, out, _ = _validate("--fix", "p.yaml")
    assert code == 0
    assert "1 more fixable with --unsafe-fixes" in out
    assert Path("p.yaml").read_bytes() == case.read_bytes()
    code, out, _ = _validate("--fix", "--unsafe-fixes", "p.yaml")
    assert "p.yaml: fixed PC104: anchor at 'q_proj'" in out
    assert Path("p.yaml").read_bytes() == case.with_suffix(".fixed").read_bytes()


def test_unsafe_fixes_alone_is_a_usage_error() -> None:
    code, _, err = _validate("--unsafe-fixes", "plans")
    assert code == 2
    assert "--unsafe-fixes: only with --fix or --diff" in err


def test_fix_exits_as_the_findings_left_say(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("p.yaml").write_text(GRAPH.replace(", allow: [PC107], reason: s3 reads b at once", ""))
    code, out, _ = _validate("--fix", "--strict", "p.yaml")
    assert code == 1  # PC107 is left, and has no fix
    assert "warning PC107" in out


def test_json_and_sarif_print_the_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.test_formats import sarif_validator

    monkeypatch.chdir(tmp_path)
    Path("p.yaml").write_text(GRAPH)
    data = json.loads(_validate("-f", "json", "p.yaml")[1])
    assert data["diagnostics"][0]["fix"] == {
        "title": "issue in consumer order: [b, a]",
        "safety": "safe",
        "edits": [
            {"op": "reorder", "path": ["layers", "k", "warms", 0, "tensors"], "order": [1, 0]}
        ],
    }
    assert data["diagnostics"][0]["data"] == {"order": ["b", "a"]}
    log = json.loads(_validate("-f", "sarif", "p.yaml")[1])
    assert [e.message for e in sarif_validator().iter_errors(log)] == []
    (result,) = log["runs"][0]["results"]
    (fix,) = result["fixes"]
    assert fix["description"] == {"text": "issue in consumer order: [b, a]"}
    assert fix["properties"] == data["diagnostics"][0]["fix"]
    (change,) = fix["artifactChanges"]
    assert change["artifactLocation"] == {"uri": "p.yaml"}
    assert change["replacements"] == [
        {
            "deletedRegion": {"startLine": 18, "startColumn": 39, "endLine": 18, "endColumn": 45},
            "insertedContent": {"text": "[b, a]"},
        }
    ]
    line = GRAPH.splitlines()[17]
    assert line[38:44] == "[a, b]"


def test_the_summary_counts_a_tensor_warmed_twice_once() -> None:
    # a (16.8 MB) and b (16.8 MB) are warmed, b by both warms: 33.5 MB, not 50.3 MB.
    plan = ROOT / "tests" / "cases" / "rules" / "pc108_o_proj_warmed_twice.yaml"
    code, out, _ = _validate(str(plan), "-f", "json")
    assert code == 0
    (numbers,) = json.loads(out)["plans"]
    assert (numbers["warms"], numbers["warm_bytes"]) == (2, 33_554_432)
    assert "2 warms, 33,554,432 B warmed" in _validate(str(plan))[1]

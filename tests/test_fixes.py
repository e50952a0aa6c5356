"""Fixes, tested the sqlfluff way.

Every case with a fix has its fixed plan beside it (``NAME.fixed``, written by
``make golden``): what `plancc validate --fix --unsafe-fixes` makes of it. A sweep
(``tests/fix_sweep.py``) makes each fix of every case and shipped plan alone, three
ways (the CLI's, SARIF's replacements, the editor's quick fix), in the plan as written
and in its block-style, flow-style and flow-a-line-an-item twins, with comments on
every item; each text must load, lose the finding and raise no other (no fix leads
back to a finding), be the same three ways, change only the lines the edited nodes
span, and keep every comment not on a node it removes or replaces. The editor's "fix
all" writes what `validate --fix` writes, case by case.
"""

from __future__ import annotations

import collections
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from plancc.api import PlanResult, diagnose_plan
from plancc.cli.app import app
from plancc.codes import Severity
from plancc.diagnostics import Diagnostic
from plancc.edits import apply, together
from plancc.fixes import Edit, Fix, Remove, Replace
from plancc.load.inputs import PlanInput
from plancc.lsp import actions
from plancc.lsp.diagnostics import to_lsp
from plancc.lsp.state import analyse
from tests import fix_sweep, regen_fixed

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


def _uncovers(plan: Path) -> set[str]:
    return UNCOVERS.get(plan.relative_to(ROOT).as_posix().removeprefix("tests/cases/"), set())


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


@pytest.mark.parametrize("plan", [*CASES, *PLANS], ids=_ids([*CASES, *PLANS]))
def test_every_fix_is_made_alike_and_alone(plan: Path) -> None:
    fix_sweep.check(plan, plan.read_bytes(), _uncovers(plan))


def _fixes(plan: Path, raw: bytes) -> list[str]:
    return [d.code for d in diagnose_plan(PlanInput(str(plan), plan), raw).diagnostics if d.fix]


WITH_FIXES = [p for p in CASES if _fixes(p, p.read_bytes())]


@pytest.mark.parametrize("style", ["block", "flow", "lines"])
@pytest.mark.parametrize("plan", WITH_FIXES, ids=_ids(WITH_FIXES))
def test_every_fix_in_the_twins(plan: Path, style: str) -> None:
    raw = plan.read_bytes()
    twin = fix_sweep.twins(raw)[style]
    assert _fixes(plan, twin) == _fixes(plan, raw), "the twin is not the same plan"
    assert fix_sweep.check(plan, twin, _uncovers(plan)) > 0


def _safe(plan: Path) -> bool:
    raw = plan.read_bytes()
    found = diagnose_plan(PlanInput(str(plan), plan), raw).diagnostics
    return any(d.fix is not None and d.fix.safe for d in found)


WITH_SAFE_FIXES = [p for p in WITH_FIXES if _safe(p)]


@pytest.mark.parametrize("plan", WITH_SAFE_FIXES, ids=_ids(WITH_SAFE_FIXES))
def test_the_editors_fix_all_writes_what_validate_fix_writes(
    plan: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The editor's "fix all" (its workspace edit made on the text) and `validate --fix`
    (what it writes: ``fix_plan``'s bytes, safe fixes only) give the same bytes: one
    loop of the one interpreter, whoever asks."""
    monkeypatch.chdir(ROOT)
    raw = plan.read_bytes()
    text = raw.decode("utf-8")
    state = analyse(plan.as_uri(), 1, text, {}, codec=fix_sweep.CODEC, docs_url="")
    whole = actions.fix_all(state)
    assert whole is not None
    assert whole.edit is not None
    assert whole.edit.changes is not None
    editor = fix_sweep.apply_lsp(text, whole.edit.changes[state.uri]).encode("utf-8")
    written = apply.fix_plan(PlanInput(plan.relative_to(ROOT).as_posix(), plan), raw)
    assert written.changed
    assert editor == written.after


def _mutants_keep_what_the_plan_keeps(plan: Path) -> int:
    raw = plan.read_bytes()
    kept = fix_sweep.fixed_listed(plan, raw)
    checked = [
        fix_sweep.check_mutant(plan, mutant, kept, typo, name)
        for _, mutant, name, typo in fix_sweep.mutants(raw)
    ]
    return sum(checked)


SMALL = ROOT / "tests" / "cases" / "rules" / "pc102_graph_consumer_order.yaml"


def test_no_fix_removes_what_the_plan_with_its_error_fixed_keeps() -> None:
    """Issue 40's sweep, on one plan here (every case and plan: the slow test below): each
    name the plan refers to misspelt, near (PC010 guesses it back) or far (no guess), and
    `--fix --unsafe-fixes` removes no warm or tensor that the plan as written keeps. It
    failed with the rules judging a kind whose `deps` or `reads` name nothing (PC041
    removed the warm whose reader's name was misspelt), or with warnings' fixes before
    the errors' (PC010 and PC041's in one pass)."""
    assert _mutants_keep_what_the_plan_keeps(SMALL) == 16


@pytest.mark.slow
@pytest.mark.parametrize("plan", [*CASES, *PLANS], ids=_ids([*CASES, *PLANS]))
def test_no_fix_removes_what_the_plan_with_its_error_fixed_keeps_anywhere(plan: Path) -> None:
    _mutants_keep_what_the_plan_keeps(plan)


def test_a_typo_in_reads_never_costs_a_warm(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 40's first finding: a typo in a stage's `reads` made its warm's tensor "read
    by no stage" (PC041, safe): `--fix` deleted the warm, and `--unsafe-fixes` fixed the
    typo and deleted the warm in one pass."""
    monkeypatch.chdir(tmp_path)
    typo = GRAPH.replace("reads: [a]}", "reads: [aa]}")
    Path("p.yaml").write_text(typo)
    code, out, _ = _validate("--fix", "p.yaml")
    assert code == 1
    assert Path("p.yaml").read_text() == typo  # PC010 alone: its fix is unsafe
    assert [
        line.split(": ")[1] for line in out.splitlines() if ": error" in line or ": warning" in line
    ] == ["error PC010"]
    code, out, _ = _validate("--fix", "--unsafe-fixes", "p.yaml")
    assert out.splitlines()[:2] == [
        "p.yaml: fixed PC010: replace 'aa' with 'a'",
        "p.yaml: fixed PC102: issue in consumer order: [b, a]",
    ]
    assert Path("p.yaml").read_text() == GRAPH.replace("[a, b]", "[b, a]")


def test_errors_fixes_come_first_one_a_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PC102 (a warning) is reported before PC011 (an error) on the same line; the error's
    fix goes first, and each pass applies one fix to the text the check before it saw."""
    monkeypatch.chdir(tmp_path)
    Path("p.yaml").write_text(GRAPH.replace("tensors: [a, b]", "tensors: [a, b, a]"))
    code, out, _ = _validate("--fix", "p.yaml")
    assert code == 0
    assert out.splitlines()[:2] == [
        "p.yaml: fixed PC011: remove the second 'a' from warm 'w'",
        "p.yaml: fixed PC102: issue in consumer order: [b, a]",
    ]
    assert Path("p.yaml").read_text() == GRAPH.replace("tensors: [a, b]", "tensors: [b, a]")


CONTRACT = (ROOT / "tests" / "cases" / "valid" / "contract_example.yaml").read_text()


def _loop(text: str, *, unsafe: bool = False) -> apply.Fixed:
    plan = PlanInput("p.yaml", None)

    def check(raw: bytes) -> PlanResult:
        return diagnose_plan(plan, raw)

    return apply.fix_loop("p.yaml", text.encode(), check, unsafe=unsafe)


def test_fixes_that_do_not_interact_go_in_one_pass() -> None:
    """400 copies of a tensor in one warm (PC011, safe), and 400 stages reading a misspelt
    name (PC010, unsafe): one pass each, not one a fix (the loop stopped after 256 of
    them, silently, and took 7.8 s on the typos)."""
    dup = CONTRACT.replace("tensors: [wo_a, wo_b]", "tensors: [wo_a, wo_b" + ", wo_a" * 400 + "]")
    done = _loop(dup)
    assert (done.steps, done.left, done.after.decode()) == ((400,), 0, CONTRACT)
    assert [d.code for d in done.result.diagnostics] == []
    moe = "      - {name: moe, streams: 427.8 MB, sdma: true}\n"
    stages = "".join(f"      - {{name: x{i}, reads: [{{}}]}}\n" for i in range(400))
    typo = CONTRACT.replace(moe, moe + stages.replace("{}", "kv_cach"))
    done = _loop(typo, unsafe=True)
    assert (done.steps, done.left) == ((100, 100, 100, 100), 0)  # PC010 guesses 100 a check
    assert done.after.decode() == CONTRACT.replace(moe, moe + stages.replace("{}", "kv_cache"))


def test_fixes_that_interact_wait_for_the_check() -> None:
    """Two typos of one list guessed as one name would list it twice: the second waits
    (and then has no fix: the list holds the name); fixes of two codes never share a
    pass, errors' first; removals that would empty a list go one a pass."""
    two = CONTRACT.replace("reads: [kv_cache]}", "reads: [kv_cach, kv_cachee]}")
    done = _loop(two, unsafe=True)
    assert [fix.title for _, fix in done.applied] == ["replace 'kv_cach' with 'kv_cache'"]
    assert "reads: [kv_cache, kv_cachee]}" in done.after.decode()
    assert [(d.code, d.fix) for d in done.result.diagnostics] == [("PC010", None)]
    three = GRAPH.replace("reads: [a]}", "reads: [aa]}").replace("[a, b]", "[a, b, a]")
    done = _loop(three, unsafe=True)
    assert [d.code for d, _ in done.applied] == ["PC010", "PC011", "PC102"]
    assert done.steps == (1, 1, 1)
    unread = CONTRACT.replace("reads: [wo_a], group", "group")
    unread = unread.replace("reads: [wo_b], group", "group")
    done = _loop(unread)  # both findings' fixes remove the warm: once
    assert [fix.title for _, fix in done.applied] == [
        "remove warm 'prefetch_o_proj_w': 'wo_a' is read by no stage"
    ]


def test_removals_that_would_empty_a_list_do_not_share_a_pass() -> None:
    def found(code: str, *edits: Edit) -> Diagnostic:
        return Diagnostic("p", 1, 1, Severity.WARNING, code, "m", None, Fix("t", edits))

    data = {"a": ["x", "y", "z"], "b": {"k": 1}}
    first, second, third = (found("PC041", Remove(("a",), (i,))) for i in range(3))
    assert together.companions(data, first, [second, third]) == [first, second]
    other = found("PC040", Remove(("a",), (1,)))
    inside = found("PC041", Replace(("a", 0), "w"))
    twice = found("PC041", Replace(("b", "k"), 2))
    assert together.companions(data, first, [other, inside, twice]) == [first, twice]
    assert together.companions(data, found("PC103", Remove(("a",), (0,))), [second]) == [
        found("PC103", Remove(("a",), (0,)))
    ]


def test_the_loop_says_where_it_stopped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bound only, never reached by a plan of the tests; reached, it is said."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(apply, "MAX_PASSES", 1)
    Path("p.yaml").write_text(GRAPH.replace("tensors: [a, b]", "tensors: [a, b, a]"))
    code, out, _ = _validate("--fix", "p.yaml")
    assert out.splitlines()[:2] == [
        "p.yaml: fixed PC011: remove the second 'a' from warm 'w'",
        "p.yaml: stopped after 1 pass: 1 fix left",
    ]
    assert code == 0  # PC102 is left: a warning
    text = GRAPH.replace("tensors: [a, b]", "tensors: [a, b, a]")
    Path("p.yaml").write_text(text)
    assert _validate("--diff", "p.yaml")[2] == "p.yaml: stopped after 1 pass: 1 fix left\n"
    state = analyse(
        Path("p.yaml").resolve().as_uri(), 1, text, {}, codec=fix_sweep.CODEC, docs_url=""
    )
    whole = actions.fix_all(state)
    assert whole is not None
    assert whole.title == "fix all: 1 safe fix (plancc; stopped after 1 pass: 1 fix left)"


def test_a_fix_aliases_share_is_offered_nowhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two warms share one `tensors` list through a YAML alias: the fix that would remove
    its unread tensor would edit both warms, so neither JSON, SARIF, the editor (but its
    `allow`, which edits one warm's own keys) nor `--fix` offers it."""
    monkeypatch.chdir(tmp_path)
    case = ROOT / "tests" / "cases" / "rules" / "pc041_aliased_warms_get_no_fix.yaml"
    Path("p.yaml").write_bytes(case.read_bytes())
    data = json.loads(_validate("-f", "json", "p.yaml")[1])
    assert [(d["code"], "fix" in d) for d in data["diagnostics"]] == [("PC041", False)] * 2
    log = json.loads(_validate("-f", "sarif", "p.yaml")[1])
    assert [("fixes" in r) for r in log["runs"][0]["results"]] == [False, False]
    assert fix_sweep.made(case, case.read_bytes())[1] == []
    state = analyse(case.as_uri(), 1, case.read_text(), {}, codec=fix_sweep.CODEC, docs_url="")
    titles = [a.title for a in actions.code_actions(state, to_lsp(state)[:1])]
    assert titles == ["allow PC041 on warm 'warm_1' (fill in the reason)"]
    assert _validate("--fix", "p.yaml")[0] == 0
    assert Path("p.yaml").read_bytes() == case.read_bytes()


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


def test_fix_writes_only_what_the_fix_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    text = GRAPH.replace("    warms:\n", "    warms:  # one\n      # the pair\n")
    Path("p.yaml").write_text(text)
    code, out, err = _validate("--fix", "p.yaml")
    assert (code, err) == (0, "")
    assert out.splitlines()[0] == "p.yaml: fixed PC102: issue in consumer order: [b, a]"
    assert out.splitlines()[-1] == "0 errors, 0 warnings in 1 plan"
    assert Path("p.yaml").read_text() == text.replace("tensors: [a, b]", "tensors: [b, a]")
    assert _validate("--fix", "p.yaml")[1].splitlines()[0].startswith("p.yaml: 1 warm")
    assert not list(tmp_path.glob(".plancc-*"))  # the atomic write left nothing behind


@pytest.mark.parametrize("bom", ["", "\ufeff"])
@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_fix_keeps_the_bom_and_the_line_breaks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bom: str, newline: str
) -> None:
    monkeypatch.chdir(tmp_path)
    text = bom + GRAPH.replace("\n", newline)
    Path("p.yaml").write_bytes(text.encode())
    assert _validate("--fix", "p.yaml")[0] == 0
    want = text.replace("tensors: [a, b]", "tensors: [b, a]")
    assert Path("p.yaml").read_bytes() == want.encode()


def test_a_fix_in_a_plan_with_unicode_line_separators(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """U+2028, U+0085 and U+2029 are characters of a comment, not line breaks: the fix
    lands on its node (it ended in "internal error: ParserError"), and `--fix DIR` fixes
    every plan of the directory."""
    monkeypatch.chdir(tmp_path)
    Path("plans").mkdir()
    odd = GRAPH.replace("# PC102 on a graph", "# PC102\u2028on\x85a\u2029graph")
    Path("plans/a.yaml").write_text(odd)
    other = GRAPH.replace("model: g102", "model: other")
    Path("plans/b.yaml").write_text(other)
    code, out, err = _validate("--diff", "plans")
    assert (code, err) == (1, "")
    assert out.count("+      - {name: w, after: s0, tensors: [b, a], allow") == 2
    assert _validate("--fix", "plans")[0] == 0
    assert Path("plans/a.yaml").read_text() == odd.replace("[a, b]", "[b, a]")
    assert Path("plans/b.yaml").read_text() == other.replace("[a, b]", "[b, a]")


def test_diff_writes_nothing_and_exits_1_when_it_would_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("p.yaml").write_text(GRAPH)
    code, out, err = _validate("--diff", "p.yaml")
    assert (code, err) == (1, "")
    assert out == (
        "--- p.yaml\n+++ p.yaml\n@@ -15,4 +15,4 @@\n"
        "       - {name: s2, deps: [s1], reads: [a]}\n"
        "       - {name: s3, deps: [s0], reads: [b]}\n"
        "     warms:\n"
        "-      - {name: w, after: s0, tensors: [a, b], allow: [PC107], reason: s3 reads b "
        "at once}\n"
        "+      - {name: w, after: s0, tensors: [b, a], allow: [PC107], reason: s3 reads b "
        "at once}\n"
    )
    assert Path("p.yaml").read_text() == GRAPH
    Path("p.yaml").write_text(Path("p.yaml").read_text().replace("[a, b]", "[b, a]"))
    assert _validate("--diff", "p.yaml") == (0, "", "")


def test_diff_says_what_only_unsafe_fixes_would_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plan whose only fix is unsafe: `--diff` prints no diff, says so on stderr, and
    exits as its findings say (an error: 1; a warning: 0, or 1 under --strict)."""
    monkeypatch.chdir(tmp_path)
    case = ROOT / "tests" / "cases" / "rules" / "pc104_rms_norm_anchor.yaml"
    Path("w.yaml").write_bytes(case.read_bytes())
    assert _validate("--diff", "w.yaml") == (0, "", "1 fix available with --unsafe-fixes\n")
    assert _validate("--diff", "--strict", "w.yaml")[0] == 1
    Path("e.yaml").write_text(GRAPH.replace("reads: [b]}", "reads: [bb]}"))
    code, out, err = _validate("--diff", "e.yaml")
    assert (code, out, err) == (1, "", "1 fix available with --unsafe-fixes\n")
    code, out, _ = _validate("--fix", "e.yaml")
    assert code == 1
    assert out.splitlines()[0] == "1 fix available with --unsafe-fixes"
    assert "error PC010: unknown tensor 'bb'" in out
    code, out, _ = _validate("--diff", "--unsafe-fixes", "e.yaml")
    assert code == 1
    assert "+      - {name: s3, deps: [s0], reads: [b]}\n" in out


def test_unsafe_fixes_only_when_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    case = ROOT / "tests" / "cases" / "rules" / "pc104_rms_norm_anchor.yaml"
    Path("p.yaml").write_bytes(case.read_bytes())
    code, out, _ = _validate("--fix", "p.yaml")
    assert code == 0
    assert out.splitlines()[0] == "1 fix available with --unsafe-fixes"
    assert Path("p.yaml").read_bytes() == case.read_bytes()
    code, out, _ = _validate("--fix", "--unsafe-fixes", "p.yaml")
    assert "p.yaml: fixed PC104: anchor at 'q_proj'" in out
    assert Path("p.yaml").read_bytes() == case.with_suffix(".fixed").read_bytes()
    assert case.with_suffix(".fixed").read_bytes() == case.read_bytes().replace(
        b"        after: rms_norm\n", b"        after: q_proj\n"
    )


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
    assert change["replacements"] == [  # the two items, each written in the other's place
        {
            "deletedRegion": {"startLine": 18, "startColumn": 40, "endLine": 18, "endColumn": 41},
            "insertedContent": {"text": "b"},
        },
        {
            "deletedRegion": {"startLine": 18, "startColumn": 43, "endLine": 18, "endColumn": 44},
            "insertedContent": {"text": "a"},
        },
    ]
    line = GRAPH.splitlines()[17]
    assert (line[39], line[42]) == ("a", "b")


def test_the_summary_counts_a_tensor_warmed_twice_once() -> None:
    # a (16.8 MB) and b (16.8 MB) are warmed, b by both warms: 33.5 MB, not 50.3 MB.
    plan = ROOT / "tests" / "cases" / "rules" / "pc108_o_proj_warmed_twice.yaml"
    code, out, _ = _validate(str(plan), "-f", "json")
    assert code == 0
    (numbers,) = json.loads(out)["plans"]
    assert (numbers["warms"], numbers["warm_bytes"]) == (2, 33_554_432)
    assert "2 warms, 33,554,432 B warmed" in _validate(str(plan))[1]
